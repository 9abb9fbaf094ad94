"""Offline replies that listen and answer: no question twice, follow-ups from the PM's own facts, file
questions answered in a sentence (tables and header lines included), and the reply measures of eval sessions."""

from __future__ import annotations

import json

from forge_bench.answer_eval import score_reply
from forge_bench.session_eval import score_replies
from pmforge.core.models import BriefChange, RetrievedSection, SessionState, Turn
from pmforge.interviewer.answer import answer_kind, answer_sentence, find_answer, reply_to, units
from pmforge.interviewer.questions import follow_ups, fresh, opening, questions_in
from pmforge.knowledge import builtin_catalogue
from pmforge.understand import Understanding, understand
from pmforge.understand.fields import unit_vectors

CATALOGUE = builtin_catalogue()


def _section(text: str, filename: str = "ops.md", section: str = "Teams") -> RetrievedSection:
    return RetrievedSection(id=f"{filename}:{section}", file_id=filename, filename=filename, section=section,
                            start=0, end=len(text), text=text, score=1.0)


# ---------------------------------------------------------------- questions


def test_a_question_already_asked_is_not_asked_again_even_in_other_words():
    earlier = ["Who has the final say on whether this goes ahead?"]
    candidates = ["Who has the final say on whether this goes ahead?",
                  "Who gets the final say on whether this goes ahead or not?",
                  "What must not get worse while you do this?"]
    assert fresh(candidates, earlier, 3) == ["What must not get worse while you do this?"]


def test_a_two_part_catalogue_question_repeats_when_either_part_was_asked():
    earlier = list(questions_in("Question 2: Has this been attempted before? What stopped it then?"))
    assert fresh(["Has this been attempted before? What stopped it then, and what has changed since?"],
                 earlier, 3) == []


def test_questions_are_read_outside_quotes_and_markup():
    reply = ("From your files [a.md]: “Why would anyone wait two weeks for a refund?”\n\n"
             "**Why Now** — the trigger\n\nQuestion 1: What happened in the last few months?")
    assert questions_in(reply) == ("What happened in the last few months?",)


def test_follow_ups_take_the_pms_own_numbers_names_and_doubts():
    u = understand("The RMA wait is 41 hours today. Rachel Okafor signs off on anything in post-purchase. I'm not "
                   "sure customers want self-service at all.", SessionState(), catalogue=CATALOGUE)
    asks = " ".join(follow_ups(u, SessionState(), "The RMA wait is 41 hours today."))
    assert "41 hours" in asks
    assert "Rachel Okafor" in asks
    assert "customers want self-service" in asks
    said = opening(u)
    assert "Rachel Okafor has the final say" in said and "“" not in said  # its own words, not a quote


# ---------------------------------------------------------------- file questions


def test_answer_kinds():
    assert answer_kind("Who leads the Reno warehouse team?") == "who"
    assert answer_kind("When does the lease end?") == "when"
    assert answer_kind("How much did ParcelBack quote per return?") == "how_much"
    assert answer_kind("What was the South's median refund wait?") == "how_many"
    assert answer_kind("What does RMA stand for?") == "stands_for"
    assert answer_kind("Which vendor has the shortest setup?") == "which"


def test_a_name_in_the_sentence_before_answers_who_and_is_quoted_with_it():
    section = _section("## Reno\n\nThe lead is Gloria Mbeki. Her team of 14 handles inbound inspection for the West "
                       "region.\n\n## Columbus\n\nColumbus is run by Arjun Mehta.")
    reply = reply_to("Who leads the Reno inspection team?", [section])
    assert reply.startswith("**Gloria Mbeki**")
    assert "The lead is Gloria Mbeki. Her team of 14" in reply


def test_the_sentence_whose_verb_takes_the_asked_thing_answers():
    # Both sentences say "ran", "evaluation" and a name; only one says who ran the evaluation.
    section = _section("For the evaluation, Ingrid Solberg ran the integration spike with each finalist. The "
                       "evaluation itself was run by Samuel Reyes from Procurement.", "evaluation.md", "Team")
    assert reply_to("Who ran the evaluation?", [section]).startswith("**Samuel Reyes**")


def test_by_when_is_answered_by_the_date_the_asked_thing_must_happen_by():
    section = _section("If the board agrees, we will give Circulo notice at once and run a four-week pilot from 6 "
                       "October 2025. Notice must reach Circulo by 1 October 2025, or the contract renews.",
                       "evaluation.md", "Background")
    assert reply_to("By when do we have to give Circulo notice?", [section]).startswith("**1 October 2025**")
    assert reply_to("When does the pilot start?", [section]).startswith("**6 October 2025**")  # not "four-week"


def test_a_table_cell_answers_with_its_row_and_column():
    table = ("| | | |\n|---|---|---|\n| Vendor | Price per return | Setup time |\n| Loop Returns | $1.20 | 10 weeks |"
             "\n| ParcelBack | $0.95 | 6 weeks |\n| Kestrel | $1.35 | 12 weeks |")
    section = _section(table, "vendors.docx", "Vendors compared")
    rows = [u for u in units(section) if u.kind == "row"]
    assert rows[0].cells == {"Vendor": "Loop Returns", "Price per return": "$1.20", "Setup time": "10 weeks"}
    assert reply_to("How much did ParcelBack quote per return?", [section]).startswith("**$0.95**")
    assert reply_to("Which vendor has the shortest setup time?", [section]).startswith("**ParcelBack**")


def test_header_lines_and_acronyms_answer():
    section = _section("Author: Nadia Petrov\nOwner: Returns Analytics\nPeriod: Q3 2025\n\n"
                       "An RMA (Return Merchandise Authorization) is issued for every parcel.",
                       "q3-returns-metrics.md", "Summary")
    assert find_answer("Who wrote the Q3 returns metrics report?", [section]).value == "Nadia Petrov"
    assert find_answer("What does RMA stand for?", [section]).value == "Return Merchandise Authorization"


def test_a_quote_never_runs_into_the_next_list_item():
    section = _section("- Priya, 34: \"I waited two weeks for my money.\"\n- Marcus, 52: \"I don't own a printer.\"",
                       "interviews.md", "Findings")
    reply = reply_to("Which customer doesn't own a printer?", [section])
    assert reply.startswith("**Marcus**") and "two weeks" not in reply


def test_an_answer_is_a_sentence_in_the_questions_words_when_that_reads_right():
    assert answer_sentence("Who owns the training budget?", "Store ops") == "**Store ops** owns the training budget"
    assert answer_sentence("How long does the pilot run?", "eight weeks") == "The pilot runs **eight weeks**"
    assert answer_sentence("How much do the handhelds cost?", "$42,000") == "The handhelds cost **$42,000**"
    assert answer_sentence("How many stores are in the pilot?", "20") == "**20** stores are in the pilot"
    assert answer_sentence("What is the budget for training?", "$8,500") == "The budget for training is **$8,500**"
    assert answer_sentence("What does BORIS stand for?", "Buy Online, Return In Store") == \
        "BORIS stands for **Buy Online, Return In Store**"
    # Shapes that would need a preposition or an irregular verb get the answer alone, never a wrong sentence.
    assert answer_sentence("When does the pilot start?", "June 3") == "**June 3**"
    assert answer_sentence("Who did Dana interview first?", "Marcus") == "**Marcus**"
    section = _section("## Scope\n\nThe pilot covers 20 stores in the Midwest region for eight weeks.")
    assert reply_to("How long does the pilot run?", [section]).startswith("The pilot runs **eight weeks** [")


def test_no_passage_answers_says_so():
    section = _section("Columbus is run by Arjun Mehta.")
    assert "did not find" in reply_to("What is the warranty period for kettles?", [section])


# ---------------------------------------------------------------- reply measures


def _turn(number: int, user: str, assistant: str) -> Turn:
    return Turn(number=number, user=user, assistant=assistant)


def test_reply_measures_count_what_a_pm_notices():
    state = SessionState()
    state.turns = [
        _turn(1, "Refunds take 14 days and customers hate waiting for their money back.",
              "Question 1: Who has the final say on whether this goes ahead?"),
        _turn(2, "Actually it's 17 days, not 14.",
              "Where we are: refunds take 14 days.\n\nQuestion 1: Who has the final say on whether this goes ahead?"),
        _turn(3, "ok", "The problem brief has what it needs.\n\n- Still open: Why Now"),
        _turn(4, "fine", "You said: refunds take 14 days and customers hate waiting for their money back."),
    ]
    state.brief_history = [BriefChange(turn=2, field="problem_statement", old="14 days", new="17 days")]
    found = score_replies(state, embed=unit_vectors)
    assert found["questions_asked_again"] == 1 and found["replies_repeating"] == 1
    assert found["stale_values"] == 1
    assert found["nothing_left_with_open_items"] == 1
    assert found["parroting_replies"] == 1


def test_an_answer_counts_only_in_the_replys_opening():
    row = {"file": "ops.md", "question": "Who leads Reno?", "answers": ["gloria mbeki"]}
    assert score_reply("**Gloria Mbeki** [ops.md › Reno]", row) == {"answered": True, "present": True, "cited": True}
    late = "x" * 500 + " Gloria Mbeki"
    assert score_reply(late, row) == {"answered": False, "present": True, "cited": False}


def test_forge_eval_answers_runs_the_real_turn_loop(tmp_path, isolated_env):
    from pmforge.surfaces.cli import main as forge

    (tmp_path / "ops.md").write_text("# Operations\n\n## Reno\n\nThe lead is Gloria Mbeki. Her team of 14 handles "
                                     "inbound inspection.\n\n## Memphis\n\nKeisha Brown leads the Memphis hub.\n",
                                     encoding="utf-8")
    rows = [{"file": "ops.md", "question": "Who leads the Memphis hub?", "answers": ["keisha brown"]},
            {"file": "ops.md", "question": "How many people are in the Reno team?", "answers": ["14"]}]
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    assert forge(["eval", "answers", "--dir", str(tmp_path), "--json"]) == 0


def test_a_summary_line_gives_the_point_not_the_pms_sentence_back():
    from pmforge.interviewer.offline import _gist

    said = ("The real problem, as I see it, is that the wrong trade gets sent because the job is diagnosed over the "
            "phone by a call handler who isn't a tradesperson.")
    gist = _gist(said)
    assert gist.startswith("The wrong trade gets sent because") and gist.endswith("…")
    assert len(gist.split()) <= 17 and gist.rstrip("…") not in ("", said)
    assert _gist("Real pain: leads skip the markdown walk on busy nights, and the produce gets binned.") == \
        "Leads skip the markdown walk on busy nights…"
    assert _gist("Adjusters.") == "Adjusters."


def test_the_opening_never_says_a_clause_back_as_a_measure_or_a_long_belief_whole():
    from pmforge.understand import Hedge, Metric

    u = Understanding(metrics=[Metric(kind="anti", name="I'd say inventory value shouldn't go", text="x")])
    assert "must not get worse" not in opening(u) and "guardrail" in opening(u)
    long_claim = ("the orthopedics group had OR 3 blocked for a full Thursday and released it at 4pm on the "
                  "Wednesday, so Janelle spent her evening phoning round")
    u = Understanding(hedges=[Hedge(claim=long_claim, sentence=long_claim)])
    assert long_claim not in opening(u) and "belief to test" in opening(u)
