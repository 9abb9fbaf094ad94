"""What a session has cost: billed tokens per turn and in total, priced from config."""

from __future__ import annotations

from dataclasses import dataclass

from config import Settings

from .models import Turn


@dataclass
class TurnCost:
    turn: int
    prompt_tokens: int  # Phase A + Phase B as Forge counted them (cl100k estimate)
    input_tokens: int  # billed, uncached
    cached_tokens: int  # billed at the cache-read rate
    output_tokens: int
    dollars: float


def turn_cost(turn: Turn, settings: Settings) -> TurnCost:
    u = turn.usage
    dollars = (
        u.input_tokens * settings.price_input_per_mtok
        + u.cache_read_input_tokens * settings.price_cache_read_per_mtok
        + u.cache_creation_input_tokens * settings.price_cache_write_per_mtok
        + u.output_tokens * settings.price_output_per_mtok
    ) / 1_000_000
    return TurnCost(
        turn=turn.number,
        prompt_tokens=turn.tokens.phase_a + turn.tokens.phase_b,
        input_tokens=u.input_tokens + u.cache_creation_input_tokens,
        cached_tokens=u.cache_read_input_tokens,
        output_tokens=u.output_tokens,
        dollars=dollars,
    )


def session_costs(turns: list[Turn], settings: Settings) -> tuple[list[TurnCost], TurnCost]:
    per_turn = [turn_cost(t, settings) for t in turns]
    total = TurnCost(
        turn=len(turns),
        prompt_tokens=sum(c.prompt_tokens for c in per_turn),
        input_tokens=sum(c.input_tokens for c in per_turn),
        cached_tokens=sum(c.cached_tokens for c in per_turn),
        output_tokens=sum(c.output_tokens for c in per_turn),
        dollars=sum(c.dollars for c in per_turn),
    )
    return per_turn, total
