"""Named starting configs. Precedence when building a run: preset, then config file, then ``--set``.

* ``paper`` — App A: 1 head, d_model 400, d_mlp 1200, d_head 200, vocab 201, 900k sequences, batch
  2048, AdamW peak 2.5e-4 (1e-5 × 25), 10 warm-up epochs, cosine over 200 epochs to 1e-5, wd 0.01,
  210 epochs, clip 1. A GPU job.
* ``paper-code`` — the authors' teaching code exactly (docs/paper-fidelity.md): as ``paper`` but
  759,375 sequences, key split ``x mod 9``, a trained unembedding bias, peak 2e-4 (multiplier 20),
  370 steps per epoch (3,700 warm-up, 74,000 cosine, 77,700 in all). Stop it early with
  ``train.steps`` (the schedule's epochs are explicit, so the lr path stays the same).
* ``cpu-small-init`` / ``cpu-large-init`` (formerly ``small-init`` / ``large-init``, names that still
  work with a warning; the zoo aliases ``small-init`` / ``large-init`` now name the paper-width pair) — the CPU-scale pair chosen by the regime search
  (docs/research.md): 2 post-LN layers, d_model 128, 50k sequences, 20 epochs (2–6 min on one
  core); they differ only in ``init.gamma``, whose stds match the paper's γ = 0.8 / 0.5 at
  d_model 400. At this scale large init gives the symmetric solution on (4,3) for seeds 0–2, but
  small init does not give the inferential one (it is mostly symmetric too): the paper's claim C1
  does not reproduce at CPU scale; see docs/research.md.
* ``tiny`` — a seconds-long model for tests and smoke runs.
* ``gpt2-cpu`` — the GPT-2-style block (pre-LN, GELU, biases, 4 heads) at CPU size, for the
  sequence tasks; with ``scan``, ``cogs``, ``addition`` and ``prontoqa`` presets that add the task
  and the context / vocabulary it needs (``scan`` and ``cogs`` still need ``task.data_dir``).
* ``reasoning-memory`` and ``emb-mlp`` — the companion paper's mixed task at the CPU-scale anchor
  shape, with the transformer or with the attention-free Emb-MLP.
"""

from __future__ import annotations

from mechinit.config import ConfigError, RunConfig

_CPU_SCALE = {
    "model": {"n_layers": 2, "d_model": 128, "d_head": 64, "d_mlp": 384, "n_heads": 1, "d_vocab": 201, "norm": "post", "bias": False},
    "task": {"n_train": 50_000},
    "train": {"lr": 1e-3, "weight_decay": 0.01, "batch_size": 256, "epochs": 20, "warmup_epochs": 1.0, "lr_floor": 5e-5,
              "threads": 1},  # one thread: bit-identical runs on any CPU with the same kernel set, whatever its core count
}

PRESETS: dict[str, dict] = {
    "paper": {
        "model": {"n_layers": 2, "d_model": 400, "d_head": 200, "d_mlp": 1200, "n_heads": 1, "d_vocab": 201, "norm": "post"},
        "init": {"gamma": 0.8},
        "task": {"n_train": 900_000},
        "train": {"lr": 2.5e-4, "lr_multiplier": 25.0, "warmup_epochs": 10.0, "decay_epochs": 200.0, "lr_floor": 1e-5,
                  "weight_decay": 0.01, "batch_size": 2048, "epochs": 210, "grad_clip": 1.0, "device": "auto"},
    },
    # The authors' teaching code (xuzhiqin1990/understanding_dl, book_jupyter_composition_task):
    # 15 seen pairs x 50,625 sequences, split x mod 9, a trained unembedding bias, lr 1e-5 -> 2e-4
    # over 3,700 steps (multiplier 20), cosine to 1e-5 over 74,000 steps, 77,700 steps in all.
    "paper-code": {
        "model": {"n_layers": 2, "d_model": 400, "d_head": 200, "d_mlp": 1200, "n_heads": 1, "d_vocab": 201, "norm": "post",
                  "unembed_bias": True},
        "init": {"gamma": 0.8},
        "task": {"n_train": 759_375, "split_modulus": 9},
        "train": {"lr": 2e-4, "lr_multiplier": 20.0, "warmup_epochs": 10.0, "decay_epochs": 200.0, "lr_floor": 1e-5,
                  "weight_decay": 0.01, "batch_size": 2048, "epochs": 210, "grad_clip": 1.0, "device": "auto",
                  "eval_every": 370},
    },
    "cpu-small-init": {**_CPU_SCALE, "init": {"gamma": 1.0}},  # std 128**-1.0 = 0.0078 (paper γ=0.8 at d 400: 0.0083)
    "cpu-large-init": {**_CPU_SCALE, "init": {"gamma": 0.6}},  # std 128**-0.6 = 0.054 (paper γ=0.5 at d 400: 0.050)
    "tiny": {
        "model": {"n_layers": 2, "d_model": 32, "d_head": 16, "d_mlp": 64, "n_heads": 1, "d_vocab": 120},
        "task": {"n_train": 2048, "n_eval": 64, "n_eval_train": 32},
        "train": {"batch_size": 128, "epochs": 2, "n_snapshots": 3},
    },
}

_GPT2_CPU = {
    "model": {"n_layers": 2, "d_model": 128, "d_head": 32, "n_heads": 4, "d_mlp": 512, "norm": "pre", "act_fn": "gelu", "bias": True},
    "init": {"gamma": 0.5},
    "train": {"lr": 1e-3, "weight_decay": 0.01, "batch_size": 128, "epochs": 10, "warmup_epochs": 1.0, "lr_floor": 1e-5,
              "threads": 1, "n_snapshots": 8},
}


def _seq(task: dict, n_ctx: int, d_vocab: int, **train) -> dict:
    return {**_GPT2_CPU, "model": {**_GPT2_CPU["model"], "n_ctx": n_ctx, "d_vocab": d_vocab}, "task": task,
            "train": {**_GPT2_CPU["train"], **train}}


PRESETS.update({
    "gpt2-cpu": _seq({"name": "addition", "n_train": 20_000, "n_eval": 500}, 16, 16),
    "addition": _seq({"name": "addition", "n_train": 20_000, "n_eval": 500}, 16, 16),
    "prontoqa": _seq({"name": "prontoqa", "n_train": 10_000, "n_eval": 500, "chain_length": 3}, 48, 40),
    "scan": _seq({"name": "scan", "split": "addprim_turn_left", "n_eval": 1208, "n_eval_train": 300}, 64, 24),
    "cogs": _seq({"name": "cogs", "n_eval": 300, "n_eval_train": 300}, 256, 840, batch_size=64),
    "reasoning-memory": {**_CPU_SCALE, "init": {"gamma": 1.0}, "task": {"name": "reasoning-memory", "n_train": 50_000},
                         "train": {**_CPU_SCALE["train"], "epochs": 10}},
    "emb-mlp": {**_CPU_SCALE, "model": {**_CPU_SCALE["model"], "arch": "emb-mlp", "d_mlp": 512}, "init": {"gamma": 1.0},
                "task": {"name": "reasoning-memory", "n_train": 50_000}, "train": {**_CPU_SCALE["train"], "epochs": 10}},
})


DESCRIPTIONS: dict[str, str] = {  # one line each, for `mechinit train --help`
    "paper": "App A's text at paper scale: d_model 400, 900k sequences, 210 epochs (a GPU job)",
    "paper-code": "the authors' teaching code exactly: as paper, but 759,375 sequences, split mod 9, unembedding bias, peak 2e-4",
    "cpu-small-init": "CPU-scale pair, γ 1.0 (the paper's γ 0.8 std), 2 post-LN layers, d_model 128, 2–6 min",
    "cpu-large-init": "CPU-scale pair, γ 0.6 (the paper's γ 0.5 std), otherwise as cpu-small-init",
    "tiny": "a seconds-long model for smoke runs and tests",
    "gpt2-cpu": "GPT-2-style block (pre-LN, GELU, biases, 4 heads) at CPU size, on addition",
    "addition": "a + b = c with a held-out square (App F), gpt2-cpu shape",
    "prontoqa": "PrOntoQA-style chains, True/False query, gpt2-cpu shape",
    "scan": "SCAN add-prim split (needs task.data_dir), gpt2-cpu shape",
    "cogs": "COGS (needs task.data_dir), gpt2-cpu shape",
    "reasoning-memory": "the companion paper's mixed reasoning/memory anchors, CPU-scale transformer",
    "emb-mlp": "the reasoning-memory task on the attention-free Emb-MLP",
}


RENAMED = {"small-init": "cpu-small-init", "large-init": "cpu-large-init"}  # old preset name -> new (the zoo's
# small-init / large-init aliases name the paper-width pair; the CPU presets train the d_model-128 pair)


def preset(name: str) -> RunConfig:
    if name in RENAMED:
        import warnings

        warnings.warn(f"preset {name!r} is now {RENAMED[name]!r} (the d_model-128 CPU pair; the zoo's {name!r} is the paper-width "
                      f"model); use --preset {RENAMED[name]}", FutureWarning, stacklevel=2)
        name = RENAMED[name]
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return RunConfig.from_dict(PRESETS[name])
