"""Chroma clients: one per vector-store location per process, never re-created on a rerun."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import chromadb
from chromadb.config import Settings as ChromaSettings

from config import Settings

_CHROMA_SETTINGS = dict(anonymized_telemetry=False, allow_reset=False)


@lru_cache(maxsize=32)
def persistent_client(path: str) -> chromadb.ClientAPI:
    Path(path).mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=path, settings=ChromaSettings(**_CHROMA_SETTINGS))


@lru_cache(maxsize=4)
def http_client(host: str, port: int) -> chromadb.ClientAPI:
    return chromadb.HttpClient(host=host, port=port, settings=ChromaSettings(**_CHROMA_SETTINGS))


def client_for(vectordb: Path, settings: Settings) -> tuple[chromadb.ClientAPI, bool]:
    """The client for a workspace, and whether it is a shared server (so names need a project prefix)."""
    if settings.chroma_host:
        return http_client(settings.chroma_host, settings.chroma_port), True
    return persistent_client(str(Path(vectordb).resolve())), False
