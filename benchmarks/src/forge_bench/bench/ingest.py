"""`forge bench ingest`: a generated 30-page report through the real ingestion pipeline."""

from __future__ import annotations

import io
import random
import time

from forge_bench.bench.figures import scratch_folder, spread
from pmforge.core.tokens import count_tokens

_VOCAB = (
    "store shopper markdown shrink bakery produce dairy label printer region director budget metric pilot "
    "forecast supplier delivery shelf inventory margin weekend staffing report loyalty promotion price "
    "waste freshness department manager operations analytics dashboard rollout training adoption"
).split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_VOCAB) for _ in range(rng.randint(8, 22))]
    return " ".join(words).capitalize() + "."


def synthetic_docx(words: int = 15_000, headings: int = 40, tables: int = 6, seed: int = 7) -> bytes:
    """A deterministic ~30-page report: nested headings, paragraphs and tables."""
    from docx import Document

    rng = random.Random(seed)
    doc = Document()
    per_section = words // headings
    for h in range(headings):
        level = 1 if h % 10 == 0 else (2 if h % 3 == 0 else 3)
        doc.add_heading(f"Section {h + 1}: {rng.choice(_VOCAB).title()} {rng.choice(_VOCAB)}", level=level)
        written = 0
        while written < per_section:
            paragraph = " ".join(_sentence(rng) for _ in range(rng.randint(3, 7)))
            doc.add_paragraph(paragraph)
            written += len(paragraph.split())
        if h % (headings // tables) == 1:
            table = doc.add_table(rows=12, cols=4)
            for r, row in enumerate(table.rows):
                for c, cell in enumerate(row.cells):
                    cell.text = "Metric" if r == 0 and c == 0 else f"{rng.choice(_VOCAB)} {rng.randint(1, 99)}"
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def bench_ingest(words: int = 15_000) -> dict:
    """Convert, chunk, embed and store a generated report in a throwaway project, timing each stage."""
    from pmforge.core import settings as config
    from pmforge.ingest.chunk import chunk_markdown
    from pmforge.ingest.convert import convert
    from pmforge.ingest.pipeline import chunk_sizes, ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services

    data = synthetic_docx(words=words)
    with scratch_folder("forge-bench-") as scratch:
        settings = config.get_settings().model_copy(update={"projects_dir": scratch})
        services = Services.from_settings(settings)

        t0 = time.perf_counter()
        markdown = convert("report.docx", data, 10**9).markdown
        t1 = time.perf_counter()
        parents = chunk_markdown(markdown, chunk_sizes(settings))
        t2 = time.perf_counter()

        stages: dict[str, float] = {}
        last_stage, last_t = "", time.perf_counter()

        def progress(stage: str, done: int, total: int) -> None:
            nonlocal last_stage, last_t
            now = time.perf_counter()
            if last_stage:
                stages[last_stage] = stages.get(last_stage, 0.0) + now - last_t
            last_stage, last_t = stage, now

        project = Project.create(services, "bench")
        t3 = time.perf_counter()
        result = ingest_file(project, "report.docx", data, progress)
        total = time.perf_counter() - t3
        windows = len(project.store.ids("documents"))
        leaves = [count_tokens(l.text) for p in parents for l in p.leaves]
        parent_sizes = [p.tokens for p in parents]
        return {
            "ok": result.ok,
            "document": {"bytes": len(data), "words": len(markdown.split()), "markdown_chars": len(markdown)},
            "embedder": services.embedder.signature,
            "seconds": {
                "convert": round(t1 - t0, 3),
                "chunk": round(t2 - t1, 3),
                "embed": round(stages.get("Embedding", 0.0), 3),
                "store": round(stages.get("Saving", 0.0), 3),
                "ingest_total": round(total, 3),
            },
            "chunks": {
                "parents": len(parents),
                "leaves": len(leaves),
                "embedded_windows": windows,
                "leaf_tokens": spread(leaves),
                "parent_tokens": spread(parent_sizes),
            },
            "embedding_throughput_windows_per_s": round(windows / stages["Embedding"], 1) if stages.get("Embedding") else None,
        }


