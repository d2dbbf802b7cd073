"""Run configuration: four dataclasses (model, init, task, train) and the run that holds them.

Every config validates itself in ``__post_init__`` and raises :class:`ConfigError` with a message
that names the field and the allowed values. ``to_dict()``/``from_dict()`` round-trip through plain
JSON; ``RunConfig.with_overrides({"train.lr": "3e-4"})`` applies dotted ``--set`` keys with type
coercion from the field annotations.
"""

from __future__ import annotations

import dataclasses
import json
import math
import typing
from dataclasses import dataclass, field
from typing import Any

from mechinit.errors import ConfigError  # noqa: F401  (re-exported: defined in the leaf module)
from mechinit.fields import SEED_LIMIT, _choice, _positive, _Section, _seed, coerce  # noqa: F401  (re-exported)
from mechinit.replay_spec import parse as parse_replay
from mechinit.task_options import NoOptions, TaskOptions, _options_class  # noqa: F401  (re-exported)


@dataclass(frozen=True)
class ModelConfig(_Section):
    """Shape of the HookedTransformer. ``norm="post"`` is the paper's eq. (6) block."""

    SECTION = "model"
    LATER = ("arch", "unembed_bias")
    n_layers: int = 2
    d_model: int = 128
    d_head: int = 64
    n_heads: int = 1
    d_mlp: int = 384
    d_vocab: int = 201
    n_ctx: int = 9
    norm: str = "post"
    act_fn: str = "relu"
    bias: bool = False
    ln_eps: float = 1e-5
    arch: str = "transformer"  # or "emb-mlp": token embeddings -> one MLP, no attention (mechinit.model.emb_mlp)
    unembed_bias: bool = False  # train unembed.b_U even when bias = False (the authors' code; see mechinit.model.init)

    def __post_init__(self):
        self.check_finite()
        for name in ("n_layers", "d_model", "d_head", "n_heads", "d_mlp", "d_vocab", "n_ctx", "ln_eps"):
            _positive("model", name, getattr(self, name))
        _choice("model", "arch", self.arch, ("transformer", "emb-mlp"))
        _choice("model", "norm", self.norm, ("pre", "post"))
        _choice("model", "act_fn", self.act_fn, ("relu", "gelu"))


@dataclass(frozen=True)
class InitConfig(_Section):
    """γ-scaled init: every weight ~ N(0, d_in^-2γ) (``distribution`` "normal"), or uniform in
    ±(6/d_in)^γ ("uniform-6"). ``embed_fan_in``: the d_in of W_E and W_pos — d_model, d_vocab, or
    "rows" (each table's row count: d_vocab for W_E, n_ctx for W_pos). See :mod:`mechinit.model.init`."""

    SECTION = "init"
    LATER = ("distribution",)
    gamma: float = 0.8
    embed_fan_in: str = "d_model"
    distribution: str = "normal"

    def __post_init__(self):
        self.check_finite()
        _positive("init", "gamma", self.gamma, allow_zero=True)
        _choice("init", "embed_fan_in", self.embed_fan_in, ("d_model", "d_vocab", "rows"))
        _choice("init", "distribution", self.distribution, ("normal", "uniform-6"))


@dataclass(frozen=True)
class TaskConfig(_Section):
    """Which task to train on, how much data to build or read, and the task's own ``options``.

    The common fields are here; everything else under ``task.`` in a config file belongs to the
    task's options dataclass (``Task.Options``, a :class:`TaskOptions`): the anchor task's ``variant``,
    ``groups``, ``label_threshold``, ``split_modulus``; ``reasoning-memory``'s ``reasoning_anchors``,
    ``memory_anchors``, ``memory_fraction``; ``prontoqa``'s ``chain_length``; the file tasks'
    ``data_dir`` (and ``split`` for ``scan``). Config files keep one flat ``task`` table.

    ``n_train`` is the number of training examples (tasks read from files use at most as many as
    the file has; the number used is in the run's ``data.json``)."""

    SECTION = "task"
    name: str = "anchor"
    n_train: int = 50_000
    n_eval: int = 2_000
    n_eval_train: int = 500
    eval_seed: int = 20240513
    options: Any = None  # the task's Options instance (None: its defaults)

    def __post_init__(self):
        from mechinit.tasks import registered

        self.check_finite()
        _choice("task", "name", self.name, tuple(registered()))
        for name in ("n_train", "n_eval", "n_eval_train"):
            _positive("task", name, getattr(self, name))
        _seed("task", "eval_seed", self.eval_seed)
        options_class = _options_class(registered()[self.name])
        if self.options is None:
            object.__setattr__(self, "options", options_class())
        elif type(self.options) is not options_class:
            raise ConfigError(f"task.options of task {self.name!r} must be a {options_class.__name__}, not {type(self.options).__name__}")

    @classmethod
    def common_fields(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "options")

    def to_dict(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in self.common_fields()}, **self.options.to_dict()}

    def canonical_dict(self) -> dict[str, Any]:
        return {**{k: getattr(self, k) for k in self.common_fields()}, **self.options.canonical_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TaskConfig":
        """A flat ``task`` table. A field of *another* registered task is ignored when it holds that
        task's default (config files written before tasks owned their options list every task's
        fields) and refused otherwise, naming the task it belongs to."""
        from mechinit.tasks import registered

        name = coerce("task.name", data.get("name", cls.name), str)
        _choice("task", "name", name, tuple(registered()))
        options_class = _options_class(registered()[name])
        own = {f.name for f in dataclasses.fields(options_class)}
        common, options = {}, {}
        for key, value in data.items():
            if key in cls.common_fields():
                common[key] = value
            elif key in own:
                options[key] = value
            else:
                _foreign_field(name, key, value, sorted({*cls.common_fields(), *own}))
        hints = typing.get_type_hints(cls)
        common = {k: coerce(f"task.{k}", v, hints[k]) for k, v in common.items()}
        return cls(**common, options=options_class.from_dict(options))


def _foreign_field(name: str, key: str, value: Any, known: list[str]) -> None:
    """Accept (ignore) ``task.key`` when another task owns it and ``value`` is that task's default."""
    from mechinit.tasks import registered

    for owner, task_class in registered().items():
        options_class = _options_class(task_class)
        fields = {f.name: f for f in dataclasses.fields(options_class)}
        if owner == name or key not in fields:
            continue
        try:
            if coerce(f"task.{key}", value, typing.get_type_hints(options_class)[key]) == fields[key].default:
                return
        except ConfigError:
            pass
        raise ConfigError(f"task.{key} belongs to task {owner!r}, not {name!r}; keys of task {name!r}: {known}")
    raise ConfigError(f"unknown key task.{key} for task {name!r}; known keys: {known}")


@dataclass(frozen=True)
class TrainConfig(_Section):
    """AdamW with linear warm-up from ``lr / lr_multiplier`` to the peak ``lr``, then cosine decay to
    ``lr_floor`` over ``decay_epochs`` (default: the rest of the run), then constant."""

    SECTION = "train"
    lr: float = 1e-3
    lr_multiplier: float = 25.0
    warmup_epochs: float = 1.0
    decay_epochs: float | None = None
    lr_floor: float = 1e-5
    weight_decay: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    grad_clip: float = 1.0
    batch_size: int = 256
    epochs: int = 20
    steps: int | None = None
    seed: int = 0
    eval_every: int | None = None
    n_snapshots: int = 20
    snapshot_steps: tuple[int, ...] | None = None
    device: str = "cpu"
    bf16: bool = False  # bf16 autocast of the forward, on CPU or CUDA (pays on CPUs with avx512_bf16 / AMX)
    tf32: bool = False  # CUDA only: fp32 matmuls in TF32 (PyTorch's default on Ampere GPUs before 1.12); off: full fp32
    threads: int | None = None
    resume_every: int | None = None  # steps between resume states (None: at each evaluation); results do not depend on it
    init_seed: int | None = None  # the initial weights' seed (None: train.seed)
    data_seed: int | None = None  # the training data's and batch order's seed (None: train.seed)
    replay: str | None = None  # "authors:SEED[:init|:data]": re-draw the authors' run (mechinit.training.replay)
    weight_decay_window: tuple[float, ...] = (0.0, 1.0)  # weight decay acts only in [start, end) of the planned steps

    LATER = ("tf32", "init_seed", "data_seed", "replay", "weight_decay_window")
    OPERATIONAL = ("resume_every",)

    def __post_init__(self):
        self.check_finite()
        for name in ("lr", "lr_multiplier", "batch_size", "epochs", "eps"):
            _positive("train", name, getattr(self, name))
        for name in ("lr_floor", "weight_decay", "grad_clip", "warmup_epochs", "n_snapshots"):
            _positive("train", name, getattr(self, name), allow_zero=True)
        for name in ("steps", "eval_every", "threads", "decay_epochs", "resume_every"):
            if getattr(self, name) is not None:
                _positive("train", name, getattr(self, name))
        for name in ("beta1", "beta2"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"train.{name} = {getattr(self, name)!r} must be in [0, 1)")
        _seed("train", "seed", self.seed)
        for name in ("init_seed", "data_seed"):
            value = getattr(self, name)
            if value is not None:
                _seed("train", name, value)
                if value == self.seed:  # the same run as leaving it out: one config, one id
                    object.__setattr__(self, name, None)
        if self.replay is not None:
            object.__setattr__(self, "replay", parse_replay(self.replay).text())
        window = self.weight_decay_window
        if len(window) != 2 or not all(math.isfinite(v) for v in window) or not 0.0 <= window[0] < window[1] <= 1.0:
            raise ConfigError(f"train.weight_decay_window = {list(window)!r} must be two numbers [start, end] with "
                              "0 <= start < end <= 1 (fractions of the run's planned steps)")
        if self.lr_floor > self.lr:
            raise ConfigError(f"train.lr_floor = {self.lr_floor} must not exceed train.lr = {self.lr}")
        _choice("train", "device", self.device, ("cpu", "cuda", "auto"))
        if self.tf32 and self.device == "cpu":
            raise ConfigError("train.tf32 = true needs train.device = 'cuda' (or 'auto' on a CUDA machine): TF32 is a GPU matmul mode")

    @property
    def weights_seed(self) -> int:
        """The seed of the initial weights (``init_seed``, else ``seed``)."""
        return self.seed if self.init_seed is None else self.init_seed

    @property
    def order_seed(self) -> int:
        """The seed of the training data and its batch order (``data_seed``, else ``seed``)."""
        return self.seed if self.data_seed is None else self.data_seed


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run; ``config.json`` of a run folder holds ``to_dict()``.

    The LATER / OPERATIONAL notes above apply per section: ``model.unembed_bias``,
    ``task.split_modulus`` and ``train.tf32`` are LATER (ids of older runs unchanged); ``train.resume_every``
    is OPERATIONAL."""

    model: ModelConfig = field(default_factory=ModelConfig)
    init: InitConfig = field(default_factory=InitConfig)
    task: TaskConfig = field(default_factory=TaskConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    SECTIONS = {"model": ModelConfig, "init": InitConfig, "task": TaskConfig, "train": TrainConfig}

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name).to_dict() for name in self.SECTIONS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        if not isinstance(data, dict):
            raise ConfigError(f"a run config must be a JSON object with sections {list(cls.SECTIONS)}")
        unknown = sorted(set(data) - set(cls.SECTIONS))
        if unknown:
            raise ConfigError(f"unknown config section {unknown[0]!r}; known sections: {list(cls.SECTIONS)}")
        return cls(**{name: sec.from_dict(data.get(name, {})) for name, sec in cls.SECTIONS.items()})

    def with_overrides(self, overrides: dict[str, Any]) -> "RunConfig":
        """Apply dotted keys (``train.lr``) to a copy; string values are parsed by field type."""
        data = self.to_dict()
        new_task = overrides.get("task.name")
        if new_task is not None and str(new_task) != self.task.name:  # another task: the old task's options do not carry over
            data["task"] = {k: data["task"][k] for k in TaskConfig.common_fields()}
        for key, value in overrides.items():
            section, _, name = key.partition(".")
            if section not in self.SECTIONS or not name:
                raise ConfigError(f"unknown key {key!r}; keys look like section.field with section in {list(self.SECTIONS)}")
            if name not in data[section] and section != "task":  # task keys are checked against the task's options
                raise ConfigError(f"unknown key {key!r}; known keys in {section}: {sorted(data[section])}")
            data[section][name] = value
        return self.from_dict(data)

    def canonical_json(self) -> str:
        """The JSON the run id hashes (fields in ``LATER`` at their defaults left out)."""
        return json.dumps({name: getattr(self, name).canonical_dict() for name in self.SECTIONS}, sort_keys=True, separators=(",", ":"))
