"""The machinery under the config dataclasses: validation helpers that name the field and the allowed
values, the dict round-trip every section shares (with the ``LATER`` rule that keeps run ids stable), and
the coercion of ``--set`` strings by field type. A leaf module: it imports nothing of mechinit but the
errors."""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any

from mechinit.errors import ConfigError


def _choice(section: str, name: str, value: Any, allowed: tuple) -> None:
    if value not in allowed:
        raise ConfigError(f"{section}.{name} = {value!r} is not allowed; choose one of {list(allowed)}")


SEED_LIMIT = 2**32  # seeds are mixed into generator seeds by multiplication (mechinit.training.trainer): keep them far from 2^64


def _seed(section: str, name: str, value: int) -> None:
    if not 0 <= value < SEED_LIMIT:
        raise ConfigError(f"{section}.{name} = {value!r} must be in 0..{SEED_LIMIT - 1}")


def _positive(section: str, name: str, value: Any, *, allow_zero: bool = False) -> None:
    ok = value >= 0 if allow_zero else value > 0
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ConfigError(f"{section}.{name} = {value!r} must be {bound}")


class _Section:
    """Shared dict round-trip for the config sections.

    ``LATER`` names fields added after run ids were first minted: the canonical form (and so the
    id hash) leaves them out while they hold their defaults, so no existing id ever changes."""

    SECTION = ""
    LATER: tuple[str, ...] = ()
    OPERATIONAL: tuple[str, ...] = ()  # fields that cannot change a result: never in the id

    def check_finite(self) -> None:
        """Every float field must be finite (JSON cannot hold inf or nan, and no field means them)."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"{self.SECTION}.{f.name} = {value!r} must be a finite number")

    def canonical_dict(self) -> dict[str, Any]:
        defaults = {f.name: list(f.default) if isinstance(f.default, tuple) else f.default for f in dataclasses.fields(self)}
        return {k: v for k, v in self.to_dict().items()
                if not (k in self.LATER and v == defaults[k]) and k not in self.OPERATIONAL}

    def to_dict(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = [list(v) if isinstance(v, tuple) else v for v in value] if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown key {cls.SECTION}.{unknown[0]}; known keys: {sorted(names)}")
        hints = typing.get_type_hints(cls)
        return cls(**{k: coerce(f"{cls.SECTION}.{k}", v, hints[k]) for k, v in data.items()})



def coerce(key: str, value: Any, hint: Any) -> Any:
    """Turn ``value`` (from JSON or a ``--set`` string) into the annotated type, or raise ConfigError."""
    args = typing.get_args(hint)
    if type(None) in args:  # Optional[X]
        if value is None or (isinstance(value, str) and value.lower() in ("none", "null")):
            return None
        hint = next(a for a in args if a is not type(None))
        args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin is tuple:
        items = value.strip().strip("[]()").split(",") if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            raise ConfigError(f"{key} = {value!r} must be a list")
        return tuple(coerce(key, v, args[0]) for v in items if v != "")
    if hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ConfigError(f"{key} = {value!r} must be a boolean (true or false)")
    if hint in (int, float):
        if isinstance(value, bool):
            raise ConfigError(f"{key} = {value!r} must be a number ({hint.__name__})")
        try:
            number = float(value) if isinstance(value, str) else value
            if not math.isfinite(float(number)):
                raise ConfigError(f"{key} = {value!r} must be a finite number")
            if hint is int:
                if float(number) != int(float(number)):
                    raise ValueError
                return int(float(number))
            return float(number)
        except ConfigError:
            raise
        except (TypeError, ValueError, OverflowError):
            raise ConfigError(f"{key} = {value!r} must be {'an integer' if hint is int else 'a number'}") from None
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key} = {value!r} must be a string")
        return value
    return value
