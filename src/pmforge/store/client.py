"""Chroma clients: one per vector-store location per process, never re-created on a rerun."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import chromadb
from chromadb.config import Settings as ChromaSettings

from config import Settings

from ..errors import ForgeError


class StoreUnavailable(ForgeError):
    """The vector store cannot be reached (a Chroma server that is down)."""

_CHROMA_SETTINGS = dict(anonymized_telemetry=False, allow_reset=False)


@lru_cache(maxsize=32)
def persistent_client(path: str) -> chromadb.ClientAPI:
    Path(path).mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=path, settings=ChromaSettings(**_CHROMA_SETTINGS))


@lru_cache(maxsize=4)
def http_client(host: str, port: int) -> chromadb.ClientAPI:
    return chromadb.HttpClient(host=host, port=port, settings=ChromaSettings(**_CHROMA_SETTINGS))


def client_for(vectordb: Path, settings: Settings, server: bool | None = None) -> tuple[chromadb.ClientAPI, bool]:
    """The client for a workspace, and whether it is a shared server (so names need a project prefix).
    `server` forces one or the other; by default CHROMA_HOST decides."""
    use_server = bool(settings.chroma_host) if server is None else server
    if use_server:
        if not settings.chroma_host:
            raise ForgeError("No Chroma server is configured; set CHROMA_HOST (and CHROMA_PORT).")
        try:
            return http_client(settings.chroma_host, settings.chroma_port), True
        except Exception as exc:  # the client checks the server when it is made
            raise StoreUnavailable(
                f"The Chroma server at {settings.chroma_host}:{settings.chroma_port} is not reachable "
                f"({type(exc).__name__}); start it, or unset CHROMA_HOST to use the embedded store."
            ) from None
    return persistent_client(str(Path(vectordb).resolve())), False
