"""SCAN (Lake & Baroni, 2018) from its standard files: ``IN: <command> OUT: <actions>`` per line.

``task.split`` names one of SCAN's published splits: ``addprim_turn_left`` (default; the paper's §6
split: "turn left" appears in training only as the bare primitive, the test set holds the composite
commands that use it), ``addprim_jump`` (the same for "jump"), ``simple`` (random 80/20),
``length`` (short action sequences in training, long ones in test), the template splits
(``template_around_right``, ``template_jump_around_right``, ``template_opposite_right``,
``template_right``) and the size and extra-example variations (``simple_p{N}``,
``addprim_complex_jump_num{N}_rep{R}``). Files ``tasks_train_{split}.txt`` and
``tasks_test_{split}.txt`` are read from ``task.data_dir`` (copy them there from the SCAN repository's
split folders). Evaluation: exact match of the action sequence on ``test`` (headline) and
on training examples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mechinit.errors import ConfigError
from mechinit.tasks.datafiles import DataDirOptions, data_file, data_lines
from mechinit.tasks.sequence import Example, SequenceTask

SPLITS = ("addprim_turn_left", "addprim_jump", "simple", "length", "template_around_right", "template_jump_around_right",
          "template_opposite_right", "template_right")
SPLIT_FAMILIES = (r"simple_p\d+", r"addprim_complex_jump_num\d+_rep\d+")  # size and extra-example variations


@dataclass(frozen=True)
class ScanOptions(DataDirOptions):
    """``task.data_dir`` and ``task.split`` (null: ``addprim_turn_left``)."""

    LATER = ("data_dir", "split")
    split: str | None = None

    def __post_init__(self):
        if self.split is not None and self.split not in SPLITS and not any(re.fullmatch(f, self.split) for f in SPLIT_FAMILIES):
            raise ConfigError(f"task.split = {self.split!r} is not a SCAN split; choose one of {list(SPLITS)} "
                              "or simple_p{N}, addprim_complex_jump_num{N}_rep{R}")


def read_scan(path: Path) -> list[Example]:
    """The examples of a SCAN file; a line that is not ``IN: <command> OUT: <actions>`` with one
    ``OUT:``, a non-empty command and non-empty actions is a :class:`ConfigError` naming the line."""
    out = []
    for number, line in data_lines(path):
        if not line.startswith("IN: ") or line.count(" OUT: ") != 1:
            found = "two ' OUT: '" if line.count(" OUT: ") > 1 else "not 'IN: <command> OUT: <actions>'"
            raise ConfigError(f"{path}:{number} is not a SCAN line ({found})")
        command, actions = (part.split() for part in line[4:].split(" OUT: "))
        if not command or not actions:
            raise ConfigError(f"{path}:{number} is not a SCAN line (an empty {'command' if not command else 'action sequence'})")
        out.append((tuple(command), tuple(actions)))
    return out


class ScanTask(SequenceTask):
    HEADLINE = "exact match on the test file"
    Options = ScanOptions

    def load(self):
        split = self.cfg.options.split or "addprim_turn_left"
        self.files = tuple(data_file(self.cfg, f"tasks_{part}_{split}.txt") for part in ("train", "test"))
        return read_scan(self.files[0]), {"test": read_scan(self.files[1])}
