"""Honest money: every call of a turn counted, priced exactly, and caching that follows the conversation.

The online path runs the real `anthropic` and `voyageai` clients against the local stub, whose prompt cache
model (forge_bench.bench.cache_model) answers every request's usage as Anthropic would report it.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from forge_bench.bench.cache_model import PromptCache
from pmforge.core.models import BilledCall, Turn, Usage
from pmforge.core.settings import ModelPrice
from pmforge.llm.costs import calls_cost, meter_lines, money, session_cost, usage_dollars
from pmforge.llm.messages import Message
from pmforge.turn.orchestrator import run_turn
from stubs import text_message, tool_use_message

ROUTE = {
    "action": "ask_questions", "mode": "mode_1", "next_probe": "solution_problem_separation", "patterns": [],
    "requires_retrieval": True, "retrieval_query": "pilot stores", "reasoning": "Substantive opening.",
}
REGISTER = {"claim": "Store managers will adopt a markdown app", "type": "value", "impact": "high",
            "confidence": "guessed", "basis": "PM's hunch"}


def _turn_script(reply_output: int) -> list[dict]:
    """Routing, a tool round, the reply, the turn summary: four Claude calls."""
    return [
        tool_use_message([("route", ROUTE)], usage={"output_tokens": 41}),
        tool_use_message([("register_assumption", REGISTER)], text="Noted.", usage={"output_tokens": 77}),
        text_message("Question 1: Who feels this most?", usage={"output_tokens": reply_output}),
        text_message("PM wants to cut fresh shrink.", usage={"output_tokens": 19}),
    ]


def _by_hand(served: list[tuple[str, dict]], prices) -> Decimal:
    total = Decimal(0)
    for model, u in served:
        p = prices[model]
        one_hour = u["cache_creation"]["ephemeral_1h_input_tokens"]
        total += (u["input_tokens"] * Decimal(str(p.input)) + u["output_tokens"] * Decimal(str(p.output))
                  + u["cache_read_input_tokens"] * Decimal(str(p.cache_read))
                  + (u["cache_creation_input_tokens"] - one_hour) * Decimal(str(p.cache_write))
                  + one_hour * Decimal(str(p.cache_write_1h))) / 1_000_000
    return total


def _voyage_dollars(stub, first: int, prices, model: str) -> Decimal:
    tokens = sum(sum(max(1, len(str(t).split())) for t in r["input"]) for r in stub.voyage_requests()[first:])
    return tokens * Decimal(str(prices[model].input)) / 1_000_000


def test_the_meter_equals_the_stubs_usage_priced_by_hand(online, stub):
    stub.prompt_cache = PromptCache()
    served_before, voyage_before = len(stub.served), len(stub.voyage_requests())
    stub.queue_anthropic(*_turn_script(350), *_turn_script(420))
    run_turn(online, "We want to cut fresh shrink. I think store managers will adopt a markdown app.")
    run_turn(online, "Dana owns the shrink target and reviews it every month.")
    settings = online.settings
    turns = online.state().turns

    # Every call is in the turn record: 4 Claude calls and 2 Voyage calls (query, memory) per turn.
    assert [[c.purpose for c in t.calls] for t in turns] == [
        ["route", "embed_query", "reply", "reply", "summarize_turn", "embed_documents"]] * 2
    served = stub.served[served_before:]
    assert [c.usage.input_tokens for t in turns for c in t.calls if not c.purpose.startswith("embed")] == [
        u["input_tokens"] for _, u in served]
    # The second round read what the first wrote (the moving breakpoint), and the second turn read the static prefix.
    first_round, second_round = turns[0].calls[2].usage, turns[0].calls[3].usage
    assert second_round.cache_read_input_tokens == (
        first_round.cache_read_input_tokens + first_round.cache_creation_input_tokens)
    assert turns[1].calls[2].usage.cache_read_input_tokens > 0

    cost = session_cost(turns, settings)
    expected = _by_hand(served, settings.prices) + _voyage_dollars(stub, voyage_before, settings.prices,
                                                                    settings.voyage_model)
    assert cost.turns.dollars == expected  # exactly: Decimal from the rates as written
    assert cost.turns.unpriced == []
    assert set(cost.turns.by_model) == {settings.phase_a_model, settings.phase_b_model, settings.voyage_model}
    lines = meter_lines(turns, settings)
    assert lines[1].startswith(f"Session (2 turns): {money(expected)} — ")
    assert "Caching saved" in lines[1] and settings.phase_a_model in lines[1]


def test_the_turn_summary_and_memory_embeddings_survive_a_reload(online, stub):
    stub.queue_anthropic(*_turn_script(300))
    run_turn(online, "Fresh shrink is 6 percent in the pilot region.")
    from pmforge.core import transcript
    transcript._cache.clear()  # read the file afresh, as another process would
    turn = online.ws.load_state().turns[0]
    assert [c.purpose for c in turn.calls][-2:] == ["summarize_turn", "embed_documents"]
    assert turn.calls[-2].usage.output_tokens == 19


def test_an_upload_records_its_summary_and_embeddings(online):
    entry = online.manifest().find("plan.md")
    assert [c.purpose for c in entry.calls][0] == "summarize_file"
    assert {c.purpose for c in entry.calls[1:]} == {"embed_documents"}
    assert all(c.usage.input_tokens > 0 for c in entry.calls)
    cost = session_cost([], online.settings, [entry])
    assert cost.uploads.dollars > 0


def _reply_requests(stub) -> list[dict]:
    return [r for r in stub.anthropic_requests() if r.get("tools") and not r.get("tool_choice")]


def _unmarked(value):
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def test_cached_prefixes_are_byte_stable_between_rounds_and_turns(online, stub):
    stub.queue_anthropic(*_turn_script(300), *_turn_script(300))
    run_turn(online, "We want to cut fresh shrink. I think store managers will adopt a markdown app.")
    run_turn(online, "Dana owns the shrink target and reviews it every month.")
    replies = _reply_requests(stub)
    assert len(replies) == 4
    # The static breakpoint: tools and the static system block, the same bytes on every reply of the mode.
    static = {json.dumps([r["tools"], r["system"][0]]).encode() for r in replies}
    assert len(static) == 1 and replies[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    # The moving breakpoint: each request's last block, and only it, is marked in its messages...
    for r in replies:
        marked = [b for m in r["messages"] for b in m["content"] if "cache_control" in b]
        assert marked == [r["messages"][-1]["content"][-1]]
    # ...and the next round sends what this one cached, byte for byte, then appends to it.
    for first, second in ((replies[0], replies[1]), (replies[2], replies[3])):
        n = len(first["messages"])
        assert json.dumps(_unmarked(second["messages"][:n])).encode() == json.dumps(_unmarked(first["messages"])).encode()
        assert second["system"] == first["system"]


def test_the_moving_breakpoint_is_cheaper_in_the_cache_model(online, stub):
    stub.queue_anthropic(*_turn_script(300))
    run_turn(online, "We want to cut fresh shrink. I think store managers will adopt a markdown app.")
    replies = _reply_requests(stub)
    both, static_only = PromptCache(), PromptCache()
    moving = [both.usage(r) for r in replies]
    static = [static_only.usage(r, message_marks=False) for r in replies]
    # Round 2 reads round 1's whole request; with the static mark alone it pays for the turn's context again.
    assert moving[1]["cache_read_input_tokens"] > static[1]["cache_read_input_tokens"]
    assert moving[1]["input_tokens"] < static[1]["input_tokens"]
    # Top-level automatic caching marks the same last block: the same usage as the moving breakpoint.
    automatic = PromptCache()
    assert [automatic.usage(_unmarked_messages(r), automatic=True) for r in replies] == moving


def _unmarked_messages(request: dict) -> dict:
    return dict(request, messages=_unmarked(request["messages"]))


def test_an_hour_long_static_prefix(online_services, stub):
    services = online_services(cache_ttl="1h")
    assert services.llm.cache_ttl == "1h"
    from pmforge.llm.base import ChatRequest, SystemBlock

    request = ChatRequest(purpose="reply", model="claude-sonnet-4-5", messages=[Message.user("hi")],
                          system=[SystemBlock(text="static", cache=True), SystemBlock(text="turn")])
    wire = services.llm.wire(request)
    # Hour-long entries must come before five-minute ones: the static block first, the moving mark after.
    assert wire["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert wire["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    cache = PromptCache()
    usage = cache.usage(dict(wire, system=[dict(wire["system"][0], text="x " * 3000), wire["system"][1]]))
    assert usage["cache_creation"]["ephemeral_1h_input_tokens"] > 0


def test_pauses_longer_than_the_ttl_write_the_prefix_again():
    request = {"model": "claude-sonnet-4-5", "system": [
        {"type": "text", "text": "rule " * 2000, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "hello"}]}
    cache = PromptCache()
    assert cache.usage(request)["cache_creation_input_tokens"] > 0
    cache.now = 240.0
    assert cache.usage(request)["cache_read_input_tokens"] > 0  # read, and its five minutes start again
    cache.now = 240.0 + 299.0
    assert cache.usage(request)["cache_read_input_tokens"] > 0
    cache.now += 301.0
    assert cache.usage(request)["cache_read_input_tokens"] == 0
    assert cache.usage(dict(request, model="claude-haiku-4-5"))["cache_creation_input_tokens"] == 0  # < 4,096


def test_turns_saved_before_calls_were_recorded_are_priced_as_phase_b(isolated_env):
    from pmforge.core import settings as config

    settings = config.get_settings()
    settings = settings.model_copy(update={"prices": {settings.phase_b_model: ModelPrice(input=2.0, output=10.0,
                                                                                         cache_read=0.2)}})
    old = Turn(number=1, user="u", assistant="a", usage=Usage(input_tokens=1000, output_tokens=100,
                                                              cache_read_input_tokens=4000))
    cost = session_cost([old], settings)
    assert cost.turns.dollars == Decimal("0.0020") + Decimal("0.0010") + Decimal("0.0008")
    assert cost.turns.saved == Decimal("0.0072")  # 4,000 read at $0.20 instead of $2.00 per million
    assert set(cost.turns.by_model) == {settings.phase_b_model}


def test_a_model_without_a_price_shows_its_tokens_not_dollars(isolated_env):
    from pmforge.core import settings as config

    settings = config.get_settings()
    turn = Turn(number=1, user="u", assistant="a", calls=[
        BilledCall(purpose="reply", model="llama3.1:8b", usage=Usage(input_tokens=900, output_tokens=80))])
    lines = meter_lines([turn], settings)
    # Tokens only: a model without a price is never shown in dollars, nor what caching "saved" on it.
    assert lines[0] == "Last turn: 980 tokens — llama3.1:8b 980 tokens (1 call, no price set)."
    assert "$" not in " ".join(lines)
    assert lines[-1] == "No price in settings for llama3.1:8b (set FORGE_PRICES)."


# --------------------------------------------------------------------------- the arithmetic, by hand

# Rates chosen so a float would show its binary error (0.1 + 0.2) if the meter priced with floats.
PRICE = ModelPrice(input=0.1, output=0.7, cache_read=0.01, cache_write=0.2, cache_write_1h=0.3)


def _settings(**prices: ModelPrice):
    from pmforge.core import settings as config

    return config.get_settings().model_copy(update={"prices": prices})


def test_usage_adds_field_by_field():
    a = Usage(input_tokens=1, output_tokens=2, cache_read_input_tokens=3, cache_creation_input_tokens=40,
              cache_creation_1h_input_tokens=30)
    b = Usage(input_tokens=10, output_tokens=20, cache_read_input_tokens=30, cache_creation_input_tokens=5,
              cache_creation_1h_input_tokens=0)
    assert a + b == Usage(input_tokens=11, output_tokens=22, cache_read_input_tokens=33,
                          cache_creation_input_tokens=45, cache_creation_1h_input_tokens=30)
    assert a + Usage() == a and sum([a, b], Usage()) == a + b
    assert all(getattr(a + b, name) == getattr(a, name) + getattr(b, name) for name in Usage.model_fields)


@pytest.mark.parametrize("usage, dollars", [
    (Usage(input_tokens=1_000_000), "0.1"),
    (Usage(output_tokens=1_000_000), "0.7"),
    (Usage(cache_read_input_tokens=1_000_000), "0.01"),
    (Usage(cache_creation_input_tokens=1_000_000), "0.2"),  # every write a five-minute one
    (Usage(cache_creation_input_tokens=1_000_000, cache_creation_1h_input_tokens=1_000_000), "0.3"),
    (Usage(cache_creation_input_tokens=1_000_000, cache_creation_1h_input_tokens=250_000), "0.225"),
    (Usage(input_tokens=1, output_tokens=2, cache_read_input_tokens=3, cache_creation_input_tokens=4), "0.00000233"),
], ids=["input", "output", "cache read", "5-minute write", "1-hour write", "both writes", "a few of each"])
def test_each_kind_of_token_is_priced_at_its_own_rate_exactly(usage, dollars):
    assert usage_dollars(usage, PRICE) == Decimal(dollars)


def test_dollars_are_summed_by_model_and_caching_savings_can_be_negative():
    settings = _settings(**{"claude-a": PRICE, "embed-b": ModelPrice(input=0.02)})
    read = Usage(input_tokens=100_000, cache_read_input_tokens=900_000, output_tokens=10_000)
    written_never_read = Usage(input_tokens=100_000, cache_creation_input_tokens=900_000)
    cost = calls_cost([BilledCall(purpose="reply", model="claude-a", usage=read),
                       BilledCall(purpose="reply", model="claude-a", usage=written_never_read),
                       BilledCall(purpose="embed_query", model="embed-b", usage=Usage(input_tokens=500_000))],
                      settings)

    a, b = cost.by_model["claude-a"], cost.by_model["embed-b"]
    assert (a.calls, b.calls) == (2, 1)
    assert a.usage == read + written_never_read
    assert a.dollars == usage_dollars(read, PRICE) + usage_dollars(written_never_read, PRICE) == Decimal("0.216")
    assert b.dollars == Decimal("0.01")
    assert cost.dollars == Decimal("0.226")
    # Reads save (0.1 - 0.01) a token; writes never read back cost (0.2 - 0.1) a token more than no cache.
    assert a.saved == Decimal("0.081") - Decimal("0.090") == Decimal("-0.009") and b.saved == 0
    assert cost.unpriced == []


def test_a_model_without_a_price_counts_its_tokens_beside_priced_ones():
    settings = _settings(**{"claude-a": PRICE})
    local = Usage(input_tokens=900, output_tokens=80)
    priced = Usage(input_tokens=1_000_000)
    turn = Turn(number=1, user="u", assistant="a", calls=[
        BilledCall(purpose="route", model="llama3.1:8b", usage=local),
        BilledCall(purpose="reply", model="claude-a", usage=priced)])
    cost = session_cost([turn], settings).turns

    assert cost.dollars == Decimal("0.1")  # the priced model's dollars only, never a guess for the other
    assert cost.unpriced == ["llama3.1:8b"] and cost.by_model["llama3.1:8b"].dollars == 0
    assert cost.usage == local + priced  # its tokens still count
    lines = meter_lines([turn], settings)
    assert "llama3.1:8b 980 tokens (1 call, no price set)" in lines[0] and "claude-a $0.10 (1 call)" in lines[0]
    assert lines[-2].startswith("Tokens: 1,000,900 input,") and lines[-2].endswith("80 output.")


@pytest.mark.parametrize("value, shown", [
    ("1234.567", "$1,234.57"), ("0.01", "$0.01"), ("0.0099", "$0.0099"), ("0.00004", "$0.0000"), ("0", "$0.0000"),
    ("-0.25", "$-0.25"),
])
def test_money_shows_cents_and_four_decimals_below_a_cent(value, shown):
    assert money(Decimal(value)) == shown


@pytest.mark.parametrize("turns", [3])
def test_bench_cost_prints_the_readme_block(turns):
    from forge_bench.bench.cost import bench_cost, markdown

    figures = bench_cost(turns=turns)
    assert figures["meter_matches_replay"]  # the meter's dollars are the cache model's, call for call
    d = figures["dollars_per_100_turns"]
    assert d["as_built"] < d["static_breakpoint_only"] < d["caching_off"]
    assert d["five_minute_gaps_1h_ttl"] < d["five_minute_gaps"]
    assert figures["prompt_tokens_per_turn"]["send_everything_at_turn_1"] > figures["workload"]["document_tokens"]
    block = markdown(figures)
    assert block.startswith(f"Measured by `forge bench cost --turns {turns}`")
    assert "| reply |" in block and "Send-everything baseline" in block
