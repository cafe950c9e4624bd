"""Shared test settings.

``USE_CPU``: TRL runs on the GPU when one is visible. trl 1.15 (the pinned GPU set) launches its
Triton log-prob kernel on CPU tensors whenever CUDA is visible (``use_cpu=True`` with a GPU in the
machine fails with "Pointer argument cannot be accessed from Triton"), so the TRL tests follow the
machine instead of forcing the CPU; the two-process test hides the GPU from its subprocesses.
"""

import torch

USE_CPU = not torch.cuda.is_available()
