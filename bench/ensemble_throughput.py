"""Ensemble training (torch.func, K models in one process) against the same K models one after another.

Both sides run the same number of AdamW steps per model with per-model clipping; the sequential side
is mechinit's single-model training step (fast path + torch.optim.AdamW). Reported: training
samples/s summed over the K models, and the ratio ensemble / sequential.

usage: python bench/ensemble_throughput.py [--threads 2] [--steps 20] [--ks 1,4,8,16]
"""

import argparse
import time

import torch
import torch.nn.functional as F

from mechinit.ensemble import train_ensemble
from mechinit.fastpath import last_logits
from mechinit.model import new_model
from mechinit.presets import preset
from mechinit.tasks import make_task


def sequential(cfgs, steps: int) -> float:
    t = time.perf_counter()
    for cfg in cfgs:
        model, _ = new_model(cfg.model, cfg.init, cfg.train.seed)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=cfg.train.lr, weight_decay=cfg.train.weight_decay)
        tokens, targets = make_task(cfg).train_set(cfg.train.seed)
        bs = cfg.train.batch_size
        for s in range(steps):
            i = (s * bs) % (len(tokens) - bs)
            loss = F.cross_entropy(last_logits(model, tokens[i : i + bs]), targets[i : i + bs])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.train.grad_clip)
            opt.step()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--ks", default="1,4,8,16")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    for name in ("tiny", "small-init"):
        base = preset(name).with_overrides({"train.steps": args.steps, "train.threads": args.threads})
        bs = base.train.batch_size
        print(f"{name}: d_model {base.model.d_model}, L{base.model.n_layers}, batch {bs}, {args.steps} steps, {args.threads} threads")
        for k in (int(x) for x in args.ks.split(",")):
            cfgs = [base.with_overrides({"train.seed": i, "init.gamma": 0.5 + 0.05 * i}) for i in range(k)]
            train_ensemble(cfgs[:1])  # warm-up
            t = time.perf_counter()
            train_ensemble(cfgs)
            t_ens = time.perf_counter() - t
            t_seq = sequential(cfgs, args.steps)
            rate = lambda sec: k * args.steps * bs / sec  # noqa: E731
            print(f"  K={k:2d}: ensemble {rate(t_ens):8.0f} samples/s, sequential {rate(t_seq):8.0f} samples/s -> {t_seq / t_ens:5.2f}x")


if __name__ == "__main__":
    main()
