import pytest
import torch
from safetensors.torch import load_file

from mechinit import runs
from mechinit.config import ConfigError
from mechinit.training.ensemble import ensemble_key, train_ensemble
from mechinit.training.trainer import train
from tests.conftest import build_cfg


def test_each_member_matches_the_same_config_trained_alone(tmp_path):
    cfgs = [
        build_cfg(**{"train.seed": 0, "init.gamma": 0.5, "train.threads": 1}),
        build_cfg(**{"train.seed": 1, "init.gamma": 0.9, "train.lr": 3e-3, "train.weight_decay": 0.1, "train.threads": 1}),
        build_cfg(**{"train.seed": 2, "init.gamma": 0.7, "train.grad_clip": 0.05, "train.threads": 1}),  # clipping active
    ]
    rows = train_ensemble(cfgs, [tmp_path / f"ens{k}" for k in range(3)])
    for k, cfg in enumerate(cfgs):
        row = train(cfg, tmp_path / str(k), quiet=True)
        alone = load_file(str(tmp_path / str(k) / "model.safetensors"))
        member = load_file(str(tmp_path / f"ens{k}" / "model.safetensors"))
        assert alone.keys() == member.keys()
        for name, tensor in alone.items():
            torch.testing.assert_close(member[name], tensor, rtol=1e-4, atol=2e-5, msg=f"member {k} {name}")
        # the member's run folder is a complete, normal run folder with the same steps and metrics
        alone_rows, member_rows = runs.read_metrics(tmp_path / str(k)), runs.read_metrics(tmp_path / f"ens{k}")
        assert [r["step"] for r in member_rows] == [r["step"] for r in alone_rows]
        assert member_rows[-1]["train_loss"] == pytest.approx(alone_rows[-1]["train_loss"], rel=1e-3)
        assert rows[k]["seen_test_acc"] == pytest.approx(row["seen_test_acc"], abs=0.02)
        assert runs.snapshot_steps_on_disk(tmp_path / f"ens{k}") == runs.snapshot_steps_on_disk(tmp_path / str(k))
        assert (tmp_path / f"ens{k}" / "README.md").is_file()
        provenance = runs.read_json(tmp_path / f"ens{k}" / "config.json")["provenance"]
        assert len(provenance["trained_with"]["ensemble"]) == 3
        assert runs.read_json(tmp_path / str(k) / "config.json")["provenance"]["trained_with"] is None
    assert not torch.allclose(load_file(str(tmp_path / "ens0" / "model.safetensors"))["embed.W_E"],
                              load_file(str(tmp_path / "ens1" / "model.safetensors"))["embed.W_E"])


def test_members_must_share_the_shape(tmp_path):
    with pytest.raises(ConfigError, match="must share the model config"):
        train_ensemble([build_cfg(), build_cfg(**{"model.d_model": 48})], [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(ConfigError, match="must share train.batch_size"):
        train_ensemble([build_cfg(), build_cfg(**{"train.batch_size": 64})], [tmp_path / "a", tmp_path / "b"])
    assert not (tmp_path / "a").exists()
    assert ensemble_key(build_cfg(**{"train.lr": 0.1, "train.seed": 3})) == ensemble_key(build_cfg())
    assert ensemble_key(build_cfg(**{"model.n_layers": 3})) != ensemble_key(build_cfg())
