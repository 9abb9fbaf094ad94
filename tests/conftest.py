"""Shared fixtures: every test gets its own projects folder, offline providers and no keys;
`stub` and `online` point the real Anthropic and Voyage clients at a local HTTP stub instead."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/stubs.py, tests/docs.py

PROVIDER_VARS = ("ANTHROPIC_API_KEY", "VOYAGE_API_KEY", "ANTHROPIC_BASE_URL", "VOYAGE_BASE_URL",
                 "CHROMA_HOST", "CHROMA_PORT", "FORGE_LLM", "FORGE_EMBEDDINGS", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """Temp projects dir, no keys, no .env from the working directory, fresh settings. Vectors come from the
    hashing embedder (every window, store and search path as with the real model, without its seconds per
    document); a test that judges what retrieval finds asks for `real_embedder`."""
    from pmforge.core import settings as config

    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FORGE_EMBEDDINGS", "hashing")
    monkeypatch.setenv("FORGE_PROJECTS_DIR", str(tmp_path / "projects"))
    monkeypatch.chdir(tmp_path)  # a developer's .env in the repo must not leak into tests
    config.get_settings.cache_clear()
    yield tmp_path
    config.get_settings.cache_clear()


@pytest.fixture
def real_embedder(isolated_env, monkeypatch):
    """The shipped all-MiniLM-L6-v2 model, for tests whose assertions depend on what it finds."""
    from pmforge.core import settings as config

    monkeypatch.setenv("FORGE_EMBEDDINGS", "local")
    config.get_settings.cache_clear()


@pytest.fixture
def services(isolated_env):
    from pmforge.core.settings import get_settings
    from pmforge.project.services import Services

    return Services.from_settings(get_settings())


@pytest.fixture
def project(services):
    from pmforge.project.project import Project

    return Project.create(services, "Fresh Shrink Pilot")


@pytest.fixture
def stub():
    from stubs import StubServer

    with StubServer() as server:
        yield server


@pytest.fixture
def online_services(stub, monkeypatch, isolated_env):
    """Returns `make(**settings)`: Services whose real clients talk to the stub, with FORGE_* overrides."""
    from pmforge.core import settings as config
    from pmforge.project.services import Services

    monkeypatch.delenv("FORGE_EMBEDDINGS")  # auto: Voyage, since its key is set
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-anthropic")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", stub.url)
    monkeypatch.setenv("VOYAGE_API_KEY", "test-voyage")
    monkeypatch.setenv("VOYAGE_BASE_URL", stub.url + "/v1")
    monkeypatch.setenv("FORGE_ANTHROPIC_MAX_RETRIES", "2")
    monkeypatch.setenv("FORGE_ANTHROPIC_TIMEOUT_S", "10")
    monkeypatch.setenv("FORGE_VOYAGE_BACKOFF_S", "0.001")  # real backoff code, test-sized waits
    # The stub's embeddings are hash-random, so no similarity means anything: these tests check the wire.
    monkeypatch.setenv("FORGE_MIN_SIMILARITY", "-1")

    def make(**settings) -> Services:
        for name, value in settings.items():
            monkeypatch.setenv(f"FORGE_{name.upper()}", str(value))
        config.get_settings.cache_clear()
        services = Services.from_settings(config.get_settings())
        assert services.llm.online and services.embedder.name == services.settings.voyage_model
        return services

    return make


@pytest.fixture
def online(online_services, stub):
    """A project on the online providers with plan.md indexed; the stub's request log starts empty."""
    from docs import PLAN
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.project.project import Project
    from stubs import text_message

    project = Project.create(online_services(), "Online Pilot")
    stub.queue_anthropic(text_message("A pilot plan: 20 Midwest stores for eight weeks, shrink target 4.5%."))
    assert ingest_file(project, "plan.md", PLAN).ok
    stub.requests.clear()
    return project


@pytest.fixture
def app(isolated_env, monkeypatch):
    """The real Streamlit app through AppTest, run once, on a temp projects dir with no keys (a finished
    reply's buttons appear at once: the pause that guards a late click on Stop is for people)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import pmforge

    monkeypatch.setenv("FORGE_REPLY_SETTLE_S", "0")
    st.cache_resource.clear()
    at = AppTest.from_file(str(Path(pmforge.__file__).parent / "surfaces" / "app.py"), default_timeout=120)
    at.run()
    yield at
    st.cache_resource.clear()


def pytest_collection_modifyitems(items):
    """Under pytest-xdist, the browser tests share one worker: two Chromiums starting at once on a small
    machine fail to launch."""
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("browser"))


def as_shown(markdown: str) -> str:
    """What a person reads of text the app escaped to show it as written (`citations.literal`): the escapes go."""
    return re.sub(r"\\(.)", r"\1", markdown)

