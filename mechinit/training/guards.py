"""Context managers a training run holds: the deterministic torch settings (restored afterwards, so
a notebook that trains keeps its own settings) and a stop flag raised by SIGINT/SIGTERM (the loop
saves a resume point at the current step and ends with :class:`TrainingInterrupted`)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Iterator

import torch

from mechinit.config import ConfigError
from mechinit.errors import TrainingInterrupted  # noqa: F401  (re-exported)


@contextlib.contextmanager
def deterministic(device: str, threads: int | None, tf32: bool = False) -> Iterator[None]:
    """``use_deterministic_algorithms(True)``, ``threads`` CPU threads and flushed denormals while
    inside; on CUDA, TF32 matmuls exactly when ``tf32`` (a notebook's own TF32 setting never leaks
    into a run); the previous settings afterwards. (Adam moments of dead ReLU units decay into float32
    denormals, which run up to 4x slower on CPUs; flushing them changes nothing above 1e-38.)"""
    if tf32 and device != "cuda":
        raise ConfigError(f"train.tf32 = true needs a CUDA device; this run resolved to {device!r}")
    before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled(),
              torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    if device == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
    if threads is not None:
        torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1], warn_only=before[2])
        torch.set_flush_denormal(False)  # torch has no getter; False is its default
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before[3], before[4]


class StopFlag:
    """Set by SIGINT/SIGTERM while held (main thread only; elsewhere it never fires)."""

    def __init__(self) -> None:
        self.signal: str | None = None

    def __bool__(self) -> bool:
        return self.signal is not None


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopFlag]:
    flag = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):  # noqa: ARG001
        if flag and signum == signal.SIGINT:  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        flag.signal = flag.signal or signal.Signals(signum).name  # a repeated SIGTERM (a sweep forwards one) changes nothing

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
