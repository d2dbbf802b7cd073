"""One paper-width training step (the ``paper-code`` preset: post-LN, d_model 400, batch 2,048) in fp32
against bf16 autocast on the CPU, side by side in one process.

The step is the trainer's: the fast-path forward (``mechinit.model.fastpath.model_logits``), cross
entropy, backward, gradient clipping at 1.0 and AdamW. Rounds alternate fp32 and bf16 (A B B A ...) on
the same batches, so machine load hits both alike; the report gives median seconds per step, the
ratio, and how far the bf16 loss and gradients are from fp32's on one batch. Run it with no other run
on the machine. bf16 pays only where the CPU has bf16 instructions (``avx512_bf16`` or AMX in
/proc/cpuinfo); the report names what this one has.

usage: python bench/paper_width_step.py [--threads 2] [--rounds 5] [--steps 3]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from pathlib import Path

import torch

from mechinit.model.build import new_model
from mechinit.model.fastpath import model_logits
from mechinit.presets import preset
from mechinit.tasks import make_task


def cpu_bf16_flags() -> list[str]:
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return []
    return sorted({f for f in flags if f in ("avx512_bf16", "amx_bf16", "amx_tile")})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3, help="steps per round and side")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    batch = 2048
    cfg = preset("paper-code").with_overrides({"task.n_train": batch * args.steps, "train.device": "cpu"})
    tokens, targets = make_task(cfg).train_set(1)
    batches = list(zip(tokens.split(batch), targets.split(batch)))
    sides = {"fp32": contextlib.nullcontext, "bf16": lambda: torch.autocast("cpu", dtype=torch.bfloat16)}
    models = {}
    for name in sides:
        model, _ = new_model(cfg.model, cfg.init, 0)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4, weight_decay=0.01)
        models[name] = (model, opt, model_logits(model, sides[name]()))

    def step(name: str, tok, tgt) -> float:
        model, opt, logits_fn = models[name]
        loss = torch.nn.functional.cross_entropy(logits_fn(tok).float(), tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss)

    # the same initial weights and one batch: how far bf16's loss and gradients are from fp32's
    models["bf16"][0].load_state_dict(models["fp32"][0].state_dict())
    grads = {}
    for name in sides:
        model, _, logits_fn = models[name]
        model.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(logits_fn(batches[0][0]).float(), batches[0][1])
        loss.backward()
        grads[name] = (float(loss.detach()), torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]))
    rel = float((grads["bf16"][1] - grads["fp32"][1]).norm() / grads["fp32"][1].norm())

    times = {name: [] for name in sides}
    for r in range(args.rounds + 1):  # round 0 warms up and is not counted
        for name in (list(sides) if r % 2 else list(reversed(list(sides)))):
            t = time.perf_counter()
            for tok, tgt in batches:
                step(name, tok, tgt)
            if r:
                times[name].append((time.perf_counter() - t) / len(batches))
    med = {name: statistics.median(v) for name, v in times.items()}
    print(f"paper-code step (batch {batch}, d_model 400, 2 post-LN layers), {args.threads} threads, "
          f"{args.rounds} rounds x {len(batches)} steps; CPU bf16 flags: {cpu_bf16_flags() or 'none'}; "
          f"kernels {torch.backends.cpu.get_cpu_capability()}")
    for name in sides:
        print(f"  {name}: {med[name]:.3f} s/step (rounds: {', '.join(f'{t:.3f}' for t in times[name])})")
    print(f"  fp32 / bf16: {med['fp32'] / med['bf16']:.2f}x")
    print(f"  one batch from the same weights: loss fp32 {grads['fp32'][0]:.6f}, bf16 {grads['bf16'][0]:.6f}; "
          f"gradient relative difference {rel:.3g}")


if __name__ == "__main__":
    main()
