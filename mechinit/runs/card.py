"""The model card (``README.md``) of a run folder, in a layout a HuggingFace model repo accepts."""

from __future__ import annotations

from pathlib import Path

from mechinit.config import RunConfig
from mechinit.replay_spec import parse as parse_replay
from mechinit.runs import folder as runs


def format_value(value) -> str:
    """Numbers for tables: floats to 4 significant digits, missing as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def headline_meaning(cfg: RunConfig) -> str:
    from mechinit.tasks import registered

    return getattr(registered().get(cfg.task.name), "HEADLINE", "the task's headline metric")


def card_text(cfg: RunConfig, row: dict) -> str:
    from mechinit.tasks import vocabulary_of

    m, t = cfg.model, cfg.train
    lines = [
        "---",
        "library_name: mechinit",
        "tags: [transformer-lens, interpretability, initialization, composite-functions]",
        "---",
        f"# {cfg.task.name} · {m.norm}-LN · L{m.n_layers} · d{m.d_model} · γ={cfg.init.gamma} · seed {t.seed}",
        "",
        "A HookedTransformer trained by `mechinit train`. Configs in `config.json`, per-evaluation",
        "metrics in `metrics.jsonl`, weights in `model.safetensors` and `checkpoints/step{N}.safetensors`.",
        "",
        "| task | arch | norm | layers | d_model | γ | seed | peak lr | wd | steps | headline |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        f"| {cfg.task.name} | {m.arch} | {m.norm} | {m.n_layers} | {m.d_model} | {cfg.init.gamma} | {t.seed} "
        f"| {t.lr} | {t.weight_decay} | {row.get('step')} | {format_value(row.get('headline'))} |",
        "",
        f"Headline: {headline_meaning(cfg)}. Final verdict: {row.get('verdict')}.",
        "",
    ]
    lines += vocabulary_of(cfg.task.name).card_lines(row)
    lines += [seed_line(t), "",
              "Reproduce: `mechinit train --config config.json --out runs/NAME` (run from this folder; the config holds every field).", ""]
    lines += ["Reproducibility: training again from `config.json` gives these weights bit for bit on the same",
              "CPU kernel set and thread count (`provenance.cpu_capability`, `provenance.threads`) or the same GPU;",
              "on another kernel set the float results drift apart and only verdicts that hold on both count.", ""]
    return "\n".join(lines)


def seed_line(t) -> str:
    """Where the initial weights and the data order came from: mechinit's seeds, or the replayed run's draws."""
    spec = parse_replay(t.replay) if t.replay else None
    weights = (f"the {spec.source}' seed {spec.seed}" if spec and spec.init else f"seed {t.weights_seed}")
    order = (f"the {spec.source}' seed {spec.seed}" if spec and spec.data else f"seed {t.order_seed}")
    tail = f"; replay `{t.replay}` (the {spec.source}' own draws: `mechinit.training.replay`)." if spec else "."
    return f"Seeds: `train.seed` {t.seed}; initial weights from {weights}, data and batch order from {order}{tail}"


def write_card(run_dir: Path, cfg: RunConfig, row: dict) -> None:
    runs.atomic_write_bytes(Path(run_dir) / runs.CARD, card_text(cfg, row).encode())
