"""What reaches the prompt: passages packed to a budget, memory of both sides, later restatements first."""

from __future__ import annotations

import random

import pytest

from pmforge.core.models import RetrievedSection, Turn
from pmforge.core.tokens import count_tokens
from pmforge.index.retrieval import Query, _Hit, find_sections, find_turns, pack_passages
from pmforge.ingest.pipeline import ingest_file
from pmforge.knowledge import builtin_catalogue
from pmforge.project.project import Project
from pmforge.turn.assemble import format_documents, format_turns, shown_turns
from pmforge.turn.remember import remember

CATALOGUE = builtin_catalogue()

ANSWER = "The Tuesday pilot in Store 114 cut bakery waste from 9.2 percent to 6.1 percent over six weeks."


def _filler(n: int) -> str:
    return " ".join(f"In meeting {n}.{i} the team went over the rollout calendar with {n + i} open questions, "
                    f"and people repeated points about staffing and printers." for i in range(6))


def _long_memo() -> bytes:
    """No headings at all, and long: one parent is far bigger than the budgets below."""
    paragraphs = [_filler(n) for n in range(8)]
    paragraphs.insert(4, _filler(20) + " " + ANSWER + " " + _filler(21))
    return "\n\n".join(paragraphs).encode()


@pytest.mark.parametrize("budget", [250, 600, 1500])
def test_a_long_section_is_shown_as_the_passage_that_answers_within_budget(project: Project, budget: int):
    assert ingest_file(project, "memo.md", _long_memo()).ok
    converted = project.ws.converted_path("memo.md").read_text()
    assert count_tokens(converted) > 1500  # the whole file would not fit any of these budgets
    query = Query("How much did the Store 114 pilot cut bakery waste?", project.services.embedder)
    passages = find_sections(project.store, query, budget, "hybrid", project.settings)
    shown = format_documents(passages, budget)
    assert count_tokens(shown) <= budget
    assert ANSWER in shown  # the answer whole, never cut mid-sentence
    for p in passages:
        assert p.text == converted[p.start : p.end]  # exact offsets, for citations and highlighting
        assert f'offsets="{p.start}-{p.end}"' in shown


def test_small_sections_are_shown_whole(project: Project):
    doc = b"# Plan\n\n## Scope\n\nThe pilot covers 20 stores in the Midwest for eight weeks.\n\n" \
          b"## Budget\n\nFinance approved 200 thousand dollars for hardware and training.\n"
    assert ingest_file(project, "plan.md", doc).ok
    query = Query("What budget did finance approve?", project.services.embedder)
    passages = find_sections(project.store, query, 1000, "hybrid", project.settings)
    assert passages and "@" not in passages[0].id  # the parent itself, not a cut of it
    assert "200 thousand dollars" in passages[0].text


def _parent(text: str, pid: str = "f:p0", start: int = 0) -> RetrievedSection:
    return RetrievedSection(id=pid, file_id="f", filename="f.md", section="", start=start,
                            end=start + len(text), text=text, score=0.0)


def test_packing_never_exceeds_the_budget_and_merges_overlaps(services):
    rng = random.Random(4)
    sentences = [f"Sentence {i} says store {rng.randint(1, 300)} saw {rng.randint(1, 99)} percent less waste."
                 for i in range(400)]
    text = " ".join(sentences)
    parent = _parent(text)
    settings = services.settings
    for trial in range(30):
        hits = []
        for _ in range(rng.randint(1, 12)):
            start = rng.randrange(0, len(text) - 400)
            hits.append(_Hit("f:p0", start, start + rng.randint(50, 400), rng.random()))
        hits.sort(key=lambda h: h.score, reverse=True)
        budget = rng.choice([80, 200, 500, 1200, 3000])
        packed = pack_passages(hits, {"f:p0": parent}, budget, settings)
        assert count_tokens(format_documents(packed, budget)) <= budget
        spans = sorted((p.start, p.end) for p in packed)
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # overlapping spans were merged
        for p in packed:
            assert p.text == text[p.start : p.end]
            assert p.start == 0 or text[p.start - 2 : p.start] == ". "  # starts at a sentence


def _turn(n: int, user: str, assistant: str = "Noted. What else should we check?") -> Turn:
    return Turn(number=n, user=user, assistant=assistant, summary=f"PM: {user}")


def _remember_all(project: Project, turns: list[Turn]) -> None:
    for i, turn in enumerate(turns):
        asked = "" if i == 0 else "Which store should run the pilot?"
        remember(project.store, project.services.embedder, turn, asked)


def test_what_forge_said_is_found_too(project: Project):
    """Facts stated by either side are searchable: the assistant's words are embedded, not just a summary."""
    turns = [_turn(n, f"Let's keep going on the rollout, point {n}.") for n in range(1, 9)]
    turns[4] = _turn(5, "Can you check the vendor terms?",
                     "I checked: Quayside charges a 40,000 dollar setup fee and needs a three-year contract.")
    _remember_all(project, turns)
    query = Query("How much is Quayside's setup fee?", project.services.embedder)
    found = find_turns(project.store, query, 3, "vector", project.settings)
    assert found[0].turn_number == 5 and found[0].match_side == "assistant"


def test_a_terse_answer_is_found_by_the_question_it_answered(project: Project):
    turns = [_turn(n, f"We also talked about the printers again, note {n}.") for n in range(1, 7)]
    turns.append(_turn(7, "Yes, that one."))
    _remember_all(project, turns[:6])
    remember(project.store, project.services.embedder, turns[6], "Should the pilot run in the Duluth store?")
    query = Query("Which store runs the pilot? Duluth?", project.services.embedder)
    found = find_turns(project.store, query, 2, "hybrid", project.settings)
    assert found[0].turn_number == 7
    shown = format_turns(found, 1000, CATALOGUE)
    assert "Forge had asked: Should the pilot run in the Duluth store?" in shown and "PM: Yes, that one." in shown


def test_a_later_restatement_outranks_the_earlier_figure(project: Project):
    turns = [_turn(1, "The pilot budget is 200k for hardware and training.")]
    turns += [_turn(n, f"Store managers want the list before 9am, point {n}.") for n in range(2, 10)]
    turns.append(_turn(10, "Update on the pilot budget: it is now 350k for hardware and training."))
    _remember_all(project, turns)
    query = Query("What is the pilot budget for hardware and training?", project.services.embedder)
    found = find_turns(project.store, query, 3, "hybrid", project.settings)
    numbers = [t.turn_number for t in found]
    assert numbers.index(10) < numbers.index(1)
    shown = shown_turns(found, 1000, CATALOGUE)
    assert [t.turn_number for t in shown] == sorted(t.turn_number for t in shown)  # chronological on screen


def test_turns_are_packed_to_the_conversation_budget(project: Project):
    long_reply = " ".join(f"Point {i}: the bakery team wants the markdown list earlier in the day." for i in range(40))
    turns = [_turn(n, f"Bakery markdown timing, round {n}.", long_reply) for n in range(1, 9)]  # ~5,000 tokens
    _remember_all(project, turns)
    query = Query("When does the bakery team want the markdown list?", project.services.embedder)
    found = find_turns(project.store, query, 12, "hybrid", project.settings)
    for budget in (150, 400, 1000):
        shown = format_turns(shown_turns(found, budget, CATALOGUE), budget, CATALOGUE)
        assert 0 < count_tokens(shown) <= budget


def test_an_answer_sharing_no_words_with_the_question_is_found_beside_the_turn_that_asked(project: Project):
    # The answer in turn 7 names neither the book nor "take away": only the turn that asked about it does.
    turns = [_turn(n, f"The bakery team wants the markdown list earlier in the day, point {n}, "
                      f"because the afternoon shift starts at two and the shelves must be labelled first.")
             for n in range(1, 6)]
    turns.append(_turn(6, "I finished reading Becoming Nicole by Amy Ellis Nutt over the weekend, it was lovely.",
                       "What did you take away from Becoming Nicole?"))
    turns.append(_turn(7, "It taught me to accept myself as I am, and that asking people for help is a strength; "
                          "hard times pass, and hope and love are there even when you cannot see them yet."))
    turns += [_turn(n, f"Store managers asked again for the list before nine in the morning, round {n}, "
                       f"so the produce team can plan the markdown walk.") for n in range(8, 13)]
    for i, turn in enumerate(turns):
        remember(project.store, project.services.embedder, turn, turns[i - 1].assistant if i else "")
    query = Query("What did the PM take away from the book Becoming Nicole?", project.services.embedder)
    found = find_turns(project.store, query, 3, "hybrid", project.settings)
    assert {6, 7} <= {t.turn_number for t in found}
    assert "It taught me to accept myself" in format_turns(found, 1000, CATALOGUE)


def test_a_terse_answer_shown_after_its_question_does_not_repeat_it(project: Project):
    asking = _turn(6, "The Duluth store has the most shrink of the region.", "Should the pilot run in the Duluth store?")
    terse = _turn(7, "Yes, that one.")
    remember(project.store, project.services.embedder, asking, "")
    remember(project.store, project.services.embedder, terse, asking.assistant)
    query = Query("Which store runs the pilot? Duluth?", project.services.embedder)
    found = find_turns(project.store, query, 2, "hybrid", project.settings)
    both = format_turns(found, 1000, CATALOGUE)
    assert both.count("Should the pilot run in the Duluth store?") == 1 and "PM: Yes, that one." in both
    alone = format_turns([t for t in found if t.turn_number == 7], 1000, CATALOGUE)
    assert "Forge had asked: Should the pilot run in the Duluth store?" in alone
