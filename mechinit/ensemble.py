"""Ensemble training: K models of one shape trained together in one process with ``torch.func``.

Each member keeps its own init (γ, seed), training data and shuffle (from its seed), learning
rate schedule, weight decay and gradient clipping (per member, not one global norm). Parameters
are stacked along a leading member axis; one ``vmap(grad(loss))`` call gives every member's
gradients, and AdamW is applied with per-member hyperparameters in the same arithmetic as
``torch.optim.AdamW``. A member's final weights match the same config trained alone by
:func:`mechinit.train.train` (``tests/mechinit/test_ensemble.py``; allclose, not bitwise: the
batched kernels sum in another order).

Not yet: run folders (metrics, snapshots) per member and the sweep's ``--ensemble auto``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch.func import grad_and_value, vmap

from mechinit.config import ConfigError, RunConfig
from mechinit.fastpath import logits_from_params
from mechinit.model import new_model
from mechinit.schedule import lr_at, make_plan
from mechinit.tasks import make_task
from mechinit.train import DATA_SEED_OFFSET, epoch_permutation

SHARED = ("model", "task")  # must agree across members
SHARED_TRAIN = ("batch_size", "epochs", "steps", "beta1", "beta2", "eps")


def check_compatible(cfgs: list[RunConfig]) -> None:
    first = cfgs[0]
    for cfg in cfgs[1:]:
        for section in SHARED:
            if getattr(cfg, section) != getattr(first, section):
                raise ConfigError(f"ensemble members must share the {section} config; use one ensemble per shape")
        for name in SHARED_TRAIN:
            if getattr(cfg.train, name) != getattr(first.train, name):
                raise ConfigError(f"ensemble members must share train.{name}")


def train_ensemble(cfgs: list[RunConfig], device: str = "cpu") -> list[dict[str, torch.Tensor]]:
    """Train every member; returns each member's final parameters (TL names)."""
    check_compatible(cfgs)
    first = cfgs[0]
    task = make_task(first)
    plans = [make_plan(c.train, c.task.n_train) for c in cfgs]
    models = [new_model(c.model, c.init, c.train.seed, device)[0] for c in cfgs]
    tl_cfg = models[0].cfg
    trainable = [n for n, p in models[0].named_parameters() if p.requires_grad]
    stack = lambda name: torch.stack([dict(m.named_parameters())[name].detach() for m in models])  # noqa: E731
    params = {n: stack(n) for n in trainable}
    frozen = {n: stack(n) for n, p in models[0].named_parameters() if not p.requires_grad}
    exp_avg = {n: torch.zeros_like(p) for n, p in params.items()}
    exp_avg_sq = {n: torch.zeros_like(p) for n, p in params.items()}
    data = [task.train_set(c.train.seed + DATA_SEED_OFFSET) for c in cfgs]
    tokens_all = torch.stack([d[0] for d in data]).to(device)
    targets_all = torch.stack([d[1] for d in data]).to(device)
    wd = torch.tensor([c.train.weight_decay for c in cfgs], device=device)
    clip = torch.tensor([c.train.grad_clip for c in cfgs], device=device)
    beta1, beta2, eps = first.train.beta1, first.train.beta2, first.train.eps
    bs, spe, n_train = first.train.batch_size, plans[0].steps_per_epoch, first.task.n_train

    def loss_fn(p, f, tokens, targets):
        return F.cross_entropy(logits_from_params({**p, **f}, tl_cfg, tokens, fused_attention=False), targets)

    grads_fn = vmap(grad_and_value(loss_fn))
    perms = None
    for step in range(plans[0].total_steps):
        epoch, i = divmod(step, spe)
        if i == 0 or perms is None:
            perms = torch.stack([epoch_permutation(c.train.seed, epoch, n_train) for c in cfgs]).to(device)
        idx = perms[:, i * bs : (i + 1) * bs]
        tokens = torch.gather(tokens_all, 1, idx[..., None].expand(-1, -1, tokens_all.shape[-1]))
        targets = torch.gather(targets_all, 1, idx)
        grads, losses = grads_fn(params, frozen, tokens, targets)
        if not torch.isfinite(losses).all():
            bad = [k for k, v in enumerate(losses.tolist()) if not math.isfinite(v)]
            raise FloatingPointError(f"ensemble members {bad} diverged at step {step}")
        _clip_per_member(grads, clip)
        lr = torch.tensor([lr_at(step, c.train, p) for c, p in zip(cfgs, plans)], device=device)
        _adamw_step(params, grads, exp_avg, exp_avg_sq, step + 1, lr, wd, beta1, beta2, eps)
    return [{**{n: v[k].clone() for n, v in params.items()}, **{n: v[k].clone() for n, v in frozen.items()}} for k in range(len(cfgs))]


def _per_member(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1, *([1] * (like.dim() - 1)))


def _clip_per_member(grads: dict[str, torch.Tensor], max_norm: torch.Tensor) -> None:
    """``clip_grad_norm_`` per member: total 2-norm over that member's gradients."""
    norms = torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads.values()], dim=1)
    total = torch.linalg.vector_norm(norms, dim=1)
    coef = torch.where(max_norm > 0, (max_norm / (total + 1e-6)).clamp(max=1.0), torch.ones_like(total))
    for g in grads.values():
        g.mul_(_per_member(coef, g))


def _adamw_step(params, grads, exp_avg, exp_avg_sq, step: int, lr, wd, beta1: float, beta2: float, eps: float) -> None:
    """``torch.optim.AdamW``'s update with a learning rate and weight decay per member."""
    bias1, bias2 = 1 - beta1**step, 1 - beta2**step
    for name, p in params.items():
        g, m, v = grads[name], exp_avg[name], exp_avg_sq[name]
        lr_k, wd_k = _per_member(lr, p), _per_member(wd, p)
        p.mul_(1 - lr_k * wd_k)
        m.lerp_(g, 1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        denom = (v.sqrt() / math.sqrt(bias2)).add_(eps)
        p.sub_(lr_k / bias1 * m / denom)
