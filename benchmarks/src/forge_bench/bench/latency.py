"""`forge bench latency`: context assembly time with 10k document chunks and 1k indexed turns.

Assembly is retrieval plus formatting; the query embedding is excluded (DESIGN.md),
so the store is filled with random unit vectors and the query vector is precomputed.
Every other part — Chroma queries, the keyword index, fusion, parent fetches,
section rendering — is the real code.
"""

from __future__ import annotations

import random
import statistics
import time

import numpy as np

from forge_bench.bench import session
from forge_bench.bench.figures import percentile, scratch_folder
from pmforge.core.models import Turn
from pmforge.embed.base import Embedder
from pmforge.index.collections import LeafRecord, ParentRecord


class RandomEmbedder(Embedder):
    """Unit vectors of the real embedder's size, at no cost: the benchmark times everything but embedding."""

    def __init__(self, name: str, dimensions: int, seed: int = 0):
        super().__init__()
        self.name, self.dimensions = name, dimensions
        self._rng = np.random.default_rng(seed)

    def _embed(self, texts: list[str], kind: str) -> list[list[float]]:
        v = self._rng.normal(size=(len(texts), self.dimensions)).astype(np.float32)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).tolist()


def bench_latency(chunks: int = 10_000, turns: int = 1_000, queries: int = 60) -> dict:
    from pmforge.core import settings as config
    from pmforge.interviewer.rules import RouteInputs, rule_route
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.assemble import assemble
    from pmforge.turn.remember import remember

    with scratch_folder("forge-bench-") as scratch:
        settings = config.get_settings().model_copy(
            update={"projects_dir": scratch, "llm": "offline"}
        )
        real = Services.from_settings(settings)
        embedder = RandomEmbedder(real.embedder.name, real.embedder.dimensions)
        services = Services(settings=settings, llm=real.llm, embedder=embedder)
        project = Project.create(services, "latency bench")
        rng = random.Random(1)

        t0 = time.perf_counter()
        files, per_file = 20, chunks // 20
        for f in range(files):
            file_id = f"bench{f:04d}"
            leaves, parents = [], []
            for i in range(per_file):
                pid = f"{file_id}:p{i // 4}"
                if i % 4 == 0:
                    parents.append(ParentRecord(pid, " ".join(session.statement(rng, i) for _ in range(12)), f"Section {i // 4}", i * 100, i * 100 + 400))
                text = " ".join(session.statement(rng, i) for _ in range(4))
                leaves.append(LeafRecord(f"{pid}:l{i % 4}:w0", f"{pid}:l{i % 4}", pid, text, i * 100, i * 100 + 100))
            project.store.documents.add_file(file_id, f"file-{f:02d}.md", leaves, embedder.embed_documents([l.text for l in leaves]),
                                   parents, embedder.embed_documents([p.text for p in parents]))
        fill_docs = time.perf_counter() - t0
        t0 = time.perf_counter()
        messages = session.messages(turns, seed=2)
        for n, message in enumerate(messages, start=1):
            turn = Turn(number=n, active_probe="why_now", active_mode="mode_1", user=message,
                        assistant="Question 1: What would change if nothing were done?", summary=f"PM: {message}")
            remember(project.store, embedder, turn)  # the real path: summary and both sides, several vectors
        fill_turns = time.perf_counter() - t0

        state, manifest, catalogue = project.state(), project.manifest(), project.catalogue()
        timings: dict[str, list[float]] = {r: [] for r in ("vector", "bm25", "hybrid")}
        questions = [m for m in messages if len(m.split()) > 4][:queries]
        for retriever in timings:
            s = settings.model_copy(update={"document_retriever": retriever, "conversation_retriever": retriever})
            for q in questions:
                decision = rule_route(RouteInputs(state, manifest, q, turns + 1, catalogue), s)
                start = time.perf_counter()
                assemble(decision, state, manifest, q, turns + 1, project.store, embedder, s, catalogue)
                timings[retriever].append((time.perf_counter() - start) * 1000)
        return {
            "chunks": len(project.store.ids("documents")),
            "turns": len(project.store.memory.turn_numbers()),
            "queries_per_retriever": len(questions),
            "assembly_ms": {
                r: {"p50": round(statistics.median(v), 2), "p95": round(percentile(v, 95), 2), "max": round(max(v), 2)}
                for r, v in timings.items()
            },
            "note": "assembly = retrieval + formatting; the query embedding is excluded (random vectors)",
            "fill_seconds": {"documents": round(fill_docs, 1), "turns": round(fill_turns, 1)},
        }
