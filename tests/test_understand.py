"""Understanding ordinary PM language: one case per slot, correction and intent, and no false captures."""

from __future__ import annotations

import pytest

from pmforge.core.models import Assumption, Manifest, ManifestEntry, RetrievedSection, SessionState, Stakeholder
from pmforge.core.settings import Settings
from pmforge.index.retrieval import widen
from pmforge.ingest.chunk import _sentence_spans as chunk_sentence_spans
from pmforge.interviewer.offline import best_sentence
from pmforge.interviewer.questions import questions_in
from pmforge.interviewer.rules import RouteInputs, rule_route
from pmforge.knowledge import builtin_catalogue
from pmforge.turn.assemble import side_excerpt
from pmforge.understand import extractive, understand
from pmforge.understand.read import heading_label
from pmforge.understand.text import claim_without_hedge, is_hedged, person_names, sentences

CATALOGUE = builtin_catalogue()


def slots_of(message: str, state: SessionState | None = None, mode: str | None = None) -> dict[str, list[str]]:
    u = understand(message, state or SessionState(), mode, catalogue=CATALOGUE)
    found: dict[str, list[str]] = {}
    for fact in u.facts:
        found.setdefault(fact.slot, []).append(fact.subject or fact.text)
    return found


def texts_of(message: str) -> dict[str, list[str]]:
    """What the brief would show under each slot (a metric as its rendered record)."""
    found: dict[str, list[str]] = {}
    for fact in understand(message, SessionState(), catalogue=CATALOGUE).facts:
        found.setdefault(fact.slot, []).append(fact.text)
    return found


def test_sentences_survive_abbreviations_decimals_and_lists():
    text = "Dr. Okafor runs the ward, e.g. nights vs. days. Churn is 3.4% now.\n- first point\n2) second point"
    assert sentences(text) == ["Dr. Okafor runs the ward, e.g. nights vs. days.", "Churn is 3.4% now.",
                               "first point", "second point"]
    assert sentences("ok. the drivers hate the new app.") == ["ok.", "the drivers hate the new app."]


def test_every_place_that_cuts_text_into_sentences_keeps_an_abbreviated_sentence_whole():
    """Quotes from files, turn summaries, the questions a reply asked, retrieval windows and chunk cuts all
    use the one splitter, so none of them cuts "Dr. Shah … e.g. in 20 stores" into fragments."""
    first = "Dr. Shah ran the pilot, e.g. in 20 stores, at 3.4% shrink."
    second = "Would Mr. Cole sign off on a second wave?"
    text = f"{first} {second}"

    assert extractive.sentences(text) == [first, second]
    assert questions_in(f"{first} Who funds it, e.g. ops or finance? {second}") == (
        "Who funds it, e.g. ops or finance?", second)
    assert best_sentence(text, "who ran the pilot") == first
    assert side_excerpt(text, text.index("20 stores"), text.index("20 stores") + 9, 200) == first + " …"
    section = RetrievedSection(id="p", file_id="f", filename="f.md", section="", start=0, end=len(text), text=text,
                               score=1.0)
    assert widen(section, text.index("e.g."), text.index("e.g.") + 4, 0) == (0, len(first))
    assert [text[s:e].strip() for s, e in chunk_sentence_spans(text, 0, len(text))] == [first, second]


@pytest.mark.parametrize("sentence, claim", [
    ("I think clinicians would use it if it saved them ten minutes a shift.",
     "Clinicians would use it if it saved them ten minutes a shift."),
    ("My guess is that half the invoices are late because of missing PO numbers.",
     "Half the invoices are late because of missing PO numbers."),
    ("I'd bet the dispatchers ignore the suggestions, but I'm not sure.", "The dispatchers ignore the suggestions."),
    ("Apparently the council already publishes bin schedules as open data.",
     "The council already publishes bin schedules as open data."),
    ("Nobody has checked whether the ERP exports daily stock levels.", "The ERP exports daily stock levels."),
    ("I've been told the vendor integrates with SAP out of the box.", "The vendor integrates with SAP out of the box."),
    ("Teachers probably won't grade inside a new tool.", "Teachers won't grade inside a new tool."),
])
def test_hedges_become_claims_without_the_hedge(sentence, claim):
    assert is_hedged(sentence)
    assert claim_without_hedge(sentence) == claim
    u = understand(sentence, SessionState(), catalogue=CATALOGUE)
    assert [h.claim for h in u.hedges] == [claim]


@pytest.mark.parametrize("remark", [
    "I think we covered that already.", "I guess so.", "I think that's everything for now.",
    "Not sure what you mean by that.", "I think you're right.", "Maybe later.",
])
def test_remarks_about_the_conversation_are_not_assumptions(remark):
    u = understand(remark, SessionState(), catalogue=CATALOGUE)
    assert u.hedges == [] and u.facts == []


@pytest.mark.parametrize("message", [
    "What do you mean by anti-metric?", "Can you summarize the problem and audience so far?",
    "How would other teams handle this?", "Thanks, this is helpful!", "Sorry, I was in a meeting.",
])
def test_questions_and_chit_chat_capture_nothing(message):
    u = understand(message, SessionState(), catalogue=CATALOGUE)
    assert u.facts == [] and u.hedges == [] and u.corrections == []


def test_problem_and_audience():
    found = slots_of("Our planners rebuild the delivery schedule by hand every morning and it takes two hours. "
                     "It hits about 140 depot planners across 30 depots.")
    assert any("by hand" in s for s in found["problem"])
    assert any("140 depot planners" in s for s in found["audience"])


def people_of(message: str) -> dict[str, str]:
    """Each stakeholder the message names, with the part the words give them."""
    return {p.name: p.role for p in understand(message, SessionState(), catalogue=CATALOGUE).people}


@pytest.mark.parametrize("heading, label", [
    ("**Problem**", "problem"), ("Here's the problem.", "problem"), ("Why now.", "why_now"),
    ("Guardrails then:", "anti_metric"), ("**Who feels it**", "audience"), ("How we test it.", "validation"),
    ("The problem is that vans break down.", None), ("Numbers.", None), ("ok.", None),
])
def test_a_line_that_only_names_a_field_is_a_heading(heading, label):
    assert heading_label(heading) == label


def test_sentences_under_a_heading_lean_to_the_field_it_names():
    message = "Why now. OSHA cited us in March on the Riverside job. That one stung."
    found = slots_of(message)
    assert any("OSHA cited us" in s for s in found.get("why_now", []))
    assert not any("Why now" == s.strip(".") for values in found.values() for s in values)


def test_stakeholders_people_and_roles():
    found = people_of("Maria Lopez, VP Stores, signs off on anything here. Priya from finance is nervous about cost. "
                      "The union rep will push back on new tasks.")
    assert {"Maria Lopez", "Priya", "union rep"} <= set(found)
    assert found["Maria Lopez"] == "decision_authority"  # "signs off"
    assert found["Priya"] != "decision_authority"  # "is nervous" gives no authority
    assert person_names("Our CFO, Dan Brown, wants a 90-day payback.") == ["Dan Brown"]
    assert [name for name in people_of("dan (cfo) signs off on budget") if name.startswith("Dan")]


def test_metrics_leading_lagging_and_guardrail():
    found = texts_of("We want no-shows down from 12% to 8% by March. In the first few weeks I'd watch how many "
                     "patients confirm by text. I don't want GP waiting times to get worse.")
    assert any("12%" in s for s in found["metric_lagging"])
    assert any("confirm by text" in s for s in found["metric_leading"])
    assert any("waiting times" in s for s in found["metric_anti"])


@pytest.mark.parametrize("sentence, kind", [
    ("If churn doesn't drop below 3% by Q3 I'd pull the plug.", "do_not_proceed_if"),
    ("Anything under a 10% time saving isn't worth it.", "do_not_proceed_if"),
    ("If the pilot depots save an hour a day we roll it out everywhere.", "proceed_if"),
])
def test_decision_criteria_however_phrased(sentence, kind):
    assert kind in slots_of(sentence)


def test_correction_finds_the_superseded_number():
    state = SessionState()
    state.problem_brief.success_metrics.lagging = ["Churn is 4.8% a month and we want it under 3%."]
    u = understand("Actually it's 3.4%, not 4.8%.", state, catalogue=CATALOGUE)
    assert [(c.old, c.new) for c in u.corrections] == [("4.8%", "3.4%")]
    state.problem_brief.problem_statement = "The pilot budget is £180k and it is not enough."
    u = understand("Scratch that, the budget is £200k.", state, catalogue=CATALOGUE)
    assert [(c.old, c.new) for c in u.corrections] == [("£180k", "£200k")]


@pytest.mark.parametrize("sentence, old, new", [
    ("churn is 3.4%, i had it wrong before", "4.8%", "3.4%"),
    ("sorry, 3.4% churn, not 4.8", "4.8", "3.4%"),
    ("pls read 3.4% for churn, 4.8 was last year", "4.8%", "3.4%"),
    ("Small fix: churn is 3.4%.", "4.8%", "3.4%"),
    ("Let me fix that: rework costs us $1.6M a year.", "$2.1M", "$1.6M"),
    ("I double checked, the backlog is 900 tickets", "1,200", "900"),
    ("Erratum: handling time 12 min.", "14", "12"),
    ("Hmm no, churn is 3.4%.", "4.8%", "3.4%"),
    ("that 4.8 should be 3.4", "4.8", "3.4"),
    ("replace 14 minutes with 12 minutes", "14", "12"),
    # The old figure in one sentence and the new one in another.
    ("Sorry, one correction. The 4.8% I told you was wrong, it counted paused accounts. Actual churn is 3.4%.",
     "4.8%", "3.4%"),
    ("Wacht, I must correct. The 4.8% is not right, that was with trials. Only paying accounts, it is 3.4%.",
     "4.8%", "3.4%"),
    ("That 1,200 counted closed tickets twice; the real backlog is 900.", "1,200", "900"),
    # "which includes" describes the new figure; it does not take it back.
    ("Correction: the backlog is 900, which includes 150 escalations.", "1,200", "900"),
])
def test_a_figure_put_right_in_any_register(sentence, old, new):
    state = SessionState()
    state.problem_brief.problem_statement = ("Churn is 4.8% a month. We lose about $2.1M a year to rework. The backlog "
                                             "is 1,200 tickets. Average handling time is 14 minutes.")
    corrections = understand(sentence, state, catalogue=CATALOGUE).corrections
    assert [(c.old, c.new) for c in corrections][:1] == [(old, new)]


@pytest.mark.parametrize("sentence", [
    "The wrong trade gets sent on 22% of jobs.", "Customers are confused by the 3 screens.",
    "First-time fix rate is 61%.", "We want churn from 4.8% to 3% by Q3.", "Sorry, that was a lot.",
])
def test_a_new_figure_is_not_taken_for_a_correction(sentence):
    state = SessionState()
    state.problem_brief.problem_statement = "Churn is 4.8% a month. First-time fix rate is 55%."
    assert understand(sentence, state, catalogue=CATALOGUE).corrections == []


def test_a_figure_said_to_be_wrong_is_never_taken_for_the_new_one():
    state = SessionState()
    state.problem_brief.problem_statement = "Our carrier raised return charges by 18% from October."
    u = understand("The 31% return rate I told you was wrong, it counted pending parcels.", state, catalogue=CATALOGUE)
    assert u.corrections == []
    assert not any("31%" in f.text for f in u.facts)  # a figure taken back is recorded nowhere
    told = understand("One correction please. Average waiting time I told as 94 minutes, that was including weekends.",
                      state, catalogue=CATALOGUE)
    assert not any("94 minutes" in f.text for f in told.facts)


@pytest.mark.parametrize("sentence, old, new", [
    ("Forgive me; I have misspelled Rachel's surname, which is Ostrowska and not Ostrowski.", "Ostrowski",
     "Ostrowska"),
    ("The compliance manager's surname was given incorrectly. It is Ruth Okonjo, not Okafor.", "Okafor", "Okonjo"),
    ("Wait, I've given you the wrong surname there, it's Morag Cameron, not Campbell.", "Campbell", "Cameron"),
    ("I spelt Brendan's surname wrong before — it's Kowalczyk, not Kowalski.", "Kowalski", "Kowalczyk"),
])
def test_a_name_put_right_however_it_is_said(sentence, old, new):
    state = SessionState()
    state.problem_brief.stakeholders = [Stakeholder(name=f"Someone {old}", role="other")]
    assert [(c.old, c.new) for c in understand(sentence, state, catalogue=CATALOGUE).corrections] == [(old, new)]


def test_departure_and_successor():
    state = SessionState()
    state.problem_brief.stakeholders = [Stakeholder(name="Maria Lopez", role="decision_authority")]
    u = understand("She moved teams, Priya leads it now.", state, catalogue=CATALOGUE)
    assert [(d.name, d.replacement) for d in u.departures] == [("Maria Lopez", "Priya")]


def test_status_changes_in_ordinary_words():
    state = SessionState(assumptions=[Assumption(id="A1", claim="Store managers would trust a suggested order.")])
    u = understand("Turns out store managers don't trust a suggested order at all.", state, catalogue=CATALOGUE)
    assert [(c.assumption_id, c.status) for c in u.status_changes] == [("A1", "invalidated")]
    u = understand("We checked: store managers trust a suggested order when it shows the reasoning.", state,
                   catalogue=CATALOGUE)
    assert [(c.assumption_id, c.status) for c in u.status_changes] == [("A1", "confirmed")]


@pytest.mark.parametrize("message, intent, extra", [
    ("Can you summarize where we are?", "summarize", ""),
    ("where do we stand", "summarize", ""),
    ("Please write up the problem brief and send it to Maria.", "artifact", "problem_brief"),
    ("can I get the assumption register as a file", "artifact", "assumption_register"),
    ("let's look hard at the vendor's tool", "evaluate", "vendor's tool"),
    ("can we stress-test the Acme idea?", "evaluate", "Acme"),
    ("ok so should we actually build the auto-scheduler? poke holes in it", "evaluate", "auto-scheduler"),
    ("What does the research say about weekend staffing?", "question_files", ""),
    ("let's wrap up this mode", "wrap_up", ""),
    # However the request is worded, and wherever the option was named in the message.
    ("Declan wants us to buy Clausewise, an AI clause-review tool, and I would be grateful if you would "
     "stress-test it with me properly.", "evaluate", "Clausewise"),
    ("Maarten has a proposal for this, it is called Startklaar. Can you evaluate it for me?", "evaluate",
     "Startklaar"),
    ("Leo is sold on the Vanguard Pass, our battle-pass concept, and I want you to stress-test it hard.",
     "evaluate", "Vanguard Pass"),
    ("ok switching gears. I want you to stress-test one option specifically: the QuickLight self-install kit",
     "evaluate", "QuickLight self-install kit"),
    # Descriptions of someone else's evaluation, and nouns, are not requests.
    ("Procurement evaluated three vendors last year.", "statement", ""),
    ("I think finance wants to assess the Acme tool first.", "statement", ""),
    ("We evaluate our vendors every year.", "statement", ""),
    ("The assessment team is building a rubric engine.", "statement", ""),
])
def test_intents(message, intent, extra):
    u = understand(message, SessionState(), catalogue=CATALOGUE)
    assert u.intent == intent
    if intent == "artifact":
        assert u.artifact_kind == extra
    if intent == "evaluate":
        assert u.solution_name == extra


def test_generate_brief_in_mode_2_means_the_evaluation_unless_named():
    state = SessionState(active_mode="mode_2")
    assert understand("write up the brief", state, catalogue=CATALOGUE).artifact_kind == "solution_evaluation"
    assert understand("generate the problem brief", state, catalogue=CATALOGUE).artifact_kind == "problem_brief"


def test_probes_answered_by_content():
    u = understand("The CEO asked for this after a competitor launched AI ordering last quarter.", SessionState(),
                   catalogue=CATALOGUE)
    assert [p.probe for p in u.probes] == ["why_now"]
    u = understand("Store managers would have to change their morning routine and nobody owns the rollout.",
                   SessionState(), catalogue=CATALOGUE)
    assert "execution_reality_check" in [p.probe for p in u.probes]
    assert understand("Sounds good, what else do you need?", SessionState(), catalogue=CATALOGUE).probes == []


def test_mode_2_risks_build_and_validation():
    found = slots_of("The handheld screens are tiny and staff wear gloves. Legal needs to sign off on the data "
                     "sharing. We'd run a four-week pilot in six stores. I'd lean towards buying, since two vendors "
                     "already ship this.", mode="mode_2")
    assert "usability_risk" in found and "viability_risk" in found
    assert "validation" in found and "build_vs_buy" in found
    u = understand("I'd lean towards buying, since two vendors already ship this.", SessionState(), "mode_2",
                   catalogue=CATALOGUE)
    assert u.slot("build_vs_buy")[0].detail == "buy"


@pytest.mark.parametrize("message, searches", [
    ("What does DSD mean here?", True),                       # a term of the PM's files, not of the method
    ("Summarise what the vendor said about pricing.", True),  # a synthesis of something the files hold
    ("What's the status of the handheld rollout?", True),
    ("Can you explain what the pilot success criteria are?", True),
    ("Where are we?", False),                                 # about the session itself
    ("Can you recap where we've got to?", False),
    ("Write up the brief", False),
    ("What does anti-metric mean?", False),                   # about the method
    ("What's a leading indicator?", False),
    ("ok, continue", False),
])
def test_a_message_searches_when_it_names_something_beyond_the_session(message, searches):
    manifest = Manifest(file_summaries=[ManifestEntry(filename="notes.md", file_id="f1")])
    decision = rule_route(RouteInputs(SessionState(), manifest, message, 1, builtin_catalogue()),
                          Settings(_env_file=None))
    assert decision.requires_retrieval is searches


def test_what_a_term_of_the_files_means_is_a_question_for_the_files():
    assert understand("What does DSD mean here?", SessionState(), catalogue=builtin_catalogue()).intent == "question_files"
    assert understand("What does anti-metric mean?", SessionState(),
                      catalogue=builtin_catalogue()).intent == "question_method"
