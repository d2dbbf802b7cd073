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
       python docs/cpu-regime/authors_seed.py train [--resume] [--threads N]   # to step 8,880 (default one thread), resumable
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


def paper_code_config(steps: int = 8880):
    from mechinit.presets import preset

    return preset("paper-code").with_overrides({
        "init.gamma": GAMMA, "train.seed": SEED, "train.device": "cpu", "train.threads": 1, "train.steps": steps,
        "train.resume_every": 37, "train.snapshot_steps": (1110, 2220, 3330, 4440, 5550, 6660, 7770)})


def load_weights(model, weights: dict[str, torch.Tensor]) -> None:
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in weights.items():
            if params[name].shape != value.shape:
                raise ValueError(f"{name}: replayed {tuple(value.shape)}, model {tuple(params[name].shape)}")
            params[name].copy_(value)


def check() -> int:
    """Print both fingerprints; exit status 1 if the data rows differ or any step-0 accuracy does."""
    from mechinit.model import new_model

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
    load_weights(model, weights)
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


def train(resume: bool, threads: int = 1) -> int:
    """Train mechinit's `paper-code` model from their initial weights on their data in their batch order."""
    from mechinit import runs
    from mechinit import resume as resume_point
    from mechinit.loop import Start, run_loop
    from mechinit.model import build_model, new_model
    from mechinit.schedule import make_plan
    from mechinit.tasks import make_task
    from mechinit.train import SoloStepper, _optimizer, finish_run, prepare_out

    torch.set_num_threads(threads)
    cfg = paper_code_config()
    task = make_task(cfg)
    plan = make_plan(cfg.train, task.n_train, task.eval_sequences)
    data = authors_data()
    weights, shuffles = authors_init_and_shuffles(-(-plan.total_steps // plan.steps_per_epoch))
    trained = torch.from_numpy(np.concatenate([data[g] for g in TRAINED]))

    class ReplayStepper(SoloStepper):
        def __init__(self, *args):
            super().__init__(*args)
            self.tokens, self.targets = trained[:, :N_CTX].contiguous(), trained[:, -1].contiguous()

        def permutation(self, epoch: int) -> torch.Tensor:  # their DataLoader's shuffle of this epoch
            return torch.randperm(len(self.tokens), generator=torch.Generator().manual_seed(shuffles[epoch]))

    if resume:
        model = build_model(cfg.model, "cpu")
        opt = _optimizer(model, cfg)
        step, elapsed, loss_sum, n_loss = resume_point.load(OUT, model, opt, cfg)
        runs.write_metrics(OUT, [r for r in runs.read_metrics(OUT, drop_cut_tail=True) if r["step"] <= step])
    else:
        model, table = new_model(cfg.model, cfg.init, 0)
        load_weights(model, weights)
        opt = _optimizer(model, cfg)
        prepare_out(OUT, cfg, table, task=task)  # the table is the γ rule their init applies; the draws are theirs, not train.seed's
        (OUT / "REPLAY.md").write_text("Initial weights, data and batch order replayed from the authors' seed 1 by "
                                       "docs/cpu-regime/authors_seed.py; config.json's train.seed names theirs, not mechinit's draws.\n")
        runs.save_weights(runs.snapshot_path(OUT, 0), model)
        step, elapsed, loss_sum, n_loss = 0, 0.0, 0.0, 0
    stepper = ReplayStepper(cfg, OUT, "cpu", task, plan, model, opt)
    rows = stepper.evaluate(0, 0.0, None, None) if step == 0 else [runs.read_metrics(OUT)[-1]]
    from mechinit.guards import stop_on_signals

    with stop_on_signals() as stop:
        rows = run_loop(stepper, plan, cfg.train.batch_size, Start(step, elapsed, [loss_sum], n_loss), rows, quiet=True, stop=stop,
                        resume_every=cfg.train.resume_every, resume_hint="continue with: python docs/cpu-regime/authors_seed.py train --resume")
    finish_run(OUT, model, cfg, rows[0])
    return 0


if __name__ == "__main__":
    warnings.filterwarnings("ignore", message=".*HookedTransformer.*")
    command = sys.argv[1:2] or ["check"]
    if command == ["check"]:
        sys.exit(check())
    if command == ["train"]:
        from mechinit.errors import TrainingInterrupted

        threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
        try:
            sys.exit(train(resume="--resume" in sys.argv, threads=threads))
        except TrainingInterrupted as e:
            sys.exit(f"authors_seed: stopped: {e}")
    sys.exit(__doc__.strip().splitlines()[-2].strip())
