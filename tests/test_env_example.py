"""`.env.example` is written from the settings model, so it lists every setting with its real default."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import get_args

from pmforge.core.env_example import env_example, env_name
from pmforge.core.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def test_the_checked_in_example_is_the_one_the_settings_write():
    assert (ROOT / ".env.example").read_text(encoding="utf-8") == env_example(), "run scripts/env-example"


def test_every_setting_is_listed_once_under_the_name_the_environment_uses():
    lines = env_example().splitlines()
    for name, field in Settings.model_fields.items():
        key = f"{env_name(name, field)}="
        assert sum(line.removeprefix("# ").startswith(key) for line in lines) == 1, name


def test_each_listed_default_reads_back_as_the_default(tmp_path, monkeypatch):
    """Uncommenting the example as it is must change nothing."""
    monkeypatch.chdir(tmp_path)
    lines = [line[2:].split("  # ")[0] for line in env_example().splitlines()
             if line.startswith("# ") and "=" in line.split("  # ")[0] and line[2:3].isupper()]
    (tmp_path / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for key in [k for k in __import__("os").environ if k.startswith("FORGE_") or k.endswith(("_API_KEY", "_BASE_URL"))]:
        monkeypatch.delenv(key)
    assert Settings().model_dump() == Settings(_env_file=None).model_dump()


def test_comments_of_the_model_reach_the_example():
    text = env_example()
    source = inspect.getsource(Settings).splitlines()
    above = [line.strip()[2:] for line in source if line.startswith("    # ") and not line.strip().startswith("# ---")]
    trailing = [m.group(1) for line in source if re.match(r"^    \w+: ", line) and (m := re.search(r"\s#\s(.*)$", line))]
    assert above and trailing
    assert [c for c in above + trailing if c not in text] == []
    # A setting with a fixed set of values lists them after its default.
    fusion = Settings.model_fields["fusion"]
    assert f"# FORGE_FUSION={fusion.default}  # one of: {' | '.join(get_args(fusion.annotation))}" in text
