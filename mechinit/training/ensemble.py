"""Ensemble training: K models of one shape trained together in one process, each into its own run folder.

Each member keeps its own init (γ, seed), training data and shuffle (from its seed), learning
rate schedule, weight decay and gradient clipping (per member, not one global norm). Parameters
are stacked along a leading member axis and run through :func:`mechinit.model.stacked.stacked_logits`;
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
from pathlib import Path

import torch
import torch.nn.functional as F

from mechinit.config import ConfigError, RunConfig
from mechinit.model.build import new_model
from mechinit.model.fastpath import model_logits
from mechinit.model.stacked import stacked_logits
from mechinit.runs import folder as runs
from mechinit.runs import lifecycle
from mechinit.runs.ids import run_id
from mechinit.tasks import make_task
from mechinit.training.budget import check_fits
from mechinit.training.guards import deterministic
from mechinit.training.loop import Start, run_loop
from mechinit.training.schedule import lr_at, make_plan, weight_decay_at
from mechinit.training.trainer import DATA_SEED_OFFSET, TrainingDiverged, bf16_autocast, epoch_permutation, log_eval, resolve_device

SHARED = ("model", "task")  # must agree across members
SHARED_TRAIN = ("batch_size", "epochs", "steps", "beta1", "beta2", "eps", "eval_every", "n_snapshots",
                "snapshot_steps", "device", "bf16", "tf32", "threads")


def ensemble_refusal(cfg: RunConfig) -> str | None:
    """Why ``cfg`` cannot train in an ensemble at all, or ``None``."""
    from mechinit.tasks import registered

    if cfg.model.arch != "transformer":
        return f"ensembles train transformers only (model.arch = {cfg.model.arch!r})"
    if cfg.train.replay is not None:
        return f"a replay (train.replay = {cfg.train.replay!r}) trains alone"
    if registered()[cfg.task.name].target_positions != "last":
        return f"ensembles train last-token tasks only (task {cfg.task.name} has targets at every position)"
    return None


def incompatibility(a: RunConfig, b: RunConfig) -> str | None:
    """Why ``a`` and ``b`` cannot train in one ensemble, or ``None`` when they can."""
    reason = ensemble_refusal(a) or ensemble_refusal(b)
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
    if ensemble_refusal(cfg):
        return None
    return (cfg.model, cfg.task, *(getattr(cfg.train, n) for n in SHARED_TRAIN))


def train_ensemble(cfgs: list[RunConfig], outs: list[Path], quiet: bool = True) -> list[dict]:
    """Train every member into its run folder; returns each member's final metrics row."""
    if len(cfgs) != len(outs) or not cfgs:
        raise ConfigError("train_ensemble needs one output folder per config (and at least one config)")
    problem = ensemble_refusal(cfgs[0]) or next(filter(None, (incompatibility(cfgs[0], c) for c in cfgs[1:])), None)
    if problem:
        raise ConfigError(problem)
    first, outs = cfgs[0], [Path(o) for o in outs]
    check_fits(first, members=len(cfgs))
    device = resolve_device(first.train.device)
    with deterministic(device, first.train.threads, first.train.tf32):
        return _train_ensemble(cfgs, outs, device, quiet)


def _train_ensemble(cfgs: list[RunConfig], outs: list[Path], device: str, quiet: bool) -> list[dict]:
    first = cfgs[0]
    task = make_task(first)
    plans = [make_plan(c.train, c.task.n_train, getattr(task, "eval_sequences", None)) for c in cfgs]
    plan = plans[0]
    built = [new_model(c.model, c.init, c.train.weights_seed, device) for c in cfgs]
    models = [m for m, _ in built]
    with_ids = {"ensemble": [run_id(c) for c in cfgs]}
    for (model, table), cfg, out in zip(built, cfgs, outs):
        lifecycle.create(out, cfg, table, trained_with=with_ids, task=task)
        runs.save_weights(runs.snapshot_path(out, 0), model)
    stepper = EnsembleStepper(cfgs, outs, device, task, plans, models)
    rows = stepper.evaluate(0, 0.0, None, None)
    rows = run_loop(stepper, plan, first.train.batch_size, Start(), rows, desc=f"ensemble of {len(cfgs)}", quiet=quiet)
    for model, cfg, out, row in zip(models, cfgs, outs, rows):
        lifecycle.finish(out, model, cfg, row)
    return rows


class EnsembleStepper:
    """K stacked models' training step (a :class:`mechinit.training.loop.Stepper`); no resume points."""

    def __init__(self, cfgs: list[RunConfig], outs: list[Path], device: str, task, plans: list, models: list):
        self.cfgs, self.outs, self.device, self.task, self.plans, self.models = cfgs, outs, device, task, plans, models
        self.members = n = len(cfgs)
        self.named = [dict(m.named_parameters()) for m in models]
        self.frozen = {k: torch.stack([d[k].detach() for d in self.named]) for k, p in models[0].named_parameters() if not p.requires_grad}
        shapes = {k: tuple(p.shape) for k, p in models[0].named_parameters() if p.requires_grad}
        # one flat buffer holds every trainable parameter of every member, one contiguous
        # [member ...] block per parameter; the parameters are leaf views into it, so AdamW and
        # clipping run on the buffer in a handful of kernels, whatever the number of tensors
        self.flat = torch.cat([torch.stack([d[k].detach() for d in self.named]).flatten() for k in shapes])
        sizes = [n * math.prod(s) for s in shapes.values()]
        self.params = {k: block.view(n, *s).requires_grad_(True) for (k, s), block in zip(shapes.items(), self.flat.split(sizes))}
        self.member_of = torch.cat([torch.arange(n, device=device).repeat_interleave(math.prod(s)) for s in shapes.values()])
        self.exp_avg, self.exp_avg_sq = torch.zeros_like(self.flat), torch.zeros_like(self.flat)
        data = [task.train_set(c.train.order_seed + DATA_SEED_OFFSET) for c in cfgs]
        self.tokens_all = torch.stack([d[0] for d in data]).to(device)
        self.targets_all = torch.stack([d[1] for d in data]).to(device)
        self.clip = torch.tensor([c.train.grad_clip for c in cfgs], device=device)
        self.autocast = bf16_autocast(device, cfgs[0].train.bf16)
        self.arange = torch.arange(n, device=device)[:, None]
        self.perms, self.perm_epoch, self.synced_at = None, None, 0

    def forward(self, step: int) -> torch.Tensor:
        t0, plan = self.cfgs[0].train, self.plans[0]
        epoch, i = divmod(step, plan.steps_per_epoch)
        if self.perm_epoch != epoch:
            n_train = self.cfgs[0].task.n_train
            self.perms = torch.stack([epoch_permutation(c.train.order_seed, epoch, n_train) for c in self.cfgs]).to(self.device)
            self.perm_epoch = epoch
        idx = self.perms[:, i * t0.batch_size : (i + 1) * t0.batch_size]
        with self.autocast:
            logits = stacked_logits({**self.params, **self.frozen}, self.models[0].cfg, self.tokens_all[self.arange, idx]).float()
        targets = self.targets_all[self.arange, idx].flatten()
        return F.cross_entropy(logits.flatten(0, 1), targets, reduction="none").view(self.members, -1).mean(1)

    def diverged(self, step: int, values: list[float]) -> None:
        bad = [run_id(self.cfgs[k]) for k, v in enumerate(values) if not math.isfinite(v)]
        raise TrainingDiverged(f"ensemble members {bad} diverged at step {step}")

    def update(self, step: int, losses: torch.Tensor) -> None:
        losses.sum().backward()
        grad = torch.cat([p.grad.flatten() for p in self.params.values()])
        for p in self.params.values():
            p.grad = None
        _clip_per_member(grad, self.member_of, self.clip)
        lr = torch.tensor([lr_at(step, c.train, p) for c, p in zip(self.cfgs, self.plans)], device=self.device)
        wd = torch.tensor([weight_decay_at(step, c.train, p) for c, p in zip(self.cfgs, self.plans)], device=self.device)
        t0 = self.cfgs[0].train
        with torch.no_grad():
            _adamw_step(self.flat, grad, self.exp_avg, self.exp_avg_sq, step + 1, lr[self.member_of], wd[self.member_of],
                        t0.beta1, t0.beta2, t0.eps)

    def _sync(self, step: int) -> None:
        """Copy the stacked parameters into the members' own models (before they are saved or evaluated)."""
        if self.synced_at == step:
            return
        with torch.no_grad():
            every = {**self.params, **self.frozen}
            for k, d in enumerate(self.named):
                for n, p in d.items():
                    p.copy_(every[n][k])
        self.synced_at = step

    def snapshot(self, step: int) -> None:
        self._sync(step)
        for model, out in zip(self.models, self.outs):
            runs.save_weights(runs.snapshot_path(out, step), model)

    def evaluate(self, step: int, elapsed: float, train_losses: list[float] | None, samples_per_s: float | None) -> list[dict]:
        self._sync(step)
        rows = []
        for k, (model, cfg, out, plan) in enumerate(zip(self.models, self.cfgs, self.outs, self.plans)):
            model.train(False)
            loss = None if train_losses is None else train_losses[k]
            rows.append(log_eval(out, self.task, cfg, plan, model_logits(model, self.autocast), self.device, step, elapsed, loss,
                                 samples_per_s))
        return rows

    def save_resume(self, step: int, elapsed: float, loss_sums: list[float], n_loss: int) -> None:
        """Ensembles keep no resume points (a sweep restarts an interrupted ensemble)."""


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
