"""Use any grpo_lab estimator inside TRL's real ``GRPOTrainer`` (introduced in notebook 05).

TRL has no advantage hook, so :func:`trainer_class` builds, at call time, a subclass of
whatever ``trl.GRPOTrainer`` is *then* (Unsloth patches it when imported first) that

1. records the rewards TRL gathered from every process (``_calculate_rewards``);
2. lets TRL score the batch as usual (``_generate_and_score_completions``), then replaces
   its advantages with ``compute_advantages(rewards, G, estimator)`` on the gathered rewards,
   sliced to this process, and rewrites the logged advantages so TRL's completions table
   shows the ones actually used.

Only ``multi_objective_aggregation="sum_then_normalize"`` (TRL's default) is supported: the
weighted sum of the reward functions is the reward the estimator sees, NaN where no function
could score a completion (advantage 0, as in TRL).
"""

from __future__ import annotations

import torch

from .advantages import ESTIMATORS, AVSPOController, compute_advantages


def trainer_class(base=None):
    """A ``GRPOTrainer`` subclass that takes ``estimator=`` and ``estimator_options=``.

    ``base`` defaults to ``trl.GRPOTrainer`` looked up now, not at import time.
    """
    if base is None:
        import trl

        base = trl.GRPOTrainer

    class GrpoLabTrainer(base):
        def __init__(self, *args, estimator: str = "grpo", estimator_options: dict | None = None, **kwargs):
            if estimator not in ESTIMATORS:
                raise ValueError(f"unknown advantage estimator {estimator!r}; choose one of {', '.join(ESTIMATORS)}")
            super().__init__(*args, **kwargs)
            if getattr(self, "multi_objective_aggregation", "sum_then_normalize") != "sum_then_normalize":
                raise ValueError("grpo_lab estimators need multi_objective_aggregation='sum_then_normalize'")
            self.estimator = estimator
            self.estimator_options = dict(estimator_options or {})
            if estimator == "avspo" and "controller" not in self.estimator_options:
                self.estimator_options["controller"] = AVSPOController()
            self.last_rewards = None  # gathered rewards of the latest batch, all processes
            self.last_advantages = None  # advantages used for them, all processes

        def _calculate_rewards(self, *args, **kwargs):
            rewards_per_func = super()._calculate_rewards(*args, **kwargs)
            self._grpo_lab_rewards_per_func = rewards_per_func
            return rewards_per_func

        def _generate_and_score_completions(self, inputs):
            output = super()._generate_and_score_completions(inputs)
            per_func = self._grpo_lab_rewards_per_func
            unscorable = torch.isnan(per_func).all(dim=1)
            rewards = (per_func * self.reward_weights.to(per_func.device).unsqueeze(0)).nansum(dim=1)
            rewards[unscorable] = torch.nan
            mode = "train" if self.model.training else "eval"
            G = self.num_generations if mode == "train" else self.num_generations_eval
            adv = compute_advantages(rewards.float().cpu(), G, self.estimator, **self.estimator_options)
            adv = adv.to(output["advantages"].device, output["advantages"].dtype)
            n_local = len(inputs)
            start = self.accelerator.process_index * n_local
            output["advantages"] = adv[start:start + n_local]
            logged = self._logs["advantages"]  # TRL appended this batch's advantages last
            for _ in range(min(len(adv), len(logged))):
                logged.pop()
            logged.extend(adv.tolist())
            self.last_rewards, self.last_advantages = rewards.detach().cpu(), adv.detach().cpu()
            return output

    GrpoLabTrainer.__name__ = GrpoLabTrainer.__qualname__ = f"GrpoLab{base.__name__}"
    return GrpoLabTrainer
