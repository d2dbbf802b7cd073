"""Training: AdamW with the paper's warm-up + cosine schedule, snapshots, evaluation and resume.

``train(cfg, out)`` writes a complete run folder (see :mod:`mechinit.runs`); ``train(None, out,
resume=True)`` continues a killed run from its last resume state and ends with weights
bit-identical to an uninterrupted run on the same device. Determinism: the init, the training set
and every epoch's shuffle come from seeded CPU generators, and
``torch.use_deterministic_algorithms(True)`` is on while training.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

from mechinit.config import ConfigError, RunConfig
from mechinit.errors import TrainingDiverged  # noqa: F401  (re-exported)
from mechinit.model.build import build_model, new_model
from mechinit.model.fastpath import model_logits
from mechinit.runs import folder as runs
from mechinit.runs import lifecycle
from mechinit.tasks import make_task
from mechinit.tasks.datafiles import check_same_data
from mechinit.tasks.sequence import IGNORE
from mechinit.training import resume as resume_point
from mechinit.training.budget import check_fits
from mechinit.training.guards import TrainingInterrupted, deterministic, stop_on_signals  # noqa: F401  (TrainingInterrupted re-exported)
from mechinit.training.loop import Start, run_loop
from mechinit.training.replay import Replay
from mechinit.training.replay import from_config as replay_from_config
from mechinit.training.schedule import lr_at, make_plan, weight_decay_at

DATA_SEED_OFFSET = 1_000_003
SHUFFLE_SEED_OFFSET = 2_000_003


def epoch_permutation(seed: int, epoch: int, n: int) -> torch.Tensor:
    """The order in which a run with ``seed`` visits its ``n`` training sequences in ``epoch``."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed * SHUFFLE_SEED_OFFSET + epoch))


def resolve_device(name: str) -> str:
    """The device a run trains on (``auto``: CUDA where there is one, else the CPU)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device = 'cuda' but no CUDA device is available; choose cpu or auto")
    return name


def bf16_autocast(device: str, bf16: bool) -> torch.autocast:
    """The forward's autocast: bf16 matmuls on ``device`` (CPU or CUDA) when ``train.bf16``, else off.
    On a CPU without bf16 instructions (``avx512_bf16``, AMX) it is slower than float32."""
    return torch.autocast(device, dtype=torch.bfloat16, enabled=bf16)


def _optimizer(model, cfg: RunConfig) -> torch.optim.AdamW:
    params = [p for p in model.parameters() if p.requires_grad]
    t = cfg.train
    return torch.optim.AdamW(params, lr=t.lr, betas=(t.beta1, t.beta2), eps=t.eps, weight_decay=t.weight_decay)








def log_eval(out: Path, task, cfg: RunConfig, plan, logits_fn, device: str, step: int, elapsed: float,
             train_loss: float | None, samples_per_s: float | None) -> dict:
    """Evaluate the model behind ``logits_fn`` and append the metrics row to ``metrics.jsonl``."""
    metrics = task.evaluate(logits_fn, device)
    if hasattr(task, "with_max_over_training"):
        metrics = task.with_max_over_training(metrics, runs.read_metrics(out) if (out / runs.METRICS).is_file() else [])
    row = {"step": step, "epoch": step / plan.steps_per_epoch, "lr": lr_at(step, cfg.train, plan),
           "train_loss": train_loss, "samples_per_s": samples_per_s, "elapsed_s": elapsed, **metrics,
           "verdict": task.verdict(metrics)}
    runs.append_metrics(out, row)
    return row


def trim_padding(tokens: torch.Tensor, targets: torch.Tensor, positions: str) -> tuple[torch.Tensor, torch.Tensor]:
    """For per-position targets, cut the batch after its last position with a target: a causal
    model's logits before it do not depend on the cut tokens, so the loss is the same, cheaper."""
    if positions != "all":
        return tokens, targets
    last = int((targets != IGNORE).any(0).nonzero().max()) + 1
    return tokens[:, :last], targets[:, :last]




def load_initial_weights(model, weights: dict[str, torch.Tensor]) -> None:
    """Copy ``weights`` (a subset of the model's parameters, by TransformerLens name) into ``model``."""
    params = dict(model.named_parameters())
    unknown = sorted(set(weights) - set(params))
    if unknown:
        raise ConfigError(f"replayed weights {unknown[:3]} are not parameters of this model")
    with torch.no_grad():
        for name, value in weights.items():
            if params[name].shape != value.shape:
                raise ConfigError(f"replayed weight {name} has shape {tuple(value.shape)}; the model's is {tuple(params[name].shape)}")
            params[name].copy_(value)


def train(cfg: RunConfig | None, out: Path, *, resume: bool = False, quiet: bool = False, replay: Replay | None = None,
          threads: int | None = None, stop_at: int | None = None) -> dict:
    """Train (or resume) a run in ``out`` and return its final metrics row.

    ``resume=True`` continues from ``out``'s resume point; a run folder that has a ``config.json``
    but no resume point yet (stopped before its first one) is started again from step 0 with that
    config. SIGINT/SIGTERM save a resume point at the current step and raise
    :class:`~mechinit.training.guards.TrainingInterrupted`. Torch's global settings are restored afterwards.
    ``replay`` starts from, or trains on, another code's draws (:class:`Replay`). ``threads`` (resume
    only) runs the rest of the run on that many CPU threads instead of ``train.threads``; each resume's
    thread count is recorded in ``provenance.resumed``. ``stop_at`` ends the run at that step with a
    resume point (the schedule stays the full run's) and returns the last evaluation's row; the folder
    then has no ``model.safetensors`` until a resume finishes it."""
    out = Path(out)
    if threads is not None and (not resume or threads < 1):
        raise ConfigError(f"threads = {threads}: a thread count (at least 1) is given only to a resume; "
                          "a new run takes train.threads from its config")
    if resume:
        if not (out / runs.CONFIG).is_file():
            raise runs.RunFolderError(f"{out} is not a run folder ({runs.CONFIG} not found); it cannot be resumed")
        cfg = runs.load_run_config(out)
        if (out / runs.WEIGHTS).is_file():
            raise runs.RunFolderError(f"{out} is a finished run; there is nothing to resume")
        replayed = runs.read_json(out / runs.CONFIG).get("provenance", {}).get("replayed")
        if (replayed is None) != (replay is None and cfg.train.replay is None):
            raise runs.RunFolderError(f"{out} replays another code's draws ({replayed}); resume it with the command that started it"
                                      if replayed is not None else f"{out} is not a replay; resume it without one")
        if not resume_point.has_point(out):  # killed before its first resume point: start again
            with resume_point.lock(out):  # never under the feet of a live trainer
                lifecycle.clear_for_restart(out)
            resume = False
    else:
        check_fits(cfg)
        if cfg.train.replay is not None:
            from mechinit.training.replay import check_config

            check_config(cfg)
        lifecycle.check_out(out)
    if stop_at is not None:
        check_stop_at(cfg, stop_at, out if resume else None)
    device = resolve_device(cfg.train.device)
    with deterministic(device, threads or cfg.train.threads, cfg.train.tf32), stop_on_signals() as stop, contextlib.ExitStack() as held:
        if resume:
            held.enter_context(resume_point.lock(out))  # a second `--resume` of this folder gets one line
        return _train(cfg, out, device, resume, quiet, stop, held, replay, stop_at)




def check_stop_at(cfg: RunConfig, stop_at: int, resumed: Path | None) -> None:
    """``stop_at`` must lie after the run's resume point (if any) and before its planned end."""
    task = make_task(cfg)
    total = make_plan(cfg.train, task.n_train, getattr(task, "eval_sequences", None)).total_steps
    at = resume_point.step_of(resumed) if resumed is not None and resume_point.has_point(resumed) else 0
    if isinstance(stop_at, bool) or not isinstance(stop_at, int) or not at < stop_at < total:
        raise ConfigError(f"--stop-at {stop_at!r} must be an integer step after {at} (where the run starts) and before {total} "
                          "(its planned end)")


def _train(cfg: RunConfig, out: Path, device: str, resume: bool, quiet: bool, stop, held: contextlib.ExitStack,
           replay: Replay | None, stop_at: int | None) -> dict:
    task = make_task(cfg)
    plan = make_plan(cfg.train, task.n_train, getattr(task, "eval_sequences", None))
    if replay is None and cfg.train.replay is not None:
        replay = replay_from_config(cfg, -(-plan.total_steps // plan.steps_per_epoch))

    if resume:
        check_same_data(task, out)  # the data files it started on, unchanged
        model = build_model(cfg.model, device)
        opt = _optimizer(model, cfg)
        step, elapsed, loss_sum, n_loss = resume_point.load(out, model, opt, cfg)
        lifecycle.record_resume(out, step)
        runs.write_metrics(out, [r for r in runs.read_metrics(out, drop_cut_tail=True) if r["step"] <= step])
    else:
        model, table = new_model(cfg.model, cfg.init, cfg.train.weights_seed, device)
        if replay is not None and replay.weights is not None:
            load_initial_weights(model, replay.weights)
        opt = _optimizer(model, cfg)
        lifecycle.create(out, cfg, table, task=task, replayed=None if replay is None else replay.note)
        held.enter_context(resume_point.lock(out))
        runs.save_weights(runs.snapshot_path(out, 0), model)
        step, elapsed, loss_sum, n_loss = 0, 0.0, 0.0, 0

    stepper = SoloStepper(cfg, out, device, task, plan, model, opt, replay)
    rows = stepper.evaluate(0, 0.0, None, None) if step == 0 else [runs.read_metrics(out)[-1]]
    hint = (f"continue with: mechinit train --resume {out}" if replay is None or cfg.train.replay is not None
            else "continue with the same replay command and --resume")
    rows = run_loop(stepper, plan, cfg.train.batch_size, Start(step, elapsed, [loss_sum], n_loss), rows, quiet=quiet, stop=stop,
                    resume_every=cfg.train.resume_every, resume_hint=hint, stop_at=stop_at)
    if stop_at is None:  # check_stop_at keeps a given stop before the plan's end
        lifecycle.finish(out, model, cfg, rows[0])
    return rows[0]


class SoloStepper:
    """One model's training step (a :class:`mechinit.training.loop.Stepper` with one member)."""

    members = 1

    def __init__(self, cfg: RunConfig, out: Path, device: str, task, plan, model, opt, replay: Replay | None = None):
        self.cfg, self.out, self.device, self.task, self.plan, self.model, self.opt = cfg, out, device, task, plan, model, opt
        self.replay = replay
        if replay is not None and replay.data is not None:
            tokens, targets = replay.data
        else:
            tokens, targets = task.train_set(cfg.train.order_seed + DATA_SEED_OFFSET)
        self.tokens, self.targets = tokens.to(device), targets.to(device)
        self.autocast = bf16_autocast(device, cfg.train.bf16)
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.logits_fn = model_logits(model, self.autocast, task.target_positions)
        self.perm, self.perm_epoch = None, None

    def forward(self, step: int) -> torch.Tensor:
        t = self.cfg.train
        epoch, i = divmod(step, self.plan.steps_per_epoch)
        if self.perm_epoch != epoch:
            self.perm, self.perm_epoch = self.permutation(epoch).to(self.device), epoch
        idx = self.perm[i * t.batch_size : (i + 1) * t.batch_size]
        lr, wd = lr_at(step, t, self.plan), weight_decay_at(step, t, self.plan)
        for group in self.opt.param_groups:
            group["lr"], group["weight_decay"] = lr, wd
        batch_tokens, batch_targets = trim_padding(self.tokens[idx], self.targets[idx], self.task.target_positions)
        with self.autocast:
            logits = self.logits_fn(batch_tokens).float()
        return torch.nn.functional.cross_entropy(logits.flatten(0, -2), batch_targets.flatten(), ignore_index=IGNORE).view(1)

    def permutation(self, epoch: int) -> torch.Tensor:
        """The order of the training sequences in ``epoch``."""
        if self.replay is not None and self.replay.permutation is not None:
            return self.replay.permutation(epoch, len(self.tokens))
        return epoch_permutation(self.cfg.train.order_seed, epoch, self.task.n_train)

    def diverged(self, step: int, values: list[float]) -> None:
        good = lifecycle.last_good_snapshot(self.out, step)
        where = f"step{good} in {self.out / runs.SNAPSHOTS}" if good is not None else "none (every snapshot has non-finite weights)"
        raise TrainingDiverged(f"loss became {values[0]} at step {step}; stopped. Last good snapshot: {where}")

    def update(self, step: int, losses: torch.Tensor) -> None:
        self.opt.zero_grad(set_to_none=True)
        losses.sum().backward()
        if self.cfg.train.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(self.params, self.cfg.train.grad_clip)
        self.opt.step()

    def snapshot(self, step: int) -> None:
        runs.save_weights(runs.snapshot_path(self.out, step), self.model)

    def evaluate(self, step: int, elapsed: float, train_losses: list[float] | None, samples_per_s: float | None) -> list[dict]:
        self.model.train(False)
        row = log_eval(self.out, self.task, self.cfg, self.plan, self.logits_fn, self.device, step, elapsed,
                       None if train_losses is None else train_losses[0], samples_per_s)
        self.model.train()
        return [row]

    def save_resume(self, step: int, elapsed: float, loss_sums: list[float], n_loss: int) -> None:
        resume_point.save(self.out, self.model, self.opt, self.cfg, step, elapsed, loss_sums[0], n_loss)
