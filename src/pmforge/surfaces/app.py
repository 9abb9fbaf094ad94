"""Forge's Streamlit app. Start it with `forge ui`.

This file only lays out widgets and calls the same functions as the CLI
(`Project`, `ingest_file`, `delete_file`, `reindex`, `start_turn`).
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Callable, Iterable

import streamlit as st

from pmforge.core.demo import example_of, restore_example
from pmforge.core.errors import ForgeError
from pmforge.core.models import SourceRef, Turn
from pmforge.core.words import counted
from pmforge.core.workspace import (
    UnresolvedConflict,
    Workspace,
    display_names,
    list_projects,
    picker_labels,
    take_notices,
)
from pmforge.ingest.pipeline import delete_file
from pmforge.outputs import artifacts, export
from pmforge.project.project import Project, confirms_deletion, delete_project, deletion_warning
from pmforge.project.undo import read_undo_point
from pmforge.prompt import render
from pmforge.surfaces.ui import citations, copy, panels, resources, view, welcome
from pmforge.surfaces.ui.jobs import DONE, FAILED, STOPPED, AnyJob, ProjectJobs, TurnJob, UploadJob
from pmforge.surfaces.ui.state import EAGER_TURNS, WidgetKeys, app_state, forget_widgets
from pmforge.upkeep.reindex import reindex

# An About entry makes Streamlit show its menu, and with it the Light / Dark / System theme choice.
st.set_page_config(page_title="Forge", page_icon="🔨", layout="wide", menu_items={
    "About": "**Forge** — a discovery copilot for product managers. It interviews you about a product question, "
             "grounded in your files, and keeps the problem brief and assumption register as you talk.",
})
ss = st.session_state  # the widgets' values, under their keys (WidgetKeys)
ui = app_state()  # everything else this window keeps between runs


DOCX_MIME = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"



# ---------------------------------------------------------------- sidebar: providers and projects

def provider_status(services) -> None:
    info = services.describe()
    if services.llm.online:
        st.caption(f":material/cloud_done: **Online** — {info['llm']}; embeddings {info['embeddings']}; "
                   f"{info['vector_store']}.")
    else:
        st.caption(
            ":material/cloud_off: **Running offline** — a built-in interviewer asks the questions and a local "
            "model searches your files; nothing leaves this machine. For Claude, put ANTHROPIC_API_KEY "
            "(and VOYAGE_API_KEY for Voyage embeddings) in a `.env` file and restart."
        )


# The project menus' open/closed state: each closes itself once its action is done.
NEW_MENU, RENAME_MENU, DELETE_MENU = WidgetKeys.NEW_MENU, WidgetKeys.RENAME_MENU, WidgetKeys.DELETE_MENU


def _create_project(services) -> None:
    # Runs as a callback, before the project selectbox is drawn, so it may select the new project.
    try:
        created = Project.create(services, ss.get(WidgetKeys.NEW_PROJECT_NAME, ""))
    except ForgeError as exc:
        ui.create_error = str(exc)
    else:
        ui.project = created.ws.slug
        ui.create_error = ""
        ss[NEW_MENU] = False  # the form folds away once used, so the sidebar stays short


def _rename_project(services, slug: str) -> None:
    try:
        name = Workspace.open(services.projects_root, slug).rename(ss.get(WidgetKeys.rename(slug), ""))
    except ForgeError as exc:
        ui.rename_error = str(exc)
    else:
        ui.rename_error = ""
        ss[RENAME_MENU] = False
        ui.restore_view = True
        ui.project_toast = f"Renamed to '{name}'; its folder stays '{slug}'."


def _delete_project(services, slug: str) -> None:
    try:
        ws = Workspace.open(services.projects_root, slug)
        if not confirms_deletion(ss.get(WidgetKeys.delete(slug), ""), ws):
            raise ForgeError(f"Nothing was deleted: type '{ws.read_display_name()}' to delete this project.")
        try:
            message = delete_project(services, slug)
        finally:
            resources.forget_project(slug)  # its store's client may be closed already: never reuse it
    except ForgeError as exc:
        ui.delete_error = str(exc)
        return
    ui.index_checked.discard(slug)
    ui.delete_error = ""
    ss[DELETE_MENU] = False
    ui.project = next(iter(list_projects(services.projects_root)), None)  # the most recent other one
    ui.project_toast = message


def _pick_project(key: str) -> None:
    ui.project = ss[key]


def project_picker(services) -> str | None:
    names = display_names(services.projects_root)  # slug → display name, most recent first
    projects = list(names)
    if ui.project not in projects:
        ui.project = projects[0] if projects else None
    toast, ui.project_toast = ui.project_toast, ""
    if toast:
        st.toast(citations.literal(toast), icon=":material/check_circle:")
    if projects:
        labels = picker_labels(names)
        # The widget's key follows the names shown: a browser keeps a widget's old labels otherwise (a rename
        # would not show in the picker until the page is reloaded). `ui.project` stays the choice itself.
        key = "project-picker-" + hashlib.sha1(repr(sorted(labels.items())).encode()).hexdigest()[:10]
        st.selectbox("Project", projects, index=projects.index(ui.project) if ui.project else 0, key=key,
                     format_func=lambda slug: labels.get(slug, slug), on_change=_pick_project, args=(key,))
    # One row of small menus, closed until used; with no project yet, the create form shows as it is.
    with st.container(horizontal=True, gap="small"):
        with (st.popover("New", type="tertiary", key=NEW_MENU, on_change="rerun") if projects
              else st.container()):
            with st.form("new_project", clear_on_submit=True):
                st.text_input("Project name", placeholder="e.g. Fresh shrink pilot", key=WidgetKeys.NEW_PROJECT_NAME)
                st.form_submit_button("Create project", on_click=_create_project, args=(services,))
            if ui.create_error:
                st.error(citations.literal(ui.create_error))
        if ui.project:
            rename_menu(services, ui.project, names[ui.project])
            delete_menu(services, ui.project, names[ui.project])
    return ui.project


def rename_menu(services, slug: str, name: str) -> None:
    with st.popover("Rename", type="tertiary", key=RENAME_MENU, on_change="rerun"):
        view.remember()  # the chat's place as the menu opens: the rename's redraw must not move it
        with st.form("rename_project", clear_on_submit=True):
            st.text_input("Display name", value=name, key=WidgetKeys.rename(slug),
                          help=f"The folder, and the name commands take, stay '{slug}'.")
            st.form_submit_button("Rename", on_click=_rename_project, args=(services, slug))
        if ui.rename_error:
            st.error(citations.literal(ui.rename_error))


def delete_menu(services, slug: str, name: str) -> None:
    with st.popover("Delete…", type="tertiary", key=DELETE_MENU, on_change="rerun"):
        st.info(deletion_warning(Workspace.open(services.projects_root, slug), services.settings),
                icon=":material/warning:")
        with st.form("delete_project", clear_on_submit=True):
            st.text_input(f"Type '{name}' to confirm", key=WidgetKeys.delete(slug))
            st.form_submit_button("Delete project", type="primary", on_click=_delete_project,
                                  args=(services, slug))
        if ui.delete_error:
            st.error(citations.literal(ui.delete_error))


def notify(ok: bool, text: str) -> None:
    """Queue a message for the next run (a rerun would swallow anything shown now)."""
    ui.notices.append((ok, text))


def show_notices() -> None:
    for ok, text in ui.take_notices():
        (st.success if ok else st.error)(citations.literal(text))


def files_panel(project: Project) -> None:
    st.subheader("Project Files")
    show_notices()
    manifest = project.manifest()
    preparing = jobs_of(project).preparing()
    for waiting in preparing:  # listed here too, with the main area's progress: the sidebar never says "No files"
        st.text(f"⏳ {waiting.name} — {file_progress(waiting)[1].split(': ', 1)[1]}…")  # st.text: a name is never Markdown
    if not manifest.file_summaries and not preparing:
        st.caption("No files yet. Upload the DOCX or Markdown behind your product question.")
    for f in manifest.file_summaries:
        with st.container(border=True):
            icon = ":material/check_circle:" if f.indexed else ":material/warning:"
            cols = st.columns([2, 1], vertical_alignment="center")
            name = citations.literal(f.filename)  # 'poi__x.docx' is a name, not emphasis
            cols[0].markdown(f"{icon} **{name}**")
            # A worded label rather than a bare icon: screen readers and browser tests can name the button.
            if cols[1].button("Delete", type="tertiary", key=f"delete-{f.file_id}", help=f"Delete {name}"):
                ui.confirm_delete = f.filename
                st.rerun()
            if ui.confirm_delete == f.filename:
                st.warning(f"Delete {name}? Its passages leave the search; earlier replies keep their text.")
                yes, no = st.columns(2)
                if yes.button("Yes, delete", key=f"confirm-{f.file_id}", type="primary"):
                    ui.confirm_delete = None
                    try:
                        notify(True, delete_file(project, f.filename))
                    except ForgeError as exc:
                        notify(False, str(exc))
                    st.rerun()
                if no.button("Cancel", key=f"cancel-{f.file_id}"):
                    ui.confirm_delete = None
                    st.rerun()
            detail = f"{f.uploaded_at[:16].replace('T', ' ')} · {counted(f.chunk_count, 'passage')}"
            st.caption(detail if f.indexed else f"{detail} · {citations.literal(f.status)}")
            if f.summary:
                summary = f.summary[:180] + ("…" if len(f.summary) > 180 else "")
                st.caption(citations.literal_block(summary), unsafe_allow_html=True)  # its tables as tables

    uploads = st.file_uploader(
        "Upload DOCX or Markdown", type=["docx", "md", "markdown"], accept_multiple_files=True,
        key=f"uploader-{project.ws.slug}-{ui.uploader_round}",
    )
    fresh = []
    for upload in uploads or []:
        data = upload.getvalue()
        # A rerun hands the same upload back: process each (name, content) exactly once.
        token = (project.ws.slug, ui.uploader_round, upload.name, hashlib.sha256(data).hexdigest())
        if token not in ui.ingested:
            ui.ingested.add(token)
            fresh.append((upload.name, data))
    if fresh:
        # Prepared in the background, with progress in the main area: the chat stays usable meanwhile.
        jobs_of(project).upload(fresh)
        ui.uploader_round += 1  # a fresh uploader next run: deleting a file later cannot re-ingest it


DOWNLOADS = {
    "problem_brief": ("Problem brief", {"md": "text/markdown", "docx": DOCX_MIME}),
    "solution_evaluation": ("Solution evaluation", {"md": "text/markdown", "docx": DOCX_MIME}),
    "assumption_register": ("Assumption register", {"json": "application/json", "csv": "text/csv"}),
}


def downloads_panel(project: Project, state, manifest) -> None:
    st.subheader("Downloads")
    kinds: list[artifacts.ArtifactKind] = ["problem_brief", "assumption_register"]
    kinds += ["solution_evaluation"] if state.active_mode == "mode_2" else []
    for kind in kinds:
        title, formats = DOWNLOADS[kind]
        if st.button(f"Generate {title.lower()}", key=f"generate-{kind}", use_container_width=True):
            with project.ws.locked():
                result = artifacts.generate(project.ws, state, manifest, kind, project.catalogue())
            missing = f" Still to be confirmed: {', '.join(result.missing)}." if result.missing else ""
            notify(True, f"{title} written.{missing}")
            st.rerun()
        files = artifacts.latest(project.ws, kind)
        for ext, mime in formats.items():
            if ext in files:
                st.download_button(f"{title} (.{ext})", files[ext].read_bytes(), file_name=files[ext].name,
                                   mime=mime, key=f"download-{kind}-{ext}")


# ---------------------------------------------------------------- main area

def developer_toggle() -> None:
    ui.developer_details = st.toggle(
        "Developer details", value=ui.developer_details, key=WidgetKeys.DEVELOPER_TOGGLE,
        help="Show under each reply how Forge routed it and what its prompts weighed, and the session meter offline.",
    )


def source_label(citation: str) -> str:
    """A source as one plain line: 'plan.md › Scope', without the citation's brackets, never read as Markdown."""
    return citations.literal(citations.label(citation))


def sources_list(turn: Turn, passage_of) -> None:
    """Under a reply: the sections it cites, side by side, each opening its exact passage; the other sections
    Forge read for it folded into one menu."""
    if not turn.sources:
        return
    cited = [s for s in turn.sources if s.citation in turn.assistant]
    read = [s for s in turn.sources if s not in cited]
    st.caption("Sources")
    with st.container(horizontal=True, gap="small"):  # a short wrapping row, not a column of lines
        for source in cited:
            with st.popover(source_label(source.citation), type="tertiary", icon=":material/description:",
                            help="Open the passage"):
                source_passage(source, passage_of)
        if read:
            with st.popover(f"{counted(len(read), 'more passage')} read", type="tertiary",
                            icon=":material/library_books:", help="What else Forge read for this reply"):
                for source in read:
                    with st.expander(source_label(source.citation)):
                        source_passage(source, passage_of)


def source_passage(source, passage_of) -> None:
    passage = passage_of(source)
    if passage is None:
        st.caption("That version of the file has since been replaced or deleted.")
    else:
        st.caption(f"{citations.literal(source.filename)}, characters {source.start:,}–{source.end:,}")
        # A document's text: shown, never run (no HTML, no images fetched); its tables as tables.
        st.markdown(citations.passage_markdown(passage), unsafe_allow_html=True)


def looked_at(turn: Turn) -> None:
    """Developer telemetry for one reply: routing, sections, earlier turns and prompt tokens."""
    with st.expander("What Forge looked at"):
        d = turn.routing
        if d:
            st.markdown(
                f"**Routing** — action `{d.action}`, mode {d.mode[-1]}, probe `{d.next_probe or '—'}`, "
                f"patterns `{', '.join(d.patterns) or '—'}`, retrieval `{'yes' if d.requires_retrieval else 'skipped'}`"
            )
            if d.reasoning:
                st.caption(citations.literal(d.reasoning))
        # The passages themselves open from the sources list above.
        st.markdown("**Document sections:** " + (citations.literal(", ".join(s.citation for s in turn.sources)) or "none"))
        st.markdown("**Earlier turns:** " + (", ".join(map(str, turn.retrieved.conversations)) or "none"))
        t = turn.tokens
        st.caption(
            f"Prompt tokens — phase A {t.phase_a}, phase B {t.phase_b}: "
            + ", ".join(f"{k} {v}" for k, v in t.sections.items() if v)
        )


def ensure_indexed(project: Project) -> None:
    """Once per session, before chatting: add what this clone's files and transcript need (a fresh clone's
    vectors, turns not yet remembered, a keyword cache behind the store), with progress. Nothing is
    dropped; vectors of another embedder on a shared server stop here with one sentence (ForgeError)."""
    checked = ui.index_checked
    if project.ws.slug in checked:
        return
    upkeep = project.upkeep()
    if upkeep.reason:  # the app's own plain words; `forge reindex` keeps its detailed ones
        with st.status(welcome.preparing_label(upkeep, project.manifest()), expanded=True) as status:
            reindex(project, progress_bar(st.progress(0.0)))
            status.update(label=welcome.ready_label(project.manifest(), len(upkeep.unremembered)),
                          state="complete", expanded=False)
    checked.add(project.ws.slug)


def progress_bar(bar):
    """A `reindex` progress callback that moves `bar`, with each stage in plain words."""
    return lambda stage, done, total: bar.progress(min(done / total, 1.0) if total else 1.0,
                                                   text=welcome.plain_stage(stage))


# ---------------------------------------------------------------- first run: welcome, starter prompts, the demo

def _pick_starter(prompt: str) -> None:
    ui.starter = prompt


def _ask_reset() -> None:
    ui.demo_reset_asked = True


def reset_demo(project: Project) -> None:
    """Put the shipped example back into the PM's copy and rebuild its search, then start the page over."""
    with st.status("Restoring the demo…", expanded=True) as status:
        with project.ws.locked():
            restore_example(project.ws.root)
        reindex(project, progress_bar(st.progress(0.0)), force=True)  # the played turns' vectors go too
        status.update(label="The demo is back as shipped.", state="complete", expanded=False)
    forget_widgets(WidgetKeys.PICKS)  # ticks on questions of turns that are gone
    ui.history_shown = EAGER_TURNS
    ui.kept_message = ""
    ui.demo_restored = True
    st.rerun()


def first_run(project: Project, state) -> None:
    """Above the conversation: the demo says what it is (and can be reset); a project with no turns yet
    says what Forge is for, what to do first, and offers starter prompts."""
    restored, ui.demo_restored = ui.demo_restored, False
    if restored:
        st.success("The demo is back as shipped: the example conversation, brief and assumption register.")
    if example_of(project.ws.root) is not None:
        welcome.example_banner(_ask_reset)
        if project.ws.slug not in ui.examples_opened:  # first time in this window: at the top
            welcome.open_at_top()
            # Noted only once a run has drawn the whole page: a run cut short by the next one never sent it.
            ui.example_shown = project.ws.slug
    if state.turns or ui.starter:
        return
    if example_of(project.ws.root) is None:
        welcome.intro()
    if not project.manifest().file_summaries:
        welcome.upload_hint()
    welcome.starter_prompts(_pick_starter)


_QUESTION = re.compile(r"^\s*\**Question (\d+)\**:\s*(.+?)\s*$")


def questions_of(reply: str) -> list[str]:
    """The reply's numbered questions, in order."""
    return [m.group(2) for line in reply.splitlines() if (m := _QUESTION.match(line))]


FILE_MIME = {"md": "text/markdown", "docx": DOCX_MIME, "json": "application/json", "csv": "text/csv"}


def turn_downloads(project: Project, turn: Turn) -> None:
    """The files this turn wrote (a brief it was asked for), offered right under its reply."""
    for name in turn.artifacts:
        path = project.ws.artifacts / name
        if not path.is_file():  # removed from artifacts/ since: say so rather than offer nothing
            st.caption(f"{name} is no longer in the project's artifacts folder.")
            continue
        st.download_button(name, path.read_bytes(), file_name=name, icon=":material/download:",
                           mime=FILE_MIME.get(path.suffix.lstrip("."), "application/octet-stream"),
                           key=f"turn-file-{turn.id}-{name}")


def export_menu(project: Project, title: str) -> None:
    """The transcript as Markdown or Word, built only when the PM clicks (a long session's file is big)."""
    with st.popover("Export", type="tertiary", icon=":material/ios_share:", help="Download the conversation"):
        formats: tuple[tuple[export.ExportFormat, str], ...] = (("md", "Transcript (.md)"),
                                                                ("docx", "Transcript (.docx)"))
        for fmt, label in formats:
            st.download_button(
                label, _transcript(project, title, fmt),
                file_name=export.transcript_file_name(project.ws.slug, fmt), mime=export.MIME[fmt],
                key=f"export-{fmt}", use_container_width=True, on_click="ignore",
            )


def _transcript(project: Project, title: str, fmt: export.ExportFormat) -> Callable[[], bytes]:
    """The export's bytes, made from the state as it is when the PM clicks."""
    return lambda: export.transcript_bytes(project.state(), title, fmt)


# Streamlit's own Stop (top right) would stop only the page's updates, never the reply's work in its thread,
# and leave the page frozen: each reply has its own Stop instead.
PAGE_CSS = '[data-testid="stStatusWidget"] button { display: none; }'


def reply_body(text: str, sources: Iterable[SourceRef] = (), passage_of=lambda source: None) -> None:
    """A reply's text: the same element while it streams and once it is saved, so nothing re-flows. Its
    citations of `sources` open their passage in place; nothing the reply says can add HTML or fetch an image."""
    st.markdown(citations.linked_reply(text, list(sources), passage_of), unsafe_allow_html=True)


def message_body(message: str) -> None:
    """The PM's message as written (a paste's opening words as a quote): its Markdown formatting shows, but
    nothing in it loads or runs (an image link, HTML)."""
    st.markdown(citations.untrusted_markdown(render.for_display(message)), unsafe_allow_html=True)


def question_picker(turn: Turn) -> None:
    """Under the latest reply: which of its questions the next message answers (told to Forge with it)."""
    questions = questions_of(turn.assistant)
    if questions:
        st.pills("Which questions are you answering?", [f"Question {i}" for i in range(1, len(questions) + 1)],
                 selection_mode="multi", key=WidgetKeys.picks(turn.number),
                 help="Tick the ones your next message answers; Forge will know which.")


def picked_questions(turn: Turn) -> list[str]:
    questions = questions_of(turn.assistant)
    picked = ss.get(WidgetKeys.picks(turn.number)) or []
    return [f"Question {i}: {q}" for i, q in enumerate(questions, 1) if f"Question {i}" in picked]


def reply_actions(project: Project, turn: Turn, title: str) -> None:
    """Under the latest reply, where its Stop button was: Copy, Export, and (while it can be taken back)
    Retry and Edit. An earlier reply has later turns on it, so it gets none of these."""
    jobs = jobs_of(project)
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        copy.copy_buttons(turn.assistant)
        export_menu(project, title)
        point = read_undo_point(project.ws)
        if point is None or point.turn_id != turn.id:  # e.g. the demo's shipped turns: nothing to take back
            return
        st.button("Retry", type="tertiary", icon=":material/refresh:", key=f"retry-{turn.id}",
                  help="Take this reply back and ask Forge again", on_click=_send_again, args=(jobs, turn))
        with st.popover("Edit message", type="tertiary", icon=":material/edit:",
                        help="Change your last message and send it again"):
            with st.form(f"edit-{turn.id}", border=False):
                st.text_area("Your message", value=turn.user, key=WidgetKeys.edit_text(turn.id), height=120)
                st.caption("This reply is taken back, with what it recorded, and Forge answers the new text.")
                st.form_submit_button("Send edited message", type="primary", on_click=_send_edit,
                                      args=(project, turn))


def _send_again(jobs: ProjectJobs, turn: Turn) -> None:
    jobs.send(turn.user, turn.id)


def _send_edit(project: Project, turn: Turn) -> None:
    text = (ss.get(WidgetKeys.edit_text(turn.id)) or "").strip()
    if text:
        jobs_of(project).send(text, replaces=turn.id)


def show_turn(project: Project, turn: Turn, latest: bool, passage_of, title: str) -> None:
    with st.chat_message("user"):
        message_body(turn.user)
    with st.chat_message("assistant"):
        reply_body(turn.assistant, turn.sources, passage_of)
        if latest:
            reply_actions(project, turn, title)
            question_picker(turn)
        turn_downloads(project, turn)
        sources_list(turn, passage_of)
        if ui.developer_details:
            looked_at(turn)


# ---------------------------------------------------------------- work in the background: uploads, replies

def jobs_of(project: Project) -> ProjectJobs:
    """This session's queue of work for the project (uploads and messages, answered in order)."""
    queues = ui.jobs
    if project.ws.slug not in queues or queues[project.ws.slug].project is not project:
        queues[project.ws.slug] = ProjectJobs(project)
    return queues[project.ws.slug]


def report_finished(project: Project) -> None:
    """What finished since the last run, said once: upload results as notices, a reply that failed or was
    stopped with the PM's message kept to send again."""
    for job in jobs_of(project).take_finished():
        if isinstance(job, UploadJob):
            for f in job.files:
                if f.result is not None:
                    notify(f.result.ok, f.result.message)
            if job.status == FAILED:
                notify(False, job.error)
        elif job.status == FAILED:
            ui.kept_message, ui.kept_reason, ui.turn_error = job.message, "", job.error
        elif job.status == STOPPED:
            ui.kept_message, ui.kept_reason = job.message, "Stopped: nothing of that reply was recorded."
        elif job.status == DONE:
            ui.kept_message = ""


STAGE_WORDS = {"Converting": "reading the file", "Chunking": "splitting it into passages",
               "Summarizing": "summarizing", "Saving": "saving", "Done": "ready"}
STAGE_SHARE = {"Converting": 0.05, "Chunking": 0.1, "Summarizing": 0.15, "Saving": 0.97, "Done": 1.0}


def file_progress(f) -> tuple[float, str]:
    """One file of an upload as a bar: how far, and what is happening, in passages throughout."""
    if f.result is not None:
        return 1.0, f"{f.name}: {'ready' if f.result.ok else 'not added'}"
    if f.stage == "Embedding":
        share = f.done / f.total if f.total else 1.0
        return 0.15 + 0.8 * share, f"{f.name}: indexing {f.done:,} of {counted(f.total, 'passage', thousands=True)}"
    if not f.stage:
        return 0.0, f"{f.name}: waiting"
    return STAGE_SHARE.get(f.stage, 0.0), f"{f.name}: {STAGE_WORDS.get(f.stage, f.stage.lower())}"


def show_upload(job: UploadJob) -> Callable[[bool], None]:
    """An upload under way, in the main area; returns what moves its bars."""
    box = st.container(border=True)
    box.markdown(":material/upload_file: **Preparing your files…** You can keep writing: a message sent now "
                 "is answered as soon as they are ready.")
    bars = [box.progress(*file_progress(f)) for f in job.files]
    shown: list[tuple[float, str] | None] = [None] * len(job.files)

    def update(force: bool) -> None:
        for i, f in enumerate(job.files):
            now = file_progress(f)
            if force or now != shown[i]:
                bars[i].progress(*now)
                shown[i] = now
    return update


def show_message_job(project: Project, job: TurnJob, waiting_for: str, passage_of) -> Callable[[bool], None]:
    """A message being answered (streamed as it comes) or waiting its turn; returns what updates it."""
    with st.chat_message("user"):
        message_body(job.message)
    with st.chat_message("assistant"):
        text = st.empty()
        stop = st.empty()
        stop.button("Stop", type="tertiary", icon=":material/stop_circle:", key=f"stop-{job.id}",
                    help="Stop this reply; nothing of it is recorded and your message is kept",
                    on_click=jobs_of(project).stop, args=(job,))
    shown: list[tuple[str, str] | None] = [None]
    ended = [False]

    def update(force: bool) -> None:
        now = (job.status, job.text)
        if not force and now == shown[0]:
            return
        if not job.active and not ended[0]:
            # Ended: the same button in the same place, inert, until the page is drawn afresh.
            ended[0] = True
            stop.button("Stop", type="tertiary", icon=":material/stop_circle:", key=f"stopped-{job.id}",
                        disabled=True, help="This reply has ended")
        shown[0] = now
        if job.text:
            with text.container():
                reply_body(job.text + ("" if job.status == DONE else " ▌"), job.sources, passage_of)
        else:
            services = project.services
            model = services.describe()["llm"] if services.llm.online else None
            text.caption(waiting_for if job.status == "queued" else citations.literal(
                welcome.waiting_caption(job.waiting_s(), project.settings.slow_model_notice_s, model)))
    return update


def follow(updates, settle_s: float) -> None:
    """Keep the page up to date with the work under way until it is done, then draw the page afresh.

    Any click or message stops this run (the work goes on in its thread) and the next run follows it again.
    Something is redrawn at least every few ticks, so Streamlit gets its chance to stop the run promptly."""
    tick = 0
    while True:
        busy = any(job.active for job, _ in updates)
        for _, update in updates:
            update(force=tick % 8 == 0)
        if not busy:
            break
        tick += 1
        time.sleep(0.04)
    if any(isinstance(job, TurnJob) and job.status == DONE for job, _ in updates):
        time.sleep(settle_s)  # the ended reply keeps its layout a moment: see Settings.reply_settle_s
    st.rerun()


def chat(project: Project) -> None:
    jobs = jobs_of(project)
    state = project.state()
    starter, ui.starter = ui.starter, ""
    message = st.chat_input("Tell Forge about your product question…") or starter or None
    st.title(citations.literal(state.project_name or project.ws.slug))
    if state.recovered_from:
        st.warning(f"This session restarted because the saved one could not be read; the old file is kept as "
                   f"{state.recovered_from} in the project folder.")
    reset_asked, ui.demo_reset_asked = ui.demo_reset_asked, False
    if reset_asked and example_of(project.ws.root) is not None:
        reset_demo(project)
    # While work is under way this run keeps drawing until it is done, and Streamlit greys out whatever the
    # previous run drew beyond what this one has drawn so far: so the page only ever grows while work runs
    # (the welcome stays until the first reply is saved, the latest reply keeps its buttons, a reply being
    # asked again stays in place until its new version is saved).
    active = jobs.active()
    first_run(project, state)
    manifest = project.manifest()
    online = project.services.llm.online
    if online or ui.developer_details:  # offline nothing is billed: the meter is a developer's view
        panels.session_meter(state, project.settings, online, manifest.file_summaries)
    shown = ui.history_shown
    hidden = max(len(state.turns) - shown, 0)
    if hidden and st.button(f"Show {min(hidden, EAGER_TURNS)} earlier turns ({hidden} not shown)"):
        ui.history_shown = shown + EAGER_TURNS
        st.rerun()
    st.html(f"<style>{citations.CITATION_CSS}{PAGE_CSS}</style>")  # once per page; takes no room
    passage_of = project.passage_reader(manifest)
    title = manifest.display_name or state.project_name or project.ws.slug
    for turn in state.turns[hidden:]:
        show_turn(project, turn, latest=turn is state.turns[-1], passage_of=passage_of, title=title)
    error, ui.turn_error = ui.turn_error, ""
    if error:
        st.error(citations.literal(error))
    if ui.kept_message and not active and not message:
        kept_message_notice(project)
    if message:
        # Handed over only now that the page is drawn: the reply's work would slow the drawing down.
        picked = picked_questions(state.turns[-1]) if state.turns else []
        jobs.send("Answering " + "; ".join(picked) + "\n\n" + message if picked else message)
        with st.sidebar:  # the frame's own few pixels go at the sidebar's end, not into the chat
            view.to_end()
        shown_example, ui.example_shown = ui.example_shown, ""
        if shown_example:  # the PM is using the example: its top no longer matters
            ui.examples_opened.add(shown_example)
        ui.kept_message = ""
        active = jobs.active()
    updates: list[tuple[AnyJob, Callable[[bool], None]]] = []
    for i, job in enumerate(active):
        if isinstance(job, UploadJob):
            updates.append((job, show_upload(job)))
        else:
            ahead = active[:i]
            waiting = ("Waiting for your files to be ready; Forge answers this next."
                       if any(isinstance(j, UploadJob) for j in ahead) else "Waiting for the reply above.")
            if job.replaces:
                waiting = "Taking the reply above back; Forge answers this instead."
            updates.append((job, show_message_job(project, job, waiting, passage_of)))
    if updates:
        follow(updates, project.settings.reply_settle_s)


def kept_message_notice(project: Project) -> None:
    reason = ui.kept_reason or "Your last message was not answered."
    st.info(f"{reason} Your message is kept here: “{citations.literal(ui.kept_message)}”", icon=":material/undo:")
    st.button("Send it again", key="send-kept", icon=":material/send:", on_click=_send_kept, args=(project,))


def _send_kept(project: Project) -> None:
    jobs_of(project).send(ui.kept_message)
    ui.kept_message = ""


def main() -> None:
    try:
        services = resources.services()
    except ForgeError as exc:
        st.error(citations.literal(str(exc)))
        return
    with st.sidebar:
        st.header("Forge")
        provider_status(services)
        slug = project_picker(services)
        try:
            project = resources.project(slug) if slug else None
        except ForgeError as exc:  # e.g. the Chroma server is down: say so; the next rerun tries again
            st.error(citations.literal(str(exc)))
            return
        if project and project.recovered:
            st.warning(f"Forge stopped during an earlier operation ({project.recovered}); it was finished "
                       "or rolled back, and the project is consistent again.")
            project.recovered = None
        if project:
            shown = ""
            try:
                state = project.state()
                project.manifest()  # a git conflict in either file stops here, in one sentence
            except UnresolvedConflict as exc:
                st.error(citations.literal(str(exc)))
                return
            except ForgeError as exc:  # an unreadable state.json was just moved aside: say so once
                st.error(citations.literal(shown := str(exc)))
                state = project.state()  # the fresh session that replaced it
            for notice in take_notices():  # e.g. an upload a crash cut short, listed for a retry
                if notice != shown:
                    st.warning(citations.literal(notice))
            report_finished(project)  # before the files panel, so an upload's result shows in this run
            catalogue = project.catalogue()
            panels.session_badge(state, catalogue)
            files_panel(project)  # an upload reruns the script, so what is read below is never stale
            manifest = project.manifest()
            panels.org_context_panel(manifest)
            panels.register_panel(state)
            panels.skeleton_panel(state, manifest, catalogue)
            downloads_panel(project, state, manifest)
            developer_toggle()
            restore, ui.restore_view = ui.restore_view, False
            if restore:
                view.restore()
    if project is None:
        st.title("Forge")
        welcome.intro()
        st.info("Create a project in the sidebar to start a discovery session.", icon=":material/add:")
        return
    try:
        ensure_indexed(project)
    except ForgeError as exc:
        st.error(citations.literal(str(exc)))
        return
    chat(project)
    shown_example, ui.example_shown = ui.example_shown, ""
    if shown_example:
        ui.examples_opened.add(shown_example)


main()
