"""`forge bench recall`: facts planted at turn t and asked about at turn t+k, through the real turn loop.

A fact counts as recalled when the asking turn's assembled context brought back
the turn that stated it (from conversation memory; recent turns are always in
the prompt anyway, so every k here is beyond the recent window).
"""

from __future__ import annotations

import random

from forge_bench.bench import session
from forge_bench.bench.figures import scratch_folder

GAPS = (5, 20, 50, 100, 200, 300)
COURIERS = ["Brightline", "Northway", "Kestrel Freight", "Bluewater", "Ironbridge", "Sunpath", "Redfern", "Lakeshore"]
PEOPLE = ["Imani Okafor", "Jonas Brandt", "Sofia Marchetti", "Kenji Watanabe", "Aroha Ngata", "Pavel Novak",
          "Leila Haddad", "Mateo Silva", "Ingrid Dahl", "Tariq Aziz", "Hannah Cole", "Omar Farouk"]
ROLES = ["data steward", "pilot coordinator", "store champion", "pricing analyst", "label-printer owner"]


# Follow-up questions are phrased several ways: one repeated template would make earlier *questions*
# about other entities outscore the turn that stated the fact, an artefact real sessions do not have.
COURIER_QUESTIONS = ["Which company delivers fresh stock to store {n}?", "Who handles deliveries for store {n} again?",
                     "Remind me of store {n}'s fresh supplier.", "What did I tell you about store {n}?"]
ROLE_QUESTIONS = ["What role did {p} agree to take?", "What is {p} doing on the pilot?",
                  "Remind me what {p} signed up for.", "{p} - what was their part in this?"]


def _facts(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """(statement, question) pairs with unique entities."""
    out = []
    stores = rng.sample(range(200, 999), n)
    people = rng.sample(PEOPLE, min(n, len(PEOPLE)))
    for i in range(n):
        if i % 2 == 0 or i // 2 >= len(people):
            courier = rng.choice(COURIERS)
            out.append((f"By the way, store {stores[i]} gets its fresh deliveries from {courier} on Tuesdays.",
                        rng.choice(COURIER_QUESTIONS).format(n=stores[i])))
        else:
            person, role = people[i // 2], rng.choice(ROLES)
            out.append((f"{person} has agreed to be the {role} for the bakery pilot.",
                        rng.choice(ROLE_QUESTIONS).format(p=person)))
    return out


def bench_recall(turns: int = 360, retriever: str | None = None, seed: int = 3) -> dict:
    from pmforge.core import settings as config
    from pmforge.ingest.pipeline import ingest_file
    from pmforge.project.project import Project
    from pmforge.project.services import Services
    from pmforge.turn.orchestrator import run_turn

    settings = config.get_settings()
    with scratch_folder("forge-bench-") as scratch:
        updates = {"projects_dir": scratch, "llm": "offline"}
        if retriever:
            updates |= {"conversation_retriever": retriever, "document_retriever": retriever}
        settings = settings.model_copy(update=updates)
        project = Project.create(Services.from_settings(settings), "recall bench")
        for name, data in session.documents().items():
            ingest_file(project, name, data)

        rng = random.Random(seed)
        script = session.messages(turns, seed=seed)
        plan: dict[int, tuple[str, int, int]] = {}  # turn -> (message, planted turn, gap) for the asking turns
        gaps = [g for g in GAPS if g + 2 < turns]
        facts = _facts(rng, 4 * len(gaps))
        for i, (statement, question) in enumerate(facts):
            gap = gaps[i % len(gaps)]
            for _ in range(100):  # find a free (stated, asked) slot pair
                stated = rng.randint(2, turns - gap)
                if stated not in plan and stated + gap not in plan and script[stated - 1] != "" and stated + gap <= turns:
                    break
            else:
                continue
            plan[stated] = (statement, 0, 0)
            plan[stated + gap] = (question, stated, gap)
        for turn, (message, _, _) in plan.items():
            script[turn - 1] = message

        hits: dict[int, list[bool]] = {g: [] for g in gaps}
        for turn, message in enumerate(script, start=1):
            record = run_turn(project, message)
            _, stated, gap = plan.get(turn, ("", 0, 0))
            if stated:
                hits[gap].append(stated in record.retrieved.conversations)
        asked = sum(len(v) for v in hits.values())
        recalled = sum(sum(v) for v in hits.values())
        return {
            "turns": turns,
            "retriever": settings.conversation_retriever,
            "embedder": project.services.embedder.signature,
            "k_turns_retrieved": settings.conversation_turns,
            "facts": asked,
            "recalled": recalled,
            "recall": round(recalled / asked, 4) if asked else 0.0,
            "by_gap": {str(g): round(sum(v) / len(v), 3) if v else None for g, v in hits.items()},
        }
