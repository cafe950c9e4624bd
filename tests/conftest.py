"""Shared test settings.

``USE_CPU``: TRL runs on the GPU when one is visible. trl 1.15 (the pinned GPU set) launches its
Triton log-prob kernel on CPU tensors whenever CUDA is visible (``use_cpu=True`` with a GPU in the
machine fails with "Pointer argument cannot be accessed from Triton"), so the TRL tests follow the
machine instead of forcing the CPU; the two-process test hides the GPU from its subprocesses.

``threads``: the suite runs torch (and the notebook kernels it starts, through ``OMP_NUM_THREADS``) on one
thread, grpo-lab's own default on a machine with few cores: on 2 cores with another process busy, two
threads ran a model up to 15x slower than one (docs/benchmarks.md).
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # inherited by notebook kernels and subprocesses

import torch  # noqa: E402

torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
USE_CPU = not torch.cuda.is_available()
