"""`paper-code` trains by the authors' recipe: a run of mechinit equals, step for step, a plain
PyTorch re-statement of what the teaching code does (written here from its description in
docs/paper-fidelity.md, not from its source), started from the same initial weights on the same batches. (It found that a run stopped inside its warm-up
compressed the warm-up into its own length; fixed in mechinit.training.schedule.make_plan.)

The recipe under test: post-LN blocks (eq. 6) with one head, no biases but a trained unembedding
bias, cross-entropy at the last position, AdamW (torch defaults for betas and eps) with weight decay
on *every* parameter, gradient clipping of the global norm, and the learning rate warmed up linearly
from ``lr / multiplier`` over ten epochs and set before each step. Weight decay, lr and clipping are
exaggerated here so that each part moves the weights far beyond float noise; each wrong variant of
the recipe must miss, so the test can fail on a departure from any part.
"""

import math

import pytest
import torch
import torch.nn.functional as F

from mechinit import runs
from mechinit.presets import preset
from mechinit.tasks import make_task
from mechinit.training.trainer import DATA_SEED_OFFSET, epoch_permutation, train

STEPS = 6
CFG = preset("paper-code").with_overrides({
    "model.d_model": 32, "model.d_head": 16, "model.d_mlp": 48, "init.gamma": 0.5,
    "task.n_train": 2048, "task.n_eval": 16, "task.n_eval_train": 8,
    "train.batch_size": 256, "train.steps": STEPS, "train.eval_every": STEPS, "train.device": "cpu", "train.threads": 1,
    "train.lr": 1e-2, "train.weight_decay": 0.5, "train.grad_clip": 0.05, "train.seed": 3,
})


class Reference(torch.nn.Module):
    """The authors' architecture as plain tensors: [d_in, d_out] matrices, x @ W."""

    def __init__(self, w: dict[str, torch.Tensor], n_layers: int):
        super().__init__()
        p = lambda t: torch.nn.Parameter(t.detach().clone())  # noqa: E731
        self.emb, self.pos = p(w["embed.W_E"]), p(w["pos_embed.W_pos"])
        self.layers = torch.nn.ModuleList()
        for l in range(n_layers):
            b = f"blocks.{l}."
            layer = torch.nn.ParameterDict({
                "q": p(w[b + "attn.W_Q"][0]), "k": p(w[b + "attn.W_K"][0]), "v": p(w[b + "attn.W_V"][0]),
                "o": p(w[b + "attn.W_O"][0]), "ln1_w": p(w[b + "ln1.w"]), "ln1_b": p(w[b + "ln1.b"]),
                "fc1": p(w[b + "mlp.W_in"]), "fc2": p(w[b + "mlp.W_out"]), "ln2_w": p(w[b + "ln2.w"]), "ln2_b": p(w[b + "ln2.b"]),
            })
            self.layers.append(layer)
        self.proj, self.proj_bias = p(w["unembed.W_U"]), p(w["unembed.b_U"])

    def forward(self, tokens: torch.Tensor, last_only: bool = True) -> torch.Tensor:
        n = tokens.shape[1]
        x = self.emb[tokens] + self.pos[:n]
        future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        for layer in self.layers:
            q, k, v = x @ layer["q"], x @ layer["k"], x @ layer["v"]
            scores = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(future, -1e9)
            x = F.layer_norm(x + scores.softmax(-1) @ v @ layer["o"], x.shape[-1:], layer["ln1_w"], layer["ln1_b"], 1e-5)
            x = F.layer_norm(x + F.relu(x @ layer["fc1"]) @ layer["fc2"], x.shape[-1:], layer["ln2_w"], layer["ln2_b"], 1e-5)
        logits = x @ self.proj + self.proj_bias
        return logits[:, -1] if last_only else logits

    def weights(self) -> dict[str, torch.Tensor]:
        out = {"embed.W_E": self.emb, "pos_embed.W_pos": self.pos, "unembed.W_U": self.proj, "unembed.b_U": self.proj_bias}
        for l, layer in enumerate(self.layers):
            b = f"blocks.{l}."
            out.update({b + "attn.W_Q": layer["q"][None], b + "attn.W_K": layer["k"][None], b + "attn.W_V": layer["v"][None],
                        b + "attn.W_O": layer["o"][None], b + "ln1.w": layer["ln1_w"], b + "ln1.b": layer["ln1_b"],
                        b + "mlp.W_in": layer["fc1"], b + "mlp.W_out": layer["fc2"], b + "ln2.w": layer["ln2_w"], b + "ln2.b": layer["ln2_b"]})
        return {k: v.detach() for k, v in out.items()}


def reference_run(init: dict[str, torch.Tensor], *, clip: bool = True, decay_all: bool = True, warmup: bool = True,
                  all_positions: bool = False) -> tuple[dict[str, torch.Tensor], list[float]]:
    """The recipe (or one of its wrong variants) from ``init`` on mechinit's batches."""
    t = CFG.train
    model = Reference(init, CFG.model.n_layers)
    embeddings_and_norms = [p for n, p in model.named_parameters() if n in ("emb", "pos") or "ln" in n]
    others = [p for n, p in model.named_parameters() if not (n in ("emb", "pos") or "ln" in n)]
    groups = [{"params": others}, {"params": embeddings_and_norms, "weight_decay": t.weight_decay if decay_all else 0.0}]
    opt = torch.optim.AdamW(groups, lr=t.lr, weight_decay=t.weight_decay)
    tokens, targets = make_task(CFG).train_set(t.seed + DATA_SEED_OFFSET)
    order = epoch_permutation(t.seed, 0, len(tokens))
    warmup_steps = t.warmup_epochs * (CFG.task.n_train // t.batch_size)
    losses = []
    for step in range(STEPS):
        lr = t.lr / t.lr_multiplier * ((t.lr_multiplier - 1) * step / warmup_steps + 1) if warmup else t.lr
        for group in opt.param_groups:
            group["lr"] = lr
        idx = order[step * t.batch_size : (step + 1) * t.batch_size]
        if all_positions:  # a wrong variant: every position trained towards the target
            logits = model(tokens[idx], last_only=False)
            loss = F.cross_entropy(logits.flatten(0, 1), targets[idx].repeat_interleave(tokens.shape[1]))
        else:
            loss = F.cross_entropy(model(tokens[idx]), targets[idx])
        opt.zero_grad()
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), t.grad_clip)
        opt.step()
        losses.append(loss.item())
    return model.weights(), losses


@pytest.fixture(scope="module")
def mechinit_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper-code") / "run"
    train(CFG, out, quiet=True)
    return (runs.read_tensors(runs.snapshot_path(out, 0)), runs.read_tensors(out / runs.WEIGHTS),
            runs.read_metrics(out)[-1]["train_loss"])


def _max_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    return max((a[k] - b[k]).abs().max().item() for k in a)


def test_a_paper_code_run_is_the_authors_recipe_step_for_step(mechinit_run):
    init, final, mean_loss = mechinit_run
    weights, losses = reference_run(init)
    assert _max_diff(weights, init) > 3e-3  # six steps moved the weights far beyond the tolerance below
    assert _max_diff(weights, final) < 1e-5  # measured 1.8e-7 (AVX-512)
    assert sum(losses) / len(losses) == pytest.approx(mean_loss, rel=1e-5)


@pytest.mark.parametrize("wrong", [{"clip": False}, {"decay_all": False}, {"warmup": False}, {"all_positions": True}],
                         ids=["no-clipping", "no-decay-on-embeddings-and-norms", "no-warm-up", "loss-at-every-position"])
def test_each_wrong_variant_of_the_recipe_misses(mechinit_run, wrong):
    init, final, _ = mechinit_run
    weights, _ = reference_run(init, **wrong)
    assert _max_diff(weights, final) > 1e-4  # measured 3.1e-4 (no clipping: Adam is nearly blind to a gradient's scale) to 7e-2
