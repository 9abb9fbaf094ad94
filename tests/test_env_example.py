"""`.env.example` is written from the settings model, so it lists every setting with its real default."""

from __future__ import annotations

from pathlib import Path

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
    assert "# FORGE_LOCK_WAIT_S=30.0" in text
    assert "Ollama http://localhost:11434/v1" in text
    assert "# FORGE_FUSION=minmax  # one of: rrf | score | minmax" in text
