"""Run and zoo ids: a readable prefix plus a short hash of the full canonical config.

``anchor-post-L4-d128-g1.00-s0-3fa2c1``: the prefix names the usual axes; the hash covers every
field, so two configs that differ anywhere (an lr × wd sweep, say) never share an id, and the same
config always gets the same id.
"""

from __future__ import annotations

import hashlib

from mechinit.config import RunConfig

HASH_CHARS = 6


def config_hash(cfg: RunConfig) -> str:
    return hashlib.sha256(cfg.canonical_json().encode()).hexdigest()[:HASH_CHARS]


def run_id(cfg: RunConfig) -> str:
    m = cfg.model
    return f"{cfg.task.name}-{m.norm}-L{m.n_layers}-d{m.d_model}-g{cfg.init.gamma:.2f}-s{cfg.train.seed}-{config_hash(cfg)}"
