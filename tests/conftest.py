"""Shared fixtures: every test gets its own projects folder, offline providers and no keys."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/stubs.py, tests/docs.py

PROVIDER_VARS = ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY", "ANTHROPIC_BASE_URL", "VOYAGE_BASE_URL",
                 "CHROMA_HOST", "CHROMA_PORT", "FORGE_LLM", "FORGE_EMBEDDINGS")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Temp projects dir, no keys, no .env from the working directory, fresh settings."""
    import config

    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FORGE_PROJECTS_DIR", str(tmp_path / "projects"))
    monkeypatch.chdir(tmp_path)  # a developer's .env in the repo must not leak into tests
    config.get_settings.cache_clear()
    yield tmp_path
    config.get_settings.cache_clear()


@pytest.fixture
def services(isolated_env):
    from config import get_settings
    from pmforge.project import Services

    return Services.from_settings(get_settings())


@pytest.fixture
def project(services):
    from pmforge.project import Project

    return Project.create(services, "Fresh Shrink Pilot")
