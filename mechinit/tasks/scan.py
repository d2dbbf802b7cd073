"""SCAN (Lake & Baroni, 2018) from its standard files: ``IN: <command> OUT: <actions>`` per line.

``task.split``: ``addprim_turn_left`` (default; the paper's §6 split: "turn left" appears in
training only as the bare primitive, the test set holds the composite commands that use it) or
``simple`` (random 80/20). Files ``tasks_{train,test}_{addprim_turn_left,simple}.txt`` are read
from ``task.data_dir``. Evaluation: exact match of the action sequence on ``test`` (headline) and
on training examples.
"""

from __future__ import annotations

from pathlib import Path

from mechinit.config import ConfigError
from mechinit.tasks.datafiles import data_file
from mechinit.tasks.sequence import Example, SequenceTask

SPLITS = {"addprim_turn_left": "addprim_turn_left", "simple": "simple"}


def read_scan(path: Path) -> list[Example]:
    out = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        if not line.startswith("IN: ") or " OUT: " not in line:
            raise ConfigError(f"{path}:{number} is not a SCAN line ('IN: ... OUT: ...')")
        command, actions = line[4:].split(" OUT: ", 1)
        out.append((tuple(command.split()), tuple(actions.split())))
    return out


class ScanTask(SequenceTask):
    HEADLINE = "exact match on the test file"

    def load(self):
        split = self.cfg.split or "addprim_turn_left"
        if split not in SPLITS:
            raise ConfigError(f"task.split = {split!r} is not allowed for scan; choose one of {list(SPLITS)}")
        self.files = [data_file(self.cfg, f"tasks_{part}_{split}.txt") for part in ("train", "test")]
        return read_scan(self.files[0]), {"test": read_scan(self.files[1])}
