import json
import shutil

import pytest

from mechinit import runs
from mechinit.cli import main
from mechinit.config import ConfigError
from mechinit.runs.ids import run_id
from mechinit.sweeps.grid import SweepSpec, parse_grid, reduce_runs, run_sweep
from tests.conftest import build_cfg

BASE = build_cfg(**{"train.epochs": 1})


def test_grid_parsing_and_expansion():
    grid = parse_grid({"sweep.init.gamma": "0.5,0.8", "sweep.train.seed": "0,1,2"}, BASE)
    assert grid == {"init.gamma": (0.5, 0.8), "train.seed": (0, 1, 2)}
    spec = SweepSpec(BASE, grid)
    assert spec.axes == ["init.gamma"] and len(spec.configs()) == 6
    assert len({run_id(c) for c in spec.configs()}) == 6  # every grid point its own id
    with pytest.raises(ConfigError, match="unknown sweep key 'sweep.init.gama'"):
        parse_grid({"sweep.init.gama": "1"}, BASE)
    with pytest.raises(ConfigError, match="init.gamma = 'x' must be a number"):
        parse_grid({"sweep.init.gamma": "x"}, BASE)
    with pytest.raises(ConfigError, match="sweep reduce key 'train.lr' is not a grid key"):
        SweepSpec(BASE, grid, best_over=("train.lr",))


def _fake_run(folder, inferential, symmetric, seen, losses=(1.0, 0.01), pair_acc=((0.1, 0.7),)):
    folder.mkdir(parents=True)
    (folder / runs.WEIGHTS).write_bytes(b"")
    rows = []
    for epoch, loss in enumerate(losses):
        pairs = {"4,3": {"inferential": inferential, "symmetric": symmetric, "label": "other", "seen": False}}
        pairs.update({f"1,{i + 1}": {"seen": True, "train_acc": acc[epoch]} for i, acc in enumerate(pair_acc)})
        rows.append({"step": epoch, "epoch": float(epoch), "train_loss": loss, "seen_test_acc": seen, "pairs": pairs})
    runs.write_metrics(folder, rows)


def test_cells_take_the_best_over_lr_then_the_mean_over_seeds(tmp_path):
    spec = SweepSpec(BASE, {"init.gamma": (0.8,), "train.lr": (1e-3, 2e-3), "train.seed": (0, 1)}, best_over=("train.lr",))
    planted = {(1e-3, 0): (0.2, 0.7), (2e-3, 0): (0.6, 0.1), (1e-3, 1): (0.4, 0.5), (2e-3, 1): (0.0, 0.9)}
    for cfg in spec.configs():
        inf, sym = planted[(cfg.train.lr, cfg.train.seed)]
        _fake_run(tmp_path / run_id(cfg), inf, sym, 1.0)
    (cell,) = reduce_runs(spec, tmp_path)["cells"]
    assert cell["axes"] == {"init.gamma": 0.8}
    assert cell["acc_inferential"]["mean"] == pytest.approx((0.6 + 0.4) / 2) and cell["acc_inferential"]["std"] == pytest.approx(0.1)
    assert cell["acc_symmetric"]["mean"] == pytest.approx((0.7 + 0.9) / 2)
    assert len(cell["runs"]) == 4


def test_epochs_to_loss_takes_the_best_lr_that_reached_the_target(tmp_path):
    """A run that never reaches loss 5e-2 does not void its group's best (it is slower than any that did);
    a group where no lr reached it, or with a run not finished, has no value."""
    spec = SweepSpec(BASE, {"train.lr": (1e-3, 2e-3), "train.seed": (0, 1)}, best_over=("train.lr",))
    never, twice, once = (1.0, 0.5, 0.2), (1.0, 0.5, 0.04), (1.0, 0.04, 0.01)  # epochs_to_loss: None, 2, 1
    planted = {(1e-3, 0): never, (2e-3, 0): twice, (1e-3, 1): once, (2e-3, 1): never}
    for cfg in spec.configs():
        _fake_run(tmp_path / run_id(cfg), 0.0, 0.0, 1.0, losses=planted[(cfg.train.lr, cfg.train.seed)], pair_acc=((0.1, 0.7, 0.9),))
    (cell,) = reduce_runs(spec, tmp_path)["cells"]
    assert cell["epochs_to_loss"] == {"mean": 1.5, "std": 0.5, "n": 2}
    for cfg in spec.configs():
        if (cfg.train.lr, cfg.train.seed) == (2e-3, 0):  # seed 0 now has no lr that reached the target
            shutil.rmtree(tmp_path / run_id(cfg))
            _fake_run(tmp_path / run_id(cfg), 0.0, 0.0, 1.0, losses=never, pair_acc=((0.1, 0.7, 0.9),))
    (cell,) = reduce_runs(spec, tmp_path)["cells"]
    assert cell["epochs_to_loss"] == {"mean": None, "std": None, "n": 1}
    shutil.rmtree(tmp_path / run_id(spec.configs()[0]))  # an unfinished run: its group has no value either
    (cell,) = reduce_runs(spec, tmp_path)["cells"]
    assert cell["epochs_to_loss"]["n"] == 1 and cell["acc_inferential"]["mean"] is None


def test_fig18_legend_names_the_cells_without_a_point():
    from mechinit.sweeps.report import speed_figures

    def cell(layers, gamma, mean):
        return {"axes": {"model.n_layers": layers, "init.gamma": gamma}, "epochs_to_loss": {"mean": mean, "std": None if mean is None else 0.0}}
    summary = {"axes": ["model.n_layers", "init.gamma"], "cells": [cell(2, 0.3, 3.0), cell(4, 0.3, 5.0), cell(2, 1.0, None), cell(4, 1.0, 6.0)]}
    (fig18,) = speed_figures(summary)
    assert [t.name for t in fig18.data] == ["init.gamma=0.3", "init.gamma=1.0 (1 of 2 cells: no point, a seed never reached 5e-2)"]
    assert list(fig18.data[1].y) == [None, 6.0]


def test_a_missing_run_makes_its_cell_null(tmp_path):
    spec = SweepSpec(BASE, {"init.gamma": (0.8,), "train.seed": (0, 1)})
    _fake_run(tmp_path / run_id(spec.configs()[0]), 0.5, 0.5, 1.0)
    (cell,) = reduce_runs(spec, tmp_path)["cells"]
    assert cell["acc_inferential"] == {"mean": None, "std": None, "n": 1}


def test_sweep_trains_once_reports_failures_and_resumes(tmp_path, capsys):
    out = tmp_path / "sw"
    args = ["sweep", "--preset", "tiny", "--set", "train.epochs=1", "--set", "sweep.train.lr=1e-3,1e37", "--set", "train.grad_clip=0",
            "--out", str(out), "--quiet"]
    assert main(args) == 1  # lr 1e37 diverges: reported, the other run still finishes
    printed = capsys.readouterr().out
    assert "failed: " in printed and "(log: " in printed
    summary = json.loads((out / "sweep.json").read_text())
    assert len(summary["failed"]) == 1 and len(summary["cells"]) == 2
    good = [c for c in summary["cells"] if c["axes"]["train.lr"] == 1e-3][0]
    assert good["seen_test_acc"]["mean"] is not None
    finished = sorted(p for p in (out / "runs").glob("*/model.safetensors"))
    stamp = [p.stat().st_mtime_ns for p in finished]
    assert main(args) == 1  # started again: the finished run is not retrained
    assert [p.stat().st_mtime_ns for p in finished] == stamp
    assert (out / "report.html").read_text().count("plotly") > 0


def test_phase_diagram_figures_shade_unfitted_cells(tmp_path):
    from mechinit.sweeps.report import figures

    spec = SweepSpec(BASE, {"init.gamma": (0.5, 0.8), "model.n_layers": (1, 2), "train.seed": (0,)})
    for cfg in spec.configs():
        seen = 0.5 if (cfg.init.gamma, cfg.model.n_layers) == (0.5, 2) else 1.0
        _fake_run(tmp_path / run_id(cfg), cfg.init.gamma, 1 - cfg.init.gamma, seen)
    summary = reduce_runs(spec, tmp_path)
    sym, inf, *speed = figures(summary)
    assert len(speed) == 2  # Fig 18 and Fig 19 views come after the two phase diagrams
    assert sym.data[0].type == "heatmap" and list(sym.data[0].x) == ["0.5", "0.8"] and list(sym.data[0].y) == ["1", "2"]
    assert inf.data[0].z[0] == [0.5, 0.8]  # row n_layers=1: inferential accuracy per gamma
    assert len(sym.layout.shapes) == 1  # the one cell with seen-pair test < 90% is shaded
    assert not sym.layout.annotations and "not finished" not in sym.layout.title.text


def test_a_cell_whose_runs_have_not_finished_is_named_not_shaded_as_unfitted(tmp_path):
    from mechinit.sweeps.report import figures

    spec = SweepSpec(BASE, {"init.gamma": (0.5, 0.8), "model.n_layers": (1, 2), "train.seed": (0,)})
    for cfg in spec.configs():
        if (cfg.init.gamma, cfg.model.n_layers) != (0.8, 2):  # that cell's run has not finished
            _fake_run(tmp_path / run_id(cfg), cfg.init.gamma, 1 - cfg.init.gamma, 1.0)
    sym = figures(reduce_runs(spec, tmp_path))[0]
    assert sym.data[0].z[1][1] is None and len(sym.layout.shapes) == 0
    assert [(a.x, a.y, a.text) for a in sym.layout.annotations] == [(1, 1, "not finished")]  # category positions
    assert sym.layout.title.text.endswith("blank: runs not finished")


def test_sweep_publishes_every_run_to_its_zoo(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "user-zoo"))
    out = tmp_path / "sw"
    assert main(["sweep", "--preset", "tiny", "--set", "train.epochs=1", "--set", "sweep.init.gamma=0.5,0.8", "--out", str(out), "--quiet"]) == 0
    index = json.loads((out / "zoo" / "index.json").read_text())
    assert sorted(index["entries"]) == sorted(p.name for p in (out / "runs").iterdir() if p.is_dir())
    assert main(["sweep", "--preset", "tiny", "--set", "train.epochs=1", "--set", "sweep.init.gamma=0.5,0.8", "--out", str(out), "--quiet"]) == 0


def test_speed_metrics_for_fig18_and_fig19(tmp_path):
    from mechinit.sweeps.grid import run_record
    from mechinit.sweeps.report import speed_figures
    from mechinit.tasks.anchor_vocabulary import ANCHOR

    spec = SweepSpec(BASE, {"model.n_layers": (1, 2), "train.seed": (0, 1)})
    for cfg in spec.configs():
        slow = cfg.model.n_layers == 2
        _fake_run(tmp_path / run_id(cfg), 0.0, 0.0, 1.0, losses=(1.0, 0.5, 0.04) if slow else (1.0, 0.04, 0.01),
                  pair_acc=((0.1, 0.2, 0.61), (0.7, 0.9, 1.0)))
    record = run_record(spec, tmp_path / run_id(spec.configs()[-1]), spec.configs()[-1])
    assert record["epochs_to_loss"] == 2.0 and record["epochs_to_pair_acc"] == {"1,1": 2.0, "1,2": 0.0}
    cells = {c["axes"]["model.n_layers"]: c for c in reduce_runs(spec, tmp_path)["cells"]}
    assert cells[1]["epochs_to_loss"]["mean"] == 1.0 and cells[2]["epochs_to_loss"]["mean"] == 2.0
    (fig18,), (fig19,) = speed_figures(reduce_runs(spec, tmp_path)), ANCHOR.figures(reduce_runs(spec, tmp_path))
    assert list(fig18.data[0].y) == [1.0, 2.0]
    assert list(fig19.data[0].y) == [2.0, 0.0] and fig19.data[0].name == "model.n_layers=1 (mean of 2 of 2 runs)"
    (tmp_path / run_id(spec.configs()[-1]) / runs.WEIGHTS).unlink()  # a run that has not finished: its cell says so
    (tmp_path / run_id(spec.configs()[-1]) / runs.METRICS).write_text('{"step": 0, "epoch": 0.0}\n')
    (fig19,) = ANCHOR.figures(reduce_runs(spec, tmp_path))
    assert [t.name for t in fig19.data] == ["model.n_layers=1 (mean of 2 of 2 runs)", "model.n_layers=2 (mean of 1 of 2 runs)"]
    assert list(fig19.data[1].y) == [2.0, 0.0]  # the one finished run's own numbers
    first = spec.configs()[0]  # a finished run whose pair (1,1) never reaches 60%: that pair has no mean, and the name says why
    shutil.rmtree(tmp_path / run_id(first))
    _fake_run(tmp_path / run_id(first), 0.0, 0.0, 1.0, losses=(1.0, 0.04, 0.01), pair_acc=((0.1, 0.2, 0.3), (0.7, 0.9, 1.0)))
    (fig19,) = ANCHOR.figures(reduce_runs(spec, tmp_path))
    assert list(fig19.data[0].y) == [None, 0.0]
    assert fig19.data[0].name == "model.n_layers=1 (mean of 2 of 2 runs; 1 never reach 60% on some pair, which has no bar)"


def test_units_group_runs_of_one_shape_into_ensembles(tmp_path):
    from mechinit.sweeps.grid import plan_units

    spec = SweepSpec(BASE, {"model.n_layers": (1, 2), "init.gamma": (0.5, 0.8, 1.0), "train.seed": (0, 1)})
    todo = [(c, tmp_path / run_id(c)) for c in spec.configs()]
    units = plan_units(todo, "auto", size=8, jobs=1)
    assert sorted(len(u) for u in units) == [6, 6]  # one ensemble per depth
    assert all(len({c.model.n_layers for c, _ in u}) == 1 for u in units)
    assert sorted(len(u) for u in plan_units(todo, "auto", size=4, jobs=1)) == [3, 3, 3, 3]
    assert sorted(len(u) for u in plan_units(todo, "auto", size=8, jobs=4)) == [3, 3, 3, 3]  # every worker busy
    assert len(plan_units(todo, "off", size=8, jobs=1)) == 12
    assert sorted(f for u in plan_units(todo, "auto", 5, 3) for _, f in u) == sorted(f for _, f in todo)
    with pytest.raises(ConfigError, match="choose one of"):
        plan_units(todo, "sometimes", size=8, jobs=1)


def test_an_ensemble_sweep_writes_normal_runs_close_to_solo_ones(tmp_path):
    spec = SweepSpec(build_cfg(**{"train.epochs": 2, "train.threads": 1}), {"init.gamma": (0.5, 0.9), "train.seed": (0, 1)})
    together = run_sweep(spec, tmp_path / "ens", progress=False, ensemble="auto")
    alone = run_sweep(spec, tmp_path / "solo", progress=False, ensemble="off")
    assert [len(u) for u in together["units"]] == [4] and [len(u) for u in alone["units"]] == [1, 1, 1, 1]
    for cfg in spec.configs():
        ens_run, solo_run = tmp_path / "ens" / "runs" / run_id(cfg), tmp_path / "solo" / "runs" / run_id(cfg)
        assert runs.read_json(ens_run / "config.json")["provenance"]["trained_with"]["ensemble"] == together["units"][0]
        assert runs.read_metrics(ens_run)[-1]["train_loss"] == pytest.approx(runs.read_metrics(solo_run)[-1]["train_loss"], rel=1e-3)
    for a, b in zip(together["cells"], alone["cells"]):
        assert a["axes"] == b["axes"]
        assert a["seen_test_acc"]["mean"] == pytest.approx(b["seen_test_acc"]["mean"], abs=0.02)


def test_report_of_a_non_anchor_sweep_draws_the_headline():
    from mechinit.sweeps.report import figures

    def cell(g, wd, headline):
        none = {"mean": None, "std": None, "n": 0}
        return {"axes": {"init.gamma": g, "train.weight_decay": wd}, "runs": [{"id": f"r{g}{wd}", "epochs_to_pair_acc": {}}],
                "acc_inferential": none, "acc_symmetric": none, "seen_test_acc": none, "epochs_to_loss": none,
                "headline": {"mean": headline, "std": 0.0, "n": 3}, "delta_loss": none}

    summary = {"axes": ["init.gamma", "train.weight_decay"], "spec": {"base": {"task": {"name": "addition"}}, "mean_over": ["train.seed"]},
               "cells": [cell(0.5, 0.01, 0.67), cell(0.5, 0.1, 0.69), cell(0.7, 0.01, 0.84), cell(0.7, 0.1, 0.84)]}
    (heatmap,) = figures(summary)
    assert heatmap.layout.title.text == "the task's headline metric" and not heatmap.layout.shapes
    assert [list(row) for row in heatmap.data[0].z] == [[0.67, 0.84], [0.69, 0.84]]


@pytest.mark.parametrize("sets, message", [
    (["--set", "sweep.init.gamma="], "sweep key sweep.init.gamma has no values"),
    (["--set", "sweep.train.seed=0,0"], "sweep key sweep.train.seed repeats a value"),
    (["--set", "sweep.init.gamma=0.5", "--jobs", "0"], "sweep --jobs 0 must be at least 1"),
])
def test_empty_or_repeated_sweep_axes_and_zero_jobs_are_refused(sets, message, tmp_path, capsys):
    assert main(["sweep", "--preset", "tiny", *sets, "--out", str(tmp_path / "sw"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "sw" / "sweep.json").exists()


def test_the_report_draws_and_tables_the_maximum_over_training_and_says_how_cells_reduce(tmp_path):
    from mechinit.sweeps.report import figures, write_report

    spec = SweepSpec(BASE, {"init.gamma": (0.5, 0.8), "model.n_layers": (2,), "train.lr": (1e-3, 2e-3)}, best_over=("train.lr",), mean_over=())
    planted = {(0.5, 1e-3): (0.1, 0.8, 0.9), (0.5, 2e-3): (0.3, 0.2, 0.4), (0.8, 1e-3): (0.6, 0.1, 0.2), (0.8, 2e-3): (0.2, 0.0, 0.7)}
    for cfg in spec.configs():
        inf, sym, best_inf = planted[(cfg.init.gamma, cfg.train.lr)]
        folder = tmp_path / "runs" / run_id(cfg)
        _fake_run(folder, inf, sym, 1.0)
        rows = runs.read_metrics(folder)
        rows[-1]["pairs"]["4,3"]["max_over_training"] = {"test_keys": {"inferential": best_inf, "symmetric": sym, "designated": None}}
        (folder / runs.METRICS).unlink()
        runs.write_metrics(folder, rows)
    summary = reduce_runs(spec, tmp_path / "runs")
    summary["failed"] = {}
    titles = [f.layout.title.text for f in figures(summary)]
    assert [t.split(" (grey")[0] for t in titles][:4] == [
        "(4,3) accuracy under the symmetric mapping", "(4,3) accuracy under the inferential mapping",
        "(4,3) accuracy under the symmetric mapping, max over training", "(4,3) accuracy under the inferential mapping, max over training"]
    by_gamma = {c["axes"]["init.gamma"]: c for c in summary["cells"]}
    assert by_gamma[0.5]["acc_inferential_max_over_training"]["mean"] == 0.9  # best over lr per metric
    assert by_gamma[0.8]["acc_inferential"]["mean"] == 0.6 and by_gamma[0.8]["acc_inferential_max_over_training"]["mean"] == 0.7
    html = write_report(tmp_path, summary).read_text()
    assert "each cell takes, per metric, the best run over [&#x27;train.lr&#x27;];" in html and "over []" not in html
    from mechinit.sweeps.report import reduction

    assert reduction({"best_over": ["train.lr"], "mean_over": ["train.seed"]}) == (
        "each cell takes, per metric, the best run over ['train.lr'], then the mean ± std over ['train.seed']")
    assert reduction({"best_over": [], "mean_over": []}) == "each cell is one run"
    assert "<th>inferential mapping, max over training</th>" in html and "<td class='num'>0.9</td>" in html


def test_a_sweep_carried_without_weights_keeps_its_finished_runs_and_restarts_a_cut_one(tmp_path):
    """A long sweep goes to the next checkout as config.json + metrics.jsonl per run (weights and
    snapshots stay behind): its finished runs count as done, a run whose metrics stop early and that
    has no resume point starts again (and, seeded, gives the same numbers)."""
    import shutil

    spec = SweepSpec(build_cfg(**{"train.epochs": 2, "train.threads": 1}), {"init.gamma": (0.5, 0.8)}, mean_over=())
    first = run_sweep(spec, tmp_path / "sw", progress=False, ensemble="off")
    done, cut = [tmp_path / "sw" / "runs" / run_id(c) for c in spec.configs()]
    for folder in (done, cut):
        (folder / runs.WEIGHTS).unlink()
        shutil.rmtree(folder / runs.SNAPSHOTS)
    kept = (done / runs.METRICS).read_bytes()
    rows = runs.read_metrics(cut)
    runs.write_metrics(cut, rows[:-1])  # its last evaluation is missing and it has no resume point: started again
    shutil.rmtree(cut / runs.RESUME)
    second = run_sweep(spec, tmp_path / "sw", progress=False, ensemble="off")
    assert second["units"] == [[cut.name]]  # only the cut run is trained again
    assert (done / runs.METRICS).read_bytes() == kept and not (done / runs.WEIGHTS).is_file()
    assert (cut / runs.WEIGHTS).is_file() and runs.read_metrics(cut) == [
        {**r, "elapsed_s": n["elapsed_s"], "samples_per_s": n.get("samples_per_s")} for r, n in zip(rows, runs.read_metrics(cut))]
    for a, b in zip(first["cells"], second["cells"]):
        assert a["seen_test_acc"] == b["seen_test_acc"] and a["acc_inferential"] == b["acc_inferential"]
    records = {r["id"]: r for c in second["cells"] for r in c["runs"]}
    assert records[done.name]["weights"] is False and records[cut.name]["weights"] is True
    assert second["without_weights"] == [done.name] and first["without_weights"] == []


def test_the_cli_says_which_finished_runs_have_no_weights_and_does_not_publish_them(tmp_path, capsys):
    out = tmp_path / "sw"
    args = ["sweep", "--preset", "tiny", "--set", "train.epochs=1", "--set", "sweep.init.gamma=0.5,0.8", "--out", str(out), "--quiet"]
    assert main(args) == 0
    carried = sorted((out / "runs").iterdir())[0]
    (carried / runs.WEIGHTS).unlink()
    import shutil

    shutil.rmtree(out / "zoo")  # a fresh checkout: no sweep zoo either
    zoo_index = out / "zoo" / "index.json"
    capsys.readouterr()
    assert main(args) == 0
    assert "1 finished runs have no weights here" in capsys.readouterr().out
    assert sorted(json.loads(zoo_index.read_text())["entries"]) == sorted(p.name for p in (out / "runs").iterdir() if p != carried)


def test_reduce_only_tables_the_finished_runs_and_trains_nothing(tmp_path, capsys):
    """`mechinit sweep --reduce-only`: the phase diagram so far (while the sweep runs elsewhere or waits
    for the next session) — finished runs reduced, a cell with a missing run null, nothing trained."""
    import shutil

    from mechinit.resolve import resolve_config
    from mechinit.sweeps.grid import spec_from_sets

    out = tmp_path / "sw"
    args = ["sweep", "--preset", "tiny", "--set", "train.epochs=1", "--set", "sweep.init.gamma=0.5,0.8",
            "--set", "sweep.train.lr=1e-3,2e-3", "--best-over", "train.lr", "--out", str(out), "--quiet", "--reduce-only"]
    assert main(args) == 2 and "has no runs/ folder: nothing to reduce" in capsys.readouterr().err
    spec = spec_from_sets(resolve_config("tiny", None, ["train.epochs=1"]),
                          {"sweep.init.gamma": "0.5,0.8", "sweep.train.lr": "1e-3,2e-3"}, best_over=["train.lr"])
    planted = {(0.5, 1e-3): (0.2, 0.7), (0.5, 2e-3): (0.6, 0.1), (0.8, 1e-3): (0.9, 0.0)}  # (0.8, 2e-3) not finished
    for cfg in spec.configs():
        if (cfg.init.gamma, cfg.train.lr) in planted:
            _fake_run(out / "runs" / run_id(cfg), *planted[(cfg.init.gamma, cfg.train.lr)], 1.0)
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "3 of 4 runs finished; 1 not yet (their cells are null)" in printed
    summary = json.loads((out / "sweep.json").read_text())
    by_gamma = {c["axes"]["init.gamma"]: c for c in summary["cells"]}
    assert by_gamma[0.5]["acc_inferential"]["mean"] == 0.6 and by_gamma[0.5]["acc_symmetric"]["mean"] == 0.7  # best lr per mapping
    assert by_gamma[0.8]["acc_inferential"]["mean"] is None  # one of its lrs is missing: no number, never a default
    missing = run_id(spec.configs()[3])
    assert summary["pending"] == [missing] and summary["finished"] == 3 and summary["failed"] == {}
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(run_id(c) for c in spec.configs()[:3])  # nothing trained
    assert not (out / "zoo").exists()
    html = (out / "report.html").read_text()
    assert "Partial: 3 of 4 runs finished" in html and "<td class='num'>1 of 2</td>" in html
    cut = out / "runs" / missing  # the missing run, mid-way, its metrics' last line cut (a kill, or an append in progress)
    cut.mkdir()
    (cut / runs.METRICS).write_text('{"step": 0, "epoch": 0.0}\n{"step": 5, "ep')
    assert main(args) == 0 and json.loads((out / "sweep.json").read_text())["pending"] == [missing]
    shutil.rmtree(cut)
    (out / "runs" / f"{missing}.log").write_text("Traceback ...")  # the missing run failed in the sweep
    assert main(args) == 1
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["failed"] == {missing: str(out / "runs" / f"{missing}.log")} and summary["pending"] == []
    assert f"failed: {missing}" in capsys.readouterr().out




def test_a_seeds_only_sweep_says_it_has_one_cell_and_why_its_fig19_has_no_bars(tmp_path):
    from mechinit.sweeps.report import write_report
    from mechinit.tasks.anchor_vocabulary import ANCHOR

    spec = SweepSpec(BASE, {"train.seed": (0, 1)})
    for cfg in spec.configs():  # pair (1,1) reaches 60% in seed 0 only: no pair has a mean over both seeds
        reached = (0.1, 0.7) if cfg.train.seed == 0 else (0.1, 0.5)
        _fake_run(tmp_path / "runs" / run_id(cfg), 0.1, 0.9, 1.0, pair_acc=(reached,))
    summary = reduce_runs(spec, tmp_path / "runs")
    summary["failed"] = {}
    assert summary["axes"] == []
    (fig19,) = ANCHOR.figures(summary)
    assert [t.name for t in fig19.data] == ["all runs (mean of 2 of 2 runs; 1 never reach 60% on some pair, which has no bar)"]
    assert fig19.layout.title.text.endswith("(no bars: every pair has a finished run that never brings it to 60%)")
    html = write_report(tmp_path, summary).read_text()
    assert "1 cell (no axis besides [&#x27;train.seed&#x27;]);" in html and "cells over []" not in html
