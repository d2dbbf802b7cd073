"""Training: AdamW with the paper's warm-up + cosine schedule, snapshots, evaluation and resume.

``train(cfg, out)`` writes a complete run folder (see :mod:`mechinit.runs`); ``train(None, out,
resume=True)`` continues a killed run from its last resume state and ends with weights
bit-identical to an uninterrupted run on the same device. Determinism: the init, the training set
and every epoch's shuffle come from seeded CPU generators, and
``torch.use_deterministic_algorithms(True)`` is on while training.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm
from transformer_lens import HookedTransformer

from mechinit import resume as resume_point
from mechinit import runs
from mechinit.card import write_card
from mechinit.config import ConfigError, RunConfig
from mechinit.errors import TrainingDiverged  # noqa: F401  (re-exported)
from mechinit.guards import TrainingInterrupted, deterministic, stop_on_signals
from mechinit.fastpath import all_logits, last_logits, unsupported
from mechinit.tasks.sequence import IGNORE
from mechinit.model import build_model, new_model
from mechinit.schedule import lr_at, make_plan
from mechinit.tasks import make_task

DATA_SEED_OFFSET = 1_000_003
SHUFFLE_SEED_OFFSET = 2_000_003


def epoch_permutation(seed: int, epoch: int, n: int) -> torch.Tensor:
    """The order in which a run with ``seed`` visits its ``n`` training sequences in ``epoch``."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed * SHUFFLE_SEED_OFFSET + epoch))


def resolve_device(name: str) -> str:
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device = 'cuda' but no CUDA device is available; choose cpu or auto")
    return name


def _optimizer(model, cfg: RunConfig) -> torch.optim.AdamW:
    params = [p for p in model.parameters() if p.requires_grad]
    t = cfg.train
    return torch.optim.AdamW(params, lr=t.lr, betas=(t.beta1, t.beta2), eps=t.eps, weight_decay=t.weight_decay)


def _empty_run_folder(out: Path) -> bool:
    """Nothing there, or only what a cleared restart leaves (``resume/lock``)."""
    if not out.exists():
        return True
    files = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    return files in ([], [f"{runs.RESUME}/lock"])


def prepare_out(out: Path, cfg: RunConfig, table: dict, trained_with: dict | None = None, task=None) -> None:
    """Create the run folder with its ``config.json`` (refusing a folder that already holds files)
    and the task's ``data.json`` (tokenizer, data used) when it has one. ``trained_with`` records
    how the run was trained when that is not alone (an ensemble)."""
    if not _empty_run_folder(out):
        raise runs.RunFolderError(f"{out} already holds files; pass --resume {out} to continue it or choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    provenance = {**runs.provenance(), "trained_with": trained_with}
    runs.write_json(out / runs.CONFIG, {**cfg.to_dict(), "init_table": table, "provenance": provenance})
    if hasattr(task, "artifacts"):
        runs.write_json(out / runs.DATA, task.artifacts())


def _record_resume(out: Path, step: int) -> None:
    """Append where and how a resume ran to ``config.json``'s provenance (``resumed``): a run is
    bit-identical to an uninterrupted one only if every part ran on the same kernel set and threads."""
    data = runs.read_json(out / runs.CONFIG)
    data.setdefault("provenance", {}).setdefault("resumed", []).append({"step": step, **runs.compute_environment()})
    runs.write_json(out / runs.CONFIG, data)


def log_eval(out: Path, task, cfg: RunConfig, plan, logits_fn, device: str, step: int, elapsed: float,
             train_loss: float | None, samples_per_s: float | None) -> dict:
    """Evaluate the model behind ``logits_fn`` and append the metrics row to ``metrics.jsonl``."""
    metrics = task.evaluate(logits_fn, device)
    if hasattr(task, "with_max_over_training"):
        metrics = task.with_max_over_training(metrics, runs.read_metrics(out) if (out / runs.METRICS).is_file() else [])
    row = {"step": step, "epoch": step / plan.steps_per_epoch, "lr": lr_at(step, cfg.train, plan),
           "train_loss": train_loss, "samples_per_s": samples_per_s, "elapsed_s": elapsed, **metrics,
           "verdict": task.verdict(metrics)}
    runs.append_metrics(out, row)
    return row


def trim_padding(tokens: torch.Tensor, targets: torch.Tensor, positions: str) -> tuple[torch.Tensor, torch.Tensor]:
    """For per-position targets, cut the batch after its last position with a target: a causal
    model's logits before it do not depend on the cut tokens, so the loss is the same, cheaper."""
    if positions != "all":
        return tokens, targets
    last = int((targets != IGNORE).any(0).nonzero().max()) + 1
    return tokens[:, :last], targets[:, :last]


def model_logits(model, autocast, positions: str = "last"):
    """The logits function of ``model`` under ``autocast``: at the last position (``[batch d_vocab]``)
    or at every position (``positions="all"``, ``[batch pos d_vocab]``). The fast path where it was
    written for the model (:func:`mechinit.fastpath.unsupported`), else the hooked forward."""
    if unsupported(model) is None or not isinstance(model, HookedTransformer):
        forward = last_logits if positions == "last" else all_logits
    else:
        forward = (lambda m, t: m(t)[:, -1]) if positions == "last" else (lambda m, t: m(t))

    def logits_fn(t: torch.Tensor) -> torch.Tensor:
        with autocast:
            return forward(model, t)

    return logits_fn


def finish_run(out: Path, model, cfg: RunConfig, row: dict) -> None:
    runs.save_weights(out / runs.WEIGHTS, model)
    write_card(out, cfg, row)


def last_good_snapshot(out: Path, step: int) -> int | None:
    """The last snapshot whose loss was finite — taken before ``step``, whose weights gave the
    non-finite loss — and whose weights are all finite."""
    from safetensors.torch import load_file

    for s in reversed([s for s in runs.snapshot_steps_on_disk(out) if s < step]):
        if all(torch.isfinite(t).all() for t in load_file(str(runs.snapshot_path(out, s))).values()):
            return s
    return None


def check_out(out: Path) -> None:
    """Refuse an ``--out`` that cannot become a run folder, before anything is written."""
    if out.exists() and not out.is_dir():
        raise runs.RunFolderError(f"{out} is a file, not a folder; choose another --out")
    parent = next((p for p in [out, *out.parents] if p.exists()), Path("."))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise runs.RunFolderError(f"{out} cannot be created: {parent} is not writable")


def train(cfg: RunConfig | None, out: Path, *, resume: bool = False, quiet: bool = False) -> dict:
    """Train (or resume) a run in ``out`` and return its final metrics row.

    ``resume=True`` continues from ``out``'s resume point; a run folder that has a ``config.json``
    but no resume point yet (stopped before its first one) is started again from step 0 with that
    config. SIGINT/SIGTERM save a resume point at the current step and raise
    :class:`~mechinit.guards.TrainingInterrupted`. Torch's global settings are restored afterwards."""
    out = Path(out)
    if resume:
        if not (out / runs.CONFIG).is_file():
            raise runs.RunFolderError(f"{out} is not a run folder ({runs.CONFIG} not found); it cannot be resumed")
        cfg = runs.load_run_config(out)
        if (out / runs.WEIGHTS).is_file():
            raise runs.RunFolderError(f"{out} is a finished run; there is nothing to resume")
        if not (out / runs.RESUME / resume_point.STATE).is_file():  # killed before its first resume point: start again
            with resume_point.lock(out):  # never under the feet of a live trainer
                _clear_run_folder(out)
            resume = False
    else:
        check_out(out)
    device = resolve_device(cfg.train.device)
    with deterministic(device, cfg.train.threads), stop_on_signals() as stop, contextlib.ExitStack() as held:
        if resume:
            held.enter_context(resume_point.lock(out))  # a second `--resume` of this folder gets one line
        return _train(cfg, out, device, resume, quiet, stop, held)


def _clear_run_folder(out: Path) -> None:
    """Empty a run folder for a restart, keeping only the lock file (its inode is what is locked)."""
    import shutil

    for child in out.iterdir():
        if child.name == runs.RESUME:
            for item in child.iterdir():
                if item.name != "lock":
                    shutil.rmtree(item) if item.is_dir() else item.unlink()
        else:
            shutil.rmtree(child) if child.is_dir() else child.unlink()


def _train(cfg: RunConfig, out: Path, device: str, resume: bool, quiet: bool, stop, held: contextlib.ExitStack) -> dict:
    task = make_task(cfg)
    plan = make_plan(cfg.train, task.n_train, getattr(task, "eval_sequences", None))

    if resume:
        model = build_model(cfg.model, device)
        opt = _optimizer(model, cfg)
        step, elapsed, loss_sum, n_loss = resume_point.load(out, model, opt, cfg)
        _record_resume(out, step)
        runs.write_metrics(out, [r for r in runs.read_metrics(out, drop_cut_tail=True) if r["step"] <= step])
    else:
        model, table = new_model(cfg.model, cfg.init, cfg.train.seed, device)
        opt = _optimizer(model, cfg)
        prepare_out(out, cfg, table, task=task)
        held.enter_context(resume_point.lock(out))
        runs.save_weights(runs.snapshot_path(out, 0), model)
        step, elapsed, loss_sum, n_loss = 0, 0.0, 0.0, 0

    tokens, targets = task.train_set(cfg.train.seed + DATA_SEED_OFFSET)
    tokens, targets = tokens.to(device), targets.to(device)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg.train.bf16 and device == "cuda")
    params = [p for p in model.parameters() if p.requires_grad]

    logits_fn = model_logits(model, autocast, task.target_positions)

    def evaluate(train_loss: float | None, samples_per_s: float | None) -> dict:
        model.train(False)
        row = log_eval(out, task, cfg, plan, logits_fn, device, step, elapsed, train_loss, samples_per_s)
        model.train()
        return row

    bar = tqdm(total=plan.total_steps, initial=step, disable=quiet, desc="train", dynamic_ncols=True)
    row = evaluate(None, None) if step == 0 else runs.read_metrics(out)[-1]
    t_mark, n_timed, perm = time.perf_counter(), 0, None  # n_timed: steps since t_mark in this process
    while step < plan.total_steps:
        epoch, i = divmod(step, plan.steps_per_epoch)
        if perm is None or i == 0:
            perm = epoch_permutation(cfg.train.seed, epoch, task.n_train).to(device)
        idx = perm[i * cfg.train.batch_size : (i + 1) * cfg.train.batch_size]
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg.train, plan)
        batch_tokens, batch_targets = trim_padding(tokens[idx], targets[idx], task.target_positions)
        with autocast:
            logits = logits_fn(batch_tokens).float()
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, -2), batch_targets.flatten(), ignore_index=IGNORE)
        value = loss.item()
        if not math.isfinite(value):
            bar.close()
            good = last_good_snapshot(out, step)
            where = f"step{good} in {out / runs.SNAPSHOTS}" if good is not None else "none (every snapshot has non-finite weights)"
            raise TrainingDiverged(f"loss became {value} at step {step}; stopped. Last good snapshot: {where}")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.train.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(params, cfg.train.grad_clip)
        opt.step()
        step += 1
        loss_sum, n_loss, n_timed = loss_sum + value, n_loss + 1, n_timed + 1
        bar.update(1)
        if step % 10 == 0 and n_loss:
            bar.set_postfix_str(f"loss {loss_sum / n_loss:.3g} (since last eval) {row['verdict']}", refresh=False)
        if step in plan.snapshots:
            runs.save_weights(runs.snapshot_path(out, step), model)
        if step % plan.eval_every == 0 or step == plan.total_steps:
            seconds = time.perf_counter() - t_mark
            elapsed += seconds
            bar.set_postfix_str(f"evaluating at step {step}…")
            row = evaluate(loss_sum / n_loss, n_timed * cfg.train.batch_size / seconds)
            resume_point.save(out, model, opt, cfg, step, elapsed)
            bar.set_postfix_str(f"loss {row['train_loss']:.3g} {row['verdict']}")
            loss_sum, n_loss, n_timed, t_mark = 0.0, 0, 0, time.perf_counter()
        elif stop or (cfg.train.resume_every and step % cfg.train.resume_every == 0):
            seconds = time.perf_counter() - t_mark
            resume_point.save(out, model, opt, cfg, step, elapsed + seconds, loss_sum, n_loss)
        if stop and step < plan.total_steps:
            bar.close()
            raise TrainingInterrupted(f"{stop.signal} at step {step}: resume point saved; continue with: mechinit train --resume {out}")
    bar.close()
    finish_run(out, model, cfg, row)
    return row
