"""The authors' γ 0.8 run replayed with their own seed: their initial weights, their 900k sequences and
their batch order, trained by mechinit (issue 11, session 10).

Their teaching code (xuzhiqin1990/understanding_dl, code/book_jupyter_composition_task; config seed 1)
seeds torch, numpy and Python's `random` with 1, draws the data with numpy (noise, key position) and
`random` (key), builds the model on the CPU (PyTorch's default layer inits, then the γ rule on top, in
module order), and shuffles each epoch with a DataLoader whose seed comes from torch's global
generator. This file re-states those draws (written from the description in docs/paper-fidelity.md,
no code copied) so that mechinit can start from exactly their state. Two fingerprints check the
replay before anything trains: the data rows the notebook printed, and the per-data-type accuracies
their log recorded at step 0 (which depend on both the data and the initial weights).

usage: python docs/cpu-regime/authors_seed.py check          # the two fingerprints
       python docs/cpu-regime/authors_seed.py train [--threads N]   # to step 8,880 (default one thread); continues
           # from the run's resume point when it has one
       python docs/cpu-regime/authors_seed.py train --init mechinit --steps 1850   # one half of their seed swapped for
           # mechinit's seed 0 (--init: initial weights, --data: data and batch order); folder g0.8-{our,their}-init-{our,their}-data
"""

from __future__ import annotations

import math
import random
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).parent
OUT = HERE / "paper-width" / "g0.8-authors-seed"
SEED, GAMMA, D_MODEL, D_HEAD, D_MLP, VOCAB, MAX_POS, N_CTX, LAYERS = 1, 0.8, 400, 200, 1200, 201, 20, 9, 2
PAIRS = ["13", "23", "43", "31", "32", "34", "12", "14", "21", "41", "24", "42", "11", "22", "33", "44"]
GROUPS = [p + "_xm0" for p in PAIRS] + [p + "_xel" for p in PAIRS]  # their order; _xm0 = test-split keys
TRAINED = [g for g in GROUPS if g.endswith("_xel") and g != "43_xel"]
SHIFT = {1: 5, 2: 1, 3: -2, 4: -8}
CHOICES = ("authors", "mechinit")  # whose draws a replay's initial weights, and its data and order, are
# the notebook's printed first rows (main.ipynb, cell "datasize: ... example: ...")
PRINTED = {"44_xel": [48, 23, 85, 4, 4, 80, 57, 86, 50, 69], "11_xm0": [41, 42, 62, 48, 1, 1, 24, 42, 88, 58],
           "24_xel": [37, 44, 46, 87, 63, 30, 2, 4, 58, 23]}
# result_0.8/train_log.log, the block before the first epoch: accuracy of each data type at step 0
STEP0 = dict(zip(GROUPS, [
    0.0016, 0.004088888888888889, 0.0032, 0.0037333333333333333, 0.003911111111111111, 0.0026666666666666666,
    0.004266666666666667, 0.006577777777777778, 0.005511111111111111, 0.0048, 0.0032, 0.003911111111111111,
    0.0028444444444444446, 0.0037333333333333333, 0.002311111111111111, 0.0035555555555555557,
    0.004148148148148148, 0.0037728395061728394, 0.0034567901234567903, 0.003437037037037037, 0.005985185185185185,
    0.0033777777777777777, 0.005017283950617284, 0.0035753086419753085, 0.0034962962962962964, 0.0034962962962962964,
    0.0033382716049382716, 0.004740740740740741, 0.0030617283950617282, 0.005688888888888889, 0.0033777777777777777,
    0.003140740740740741]))


def authors_data() -> dict[str, np.ndarray]:
    """Their 32 data types, each ``[n, 10]`` (9 inputs, then the answer), drawn as their seed draws them."""
    rs, py = np.random.RandomState(SEED), random.Random(SEED)
    weights = np.array([1.0] * 16 + [9.0] * 16)
    shares = (weights / weights.sum()).tolist()
    keys = {split: {p: [x for x in range(20, 100) if (x % 9 == p) == (split == "test")] for p in range(9)} for split in ("test", "train")}
    out = {}
    for name, share in zip(GROUPS, shares):
        n = math.ceil(900_000 * share)
        rows = rs.randint(20, 100, size=(n, 10))
        a1, a2 = int(name[0]), int(name[1])
        table = keys["test" if name.endswith("_xm0") else "train"]
        for i in range(n):
            pos = rs.randint(0, 7)
            x = py.choice(table[pos])
            rows[i, pos : pos + 3] = (x, a1, a2)
            rows[i, -1] = x + SHIFT[a1] + SHIFT[a2] + (4 if (a1, a2) == (3, 4) else 0)
        out[name] = rows
    return out


def authors_init_and_shuffles(n_epochs: int) -> tuple[dict[str, torch.Tensor], list[int]]:
    """Their initial weights under TransformerLens names (drawn with torch's global generator seeded
    with 1, layer by layer as their modules are built: PyTorch's default init, then the γ rule), and
    the seed of each epoch's shuffle (their DataLoaders draw two numbers from the same generator on
    every pass — a base seed, then the sampler's seed — and every data type is passed over for the
    accuracies every third epoch, the 17 untrained ones for the test loss every epoch)."""
    torch.manual_seed(SEED)

    def std(d_in: int) -> float:
        return d_in ** -GAMMA

    def linear(d_out: int, d_in: int, bias: bool = False):  # nn.Linear's own init
        w = torch.empty(d_out, d_in)
        torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5))
        b = torch.empty(d_out).uniform_(-1 / math.sqrt(d_in), 1 / math.sqrt(d_in)) if bias else None
        return w, b

    tok, pos = torch.empty(VOCAB, D_MODEL).normal_(), torch.empty(MAX_POS, D_MODEL).normal_()  # nn.Embedding's own init
    tok.normal_(0, std(D_MODEL)), pos.normal_(0, std(D_MODEL))
    w = {"embed.W_E": tok, "pos_embed.W_pos": pos[:N_CTX].clone()}
    for layer in range(LAYERS):
        for name, (d_out, d_in) in (("W_Q", (D_HEAD, D_MODEL)), ("W_K", (D_HEAD, D_MODEL)), ("W_V", (D_HEAD, D_MODEL)),
                                    ("W_O", (D_MODEL, D_HEAD))):
            weight, _ = linear(d_out, d_in)
            weight.normal_(0, std(d_in))
            w[f"blocks.{layer}.attn.{name}"] = weight.T.unsqueeze(0).contiguous()
        w_in, _ = linear(D_MLP, D_MODEL)
        w_out, _ = linear(D_MODEL, D_MLP)
        w_in.normal_(0, std(D_MODEL)), w_out.normal_(0, std(D_MLP))
        w[f"blocks.{layer}.mlp.W_in"], w[f"blocks.{layer}.mlp.W_out"] = w_in.T.contiguous(), w_out.T.contiguous()
    w_u, b_u = linear(VOCAB, D_MODEL, bias=True)
    w_u.normal_(0, std(D_MODEL))
    w["unembed.W_U"], w["unembed.b_U"] = w_u.T.contiguous(), b_u

    def draw() -> int:
        return int(torch.empty((), dtype=torch.int64).random_().item())

    shuffles = []
    for epoch in range(n_epochs):
        if epoch % 3 == 0:
            for _ in range(2 * (len(GROUPS) + 1)):  # every data type's accuracy, then (4,3)'s deviations
                draw()
        draw()  # the training pass's base seed
        shuffles.append(draw())  # its sampler's seed
        for _ in range(2 * (len(GROUPS) - len(TRAINED))):  # the test loss of the 17 untrained types
            draw()
    return w, shuffles


def paper_code_config(steps: int = 8880, seed: int = SEED, threads: int = 1):
    from mechinit.presets import preset

    return preset("paper-code").with_overrides({
        "init.gamma": GAMMA, "train.seed": seed, "train.device": "cpu", "train.threads": threads, "train.steps": steps,
        "train.resume_every": 37, "train.snapshot_steps": tuple(s for s in range(1110, steps, 1110))})


def check() -> int:
    """Print both fingerprints; exit status 1 if the data rows differ or any step-0 accuracy does."""
    from mechinit.model import new_model
    from mechinit.train import load_initial_weights

    data = authors_data()
    ok = True
    for name, row in PRINTED.items():
        same = data[name][0].tolist() == row
        ok &= same
        print(f"{name} first row: {data[name][0].tolist()} {'== the notebook' if same else '!= the notebook ' + str(row)}")
    print("sizes:", {n: len(v) for n, v in data.items() if n in ("13_xm0", "13_xel")}, "trained:", sum(len(data[g]) for g in TRAINED))
    weights, _ = authors_init_and_shuffles(1)
    cfg = paper_code_config()
    model, _ = new_model(cfg.model, cfg.init, 0)
    load_initial_weights(model, weights)
    model.train(False)
    worst = 0
    with torch.inference_mode():
        for name in [g for g in GROUPS if g.endswith("_xm0")] + ["43_xel"]:  # 101k of the 900k: minutes, not an hour
            rows = torch.from_numpy(data[name])
            right = sum(int((model(chunk[:, :N_CTX])[:, -1].argmax(-1) == chunk[:, -1]).sum()) for chunk in rows.split(4096))
            logged = round(STEP0[name] * len(rows))
            worst = max(worst, abs(right - logged))
            print(f"{name}: {right} of {len(rows)} right at step 0; their log: {logged}")
    ok &= worst <= 1
    print(f"largest difference from their log: {worst} sequences ({'replay matches' if ok else 'REPLAY DIFFERS'})")
    return 0 if ok else 1


def out_folder(init: str, data: str) -> Path:
    """The run folder of a replay: their whole seed, or one half of it swapped for mechinit's seed 0."""
    if (init, data) == ("authors", "authors"):
        return OUT
    return HERE / "paper-width" / f"g0.8-{'their' if init == 'authors' else 'our'}-init-{'their' if data == 'authors' else 'our'}-data"


def train(threads: int = 1, init: str = "authors", data: str = "authors", steps: int = 8880) -> int:
    """Train mechinit's `paper-code` model at γ 0.8 from their initial weights (``init="authors"``) or
    mechinit's seed-0 draws (``"mechinit"``), on their data in their batch order (``data="authors"``)
    or on mechinit's seed-0 data and order (``"mechinit"``). Both "authors" is the replay of their run;
    one swapped half asks which half of their seed decides their slow, inferential path. A run with a
    resume point continues from it (``threads`` and ``steps`` are then its own); a folder without one
    starts again."""
    import shutil

    from mechinit import runs
    from mechinit.schedule import make_plan
    from mechinit.tasks import make_task
    from mechinit.train import Replay, SoloStepper
    from mechinit.train import train as train_run

    out = out_folder(init, data)
    if (out / runs.WEIGHTS).is_file():
        raise runs.RunFolderError(f"{out} is finished ({runs.WEIGHTS}); move it away to train it again")
    resume = (out / "resume" / "state.json").is_file()
    if resume and not (out / "resume" / "state.safetensors").is_file():  # its 32 MB weights are committed apart
        raise runs.RunFolderError(f"{out}: resume/state.safetensors is missing; restore it first (docs/cpu-regime/pending.txt)")
    if resume:
        cfg = runs.load_run_config(out)
    else:
        shutil.rmtree(out, ignore_errors=True)  # stopped before its first resume point
        cfg = paper_code_config(steps, seed=SEED if (init, data) == ("authors", "authors") else 0, threads=threads)
    print(f"{'resuming' if resume else 'starting'} {out.name}: initial weights {init}, data and order {data}, to step {cfg.train.steps}",
          flush=True)
    task = make_task(cfg)
    plan = make_plan(cfg.train, task.n_train, task.eval_sequences)
    weights, shuffles = authors_init_and_shuffles(-(-plan.total_steps // plan.steps_per_epoch))
    stepper = None
    if data == "authors":
        everything = authors_data()
        trained = torch.from_numpy(np.concatenate([everything[g] for g in TRAINED]))

        class ReplayStepper(SoloStepper):
            def __init__(self, *args):
                super().__init__(*args)
                self.tokens, self.targets = trained[:, :N_CTX].contiguous(), trained[:, -1].contiguous()

            def permutation(self, epoch: int) -> torch.Tensor:  # their DataLoader's shuffle of this epoch
                return torch.randperm(len(self.tokens), generator=torch.Generator().manual_seed(shuffles[epoch]))

        stepper = ReplayStepper
    whose = {"authors": "the authors' seed 1 (docs/cpu-regime/authors_seed.py)", "mechinit": "mechinit's train.seed 0"}
    note = f"initial weights: {whose[init]}; data and batch order: {whose[data]}"
    train_run(None if resume else cfg, out, resume=resume, quiet=True,
              replay=Replay(note, weights=weights if init == "authors" else None, stepper=stepper))
    return 0


if __name__ == "__main__":
    import argparse

    warnings.filterwarnings("ignore", message=".*HookedTransformer.*")
    parser = argparse.ArgumentParser(prog="authors_seed.py", description=__doc__.strip().splitlines()[0])
    parser.add_argument("command", nargs="?", default="check", choices=("check", "train"))
    parser.add_argument("--threads", type=int, default=1, help="CPU threads of a new run (recorded in its config.json)")
    parser.add_argument("--init", choices=CHOICES, default="authors", help="whose initial weights (default: the authors')")
    parser.add_argument("--data", choices=CHOICES, default="authors", help="whose data and batch order (default: the authors')")
    parser.add_argument("--steps", type=int, default=8880, help="train.steps of a new run (the lr path stays the full run's)")
    args = parser.parse_args()
    if args.command == "check":
        sys.exit(check())
    from mechinit.config import ConfigError
    from mechinit.errors import RunFolderError  # TrainingInterrupted (a resume point was saved) is one

    try:
        sys.exit(train(args.threads, args.init, args.data, args.steps))
    except (ConfigError, RunFolderError) as e:
        sys.exit(f"authors_seed: {e}")
