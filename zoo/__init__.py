"""The checkpoint zoo: publish, index, verify and load run folders by id or alias.

>>> from mechinit import zoo
>>> model = zoo.load("small-init")          # a HookedTransformer, sha256-checked, offline
>>> zoo.load("small-init@step100")          # a training snapshot
>>> zoo.list(gamma=1.0)                      # a pandas table of entries
>>> zoo.publish("runs/my-run", aliases=("mine",))
>>> zoo.point_alias("mine", "anchor-post-L2-d128-g1.00-s1-95d4f3")   # move an alias to another entry
"""

from mechinit.zoo.api import card, load, load_target, resolve, target, verify  # noqa: A004
from mechinit.zoo.api import list_entries as list
from mechinit.zoo.store import ZooError, user_zoo


def publish(run_dir, **kwargs):
    """Publish a finished run folder (see :func:`zoo.publishing.publish`; imported on first use, so
    listing and verifying the zoo never import torch)."""
    from mechinit.zoo.publishing import publish as _publish

    return _publish(run_dir, **kwargs)


def point_alias(alias, entry_id, **kwargs):
    """Point an alias at an entry, moving it if it pointed elsewhere (see :func:`zoo.publishing.point_alias`)."""
    from mechinit.zoo.publishing import point_alias as _point_alias

    return _point_alias(alias, entry_id, **kwargs)


__all__ = ["card", "list", "load", "load_target", "target", "publish", "point_alias", "resolve", "verify", "ZooError", "user_zoo"]
