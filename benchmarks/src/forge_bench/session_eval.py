"""`forge eval sessions`: whole discovery sessions scored against gold.

A session is `NAME.conversation.jsonl` (rows `{"user": text}` or `{"upload": FILE}`, the file beside it)
and `NAME.gold.json` (`fields`, `must_not`, `assumptions`, `probes`; DESIGN.md, "Evaluation file
formats"). Each session is played through the real turn loop and ingest pipeline in a scratch project,
then the saved state is scored through `scored_record` (pmforge/outputs/record.py), the same record
`forge brief --format json` prints, so what is scored is exactly what a PM can export.

Everything below `evaluate_sessions` is a pure function over plain data, so the matcher is unit-tested
without running a turn.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from pmforge.core.errors import ForgeError
from pmforge.core.models import SessionState
from pmforge.core.sentences import sentence_spans
from pmforge.knowledge import builtin_catalogue
from pmforge.outputs.record import scored_record

# ---------------------------------------------------------------- matching

def at_path(record: dict, dotted: str) -> Any:
    """The value at a dotted path such as `problem_brief.success_metrics.leading`.

    A number picks one list element (past the end: nothing); a name applied to a list maps over its
    elements (`problem_brief.stakeholders.name` is every stakeholder's name). An unknown key is an error,
    because a typo in gold must not silently score zero.
    """
    def walk(value: Any, parts: list[str]) -> Any:
        if not parts or value is None:
            return value
        part, rest = parts[0], parts[1:]
        if isinstance(value, list):
            if part.isdigit():
                return walk(value[int(part)], rest) if int(part) < len(value) else None
            return [walk(v, parts) for v in value]
        if isinstance(value, dict) and part in value:
            return walk(value[part], rest)
        raise ForgeError(f"The gold path '{dotted}' is not in the scored record "
                         f"(its top level holds {', '.join(record)}).")

    return walk(record, dotted.split("."))


def strings_under(value: Any) -> Iterable[str]:
    """Every string (and number) inside dicts and lists, depth first."""
    if isinstance(value, dict):
        for v in value.values():
            yield from strings_under(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_under(v)
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield str(value)


def flat_text(value: Any) -> str:
    # Joined with newlines so a term cannot match across two separate strings.
    return "\n".join(strings_under(value)).lower()


def term_matches(term: str, text: str) -> bool:
    """A term is `|`-separated alternatives, each a lower-cased substring."""
    return any(alt.strip().lower() in text for alt in term.split("|") if alt.strip())


def item_matches(item: list[str], text: str) -> bool:
    """An item is captured when every one of its terms matches."""
    return all(term_matches(term, text) for term in item)


def score_fields(record: dict, fields: dict[str, list[list[str]]]) -> dict:
    by_path: dict[str, dict[str, Any]] = {}
    for path, items in fields.items():
        text = flat_text(at_path(record, path))
        missed = [item for item in items if not item_matches(item, text)]
        by_path[path] = {"captured": len(items) - len(missed), "total": len(items), "missed": missed}
    captured = sum(p["captured"] for p in by_path.values())
    total = sum(p["total"] for p in by_path.values())
    return {"captured": captured, "total": total, "share": _share(captured, total), "by_path": by_path}


def score_must_not(record: dict, must_not: dict[str, list[list[str]]]) -> dict:
    """A hit is a superseded fact that is still there (bad)."""
    hits = []
    for path, items in must_not.items():
        text = flat_text(at_path(record, path))
        hits += [{"path": path, "item": item} for item in items if item_matches(item, text)]
    return {"hits": len(hits), "total": sum(len(items) for items in must_not.values()), "items": hits}


def score_assumptions(record: dict, gold: list[list[str]]) -> dict:
    """A gold item is captured when one single claim holds all its terms (facts spread over two claims
    do not count); a claim matching no gold item is unmatched (noise, or a gap in the gold)."""
    claims = [str(a.get("claim", "")).lower() for a in record["register"]]
    captured = sum(any(item_matches(item, c) for c in claims) for item in gold)
    unmatched = [c for c in claims if not any(item_matches(item, c) for item in gold)]
    return {
        "captured": captured, "total": len(gold), "share": _share(captured, len(gold)),
        "registered": len(claims), "unmatched": len(unmatched), "unmatched_share": _share(len(unmatched), len(claims)),
        "unmatched_claims": unmatched,
    }


# ---------------------------------------------------------------- precision: what else got written

# Enumerations (a risk's level, a build/buy recommendation) are choices, not text the brief writes.
_ENUM_KEYS = frozenset({"level", "recommendation", "role", "validated", "status"})
_UNSCORED_FOR_SENTENCES = ("problem_brief.stakeholders", "solution_evaluation.solution_name")


def _prose_under(value: Any, skip: set[int]) -> Iterable[str]:
    """The strings under a value, leaving out enumerations and the sub-values in `skip` (by id)."""
    if id(value) in skip:
        return
    if isinstance(value, dict):
        for key, v in value.items():
            if key not in _ENUM_KEYS:
                yield from _prose_under(v, skip)
    elif isinstance(value, list):
        for v in value:
            yield from _prose_under(v, skip)
    elif isinstance(value, str) and value.strip():
        yield value


def _alternatives(items: list[list[str]]) -> list[str]:
    return [alt.strip().lower() for item in items for term in item for alt in term.split("|") if alt.strip()]


def _related(a: str, b: str) -> bool:
    """One topic: a path and the paths inside it; a brief's metrics and its anti-metrics."""
    metric = "problem_brief.success_metrics"
    return a == b or a.startswith(b + ".") or b.startswith(a + ".") or (a.startswith(metric) and b.startswith(metric))


def score_precision(record: dict, fields: dict[str, list[list[str]]]) -> dict:
    """What the record holds beyond what it should (DESIGN.md, `eval sessions`): stakeholder rows that name
    a gold stakeholder, sentences under each scored field that speak to that field's topic, sentences filed
    under the wrong field, and the problem statement's length."""

    gold_people = fields.get("problem_brief.stakeholders", [])
    names = [str(row.get("name", "")).lower() for row in (at_path(record, "problem_brief.stakeholders") or [])]
    naming = [n for n in names if any(item_matches(item, n) for item in gold_people)]
    per_item = [sum(item_matches(item, n) for n in names) for item in gold_people]

    sentences_by_path: dict[str, list[str]] = {}
    for path in fields:
        if path in _UNSCORED_FOR_SENTENCES:
            continue
        # A gold path inside this one is scored on its own (anti-metrics apart from the metrics above them).
        inner = {id(at_path(record, p)) for p in fields if p.startswith(path + ".")}
        if path == "problem_brief.success_metrics":
            inner.add(id(at_path(record, "problem_brief.success_metrics.anti_metrics")))
        # A value of one or two words ("pilot", "A3", "Build in-house") labels a field; it is not a sentence.
        sentences_by_path[path] = [text[s:e] for text in _prose_under(at_path(record, path), inner)
                                   for s, e in sentence_spans(text) if len(text[s:e].split()) >= 3]
    on_topic = misfiled = total = 0
    off_topic_examples: dict[str, list[str]] = {}
    for path, found in sentences_by_path.items():
        topic = _alternatives([item for p, items in fields.items() if _related(p, path) for item in items])
        others = [item for p, items in fields.items() if not _related(p, path)
                  and p not in ("problem_brief.stakeholders",) for item in items]
        for sentence in found:
            lowered = sentence.lower()
            total += 1
            if any(alt in lowered for alt in topic):
                on_topic += 1
                continue
            off_topic_examples.setdefault(path, []).append(sentence)
            if any(item_matches(item, lowered) for item in others):
                misfiled += 1
    statement = str(at_path(record, "problem_brief.problem_statement") or "")
    return {
        "stakeholder_rows": len(names), "stakeholder_rows_naming_gold": len(naming),
        "stakeholder_precision": _share(len(naming), len(names)), "gold_stakeholders": len(gold_people),
        "rows_per_gold_stakeholder": round(len(names) / len(gold_people), 2) if gold_people else None,
        "gold_stakeholders_with_several_rows": sum(n > 1 for n in per_item),
        "sentences": total, "sentences_on_topic": on_topic, "sentence_precision": _share(on_topic, total),
        "misfiled": misfiled, "misfiled_share": _share(misfiled, total),
        "problem_statement_words": len(statement.split()),
        "off_topic": off_topic_examples,
    }


def probe_pairs(state: SessionState, pm_turn_of: dict[int, int] | None = None) -> set[tuple[str, int]]:
    """(probe id, PM turn) for every probe a saved turn was judged to answer. `pm_turn_of` maps a saved
    turn number to its 1-based position among the conversation's user rows (identity by default)."""
    pairs = set()
    for turn in state.turns:
        pm_turn = (pm_turn_of or {}).get(turn.number, turn.number)
        pairs |= {(pid, pm_turn) for pid in turn.probes_answered}
    return pairs


def gold_probe_pairs(probes: dict[str, list[int]]) -> set[tuple[str, int]]:
    # Gold may name a probe by its catalogue name; predictions always carry ids.
    return {(_probe_id(pid), int(turn)) for pid, turns in probes.items() for turn in turns}


def _probe_id(name_or_id: str) -> str:
    probe = builtin_catalogue().find_probe(name_or_id)  # gold sessions are written against the built-in probes
    return probe.id if probe else name_or_id


def score_probes(predicted: set[tuple[str, int]], gold: set[tuple[str, int]]) -> dict:
    """Precision and recall over (probe, turn) pairs; None when there is nothing to divide by, with the
    counts alongside so aggregates can be micro-averaged."""
    hits = len(predicted & gold)
    return {
        "precision": _share(hits, len(predicted)), "recall": _share(hits, len(gold)),
        "predicted": len(predicted), "gold": len(gold), "hits": hits,
        "false_positives": sorted([pid, t] for pid, t in predicted - gold),
        "missed": sorted([pid, t] for pid, t in gold - predicted),
    }


# ---------------------------------------------------------------- the replies, read as a PM reads them

_NOTHING_LEFT = re.compile(r"\b(?:has what it needs|nothing (?:left|more) to ask)\b", re.I)
_OPEN_ITEMS = re.compile(r"\b(?:still open|to be confirmed|not assessed|not yet explored)\b|^\s*Question \d+:",
                         re.I | re.M)
PARROT_WORDS = 8  # a sentence of the PM's this long, given back word for word, is parroting


def _said(reply: str) -> str:
    """A reply without the turn's acknowledgement block (worded from the records, scored on its own)."""
    from pmforge.turn.acknowledge import HEADING

    return reply.split(HEADING, 1)[0]


def score_replies(state: SessionState, embed=None) -> dict:
    """What a PM notices in the replies (DESIGN.md, `eval sessions`): questions asked again (word for word, or
    by embedding similarity ≥ 0.85 when `embed` is given), values stated in the turn that corrected them,
    "has what it needs" beside open items, the PM's own sentences given back, and questions per reply."""
    import numpy as np

    from pmforge.interviewer.questions import REPEAT_SIMILARITY, question_key, questions_in

    seen: set[str] = set()  # the questions asked so far, compared word for word
    vectors = np.zeros((0, 0), dtype=np.float32)  # and by meaning, when `embed` is given
    repeated = replies_repeating = stale = nothing_left = parroting = questions = 0
    pm_sentences: set[str] = set()
    for turn in state.turns:
        reply = turn.assistant
        said = _said(reply)
        for sentence in (turn.user[s:e] for s, e in sentence_spans(turn.user)):
            if len(sentence.split()) >= PARROT_WORDS:
                pm_sentences.add(question_key(sentence))
        said_key = question_key(said)
        if any(sentence and sentence in said_key for sentence in pm_sentences):
            parroting += 1
        corrected = [c.old for c in state.brief_history if c.turn == turn.number and len(c.old.strip()) >= 2]
        if any(re.search(rf"(?<![\w.]){re.escape(old.strip())}(?![\w])", said) for old in corrected):
            stale += 1
        if _NOTHING_LEFT.search(reply) and _OPEN_ITEMS.search(reply):
            nothing_left += 1
        these = list(questions_in(said))
        questions += len(these)
        again = 0
        if these:
            exact = [question_key(q) in seen for q in these]
            similar = [False] * len(these)
            if embed is not None:
                new = np.asarray(embed(these), dtype=np.float32)
                if vectors.size:
                    similar = list((new @ vectors.T).max(axis=1) >= REPEAT_SIMILARITY)
                vectors = np.vstack([vectors, new]) if vectors.size else new
            again = sum(bool(e or s) for e, s in zip(exact, similar))
            seen |= {question_key(q) for q in these}
        repeated += again
        replies_repeating += bool(again)
    replies = len(state.turns)
    return {"replies": replies, "questions": questions, "questions_asked_again": repeated,
            "replies_repeating": replies_repeating, "stale_values": stale, "nothing_left_with_open_items": nothing_left,
            "parroting_replies": parroting, "parroting_share": _share(parroting, replies),
            "questions_per_reply": round(questions / replies, 2) if replies else None}


def modes_reached(state: SessionState) -> list[str]:
    reached = ["mode_1"]
    if state.active_mode == "mode_2" or any(t.active_mode == "mode_2" for t in state.turns):
        reached.append("mode_2")
    return reached


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _seconds(times: list[float]) -> dict:
    if not times:
        return {"mean": None, "p50": None}
    return {"mean": round(statistics.fmean(times), 3), "p50": round(statistics.median(times), 3)}


def score_session(name: str, state: SessionState, gold: dict, pm_turn_of: dict[int, int] | None = None,
                  times: list[float] | None = None, embed=None) -> dict:
    """One session's report from its saved state and gold."""
    record = scored_record(state)
    return {
        "name": name,
        "turns": len(state.turns),
        "fields": score_fields(record, gold["fields"]),
        "must_not": score_must_not(record, gold["must_not"]),
        "assumptions": score_assumptions(record, gold["assumptions"]),
        "probes": score_probes(probe_pairs(state, pm_turn_of), gold_probe_pairs(gold["probes"])),
        "precision": score_precision(record, gold["fields"]),
        "replies": score_replies(state, embed),
        "modes_reached": modes_reached(state),
        "completed_modes": record["completed_modes"],
        "seconds_per_turn": _seconds(times or []),
    }


def overall(reports: list[dict], golds: list[dict], times: list[float]) -> dict:
    """Micro averages: every gold item, claim and probe pair counts once, whichever session it is in."""
    by_path: dict[str, dict] = {}
    for r in reports:
        for path, p in r["fields"]["by_path"].items():
            agg = by_path.setdefault(path, {"captured": 0, "total": 0})
            agg["captured"] += p["captured"]
            agg["total"] += p["total"]
    for agg in by_path.values():
        agg["share"] = _share(agg["captured"], agg["total"])

    def total(section: str, key: str) -> int:
        return sum(r[section][key] for r in reports)

    # Mode 2 only counts for sessions whose gold expects a solution evaluation.
    wants_mode_2 = [r for r, g in zip(reports, golds) if any(p.startswith("solution_evaluation") for p in g["fields"])]
    reached = sum("mode_2" in r["modes_reached"] for r in wants_mode_2)
    precision = {key: sum(r["precision"][key] or 0 for r in reports) for key in (
        "stakeholder_rows", "stakeholder_rows_naming_gold", "gold_stakeholders", "sentences", "sentences_on_topic",
        "misfiled")}
    words = [r["precision"]["problem_statement_words"] for r in reports]
    return {
        "sessions": len(reports),
        "stakeholder_precision": _share(precision["stakeholder_rows_naming_gold"], precision["stakeholder_rows"]),
        "stakeholder_rows": precision["stakeholder_rows"], "gold_stakeholders": precision["gold_stakeholders"],
        "rows_per_gold_stakeholder": round(precision["stakeholder_rows"] / precision["gold_stakeholders"], 2)
        if precision["gold_stakeholders"] else None,
        "sentence_precision": _share(precision["sentences_on_topic"], precision["sentences"]),
        "sentences": precision["sentences"],
        "misfiled": precision["misfiled"], "misfiled_share": _share(precision["misfiled"], precision["sentences"]),
        "problem_statement_words": {"mean": round(statistics.fmean(words), 1) if words else None,
                                    "max": max(words, default=0)},
        "field_capture": _share(total("fields", "captured"), total("fields", "total")),
        "fields": {"captured": total("fields", "captured"), "total": total("fields", "total"), "by_path": by_path},
        "must_not_hits": total("must_not", "hits"),
        "must_not_total": total("must_not", "total"),
        "assumption_capture": _share(total("assumptions", "captured"), total("assumptions", "total")),
        "assumption_unmatched_share": _share(total("assumptions", "unmatched"), total("assumptions", "registered")),
        "probe_precision": _share(total("probes", "hits"), total("probes", "predicted")),
        "probe_recall": _share(total("probes", "hits"), total("probes", "gold")),
        "probe_pairs": {"predicted": total("probes", "predicted"), "gold": total("probes", "gold"),
                        "hits": total("probes", "hits")},
        "replies": {key: sum(r["replies"][key] for r in reports) for key in (
            "replies", "questions", "questions_asked_again", "replies_repeating", "stale_values",
            "nothing_left_with_open_items", "parroting_replies")},
        "mode_2_reached": f"{reached} of {len(wants_mode_2)}",
        "seconds_per_turn_p50": _seconds(times)["p50"],
    }


# ---------------------------------------------------------------- reading sessions


@dataclass
class Session:
    name: str
    folder: Path
    rows: list[dict]  # validated: {"user": str} or {"upload": str}
    gold: dict  # normalised: all four keys present, items as lists of terms


SUFFIX = ".conversation.jsonl"


def find_sessions(folder: Path, only: str | None = None) -> list[Session]:
    """Every session in `folder`, sorted by name, fully validated before any turn runs (so a typo in
    the last file fails in a second, not after an hour of turns)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ForgeError(f"{folder} is not a folder.")
    names = sorted(p.name[: -len(SUFFIX)] for p in folder.glob(f"*{SUFFIX}") if p.is_file())
    if only is not None:
        if only not in names:
            raise ForgeError(f"There is no {only}{SUFFIX} in {folder}.")
        names = [only]
    if not names:
        raise ForgeError(f"{folder} holds no *{SUFFIX} files.")
    return [Session(n, folder, _read_rows(folder, n), _read_gold(folder, n)) for n in names]


def _read_rows(folder: Path, name: str) -> list[dict]:
    path = folder / f"{name}{SUFFIX}"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ForgeError(f"Cannot read {path}: {getattr(exc, 'strerror', None) or exc}.") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name}, line {number},"
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise ForgeError(f"{where} is not valid JSON.") from None
        if not (isinstance(row, dict) and len(row) == 1 and next(iter(row)) in ("user", "upload")
                and isinstance(next(iter(row.values())), str)):
            raise ForgeError(f'{where} must be {{"user": "text"}} or {{"upload": "FILE"}}.')
        if "user" in row and not row["user"].strip():
            raise ForgeError(f"{where} has an empty user message.")
        if "upload" in row and not (folder / row["upload"]).is_file():
            raise ForgeError(f"{where} uploads {row['upload']}, which is not a file beside it.")
        rows.append(row)
    if not any("user" in r for r in rows):
        raise ForgeError(f"{path.name} has no user messages.")
    return rows


def _read_gold(folder: Path, name: str) -> dict:
    path = folder / f"{name}.gold.json"
    if not path.is_file():
        raise ForgeError(f"{name}{SUFFIX} has no {path.name} beside it.")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ForgeError(f"{path.name} is not readable JSON ({getattr(exc, 'msg', exc)}).") from None
    if not isinstance(raw, dict):
        raise ForgeError(f"{path.name} must hold one JSON object with fields, must_not, assumptions and probes.")
    gold: dict[str, Any] = {
        "fields": _path_items(raw.get("fields") or {}, path.name, "fields"),
        "must_not": _path_items(raw.get("must_not") or {}, path.name, "must_not"),
        "assumptions": _items(raw.get("assumptions") or [], path.name, "assumptions"),
        "probes": raw.get("probes") or {},
    }
    probes = gold["probes"]
    if not (isinstance(probes, dict) and all(
            isinstance(turns, list) and all(isinstance(t, int) and t >= 1 for t in turns) for turns in probes.values())):
        raise ForgeError(f"{path.name}: probes must map each probe id to a list of 1-based PM turn numbers.")
    empty = scored_record(SessionState())
    for key in ("fields", "must_not"):
        for dotted in gold[key]:
            try:
                at_path(empty, dotted)  # a typo in a path fails now, not after the session has run
            except ForgeError as exc:
                raise ForgeError(f"{path.name}: {exc}") from None
    unknown = [pid for pid in probes if builtin_catalogue().find_probe(pid) is None]
    if unknown:  # a typo must not silently lower recall
        raise ForgeError(f"{path.name}: probe '{unknown[0]}' is not in the catalogue.")
    return gold


def _path_items(value: Any, source: str, key: str) -> dict[str, list[list[str]]]:
    if not isinstance(value, dict):
        raise ForgeError(f"{source}: {key} must map dotted paths to lists of items.")
    return {path: _items(items, source, f"{key}.{path}") for path, items in value.items()}


def _items(value: Any, source: str, key: str) -> list[list[str]]:
    """Items as lists of terms; a bare string is a one-term item."""
    if not isinstance(value, list):
        raise ForgeError(f"{source}: {key} must be a list of items (each a list of terms).")
    items = []
    for item in value:
        item = [item] if isinstance(item, str) else item
        if not (isinstance(item, list) and item and all(isinstance(t, str) and t.strip() for t in item)):
            raise ForgeError(f"{source}: every item in {key} must be a non-empty list of non-empty terms.")
        items.append(item)
    return items


# ---------------------------------------------------------------- playing sessions


def play(project, session: Session, before_turn=None) -> tuple[dict[int, int], list[float], list[dict]]:
    """Run every row through the real code. Returns saved turn number -> PM turn, user-turn seconds,
    and what each upload did (a failed upload is reported, not fatal: it may be the point of the test).
    `before_turn(project, message)`, if given, runs before each PM turn and outside its timing."""
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.turn.orchestrator import run_turn

    pm_turn_of: dict[int, int] = {}
    times: list[float] = []
    uploads = []
    for row in session.rows:
        if "upload" in row:
            path = session.folder / row["upload"]
            result = ingest_file(project, path.name, path.read_bytes())
            uploads.append({"file": row["upload"], "ok": result.ok, "message": result.message})
            continue
        if before_turn is not None:
            before_turn(project, row["user"])
        started = time.perf_counter()
        record = run_turn(project, row["user"])
        times.append(time.perf_counter() - started)
        pm_turn_of[record.turn] = len(times)
    return pm_turn_of, times, uploads


def evaluate_sessions(folder: Path, settings, only: str | None = None, keep: Path | None = None,
                      progress=None) -> dict:
    """Play and score every session in `folder`, each in a fresh scratch project.

    Scratch projects live in a temp folder (or `keep`), never in the configured projects folder.
    """
    from pmforge.core.workspace import slugify
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.understand.fields import unit_vectors

    sessions = find_sessions(folder, only)
    progress = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    temp = None
    if keep is None:
        temp = tempfile.TemporaryDirectory(prefix="forge-sessions-")
        root = Path(temp.name)
    else:
        root = Path(keep)
        root.mkdir(parents=True, exist_ok=True)
        taken = [s.name for s in sessions if (root / slugify(s.name)).exists()]
        if taken:  # refuse before any turn runs, not halfway through
            raise ForgeError(f"{root} already holds a project for session '{taken[0]}'; choose an empty --keep folder.")
    try:
        services = Services.from_settings(settings.model_copy(update={"projects_dir": root}))
        reports, all_times = [], []
        for session in sessions:
            project = Project.create(services, session.name)
            pm_turn_of, times, uploads = play(project, session)
            report = score_session(session.name, project.state(), session.gold, pm_turn_of, times,
                                   embed=unit_vectors)
            report["uploads"] = uploads
            reports.append(report)
            all_times += times
            progress(f"{session.name}: {len(times)} turns in {sum(times):.1f} s")
        return {
            "sessions": reports,
            "overall": overall(reports, [s.gold for s in sessions], all_times),
            **({"kept": str(root)} if keep is not None else {}),
        }
    finally:
        if temp is not None:
            temp.cleanup()


# ---------------------------------------------------------------- text report


def _ratio(captured: int, total: int) -> str:
    return f"{captured}/{total}" if total else "-"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def table(report: dict) -> str:
    """One row per session plus an overall row, for people."""
    header = ["session", "turns", "fields", "must_not", "assumptions", "unmatched", "probe P", "probe R",
              "stakeh. P", "rows/gold", "sent. P", "misfiled", "PS words", "modes", "s/turn p50"]
    rows = []
    for r in report["sessions"]:
        f, m, a, p = r["fields"], r["must_not"], r["assumptions"], r["probes"]
        rows.append([
            r["name"], str(r["turns"]), _ratio(f["captured"], f["total"]), f"{m['hits']} of {m['total']}",
            _ratio(a["captured"], a["total"]), _ratio(a["unmatched"], a["registered"]),
            _pct(p["precision"]), _pct(p["recall"]), _pct(r["precision"]["stakeholder_precision"]),
            _pct(r["precision"]["rows_per_gold_stakeholder"]), _pct(r["precision"]["sentence_precision"]),
            f"{r['precision']['misfiled']}/{r['precision']['sentences']}",
            str(r["precision"]["problem_statement_words"]), "+".join(mode[-1] for mode in r["modes_reached"]),
            _pct(r["seconds_per_turn"]["p50"]),
        ])
    o = report["overall"]
    rows.append([
        "overall", str(sum(r["turns"] for r in report["sessions"])),
        _ratio(o["fields"]["captured"], o["fields"]["total"]), str(o["must_not_hits"]),
        _pct(o["assumption_capture"]), _pct(o["assumption_unmatched_share"]),
        _pct(o["probe_precision"]), _pct(o["probe_recall"]), _pct(o["stakeholder_precision"]),
        _pct(o["rows_per_gold_stakeholder"]), _pct(o["sentence_precision"]), f"{o['misfiled']}/{o['sentences']}",
        f"{o['problem_statement_words']['mean']} (max {o['problem_statement_words']['max']})", f"2: {o['mode_2_reached']}",
        _pct(o["seconds_per_turn_p50"]),
    ])
    replies = o["replies"]
    footer = (f"replies: {replies['replies']}, questions {replies['questions']} "
              f"({replies['questions'] / max(replies['replies'], 1):.2f} per reply), asked again "
              f"{replies['questions_asked_again']} (in {replies['replies_repeating']} replies), stale values "
              f"{replies['stale_values']}, 'has what it needs' beside open items {replies['nothing_left_with_open_items']}, "
              f"quoting the PM back {replies['parroting_replies']}")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines += ["", footer]
    if o["fields"]["by_path"]:
        lines += ["", "fields by path:"]
        lines += [f"  {path}: {_ratio(p['captured'], p['total'])}" for path, p in o["fields"]["by_path"].items()]
    return "\n".join(lines)
