"""Embeddings from an OpenAI-compatible server (e.g. Ollama's `nomic-embed-text`), through the official client.

The model's dimensions are learned from the server's first answer (a one-text probe when a project opens),
so the vectors are recorded per collection as `model/dimensions` like any embedder's, and switching to or
from this embedder is caught as a mismatch. The client retries rate limits, server errors, timeouts and
dropped connections with backoff; when they run out the caller gets one plain sentence.
"""

from __future__ import annotations

import httpx
import openai

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings
from pmforge.embed.base import Embedder
from pmforge.llm.openai_llm import make_client, server_words

PROBE_TEXT = "Forge dimension probe"


class OpenAIEmbedder(Embedder):
    def __init__(self, client: openai.OpenAI, model: str = "nomic-embed-text", batch_size: int = 64) -> None:
        super().__init__()
        self.client, self.name, self.batch_size = client, model, batch_size
        self._dimensions: int | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "OpenAIEmbedder":
        return cls(make_client(settings, "FORGE_EMBEDDINGS=openai"), model=settings.openai_embed_model,
                   batch_size=settings.openai_embed_batch_size)

    @property
    def dimensions(self) -> int:
        """The served model's vector length, asked of the server once (by embedding a probe) if not yet seen."""
        if self._dimensions is None:
            self._call([PROBE_TEXT])
        assert self._dimensions is not None
        return self._dimensions

    @dimensions.setter
    def dimensions(self, value: int) -> None:  # every embedder's length can be set, as the base class says
        self._dimensions = value

    def _call(self, batch: list[str]) -> list[list[float]]:
        try:
            # Floats, not the client's default base64: not every compatible server encodes base64.
            result = self.client.embeddings.create(model=self.name, input=batch, encoding_format="float")
        except (openai.APIError, httpx.HTTPError) as exc:
            raise _plain(exc, self.name, str(self.client.base_url)) from None
        except ValueError:  # a body that is not JSON (cut off, or not an API's answer at all)
            raise ForgeError(f"The embedding server at {self.client.base_url} sent an answer Forge could not read "
                             "(not valid JSON); check OPENAI_BASE_URL.") from None
        try:
            vectors = [[float(x) for x in item.embedding] for item in sorted(result.data, key=lambda d: d.index)]
        except (TypeError, ValueError, AttributeError):  # JSON, but not a list of embeddings
            raise ForgeError(f"The embedding server at {self.client.base_url} sent no embeddings (is "
                             f"FORGE_OPENAI_EMBED_MODEL an embedding model?).") from None
        if len(vectors) != len(batch) or not vectors or not vectors[0]:
            raise ForgeError(f"The embedding server sent {len(vectors)} vectors for {len(batch)} texts; try again.")
        sizes = {len(v) for v in vectors}
        if self._dimensions is None and len(sizes) == 1:
            self._dimensions = sizes.pop()
        if sizes - {self._dimensions}:
            raise ForgeError(f"The embedding server changed the vector size of {self.name} "
                             f"(from {self._dimensions}); check FORGE_OPENAI_EMBED_MODEL.")
        return vectors

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out.extend(self._call(texts[i : i + self.batch_size]))
        return out


def _plain(exc: Exception, model: str, base_url: str) -> ForgeError:
    words = server_words(exc).lower() if isinstance(exc, openai.APIStatusError) else ""
    if "--embeddings" in words or "does not support embeddings" in words or "pooling" in words:
        # llama.cpp's server started without embeddings, or with a pooling type the OpenAI API cannot serve
        return ForgeError(f"The model server at {base_url} does not serve embeddings as started; restart llama.cpp's "
                          "server with --embeddings --pooling mean (or set FORGE_EMBEDDINGS=local).")
    if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
        return ForgeError("The embedding server rejected the API key; check OPENAI_API_KEY.")
    if isinstance(exc, openai.NotFoundError):
        return ForgeError(f"The embedding server does not serve the model '{model}' (check FORGE_OPENAI_EMBED_MODEL, "
                          f"or for Ollama run: ollama pull {model}).")
    if isinstance(exc, (openai.APIConnectionError, httpx.HTTPError)) and not isinstance(
            exc, (openai.APITimeoutError, httpx.TimeoutException)):
        return ForgeError(f"Forge could not reach the embedding server at {base_url} (is it running?); try again.")
    if isinstance(exc, (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                        httpx.TimeoutException)):
        return ForgeError(f"Embeddings from {base_url} are unavailable right now ({type(exc).__name__}); "
                          "try again in a minute.")
    if isinstance(exc, openai.APIStatusError):
        return ForgeError(f"The embedding server refused the request ({exc.status_code}); check "
                          "FORGE_OPENAI_EMBED_MODEL.")
    return ForgeError("The embedding server could not answer; try again.")
