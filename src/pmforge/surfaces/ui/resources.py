"""Process-wide singletons for the app: created once, reused on every Streamlit rerun.

Chroma's SQLite client, the ONNX session and the HTTP clients are expensive and not
safe to re-create per rerun, so they live in `st.cache_resource`, keyed by what
would make them different (settings, project folder, embedder).
"""

from __future__ import annotations

import streamlit as st

from pmforge.core import logs
from pmforge.core.settings import Settings, get_settings
from pmforge.project.project import Project
from pmforge.project.services import Services


def _settings_key(settings: Settings) -> str:
    # Secrets are hashed into the key only as presence flags: they never reach Streamlit's cache keys.
    s = settings.model_dump(exclude={"anthropic_api_key", "voyage_api_key"})
    s["anthropic_key_set"] = bool(settings.anthropic_api_key)
    s["voyage_key_set"] = bool(settings.voyage_api_key)
    return repr(sorted(s.items()))


@st.cache_resource(show_spinner=False)
def _services(key: str) -> Services:
    settings = get_settings()
    try:
        logs.configure(settings)
    except OSError:
        pass  # an unwritable log folder must not stop the app
    return Services.from_settings(settings)


def services() -> Services:
    return _services(_settings_key(get_settings()))


@st.cache_resource(show_spinner=False, max_entries=16)
def _project(key: str, slug: str, root: str) -> Project:
    return Project.open(services(), slug)


def project(slug: str) -> Project:
    svc = services()
    return _project(_settings_key(svc.settings), slug, str(svc.projects_root.resolve()))


def forget_project(slug: str) -> None:
    """Drop a deleted project's cached `Project` (its store's client is closed): a project made later under
    the same name opens afresh."""
    svc = services()
    _project.clear(_settings_key(svc.settings), slug, str(svc.projects_root.resolve()))
