"""Sampling rules: which generated groups a training step keeps, and how much it generates to fill the batch
(introduced in notebook 09; the trainer of :mod:`grpo_lab.trl` calls the rule, never tests its name).

A rule is a registered :class:`SamplingRule`, like an estimator (:func:`register_sampling`, :func:`get_sampling`):

=========== ======= ======= ===============================================================================
name        drops   refills what a step trains on
=========== ======= ======= ===============================================================================
``none``    no      no      every group generated; degenerate ones carry advantage 0
``drop``    yes     no      the informative groups of one round; the others leave the loss and its
                            normaliser (the idea of TRL PR #6365), at no extra generation
``dynamic`` yes     yes     DAPO's dynamic sampling (arXiv 2503.14476): rounds of new prompts until the batch
                            holds as many informative groups as prompts, or ``max_generation_rounds`` ran out
=========== ======= ======= ===============================================================================

A group is informative when the rule's ``keep`` (default :func:`grpo_lab.starvation.filter_groups`: its rewards
differ) says so. Unfilled slots are padding that neither the loss nor its normaliser sees; ``on_exhausted``
("train" or "skip") says what a refilling rule does when its rounds run out. Orthogonal to the rule,
``skip_prob > 0`` replaces, before generation, a prompt whose latest group was degenerate by another from the
stream with that probability (a simple form of arXiv 2506.02177's pre-rollout filtering).

Also here: the prompt stream the extra prompts come from (:class:`PromptStream`: the training set shuffled with
the run's seed, the same on every process), row merging across rounds and processes (:func:`merge_rows`), and
the choice of groups (:func:`choose_groups`). Adding a rule is one :func:`register_sampling` call (at run time
too: ``RunConfig``, ``grpo-lab compare --estimators grpo+<name>`` and the trainer then accept it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from ._checks import as_int, as_number
from .starvation import filter_groups

ON_EXHAUSTED = ("train", "skip")


@dataclass(frozen=True)
class SamplingRule:
    """One sampling rule. ``drops``: the groups its filter rejects leave the loss and its normaliser;
    ``refills``: more rounds of new prompts are generated until the batch holds as many kept groups as prompts
    (at most ``max_generation_rounds``); ``keep``: ``fn(rewards, G) -> one bool per group`` (``None``:
    :func:`grpo_lab.starvation.filter_groups`, the rewards of the group differ); ``doc``: one line for ``--help``
    and the reports."""

    name: str
    drops: bool
    refills: bool
    keep: Callable | None = None
    doc: str = ""

    @property
    def acts(self) -> bool:
        """Whether the rule changes what a step trains on (``none`` does not)."""
        return self.drops or self.refills


_RULES: dict[str, SamplingRule] = {}
# Names a rule may not take: the other parts of a method name (grpo_lab.config.parse_method)
RESERVED = {"skip": "+skip and +skip=p: prompt skipping"}


def register_sampling(rule: SamplingRule) -> SamplingRule:
    """Add ``rule`` to the registry (a name already taken is an error, naming it). Returns the rule."""
    if not isinstance(rule, SamplingRule):
        raise TypeError(f"register_sampling takes a SamplingRule, got {type(rule).__name__}")
    if not isinstance(rule.name, str) or not rule.name.isidentifier():
        raise ValueError(f"a sampling rule's name must be an identifier (it is used in method names such as "
                         f"grpo+<name>), got {rule.name!r}")
    if rule.name in RESERVED:
        raise ValueError(f"{rule.name!r} is a built-in part of method names ({RESERVED[rule.name]}); a sampling rule "
                         "of that name would change what existing method names mean: choose another name")
    if rule.name in _RULES:
        raise ValueError(f"sampling rule {rule.name!r} is already registered")
    for f in ("drops", "refills"):
        if not isinstance(getattr(rule, f), bool):
            raise TypeError(f"sampling rule {rule.name!r}: {f} must be True or False, got {getattr(rule, f)!r}")
    if not isinstance(rule.doc, str):
        raise TypeError(f"sampling rule {rule.name!r}: doc must be a string, got {type(rule.doc).__name__}")
    if rule.refills and not rule.drops:
        raise ValueError(f"sampling rule {rule.name!r} refills without dropping: there would be nothing to refill")
    if rule.keep is not None and not callable(rule.keep):
        raise TypeError(f"sampling rule {rule.name!r}: keep must be a function (rewards, G) -> one bool per group")
    _RULES[rule.name] = rule
    return rule


def unregister_sampling(name: str) -> None:
    """Remove a rule registered at run time (the built-in three stay)."""
    if name in ("none", "drop", "dynamic"):
        raise ValueError(f"the built-in sampling rule {name!r} cannot be removed")
    _RULES.pop(name, None)


def sampling_names() -> tuple[str, ...]:
    return tuple(_RULES)


def get_sampling(name) -> SamplingRule:
    """The rule called ``name``; an unknown name is a ``ValueError`` listing the registered ones."""
    if not isinstance(name, str) or name not in _RULES:
        raise ValueError(f"sampling must be one of {', '.join(_RULES)}, got {name!r}")
    return _RULES[name]


register_sampling(SamplingRule("none", drops=False, refills=False,
                               doc="every group generated trains (degenerate ones with advantage 0)"))
register_sampling(SamplingRule("dynamic", drops=True, refills=True,
                               doc="DAPO's dynamic sampling: more rounds until the batch is full of informative groups"))
register_sampling(SamplingRule("drop", drops=True, refills=False,
                               doc="degenerate groups leave the loss; one round, no refill"))


def check_sampling(sampling: str = "none", max_generation_rounds: int = 8, on_exhausted: str = "train",
                   skip_prob: float = 0.0) -> None:
    """Raise ``ValueError`` naming a bad sampling setting (the trainer and :class:`grpo_lab.config.RunConfig`)."""
    get_sampling(sampling)
    as_int("max_generation_rounds", max_generation_rounds, minimum=1)
    if on_exhausted not in ON_EXHAUSTED:
        raise ValueError(f"on_exhausted must be 'train' (train on the informative groups found) or 'skip' "
                         f"(no policy-gradient step), got {on_exhausted!r}")
    try:  # any real number type (numpy.float32 included); bools and strings are not numbers
        ok = 0 <= as_number("skip_prob", skip_prob) < 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"skip_prob must be a number in [0, 1) (a skipped prompt must be able to come back), "
                         f"got {skip_prob!r}")


def check_trainer_settings(trainer) -> None:
    """Refuse the trainer settings under which dropping groups would not do what it says."""
    refused = {
        f"loss_type={trainer.loss_type!r}: its normaliser counts padded rows (use 'dapo' or 'bnpo', which count "
        "tokens)": trainer.loss_type not in ("dapo", "bnpo"),
    }
    bad = [k for k, on in refused.items() if on]
    if bad:
        raise ValueError(f"sampling={trainer.sampling!r} cannot be used with " + "; ".join(bad))


# How the rows of a generation batch are padded when rounds (or processes) are merged: (side, pad value);
# "pad" is the tokenizer's pad token. A key not listed here cannot be merged, and is refused by name.
_ROW_KEYS = {"prompt_ids": ("left", "pad"), "prompt_mask": ("left", 0), "completion_ids": ("right", "pad"),
             "completion_mask": ("right", 0), "old_per_token_logps": ("right", 0.0),
             "ref_per_token_logps": ("right", 0.0), "sampling_per_token_logps": ("right", 0.0),
             "importance_sampling_ratio": ("right", 1.0),
             "tool_mask": ("right", 1), "advantages": (None, None)}


class PromptStream:
    """The extra prompts of dynamic sampling and of prompt skipping: the training set in an order shuffled
    with the run's seed (a different permutation from TRL's sampler), reshuffled when used up. Every process
    draws the same prompts in the same order."""

    def __init__(self, dataset, seed: int):
        if dataset is None or not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise ValueError("dynamic sampling and prompt skipping draw extra prompts by index: the training "
                             f"dataset must be a map-style dataset with a length, got {type(dataset).__name__}")
        self.dataset = dataset
        self.gen = torch.Generator().manual_seed(int(seed) * 1_000_003 + 7_919)
        self.order: list[int] = []
        self.drawn = 0

    def draw(self, n: int) -> list:
        out = []
        while len(out) < n:
            if not self.order:
                self.order = torch.randperm(len(self.dataset), generator=self.gen).tolist()
            out.append(self.dataset[self.order.pop(0)])
        self.drawn += n
        return out


def _prompt_key(example) -> str:
    import json

    return json.dumps(example.get("prompt"), sort_keys=True, default=str)


def _pad_cat(tensors, side: str | None, value):
    if side is None:
        return torch.cat(tensors)
    width = max(t.shape[1] for t in tensors)
    out = []
    for t in tensors:
        if t.shape[1] < width:
            fill = torch.full((t.shape[0], width - t.shape[1], *t.shape[2:]), value, dtype=t.dtype)
            t = torch.cat([fill, t] if side == "left" else [t, fill], dim=1)
        out.append(t)
    return torch.cat(out)


def merge_rows(batches: list[dict], pad_token_id: int) -> dict:
    """Concatenate generation batches (rounds, or processes' slices) row-wise, re-padding prompts on the left and
    completions on the right to a common width. ``num_items_in_batch`` is left out (the caller recomputes it);
    any other key it cannot merge is an error naming it."""
    for b in batches:
        unknown = [k for k in b if k not in _ROW_KEYS and k != "num_items_in_batch"]
        if unknown:
            raise ValueError(f"dynamic sampling cannot merge the batch field(s) {', '.join(unknown)} "
                             "(multimodal batches are not supported)")
    out = {}
    for key, (side, value) in _ROW_KEYS.items():
        present = [b[key] for b in batches if b.get(key) is not None]
        if present:
            if len(present) != len(batches):
                raise ValueError(f"batch field {key} is present in some rounds only")
            out[key] = _pad_cat(present, side, pad_token_id if value == "pad" else value)
    return out


def _gather_rows(trainer, output) -> dict:
    """Every process's rows of this round, in process order (= TRL's global order), on the CPU."""
    from accelerate.utils import gather_object

    local = {k: v.detach().cpu() for k, v in output.items() if k != "num_items_in_batch" and v is not None}
    parts = gather_object([local]) if trainer.accelerator.num_processes > 1 else [local]
    return merge_rows(parts, trainer._tokenizer.pad_token_id)


def _gather_examples(trainer, inputs) -> list:
    from accelerate.utils import gather_object

    return list(gather_object(list(inputs))) if trainer.accelerator.num_processes > 1 else list(inputs)


def choose_groups(keep: torch.Tensor, n_groups: int, on_exhausted: str = "train") -> tuple[list[int], list[int]]:
    """Which of the generated groups (in generation order) form the batch: ``(kept, padding)``.

    ``kept``: the first ``n_groups`` informative ones (``keep`` True), in order; fewer when the rounds ran out,
    and none then under ``on_exhausted="skip"``. ``padding``: as many other groups, first in order, to fill
    the batch's shape; the trainer zeroes their completion mask, so neither the loss nor its normaliser sees
    them."""
    informative = torch.nonzero(keep).flatten().tolist()
    kept = informative[:n_groups]
    if len(kept) < n_groups and on_exhausted == "skip":
        kept = []
    chosen = set(kept)
    padding = [g for g in range(len(keep)) if g not in chosen][:n_groups - len(kept)]
    return kept, padding


def sampled_batch(trainer, inputs):
    """One training generation batch under ``trainer.sampling_rule``: after an optional pre-generation skip,
    generate round after round until the batch holds as many informative groups as prompts (a refilling rule; one
    round otherwise), then keep them (a dropping rule) or all of them; see the module doc. ``trainer`` is a
    :func:`grpo_lab.trl.trainer_class` trainer (its ``_score``, ``_account``, accelerator and tokenizer)."""
    import warnings

    G = trainer.num_generations
    P, rank, n_local = trainer.accelerator.num_processes, trainer.accelerator.process_index, len(inputs)
    if (n_local * P) % G:
        raise ValueError(f"a generation batch of {n_local * P} completions is not whole groups of {G}")
    n_groups = n_local * P // G
    skipped, examples = 0, None
    if trainer.skip_prob > 0:
        examples = _gather_examples(trainer, inputs)[::G]  # one example per global group
        examples, skipped = _skip_degenerate(trainer, examples)
        inputs = [ex for ex in examples for _ in range(G)][rank * n_local:(rank + 1) * n_local]
    rule = trainer.sampling_rule
    rounds = trainer.max_generation_rounds if rule.refills else 1
    rows, rewards, round_examples = [], [], []
    for r in range(rounds):
        out = trainer._score(inputs)
        if not rule.drops:  # prompt skipping alone: train on this round as it is
            rows = out
        else:
            rows_r = _gather_rows(trainer, out)
            rows.append(rows_r)
        rewards.append(trainer.last_rewards)
        round_examples.append(examples)
        f = filter_groups(torch.cat(rewards), G)
        if not f.binary and not trainer._warned_binary:
            trainer._warned_binary = True
            warnings.warn("sampling: the rewards are not all 0/1. A group is dropped only when all its scored rewards "
                          "are equal (std < 1e-6) or fewer than two are scored; graded rewards rarely are, so little "
                          "will be dropped (grpo_lab.starvation.filter_groups)", stacklevel=2)
        keep_fn = trainer.group_filter or rule.keep  # the caller's filter, else the rule's, else filter_groups'
        found = f.keep if keep_fn is None else _custom_keep(keep_fn, torch.cat(rewards), G)
        if int(found.sum()) >= n_groups or r + 1 == rounds:
            break
        examples = trainer._stream.draw(n_groups)
        inputs = [ex for ex in examples for _ in range(G)][rank * n_local:(rank + 1) * n_local]
    if trainer.skip_prob > 0:  # remember, per prompt, whether its latest group was degenerate
        per_round = f.keep.split([len(rw) // G for rw in rewards])
        for exs, keeps in zip(round_examples, per_round):
            for ex, keep in zip(exs, keeps.tolist()):
                trainer._seen[_prompt_key(ex)] = not keep
    if not rule.drops:
        tokens = int(trainer.accelerator.gather(rows["completion_mask"].sum().reshape(1)).sum())
        trainer._account(rounds=1, f=f, kept=n_groups, skipped=skipped, short=False, rewards=rewards, tokens=tokens)
        return rows
    merged = merge_rows(rows, trainer._tokenizer.pad_token_id)
    tokens = int(merged["completion_mask"].sum())
    kept, padding = choose_groups(found, n_groups, trainer.on_exhausted if rule.refills else "train")
    idx = torch.tensor([g * G + j for g in kept + padding for j in range(G)])
    batch = {k: v[idx] for k, v in merged.items()}
    pad_rows = torch.arange(len(idx)) >= len(kept) * G
    batch["completion_mask"][pad_rows] = 0
    batch["advantages"][pad_rows] = 0
    loss_mask = batch["completion_mask"] if "tool_mask" not in batch else batch["completion_mask"] * batch["tool_mask"]
    device = trainer.accelerator.device
    local = {k: v[rank * n_local:(rank + 1) * n_local].to(device) for k, v in batch.items()}
    # at least 1: a skipped step masks every row, and TRL 1.8 (our floor) divides the dapo/cispo loss by this count
    # unclamped (0/0: a NaN gradient that poisons the weights; found by noxfile.py's floor session; 1.16 clamps)
    local["num_items_in_batch"] = loss_mask.sum().clamp(min=1).to(device)
    trainer.last_rewards = torch.cat(rewards)[idx]  # the batch always holds n_groups groups (kept + padding)
    trainer.last_advantages = batch["advantages"].float()
    short = rule.refills and int(f.keep.sum()) < n_groups
    trainer._account(rounds=len(rewards), f=f, kept=len(kept), skipped=skipped, short=short,
                     rewards=rewards, tokens=tokens)
    trainer.last_sampling.update(kept_groups=kept, padding_groups=padding)
    return local


def _custom_keep(fn, rewards, G) -> torch.Tensor:
    """A group filter (a rule's own, or the caller's: notebook 09's exercise) applied to flat rewards: one bool per
    group, checked."""
    n_groups = len(rewards) // G
    keep = torch.as_tensor(fn(rewards.clone(), G))
    if keep.shape != (n_groups,) or keep.dtype != torch.bool:
        raise ValueError(f"group_filter must return one bool per group ({n_groups} here), got "
                         f"{tuple(keep.shape)} of {keep.dtype}")
    return keep


def _skip_degenerate(trainer, examples: list) -> tuple[list, int]:
    """Replace, with probability ``skip_prob`` each time, a prompt whose latest group was degenerate by the next
    prompt of the stream (at most 8 draws per slot); every process makes the same draws."""
    out, skipped = [], 0
    for ex in examples:
        for _ in range(8):
            if not trainer._seen.get(_prompt_key(ex)):
                break
            if torch.rand((), generator=trainer._skip_gen).item() >= trainer.skip_prob:
                break
            ex = trainer._stream.draw(1)[0]
            skipped += 1
        out.append(ex)
    return out, skipped


