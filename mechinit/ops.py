"""Small shared operations with no dependency inside mechinit (a leaf): the activation table."""

from __future__ import annotations

import torch.nn.functional as F

ACT = {"relu": F.relu, "gelu": F.gelu}  # TL act_fn name -> function (the fast path, stacked ensembles, Emb-MLP)
