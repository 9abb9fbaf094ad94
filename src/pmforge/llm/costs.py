"""What a session has cost: every billed call, priced by model from the rates in settings.

A turn records each call it made (`Turn.calls`): Phase A's routing, every round of Phase B's tool loop,
the turn summary, and Voyage's query and document embeddings. An upload records its own (`ManifestEntry.calls`:
the file summary and the document embeddings), since it belongs to no turn. Calls are recorded through
`MeteredLLM` and `MeteredEmbedder`, which wrap the project's providers for one turn or one upload, so a
call is counted whichever code path made it.

Dollars are computed exactly (`Decimal`, from the rates as written in settings): the meter's figure for a
session equals its calls' tokens priced by hand, to the last digit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Iterator, Protocol

from pmforge.core.models import BilledCall, CallPurpose, ManifestEntry, Turn, Usage
from pmforge.core.settings import ModelPrice, Settings
from pmforge.llm.base import LLM, ChatRequest, ChatResponse, ResponseStream

MILLION = Decimal(1_000_000)


# ---------------------------------------------------------------- recording


class Ledger:
    """The calls of one turn or one upload, in the order they were answered (appends from any thread)."""

    def __init__(self) -> None:
        self._calls: list[BilledCall] = []
        self._lock = threading.Lock()

    def record(self, purpose: CallPurpose, model: str, usage: Usage) -> None:
        if usage == Usage():  # the offline interviewer and the local embedder bill nothing
            return
        with self._lock:
            self._calls.append(BilledCall(purpose=purpose, model=model, usage=usage))

    def take(self) -> list[BilledCall]:
        """The calls recorded since the last take (so a turn's summary is added once, after its save)."""
        with self._lock:
            calls, self._calls = self._calls, []
        return calls


class MeteredLLM(LLM):
    """An LLM that records each answer's usage in a ledger; otherwise exactly the LLM it wraps."""

    def __init__(self, llm: LLM, ledger: Ledger):
        self.llm, self.ledger = llm, ledger
        self.name, self.online = llm.name, llm.online

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = self.llm.complete(request)
        self.ledger.record(request.purpose, response.model or request.model, response.usage)
        return response

    def stream(self, request: ChatRequest) -> ResponseStream:
        inner = self.llm.stream(request)

        def chunks() -> Iterator[str | ChatResponse]:
            yield from inner
            if inner.response is not None:
                self.ledger.record(request.purpose, inner.response.model or request.model, inner.response.usage)
                yield inner.response

        return ResponseStream(chunks())


class BilledEmbedder(Protocol):
    """An embedder that says what each call billed (every `pmforge.embed.Embedder` does)."""

    name: str

    def embed_documents_billed(self, texts: list[str]) -> tuple[list[list[float]], int]: ...

    def embed_query_billed(self, text: str) -> tuple[list[float], int]: ...


class MeteredEmbedder:
    """An embedder that records the tokens each embedding call billed; everything else is the wrapped one's."""

    def __init__(self, embedder: BilledEmbedder, ledger: Ledger):
        self._embedder, self._ledger = embedder, ledger

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors, tokens = self._embedder.embed_documents_billed(texts)
        self._ledger.record("embed_documents", self._embedder.name, Usage(input_tokens=tokens))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        vector, tokens = self._embedder.embed_query_billed(text)
        self._ledger.record("embed_query", self._embedder.name, Usage(input_tokens=tokens))
        return vector


# ---------------------------------------------------------------- pricing


def _rate(value: float) -> Decimal:
    return Decimal(str(value))  # the rate as written in settings, not its binary approximation


def usage_dollars(usage: Usage, price: ModelPrice) -> Decimal:
    writes_5m = usage.cache_creation_input_tokens - usage.cache_creation_1h_input_tokens
    return (
        usage.input_tokens * _rate(price.input)
        + usage.output_tokens * _rate(price.output)
        + usage.cache_read_input_tokens * _rate(price.cache_read)
        + writes_5m * _rate(price.cache_write)
        + usage.cache_creation_1h_input_tokens * _rate(price.cache_write_1h)
    ) / MILLION


def uncached_dollars(usage: Usage, price: ModelPrice) -> Decimal:
    """The same tokens with no prompt caching: every input token at the input rate."""
    prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    return (prompt * _rate(price.input) + usage.output_tokens * _rate(price.output)) / MILLION


@dataclass
class ModelCost:
    model: str
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    dollars: Decimal = Decimal(0)
    saved: Decimal = Decimal(0)  # by prompt caching; negative when cache writes were never read back
    priced: bool = True  # False: no rate in settings for this model (its tokens are shown, not its dollars)


@dataclass
class Cost:
    """What some calls cost, by model."""

    by_model: dict[str, ModelCost] = field(default_factory=dict)

    @property
    def dollars(self) -> Decimal:
        return sum((m.dollars for m in self.by_model.values()), Decimal(0))

    @property
    def saved(self) -> Decimal:
        return sum((m.saved for m in self.by_model.values()), Decimal(0))

    @property
    def usage(self) -> Usage:
        return sum((m.usage for m in self.by_model.values()), Usage())

    @property
    def unpriced(self) -> list[str]:
        return [m.model for m in self.by_model.values() if not m.priced]


def calls_cost(calls: Iterable[BilledCall], settings: Settings) -> Cost:
    cost = Cost()
    for call in calls:
        entry = cost.by_model.setdefault(call.model, ModelCost(call.model))
        entry.usage = entry.usage + call.usage
        entry.calls += 1
        price = settings.prices.get(call.model)
        if price is None:
            entry.priced = False
            continue
        spent = usage_dollars(call.usage, price)
        entry.dollars += spent
        entry.saved += uncached_dollars(call.usage, price) - spent
    return cost


def turn_calls(turn: Turn, settings: Settings) -> list[BilledCall]:
    """A turn's billed calls. A turn saved before calls were recorded one by one has its Phase B total only."""
    if turn.calls or turn.usage == Usage():
        return list(turn.calls)
    return [BilledCall(purpose="reply", model=settings.phase_b_model, usage=turn.usage)]


def turn_cost(turn: Turn, settings: Settings) -> Cost:
    return calls_cost(turn_calls(turn, settings), settings)


@dataclass
class SessionCost:
    per_turn: list[Cost]
    turns: Cost  # every turn together
    uploads: Cost  # file summaries and document embeddings

    @property
    def total(self) -> Cost:
        return _merged(self.turns, self.uploads)


def session_cost(turns: list[Turn], settings: Settings, files: Iterable[ManifestEntry] = ()) -> SessionCost:
    per_turn = [turn_cost(t, settings) for t in turns]
    every_turn = calls_cost((c for t in turns for c in turn_calls(t, settings)), settings)
    uploads = calls_cost((c for f in files for c in f.calls), settings)
    return SessionCost(per_turn=per_turn, turns=every_turn, uploads=uploads)


def _merged(*costs: Cost) -> Cost:
    merged = Cost()
    for cost in costs:
        for model, entry in cost.by_model.items():
            into = merged.by_model.setdefault(model, ModelCost(model))
            into.usage = into.usage + entry.usage
            into.calls += entry.calls
            into.dollars += entry.dollars
            into.saved += entry.saved
            into.priced = into.priced and entry.priced
    return merged


def money(value: Decimal) -> str:
    """Dollars for a person: cents, or four decimals below a cent (a turn often costs less)."""
    if abs(value) >= Decimal("0.01"):
        return f"${value:,.2f}"
    return f"${value:.4f}"


def tokens_of(usage: Usage) -> int:
    """Every token of a usage: input billed in full, read from and written to the cache, and output."""
    return (usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
            + usage.output_tokens)


def by_model_line(cost: Cost) -> str:
    """"claude-sonnet-4-5 $0.0412 (3 calls) · smollm2 5,310 tokens (3 calls, no price set)": a model without
    a price (a local one) in tokens, never in dollars."""
    parts = []
    for m in cost.by_model.values():
        calls = f"{m.calls} call{'s' * (m.calls != 1)}"
        if m.priced:
            parts.append(f"{m.model} {money(m.dollars)} ({calls})")
        else:
            parts.append(f"{m.model} {tokens_of(m.usage):,} tokens ({calls}, no price set)")
    return " · ".join(parts)


def _scope_line(label: str, cost: Cost) -> str:
    """One scope of the meter. Dollars and caching savings only for models with a price: a session all on a
    local model reads in tokens alone."""
    detail = by_model_line(cost) or "nothing billed"
    if cost.by_model and all(not m.priced for m in cost.by_model.values()):
        return f"{label}: {tokens_of(cost.usage):,} tokens — {detail}."
    saved = f" Caching saved {money(cost.saved)}." if any(m.priced for m in cost.by_model.values()) or \
        not cost.by_model else ""
    return f"{label}: {money(cost.dollars)} — {detail}.{saved}"


def meter_lines(turns: list[Turn], settings: Settings, files: Iterable[ManifestEntry] = ()) -> list[str]:
    """The session meter's words: the last turn's and the session's dollars by model, what caching saved,
    uploads apart, and the session's tokens by kind. A model with no price in settings is shown in tokens."""
    cost = session_cost(turns, settings, files)
    lines = []
    if cost.per_turn:
        lines.append(_scope_line("Last turn", cost.per_turn[-1]))
        lines.append(_scope_line(f"Session ({len(turns)} turn{'s' * (len(turns) != 1)})", cost.turns))
    if cost.uploads.by_model:
        lines.append(_scope_line("Uploads", cost.uploads).split(" Caching saved")[0])
    u = cost.total.usage
    lines.append(f"Tokens: {u.input_tokens:,} input, {u.cache_read_input_tokens:,} read from the cache, "
                 f"{u.cache_creation_input_tokens:,} written to it, {u.output_tokens:,} output.")
    if cost.total.unpriced:
        lines.append("No price in settings for " + ", ".join(cost.total.unpriced) + " (set FORGE_PRICES).")
    return lines
