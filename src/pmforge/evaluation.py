"""`forge eval docs` and `forge eval memory`: retrieval quality on labelled sets.

Both drive the real code: files go through `ingest_file`, turns through the
remember path (summary, embedding, store), and questions through the same
retrievers the turn uses. Formats and metrics are DESIGN.md's.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from config import Settings

from .errors import ForgeError
from .ingest.convert import SUPPORTED, extension
from .ingest.pipeline import ingest_file
from .models import RetrievedTurn, Turn
from .project import Project, Services
from .retrieval import RETRIEVERS, Query, find_sections, find_turns
from .tokens import count_tokens
from .turn.assemble import format_turns
from .turn.remember import asked_before, remember, summarize_turn
from .workspace import safe_filename



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


def _check_retriever(retriever: str) -> None:
    if retriever not in RETRIEVERS:
        raise ForgeError(f"Retriever '{retriever}' is unknown; use one of: {', '.join(RETRIEVERS)}.")


def _scratch_project(settings: Settings, name: str) -> Project:
    scratch = settings.model_copy(update={"projects_dir": Path(tempfile.mkdtemp(prefix="forge-eval-"))})
    return Project.create(Services.from_settings(scratch), name)


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for s, e in sorted(ranges):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return [tuple(r) for r in merged]


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(max(0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)


@dataclass
class DocsQuestion:
    id: str
    question: str
    gold: dict[str, list[tuple[int, int]]]  # stored filename -> merged gold ranges


def eval_docs(corpus: Path, questions: Path, k: int, retriever: str, settings: Settings) -> dict:
    """recall: gold characters covered by the k retrieved sections; precision: gold / retrieved characters;
    mrr: 1 / rank of the first section touching gold."""
    _check_retriever(retriever)
    files = sorted(p for p in Path(corpus).iterdir() if p.is_file() and extension(p.name) in SUPPORTED)
    if not files:
        raise ForgeError(f"{corpus} holds no .md or .docx files.")
    project = _scratch_project(settings, "eval docs")
    for path in files:
        result = ingest_file(project, path.name, path.read_bytes())
        if not result.ok:
            raise ForgeError(f"Could not index {path.name}: {result.message}")
    rows = read_jsonl(questions)
    recalls, precisions, reciprocal, context = [], [], [], []
    embedder = project.services.embedder
    for row in rows:
        gold: dict[str, list[tuple[int, int]]] = {}
        for ref in row["references"]:
            gold.setdefault(safe_filename(ref["file"]), []).append((int(ref["start"]), int(ref["end"])))
        gold = {f: _merge(r) for f, r in gold.items()}
        sections = find_sections(project.store, Query(row["question"], embedder), k, retriever, settings)
        got: dict[str, list[tuple[int, int]]] = {}
        for s in sections:
            got.setdefault(s.filename, []).append((s.start, s.end))
        got = {f: _merge(r) for f, r in got.items()}
        gold_chars = sum(e - s for r in gold.values() for s, e in r)
        covered = sum(_overlap(gold.get(f, []), r) for f, r in got.items())
        retrieved_chars = sum(e - s for r in got.values() for s, e in r)
        recalls.append(covered / gold_chars if gold_chars else 0.0)
        precisions.append(covered / retrieved_chars if retrieved_chars else 0.0)
        rank = next((i for i, s in enumerate(sections, 1) if _overlap(gold.get(s.filename, []), [(s.start, s.end)])), None)
        reciprocal.append(1 / rank if rank else 0.0)
        context.append(sum(count_tokens(s.text) for s in sections))
    return {
        "k": k, "n": len(rows), "retriever": retriever,
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


def eval_memory(conversation: Path, questions: Path, k: int, retriever: str, settings: Settings) -> dict:
    """recall: share of evidence rows inside the k retrieved turns (no recency filter)."""
    _check_retriever(retriever)
    project = _scratch_project(settings, "eval memory")
    services = project.services
    turns = conversation_turns(read_jsonl(conversation))
    rows_of = {turn.number: ids for turn, ids in turns}
    plain = [turn for turn, _ in turns]
    for i, turn in enumerate(plain):
        turn.summary = summarize_turn(services.llm, turn.user, turn.assistant, settings, asked_before(plain, i))
        remember(project.store, services.embedder, turn)
    questions_rows = read_jsonl(questions)
    recalls, context = [], []
    for row in questions_rows:
        found: list[RetrievedTurn] = find_turns(
            project.store, Query(row["question"], services.embedder), k, retriever, settings
        )
        inside = set().union(*(rows_of[t.turn_number] for t in found)) if found else set()
        evidence = set(row["evidence"])
        recalls.append(len(evidence & inside) / len(evidence) if evidence else 0.0)
        context.append(count_tokens(format_turns(found, 10**6)))
    return {
        "k": k, "n": len(questions_rows), "retriever": retriever,
        "recall": round(statistics.fmean(recalls), 4) if recalls else 0.0,
        "mean_context_tokens": round(statistics.fmean(context), 1) if context else 0.0,
    }
