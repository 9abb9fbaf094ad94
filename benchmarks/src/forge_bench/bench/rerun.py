"""`forge bench rerun`: how long the real app takes to rerun with a 300-turn session and 50 files.

The project is built through the real ingestion and remember paths, then the app is run
headless with Streamlit's AppTest: the first run (imports, clients, caches) and then
reruns, which is what every click and message costs the PM.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from forge_bench.bench import session
from forge_bench.bench.figures import scratch_projects


def bench_rerun(turns: int = 300, files: int = 50, reruns: int = 5) -> dict:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    import pmforge
    from pmforge.core import settings as config
    from pmforge.core.models import Turn
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.remember import catch_up

    with scratch_projects("forge-bench-"):
        services = Services.from_settings(config.get_settings())
        project = Project.create(services, "rerun bench")
        t0 = time.perf_counter()
        for i in range(files):
            body = f"# Note {i}\n\n" + " ".join(session.statement(__import__("random").Random(i), i) for _ in range(3))
            ingest_file(project, f"note-{i:02d}.md", body.encode())
        state = project.state()
        for n, message in enumerate(session.messages(turns), start=1):
            reply = "What I'm hearing: " + message + "\n\n" + "\n\n".join(
                f"Question {q}: What would change for the store teams if {message[:40].lower()}?" for q in (1, 2, 3))
            state.turns.append(Turn(number=n, user=message, assistant=reply))
        catch_up(project.store, services.embedder, services.llm, state, services.settings)
        project.ws.save_state(state)
        build_s = time.perf_counter() - t0

        st.cache_resource.clear()
        app = AppTest.from_file(str(Path(pmforge.__file__).parent / "surfaces" / "app.py"), default_timeout=600)
        t0 = time.perf_counter()
        app.run()
        first = time.perf_counter() - t0
        timings = []
        for _ in range(reruns):
            t0 = time.perf_counter()
            app.run()
            timings.append(time.perf_counter() - t0)
        return {
            "turns": turns,
            "files": files,
            "chat_messages_rendered": len(app.chat_message),
            "exceptions": len(app.exception),
            "first_run_s": round(first, 3),
            "rerun_s": {"p50": round(statistics.median(timings), 3), "max": round(max(timings), 3)},
            "build_s": round(build_s, 1),
        }
