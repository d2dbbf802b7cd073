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

from mechinit.errors import TrainingInterrupted  # noqa: F401  (re-exported)


@contextlib.contextmanager
def deterministic(device: str, threads: int | None) -> Iterator[None]:
    """``use_deterministic_algorithms(True)``, ``threads`` CPU threads and flushed denormals while
    inside; the previous settings afterwards. (Adam moments of dead ReLU units decay into float32
    denormals, which run up to 4x slower on CPUs; flushing them changes nothing above 1e-38.)"""
    before = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled())
    if device == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
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
        if flag:  # a second Ctrl-C: stop at once
            raise KeyboardInterrupt
        flag.signal = signal.Signals(signum).name

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
