"""A deterministic synthetic discovery session: documents, varied messages, filler, hedges.

Used by `forge bench prompt` (and later soak/latency runs) to drive the real turn loop.
"""

from __future__ import annotations

import random

STAKEHOLDERS = ["Dana Whitfield (VP of stores)", "Priya Raman (head of analytics)", "Marco Lindqvist (regional director)",
                "Aisha Bello (bakery category lead)", "Tom Okafor (store operations)", "Lena Fischer (finance partner)"]
DEPARTMENTS = ["bakery", "produce", "prepared foods", "dairy", "meat", "floral"]
TEAMS = ["store operations", "pricing", "analytics", "merchandising", "supply chain", "finance"]
METRICS = ["shrink", "out-of-stocks", "markdown sell-through", "gross margin", "waste tonnage", "labour hours"]
PERIODS = ["week", "month", "quarter"]
GOALS = ["cut fresh shrink by a third", "free up two labour hours per store per day", "raise markdown sell-through",
         "stop end-of-day waste in bakery", "give department leads one daily list"]
FILLER = ["yes", "ok, continue", "makes sense, move on", "sure", "right", "got it", "sounds good, let's move on"]


def statement(rng: random.Random, turn: int) -> str:
    s, d, t, m = rng.choice(STAKEHOLDERS), rng.choice(DEPARTMENTS), rng.choice(TEAMS), rng.choice(METRICS)
    n = rng.randint(2, 19)
    forms = [
        f"{s} told me {d} {m} is {n}.{rng.randint(0, 9)} percent in the pilot region and rising since spring.",
        f"The {t} team reviews {m} every {rng.choice(PERIODS)}, but nobody owns the follow-up in {d}.",
        f"Our goal is to {rng.choice(GOALS)} before the end of the fiscal year; {s} signs off on the budget.",
        f"In store {100 + turn} the {d} lead prints labels by hand, which takes about {n * 5} minutes a round.",
        f"We tried something similar in {d} two years ago and it was rolled back after {n} weeks.",
        f"{s} is worried that the {t} team will see this as extra work on weekends.",
    ]
    return rng.choice(forms)


def _hedge(rng: random.Random, turn: int) -> str:
    s, d = rng.choice(STAKEHOLDERS), rng.choice(DEPARTMENTS)
    forms = [
        f"I think {s.split(' (')[0]} will back it if {d} shrink drops within {rng.randint(2, 12)} weeks (note {turn}).",
        f"We assume department leads in {d} will trust a suggested markdown list from head office (case {turn}).",
        f"Probably the {rng.choice(TEAMS)} team can supply daily sales by item for {d} by week {rng.randint(1, 40)}.",
        f"I believe shoppers in {d} will wait for evening markdowns if the discount is over {rng.randint(20, 60)} percent.",
    ]
    return rng.choice(forms)


def _question(rng: random.Random) -> str:
    return rng.choice([
        f"What does the research say about {rng.choice(DEPARTMENTS)} {rng.choice(METRICS)}?",
        f"Which stores were in the earlier {rng.choice(DEPARTMENTS)} trial, according to the notes?",
        f"Who did we say owns {rng.choice(METRICS)} today?",
        "What did the interviews find about label printing?",
    ])


def messages(turns: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    switch = max(turns * 3 // 10, 20)
    for turn in range(1, turns + 1):
        if turn == switch:
            out.append("Let's evaluate the solution: a daily markdown list on the department leads' handhelds.")
            continue
        roll = rng.random()
        if roll < 0.3:
            out.append(rng.choice(FILLER))
        elif roll < 0.5:
            out.append(_hedge(rng, turn))
        elif roll < 0.65:
            out.append(_question(rng))
        elif roll < 0.75:  # a long, detailed answer
            out.append(" ".join(statement(rng, turn) for _ in range(rng.randint(4, 8))))
        else:
            out.append(statement(rng, turn))
    return out


def documents(seed: int = 5) -> dict[str, bytes]:
    """Three Markdown documents a PM might upload: research, a strategy memo, meeting notes."""
    rng = random.Random(seed)

    def section(title: str, paragraphs: int) -> str:
        body = "\n\n".join(" ".join(statement(rng, rng.randint(1, 99)) for _ in range(4)) for _ in range(paragraphs))
        return f"## {title}\n\n{body}\n"

    research = "# Store interviews, Q3\n\n" + "\n".join(section(f"{d.title()} findings", 3) for d in DEPARTMENTS)
    memo = "# Fresh strategy memo\n\n" + "\n".join(section(t, 2) for t in ("Context", "Options", "Risks", "Ask"))
    notes = "# Pricing sync notes\n\n" + "\n".join(section(f"Meeting {i}", 2) for i in range(1, 7))
    return {"store-interviews-q3.md": research.encode(), "strategy-memo.md": memo.encode(),
            "pricing-sync-notes.md": notes.encode()}


# ---- the heavy workload: every prompt section pushed towards its limit at once

def prose(rng: random.Random, words: int, turn: int = 0) -> str:
    """About `words` words of plausible PM prose (the same sentence forms as the messages)."""
    out: list[str] = []
    count = 0
    while count < words:
        sentence = statement(rng, turn or rng.randint(1, 99)) if rng.random() < 0.8 else _hedge(rng, turn)
        out.append(sentence)
        count += len(sentence.split())
    return " ".join(out)


def heavy_messages(turns: int, words: int = 160, seed: int = 13) -> list[str]:
    """Substantive ~160-word messages every turn (no filler), mixing facts, hedges and questions, so the
    router asks for retrieval and the tools run every time. The mode switch still happens."""
    rng = random.Random(seed)
    switch = max(turns * 3 // 10, 20)
    out = []
    for turn in range(1, turns + 1):
        lead = ("Let's evaluate the solution: a daily markdown list on the department leads' handhelds."
                if turn == switch else _question(rng) if rng.random() < 0.3 else "")
        body = prose(rng, words - len(lead.split()), turn)
        out.append(f"{lead} {body}".strip())
    return out


def heavy_documents(paragraph_words: int = 450, seed: int = 7) -> dict[str, bytes]:
    """Documents made of ~450-word paragraphs, three or four to a section, so parents approach the
    2,000-token parent cap and every retrieved section is as large as a parent can be."""
    rng = random.Random(seed)

    def section(title: str, paragraphs: int) -> str:
        body = "\n\n".join(prose(rng, paragraph_words) for _ in range(paragraphs))
        return f"## {title}\n\n{body}\n"

    research = "# Store interviews, Q3 (long form)\n\n" + "\n".join(
        section(f"{d.title()} findings", 3) for d in DEPARTMENTS)
    memo = "# Fresh strategy memo (long form)\n\n" + "\n".join(
        section(t, 3) for t in ("Context", "Options", "Risks", "Ask"))
    notes = "# Pricing sync notes (long form)\n\n" + "\n".join(section(f"Meeting {i}", 3) for i in range(1, 7))
    return {"store-interviews-long.md": research.encode(), "strategy-memo-long.md": memo.encode(),
            "pricing-sync-long.md": notes.encode()}


def org_context(words: int = 600, seed: int = 17) -> str:
    rng = random.Random(seed)
    teams = ", ".join(f"{t} ({rng.randint(3, 40)} people)" for t in TEAMS)
    people = "; ".join(STAKEHOLDERS)
    head = f"Fresh departments in 180 stores across four regions. Teams: {teams}. People: {people}."
    return head + " " + prose(rng, words - len(head.split()))
