"""Addition ``a + b = c`` (App F, after Hu et al. 2024's case-based intervention).

``a, b`` in 0..999; every pair with both ``a`` and ``b`` in 400..600 is held out for ``test``, the
rest is the training pool, from which ``task.n_train`` examples are drawn per seed. Numbers are
written digit by digit, most significant first (the paper does not say; this is our choice):
input ``4 1 2 + 3 9``, output ``4 5 1``. Headline: exact match on ``test``.
"""

from __future__ import annotations

import torch

from mechinit.tasks.sequence import Example, SequenceTask

LOW, HIGH, HOLD_LOW, HOLD_HIGH = 0, 999, 400, 600
POOL_SEED = 7


def example(a: int, b: int) -> Example:
    return (tuple(str(a)) + ("+",) + tuple(str(b)), tuple(str(a + b)))


def held_out(a: int, b: int) -> bool:
    return HOLD_LOW <= a <= HOLD_HIGH and HOLD_LOW <= b <= HOLD_HIGH


class AdditionTask(SequenceTask):
    HEADLINE = "exact match on a, b in 400..600"
    fixed_words = tuple("0123456789") + ("+",)

    def load(self):
        """A training pool of ``max(n_train, n_eval_train)`` pairs outside the held-out square and
        ``n_eval`` test pairs inside it, drawn once from fixed seeds (the run's seed then picks
        and orders its training examples from the pool)."""
        gen = torch.Generator().manual_seed(POOL_SEED)
        want, pool, seen = max(self.cfg.n_train, self.cfg.n_eval_train), [], set()
        while len(pool) < want:
            a, b = torch.randint(LOW, HIGH + 1, (2, 4 * want), generator=gen).tolist()
            for x, y in zip(a, b):
                if not held_out(x, y) and (x, y) not in seen and len(pool) < want:
                    seen.add((x, y))
                    pool.append(example(x, y))
        test_gen = torch.Generator().manual_seed(self.cfg.eval_seed)
        a, b = torch.randint(HOLD_LOW, HOLD_HIGH + 1, (2, self.cfg.n_eval), generator=test_gen).tolist()
        return pool, {"test": [example(x, y) for x, y in zip(a, b)]}
