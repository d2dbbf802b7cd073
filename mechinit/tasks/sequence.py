"""Sequence-to-sequence tasks as next-token prediction with a decoder-only model.

An example is ``(input words, output words)``. It becomes one token row
``input <sep> output <eos> <pad>...``; the loss reads every position whose *next* token is an
output token or ``<eos>`` (targets elsewhere are ``IGNORE``). Evaluation decodes greedily from
``input <sep>`` in batches (examples grouped by prompt length, so no position is ever padded before
the answer) and scores exact match of the words up to ``<eos>``, plus the teacher-forced loss.

The :class:`Tokenizer` is word level, built from the training examples only (words first met in an
evaluation set become ``<unk>``); it is saved with the run as ``data.json``. A subclass supplies
``load() -> (train examples, {eval set: examples})`` (setting ``files`` to the files it read) and may
fix its vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

import torch

from mechinit.errors import ConfigError
from mechinit.task_options import ModelSection, TaskSection

PAD, SEP, EOS, UNK = "<pad>", "<sep>", "<eos>", "<unk>"
SPECIALS = (PAD, SEP, EOS, UNK)
IGNORE = -100
Example = tuple[tuple[str, ...], tuple[str, ...]]


@dataclass(frozen=True)
class Tokenizer:
    """Word-level vocabulary; ids are positions in ``words`` (the four specials first)."""

    words: tuple[str, ...]

    @classmethod
    def build(cls, examples: list[Example], fixed: tuple[str, ...] = ()) -> "Tokenizer":
        seen = set(fixed)
        for inp, out in examples:
            seen.update(inp)
            seen.update(out)
        return cls(SPECIALS + tuple(sorted(seen - set(SPECIALS))))

    @cached_property
    def ids(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.words)}

    def encode(self, words) -> list[int]:
        unk = self.ids[UNK]
        return [self.ids.get(w, unk) for w in words]

    def decode(self, ids) -> list[str]:
        return [self.words[i] if i < len(self.words) else UNK for i in ids]  # ids past the vocabulary (d_vocab is larger)

    def __len__(self) -> int:
        return len(self.words)

    def to_dict(self) -> dict:
        return {"words": list(self.words)}


class SequenceTask:
    """Base of the sequence tasks; subclasses define ``load`` and may override ``headline_set``."""

    target_positions = "all"  # the loss reads every output position (see mechinit.training.trainer)
    headline_set = "test"  # the eval set named in progress bars and the model card
    fixed_words: tuple[str, ...] = ()
    files: tuple[Path, ...] = ()  # the data files load() read (recorded in data.json by name, size and sha256)

    def __init__(self, cfg: TaskSection, model_cfg: ModelSection):
        self.cfg, self.model_cfg = cfg, model_cfg
        if model_cfg.arch != "transformer":
            raise ConfigError(f"task {cfg.name} is a sequence task and needs model.arch = 'transformer' (it is {model_cfg.arch!r})")
        train, self.eval_examples = self.load()
        if not train:
            raise ConfigError(f"task {cfg.name} has no training examples")
        self.all_train = train
        self.tokenizer = Tokenizer.build(train, self.fixed_words)
        rows = train + [e for ex in self.eval_examples.values() for e in ex]
        self.max_len = max(len(i) + len(o) + 2 for i, o in rows)
        if model_cfg.d_vocab < len(self.tokenizer):
            raise ConfigError(f"task {cfg.name} has {len(self.tokenizer)} tokens; set model.d_vocab >= {len(self.tokenizer)} (it is {model_cfg.d_vocab})")
        if model_cfg.n_ctx < self.max_len:
            raise ConfigError(f"task {cfg.name} has sequences of {self.max_len} tokens; set model.n_ctx >= {self.max_len} (it is {model_cfg.n_ctx})")

    def load(self) -> tuple[list[Example], dict[str, list[Example]]]:
        raise NotImplementedError

    @property
    def n_train(self) -> int:
        return min(self.cfg.n_train, len(self.all_train))

    def artifacts(self) -> dict:
        """What the run folder keeps in ``data.json``: the tokenizer and the data actually used."""
        from mechinit.tasks.datafiles import file_record

        return {"tokenizer": self.tokenizer.to_dict(), "n_train": self.n_train, "max_len": self.max_len,
                "eval_sets": {k: len(v) for k, v in self.eval_sets().items()},
                "files": [file_record(p) for p in self.files]}

    def token_groups(self) -> dict[str, list[int]]:
        """Token ids of the words met in training inputs and in training outputs (for
        ``embedding_cosine``; a word in both is in both groups)."""
        ins = {w for i, _ in self.all_train for w in i}
        outs = {w for _, o in self.all_train for w in o}
        return {"input words": sorted(self.tokenizer.encode(ins)), "output words": sorted(self.tokenizer.encode(outs))}

    # ------------------------------------------------------------------ tensors
    def encode(self, examples: list[Example]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token rows ``[batch pos]`` (padded to ``max_len``) and their next-token targets."""
        t = self.tokenizer
        tokens = torch.full((len(examples), self.max_len), t.ids[PAD], dtype=torch.long)
        targets = torch.full((len(examples), self.max_len), IGNORE, dtype=torch.long)
        for row, (inp, out) in enumerate(examples):
            ids = t.encode(inp) + [t.ids[SEP]] + t.encode(out) + [t.ids[EOS]]
            tokens[row, : len(ids)] = torch.tensor(ids)
            start = len(inp)  # the <sep> position predicts the first output token
            targets[row, start : len(ids) - 1] = torch.tensor(ids[start + 1 :])
        return tokens, targets

    def train_examples(self, seed: int) -> list[Example]:
        order = torch.randperm(len(self.all_train), generator=torch.Generator().manual_seed(seed))
        return [self.all_train[i] for i in order[: self.n_train].tolist()]

    def train_set(self, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.encode(self.train_examples(seed))

    def eval_sets(self) -> dict[str, list[Example]]:
        """Each evaluation set capped at ``n_eval`` examples, plus ``n_eval_train`` training examples
        (``train``), all chosen with ``task.eval_seed``; chosen once per task object."""
        return self._eval_sets

    @cached_property
    def _eval_sets(self) -> dict[str, list[Example]]:
        gen = torch.Generator().manual_seed(self.cfg.eval_seed)
        out = {}
        for name, examples in {**self.eval_examples, "train": self.all_train}.items():
            cap = self.cfg.n_eval_train if name == "train" else self.cfg.n_eval
            pick = torch.randperm(len(examples), generator=gen)[:cap].sort().values.tolist()
            out[name] = [examples[i] for i in pick]
        return out

    # --------------------------------------------------------------- evaluation
    @torch.no_grad()
    def decode(self, logits_fn: Callable[[torch.Tensor], torch.Tensor], inputs: list[tuple[str, ...]],
               max_new: int, device: str = "cpu") -> list[tuple[str, ...]]:
        """Greedy decoding of every input, batched by prompt length; output words up to ``<eos>``."""
        t = self.tokenizer
        results: list[tuple[str, ...] | None] = [None] * len(inputs)
        by_length: dict[int, list[int]] = {}
        for i, inp in enumerate(inputs):
            by_length.setdefault(len(inp), []).append(i)
        for length, rows in by_length.items():
            tokens = torch.tensor([t.encode(inputs[i]) + [t.ids[SEP]] for i in rows], device=device)
            done = torch.zeros(len(rows), dtype=torch.bool, device=device)
            steps = min(max_new, self.model_cfg.n_ctx - tokens.shape[1])
            for _ in range(steps):
                nxt = logits_fn(tokens)[:, -1].argmax(-1)
                nxt = torch.where(done, torch.full_like(nxt, t.ids[PAD]), nxt)
                tokens = torch.cat([tokens, nxt[:, None]], 1)
                done |= nxt == t.ids[EOS]
                if bool(done.all()):
                    break
            for row, generated in zip(rows, tokens[:, length + 1 :].tolist()):
                words = t.decode(generated)
                results[row] = tuple(words[: words.index(EOS)]) if EOS in words else tuple(w for w in words if w != PAD) + ("<no-eos>",)
        return results  # type: ignore[return-value]

    @cached_property
    def _encoded_eval(self) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        return {name: self.encode(examples) for name, examples in self.eval_sets().items()}

    @torch.no_grad()
    def evaluate(self, logits_fn: Callable[[torch.Tensor], torch.Tensor], device: str = "cpu", chunk: int = 1024) -> dict:
        """``{"exact_match": {set: acc}, "loss": {set: teacher-forced loss}, "headline": acc of
        headline_set}`` where ``logits_fn(tokens)`` gives logits at every position."""
        exact, losses = {}, {}
        for name, examples in self.eval_sets().items():
            tokens, targets = self._encoded_eval[name]
            total, count = 0.0, 0
            for tk, tg in zip(tokens.split(chunk), targets.split(chunk)):
                logits = logits_fn(tk.to(device)).float().cpu()
                total += float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), tg.flatten(), ignore_index=IGNORE, reduction="sum"))
                count += int((tg != IGNORE).sum())
            losses[name] = total / count
            max_new = max(len(o) for _, o in examples) + 1
            predicted = self.decode(logits_fn, [i for i, _ in examples], max_new, device)
            exact[name] = sum(p == o for p, (_, o) in zip(predicted, examples)) / len(examples)
        return {"exact_match": exact, "loss": losses, "headline": exact.get(self.headline_set)}

    def verdict(self, metrics: dict) -> str:
        parts = [f"{k} {v:.2f}" for k, v in metrics["exact_match"].items()]
        return "exact match: " + ", ".join(parts)
