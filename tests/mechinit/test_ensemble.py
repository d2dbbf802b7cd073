import pytest
import torch
from safetensors.torch import load_file

from mechinit.config import ConfigError
from mechinit.ensemble import train_ensemble
from mechinit.train import train
from tests.conftest import build_cfg


def test_each_member_matches_the_same_config_trained_alone(tmp_path):
    cfgs = [
        build_cfg(**{"train.seed": 0, "init.gamma": 0.5, "train.threads": 1}),
        build_cfg(**{"train.seed": 1, "init.gamma": 0.9, "train.lr": 3e-3, "train.weight_decay": 0.1, "train.threads": 1}),
        build_cfg(**{"train.seed": 2, "init.gamma": 0.7, "train.grad_clip": 0.05, "train.threads": 1}),  # clipping active
    ]
    members = train_ensemble(cfgs)
    for k, cfg in enumerate(cfgs):
        train(cfg, tmp_path / str(k), quiet=True)
        alone = load_file(str(tmp_path / str(k) / "model.safetensors"))
        for name, tensor in alone.items():
            torch.testing.assert_close(members[k][name], tensor, rtol=1e-4, atol=2e-5, msg=f"member {k} {name}")
    assert not torch.allclose(members[0]["embed.W_E"], members[1]["embed.W_E"])


def test_members_must_share_the_shape():
    with pytest.raises(ConfigError, match="must share the model config"):
        train_ensemble([build_cfg(), build_cfg(**{"model.d_model": 48})])
    with pytest.raises(ConfigError, match="must share train.batch_size"):
        train_ensemble([build_cfg(), build_cfg(**{"train.batch_size": 64})])
