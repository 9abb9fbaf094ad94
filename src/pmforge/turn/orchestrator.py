"""One turn, end to end, in named steps: recover → open → route → assemble → reply → commit → remember.

`start_turn` runs the first four (each a function with a typed result: `OpenedTurn`, `RoutedTurn`,
`PreparedReply`) and returns a `PendingTurn`; iterate it for the streamed reply, then `finish()` commits
state and remembers the turn. Tools act on copies of state, so a turn that fails leaves the saved state
exactly as it was.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Generator

from pmforge.core import transcript
from pmforge.core.errors import ForgeError
from pmforge.core.models import (
    Manifest,
    RetrievalTrace,
    RoutingDecision,
    SessionState,
    SourceRef,
    TokenReport,
    ToolCallRecord,
    Turn,
    TurnRecord,
)
from pmforge.core.tokens import count_tokens
from pmforge.core.workspace import notify
from pmforge.index.client import StoreUnavailable
from pmforge.interviewer.rules import RouteInputs
from pmforge.knowledge import Catalogue
from pmforge.llm.base import ChatRequest
from pmforge.llm.costs import Ledger, MeteredEmbedder, MeteredLLM
from pmforge.outputs.artifacts import write_all
from pmforge.project.project import Project
from pmforge.project.undo import keep_undo_point
from pmforge.prompt.render import own_words
from pmforge.tools import ToolContext, run_tool, tool_for
from pmforge.tools.session import RecordProbe
from pmforge.turn.acknowledge import acknowledgement, with_acknowledgement
from pmforge.turn.assemble import AssembledContext, assemble
from pmforge.turn.execute import Execution
from pmforge.turn.fit import ReplyPrompt
from pmforge.turn.paste import set_aside_paste
from pmforge.turn.remember import asked_before, catch_up, remember, summarize_turn
from pmforge.turn.route import route

log = logging.getLogger(__name__)


@dataclass
class OpenedTurn:
    """A turn opened on its project: the session as the turn begins (earlier turns remembered), its number,
    the message it works with (a long paste set aside as a source), and the meters every call is billed to."""

    project: Project
    state: SessionState
    seen: tuple | None  # the saved state's signature when it was loaded (see `Workspace.state_signature`)
    number: int
    message: str
    pasted: str | None  # the file a long paste was set aside as
    manifest: Manifest
    catalogue: Catalogue  # this project's probes and patterns, passed to every step: never another project's
    ledger: Ledger  # every call of the turn (routing, each tool-loop round, the summary, embeddings)
    llm: MeteredLLM
    embedder: MeteredEmbedder


@dataclass
class RoutedTurn:
    """Phase A's outcome: the decision, the request that asked for it (for token accounting), and a note when
    the rule router decided instead."""

    decision: RoutingDecision
    request: ChatRequest
    note: str


@dataclass
class PreparedReply:
    """Phase B ready to run: the assembled context, the prompt fitted from it (round 1's request, and every later
    round's within the budget), the tools' working copies, and the tool loop that streams the reply."""

    context: AssembledContext
    prompt: ReplyPrompt
    tool_ctx: ToolContext
    execution: Execution


def open_turn(project: Project, message: str) -> OpenedTurn:
    """Open: load the session, remember earlier turns a failure left unremembered, set a long paste aside.
    (Recovery from a crash runs first: see `start_turn`.)"""
    settings = project.settings
    seen = project.ws.state_signature()  # before loading: see state_signature
    state = project.state()
    if any(not t.indexed for t in state.turns):
        with project.write_window(), project.ws.operations.marked("remember earlier turns"):
            state = project.state()  # under the lock: another window may have remembered them
            # Marks each turn in the transcript (a patch line) as it is remembered: no state.json save.
            try:
                catch_up(project.store, project.services.embedder, project.services.llm, state, settings,
                         ws=project.ws)
            except StoreUnavailable:
                raise  # every search of this turn would wait on it too
            except ForgeError as exc:  # e.g. no embedder for the index in use: this reply needs none
                log.warning("earlier turns of %s not yet remembered: %s", project.ws.slug, exc)
            seen = project.ws.state_signature()
    forget_taken_from_under(project)
    number = state.last_turn_number + 1
    worked_on, pasted = set_aside_paste(project, message, number)
    ledger = Ledger()
    return OpenedTurn(project=project, state=state, seen=seen, number=number, message=worked_on, pasted=pasted,
                      manifest=project.manifest(), catalogue=project.catalogue(), ledger=ledger,
                      llm=MeteredLLM(project.services.llm, ledger),
                      embedder=MeteredEmbedder(project.services.embedder, ledger))


def route_turn(opened: OpenedTurn) -> RoutedTurn:
    """Route (Phase A): what the turn is for, which probe to pursue, and whether to search."""
    inputs = RouteInputs(opened.state, opened.manifest, opened.message, opened.number, opened.catalogue)
    decision, request, note = route(opened.llm, inputs, opened.project.settings)
    return RoutedTurn(decision, request, note)


def assemble_turn(opened: OpenedTurn, routed: RoutedTurn, retracted_reply: str = "") -> PreparedReply:
    """Assemble: search what the decision asks for, render the context within its budgets, fit the request,
    and set up the tool loop on working copies (a turn that fails leaves the saved state as it was)."""
    settings, state, manifest = opened.project.settings, opened.state, opened.manifest
    context = assemble(routed.decision, state, manifest, opened.message, opened.number, opened.project.store,
                       opened.embedder, settings, opened.catalogue)
    context.retracted_reply = retracted_reply
    prompt = ReplyPrompt(context, state, manifest, settings)
    tool_ctx = ToolContext(
        state=working_copy(state),
        manifest=manifest.model_copy(deep=True),
        turn_number=opened.number,
        catalogue=opened.catalogue,
        active_probe=routed.decision.next_probe,
        workspace=opened.project.ws,
        decision=routed.decision.model_copy(deep=True),
        pm_words=own_words(opened.message),  # a long paste is source material, not the PM's say-so
    )
    execution = Execution(opened.llm, prompt, tool_ctx, settings.tool_loop_max_rounds)
    return PreparedReply(context, prompt, tool_ctx, execution)


_FORGOTTEN: set[str] = set()  # ids of turns taken back from under later ones, already dropped from memory here


def forget_taken_from_under(project: Project) -> None:
    """A turn another copy took back after later turns (a merged undo) leaves this copy's conversation memory,
    as an undo here would have it: an earlier-turn search must never bring back what the PM took back."""
    ids = {t.id for t, _ in transcript.taken_from_under(project.ws.transcript_path)} - _FORGOTTEN
    if ids:
        with project.write_window():
            project.store.memory.delete_turns(ids)
        _FORGOTTEN.update(ids)


def tell_if_tools_unused(project: Project, turns: list[Turn]) -> None:
    """Say once when a model has called none of Forge's tools for several replies in a row: nothing reaches the
    brief or the register then, which a PM would otherwise only notice much later."""
    after = project.settings.tools_unused_notice_turns
    recent = turns[-after:]
    if len(recent) < after or any(t.tool_calls for t in recent):
        return
    notify(f"The model ({project.services.describe()['llm']}) has called none of Forge's tools in the last "
           f"{after} replies, so nothing it heard is being recorded in the brief or the assumption register. Use "
           "a model that supports tool calling; with llama.cpp, start llama-server with --jinja.",
           once=("tools unused", str(project.ws.root.resolve())))


class PendingTurn:
    """A turn between its preparation and its save: iterate it for the reply (the reply step), then `commit`
    saves it and `remember` indexes it (`finish` does both)."""

    def __init__(self, opened: OpenedTurn, routed: RoutedTurn, prepared: PreparedReply):
        self.project, self.state, self.seen, self.number = opened.project, opened.state, opened.seen, opened.number
        self.message, self.pasted, self.manifest = opened.message, opened.pasted, opened.manifest
        self.catalogue, self.ledger = opened.catalogue, opened.ledger
        self.llm, self.embedder = opened.llm, opened.embedder
        self.decision, self.route_request, self.route_note = routed.decision, routed.request, routed.note
        self.context, self.prompt = prepared.context, prepared.prompt
        self.tool_ctx, self.execution = prepared.tool_ctx, prepared.execution
        self._streamed = False
        self.acknowledgement = ""  # what the turn's tools recorded, streamed after the reply

    @property
    def reply_request(self) -> ChatRequest:
        """Round 1's request (later rounds are built from it by `prompt`)."""
        return self.prompt.request

    def __iter__(self) -> Generator[str, None, None]:  # a generator: a stopped reply closes it
        self._streamed = True
        yield from self.execution
        # Output, not prompt: worded from the calls and the state they left, after the model has finished.
        self.acknowledgement = acknowledgement(self.execution.result.tool_calls, self.state, self.tool_ctx.state,
                                               self.manifest.org_context)
        if self.acknowledgement:
            yield ("\n\n" if self.execution.result.reply else "") + self.acknowledgement

    def tokens(self) -> TokenReport:
        sections = dict(self.context.tokens)
        sections["static_prefix"] = self.prompt.prefix_tokens()
        sections["message"] = count_tokens(self.message)
        # Every tool-loop round is counted (before streaming, only round 1 exists); the budget holds for the largest.
        rounds = list(self.execution.result.request_tokens) or [self.prompt.tokens(self.reply_request)]
        return TokenReport(
            phase_a=self.route_request.token_count(), phase_b=max(rounds), sections=sections,
            phase_b_rounds=rounds, trimmed=list(self.prompt.report.steps),
        )

    def _merged_with_saved(self, state: SessionState, turn: Turn) -> SessionState:
        """The state to save (call holding the project lock). Nothing saved since this turn began: its own.
        Else the saved state with this turn's successful tool calls applied again (they are validated inputs,
        so they replay on any state they fit), keeping what another window saved meanwhile — an assumption
        edit, a mode change. Refuses in one sentence when another turn was saved first (two turns would
        share a number) or a call no longer fits."""
        ws = self.project.ws
        if ws.state_signature() == self.seen:  # covers state.json (every save is a new file) and the transcript
            return state
        current = ws.load_state()
        if current.last_turn_number != self.number - 1:
            raise ForgeError("This project changed in another window while Forge was replying (another message "
                             "was answered first); your message was not saved — send it again.")
        if session_fields(current) == session_fields(self.state):
            return state  # only memory flags of earlier turns moved (patch lines): nothing to merge
        ctx = ToolContext(
            state=working_copy(current), manifest=ws.load_manifest(), turn_number=self.number,
            catalogue=self.catalogue, active_probe=self.decision.next_probe, workspace=ws,
            decision=self.decision.model_copy(deep=True),
            pm_words=self.tool_ctx.pm_words,
        )
        org_before = ctx.manifest.org_context
        for call in self.execution.result.tool_calls:
            if call.ok:
                ok, text = run_tool(call.name, call.input, ctx)
                if not ok:
                    raise ForgeError(f"This project changed in another window while Forge was replying, and this "
                                     f"reply's changes no longer fit it ({text.rstrip('.')}); your message was not "
                                     "saved — send it again.")
        apply_decision(ctx.state, self.decision, self.number)
        # Said again from the state actually saved (another window may have taken the id streamed as A3).
        turn.assistant = with_acknowledgement(self.execution.result.reply, acknowledgement(
            self.execution.result.tool_calls, current, ctx.state, org_before))
        ctx.state.turns.append(turn)
        self.tool_ctx = ctx
        log.info("turn %d: state saved by another window meanwhile; %d tool calls applied to it again",
                 self.number, sum(c.ok for c in self.execution.result.tool_calls))
        return ctx.state

    def sources(self) -> list[SourceRef]:
        """The document sections this turn's prompt carries, as the reply will cite them."""
        return [SourceRef(citation=s.citation, file_id=s.file_id, filename=s.filename, start=s.start, end=s.end)
                for s in self.context.documents]

    def finish(self) -> TurnRecord:
        """Save the turn, then remember it: what the CLI and the tests call."""
        turn = self.commit()
        self.remember()
        return TurnRecord(
            turn=turn.number, routing=turn.routing, retrieved=turn.retrieved, tokens=turn.tokens,
            reply=turn.assistant, tool_calls=turn.tool_calls, probes_answered=turn.probes_answered,
        )

    def commit(self) -> Turn:
        """Save the turn (transcript, state, artifacts): from here on it is what the PM saw."""
        if not self._streamed:
            for _ in self:
                pass
        result = self.execution.result
        d = self.decision
        state = self.tool_ctx.state
        apply_decision(state, d, self.number)
        turn = Turn(
            number=self.number,
            user=self.message,
            assistant=with_acknowledgement(result.reply, self.acknowledgement),
            active_mode=state.active_mode,
            active_probe=d.next_probe,
            routing=d,
            retrieved=RetrievalTrace(
                documents=[s.id for s in self.context.documents],
                conversations=[t.turn_number for t in self.context.conversations],
            ),
            sources=self.sources(),
            tokens=self.tokens(),
            usage=result.usage,
            calls=self.ledger.take(),
            tool_calls=result.tool_calls,
            probes_answered=probes_answered(result.tool_calls, self.catalogue),
        )
        state.turns.append(turn)
        ws = self.project.ws
        with self.project.operation(f"turn {self.number}"):
            state = self._merged_with_saved(state, turn)  # another window's save is kept, never overwritten
            new_org = self.tool_ctx.manifest.org_context
            org_before = None  # what the turn replaced, for its undo point
            if new_org != self.manifest.org_context:
                # Reload: the manifest may have changed during the turn (an upload in another tab).
                current = ws.load_manifest()
                org_before, current.org_context = current.org_context, new_org
                ws.save_manifest(current)
            # Artifacts the tools asked for are written only now, with the turn: a failed turn writes none.
            # Just before the turn, so the turn names the files it wrote (a crash in between leaves one
            # more generation in artifacts/, which Downloads lists like any other).
            written = write_all(ws, self.tool_ctx.pending_artifacts)
            turn.artifacts = [path.name for result in written for path in result.paths]
            keep_undo_point(ws, turn, state, org_before, new_org)  # while state.json is still the session before
            # The turn next: it is what the PM saw, and a crash before state.json is saved then loses only
            # this turn's tool effects. One appended line, however long the session.
            ws.transcript_file.append_turn(turn)
            ws.operations.crash_point("appended")
            ws.save_state(state)  # small: finds the turn already in the transcript
        log.info(
            "turn %d saved: action=%s mode=%s probe=%s retrieval=%s documents=%d conversations=%d phase_a=%d "
            "phase_b=%d tools=%s", turn.number, d.action, d.mode, d.next_probe, d.requires_retrieval,
            len(turn.retrieved.documents), len(turn.retrieved.conversations), turn.tokens.phase_a,
            turn.tokens.phase_b, ",".join(c.name for c in turn.tool_calls) or "-",
        )
        self.saved, self.saved_state = turn, state
        if self.project.services.llm.online:
            tell_if_tools_unused(self.project, state.turns)
        return turn

    def remember(self) -> None:
        """Summarize and index the saved turn. It comes after the save: the reply is already on screen and on
        disk. A turn left unremembered (the summarizer or the store failed) is caught up at the start of the
        next one."""
        turn, state, ws = self.saved, self.saved_state, self.project.ws
        settings = self.project.settings
        asked = asked_before(state.turns, len(state.turns) - 1)
        turn.summary = summarize_turn(self.llm, turn.user, turn.assistant, settings, asked)
        try:
            with self.project.operation(f"remember turn {self.number}"):
                remember(self.project.store, self.embedder, turn, asked)
                turn.indexed = True
                turn.calls = turn.calls + self.ledger.take()  # the summary and the memory embeddings
                ws.transcript_file.patch_turn(turn)  # by id: right even if another window has added turns since
        except ForgeError as exc:  # the store or the embedder (a Voyage outage) is down: the turn is saved
            log.warning("turn %s saved but not yet remembered: %s", turn.number, exc)


def apply_decision(state: SessionState, d, number: int) -> None:
    """What Phase A's routing decision changes in the session, after the turn's tools ran."""
    if d.action == "enter_mode":
        state.active_mode = d.mode
    if d.action == "micro_synthesize":
        state.routing.last_synthesis_turn = number
    if d.action == "complete_mode" and d.mode not in state.routing.completed_modes:
        state.routing.completed_modes.append(d.mode)
    state.active_probe = d.next_probe


def session_fields(state: SessionState) -> dict:
    """What a save changes in state.json, less the save's own bookkeeping."""
    return state.model_dump(exclude=set(SessionState.SAVE_BOOKKEEPING))


def probes_answered(calls: list[ToolCallRecord], catalogue: Catalogue) -> list[str]:
    """The probes this turn's message answered: whatever the model recorded, with either provider."""
    found = [catalogue.find_probe(c.input.get("probe", "")) for c in calls
             if c.ok and c.name == tool_for(RecordProbe).name and isinstance(c.input, dict)]
    return list(dict.fromkeys(p.id for p in found if p))


def working_copy(state: SessionState) -> SessionState:
    """A copy for the turn's tools to change. Tools never touch past turns, so the transcript (most of a
    long session's size) is shared instead of deep-copied on every turn: its own list, the same Turn
    objects, which transcript.load shares with every reader in the process anyway."""
    turns = state.turns
    state.turns = []
    try:
        copy = state.model_copy(deep=True)
    finally:
        state.turns = turns
    copy.turns = list(turns)
    return copy


def start_turn(project: Project, message: str, retracted_reply: str = "") -> PendingTurn:
    """A turn under way, its steps in order: recover, open, route, assemble; then the reply streams from the
    returned turn, and `commit` and `remember` save and index it. `retracted_reply`: the reply a Retry took
    back, which the new one should not repeat."""
    project.recover()  # finish or undo what a crash cut short, before anything is read
    opened = open_turn(project, message)
    routed = route_turn(opened)
    return PendingTurn(opened, routed, assemble_turn(opened, routed, retracted_reply))


def run_turn(project: Project, message: str) -> TurnRecord:
    return start_turn(project, message).finish()
