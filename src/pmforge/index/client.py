"""Chroma clients: one per vector-store location per process, never re-created on a rerun."""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path
from typing import cast

import chromadb
import httpx
from chromadb.api.client import Client as ChromaClient
from chromadb.config import Settings as ChromaSettings

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings

log = logging.getLogger(__name__)


class StoreUnavailable(ForgeError):
    """The vector store cannot be reached (a Chroma server that is down)."""


def _chroma_settings() -> ChromaSettings:
    return ChromaSettings(anonymized_telemetry=False, allow_reset=False)


@lru_cache(maxsize=32)
def persistent_client(path: str) -> ChromaClient:
    Path(path).mkdir(parents=True, exist_ok=True)
    # chromadb annotates PersistentClient as returning the ClientAPI interface; it makes a Client, whose
    # close() releases the database files.
    return cast(ChromaClient, chromadb.PersistentClient(path=path, settings=_chroma_settings()))


@lru_cache(maxsize=4)
def http_client(host: str, port: int, timeout_s: float = 10.0) -> chromadb.ClientAPI:
    """A client whose every call to the server gives up after `timeout_s` (connecting, sending, waiting for
    the answer), so a paused or unreachable server fails a turn in one sentence instead of hanging it."""
    # Making the client already calls the server, on connections with no time limit: ask first, with one.
    httpx.get(f"http://{host}:{port}/api/v2/heartbeat", timeout=timeout_s).raise_for_status()
    client = chromadb.HttpClient(host=host, port=port, settings=_chroma_settings())
    _limit_calls(client, timeout_s)
    return client


def _limit_calls(client: chromadb.ClientAPI, timeout_s: float) -> None:
    """Chroma's HTTP client offers no timeout setting and opens its connection pool with none, so the limit
    goes on that pool; every collection made from this client calls the server through it."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(timeout_s)
    else:  # a chromadb release that builds its client differently: calls still work, without a limit
        log.warning("Chroma server calls have no time limit: this chromadb release hides its HTTP client")


def _unreachable_message(settings: Settings, exc: Exception) -> str:
    """One sentence for a server that refused, or did not answer in time."""
    why = (f"no answer within {settings.chroma_timeout_s:g} s" if isinstance(exc, httpx.TimeoutException)
           else type(exc).__name__)
    return (f"The Chroma server at {settings.chroma_host}:{settings.chroma_port} is not reachable ({why}); "
            "start it, or unset CHROMA_HOST to use the embedded store.")


def client_for(vectordb: Path, settings: Settings, server: bool | None = None) -> tuple[chromadb.ClientAPI, bool]:
    """The client for a workspace, and whether it is a shared server (so names need a project prefix).
    `server` forces one or the other; by default CHROMA_HOST decides."""
    use_server = bool(settings.chroma_host) if server is None else server
    if use_server:
        if not settings.chroma_host:
            raise ForgeError("No Chroma server is configured; set CHROMA_HOST (and CHROMA_PORT).")
        try:
            return http_client(settings.chroma_host, settings.chroma_port, settings.chroma_timeout_s), True
        except Exception as exc:  # the client checks the server when it is made
            raise StoreUnavailable(_unreachable_message(settings, exc)) from None
    return persistent_client(str(Path(vectordb).resolve())), False
