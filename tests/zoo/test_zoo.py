import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
import torch
from mechinit.zoo.store import ZooError
from safetensors.torch import load_file

from mechinit import runs, zoo
from mechinit.cli import main
from mechinit.model.fastpath import last_logits
from mechinit.tasks import make_task
from mechinit.training.trainer import train
from tests.conftest import build_cfg


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "tiny"
    train(build_cfg(), out, quiet=True)
    return out


@pytest.fixture
def zoo_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MECHINIT_ZOO", str(tmp_path / "user-zoo"))
    return tmp_path / "zoo"


def test_publish_then_load_by_id_alias_and_snapshot(run_dir, zoo_dir):
    entry = zoo.publish(run_dir, aliases=("tiny-ref",), zoo_dir=zoo_dir)
    assert entry.startswith("anchor-post-L2-d32-g0.80-s0-") and len(entry.rsplit("-", 1)[1]) == 6
    assert sorted(p.name for p in (zoo_dir / entry).iterdir()) == ["README.md", "checkpoints", "config.json", "metrics.jsonl", "model.safetensors"]
    model = zoo.load("tiny-ref", zoo_dir=zoo_dir)
    saved = load_file(str(run_dir / "model.safetensors"))
    assert all(torch.equal(p, saved[n]) for n, p in model.named_parameters())
    step0 = zoo.load(f"{entry}@step0", zoo_dir=zoo_dir)
    assert torch.equal(step0.W_E, load_file(str(run_dir / "checkpoints/step0.safetensors"))["embed.W_E"])
    assert torch.equal(zoo.load(f"{entry}@final", zoo_dir=zoo_dir).W_E, model.W_E)
    with pytest.raises(zoo.ZooError, match=r"no snapshot at step 5; it has steps \[0, 2, 6, 13, 32\]"):
        zoo.load(f"{entry}@step5", zoo_dir=zoo_dir)


def test_recorded_metrics_match_a_fresh_evaluation(run_dir, zoo_dir):
    entry = zoo.publish(run_dir, zoo_dir=zoo_dir)
    info = zoo.card(entry, zoo_dir=zoo_dir)
    model = zoo.load(entry, zoo_dir=zoo_dir)
    fresh = make_task(runs.load_run_config(zoo_dir / entry)).evaluate(lambda t: last_logits(model, t))
    assert fresh["seen_test_acc"] == info["summary"]["seen_test_acc"]
    assert fresh["pairs"]["4,3"]["inferential"] == info["summary"]["acc_43_inferential"]
    assert info["snapshots"] == [0, 2, 6, 13, 32] and info["config"]["init"]["gamma"] == 0.8
    assert info["provenance"]["torch"] == torch.__version__


def test_list_filters_and_missing_metrics_are_null(run_dir, zoo_dir, tmp_path):
    zoo.publish(run_dir, zoo_dir=zoo_dir)
    other = tmp_path / "other"
    train(build_cfg(**{"init.gamma": 0.5}), other, quiet=True)
    (other / "metrics.jsonl").write_text("")  # a run whose metrics were lost
    zoo.publish(other, zoo_dir=zoo_dir)
    table = zoo.list(zoo_dir=zoo_dir)
    assert len(table[table.zoo_dir == str(zoo_dir)]) == 2
    assert set(table.zoo_dir) <= {str(zoo_dir), str(zoo.store.SHIPPED)}  # the (empty) user zoo adds nothing

    def rows(**filters):  # this zoo's rows (the shipped entries have gamma 0.5 and 0.8 too)
        table = zoo.list(zoo_dir=zoo_dir, **filters)
        return table[table.zoo_dir == str(zoo_dir)]

    def here(**filters):
        return list(rows(**filters)["gamma"])

    assert here(gamma=0.5) == [0.5]
    assert here(gamma="0.8") == [0.8]
    assert 0.7 - 0.2 != 0.5 and here(gamma=0.7 - 0.2) == [0.5]  # float arithmetic still matches
    assert here(gamma=0.5000001) == []
    assert list(rows(task="anchor", arch="transformer")["arch"]) == ["transformer"] * 2
    row = rows(gamma=0.5).iloc[0]
    assert pd.isna(row["seen_test_acc"]) and pd.isna(row["verdict_43"])  # pandas' missing marker, not a number
    index = json.loads((zoo_dir / "index.json").read_text())
    assert all(e["summary"]["acc_43_symmetric"] is None for e in index["entries"].values() if e["summary"]["gamma"] == 0.5)


@pytest.mark.parametrize("victim", ["model.safetensors", "config.json", "checkpoints/step2.safetensors", "metrics.jsonl"])
def test_one_flipped_byte_is_refused_naming_the_file(run_dir, zoo_dir, victim):
    entry = zoo.publish(run_dir, zoo_dir=zoo_dir)
    path = zoo_dir / entry / victim
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(zoo.ZooError, match=f"file {victim} fails its sha256 check"):
        zoo.load(entry, zoo_dir=zoo_dir)
    assert zoo.verify(entry, zoo_dir=zoo_dir)[entry].endswith("refusing to load")


@pytest.mark.parametrize("bad", ["../escape", "/abs/path", "a/b", "..", "x\\y", ""])
def test_ids_that_would_escape_the_zoo_are_rejected(run_dir, zoo_dir, bad):
    with pytest.raises(zoo.ZooError, match="invalid zoo id"):
        zoo.publish(run_dir, id=bad, zoo_dir=zoo_dir)
    assert not zoo_dir.exists() or not any(p.name != ".lock" for p in zoo_dir.iterdir())


def test_unknown_id_suggests_the_three_closest(run_dir, zoo_dir):
    for i in range(4):
        zoo.publish(run_dir, id=f"tiny-{i}", zoo_dir=zoo_dir)
    with pytest.raises(zoo.ZooError) as e:
        zoo.load("tiny-7", zoo_dir=zoo_dir)
    assert "unknown zoo id or alias 'tiny-7'; closest:" in str(e.value)
    assert len(str(e.value).split("closest: ")[1].split(", ")) == 3


def test_second_publish_of_an_id_is_an_error_and_leaves_no_debris(run_dir, zoo_dir):
    zoo.publish(run_dir, id="once", zoo_dir=zoo_dir)
    with pytest.raises(zoo.ZooError, match="already published"):
        zoo.publish(run_dir, id="once", zoo_dir=zoo_dir)
    assert sorted(p.name for p in zoo_dir.iterdir()) == [".lock", "index.json", "once"]


def test_two_processes_publishing_the_same_id(run_dir, zoo_dir):
    script = textwrap.dedent(f"""
        import sys, zoo
        try:
            zoo.publish({str(run_dir)!r}, id="race", zoo_dir={str(zoo_dir)!r})
            print("published")
        except zoo.ZooError as e:
            print("refused:", e)
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert outs[0] == "published" and outs[1].startswith("refused:") and "already published" in outs[1]
    index = json.loads((zoo_dir / "index.json").read_text())
    assert list(index["entries"]) == ["race"]
    assert sorted(p.name for p in zoo_dir.iterdir()) == [".lock", "index.json", "race"]
    assert zoo.verify("race", zoo_dir=zoo_dir) == {"race": "ok"}


def test_float16_snapshots_halve_and_still_load(run_dir, zoo_dir):
    entry = zoo.publish(run_dir, id="half", zoo_dir=zoo_dir, snapshot_dtype="float16")
    snap = load_file(str(zoo_dir / entry / "checkpoints/step2.safetensors"))
    assert all(t.dtype == torch.float16 for t in snap.values())
    model = zoo.load("half@step2", zoo_dir=zoo_dir)
    assert model.W_E.dtype == torch.float32
    full = load_file(str(run_dir / "checkpoints/step2.safetensors"))["embed.W_E"]
    torch.testing.assert_close(model.W_E, full, rtol=1e-3, atol=1e-4)
    assert torch.equal(zoo.load("half", zoo_dir=zoo_dir).W_E, load_file(str(run_dir / "model.safetensors"))["embed.W_E"])


def test_publish_without_snapshots_is_noted_in_the_card(run_dir, zoo_dir):
    entry = zoo.publish(run_dir, id="bare", zoo_dir=zoo_dir, snapshots=False)
    assert not (zoo_dir / entry / "checkpoints").exists()
    assert "not published" in zoo.card("bare", zoo_dir=zoo_dir)["card"]
    with pytest.raises(zoo.ZooError, match="no snapshot at step 2"):
        zoo.load("bare@step2", zoo_dir=zoo_dir)
    half = zoo.publish(run_dir, id="half16", zoo_dir=zoo_dir, snapshot_dtype="float16")
    assert "stored in float16" in zoo.card(half, zoo_dir=zoo_dir)["card"]


def test_publish_only_some_snapshots_names_them_and_refuses_a_step_the_run_lacks(run_dir, zoo_dir, capsys):
    entry = zoo.publish(run_dir, id="some", zoo_dir=zoo_dir, snapshots=(0, 32))  # the tiny run snapshots 0, 2, 6, 13, 32
    assert sorted(p.name for p in (zoo_dir / entry / "checkpoints").iterdir()) == ["step0.safetensors", "step32.safetensors"]
    assert "Training snapshots published at steps 0, 32 only (the run wrote 5)." in zoo.card("some", zoo_dir=zoo_dir)["card"]
    assert zoo.verify("some", zoo_dir=zoo_dir) == {"some": "ok"}
    with pytest.raises(zoo.ZooError, match=r"no snapshot at step 2; it has steps \[0, 32\]"):
        zoo.load("some@step2", zoo_dir=zoo_dir)
    with pytest.raises(zoo.ZooError, match=r"has no snapshot at step 5; its snapshots are at steps \[0, 2, 6, 13, 32\]"):
        zoo.publish(run_dir, id="wrong", zoo_dir=zoo_dir, snapshots=(0, 5))
    assert not (zoo_dir / "wrong").exists() and not list(zoo_dir.glob(".tmp-*"))
    assert main(["zoo", "publish", str(run_dir), "--id", "cli-some", "--snapshot-steps", "2,13", "--zoo", str(zoo_dir)]) == 0
    assert sorted(p.name for p in (zoo_dir / "cli-some" / "checkpoints").iterdir()) == ["step13.safetensors", "step2.safetensors"]
    capsys.readouterr()
    for bad in ("2,x", "-1"):
        with pytest.raises(SystemExit) as stop:
            main(["zoo", "publish", str(run_dir), "--id", "cli-bad", "--snapshot-steps", bad, "--zoo", str(zoo_dir)])
        assert stop.value.code == 2 and not (zoo_dir / "cli-bad").exists()
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "not a step" in err


def test_pre_ln_entry_loads_with_plain_transformer_lens(tmp_path, zoo_dir):
    """Without mechinit: config.json + safetensors + TL's own HookedTransformer."""
    run = tmp_path / "pre"
    train(build_cfg(**{"model.norm": "pre", "train.epochs": 1}), run, quiet=True)
    entry = zoo.publish(run, zoo_dir=zoo_dir)
    script = textwrap.dedent(f"""
        import json, warnings, torch
        from safetensors.torch import load_file
        from transformer_lens import HookedTransformer, HookedTransformerConfig
        warnings.simplefilter("ignore")
        folder = {str(zoo_dir / entry)!r}
        m = json.load(open(folder + "/config.json"))["model"]
        cfg = HookedTransformerConfig(n_layers=m["n_layers"], d_model=m["d_model"], d_head=m["d_head"], n_heads=m["n_heads"],
            d_mlp=m["d_mlp"], d_vocab=m["d_vocab"], n_ctx=m["n_ctx"], act_fn=m["act_fn"], eps=m["ln_eps"], normalization_type="LN")
        model = HookedTransformer(cfg)
        missing, unexpected = model.load_state_dict(load_file(folder + "/model.safetensors"), strict=False)
        assert not unexpected and all(k.endswith(("mask", "IGNORE")) for k in missing), (missing, unexpected)
        tokens = torch.tensor([[30, 41, 4, 3, 55, 60, 71, 82, 93]])
        print(model(tokens)[0, -1].argmax().item())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    model = zoo.load(entry, zoo_dir=zoo_dir)
    assert int(out.stdout.strip()) == model(torch.tensor([[30, 41, 4, 3, 55, 60, 71, 82, 93]]))[0, -1].argmax().item()


def test_cli_zoo_commands(run_dir, zoo_dir, capsys):
    assert main(["zoo", "publish", str(run_dir), "--alias", "t", "--zoo", str(zoo_dir)]) == 0
    entry = capsys.readouterr().out.strip()
    assert main(["zoo", "list", "--where", "gamma=0.8", "--zoo", str(zoo_dir)]) == 0
    assert entry in capsys.readouterr().out
    assert main(["zoo", "show", "t", "--zoo", str(zoo_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == entry
    assert main(["zoo", "verify", "--zoo", str(zoo_dir)]) == 0
    assert f"{entry}: ok" in capsys.readouterr().out
    (zoo_dir / entry / "metrics.jsonl").write_text("tampered\n")
    assert main(["zoo", "verify", "t", "--zoo", str(zoo_dir)]) == 1
    assert main(["zoo", "show", "nope", "--zoo", str(zoo_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown zoo id or alias 'nope'" in err[0]


def test_train_publish_flag(tmp_path, zoo_dir, capsys):
    assert main(["train", "--preset", "tiny", "--set", "train.epochs=1", "--out", str(tmp_path / "r"), "--quiet", "--publish", "--zoo", str(zoo_dir)]) == 0
    published = capsys.readouterr().out.strip().splitlines()[1]
    assert published.startswith("published: anchor-post-L2")
    table = zoo.list(zoo_dir=zoo_dir)
    assert len(table[table.zoo_dir == str(zoo_dir)]) == 1


def test_ids_and_aliases_share_one_namespace(run_dir, zoo_dir):
    """An alias can never hide an id, and an id can never be an alias (issue 13, item 1)."""
    first = zoo.publish(run_dir, id="e-one", zoo_dir=zoo_dir)
    with pytest.raises(ZooError, match="is a zoo id"):
        zoo.publish(run_dir, id="e-two", aliases=("e-one",), zoo_dir=zoo_dir)
    zoo.publish(run_dir, id="e-three", aliases=("three",), zoo_dir=zoo_dir)
    with pytest.raises(ZooError, match="is already an alias"):
        zoo.publish(run_dir, id="three", zoo_dir=zoo_dir)
    with pytest.raises(ZooError, match="is a zoo id"):  # a shipped id cannot become a user alias either
        zoo.publish(run_dir, id="e-four", aliases=(zoo.resolve("small-init").id,), zoo_dir=zoo_dir)
    with pytest.raises(ZooError, match="already an alias"):  # nor can a shipped alias become a user id
        zoo.publish(run_dir, id="small-init", zoo_dir=zoo_dir)
    assert zoo.resolve("e-one", zoo_dir=zoo_dir).id == first and zoo.resolve("three", zoo_dir=zoo_dir).id == "e-three"
    assert not list(zoo_dir.glob(".tmp-*")) and not (zoo_dir / "e-two").exists()


def test_the_zoo_trusts_only_what_its_index_lists(run_dir, zoo_dir, tmp_path):
    import shutil

    entry = zoo.publish(run_dir, id="listed", zoo_dir=zoo_dir)
    forged = zoo_dir / entry / "checkpoints" / "step50.safetensors"
    shutil.copy(zoo_dir / entry / "checkpoints" / "step2.safetensors", forged)
    assert 50 not in zoo.load_target("listed", zoo_dir=zoo_dir).snapshots  # loading ignores it
    assert "files not in the index" in zoo.verify("listed", zoo_dir=zoo_dir)["listed"] and "step50" in zoo.verify("listed", zoo_dir=zoo_dir)["listed"]
    # `show` checks hashes
    config = zoo_dir / entry / "config.json"
    config.write_text(config.read_text().replace('"seed": 0', '"seed": 7'))
    with pytest.raises(ZooError, match="fails its sha256 check"):
        zoo.card("listed", zoo_dir=zoo_dir)
    # ids read from the index are input too
    index = json.loads((zoo_dir / "index.json").read_text())
    index["entries"]["../../elsewhere"] = index["entries"]["listed"]
    (zoo_dir / "index.json").write_text(json.dumps(index))
    with pytest.raises(ZooError, match="invalid zoo name"):
        zoo.resolve("listed", zoo_dir=zoo_dir)
    (zoo_dir / "index.json").write_text("[]")
    with pytest.raises(ZooError, match="is not a zoo index"):
        zoo.resolve("listed", zoo_dir=zoo_dir)


def test_a_run_whose_weights_do_not_load_is_never_published(run_dir, zoo_dir, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    (bad / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ZooError, match="weights do not load"):
        zoo.publish(bad, id="bad", zoo_dir=zoo_dir)
    assert not (zoo_dir / "bad").exists() and not list(zoo_dir.glob(".tmp-*")) if zoo_dir.exists() else True


def test_an_alias_moves_to_another_entry_of_its_zoo_and_never_onto_an_id(run_dir, zoo_dir, capsys):
    zoo.publish(run_dir, id="e-old", aliases=("tiny-ref",), zoo_dir=zoo_dir)
    zoo.publish(run_dir, id="e-new", zoo_dir=zoo_dir)
    assert zoo.point_alias("tiny-ref", "e-new", zoo_dir=zoo_dir) == "e-old"
    assert zoo.resolve("tiny-ref", zoo_dir=zoo_dir).id == "e-new" and zoo.resolve("e-old", zoo_dir=zoo_dir).id == "e-old"
    assert zoo.point_alias("fresh", "e-old", zoo_dir=zoo_dir) is None
    with pytest.raises(ZooError, match="no entry e-none in"):
        zoo.point_alias("tiny-ref", "e-none", zoo_dir=zoo_dir)
    with pytest.raises(ZooError, match="is a zoo id"):
        zoo.point_alias("e-old", "e-new", zoo_dir=zoo_dir)
    with pytest.raises(ZooError, match="already points at"):  # a shipped alias cannot be taken over by a user zoo
        zoo.point_alias("small-init", "e-new", zoo_dir=zoo_dir)
    assert zoo.resolve("tiny-ref", zoo_dir=zoo_dir).id == "e-new"  # the refusals changed nothing
    assert main(["zoo", "alias", "tiny-ref", "e-old", "--zoo", str(zoo_dir)]) == 0
    assert capsys.readouterr().out.strip() == "tiny-ref: e-new -> e-old"
    assert main(["zoo", "alias", "tiny-ref", "e-none", "--zoo", str(zoo_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no entry e-none" in err


def test_publish_writes_todays_card_over_the_runs_old_one(run_dir, zoo_dir, tmp_path):
    import shutil

    old = tmp_path / "old-run"
    shutil.copytree(run_dir, old)
    (old / "README.md").write_text("# a card written by an older mechinit\n")
    entry = zoo.publish(old, zoo_dir=zoo_dir, description="What this model is.")
    card = (zoo_dir / entry / "README.md").read_text()
    assert "older mechinit" not in card and card.startswith("---\nlibrary_name: mechinit")
    assert "Seeds: `train.seed` 0; initial weights from seed 0, data and batch order from seed 0." in card
    assert card.rstrip().endswith("What this model is.")
