"""Register the example task and probe from user code, then train and probe through the CLI.

usage: python examples/extension_demo.py OUT_DIR
"""

import sys
from pathlib import Path

import attention_entropy
from three_anchor import ThreeAnchorTask

from mechinit import probes
from mechinit.cli import main
from mechinit.tasks import register

register("three-anchor", ThreeAnchorTask)
probes.register("attention_entropy", attention_entropy.run, attention_entropy.Config, attention_entropy.hooks,
                attention_entropy.TASKS, attention_entropy.NEEDS_ATTENTION)

out = Path(sys.argv[1])
train = ["train", "--preset", "tiny", "--set", "task.name=three-anchor", "--set", "task.n_train=8192", "--set", "train.epochs=8",
         "--set", "train.lr=3e-3", "--out", str(out / "run"), "--quiet"]
probe = ["probe", str(out / "run"), "--probe", "attention_entropy", "--probe", "embedding_cosine",
         "--set", "embedding_cosine.groups=anchors:1,2,3,4;keys:30,40,50,60,70", "--out", str(out / "probe"), "--quiet"]
sys.exit(main(train) or main(probe))
