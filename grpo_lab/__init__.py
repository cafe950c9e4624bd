"""grpo-lab: gradient starvation in GRPO under binary rewards.

Estimators (:mod:`grpo_lab.advantages`), starvation theory and diagnostics
(:mod:`grpo_lab.starvation`), the GRPO policy loss (:mod:`grpo_lab.loss`) and pass@k tools
(:mod:`grpo_lab.passk`).
"""

from .advantages import (
    ESTIMATORS,
    AVSPOController,
    avspo,
    avspo_code,
    compute_advantages,
    dapo,
    dapo_keep_mask,
    drgrpo,
    grpo,
    grpo_near,
    minority,
    register_estimator,
    rloo,
    sign,
)
from .diagnose import inspect_run, read_log
from .loss import grpo_loss
from .passk import maj_at_k, pass_at_k, pass_at_k_curve
from .starvation import (collapse_rate, degeneracy_rate, dynamic_sampling_rounds, filter_groups, jensen_gap,
                         signal_kept, success_rates)

__version__ = "0.1.0"

__all__ = [
    "ESTIMATORS", "AVSPOController", "avspo", "avspo_code", "compute_advantages", "dapo", "dapo_keep_mask",
    "drgrpo", "grpo", "grpo_near", "minority", "register_estimator", "rloo", "sign", "maj_at_k", "pass_at_k", "pass_at_k_curve", "collapse_rate",
    "degeneracy_rate", "dynamic_sampling_rounds", "filter_groups", "jensen_gap", "signal_kept", "success_rates", "inspect_run", "read_log", "grpo_loss",
    "__version__",
]
