"""PrOntoQA-style multi-hop questions (after Saparov & He, 2023), written from the published description.

An example states a chain of ``task.chain_length`` fictional "every X is a Y" rules, the fact that
an entity is the first concept of the chain, two distractor rules among other concepts, all in a
shuffled order, and asks whether the entity is some concept: the last one of the chain (answer
``True``, reachable in ``chain_length`` hops) or a distractor concept (``False``, not derivable;
closed world). Answers are balanced, so chance is 50%. The model is trained by next-token
prediction on the whole answer; evaluation is exact match of the generated answer (``True`` /
``False``). Simplifications against the original: no negated rules, no properties, one query form.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mechinit.errors import ConfigError
from mechinit.task_options import TaskOptions
from mechinit.tasks.sequence import Example, SequenceTask

CONCEPTS = ("wumpus", "yumpus", "zumpus", "dumpus", "rompus", "numpus", "tumpus", "vumpus", "impus", "jompus",
            "gorpus", "shumpus", "lempus", "sterpus", "grimpus", "lorpus", "brimpus", "timpus")
ENTITIES = ("Alex", "Sam", "Max", "Fae", "Rex", "Wren", "Polly", "Stella", "Sally", "Jack")
DISTRACTORS = 2
TRAIN_SEED = 11


def make_example(chain_length: int, gen: torch.Generator) -> Example:
    order = torch.randperm(len(CONCEPTS), generator=gen).tolist()
    chain = [CONCEPTS[i] for i in order[: chain_length + 1]]
    others = [CONCEPTS[i] for i in order[chain_length + 1 : chain_length + 1 + 2 * DISTRACTORS]]
    entity = ENTITIES[int(torch.randint(len(ENTITIES), (1,), generator=gen))]
    facts = [("Every", a, "is", "a", b, ".") for a, b in zip(chain, chain[1:])]
    facts += [("Every", others[2 * i], "is", "a", others[2 * i + 1], ".") for i in range(DISTRACTORS)]
    facts.append((entity, "is", "a", chain[0], "."))
    facts = [facts[i] for i in torch.randperm(len(facts), generator=gen).tolist()]
    true = bool(torch.rand(1, generator=gen) < 0.5)
    query = chain[-1] if true else others[int(torch.randint(len(others), (1,), generator=gen))]
    words = tuple(w for fact in facts for w in fact) + ("Is", entity, "a", query, "?")
    return words, ("True" if true else "False",)


MOST_HOPS = len(CONCEPTS) - 1 - 2 * DISTRACTORS


@dataclass(frozen=True)
class ProntoqaOptions(TaskOptions):
    """``task.chain_length``: rules in the chain (hops from the entity's concept to the answer)."""

    LATER = ("chain_length",)
    chain_length: int = 3

    def __post_init__(self):
        if not 1 <= self.chain_length <= MOST_HOPS:
            raise ConfigError(f"task.chain_length = {self.chain_length!r} must be in 1..{MOST_HOPS} ({len(CONCEPTS)} concepts)")


class ProntoqaTask(SequenceTask):
    HEADLINE = "True/False accuracy on new examples (chance 0.5)"
    Options = ProntoqaOptions

    def load(self):
        """Training examples from a fixed seed (the run's seed picks and orders them), test examples
        from ``task.eval_seed``."""
        hops = self.cfg.options.chain_length
        gen = torch.Generator().manual_seed(TRAIN_SEED)
        train = [make_example(hops, gen) for _ in range(max(self.cfg.n_train, self.cfg.n_eval_train))]
        test_gen = torch.Generator().manual_seed(self.cfg.eval_seed)
        return train, {"test": [make_example(hops, test_gen) for _ in range(self.cfg.n_eval)]}
