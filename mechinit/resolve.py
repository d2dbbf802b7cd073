"""Build a RunConfig the way the CLI does: preset, then config file, then ``--set`` keys."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from mechinit.config import ConfigError, RunConfig, TaskConfig
from mechinit.presets import preset


def read_config_file(path: Path) -> dict:
    """A JSON or TOML file with the same sections and fields as ``config.json``."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} not found")
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text (JSON or TOML)") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"config file {path} is malformed: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold an object with sections model/init/task/train")
    # a run folder's config.json also carries the init table and provenance: keep only the configs
    return {k: v for k, v in data.items() if k not in ("init_table", "provenance")}


def parse_sets(items: list[str]) -> dict[str, str]:
    """``["train.lr=3e-4", ...]`` -> ``{"train.lr": "3e-4"}``."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r} must look like KEY=VALUE, e.g. train.lr=3e-4")
        out[key.strip()] = value.strip()
    return out


def resolve_config(preset_name: str | None = None, config_file: Path | None = None, sets: list[str] = ()) -> RunConfig:
    cfg = preset(preset_name) if preset_name else RunConfig()
    if config_file is not None:
        data = cfg.to_dict()
        file_data = read_config_file(config_file)
        unknown = sorted(set(file_data) - set(RunConfig.SECTIONS))
        if unknown:
            raise ConfigError(f"config file {config_file}: unknown section {unknown[0]!r}; known: {list(RunConfig.SECTIONS)}")
        for section, values in file_data.items():
            if not isinstance(values, dict):
                raise ConfigError(f"config file {config_file}: section {section!r} must be a table of fields")
            if section == "task" and values.get("name", cfg.task.name) != cfg.task.name:  # another task: drop the old one's options
                data["task"] = {k: data["task"][k] for k in TaskConfig.common_fields()}
            data[section].update(values)
        cfg = RunConfig.from_dict(data)
    return cfg.with_overrides(parse_sets(list(sets)))
