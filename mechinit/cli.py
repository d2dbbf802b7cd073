"""The ``mechinit`` command line: parse arguments, call the library, print. No logic of its own."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line, exit 2
        print(f"mechinit: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def _preset_help() -> str:
    from mechinit.presets import DESCRIPTIONS, PRESETS  # plain dicts: no torch

    return "presets:\n" + "\n".join(f"  {name:<17} {DESCRIPTIONS.get(name, '')}" for name in PRESETS)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mechinit", description="Initialisation scale vs reasoning/memorising in transformers.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    t = sub.add_parser("train", help="train a γ-initialised HookedTransformer and write a run folder",
                       epilog=_preset_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--preset", help="starting config (listed below)")
    t.add_argument("--config", type=Path, help="JSON or TOML file with model/init/task/train sections")
    t.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="dotted key, e.g. train.lr=3e-4")
    t.add_argument("--out", type=Path, help="run folder to create (default: runs/<id>)")
    t.add_argument("--device", choices=("cpu", "cuda", "auto"), help="shorthand for --set train.device=...")
    t.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue a run from its last resume state")
    t.add_argument("--threads", type=int, metavar="N", help="CPU threads: shorthand for --set train.threads=N; with --resume, the "
                   "threads for the rest of the run (recorded in config.json's provenance.resumed; float results then "
                   "differ from an uninterrupted run's)")
    t.add_argument("--replay", metavar="SOURCE:SEED[:PART]", help="re-draw another code's run: authors:SEED (the authors' initial "
                   "weights, data and batch order), authors:SEED:init or authors:SEED:data (one side; the other from "
                   "train.init_seed / train.data_seed); shorthand for --set train.replay=...; needs --preset paper-code")
    t.add_argument("--stop-at", type=_step, metavar="STEP", help="stop at this step with a resume point and exit 0 (the "
                   "schedule stays the full run's); continue with --resume")
    t.add_argument("--quiet", action="store_true", help="no progress bar")
    t.add_argument("--publish", action="store_true", help="publish the finished run to the zoo (see --zoo)")
    t.add_argument("--zoo", type=Path, help="zoo folder for --publish (default: $MECHINIT_ZOO or ~/.cache/mechinit/zoo)")

    pa = sub.add_parser("paper", help="check the paper's claims C1-C10 from the zoo and experiments/: claims.json + paper.html")
    pa.add_argument("--out", type=Path, default=Path("paper-claims"), help="output folder (default: paper-claims)")
    pa.add_argument("--zoo", type=Path, help="zoo folder searched first for the pair")
    pa.add_argument("--root", type=Path, default=Path("."), help="the checkout whose experiments/ hold the results (default: .)")

    f = sub.add_parser("fate", help="predict a run's final verdict on its held-out pair from what it holds at or before a step")
    f.add_argument("run", help="run folder, zoo entry folder or zoo alias")
    f.add_argument("--at", type=_step, metavar="STEP", help="read the last evaluation at or before this step (default: the last)")

    pr = sub.add_parser("probe", help="run probes on run folders, checkpoints or zoo ids; write results.json and report.html")
    pr.add_argument("targets", nargs="+", metavar="TARGET", help="run folder, .safetensors checkpoint or zoo id (two: side by side)")
    pr.add_argument("--probe", dest="probes", action="append", default=[], metavar="NAME", help="probe to run (default: all that apply to the task)")
    pr.add_argument("--out", type=Path, help="output folder (default: probes-out/<targets>)")
    pr.add_argument("--set", dest="sets", action="append", default=[], metavar="PROBE.KEY=VALUE", help="e.g. condensation.threshold=0.8")
    pr.add_argument("--zoo", type=Path, help="zoo folder searched first for ids")
    pr.add_argument("--quiet", action="store_true", help="no progress bar")

    sw = sub.add_parser("sweep", help="train a grid of runs and reduce them into a phase diagram")
    sw.add_argument("--preset", help="base config")
    sw.add_argument("--config", type=Path, help="base config file")
    sw.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="base key (train.epochs=5) or grid key with values (sweep.init.gamma=0.5,0.8)")
    sw.add_argument("--grid", type=Path, help="JSON file {grid: {key: [values]}, best_over: [...], mean_over: [...]}")
    sw.add_argument("--best-over", action="append", default=None, metavar="KEY", help="cells take the best run over this key (e.g. train.lr)")
    sw.add_argument("--mean-over", action="append", default=None, metavar="KEY", help="cells average over this key (default train.seed)")
    sw.add_argument("--out", type=Path, default=Path("sweeps/sweep"), help="sweep folder (runs/, sweep.json, report.html)")
    sw.add_argument("--jobs", type=int, default=1, help="runs trained at once (processes, or the Slurm array parallelism)")
    sw.add_argument("--executor", choices=("local", "slurm", "submitit-local"), default="local")
    sw.add_argument("--slurm", action="append", default=[], metavar="KEY=VALUE", help="submitit parameter, e.g. slurm_partition=gpu")
    sw.add_argument("--ensemble", choices=("auto", "off"), default="auto",
                    help="auto: runs of one shape train together as ensembles (torch.func-free stacked models); off: one by one")
    sw.add_argument("--ensemble-size", type=int, default=8, help="most runs in one ensemble (auto mode)")
    sw.add_argument("--reduce-only", action="store_true",
                    help="train nothing: reduce the runs finished so far into sweep.json and report.html (a partial phase diagram)")
    sw.add_argument("--quiet", action="store_true")

    z = sub.add_parser("zoo", help="list, show, publish and verify zoo entries")
    zsub = z.add_subparsers(dest="zoo_command", required=True, parser_class=_Parser)
    zl = zsub.add_parser("list", help="a table of entries")
    zl.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE", help="filter, e.g. gamma=0.8")
    zl.add_argument("--wide", action="store_true", help="every column (default: the ones that fit 100 characters)")
    zs = zsub.add_parser("show", help="an entry's configs, metrics and provenance")
    zs.add_argument("id")
    zp = zsub.add_parser("publish", help="publish a finished run folder")
    zp.add_argument("run_dir", type=Path)
    zp.add_argument("--id", help="entry id (default: derived from the config)")
    zp.add_argument("--alias", action="append", default=[], help="short name pointing at the id")
    zp.add_argument("--snapshot-dtype", choices=("float32", "float16"), default="float32")
    which = zp.add_mutually_exclusive_group()
    which.add_argument("--no-snapshots", action="store_true", help="publish the final weights without training snapshots")
    which.add_argument("--snapshot-steps", type=_steps, metavar="N,N,...", help="publish only the snapshots at these steps")
    zp.add_argument("--dtype", choices=("float32", "float16"), default="float32",
                    help="dtype of the final weights (float16: the float32 held-out accuracies are recorded beside them)")
    zp.add_argument("--description", help="a paragraph for the model card: what this model is")
    za = zsub.add_parser("alias", help="point an alias at an entry (moving it if it pointed elsewhere)")
    za.add_argument("alias")
    za.add_argument("id")
    zv = zsub.add_parser("verify", help="check sha256 of every file of one or all entries")
    zv.add_argument("id", nargs="?")
    for zp_ in (zl, zs, zp, za, zv):
        zp_.add_argument("--zoo", type=Path, help="zoo folder (searched first; publish target)")
    return p


def _summary(row: dict, task_name: str) -> list[str]:
    """What ``train`` prints at the end: the numbers every task has, then the task's own (its vocabulary)."""
    from mechinit.tasks import vocabulary_of

    vocab = vocabulary_of(task_name)
    keys = ("step", "train_loss", "headline", *vocab.summary_keys, "verdict")
    return [f"{key:>15}: {row.get(key)}" for key in keys] + vocab.summary_lines(row)


def _train(args) -> int:
    from mechinit.config import ConfigError

    _check_folder(args.zoo, "--zoo")  # before hours of training, not after
    if args.publish and args.stop_at is not None:
        raise ConfigError("--publish needs a finished run, and --stop-at stops it before its end; publish after the --resume that finishes it")
    from mechinit.resolve import resolve_config
    from mechinit.runs.ids import run_id
    from mechinit.training.trainer import train

    if args.resume is not None:
        if args.preset or args.config or args.sets or args.device or args.out or args.replay:
            raise ConfigError("--resume continues a run with its own config.json; drop --preset/--config/--set/--device/--out/--replay")
        out = args.resume
        row = train(None, out, resume=True, quiet=args.quiet, threads=args.threads, stop_at=args.stop_at)
    else:
        sets = list(args.sets) + ([f"train.device={args.device}"] if args.device else []) + \
            ([f"train.threads={args.threads}"] if args.threads is not None else []) + \
            ([f"train.replay={args.replay}"] if args.replay is not None else [])
        cfg = resolve_config(args.preset, args.config, sets)
        out = args.out or _default_out(run_id(cfg))
        row = train(cfg, out, quiet=args.quiet, stop_at=args.stop_at)
    print(f"run folder: {out}")
    if args.stop_at is not None and not (Path(out) / "model.safetensors").is_file():
        print(f"stopped at step {row.get('step')} (last evaluation shown below); continue with: mechinit train --resume {out}"
              if row.get("step") == args.stop_at else
              f"stopped at step {args.stop_at} with a resume point (last evaluation: step {row.get('step')}); "
              f"continue with: mechinit train --resume {out}")
    if args.publish:
        from mechinit import zoo

        print(f"published: {zoo.publish(out, zoo_dir=args.zoo)}")
    from mechinit.runs.folder import load_run_config

    print("\n".join(_summary(row, load_run_config(out).task.name)))
    return 0


def _paper(args) -> int:
    import json

    from mechinit import claims
    from mechinit.files import atomic_write_bytes

    _check_folder(args.out, "--out")
    claims.check_checkout(args.root)  # before anything is written
    args.out.mkdir(parents=True, exist_ok=True)
    result = claims.build(args.root, args.out, zoo_dir=args.zoo)
    from mechinit.claims_page import render

    atomic_write_bytes(args.out / "claims.json", (json.dumps(result, indent=1) + "\n").encode())
    atomic_write_bytes(args.out / "paper.html", render(result).encode())
    for c in result["claims"]:
        print(f"{c['id']:>4}  {c['verdict']:<15} {c['statement'][:90]}")
    print(f"claims: {args.out / 'claims.json'}\npage: {args.out / 'paper.html'}")
    return 0


def _fate(args) -> int:
    from mechinit.readout import fate

    print("\n".join(fate(args.run, args.at).lines()))
    return 0


def _step(text: str) -> int:
    """A step (``--stop-at``, ``--at``): a non-negative integer, else one line and exit 2."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a step (a whole number >= 0)")
    return int(text)


def _steps(text: str) -> tuple[int, ...]:
    """A ``--snapshot-steps`` value: whole numbers >= 0, comma-separated."""
    return tuple(_step(part.strip()) for part in text.split(","))


def _check_folder(path: Path | None, flag: str) -> None:
    """Refuse an output folder that is a file before any work is done (the file system's other
    refusals — not writable, disk full — become one line in :func:`main`)."""
    from mechinit.errors import RunFolderError

    if path is not None and path.exists() and not path.is_dir():
        raise RunFolderError(f"{flag} {path} is a file, not a folder")


def _default_out(name: str) -> Path:
    out, n = Path("runs") / name, 1
    while out.exists():
        n += 1
        out = Path("runs") / f"{name}-{n}"
    return out


def _zoo(args) -> int:
    import json

    from mechinit import zoo
    from mechinit.zoo.listing import format_table

    _check_folder(args.zoo, "--zoo")
    if args.zoo_command == "list":
        filters = dict(item.split("=", 1) for item in args.where if "=" in item)
        if len(filters) != len(args.where):
            raise zoo.ZooError("--where takes COLUMN=VALUE, e.g. gamma=0.8")
        table = zoo.list(zoo_dir=args.zoo, **filters)
        print(format_table(table, wide=args.wide) if len(table) else "no entries")
    elif args.zoo_command == "show":
        info = zoo.card(args.id, zoo_dir=args.zoo)
        print(json.dumps({k: v for k, v in info.items() if k not in ("files", "card")}, indent=2))
    elif args.zoo_command == "publish":
        print(zoo.publish(args.run_dir, id=args.id, aliases=tuple(args.alias), zoo_dir=args.zoo,
                          snapshot_dtype=args.snapshot_dtype, dtype=args.dtype,
                          snapshots=False if args.no_snapshots else (args.snapshot_steps or True),
                          description=args.description))
    elif args.zoo_command == "alias":
        before = zoo.point_alias(args.alias, args.id, zoo_dir=args.zoo)
        print(f"{args.alias}: {before} -> {args.id}" if before not in (None, args.id) else f"{args.alias}: {args.id}")
    else:
        report = zoo.verify(args.id, zoo_dir=args.zoo)
        for entry_id, status in report.items():
            print(f"{entry_id}: {status}")
        return 0 if all(s == "ok" for s in report.values()) else EXIT_FAILED
    return 0


def _probe(args) -> int:
    from mechinit import probes, zoo
    from mechinit.probes.report import write_report
    from mechinit.resolve import parse_sets

    if len(args.targets) > 2:
        raise probes.ProbeError("mechinit probe takes one target, or two to compare side by side")
    _check_folder(args.out, "--out")
    _check_folder(args.zoo, "--zoo")
    sets = parse_sets(args.sets)
    probes.split_overrides(sets, args.probes or probes.available())  # bad keys fail before any model is loaded
    targets = [zoo.target(t, zoo_dir=args.zoo) for t in args.targets]
    if len({t.name for t in targets}) < len(targets):  # two folders of one name (x/run y/run): name them by what was given
        if len(set(args.targets)) < len(args.targets):
            raise probes.ProbeError(f"the same target twice: {args.targets[0]}")
        for target, given in zip(targets, args.targets):
            target.name = given
    results = probes.run_all(targets, args.probes or None, sets, progress=not args.quiet)  # default: those that apply
    out = args.out or Path("probes-out") / "-vs-".join(t.name.replace("@", "_") for t in targets)
    report = write_report(out, results, {t.name: t.summary() for t in targets})
    for target, by_probe in results.items():
        for name, result in by_probe.items():
            summary = ", ".join(f"{k}={_short(v)}" for k, v in result.headline.items())
            print(f"{target} {name}: {summary}")
    print(f"report: {report}")
    return 0


def _short(value) -> str:
    """A number, list or dict for a one-line summary: floats to 3 significant digits, missing as null."""
    from mechinit.probes.base import sig3

    return "{" + sig3(value) + "}" if isinstance(value, dict) else sig3(value)


def _sweep(args) -> int:
    from mechinit import zoo
    from mechinit.resolve import parse_sets, resolve_config
    from mechinit.sweeps.grid import reduce_sweep, run_sweep, spec_from_sets
    from mechinit.sweeps.report import write_report
    from mechinit.tasks import vocabulary_of

    _check_folder(args.out, "--out")
    sets = parse_sets(args.sets)
    base = resolve_config(args.preset, args.config, [f"{k}={v}" for k, v in sets.items() if not k.startswith("sweep.")])
    spec = spec_from_sets(base, {k: v for k, v in sets.items() if k.startswith("sweep.")}, args.grid, args.best_over, args.mean_over)

    def publish(folder):  # every finished run is also a zoo entry of the sweep's zoo folder, under its id
        if folder.name not in zoo.store.read_index(args.out / "zoo")["entries"]:
            zoo.publish(folder, zoo_dir=args.out / "zoo")

    if args.reduce_only:
        summary = reduce_sweep(spec, args.out)
    else:
        summary = run_sweep(spec, args.out, jobs=args.jobs, progress=not args.quiet, executor=args.executor,
                            slurm=dict(parse_sets(args.slurm)), on_finished=publish,
                            ensemble=args.ensemble, ensemble_size=args.ensemble_size)
    report = write_report(args.out, summary)
    shown = ("headline", *(m.key for m in vocabulary_of(spec.base.task.name).sweep_metrics))
    for cell in summary["cells"]:
        axes = " ".join(f"{k}={v}" for k, v in cell["axes"].items())
        nums = " ".join(f"{m}={_short(cell[m]['mean'])}"
                        for m in shown if m == "headline" or cell[m]["mean"] is not None)
        print(f"{axes}: {nums}")
    for name, log in summary["failed"].items():
        print(f"failed: {name} (log: {log})")
    if summary["without_weights"]:
        print(f"{len(summary['without_weights'])} finished runs have no weights here (carried from another checkout by "
              "their metrics): counted in the cells, not published to the sweep's zoo")
    if summary["pending"]:
        print(f"{summary['finished']} of {summary['finished'] + len(summary['pending']) + len(summary['failed'])} runs finished; "
              f"{len(summary['pending'])} not yet (their cells are null)")
    print(f"sweep: {args.out / 'sweep.json'}  report: {report}")
    return EXIT_FAILED if summary["failed"] else 0


COMMANDS = {"train": _train, "zoo": _zoo, "probe": _probe, "sweep": _sweep, "fate": _fate, "paper": _paper}


def main(argv: list[str] | None = None) -> int:
    from mechinit.errors import USER_ERRORS, TrainingDiverged, TrainingInterrupted  # light: nothing heavy before parsing

    args = _parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except TrainingInterrupted as e:
        print(f"mechinit: stopped: {e}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("mechinit: stopped (interrupted)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into `head` and closed: nothing to report
        return EXIT_FAILED
    except OSError as e:  # the file system said no: out is a file, not writable, disk full ...
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        print(f"mechinit: error: {where}{e.strerror or e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except USER_ERRORS as e:
        print(f"mechinit: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except TrainingDiverged as e:
        print(f"mechinit: training diverged: {e}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    raise SystemExit(main())
