"""What a benchmark records about the machine it ran on, so a figure is read beside its conditions: the CPU, torch's
version and thread count, the load average when it ran (a busy core changes every timing), the bf16 and AVX-512 units
(which decide the fast path) and the time. Shared by bench_study_run, bench_rollouts and bench_train_step."""

from __future__ import annotations

import os
import platform
import time


def machine() -> dict:
    import torch

    from grpo_lab.generation import _cpu_flags

    flags = _cpu_flags() or set()
    return dict(cpu=platform.processor() or platform.machine(), torch=torch.__version__,
                threads=torch.get_num_threads(), load_avg=os.getloadavg(),
                bf16_units=sorted(flags & {"amx_bf16", "avx512_bf16"}), avx512=bool(flags & {"avx512f"}),
                when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
