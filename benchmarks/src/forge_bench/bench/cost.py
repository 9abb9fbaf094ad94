"""`forge bench cost`: what a session costs in dollars, through the real turn loop.

A reference-sized workload (80-word messages, 380-word replies, a tool round on four turns in five) runs
through the real `anthropic` and `voyageai` clients against the local stub (`tests/stubs.py`) with the
prompt cache model (`cache_model.py`) answering every request's usage, so the dollars are the meter's own:
each call recorded in the turn, priced from settings. The same requests are then priced again under other
cache conditions — no caching, the static breakpoint alone (Forge before the moving breakpoint), a PM who
pauses more than five minutes between turns, and that PM with the static prefix cached for an hour — and
against a send-everything design (every probe and pattern, the whole state, the whole transcript and the
full text of every uploaded document, each turn, in one uncached call).

`markdown(figures)` is the README's block: regenerate it with `forge bench cost --turns 100`.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from forge_bench.bench import session
from forge_bench.bench.cache_model import PromptCache
from forge_bench.bench.figures import scratch_projects
from pmforge.core.errors import ForgeError
from pmforge.core.models import BilledCall, CallPurpose, Usage
from pmforge.core.tokens import count_tokens
from pmforge.llm.costs import calls_cost, uncached_dollars
from pmforge.tools import tool_call
from pmforge.tools.assumptions import RegisterAssumption

MESSAGE_WORDS = 80
REPLY_WORDS = 380
TOOL_TURNS = 0.8  # share of turns with a tool round (the reference bills 1.8–2.0 rounds a turn)
TYPICAL_GAP_S = 60.0  # between two turns of a PM at work
LONG_GAP_S = 360.0  # a PM who pauses more than five minutes between turns
PURPOSES = ("route", "reply", "summarize_turn", "embed_query", "embed_documents")


def _stubs():
    """tests/stubs.py, the local Anthropic and Voyage stub (the bench runs from a checkout of Forge)."""
    path = Path(__file__).resolve().parents[4] / "tests" / "stubs.py"  # benchmarks/src/forge_bench/bench/ -> checkout
    if not path.is_file():
        raise ForgeError("forge bench cost runs from a checkout of Forge: it needs tests/stubs.py.")
    spec = importlib.util.spec_from_file_location("forge_bench_stubs", path)
    if spec is None or spec.loader is None:  # never for a .py file that exists
        raise ForgeError(f"forge bench cost could not load {path}.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class Script:
    """What the stub answers: routing, a tool round then the reply, or the reply alone; short summaries."""

    def __init__(self, stubs, seed: int = 3):
        self.stubs, self.rng, self.turn = stubs, random.Random(seed), 0

    def _usage(self, content) -> dict:
        return {"output_tokens": count_tokens(json.dumps(content)) if not isinstance(content, str)
                else count_tokens(content)}

    def __call__(self, request: dict) -> dict:
        tool_choice = request.get("tool_choice") or {}
        model = request.get("model") or ""
        if tool_choice.get("name") == "route":
            decision: dict[str, Any] = {
                "action": "ask_questions", "mode": "mode_1", "next_probe": None, "patterns": [],
                "requires_retrieval": True, "retrieval_query": "", "reasoning": "A substantive answer.",
            }
            return self.stubs.tool_use_message([("route", decision)], model=model, usage=self._usage(decision))
        if not request.get("tools"):  # a turn or file summary
            text = session.prose(self.rng, 40)
            return self.stubs.text_message(text, model=model, usage=self._usage(text))
        last = request["messages"][-1]["content"]
        after_tools = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        if after_tools or self.rng.random() >= TOOL_TURNS:
            text = session.prose(self.rng, REPLY_WORDS)
            return self.stubs.text_message(text, model=model, usage=self._usage(text))
        lead = session.prose(self.rng, 30)
        claim = {"claim": f"Department leads act on a daily list (turn {self.turn})", "type": "value",
                 "impact": "medium", "confidence": "guessed", "basis": "The PM's message."}
        return self.stubs.tool_use_message([tool_call(RegisterAssumption, claim)], text=lead, model=model,
                                           usage=self._usage([lead, claim]))


def _settings(stub_url: str, projects: Path):
    from pydantic import SecretStr

    from pmforge.core import settings as config

    return config.get_settings().model_copy(update=dict(
        projects_dir=projects, llm="anthropic", embeddings="voyage",
        anthropic_api_key=SecretStr("bench"), anthropic_base_url=stub_url, anthropic_max_retries=0,
        voyage_api_key=SecretStr("bench"), voyage_base_url=stub_url + "/v1",
        min_similarity=-1.0,  # the stub's vectors are hash-random: let retrieval fill the sections, as in use
        cache_ttl="5m",
    ))


def _purpose_of(request: dict) -> CallPurpose:
    if (request.get("tool_choice") or {}).get("name") == "route":
        return "route"
    return "reply" if request.get("tools") else "summarize_turn"


def _replay(requests: list[tuple[int, dict, int]], gap_s: float, prices, **rules) -> tuple[Decimal, Usage]:
    """Dollars and usage of the recorded LLM requests priced afresh by the cache model: turn k at k × gap."""
    cache, dollars, usage = PromptCache(), Decimal(0), Usage()
    for turn, request, output in requests:
        cache.now = turn * gap_s
        u = cache.usage(request, **rules)
        call = Usage(input_tokens=u["input_tokens"], output_tokens=output,
                     cache_read_input_tokens=u["cache_read_input_tokens"],
                     cache_creation_input_tokens=u["cache_creation_input_tokens"],
                     cache_creation_1h_input_tokens=u["cache_creation"]["ephemeral_1h_input_tokens"])
        dollars += calls_cost([BilledCall(purpose=_purpose_of(request), model=request["model"], usage=call)],
                              prices).dollars
        usage = usage + call
    return dollars, usage


def bench_cost(turns: int = 100) -> dict:
    from forge_bench.bench.prompt import baseline_phase_b
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import start_turn

    stubs = _stubs()
    with scratch_projects("forge-bench-cost-") as projects, stubs.StubServer() as stub:
        stub.prompt_cache = PromptCache()
        script = stub.anthropic_fallback = Script(stubs)
        settings = _settings(stub.url, projects)
        project = Project.create(Services.from_settings(settings), "cost bench")
        document_tokens = 0
        for name, data in session.documents().items():
            assert ingest_file(project, name, data).ok
            document_tokens += count_tokens(data.decode("utf-8"))
        first = len(stub.anthropic_requests())
        turn_of: list[int] = []  # the turn each LLM request belongs to
        baseline: list[int] = []
        for k, message in enumerate(session.heavy_messages(turns, words=MESSAGE_WORDS), start=1):
            script.turn = k
            stub.prompt_cache.now = k * TYPICAL_GAP_S
            pending = start_turn(project, message)
            baseline.append(baseline_phase_b(pending.state, pending.manifest, message) + document_tokens)
            pending.finish()
            turn_of += [k] * (len(stub.anthropic_requests()) - first - len(turn_of))
        state, files = project.state(), project.manifest().file_summaries
        requests = stub.anthropic_requests()[first:]
        outputs = [usage["output_tokens"] for _, usage in stub.served[first:]]

    calls = [c for t in state.turns for c in t.calls]
    built = calls_cost(calls, settings)
    llm_calls = [c for c in calls if not c.purpose.startswith("embed")]
    embeddings = calls_cost([c for c in calls if c.purpose.startswith("embed")], settings).dollars
    recorded = list(zip(turn_of, requests, outputs))
    replayed, _ = _replay(recorded, TYPICAL_GAP_S, settings)
    per_100 = Decimal(100) / turns

    def row(dollars: Decimal) -> float:
        return float(round(dollars * per_100, 2))

    phase_b = settings.prices[settings.phase_b_model]
    reply_output = sum(c.usage.output_tokens for c in calls if c.purpose == "reply")
    send_everything = (sum(baseline) * Decimal(str(phase_b.input)) + reply_output * Decimal(str(phase_b.output))) \
        / Decimal(1_000_000)
    by_purpose = {}
    for purpose in PURPOSES:
        cost = calls_cost([c for c in calls if c.purpose == purpose], settings)
        u = cost.usage
        by_purpose[purpose] = {
            "calls": sum(m.calls for m in cost.by_model.values()), "input": u.input_tokens,
            "cache_read": u.cache_read_input_tokens, "cache_write": u.cache_creation_input_tokens,
            "output": u.output_tokens, "dollars_per_100_turns": row(cost.dollars),
        }
    uploads = calls_cost([c for f in files for c in f.calls], settings)
    rounds = Counter(len([c for c in t.calls if c.purpose == "reply"]) for t in state.turns)
    return {
        "turns": turns,
        "workload": {"message_words": MESSAGE_WORDS, "reply_words": REPLY_WORDS, "tool_turns": TOOL_TURNS,
                     "phase_b_rounds_per_turn": round(sum(k * n for k, n in rounds.items()) / turns, 2),
                     "documents": len(files), "document_tokens": document_tokens},
        "tokens_by_call": by_purpose,
        "dollars_per_100_turns": {
            "caching_off": row(sum((uncached_dollars(c.usage, settings.prices[c.model]) for c in llm_calls),
                                   Decimal(0)) + embeddings),
            "static_breakpoint_only": row(_replay(recorded, TYPICAL_GAP_S, settings, message_marks=False)[0]
                                          + embeddings),
            "as_built": row(built.dollars),
            "five_minute_gaps": row(_replay(recorded, LONG_GAP_S, settings)[0] + embeddings),
            "five_minute_gaps_1h_ttl": row(_replay(recorded, LONG_GAP_S, settings, ttl="1h")[0] + embeddings),
            "send_everything": row(send_everything),
        },
        "uploads_dollars": float(round(uploads.dollars, 4)),
        "meter_matches_replay": built.dollars == replayed + embeddings,
        "prompt_tokens_per_turn": {"forge_phase_b_median": sorted(max(t.tokens.phase_b_rounds or [0])
                                                                  for t in state.turns)[turns // 2],
                                   "send_everything_at_turn_1": baseline[0], "send_everything_at_last": baseline[-1]},
    }


def markdown(figures: dict) -> str:
    """The README's cost block, from one run (never typed by hand)."""
    d, w = figures["dollars_per_100_turns"], figures["workload"]
    lines = [
        f"Measured by `forge bench cost --turns {figures['turns']}`: {figures['turns']} turns of "
        f"{w['message_words']}-word messages and {w['reply_words']}-word replies ({w['phase_b_rounds_per_turn']} "
        f"tool-loop rounds a turn), {w['documents']} uploaded documents ({w['document_tokens']:,} tokens), "
        "through the real clients against the local stub's model of Anthropic's prompt cache.",
        "",
        "| Call | Calls | Input | Cache read | Cache write | Output | $ per 100 turns |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for purpose, f in figures["tokens_by_call"].items():
        lines.append(f"| {purpose} | {f['calls']:,} | {f['input']:,} | {f['cache_read']:,} | {f['cache_write']:,} | "
                     f"{f['output']:,} | {f['dollars_per_100_turns']:.2f} |")
    lines += [
        "",
        "| Dollars per 100 turns | $ |",
        "|---|---:|",
        f"| Caching off | {d['caching_off']:.2f} |",
        f"| Static breakpoint only (before the moving breakpoint) | {d['static_breakpoint_only']:.2f} |",
        f"| **As built** (static + moving breakpoint, turns a minute apart) | **{d['as_built']:.2f}** |",
        f"| Pauses over 5 minutes between turns | {d['five_minute_gaps']:.2f} |",
        f"| Pauses over 5 minutes, `FORGE_CACHE_TTL=1h` | {d['five_minute_gaps_1h_ttl']:.2f} |",
        f"| Send-everything baseline (documents included, no caching) | {d['send_everything']:.2f} |",
        "",
        f"Uploading the documents cost ${figures['uploads_dollars']:.4f} (summaries and embeddings).",
    ]
    return "\n".join(lines)
