"""Training throughput of mechinit against a plain PyTorch model of the same shape, side by side.

Three training steps are timed in interleaved rounds (A B C A B C ...) on the same batches, so
machine load affects them alike; the report gives medians, the ratios to plain PyTorch, and model
FLOP utilisation against an sgemm rate measured in the same run.

* ``plain``    — a textbook post-LN transformer written here (nn.Linear, SDPA, nn.LayerNorm).
* ``mechinit`` — mechinit's training path: the HookedTransformer's own parameters through
  ``mechinit.model.fastpath.last_logits`` (what ``mechinit train`` runs).
* ``tl``       — the same HookedTransformer called as ``model(tokens)[:, -1]`` (hooks and all).

End to end (``--e2e``, on by default): a whole ``mechinit train`` run — data, evaluations with the
default schedule, snapshots, metrics, resume points, model card — against the plain loop doing only
its training steps on the same number of batches. Start-up cancels: the mechinit side is the wall
time of a 3-epoch run minus that of a 1-epoch run (batch 512, 20,480 sequences, as issue 12 set it).

usage: python bench/train_throughput.py [--preset cpu-small-init] [--threads 2] [--rounds 7] [--steps 10] [--no-e2e]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn

from mechinit.model.build import new_model
from mechinit.model.fastpath import last_logits
from mechinit.presets import preset


class PlainBlock(nn.Module):
    def __init__(self, d_model: int, n_heads: int, d_head: int, d_mlp: int):
        super().__init__()
        self.n_heads, self.d_head = n_heads, d_head
        self.qkv = nn.Linear(d_model, 3 * n_heads * d_head, bias=False)
        self.o = nn.Linear(n_heads * d_head, d_model, bias=False)
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.fc1, self.fc2 = nn.Linear(d_model, d_mlp, bias=False), nn.Linear(d_mlp, d_model, bias=False)

    def forward(self, x):
        b, p, _ = x.shape
        q, k, v = self.qkv(x).view(b, p, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        z = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, p, -1)
        x = self.ln1(x + self.o(z))
        return self.ln2(x + self.fc2(F.relu(self.fc1(x))))


class PlainModel(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.embed = nn.Embedding(m.d_vocab, m.d_model)
        self.pos = nn.Parameter(torch.zeros(m.n_ctx, m.d_model))
        self.blocks = nn.ModuleList(PlainBlock(m.d_model, m.n_heads, m.d_head, m.d_mlp) for _ in range(m.n_layers))
        self.unembed = nn.Linear(m.d_model, m.d_vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.unembed(x[:, -1])


def flops_per_sample(m) -> float:
    """Forward FLOPs of the full model (every position), times 3 for forward + backward."""
    n, d, hd = m.n_ctx, m.d_model, m.n_heads * m.d_head
    per_layer = 2 * n * d * 3 * hd + 2 * 2 * n * n * hd + 2 * n * hd * d + 2 * 2 * n * d * m.d_mlp
    return 3.0 * (m.n_layers * per_layer + 2 * d * m.d_vocab)


def sgemm_flops(size: int = 1024, reps: int = 10) -> float:
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - t)


def make_step(model, forward, lr=1e-3):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)

    def step(tokens, targets):
        loss = F.cross_entropy(forward(tokens), targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()

    return step


def end_to_end(preset_name: str, threads: int, batch: int = 512, n_train: int = 20_480) -> tuple[float, float]:
    """``(mechinit samples/s, plain samples/s)`` over the same 2 epochs of steps (see module doc)."""
    import tempfile
    from pathlib import Path

    from mechinit.training.trainer import train

    def run(epochs: int, folder: Path) -> float:
        cfg = preset(preset_name).with_overrides({"train.batch_size": batch, "task.n_train": n_train, "train.epochs": epochs,
                                                  "train.threads": threads})
        t = time.perf_counter()
        train(cfg, folder, quiet=True)
        return time.perf_counter() - t

    with tempfile.TemporaryDirectory() as tmp:
        run(1, Path(tmp) / "warm")
        t1, t3 = run(1, Path(tmp) / "e1"), run(3, Path(tmp) / "e3")
    steps = 2 * (n_train // batch)
    cfg = preset(preset_name)
    torch.set_num_threads(threads)
    plain = PlainModel(cfg.model)
    step = make_step(plain, plain)
    gen = torch.Generator().manual_seed(0)
    data = [(torch.randint(20, 100, (batch, cfg.model.n_ctx), generator=gen), torch.randint(0, cfg.model.d_vocab, (batch,), generator=gen))
            for _ in range(n_train // batch)]
    step(*data[0])
    t = time.perf_counter()
    for i in range(steps):
        step(*data[i % len(data)])
    t_plain = time.perf_counter() - t
    return steps * batch / (t3 - t1), steps * batch / t_plain


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="cpu-small-init")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--no-e2e", dest="e2e", action="store_false", help="skip the end-to-end comparison")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = preset(args.preset)
    m, bs = cfg.model, cfg.train.batch_size
    hooked, _ = new_model(m, cfg.init, seed=0)
    hooked_tl, _ = new_model(m, cfg.init, seed=0)
    plain = PlainModel(m)
    steps = {
        "plain": make_step(plain, plain),
        "mechinit": make_step(hooked, lambda t: last_logits(hooked, t)),
        "tl": make_step(hooked_tl, lambda t: hooked_tl(t)[:, -1]),
    }
    gen = torch.Generator().manual_seed(0)
    batches = [(torch.randint(20, 100, (bs, m.n_ctx), generator=gen), torch.randint(0, m.d_vocab, (bs,), generator=gen)) for _ in range(args.steps)]
    for step in steps.values():  # warm-up
        for tokens, targets in batches[:2]:
            step(tokens, targets)
    rates: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, step in steps.items():
            t = time.perf_counter()
            for tokens, targets in batches:
                step(tokens, targets)
            rates[name].append(bs * args.steps / (time.perf_counter() - t))
    peak = statistics.median(sgemm_flops() for _ in range(3))
    fps = flops_per_sample(m)
    print(f"preset {args.preset}: L{m.n_layers} d_model {m.d_model} d_mlp {m.d_mlp} batch {bs}, {args.threads} threads, "
          f"sgemm {peak / 1e9:.1f} GFLOP/s")
    base = statistics.median(rates["plain"])
    for name, r in rates.items():
        med = statistics.median(r)
        print(f"{name:>9}: {med:8.0f} samples/s  {med / base:5.2f}x plain  MFU {med * fps / peak:6.1%}")
    if args.e2e:
        ours, plain = end_to_end(args.preset, args.threads)
        print(f"end to end (mechinit train, 3 - 1 epochs, batch 512, 20,480 sequences): {ours:8.0f} samples/s vs plain loop "
              f"{plain:8.0f} samples/s -> {ours / plain:5.2f}x")


if __name__ == "__main__":
    main()
