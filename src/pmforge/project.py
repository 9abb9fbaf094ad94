"""Process-wide services (settings, LLM, embedder) and an opened project (workspace + its store).

The CLI, the app, the tests and the benchmarks all open projects through here,
so they drive the very same code.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from config import Settings, get_settings

from .embed import Embedder, make_embedder
from .llm import LLM, make_llm
from .models import ProjectState, SessionState
from .store.client import client_for
from .store.collections import ProjectStore
from .workspace import Workspace


@dataclass
class Services:
    settings: Settings
    llm: LLM
    embedder: Embedder

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> "Services":
        settings = settings or get_settings()
        return cls(settings=settings, llm=make_llm(settings), embedder=make_embedder(settings))

    @property
    def projects_root(self) -> Path:
        return self.settings.projects_root()

    def describe(self) -> dict[str, str]:
        """Which providers are active, for the UI and the CLI."""
        s = self.settings
        return {
            "llm": f"Claude ({s.phase_b_model} / {s.phase_a_model})" if self.llm.online else "offline interviewer",
            "embeddings": self.embedder.signature,
            "vector_store": f"Chroma server {s.chroma_host}:{s.chroma_port}" if s.chroma_host else "embedded Chroma",
        }


def server_prefix(workspace: Workspace) -> str:
    """Collection-name prefix on a shared server: readable slug plus the project's random id, so two
    projects (even with the same name, from two repositories) never share a collection."""
    return f"forge-{workspace.slug[:40]}-{workspace.project_id()}-"


def open_store(workspace: Workspace, signature: str, settings: Settings, server: bool | None = None) -> ProjectStore:
    """The project's store: embedded in the workspace, or on the Chroma server when one is configured
    (`server` overrides the configuration, for migrations)."""
    client, shared = client_for(workspace.vectordb, settings, server)
    prefix = server_prefix(workspace) if shared else ""
    return ProjectStore(client, signature, keyword_dir=workspace.vectordb / "keyword", prefix=prefix,
                        location=f"the Chroma server at {settings.chroma_host}:{settings.chroma_port}" if shared
                        else "the project's embedded vector store")


class Project:
    def __init__(self, workspace: Workspace, services: Services):
        self.ws = workspace
        self.services = services
        self.store = open_store(workspace, services.embedder.signature, services.settings)
        self.recovered: str | None = None

    @classmethod
    def open(cls, services: Services, name: str) -> "Project":
        project = cls(Workspace.open(services.projects_root, name), services)
        project.recovered = project.recover()
        return project

    @contextmanager
    def operation(self, label: str) -> Iterator[None]:
        """A change spanning files and the store: finish whatever a crash interrupted first, then hold the
        project's lock and operation marker (see Workspace.operation)."""
        self.recover()
        with self.ws.operation(label):
            yield

    def recover(self) -> str | None:
        """Finish whatever operation a crash interrupted on this project; what it was, or None."""
        if not self.ws.operation_marker.exists():  # the common case costs one stat
            return None
        from .doctor import recover  # doctor drives the pipeline, which needs this module first

        return recover(self)

    @classmethod
    def create(cls, services: Services, name: str) -> "Project":
        return cls(Workspace.create(services.projects_root, name), services)

    @property
    def settings(self) -> Settings:
        return self.services.settings

    def state(self) -> SessionState:
        return self.ws.load_state()

    def project_state(self) -> ProjectState:
        return self.ws.load_project_state()

    def passage(self, source) -> str | None:
        """The exact text a citation points to, or None when that version of the file is gone."""
        entry = self.project_state().find(source.filename)
        path = self.ws.converted_path(source.filename)
        if entry is None or entry.file_id != source.file_id or not path.exists():
            return None
        return path.read_text(encoding="utf-8")[source.start : source.end]

    def reindex_reason(self) -> str | None:
        """Why the vector store cannot be trusted as it is (None when it can)."""
        mismatch = self.store.mismatched()
        if mismatch:
            return f"its vectors were made with {mismatch}, and Forge now embeds with {self.store.signature}"
        manifest = {f.file_id for f in self.project_state().file_summaries if f.indexed}
        if manifest != self.store.file_ids():
            return "the vector store does not match the uploaded files (a fresh clone has no vectors)"
        if self.store.keyword("documents").ids() != self.store.ids("documents"):
            return "the keyword index does not match the vector store"
        state = self.state()
        indexed = self.store.turn_numbers()
        if state.turns and not indexed:
            return "the conversation memory is empty"
        if indexed - {t.number for t in state.turns}:
            return "the conversation memory holds turns the transcript does not"
        return None  # turns saved but not yet remembered are caught up by the next turn
