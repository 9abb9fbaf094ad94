"""The real Streamlit app, driven headless through AppTest, offline."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.testing.v1 import AppTest

import pmforge
from conftest import as_shown
from docs import research_docx
from pmforge.interviewer.questions import questions_in

APP = str(Path(pmforge.__file__).parent / "surfaces" / "app.py")
DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _sidebar_text(at: AppTest) -> str:
    return " ".join(e.value for e in at.sidebar.markdown) + " " + " ".join(e.value for e in at.sidebar.caption)


def _create_project(at: AppTest, name: str) -> None:
    at.sidebar.text_input[0].set_value(name)
    at.sidebar.button[0].click().run()  # the form's submit button
    assert not at.exception, at.exception


def test_offline_start_chat_upload_delete(app: AppTest):
    assert not app.exception
    assert "Running offline" in _sidebar_text(app)
    _create_project(app, "Fresh Shrink Pilot")
    assert app.sidebar.selectbox[0].value == "fresh-shrink-pilot"

    app.chat_input[0].set_value("We want to cut fresh shrink in our stores by a third.").run()
    assert not app.exception and not app.error
    messages = app.chat_message
    assert [m.name for m in messages] == ["user", "assistant"]
    assert app.pills[0].options[0] == "Question 1"  # the latest reply's questions can be picked
    assert "Question 1:" in messages[1].markdown[0].value  # and stay in the reply's text: nothing re-flows

    uploader = app.sidebar.get("file_uploader")[0]
    uploader.upload("research-q3.docx", research_docx("The Kestrel app reaches 12 percent."), DOCX_MIME).run()
    assert not app.exception and not app.error
    assert "research-q3.docx" in _sidebar_text(app)

    # Reruns never ingest the same upload twice.
    app.run()
    app.run()
    manifest_files = [b for b in app.sidebar.button if b.help and b.help.startswith("Delete")]
    assert [b.help for b in manifest_files] == ["Delete research-q3.docx"]

    manifest_files[0].click().run()
    assert "Delete research-q3.docx?" in app.sidebar.warning[0].value  # nothing is deleted without a yes
    [b for b in app.sidebar.button if b.label == "Cancel"][0].click().run()
    assert "research-q3.docx" in _sidebar_text(app) and not app.sidebar.warning
    [b for b in app.sidebar.button if b.help == "Delete research-q3.docx"][0].click().run()
    [b for b in app.sidebar.button if b.label == "Yes, delete"][0].click().run()
    assert not app.exception
    assert [s.value for s in app.sidebar.success] == ["Deleted research-q3.docx."]
    assert "research-q3.docx" not in _sidebar_text(app)
    assert not [b for b in app.sidebar.button if b.help and b.help.startswith("Delete")]


def test_history_restored_when_project_reopened(app: AppTest):
    _create_project(app, "Alpha")
    app.chat_input[0].set_value("Our VP wants fewer stockouts in produce.").run()
    _create_project(app, "Beta")
    assert app.sidebar.selectbox[0].value == "beta"
    assert len(app.chat_message) == 0

    app.sidebar.selectbox[0].set_value("alpha").run()
    assert [m.name for m in app.chat_message] == ["user", "assistant"]
    assert "fewer stockouts" in app.chat_message[0].markdown[0].value

    # A brand-new session (a browser reload) restores the same history from disk.
    st.cache_resource.clear()
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.run()
    fresh.sidebar.selectbox[0].set_value("alpha").run()
    assert "fewer stockouts" in fresh.chat_message[0].markdown[0].value


def test_bad_upload_shows_one_sentence_and_keeps_running(app: AppTest, isolated_env):
    _create_project(app, "Gamma")
    uploader = app.sidebar.get("file_uploader")[0]
    uploader.upload("broken.docx", b"this is plain text, not a Word file", DOCX_MIME).run()
    assert not app.exception
    errors = [e.value for e in app.sidebar.error]
    assert errors and "not a valid Word document" in errors[0]
    assert (isolated_env / "projects" / "gamma" / "uploads" / "broken.docx").exists()
    app.chat_input[0].set_value("Still here?").run()
    assert not app.exception and len(app.chat_message) == 2


PLAN = b"""# Pilot plan

## Scope
The pilot covers 20 stores in the Midwest region for eight weeks.

## Metrics
Success means fresh shrink falls below 4.5 percent with no rise in out-of-stocks.
"""


def test_a_citation_opens_the_exact_passage(app: AppTest):
    _create_project(app, "Delta")
    app.sidebar.get("file_uploader")[0].upload("plan.md", PLAN, "text/markdown").run()
    app.chat_input[0].set_value("How many stores are in the pilot?").run()
    assert not app.exception
    reply = [m for m in app.chat_message if m.name == "assistant"][0]
    assert "Sources" in [c.value for c in reply.caption]  # a compact list under the reply
    labels = [p.proto.popover.label for p in _source_popovers(reply)]  # file › section, one line, no brackets
    assert len(labels) == 1 and labels[0].startswith("plan.md › Pilot plan") and "[" not in labels[0]
    assert not [e for e in reply.expander if e.label == "What Forge looked at"]  # no telemetry by default
    passages = [m.value for p in _source_popovers(app) for m in p.markdown]
    assert passages == [PLAN.decode().strip()]  # the section's exact characters from converted/plan.md.md

    [b for b in app.sidebar.button if b.help == "Delete plan.md"][0].click().run()
    [b for b in app.sidebar.button if b.label == "Yes, delete"][0].click().run()
    notes = [c.value for p in _source_popovers(app) for c in p.caption]
    assert notes == ["That version of the file has since been replaced or deleted."]


def _source_popovers(node):
    """The sources list's entries (each names 'file › section'), not the reply's Copy or Edit menus."""
    return [p for p in node.get("popover") if " › " in p.proto.popover.label]


def test_generate_and_download_the_brief(app: AppTest, isolated_env):
    _create_project(app, "Epsilon")
    app.chat_input[0].set_value("The problem is that bakery shrink is 9 percent in enterprise stores.").run()
    [b for b in app.sidebar.button if b.label == "Generate problem brief"][0].click().run()
    assert not app.exception
    notes = [as_shown(s.value) for s in app.sidebar.success]
    assert notes and notes[0].startswith("Problem brief written. Still to be confirmed:") and "Stakeholders" in notes[0]
    labels = [d.label for d in app.sidebar.get("download_button")]
    assert "Problem brief (.md)" in labels and "Problem brief (.docx)" in labels
    written = list((isolated_env / "projects" / "epsilon" / "artifacts").glob("problem-brief-*.docx"))
    assert len(written) == 1


def test_sidebar_shows_mode_register_skeleton_and_the_session_meter(app: AppTest):
    _create_project(app, "Zeta")
    app.chat_input[0].set_value("The problem is bakery shrink. I think leads will adopt a daily markdown list.").run()
    app.chat_input[0].set_value("Dana Whitfield signs off on the budget. I assume finance will fund handhelds.").run()
    assert not app.exception
    sidebar = _sidebar_text(app)
    assert "Mode 1 · Discover & Frame" in sidebar and "2 answers" in sidebar
    assert "Next up: " in sidebar and " of 7 areas covered" in sidebar and "probe" not in sidebar.lower()
    assert "active 2" in sidebar  # two hedged statements registered
    assert "Still missing: Target audience" in sidebar  # the brief says what it lacks
    expanders = [e.label for e in app.sidebar.expander]
    assert "All 2 assumptions" in expanders
    # Offline nothing is billed: the meter waits behind Developer details.
    assert not [e for e in app.expander if e.label.startswith("Session meter")]
    app.sidebar.toggle[0].set_value(True).run()
    meter = [e for e in app.expander if e.label.startswith("Session meter")]
    assert meter and "2 turns" in meter[0].label
    assert "Offline: no tokens are billed" in " ".join(c.value for c in meter[0].caption)


def test_picked_questions_survive_repeated_labels_and_reach_the_next_turn(app: AppTest, isolated_env):
    from pmforge.core.models import SessionState, Turn
    from pmforge.core.workspace import Workspace

    _create_project(app, "Eta")
    ws = Workspace(isolated_env / "projects" / "eta")
    state = ws.load_state()
    repeated = "Noted.\n\nQuestion 1: Who owns shrink?\n\nQuestion 1: Who owns shrink?\n\nQuestion 2: Since when?"
    state.turns.append(Turn(number=1, user="We want less shrink.", assistant=repeated))
    ws.save_state(SessionState.model_validate(state.model_dump() | {"turns": state.turns}))  # dumps omit turns
    app.run()
    assert not app.exception
    picker = app.pills[0]
    assert picker.options == ["Question 1", "Question 2", "Question 3"]  # numbered by position
    picker.set_value(["Question 3"]).run()
    app.chat_input[0].set_value("Since the Q2 review.").run()
    assert ws.load_state().turns[-1].user.startswith("Answering Question 3: Since when?")


def test_long_histories_render_recent_turns_first(app: AppTest, isolated_env):
    from pmforge.core.models import Turn
    from pmforge.core.workspace import Workspace

    _create_project(app, "Theta")
    ws = Workspace(isolated_env / "projects" / "theta")
    state = ws.load_state()
    state.turns = [Turn(number=n, user=f"Message {n}", assistant=f"Reply {n}") for n in range(1, 46)]
    ws.save_state(state)
    app.run()
    page = len(app.chat_message) // 2  # turns shown at first: a page, not the whole history
    assert 0 < page < 45 and len(app.chat_message) == 2 * page
    earlier = [b for b in app.button if b.label.startswith("Show ") and "earlier turns" in b.label]
    assert [b.label for b in earlier] == [f"Show {min(page, 45 - page)} earlier turns ({45 - page} not shown)"]
    earlier[0].click().run()
    assert len(app.chat_message) == 2 * min(45, 2 * page)  # one more page


def test_full_journey_survives_switching_projects(app: AppTest):
    _create_project(app, "Iota")
    uploader = app.sidebar.get("file_uploader")[0]
    uploader.upload("research-q3.docx", research_docx("The Kestrel app reaches 12 percent."), DOCX_MIME).run()
    app.sidebar.get("file_uploader")[0].upload("plan.md", PLAN, "text/markdown").run()
    files = sorted(b.help for b in app.sidebar.button if b.help and b.help.startswith("Delete"))
    assert files == ["Delete plan.md", "Delete research-q3.docx"]
    for message in ("For context, we are a 62-store grocer and the VP of stores owns shrink.",
                    "I think bakery leads will adopt a daily markdown list.",
                    "How many stores are in the pilot?"):
        app.chat_input[0].set_value(message).run()
        assert not app.exception and not app.error

    def snapshot():
        org = [m.value for e in app.sidebar.expander if e.label == "Organisation context" for m in e.markdown]
        return ([m.markdown[0].value for m in app.chat_message if m.name == "user"], org,
                [e.label for e in app.sidebar.expander if e.label.startswith("All ")],
                sorted(b.help for b in app.sidebar.button if b.help and b.help.startswith("Delete")))

    before = snapshot()
    assert not app.get("json")  # nothing dumps raw state onto the page
    assert before[1] == ["For context, we are a 62-store grocer and the VP of stores owns shrink."]
    assert before[2] == ["All 1 assumption"]
    _create_project(app, "Kappa")
    assert snapshot() != before
    app.sidebar.selectbox[0].set_value("iota").run()
    assert snapshot() == before


def test_developer_details_are_hidden_until_the_toggle_is_on_and_stay_on(app: AppTest):
    _create_project(app, "Lambda")
    app.chat_input[0].set_value("We want to cut fresh shrink in our stores by a third.").run()
    toggle = app.sidebar.toggle[0]
    assert toggle.label == "Developer details" and toggle.value is False
    assert not [e for e in app.expander if e.label == "What Forge looked at"]

    toggle.set_value(True).run()
    looked = [e for e in app.expander if e.label == "What Forge looked at"]
    assert len(looked) == 1
    telemetry = " ".join(m.value for m in looked[0].markdown) + " ".join(c.value for c in looked[0].caption)
    assert "**Routing**" in telemetry and "Prompt tokens" in telemetry
    app.chat_input[0].set_value("Dana owns the budget.").run()  # the choice holds across turns
    assert app.sidebar.toggle[0].value is True
    assert len([e for e in app.expander if e.label == "What Forge looked at"]) == 2


def test_icon_buttons_have_a_worded_label_and_a_tooltip(app: AppTest):
    _create_project(app, "Mu")
    app.sidebar.get("file_uploader")[0].upload("plan.md", PLAN, "text/markdown").run()
    app.chat_input[0].set_value("How many stores are in the pilot?").run()
    buttons = list(app.button) + list(app.sidebar.button)
    assert all(b.label.strip() for b in buttons)  # no button is a bare icon
    assert [b.label for b in app.sidebar.button if b.help == "Delete plan.md"] == ["Delete"]
    assert all(b.help for b in buttons if b.proto.icon)
    assert all(p.proto.popover.label.strip() for p in app.get("popover"))


def test_the_meter_chart_counts_turns_from_one():
    from pmforge.core.models import TokenReport, Turn
    from pmforge.surfaces.ui.panels import meter_chart_data

    turns = [Turn(number=n, user="u", assistant="a", tokens=TokenReport(phase_a=10 * n, phase_b=n))
             for n in (1, 2, 3)]
    assert meter_chart_data(turns) == {"turn": [1, 2, 3], "Phase A": [10, 20, 30], "Phase B": [1, 2, 3]}
    assert meter_chart_data([]) == {"turn": [], "Phase A": [], "Phase B": []}


def test_retry_and_edit_the_last_message(app: AppTest, isolated_env):
    from pmforge.core.workspace import Workspace

    _create_project(app, "Kappa")
    ws = Workspace(isolated_env / "projects" / "kappa")
    app.chat_input[0].set_value("We want to cut bakery shrink in our stores by a third.").run()
    first = ws.load_state().turns[-1]
    [b for b in app.button if b.label == "Retry"][0].click().run()
    assert not app.exception and not app.error
    turns = ws.load_state().turns
    assert len(turns) == 1 and turns[0].id != first.id and turns[0].user == first.user  # asked again
    # Offline, asking again is not the same reply word for word: the next-best questions.
    assert questions_in(turns[0].assistant) and not set(questions_in(turns[0].assistant)) & set(
        questions_in(first.assistant))
    assert len(app.chat_message) == 2  # the old reply is gone from the page too

    app.text_area(key=f"edit-text-{turns[0].id}").set_value("We want to cut produce shrink instead.")
    [b for b in app.button if b.label == "Send edited message"][0].click().run()
    assert not app.exception and not app.error
    assert [t.user for t in ws.load_state().turns] == ["We want to cut produce shrink instead."]
    assert app.chat_message[0].markdown[0].value == "We want to cut produce shrink instead."


def test_copy_is_one_click_with_the_reply_as_plain_text_and_markdown(app: AppTest, isolated_env):
    import json

    from pmforge.core.workspace import Workspace
    from pmforge.outputs.plain import plain_text

    _create_project(app, "Lambda")
    app.chat_input[0].set_value("We want to cut bakery shrink.").run()
    saved = Workspace(isolated_env / "projects" / "lambda").load_state().turns[-1].assistant
    frames = [f for f in app.get("iframe") if "Copy this reply as plain text" in f.proto.srcdoc]
    assert len(frames) == 1  # the latest reply's only
    frame = frames[0].proto.srcdoc
    assert "**" in saved and "**" not in plain_text(saved)
    assert json.dumps(plain_text(saved), ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e") in frame
    assert json.dumps(saved, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e") in frame
    assert not app.code  # no three-step popover any more