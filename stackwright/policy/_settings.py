"""A stack's policy settings, read from its configuration's `policy:` keys.

    policy:packs        {pack name: level}, a list of names, or "name[=level],…"
    policy:pack-dirs    the project's own pack directories (a list, or "a,b"), relative to
                        the folder of the stack file that names them
    policy:policies     {policy name or ID: level, or {level: …, <setting>: <value>, …}}
    policy:exemptions   [{policy, resource, owner, expires: YYYY-MM-DD, reason}, …]
    policy:env          the stack's environment (`production` turns on the production rules)
    policy:tags         more tags for policies to read ({team: shop})

Every mistake is a `UsageError` naming the key and what to write instead.
Must never: read files or the environment (callers hand in the values).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stackwright.errors import UsageError
from stackwright.policy._levels import Level

PACKS_KEY = "policy:packs"
POLICIES_KEY = "policy:policies"
EXEMPTIONS_KEY = "policy:exemptions"
ENV_KEY = "policy:env"
TAGS_KEY = "policy:tags"
PACK_DIRS_KEY = "policy:pack-dirs"


@dataclass(frozen=True)
class Exemption:
    """An exemption entry of a stack's configuration: `policy` does not apply to the
    resources matching `resource` (a glob over the URN, `Kind/name` or `Kind/namespace/name`;
    empty: every resource) until `expires` (inclusive)."""

    policy: str
    resource: str
    owner: str
    expires: datetime.date
    reason: str


@dataclass(frozen=True)
class Settings:
    """Which packs run at which level, per-policy levels and configuration, exemptions, tags."""

    #: Pack name → the level configured for it (None: the pack's own level).
    packs: Mapping[str, Level | None] = field(default_factory=dict)
    #: Policy name or ID → its configured level (absent: the pack's) and settings.
    levels: Mapping[str, Level] = field(default_factory=dict)
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    exemptions: tuple[Exemption, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    #: The namespace of objects that name none (the cluster's default).
    default_namespace: str = "default"
    #: `policy:pack-dirs`, as written (relative to the stack file's folder).
    pack_dirs: tuple[str, ...] = ()

    def pack_directories(self, base: Path, where: str) -> list[str]:
        """`policy:pack-dirs` under `base` (the project's, or the config file's folder); one
        that is not there is refused naming the key in `where` (the loader's own message
        names the `--policy-pack` flag, which the user never gave)."""
        found = [base / d for d in self.pack_dirs]
        for written, path in zip(self.pack_dirs, found, strict=True):
            if not path.is_dir() and not (path.is_file() and path.suffix == ".py"):
                raise UsageError(
                    f"{where}: {PACK_DIRS_KEY} names {written}, which is no directory in "
                    f"{base.resolve()}: give a folder of policy pack modules, relative to it"
                )
        return [str(path) for path in found]

    @classmethod
    def from_config(
        cls, values: Mapping[str, Any], where: str, *, default_namespace: str = "default"
    ) -> Settings:
        """Settings from a stack's configuration values (`where` names the file for messages)."""
        packs = _packs(_structured(values.get(PACKS_KEY), f"{where}: {PACKS_KEY}"), where)
        levels, config = _policies(
            _structured(values.get(POLICIES_KEY), f"{where}: {POLICIES_KEY}"), where
        )
        exemptions = _exemptions(
            _structured(values.get(EXEMPTIONS_KEY), f"{where}: {EXEMPTIONS_KEY}"), where
        )
        tags_value = _structured(values.get(TAGS_KEY), f"{where}: {TAGS_KEY}") or {}
        if not isinstance(tags_value, Mapping):
            raise UsageError(f"{where}: {TAGS_KEY} must be a mapping of tag names to values")
        tags = {str(k): str(v) for k, v in tags_value.items()}
        if values.get(ENV_KEY) is not None:
            tags["env"] = str(values[ENV_KEY])
        return cls(
            packs, levels, config, exemptions, tags, default_namespace, _pack_dirs(values, where)
        )


def _pack_dirs(values: Mapping[str, Any], where: str) -> tuple[str, ...]:
    configured = _structured(values.get(PACK_DIRS_KEY), f"{where}: {PACK_DIRS_KEY}") or []
    if isinstance(configured, str):
        return tuple(d.strip() for d in configured.split(",") if d.strip())
    if not isinstance(configured, list) or not all(isinstance(d, str) for d in configured):
        raise UsageError(f"{where}: {PACK_DIRS_KEY} must be a list of directories, e.g. [policies]")
    return tuple(configured)


def _structured(value: Any, where: str) -> Any:
    """A value as YAML wrote it, or parsed from the JSON text `stackwright config set` stores."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: not valid JSON ({exc.msg}); fix the value") from None
    return value


def _packs(value: Any, where: str) -> dict[str, Level | None]:
    if value is None:
        return {}
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        out: dict[str, Level | None] = {}
        for entry in value:
            name, _, level = str(entry).partition("=")
            out[name.strip()] = (
                Level.parse(level.strip(), f"{where}: {PACKS_KEY} {name}") if level else None
            )
        return out
    if isinstance(value, Mapping):
        return {
            str(name): Level.parse(level, f"{where}: {PACKS_KEY} {name}") if level else None
            for name, level in value.items()
        }
    raise UsageError(
        f"{where}: {PACKS_KEY} must map pack names to levels, e.g. "
        "{kubernetes-best-practices: mandatory}"
    )


def _policies(value: Any, where: str) -> tuple[dict[str, Level], dict[str, dict[str, Any]]]:
    levels: dict[str, Level] = {}
    config: dict[str, dict[str, Any]] = {}
    if value is None:
        return levels, config
    if not isinstance(value, Mapping):
        raise UsageError(
            f"{where}: {POLICIES_KEY} must map policy names to a level or to settings, e.g. "
            "{allowed-registries: {registries: [ghcr.io/acme]}}"
        )
    for name, entry in value.items():
        key = f"{where}: {POLICIES_KEY} {name}"
        if isinstance(entry, str):
            levels[str(name)] = Level.parse(entry, key)
        elif isinstance(entry, Mapping):
            settings = dict(entry)
            level = settings.pop("level", None)
            if level is not None:
                levels[str(name)] = Level.parse(level, key)
            config[str(name)] = settings
        else:
            raise UsageError(f"{key}: expected a level or a mapping of settings")
    return levels, config


_EXEMPTION_FIELDS = ("policy", "owner", "expires", "reason")


def _exemptions(value: Any, where: str) -> tuple[Exemption, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise UsageError(
            f"{where}: {EXEMPTIONS_KEY} must be a list of "
            "{policy, resource, owner, expires, reason} entries"
        )
    out = []
    for index, entry in enumerate(value):
        key = f"{where}: {EXEMPTIONS_KEY}[{index}]"
        if not isinstance(entry, Mapping):
            raise UsageError(f"{key}: expected a mapping with {', '.join(_EXEMPTION_FIELDS)}")
        missing = [f for f in _EXEMPTION_FIELDS if not str(entry.get(f) or "").strip()]
        if missing:
            raise UsageError(
                f"{key}: {', '.join(missing)} missing; an exemption needs a policy, an owner, "
                "an expiry date (YYYY-MM-DD) and a reason"
            )
        expires = entry["expires"]
        if not isinstance(expires, datetime.date):
            try:
                expires = datetime.date.fromisoformat(str(expires))
            except ValueError:
                raise UsageError(
                    f"{key}: expires {expires!r} is not a date; write it as YYYY-MM-DD"
                ) from None
        out.append(
            Exemption(
                policy=str(entry["policy"]),
                resource=str(entry.get("resource") or ""),
                owner=str(entry["owner"]),
                expires=expires,
                reason=str(entry["reason"]),
            )
        )
    return tuple(out)
