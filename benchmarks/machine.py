"""What a benchmark records about the machine it ran on, so a figure is read beside its conditions: the CPU, torch's
version and thread count, the load average when it ran (a busy core changes every timing), the bf16 and AVX-512 units
(which decide the fast path) and the time. Shared by bench_study_run, bench_rollouts and bench_train_step; the copy
bandwidth that sets a decode loop's weight-streaming bound by bench_rollouts and bench_decode_device."""

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


def copy_bandwidth(device="cpu", floats: int = 128 * 2**20, copies: int = 1) -> float:
    """Bytes read and written per second by ``copies`` timed copies of a float32 buffer of ``floats`` elements on
    ``device`` (one untimed copy first; a CUDA device is synchronised around the timed ones). Each caller keeps the
    buffer and the count its recorded figures were measured with: bench_rollouts 512 MiB once on the CPU,
    bench_decode_device 1 GiB five times on the device."""
    import torch

    device = torch.device(device)
    x = torch.empty(floats, device=device)
    y = torch.empty_like(x)
    y.copy_(x)
    synchronize(device)
    t = time.perf_counter()
    for _ in range(copies):
        y.copy_(x)
    synchronize(device)
    return copies * 2 * x.numel() * x.element_size() / (time.perf_counter() - t)


def synchronize(device) -> None:
    """Wait for a CUDA device's queued work before a clock is read (a CPU's work is done when its call returns)."""
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
