"""`forge eval answers`: factual questions about uploaded files, each asked as one turn.

`--dir DIR` holds the files and `questions.jsonl` rows `{"file", "question", "answers": [alternatives]}`
(DESIGN.md, "Evaluation file formats"). The files are uploaded into one scratch project through the real
ingest pipeline; each question is one turn through the real turn loop, in order. A question is answered when
an alternative (lower-cased substring) is in the reply's first 400 characters, present when anywhere in it,
cited when the reply names the file.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pmforge.core.errors import ForgeError

ANSWER_WINDOW = 400  # characters: the answer must come first, not somewhere in a quote further down


def read_questions(folder: Path) -> list[dict]:
    path = folder / "questions.jsonl"
    if not path.is_file():
        raise ForgeError(f"{folder} has no questions.jsonl (rows {{\"file\", \"question\", \"answers\"}}).")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ForgeError(f"questions.jsonl line {number} is not JSON: {error.msg}.") from None
        if not (isinstance(row, dict) and isinstance(row.get("question"), str) and isinstance(row.get("answers"), list)
                and row["answers"] and isinstance(row.get("file"), str)):
            raise ForgeError(f"questions.jsonl line {number} needs \"file\", \"question\" and a non-empty \"answers\".")
        if not (folder / row["file"]).is_file():
            raise ForgeError(f"questions.jsonl line {number} names {row['file']}, which is not in {folder}.")
        rows.append(row)
    return rows


def score_reply(reply: str, row: dict) -> dict:
    lowered = reply.lower()
    alternatives = [str(a).lower() for a in row["answers"]]
    return {"answered": any(a in lowered[:ANSWER_WINDOW] for a in alternatives),
            "present": any(a in lowered for a in alternatives),
            "cited": row["file"].lower() in lowered}


def evaluate_answers(folder: Path, settings, progress=None) -> dict:
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import run_turn

    rows = read_questions(folder)
    progress = progress or (lambda line: print(line, file=sys.stderr, flush=True))
    with tempfile.TemporaryDirectory(prefix="forge-answers-") as root:
        services = Services.from_settings(settings.model_copy(update={"projects_dir": Path(root)}))
        project = Project.create(services, "answers")
        for name in sorted({row["file"] for row in rows}):
            result = ingest_file(project, name, (folder / name).read_bytes())
            if not result.ok:
                raise ForgeError(f"{name} could not be uploaded: {result.message}")
        results, times = [], []
        for row in rows:
            started = time.perf_counter()
            record = run_turn(project, row["question"])
            times.append(time.perf_counter() - started)
            reply = project.state().turns[-1].assistant if record else ""
            results.append({"question": row["question"], **score_reply(reply, row)})
        progress(f"{len(rows)} questions in {sum(times):.1f} s")
    n = len(results)
    return {"n": n,
            "answered": round(sum(r["answered"] for r in results) / n, 4) if n else None,
            "present": round(sum(r["present"] for r in results) / n, 4) if n else None,
            "cited": round(sum(r["cited"] for r in results) / n, 4) if n else None,
            "s_per_question": round(statistics.median(times), 3) if times else None,
            "missed": [r["question"] for r in results if not r["answered"]]}
