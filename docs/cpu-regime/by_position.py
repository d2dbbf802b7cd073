"""(4,3) answers of one anchor-task model split by where the key sits (position p of the key; the
anchors follow at p+1, p+2). The task's evaluation averages over p; a model whose inferential route
works only for some positions shows it here.

usage: python docs/cpu-regime/by_position.py TARGET [--split test|train] [--n 4000]
(TARGET: a run folder, a zoo id or a .safetensors checkpoint)
"""

import argparse
import warnings

import torch

warnings.filterwarnings("ignore", message="HookedTransformer is deprecated")

from mechinit.fastpath import last_logits  # noqa: E402
from mechinit.targets import load_target  # noqa: E402
from mechinit.tasks.anchor import PAIRS  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("target")
    p.add_argument("--split", choices=("test", "train"), default="test")
    p.add_argument("--n", type=int, default=4000)
    args = p.parse_args()
    target = load_target(args.target)
    task = target.task
    batch = task.sample(args.n, args.split, ((4, 3),), torch.Generator().manual_seed(0))
    with torch.inference_mode():
        answer = torch.cat([last_logits(target.model, t).argmax(-1) for t in batch.tokens.split(512)])
    i = PAIRS.index((4, 3))
    inferential = batch.keys + task.shift_table("inferential")[i]
    symmetric = batch.keys + task.shift_table("symmetric")[i]
    pos = (batch.tokens == 4).int().argmax(1) - 1  # the first anchor follows the key
    print(f"{target.name}: (4,3) on {args.split}-split keys, {args.n} sequences, by key position")
    print("| key position | sequences | inferential | symmetric | other |\n|---|---|---|---|---|")
    for q in range(task.n_ctx - 2):
        m = pos == q
        n = int(m.sum())
        inf = float((answer[m] == inferential[m]).float().mean())
        sym = float((answer[m] == symmetric[m]).float().mean())
        print(f"| {q} | {n} | {inf:.3f} | {sym:.3f} | {1 - inf - sym:.3f} |")
    inf_all = float((answer == inferential).float().mean())
    sym_all = float((answer == symmetric).float().mean())
    print(f"| all | {args.n} | {inf_all:.3f} | {sym_all:.3f} | {1 - inf_all - sym_all:.3f} |")


if __name__ == "__main__":
    main()
