"""grpo-lab's estimators inside verl (Ray, FSDP/Megatron, vLLM/SGLang rollouts, many nodes; docs/scale.md).

verl picks an advantage estimator by name (``algorithm.adv_estimator=<name>``) from its registry
(``verl.trainer.ppo.core_algos.register_adv_est``). Importing this module registers every grpo-lab
estimator verl lacks under the prefix ``grpo_lab.``:

=====================  ==========================================================================
verl name              grpo-lab estimator (:mod:`grpo_lab.advantages`)
=====================  ==========================================================================
``grpo_lab.sign``      A = 2r - 1, fixed reference (arXiv 2605.07689); rewards must be 0/1
``grpo_lab.avspo``     AVSPO as the paper writes it (arXiv 2605.21125), with its adaptive threshold
``grpo_lab.avspo_code`` AVSPO's variant attributed to the authors' code (one opposite virtual sample)
``grpo_lab.dapo``      GRPO's advantage with degenerate groups zeroed (verl's ``filter_groups`` drops them)
``grpo_lab.gpg``       GPG with arXiv 2504.02546's factor B/(B - M) (verl's own ``gpg`` counts non-zero rewards)
``grpo_lab.maxrl``     MaxRL's p-normalised advantage (r - mean)/mean (arXiv 2602.02710)
=====================  ==========================================================================

and any estimator added later with :func:`grpo_lab.register_estimator` once :func:`register_with_verl` is called
for it. GRPO, Dr.GRPO, RLOO and verl's GPG are verl's own (``grpo``, ``grpo`` with ``norm_adv_by_std_in_grpo=False``,
``rloo``, ``gpg``: grpo-lab's ``gpg_verl``); :func:`outcome_advantages` computes grpo-lab's on verl's inputs, equal
to verl's (tested).

verl loads this module itself through the ``verl.plugins`` entry point of grpo-lab's ``pyproject.toml`` (or
``VERL_USE_EXTERNAL_MODULES=grpo_lab.verl``); ``import grpo_lab.verl`` works by hand too.

How the rows become groups: verl passes one row per response, its sequence reward spread over
``token_level_rewards`` (summed here, as verl's own outcome estimators do) and the prompt uid of each row in
``index``. Rows are grouped by uid, whatever their order; every group must have the same size (verl's
``rollout.n``), else the error names the uids and sizes. The advantage of each row is broadcast over its
``response_mask``, and returned twice (advantages, returns), as verl expects.

Options: an estimator's keyword options come from verl's algorithm config under ``grpo_lab_options.<name>``
(e.g. ``+algorithm.grpo_lab_options.avspo.threshold=0.3`` on verl's command line: the ``+`` adds a key verl's
``AlgoConfig`` does not declare). AVSPO's adaptive threshold keeps its state across steps in one
:class:`~grpo_lab.advantages.AVSPOController` per verl name in this process: verl computes advantages in its
driver process once per training step, so the controller sees the steps in order (:func:`reset_state` starts
afresh).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from .advantages import AVSPOController, compute_advantages, estimator_names

PREFIX = "grpo_lab."
VERL_HAS = ("grpo", "drgrpo", "rloo", "gpg_verl")  # verl's own: grpo, grpo with norm_adv_by_std_in_grpo=False, rloo, gpg
_CONTROLLERS: dict[str, AVSPOController] = {}


def group_order(index) -> tuple[torch.Tensor, int]:
    """``(order, G)``: row indices that put the rows of each prompt uid side by side (groups in order of first
    appearance, rows in their order within a group), and the common group size. Unequal sizes are an error."""
    uids = list(np.asarray(index, dtype=object).reshape(-1))
    if not uids:
        raise ValueError("index is empty: no rows to group")
    rows: dict = {}
    for i, u in enumerate(uids):
        rows.setdefault(u, []).append(i)
    sizes = {u: len(r) for u, r in rows.items()}
    if len(set(sizes.values())) > 1:
        common = max(set(sizes.values()), key=list(sizes.values()).count)
        odd = [(u, n) for u, n in sizes.items() if n != common][:3]
        raise ValueError(f"groups of unequal size under one uid: most uids have {common} rows, but "
                         + ", ".join(f"uid {u!r} has {n}" for u, n in odd)
                         + "; grpo-lab's estimators need every prompt's G responses (verl's rollout.n)")
    order = torch.tensor([i for r in rows.values() for i in r], dtype=torch.long)
    return order, next(iter(sizes.values()))


def _is_mapping(x) -> bool:
    return isinstance(x, Mapping) or (hasattr(x, "items") and hasattr(x, "get"))  # OmegaConf's DictConfig too


def _options(config, method: str) -> dict:
    """The estimator's options from verl's algorithm config (``grpo_lab_options.<method>``), or ``{}``. A block that
    is not a mapping, or a key the estimator does not take, is an error naming it (a misspelt option would
    otherwise be ignored)."""
    import inspect

    from .advantages import get_estimator

    from .advantages import estimator_names

    if config is None:
        return {}
    if _is_mapping(config):  # a misspelt block ("grpo_lab_option") would be ignored: refused by name
        near = [str(k) for k in config.keys() if str(k).startswith("grpo_lab") and str(k) != "grpo_lab_options"]
        if near:
            raise ValueError(f"algorithm.{near[0]} is not a grpo-lab setting; the estimators' options go under "
                             "algorithm.grpo_lab_options.<estimator>")
    every = config.get("grpo_lab_options", None) if hasattr(config, "get") else None
    if every is None:
        return {}
    if not _is_mapping(every):
        raise ValueError(f"algorithm.grpo_lab_options must map estimator names to their options, got {every!r}")
    unknown_methods = sorted(str(k) for k in every.keys() if str(k) not in estimator_names())
    if unknown_methods:  # "avpso" for avspo would be ignored
        raise ValueError(f"algorithm.grpo_lab_options.{unknown_methods[0]} names no grpo-lab estimator; choose from "
                         f"{', '.join(estimator_names())}")
    mine = every.get(method, None)
    if mine is None:
        return {}
    if not _is_mapping(mine):
        raise ValueError(f"algorithm.grpo_lab_options.{method} must map option names to values, got {mine!r}")
    options = {str(k): v for k, v in dict(mine.items()).items()}
    fn = get_estimator(method)
    params = inspect.signature(fn).parameters
    known = {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
    if method == "avspo":
        known |= {"ema"}  # the adaptive threshold's own option (AVSPOController)
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"algorithm.grpo_lab_options.{method} has option(s) {', '.join(unknown)} that "
                             f"{method} does not take; it takes {', '.join(sorted(known)) or 'none'}")
    return options


def outcome_advantages(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index, method: str,
                       **options) -> tuple[torch.Tensor, torch.Tensor]:
    """grpo-lab's ``method`` on verl's inputs: the sequence reward of each row (its token rewards summed),
    grouped by ``index`` (the prompt uid of each row), the advantage broadcast over ``response_mask``.
    Returns ``(advantages, returns)``, both ``[rows, tokens]``, the same tensor (verl's outcome convention)."""
    token_level_rewards, response_mask = torch.as_tensor(token_level_rewards), torch.as_tensor(response_mask)
    if token_level_rewards.dim() != 2 or token_level_rewards.shape != response_mask.shape:
        raise ValueError(f"token_level_rewards {tuple(token_level_rewards.shape)} and response_mask "
                         f"{tuple(response_mask.shape)} must both be [rows, tokens]")
    if len(index) != token_level_rewards.shape[0]:
        raise ValueError(f"index has {len(index)} uids for {token_level_rewards.shape[0]} rows")
    # in the rewards' own floating dtype (integers promoted to torch's default): a float32 copy of float64 rewards
    # near 1e8 loses the differences between them (all-zero advantages where float64 gives +-0.866)
    dtype = token_level_rewards.dtype if token_level_rewards.is_floating_point() else torch.get_default_dtype()
    scores = token_level_rewards.to(dtype).sum(dim=-1)
    order, G = group_order(index)
    with torch.no_grad():
        adv_grouped = compute_advantages(scores[order], G, method, **options)
        adv = torch.empty_like(adv_grouped)
        adv[order] = adv_grouped
        out = adv.unsqueeze(-1) * response_mask.to(dtype)
    return out, out


def _estimator_fn(method: str):
    """The function verl calls for ``grpo_lab.<method>`` (verl's keyword signature)."""
    def fn(token_level_rewards, response_mask, index=None, config=None, **_unused):
        if index is None:
            raise ValueError(f"{PREFIX}{method} needs the prompt uid of each row (verl's non_tensor_batch['uid'])")
        options = _options(config, method)
        if method == "avspo" and "controller" not in options:
            options["controller"] = _CONTROLLERS.setdefault(PREFIX + method, AVSPOController(
                **{k: options.pop(k) for k in list(options) if k in ("threshold", "alpha", "tau", "ema", "r_max",
                                                                      "reward_max", "eps")}))
        return outcome_advantages(token_level_rewards, response_mask, index, method, **options)

    fn.__name__ = fn.__qualname__ = f"grpo_lab_{method}"
    fn.__doc__ = f"grpo-lab's {method!r} estimator for verl (grpo_lab.verl)."
    return fn


def register_with_verl(method: str) -> str:
    """Register grpo-lab's estimator ``method`` (built-in or added with ``register_estimator``) in verl's
    registry as ``grpo_lab.<method>``; returns that name. Registering it again is a no-op; a name verl already
    holds for another function (another plugin's) is an error naming that function, never shadowed silently."""
    from verl.trainer.ppo import core_algos

    if method not in estimator_names():
        raise ValueError(f"unknown grpo-lab estimator {method!r}; choose one of {', '.join(estimator_names())}")
    name = PREFIX + method
    held = core_algos.ADV_ESTIMATOR_REGISTRY.get(name)
    if held is None:
        core_algos.register_adv_est(name)(_estimator_fn(method))
    elif getattr(held, "__module__", None) != __name__ or held.__name__ != f"grpo_lab_{method}":
        raise ValueError(f"verl's registry already holds {name!r} for another function "
                         f"({getattr(held, '__module__', '?')}.{getattr(held, '__qualname__', held)!r}); grpo-lab "
                         "will not run under a name that runs something else: unregister it, or rename one")
    return name


def reset_state() -> None:
    """Forget AVSPO's adaptive threshold (a new run in the same process starts at the configured one)."""
    _CONTROLLERS.clear()


def register_all() -> list[str]:
    """Register every grpo-lab estimator verl lacks (see the module doc); returns the verl names."""
    return [register_with_verl(m) for m in estimator_names() if m not in VERL_HAS]


try:  # verl imports this module as a plugin; without verl, importing it says how to get it
    import verl.trainer.ppo.core_algos  # noqa: F401
except ImportError as e:  # pragma: no cover - exercised by the missing-extra test
    raise ImportError("grpo_lab.verl needs verl: pip install --no-deps verl==0.9.1 and its import needs "
                      "(docs/guide/verl.md); " + str(e)) from None

REGISTERED = register_all()  # the verl names registered on import
