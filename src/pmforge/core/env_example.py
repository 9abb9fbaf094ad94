""".env.example, written from the settings model: every setting, its environment name, its default and the
comment the model carries for it, so the example can never fall behind the code. `scripts/env-example`
writes it; the test suite fails when the checked-in copy differs."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Literal, get_args, get_origin

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from pmforge.core import settings as settings_module
from pmforge.core.settings import Settings

HEADER = """\
# Forge settings. Copy to .env (git-ignored) and set what you need; every line shows the default.
# With nothing set, Forge runs fully offline: a deterministic interviewer and a local embedder.
# Written by scripts/env-example from src/pmforge/core/settings.py — edit the settings, then run it.
"""

_FIELD = re.compile(r"^    (\w+): [^=]+?(?: = .*)?$")
_SECTION = re.compile(r"^    # --- (.+?) ---\s*$")
_COMMENT = re.compile(r"^    # ?(.*)$")
_TRAILING = re.compile(r"\s#\s(.*)$")


def _comments() -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    """Per field: the comment lines above it, its trailing comment, and the section it opens."""
    above: dict[str, list[str]] = {}
    inline: dict[str, str] = {}
    sections: dict[str, str] = {}
    pending: list[str] = []
    section = None
    source = inspect.getsource(settings_module.Settings).splitlines()
    for line in source:
        if m := _SECTION.match(line):
            section, pending = m.group(1), []
            continue
        if m := _COMMENT.match(line):
            pending.append(m.group(1))
            continue
        m = _FIELD.match(line)
        if m and m.group(1) in Settings.model_fields:
            name = m.group(1)
            trailing = _TRAILING.search(line)
            above[name] = pending
            if trailing:
                inline[name] = trailing.group(1)
            if section:
                sections[name], section = section, None
        pending = []  # a blank line, a field, or code that is not a field: comments above it are not a field's
    return above, inline, sections


def env_name(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices:
        return str(choices[0])
    return f"FORGE_{name.upper()}"


def _value(default: object) -> str:
    if default is None or isinstance(default, SecretStr):
        return ""
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, Path):
        return str(default)
    if isinstance(default, dict):
        return json.dumps({k: v.model_dump() if hasattr(v, "model_dump") else v for k, v in default.items()},
                          separators=(",", ":"))
    return str(default)


def _choices(field: FieldInfo) -> str:
    annotation = field.annotation
    if get_origin(annotation) is Literal:
        return " | ".join(str(a) for a in get_args(annotation))
    return ""


def _is_secret(field: FieldInfo) -> bool:
    return SecretStr in (get_args(field.annotation) or (field.annotation,))


def env_example() -> str:
    above, inline, sections = _comments()
    out = [HEADER]
    for name, field in Settings.model_fields.items():
        if name in sections:
            out.append(f"\n# --- {sections[name]} ---")
        out.extend(f"# {note}".rstrip() for note in above.get(name, []))
        default = field.get_default(call_default_factory=True)
        line = f"{env_name(name, field)}={_value(default)}"
        line = line if _is_secret(field) else f"# {line}"
        notes = [n for n in (inline.get(name), f"one of: {_choices(field)}" if _choices(field) else "") if n]
        out.append(f"{line}  # {'; '.join(notes)}" if notes else line)
    return "\n".join(out) + "\n"
