"""`forge eval docs` and `forge eval memory`: retrieval quality on labelled sets.

Both drive the real code: files go through `ingest_file`, turns through the
remember path (summary, embedding, store), and questions through the same
retrievers the turn uses. Formats and metrics are DESIGN.md's.

Two modes. Plain (`-k N`) scores whole sections or turns, to compare retrievers.
`--as-turn` scores what a turn really shows: the question is routed and turned
into the app's query (message, the router's query, the probe's name), retrieval
is packed into the section's budget and formatted as the prompt gets it, and
recall counts only gold characters (docs) or evidence rows (memory) inside that
text; `mean_context_tokens` is that section's size.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pmforge.core.errors import ForgeError
from pmforge.core.models import Manifest, RetrievedSection, SessionState, Turn
from pmforge.core.settings import Settings
from pmforge.core.tokens import count_tokens
from pmforge.core.workspace import safe_filename
from pmforge.index.retrieval import RETRIEVERS, Query, Retriever, find_parents, find_sections, find_turns
from pmforge.ingest.convert import SUPPORTED, extension
from pmforge.ingest.pipeline import ingest_file
from pmforge.interviewer.rules import RouteInputs, rule_route
from pmforge.knowledge import builtin_catalogue
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.prompt.render import inert
from pmforge.turn.assemble import document_query, fitted_documents, format_documents, format_turns, shown_turns
from pmforge.turn.remember import asked_before, remember, summarize_turn


def read_jsonl(path: Path) -> list[dict]:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ForgeError(f"Cannot read {path}: {exc.strerror}.") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise ForgeError(f"{path}, line {number}, is not valid JSON.") from None
    return rows


def _check_retriever(retriever: str) -> Retriever:
    for known in RETRIEVERS:
        if retriever == known:
            return known
    raise ForgeError(f"Retriever '{retriever}' is unknown; use one of: {', '.join(RETRIEVERS)}.")


@contextmanager
def _scratch_project(settings: Settings, name: str) -> Iterator[Project]:
    """A throwaway project, removed afterwards (an evaluation leaves nothing behind)."""
    with tempfile.TemporaryDirectory(prefix="forge-eval-") as folder:
        scratch = settings.model_copy(update={"projects_dir": Path(folder)})
        yield Project.create(Services.from_settings(scratch), name)


def turn_query(question: str, manifest: Manifest, turn_number: int, settings: Settings) -> tuple[str, bool]:
    """The query a turn would search with for this message, and whether the router would search at all (the
    evaluations' scratch projects add no patterns: the built-in catalogue is theirs)."""
    catalogue = builtin_catalogue()
    decision = rule_route(RouteInputs(SessionState(), manifest, question, turn_number, catalogue), settings)
    return document_query(question, decision, catalogue), decision.requires_retrieval


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for s, e in sorted(ranges):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [(s, e) for s, e in merged]


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


@dataclass
class DocsQuestion:
    id: str
    question: str
    gold: dict[str, list[tuple[int, int]]]  # stored filename -> merged gold ranges


def eval_docs(
    corpus: Path, questions: Path, k: int, retriever: str, settings: Settings,
    as_turn: bool = False, budget: int | None = None,
) -> dict:
    """Plain: recall = gold characters covered by the k retrieved sections; precision = gold / retrieved
    characters; mrr = 1 / rank of the first section touching gold. As a turn: the same over the passages
    the documents section shows within `budget` tokens."""
    retriever = _check_retriever(retriever)
    files = sorted(p for p in Path(corpus).iterdir() if p.is_file() and extension(p.name) in SUPPORTED)
    if not files:
        raise ForgeError(f"{corpus} holds no .md or .docx files.")
    budget = budget or settings.budget_documents
    rows = read_jsonl(questions)
    recalls, precisions, reciprocal, context = [], [], [], []
    with _scratch_project(settings, "eval docs") as project:
        for path in files:
            result = ingest_file(project, path.name, path.read_bytes())
            if not result.ok:
                raise ForgeError(f"Could not index {path.name}: {result.message}")
        embedder = project.services.embedder
        manifest = project.manifest()
        for row in rows:
            gold: dict[str, list[tuple[int, int]]] = {}
            for ref in row["references"]:
                gold.setdefault(safe_filename(ref["file"]), []).append((int(ref["start"]), int(ref["end"])))
            gold = {f: _merge(r) for f, r in gold.items()}
            sections: list[RetrievedSection] = []
            if as_turn:
                text, searches = turn_query(row["question"], manifest, 1, settings)
                if searches:
                    found = find_sections(project.store, Query(text, embedder), budget, retriever, settings)
                    sections = fitted_documents(found, budget)
                context.append(count_tokens(format_documents(sections, budget)))
            else:
                sections = find_parents(project.store, Query(row["question"], embedder), k, retriever, settings)
                context.append(sum(count_tokens(s.text) for s in sections))
            got: dict[str, list[tuple[int, int]]] = {}
            for s in sections:
                got.setdefault(s.filename, []).append((s.start, s.end))
            got = {f: _merge(r) for f, r in got.items()}
            gold_chars = sum(e - s for r in gold.values() for s, e in r)
            covered = sum(_overlap(gold.get(f, []), r) for f, r in got.items())
            retrieved_chars = sum(e - s for r in got.values() for s, e in r)
            recalls.append(covered / gold_chars if gold_chars else 0.0)
            precisions.append(covered / retrieved_chars if retrieved_chars else 0.0)
            ranked = sorted(sections, key=lambda s: s.score, reverse=True)
            rank = next((i for i, s in enumerate(ranked, 1) if _overlap(gold.get(s.filename, []), [(s.start, s.end)])), None)
            reciprocal.append(1 / rank if rank else 0.0)
    figures = {"k": k, "n": len(rows), "retriever": retriever}
    if as_turn:
        figures = {"as_turn": True, "budget": budget, "n": len(rows), "retriever": retriever}
    return figures | {
        "recall": round(statistics.fmean(recalls), 4) if rows else 0.0,
        "precision": round(statistics.fmean(precisions), 4) if rows else 0.0,
        "mrr": round(statistics.fmean(reciprocal), 4) if rows else 0.0,
        "mean_context_tokens": round(statistics.fmean(context), 1) if rows else 0.0,
    }


def conversation_turns(rows: list[dict]) -> list[tuple[Turn, set[str]]]:
    """A turn is a user row plus the assistant rows after it; rows before the first user row form their own."""
    turns: list[tuple[list[dict], list[dict]]] = []
    for row in rows:
        if row["role"] == "user" or not turns:
            turns.append(([row] if row["role"] == "user" else [], [] if row["role"] == "user" else [row]))
        else:
            turns[-1][1].append(row)
    out = []
    for number, (users, assistants) in enumerate(turns, start=1):
        turn = Turn(
            number=number,
            user="\n".join(r["text"] for r in users),
            assistant="\n".join(r["text"] for r in assistants),
        )
        out.append((turn, {r["id"] for r in users + assistants}))
    return out


def eval_memory(
    conversation: Path, questions: Path, k: int, retriever: str, settings: Settings,
    as_turn: bool = False, budget: int | None = None,
) -> dict:
    """Plain: recall = share of evidence rows inside the k retrieved turns. As a turn: share of evidence
    rows whose text the conversations section shows, within `budget` tokens. No recency filter either way."""
    retriever = _check_retriever(retriever)
    budget = budget or settings.budget_conversations
    rows = read_jsonl(conversation)
    turns = conversation_turns(rows)
    questions_rows = read_jsonl(questions)
    recalls, context = [], []
    with _scratch_project(settings, "eval memory") as project:
        services = project.services
        rows_of = {turn.number: ids for turn, ids in turns}
        plain = [turn for turn, _ in turns]
        text_of = {row["id"]: row["text"] for row in rows}
        for i, turn in enumerate(plain):
            asked = asked_before(plain, i)
            turn.summary = summarize_turn(services.llm, turn.user, turn.assistant, settings, asked)
            remember(project.store, services.embedder, turn, asked)
        manifest = project.manifest()
        for row in questions_rows:
            evidence = set(row["evidence"])
            if as_turn:
                text, searches = turn_query(row["question"], manifest, len(plain) + 1, settings)
                shown = ""
                if searches:
                    found = find_turns(project.store, Query(text, services.embedder),
                                       settings.conversation_turns, retriever, settings)
                    side = settings.turn_side_whole_tokens
                    shown = format_turns(shown_turns(found, budget, builtin_catalogue(), side), budget,
                                         builtin_catalogue(), side)
                inside = {r for r in evidence if inert(text_of.get(r, "\0")).strip() in shown}
                context.append(count_tokens(shown))
            else:
                found = find_turns(
                    project.store, Query(row["question"], services.embedder), k, retriever, settings
                )
                inside = set().union(*(rows_of[t.turn_number] for t in found)) if found else set()
                context.append(count_tokens(format_turns(found, 10**6, builtin_catalogue())))
            recalls.append(len(evidence & inside) / len(evidence) if evidence else 0.0)
    figures = {"as_turn": True, "budget": budget} if as_turn else {"k": k}
    return figures | {
        "n": len(questions_rows), "retriever": retriever,
        "recall": round(statistics.fmean(recalls), 4) if recalls else 0.0,
        "mean_context_tokens": round(statistics.fmean(context), 1) if context else 0.0,
    }
