"""Which (4,3) verdict will a run end with? A fixed rule read from what the run holds at or before a step.

``fate(run, at=STEP)`` reads the run's ``metrics.jsonl`` (a run folder, a zoo entry folder or a zoo
alias) up to the last evaluation at or before ``STEP`` and returns a :class:`Fate`. The rule is fixed
here and versioned (``RULE``); its held-out scores against baselines are in docs/fate.md
(``experiments/fate/score.py``). Evidence, at the read-out step: the seen-pair test accuracy, (4,3)'s
accuracy under the inferential and the symmetric map (test-split keys), and the read-out point as a
fraction of the run's planned steps (CPU runs and paper-width runs are evaluated at other steps).

The rule (version 1):

1. fitted (seen-pair accuracy ≥ 0.9) and one map of (4,3) at ≥ 0.8 with the other at ≤ 0.1:
   that map's verdict, ``p_inferential`` = the inferential accuracy;
2. fitted, past half of the planned steps, neither map there: ``other``;
3. anything else is ``uncertain``. ``p_inferential`` is then 0.5 on the *slow path* (seen-pair
   accuracy < 0.2 at ≥ 15% of the planned steps: the one finished slow-path run, the authors' seed at
   paper width, ended inferential), 0.2 for a run not yet fitted off the slow path, and for a fitted
   run inferential / (inferential + symmetric), held in [0.1, 0.9].

At the run's planned end there is nothing left to predict: ``fate`` then reports the run's own (4,3)
label (``inferential`` or ``symmetric``, else ``other``; ``p_inferential`` 1 or 0), so that a finished run's
fate and its verdict agree (the rule would call a run at inferential 0.88 ``inferential``, where the label
asks for 0.9).

The constants were set after looking at the paper-width runs' evaluations at step 1,850 (the
authors'-seed replay, γ 0.5, our γ 0.8 seeds): calls on those runs are in-sample. Held-out evidence
is the CPU pool (scored whole-run-out in docs/fate.md) and the seed-odds runs, whose calls at step
1,850 are committed before they are continued.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from mechinit import files
from mechinit.errors import ConfigError, RunFolderError

RULE = 1
PAIR = "4,3"
VERDICTS = ("inferential", "symmetric", "other", "uncertain")
FITTED, CLEAR, CLEAN, SLOW_SEEN, SLOW_FRACTION, LATE, FAST_P = 0.9, 0.8, 0.1, 0.2, 0.15, 0.5, 0.2


@dataclass(frozen=True)
class Fate:
    """A prediction of the final (4,3) verdict, with the evidence it was read from."""

    verdict: str
    p_inferential: float
    step: int
    fraction: float
    evidence: dict = field(default_factory=dict)
    rule: int = RULE

    def first_line(self) -> str:
        return f"fate: {self.verdict} p_inferential={self.p_inferential:.2f} step={self.step}"

    def lines(self) -> list[str]:
        return [self.first_line()] + [f"  {k}: {v}" for k, v in self.evidence.items()]

    def to_dict(self) -> dict:
        return asdict(self)


def predict(seen: float, inferential: float, symmetric: float, fraction: float) -> tuple[str, float, str]:
    """The rule itself: ``(verdict, p_inferential, reason)`` from the evidence at one read-out point."""
    fitted = seen >= FITTED
    if fitted and symmetric >= CLEAR and inferential <= CLEAN:
        return "symmetric", inferential, f"fitted and (4,3) symmetric ≥ {CLEAR}"
    if fitted and inferential >= CLEAR and symmetric <= CLEAN:
        return "inferential", inferential, f"fitted and (4,3) inferential ≥ {CLEAR}"
    if fitted and fraction >= LATE:
        return "other", min(inferential, 0.5), f"fitted past {LATE:.0%} of the run with (4,3) on neither map"
    if seen < SLOW_SEEN and fraction >= SLOW_FRACTION:
        return "uncertain", 0.5, (f"slow path: seen-pair accuracy < {SLOW_SEEN} at {fraction:.0%} of the run (the one finished "
                                  "slow-path run ended inferential; too few to call)")
    if not fitted:
        return "uncertain", FAST_P, (f"not yet fitted (seen-pair accuracy < {FITTED}), off the slow path: the fast-path runs at paper "
                                     "width ended `other` or are unfinished")
    share = inferential / (inferential + symmetric) if inferential + symmetric > 0 else 0.5
    return "uncertain", min(max(share, 0.1), 0.9), f"fitted before {LATE:.0%} of the run, (4,3) on neither map yet"


def observed(label: str | None) -> tuple[str, float, str]:
    """A finished run's own (4,3) label as a fate: ``inferential`` and ``symmetric`` stay, anything else is ``other``."""
    verdict = label if label in ("inferential", "symmetric") else "other"
    return verdict, 1.0 if verdict == "inferential" else 0.0, f"the run's end: its own (4,3) label ({label}), observed, not predicted"


def planned_steps(cfg) -> int:
    """The run's planned optimizer steps (its schedule's end), whatever step it was stopped at."""
    from mechinit.training.schedule import make_plan

    return make_plan(cfg.train, cfg.task.n_train).total_steps


def _folder(run: str | Path) -> Path:
    path = Path(run)
    if path.exists():
        if not path.is_dir() or not (path / files.CONFIG).is_file():
            raise RunFolderError(f"{path} is not a run folder ({files.CONFIG} not found)")
        return path
    if "/" in str(run) or str(run).startswith("."):
        raise RunFolderError(f"{run} does not exist")
    from mechinit.zoo.api import resolve

    return resolve(str(run)).path


def fate(run: str | Path, at: int | None = None) -> Fate:
    """Predict ``run``'s final (4,3) verdict from its evaluations at or before step ``at`` (default: its last)."""
    from mechinit.runs.folder import load_run_config

    folder = _folder(run)
    if at is not None and (isinstance(at, bool) or not isinstance(at, int) or at < 0):
        raise ConfigError(f"--at {at!r} must be a whole number of steps >= 0")
    cfg = load_run_config(folder)
    try:
        rows = files.read_metrics(folder, drop_cut_tail=True)
    except (ValueError, OSError) as e:
        raise RunFolderError(f"{folder / files.METRICS} cannot be read: {str(e)[:120]}") from None
    if not rows:
        raise RunFolderError(f"{folder} has no evaluations ({files.METRICS} is missing or empty)")
    if PAIR not in (rows[-1].get("pairs") or {}):
        raise RunFolderError(f"{folder}: task {cfg.task.name!r} has no ({PAIR}) pair to read a fate from")
    last = rows[-1]["step"]
    if at is not None and at > last:
        raise ConfigError(f"--at {at} is beyond the run's last evaluation (step {last})")
    row = [r for r in rows if at is None or r["step"] <= at][-1]
    total = planned_steps(cfg)
    pair = row["pairs"][PAIR]
    seen, inf, sym = row.get("seen_test_acc") or 0.0, pair.get("inferential") or 0.0, pair.get("symmetric") or 0.0
    fraction = row["step"] / total
    if row["step"] >= total:  # the run's end: its verdict is observed, not predicted
        verdict, p, reason = observed(pair.get("label"))
    else:
        verdict, p, reason = predict(seen, inf, sym, fraction)
    evidence = {"rule": f"version {RULE}: {reason}", "read at": f"step {row['step']} of {total} planned ({fraction:.1%})",
                "seen-pair test accuracy": round(seen, 4), "(4,3) inferential": round(inf, 4), "(4,3) symmetric": round(sym, 4),
                "train loss": None if row.get("train_loss") is None else round(row["train_loss"], 4),
                "(4,3) label now": pair.get("label")}
    return Fate(verdict, round(float(p), 4), int(row["step"]), round(fraction, 4), evidence)
