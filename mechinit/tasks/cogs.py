"""COGS (Kim & Linzen, 2020) from its standard TSV files: ``sentence <TAB> logical form <TAB> case``.

Training on ``train.tsv``; in-distribution evaluation on ``test.tsv`` (``test``, the headline) and,
when ``gen.tsv`` is in ``task.data_dir``, out-of-distribution evaluation on it (``gen``). Without
``gen.tsv`` the run has no ``gen`` numbers at all (they are absent, never zero).
"""

from __future__ import annotations

from pathlib import Path

from mechinit.errors import ConfigError
from mechinit.tasks.datafiles import DataDirOptions, data_file, data_lines
from mechinit.tasks.sequence import Example, SequenceTask


def read_cogs(path: Path) -> list[Example]:
    out = []
    for number, line in data_lines(path):
        cols = line.split("\t")
        if len(cols) != 3:
            raise ConfigError(f"{path}:{number} has {len(cols)} tab-separated columns; COGS rows have 3")
        sentence, form = cols[0].split(), cols[1].split()
        if not sentence or not form:
            raise ConfigError(f"{path}:{number} has an empty {'sentence' if not sentence else 'logical form'}")
        out.append((tuple(sentence), tuple(form)))
    return out


class CogsTask(SequenceTask):
    HEADLINE = "exact match on test.tsv (in distribution)"
    Options = DataDirOptions

    def load(self):
        train_file, test_file = data_file(self.cfg, "train.tsv"), data_file(self.cfg, "test.tsv")
        gen = data_file(self.cfg, "gen.tsv", required=False)
        self.files = (train_file, test_file) + ((gen,) if gen is not None else ())
        sets = {"test": read_cogs(test_file)}
        if gen is not None:
            sets["gen"] = read_cogs(gen)
        return read_cogs(train_file), sets
