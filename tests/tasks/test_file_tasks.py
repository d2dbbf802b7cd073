"""SCAN and COGS loaders on the real files (the full copies, or the committed slices of them), and the
sequence-task machinery on them."""

import pytest
import torch

from mechinit.config import ConfigError
from mechinit.tasks import make_task
from mechinit.tasks.sequence import IGNORE
from mechinit.training.trainer import train
from tests.conftest import build_cfg, stop_after_resume_point
from tests.tasks.conftest import FACTS


def scan_cfg(data, **sets):
    return build_cfg(**{"task.name": "scan", "task.data_dir": str(data / "scan"), "model.n_ctx": 64, "model.d_vocab": 24,
                        "model.norm": "pre", "model.n_heads": 2, **sets})


def test_scan_addprim_split_reads_the_standard_files(shared_data):
    task = make_task(scan_cfg(shared_data))
    assert (len(task.all_train), len(task.eval_examples["test"])) == FACTS["scan_addprim"]
    assert task.all_train[0] == (("turn", "left"), ("I_TURN_LEFT",))
    # add-prim: "turn left" is in training only as the bare primitive; every test command uses it
    with_left = [i for i, _ in task.all_train if " ".join(i).count("turn left")]
    assert with_left == [("turn", "left")] * len(with_left)
    assert all("turn left" in " ".join(i) for i, _ in task.eval_examples["test"])
    assert task.max_len == 59 and len(task.tokenizer) == 23  # 13 command words, 6 actions, 4 specials


def test_scan_simple_split_and_bad_split(shared_data):
    task = make_task(scan_cfg(shared_data, **{"task.split": "simple"}))
    assert (len(task.all_train), len(task.eval_examples["test"])) == FACTS["scan_simple"]
    with pytest.raises(ConfigError, match="task.split = 'jump' is not a SCAN split"):
        make_task(scan_cfg(shared_data, **{"task.split": "jump"}))


def test_cogs_reads_train_and_test_and_has_no_gen_without_the_file(shared_data):
    cfg = build_cfg(**{"task.name": "cogs", "task.data_dir": str(shared_data / "cogs"), "model.n_ctx": 256, "model.d_vocab": 840})
    task = make_task(cfg)
    n_train, n_test, longest, vocabulary = FACTS["cogs"]
    assert (len(task.all_train), len(task.eval_examples["test"])) == (n_train, n_test)
    assert "gen" not in task.eval_examples  # the shared copy has no gen.tsv: no gen numbers at all
    sentence, form = task.all_train[0]
    assert sentence[:3] == ("A", "rose", "was") and form[:4] == ("rose", "(", "x", "_")
    assert task.max_len == longest and len(task.tokenizer) == vocabulary


def test_missing_files_name_the_file_and_the_folder(tmp_path, shared_data):
    with pytest.raises(ConfigError, match=r"tasks_train_addprim_turn_left.txt not found in .*empty \(task.data_dir\)"):
        make_task(build_cfg(**{"task.name": "scan", "task.data_dir": str(tmp_path / "empty"), "model.n_ctx": 64, "model.d_vocab": 24}))
    with pytest.raises(ConfigError, match="set task.data_dir"):
        make_task(build_cfg(**{"task.name": "cogs", "model.n_ctx": 256, "model.d_vocab": 840}))
    with pytest.raises(ConfigError, match=r"set model.d_vocab >= 23"):
        make_task(scan_cfg(shared_data, **{"model.d_vocab": 16}))
    with pytest.raises(ConfigError, match=r"set model.n_ctx >= 59"):
        make_task(scan_cfg(shared_data, **{"model.n_ctx": 32}))


def test_targets_sit_on_output_positions_only(shared_data):
    task = make_task(scan_cfg(shared_data))
    (inp, out), = [e for e in task.all_train if e[0] == ("walk", "twice")][:1]
    tokens, targets = task.encode([(inp, out)])
    t = task.tokenizer
    assert tokens[0, :6].tolist() == t.encode(["walk", "twice", "<sep>", "I_WALK", "I_WALK", "<eos>"])
    assert targets[0, :6].tolist() == [IGNORE, IGNORE, t.ids["I_WALK"], t.ids["I_WALK"], t.ids["<eos>"], IGNORE]
    assert (targets[0, 6:] == IGNORE).all() and (tokens[0, 6:] == t.ids["<pad>"]).all()


def test_greedy_decoding_of_a_perfect_oracle_scores_exact_match_one(shared_data):
    """A logits function that knows the answers must score 1.0 on every set; a wrong one 0.0."""
    task = make_task(scan_cfg(shared_data, **{"task.n_eval": 40, "task.n_eval_train": 20}))
    answers = {tuple(task.tokenizer.encode(i)): task.tokenizer.encode(o) + [task.tokenizer.ids["<eos>"]]
               for i, o in task.all_train + task.eval_examples["test"]}
    sep = task.tokenizer.ids["<sep>"]

    def oracle(tokens):
        logits = torch.zeros(*tokens.shape, 24)
        for row, seq in enumerate(tokens.tolist()):
            cut = seq.index(sep)
            answer = answers[tuple(seq[:cut])]
            for p in range(cut, len(seq)):
                k = p - cut
                logits[row, p, answer[k] if k < len(answer) else 0] = 1.0
        return logits

    metrics = task.evaluate(oracle)
    assert metrics["exact_match"] == {"test": 1.0, "train": 1.0} and metrics["headline"] == 1.0
    wrong = task.evaluate(lambda tokens: torch.zeros(*tokens.shape, 24).index_fill_(-1, torch.tensor([4]), 1.0))
    assert wrong["exact_match"] == {"test": 0.0, "train": 0.0}


def test_a_scan_run_trains_and_improves(tmp_path, shared_data):
    cfg = scan_cfg(shared_data, **{"task.n_train": 2000, "task.n_eval": 50, "task.n_eval_train": 50, "train.epochs": 3,
                                   "train.batch_size": 64, "train.lr": 3e-3})
    row = train(cfg, tmp_path / "run", quiet=True)
    assert (tmp_path / "run" / "data.json").is_file()
    from mechinit import runs
    first = runs.read_metrics(tmp_path / "run")[0]
    assert row["loss"]["train"] < 0.6 * first["loss"]["train"]
    assert runs.read_json(tmp_path / "run" / "data.json")["tokenizer"]["words"][:4] == ["<pad>", "<sep>", "<eos>", "<unk>"]


def test_train_and_probe_a_sequence_task_through_the_cli(tmp_path, shared_data, capsys):
    import json

    from mechinit.cli import main

    run = tmp_path / "scan-run"
    assert main(["train", "--preset", "scan", "--set", f"task.data_dir={shared_data / 'scan'}", "--set", "model.d_model=32",
                 "--set", "model.d_head=8", "--set", "model.d_mlp=64", "--set", "task.n_train=512", "--set", "task.n_eval=20",
                 "--set", "task.n_eval_train=20", "--set", "train.epochs=1", "--out", str(run), "--quiet"]) == 0
    assert "verdict: exact match: test" in capsys.readouterr().out
    assert main(["probe", str(run), "--out", str(tmp_path / "probe"), "--quiet"]) == 0
    results = json.loads((tmp_path / "probe" / "results.json").read_text())["scan-run"]
    assert list(results) == ["condensation", "embedding_cosine"]  # the anchor-task probes do not apply
    assert set(results["embedding_cosine"]["numbers"]["groups"]) == {"input words", "output words"}
    assert main(["probe", str(run), "--probe", "information_flow", "--out", str(tmp_path / "p2"), "--quiet"]) == 2
    assert "reads models of the anchor task" in capsys.readouterr().err


@pytest.mark.parametrize("name, sets", [
    ("addition", {"model.n_ctx": 16, "model.d_vocab": 16}),
    ("prontoqa", {"model.n_ctx": 48, "model.d_vocab": 40}),
    ("reasoning-memory", {}),
    ("cogs", {"model.n_ctx": 180, "model.d_vocab": 840, "task.data_dir": "cogs"}),
])
def test_every_task_trains_through_the_cli(name, sets, tmp_path, shared_data, capsys):
    from mechinit.cli import main

    sets = {k: (str(shared_data / v) if k == "task.data_dir" else v) for k, v in sets.items()}
    args = ["train", "--preset", "tiny", "--set", f"task.name={name}", "--set", "task.n_train=512", "--set", "task.n_eval=16",
            "--set", "task.n_eval_train=16", "--set", "train.batch_size=64", "--set", "train.epochs=2"]
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    assert main([*args, "--out", str(tmp_path / "run"), "--quiet"]) == 0
    from mechinit import runs

    rows = runs.read_metrics(tmp_path / "run")
    assert rows[-1]["step"] == 16 and rows[-1]["train_loss"] < rows[1]["train_loss"] * 1.05
    assert rows[-1]["headline"] is not None and "verdict" in capsys.readouterr().out


def _scan_copy(shared_data, folder, n_train=400, n_test=60):
    folder.mkdir()
    for part, n in (("train", n_train), ("test", n_test)):
        lines = (shared_data / "scan" / f"tasks_{part}_simple.txt").read_text().splitlines(keepends=True)[:n]
        (folder / f"tasks_{part}_simple.txt").write_text("".join(lines))
    return folder


def test_data_json_records_the_files_and_probes_and_resume_refuse_changed_ones(tmp_path, shared_data, monkeypatch, capsys):
    import hashlib

    from mechinit import runs
    from mechinit.cli import main

    data = _scan_copy(shared_data, tmp_path / "scan")
    cfg = scan_cfg(tmp_path, **{"task.split": "simple", "task.n_train": 400, "task.n_eval": 20, "task.n_eval_train": 20,
                                "train.batch_size": 64, "train.epochs": 3, "train.resume_every": 7, "train.threads": 1})
    stop_after_resume_point(monkeypatch, lambda: train(cfg, tmp_path / "run", quiet=True))
    run = tmp_path / "run"
    files = runs.read_json(run / "data.json")["files"]
    test_file = data / "tasks_test_simple.txt"
    assert files == [{"name": p.name, "bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
                     for p in (data / "tasks_train_simple.txt", test_file)]

    good = test_file.read_bytes()
    edited = good.replace(b" I_WALK", b" I_LOOK", 1)  # one example's answer edited, same size
    assert edited != good and len(edited) == len(good)
    test_file.write_bytes(edited)
    step0 = str(run / "checkpoints" / "step0.safetensors")
    for argv in (["train", "--resume", str(run), "--quiet"], ["probe", step0, "--out", str(tmp_path / "probe"), "--quiet"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "tasks_test_simple.txt is not the file the run was trained on" in err, err
    assert not (tmp_path / "probe").exists()
    test_file.unlink()
    assert main(["probe", step0, "--out", str(tmp_path / "probe"), "--quiet"]) == 2
    assert "tasks_test_simple.txt not found" in capsys.readouterr().err
    test_file.write_bytes(good)
    assert main(["probe", step0, "--out", str(tmp_path / "probe"), "--quiet"]) == 0
    (summary,) = runs.read_json(tmp_path / "probe" / "models.json").values()
    assert summary["task"] == "scan" and summary["step"] == 0 and summary["rows"] == {"headline": summary["headline"]}
    from mechinit.runs.targets import target_from_path

    target = target_from_path(step0)
    recorded, target.metrics = target.metrics, None  # a checkpoint without a metrics row is evaluated afresh
    fresh = target.summary()
    assert fresh["step"] is None and fresh["headline"] == pytest.approx(recorded["headline"], abs=1e-6)
    assert main(["train", "--resume", str(run), "--quiet"]) == 0


def test_a_data_json_without_files_still_checks_the_tokenizer(tmp_path, shared_data):
    from mechinit import runs
    from mechinit.tasks.datafiles import check_same_data

    _scan_copy(shared_data, tmp_path / "scan")
    cfg = scan_cfg(tmp_path, **{"task.split": "simple", "task.n_train": 400})
    task = make_task(cfg)
    old = {k: v for k, v in task.artifacts().items() if k != "files"}  # a run from before data.json had files
    (tmp_path / "run").mkdir()
    runs.write_json(tmp_path / "run" / "data.json", old)
    check_same_data(task, tmp_path / "run")
    old["tokenizer"]["words"] = old["tokenizer"]["words"][:-1]
    runs.write_json(tmp_path / "run" / "data.json", old)
    with pytest.raises(ConfigError, match=r"the data give another tokenizer than the run recorded"):
        check_same_data(task, tmp_path / "run")


@pytest.mark.parametrize("content, message", [
    (b"IN:  OUT: I_WALK\n", r"x.txt:1 is not a SCAN line \(an empty command\)"),
    (b"IN: walk OUT: I_WALK\nIN: walk OUT: \n", r"x.txt:2 is not a SCAN line \(an empty action sequence\)"),
    (b"IN: walk OUT: I_WALK OUT: I_RUN\n", r"x.txt:1 is not a SCAN line \(two ' OUT: '\)"),
    (b"IN: walk OUT: I_WALK\nIN: wa\x00lk OUT: I_WALK\n", r"x.txt:2 holds the control character '\\x00'"),
    (b"IN: walk OUT: I_WALK\n\xff\xfe\n", r"x.txt:2 is not UTF-8 text \(byte 0xff\)"),
    (b"walk OUT: I_WALK\n", r"x.txt:1 is not a SCAN line \(not 'IN: <command> OUT: <actions>'\)"),
])
def test_odd_scan_lines_are_refused_naming_the_line(tmp_path, content, message):
    from mechinit.tasks.scan import read_scan

    path = tmp_path / "x.txt"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message):
        read_scan(path)


def test_a_byte_order_mark_and_crlf_line_ends_read_as_plain_lines(tmp_path):
    from mechinit.tasks.cogs import read_cogs
    from mechinit.tasks.scan import read_scan

    (tmp_path / "s.txt").write_bytes(b"\xef\xbb\xbfIN: jump twice OUT: I_JUMP I_JUMP\r\n\r\nIN: walk OUT: I_WALK\r\n")
    assert read_scan(tmp_path / "s.txt") == [(("jump", "twice"), ("I_JUMP", "I_JUMP")), (("walk",), ("I_WALK",))]
    (tmp_path / "c.tsv").write_bytes(b"\xef\xbb\xbfA cat ran .\tcat ( x _ 1 )\tin_distribution\n")
    assert read_cogs(tmp_path / "c.tsv") == [(("A", "cat", "ran", "."), ("cat", "(", "x", "_", "1", ")"))]
    (tmp_path / "c.tsv").write_bytes(b"A cat ran .\t \tin_distribution\n")
    with pytest.raises(ConfigError, match=r"c.tsv:1 has an empty logical form"):
        read_cogs(tmp_path / "c.tsv")


@pytest.mark.parametrize("record, message", [
    ([1, 2], "is not a data record"),
    ({"files": ["tasks_train_simple.txt"]}, "'files' is not a list of"),
    ({"files": [{"name": "tasks_dev_simple.txt", "bytes": 1, "sha256": "0"}]}, "trained on tasks_dev_simple.txt, which this task does not read"),
])
def test_a_tampered_data_json_is_one_line(tmp_path, shared_data, record, message):
    from mechinit import runs
    from mechinit.tasks.datafiles import check_same_data

    _scan_copy(shared_data, tmp_path / "scan")
    task = make_task(scan_cfg(tmp_path, **{"task.split": "simple", "task.n_train": 400}))
    (tmp_path / "run").mkdir()
    runs.write_json(tmp_path / "run" / "data.json", record)
    with pytest.raises(ConfigError, match=message):
        check_same_data(task, tmp_path / "run")
