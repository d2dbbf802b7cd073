"""Ensemble training: K models of one shape trained together in one process, each into its own run folder.

Each member keeps its own init (γ, seed), training data and shuffle (from its seed), learning
rate schedule, weight decay and gradient clipping (per member, not one global norm). Parameters
are stacked along a leading member axis and run through :func:`mechinit.stacked.stacked_logits`;
the gradient of the sum of the members' losses is every member's own gradient, and AdamW is
applied with per-member hyperparameters in the same arithmetic as ``torch.optim.AdamW``.

Every member writes a normal run folder (``config.json`` with ``provenance.trained_with``,
``metrics.jsonl`` evaluated at the same steps, ``step{N}`` snapshots, weights and model card), so
probes, the zoo and sweeps cannot tell it from a run trained alone — except numerically: batched
kernels sum in another order, so a member matches the same config trained alone to allclose, not
bitwise (``tests/mechinit/test_ensemble.py``). Ensemble runs keep no resume state; a sweep restarts
an interrupted ensemble from scratch.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from mechinit import runs
from mechinit.config import ConfigError, RunConfig
from mechinit.ids import run_id
from mechinit.model import new_model
from mechinit.schedule import lr_at, make_plan
from mechinit.stacked import stacked_logits
from mechinit.tasks import make_task
from mechinit.guards import deterministic
from mechinit.train import (DATA_SEED_OFFSET, TrainingDiverged, epoch_permutation, finish_run, log_eval,
                            model_logits, prepare_out, resolve_device)

SHARED = ("model", "task")  # must agree across members
SHARED_TRAIN = ("batch_size", "epochs", "steps", "beta1", "beta2", "eps", "eval_every", "n_snapshots",
                "snapshot_steps", "device", "bf16", "threads")


def unsupported(cfg: RunConfig) -> str | None:
    """Why ``cfg`` cannot train in an ensemble at all, or ``None``."""
    from mechinit.tasks import registered

    if cfg.model.arch != "transformer":
        return f"ensembles train transformers only (model.arch = {cfg.model.arch!r})"
    if getattr(registered()[cfg.task.name], "target_positions", "last") != "last":
        return f"ensembles train last-token tasks only (task {cfg.task.name} has targets at every position)"
    return None


def incompatibility(a: RunConfig, b: RunConfig) -> str | None:
    """Why ``a`` and ``b`` cannot train in one ensemble, or ``None`` when they can."""
    reason = unsupported(a) or unsupported(b)
    if reason:
        return reason
    for section in SHARED:
        if getattr(a, section) != getattr(b, section):
            return f"ensemble members must share the {section} config; use one ensemble per shape"
    for name in SHARED_TRAIN:
        if getattr(a.train, name) != getattr(b.train, name):
            return f"ensemble members must share train.{name}"
    return None


def ensemble_key(cfg: RunConfig) -> tuple | None:
    """Configs with equal keys can train together; ``None``: this config trains alone."""
    if unsupported(cfg):
        return None
    return (cfg.model, cfg.task, *(getattr(cfg.train, n) for n in SHARED_TRAIN))


def train_ensemble(cfgs: list[RunConfig], outs: list[Path], quiet: bool = True) -> list[dict]:
    """Train every member into its run folder; returns each member's final metrics row."""
    if len(cfgs) != len(outs) or not cfgs:
        raise ConfigError("train_ensemble needs one output folder per config (and at least one config)")
    problem = unsupported(cfgs[0]) or next(filter(None, (incompatibility(cfgs[0], c) for c in cfgs[1:])), None)
    if problem:
        raise ConfigError(problem)
    first, outs = cfgs[0], [Path(o) for o in outs]
    device = resolve_device(first.train.device)
    with deterministic(device, first.train.threads):
        return _train_ensemble(cfgs, outs, device, quiet)


def _train_ensemble(cfgs: list[RunConfig], outs: list[Path], device: str, quiet: bool) -> list[dict]:
    first = cfgs[0]
    task = make_task(first)
    plans = [make_plan(c.train, c.task.n_train, getattr(task, "eval_sequences", None)) for c in cfgs]
    plan, n_members = plans[0], len(cfgs)
    built = [new_model(c.model, c.init, c.train.seed, device) for c in cfgs]
    models = [m for m, _ in built]
    with_ids = {"ensemble": [run_id(c) for c in cfgs]}
    for (model, table), cfg, out in zip(built, cfgs, outs):
        prepare_out(out, cfg, table, trained_with=with_ids, task=task)
        runs.save_weights(runs.snapshot_path(out, 0), model)
    named = [dict(m.named_parameters()) for m in models]
    frozen = {n: torch.stack([d[n].detach() for d in named]) for n, p in models[0].named_parameters() if not p.requires_grad}
    shapes = {n: tuple(p.shape) for n, p in models[0].named_parameters() if p.requires_grad}
    # one flat buffer holds every trainable parameter of every member, one contiguous
    # [member ...] block per parameter; the parameters are leaf views into it, so AdamW and
    # clipping run on the buffer in a handful of kernels, whatever the number of tensors
    flat = torch.cat([torch.stack([d[n].detach() for d in named]).flatten() for n in shapes])
    sizes = [n_members * math.prod(s) for s in shapes.values()]
    params = {n: block.view(n_members, *s).requires_grad_(True) for (n, s), block in zip(shapes.items(), flat.split(sizes))}
    member_of = torch.cat([torch.arange(n_members, device=device).repeat_interleave(math.prod(s)) for s in shapes.values()])
    exp_avg, exp_avg_sq = torch.zeros_like(flat), torch.zeros_like(flat)
    data = [task.train_set(c.train.seed + DATA_SEED_OFFSET) for c in cfgs]
    tokens_all = torch.stack([d[0] for d in data]).to(device)
    targets_all = torch.stack([d[1] for d in data]).to(device)
    wd = torch.tensor([c.train.weight_decay for c in cfgs], device=device)
    clip = torch.tensor([c.train.grad_clip for c in cfgs], device=device)
    t0 = first.train
    bs, n_train, tl_cfg = t0.batch_size, first.task.n_train, models[0].cfg
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=t0.bf16 and device == "cuda")

    def sync_models() -> None:
        with torch.no_grad():
            every = {**params, **frozen}
            for k, d in enumerate(named):
                for n, p in d.items():
                    p.copy_(every[n][k])

    def evaluate(step, elapsed, losses, samples_per_s) -> list[dict]:
        rows = []
        for k, (model, cfg, out, member_plan) in enumerate(zip(models, cfgs, outs, plans)):
            model.train(False)
            loss = None if losses is None else losses[k]
            rows.append(log_eval(out, task, cfg, member_plan, model_logits(model, autocast), device, step, elapsed, loss, samples_per_s))
        return rows

    rows = evaluate(0, 0.0, None, None)
    loss_sum, n_loss, elapsed, t_mark, perms = torch.zeros(n_members), 0, 0.0, time.perf_counter(), None
    arange = torch.arange(n_members, device=device)[:, None]
    for step in tqdm(range(plan.total_steps), disable=quiet, desc=f"ensemble of {n_members}", dynamic_ncols=True):
        epoch, i = divmod(step, plan.steps_per_epoch)
        if i == 0 or perms is None:
            perms = torch.stack([epoch_permutation(c.train.seed, epoch, n_train) for c in cfgs]).to(device)
        idx = perms[:, i * bs : (i + 1) * bs]
        with autocast:
            logits = stacked_logits({**params, **frozen}, tl_cfg, tokens_all[arange, idx]).float()
        losses = F.cross_entropy(logits.flatten(0, 1), targets_all[arange, idx].flatten(), reduction="none").view(n_members, -1).mean(1)
        values = losses.detach().cpu()
        if not torch.isfinite(values).all():
            bad = [run_id(cfgs[k]) for k, v in enumerate(values.tolist()) if not math.isfinite(v)]
            raise TrainingDiverged(f"ensemble members {bad} diverged at step {step}")
        losses.sum().backward()
        grad = torch.cat([p.grad.flatten() for p in params.values()])
        for p in params.values():
            p.grad = None
        _clip_per_member(grad, member_of, clip)
        lr = torch.tensor([lr_at(step, c.train, p) for c, p in zip(cfgs, plans)], device=device)
        with torch.no_grad():
            _adamw_step(flat, grad, exp_avg, exp_avg_sq, step + 1, lr[member_of], wd[member_of], t0.beta1, t0.beta2, t0.eps)
        loss_sum, n_loss = loss_sum + values, n_loss + 1
        done = step + 1
        if done in plan.snapshots or done % plan.eval_every == 0 or done == plan.total_steps:
            sync_models()
        if done in plan.snapshots:
            for model, out in zip(models, outs):
                runs.save_weights(runs.snapshot_path(out, done), model)
        if done % plan.eval_every == 0 or done == plan.total_steps:
            seconds = time.perf_counter() - t_mark
            elapsed += seconds
            rows = evaluate(done, elapsed, (loss_sum / n_loss).tolist(), n_loss * bs / seconds)
            loss_sum, n_loss, t_mark = torch.zeros(n_members), 0, time.perf_counter()
    for model, cfg, out, row in zip(models, cfgs, outs, rows):
        finish_run(out, model, cfg, row)
    return rows


def _clip_per_member(grad: torch.Tensor, member_of: torch.Tensor, max_norm: torch.Tensor) -> None:
    """``clip_grad_norm_`` per member: ``grad`` is the flat buffer, ``member_of`` each element's member."""
    total = torch.zeros_like(max_norm).index_add_(0, member_of, grad * grad).sqrt()
    coef = torch.where(max_norm > 0, (max_norm / (total + 1e-6)).clamp(max=1.0), torch.ones_like(total))
    grad.mul_(coef[member_of])


def _adamw_step(p, g, m, v, step: int, lr, wd, beta1: float, beta2: float, eps: float) -> None:
    """``torch.optim.AdamW``'s update on the flat buffer, with a learning rate and weight decay per element."""
    bias1, bias2 = 1 - beta1**step, 1 - beta2**step
    p.mul_(1 - lr * wd)
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    denom = (v.sqrt() / math.sqrt(bias2)).add_(eps)
    p.sub_(lr / bias1 * m / denom)
