"""Voyage AI embeddings (voyage-3.5-lite by default) through the official client.

Every call is wrapped in tenacity exponential backoff with jitter: rate limits,
server errors, timeouts and connection errors (the client's own retries skip the last).
"""

from __future__ import annotations

from typing import Iterator, cast

import voyageai
import voyageai.error as verr
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from pmforge.core.errors import ForgeError
from pmforge.core.settings import Settings
from pmforge.embed.base import Embedder

RETRYABLE = (
    verr.RateLimitError,
    verr.ServerError,
    verr.ServiceUnavailableError,
    verr.Timeout,
    verr.TryAgain,
    verr.APIConnectionError,
)


def _estimate_tokens(text: str) -> int:
    # Voyage's own tokenizer needs a hub download; ~4 characters a token is a safe upper bound for batching.
    return len(text) // 3 + 1


class VoyageEmbedder(Embedder):
    @classmethod
    def from_settings(cls, settings: Settings) -> "VoyageEmbedder":
        if not settings.voyage_api_key:
            raise ForgeError("FORGE_EMBEDDINGS=voyage needs VOYAGE_API_KEY to be set.")
        return cls(
            settings.voyage_api_key.get_secret_value(), model=settings.voyage_model,
            dimensions=settings.voyage_dimensions, base_url=settings.voyage_base_url,
            batch_size=settings.voyage_batch_size, batch_tokens=settings.voyage_batch_tokens,
            max_attempts=settings.voyage_max_attempts, backoff_s=settings.voyage_backoff_s,
            max_wait_s=settings.voyage_max_wait_s, timeout_s=settings.voyage_timeout_s,
        )

    def __init__(
        self,
        api_key: str,
        model: str = "voyage-3.5-lite",
        dimensions: int = 512,
        base_url: str | None = None,
        batch_size: int = 128,
        batch_tokens: int = 100_000,
        max_attempts: int = 6,
        backoff_s: float = 0.5,
        max_wait_s: float = 30.0,
        timeout_s: float = 60.0,
    ) -> None:
        super().__init__()
        self.name, self.dimensions = model, dimensions
        self.client = voyageai.Client(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s)
        self.batch_size, self.batch_tokens = batch_size, batch_tokens
        # How a failed call is retried (each call gets its own Retrying: it holds that call's attempts).
        self._retry = retry_if_exception_type(RETRYABLE)
        self._wait = wait_random_exponential(multiplier=backoff_s, max=max_wait_s)
        self._stop = stop_after_attempt(max_attempts)

    def _batches(self, texts: list[str]) -> Iterator[list[str]]:
        batch: list[str] = []
        tokens = 0
        for text in texts:
            cost = _estimate_tokens(text)
            if batch and (len(batch) >= self.batch_size or tokens + cost > self.batch_tokens):
                yield batch
                batch, tokens = [], 0
            batch.append(text)
            tokens += cost
        if batch:
            yield batch

    def _call(self, batch: list[str], kind: str) -> tuple[list[list[float]], int]:
        for attempt in Retrying(retry=self._retry, wait=self._wait, stop=self._stop, reraise=True):
            with attempt:
                result = self.client.embed(
                    batch, model=self.name, input_type=kind, output_dimension=self.dimensions
                )
        # The client types embeddings as floats or ints; ints come only with an integer output_dtype,
        # and Forge asks for the default (floats).
        return cast(list[list[float]], result.embeddings), result.total_tokens or 0

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        return self._embed_billed(texts, kind)[0]

    def _embed_billed(self, texts: list[str], kind: str) -> tuple[list[list[float]], int]:
        """Vectors and the tokens Voyage billed for them (its own count, summed over the batches)."""
        out: list[list[float]] = []
        tokens = 0
        try:
            for batch in self._batches(texts):
                vectors, billed = self._call(batch, kind)
                out.extend(vectors)
                tokens += billed
        except verr.AuthenticationError:
            raise ForgeError("Voyage rejected the API key; check VOYAGE_API_KEY.") from None
        except RETRYABLE as exc:
            raise ForgeError(
                f"Voyage embeddings are unavailable right now ({type(exc).__name__}); try again in a minute."
            ) from None
        except verr.VoyageError as exc:
            raise ForgeError(f"Voyage refused the embedding request: {exc}") from None
        return out, tokens
