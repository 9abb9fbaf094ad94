"""One turn, end to end: route → assemble → execute → remember.

`start_turn` does Phase A and assembly and returns a `PendingTurn`; iterate it for
the streamed reply, then `finish()` commits state and indexes the turn. Tools act
on copies of state, so a turn that fails leaves the saved state exactly as it was.
"""

from __future__ import annotations

from typing import Iterator

from ..knowledge.project_patterns import load_project_patterns
from ..models import BilledUsage, RetrievalTrace, SourceRef, TokenReport, Turn, TurnRecord
from ..project import Project
from ..tokens import count_tokens
from ..tools import ToolContext
from .assemble import AssembledContext, assemble
from .execute import Execution, build_reply_request, prefix_tokens
from .remember import asked_before, catch_up, remember, summarize_turn
from .route import RouteInputs, route
from .sandbox import sandbox


class PendingTurn:
    def __init__(self, project: Project, message: str):
        self.project = project
        settings = project.settings
        self.state = project.state()
        self.number = self.state.turn_count + 1
        self.message, self.pasted = sandbox(project, message, self.number)
        message = self.message
        if catch_up(project.store, project.services.embedder, project.services.llm, self.state, settings):
            with project.ws.locked():
                project.ws.save_state(self.state)
        self.project_state = project.project_state()
        self.pattern_problems = load_project_patterns(project.ws.slug, project.ws.root / "patterns")
        inputs = RouteInputs(self.state, self.project_state, message, self.number, project=project.ws.slug)
        self.decision, self.route_request, self.route_note = route(project.services.llm, inputs, settings)
        self.context: AssembledContext = assemble(
            self.decision, self.state, self.project_state, message, self.number,
            project.store, project.services.embedder, settings,
        )
        self.reply_request = build_reply_request(self.context, self.state, settings)
        self.tool_ctx = ToolContext(
            state=self.state.model_copy(deep=True),
            project_state=self.project_state.model_copy(deep=True),
            turn_number=self.number,
            active_probe=self.decision.next_probe,
            workspace=project.ws,
        )
        self.execution = Execution(
            project.services.llm, self.reply_request, self.tool_ctx, settings.tool_loop_max_rounds
        )
        self._streamed = False

    def __iter__(self) -> Iterator[str]:
        self._streamed = True
        yield from self.execution

    def tokens(self) -> TokenReport:
        sections = dict(self.context.tokens)
        sections["static_prefix"] = prefix_tokens(self.reply_request)
        sections["message"] = count_tokens(self.message)
        return TokenReport(
            phase_a=self.route_request.token_count(), phase_b=self.reply_request.token_count(), sections=sections
        )

    def finish(self) -> TurnRecord:
        if not self._streamed:
            for _ in self:
                pass
        result = self.execution.result
        d = self.decision
        state = self.tool_ctx.state
        if d.action == "enter_mode":
            state.active_mode = d.mode
        if d.action == "micro_synthesize":
            state.routing.last_synthesis_turn = self.number
        if d.action == "complete_mode" and d.mode not in state.routing.completed_modes:
            state.routing.completed_modes.append(d.mode)
        state.active_probe = d.next_probe
        turn = Turn(
            number=self.number,
            user=self.message,
            assistant=result.reply,
            active_mode=state.active_mode,
            active_probe=d.next_probe,
            routing=d,
            retrieved=RetrievalTrace(
                documents=[s.id for s in self.context.documents],
                conversations=[t.turn_number for t in self.context.conversations],
            ),
            sources=[
                SourceRef(citation=s.citation, file_id=s.file_id, filename=s.filename, start=s.start, end=s.end)
                for s in self.context.documents
            ],
            tokens=self.tokens(),
            usage=BilledUsage(**result.usage.model_dump()),
            tool_calls=result.tool_calls,
        )
        state.turns.append(turn)
        ws = self.project.ws
        with ws.locked():
            new_org = self.tool_ctx.project_state.org_context
            if new_org != self.project_state.org_context:
                # Reload: the manifest may have changed during the turn (an upload in another tab).
                current = ws.load_project_state()
                current.org_context = new_org
                ws.save_project_state(current)
            ws.save_state(state)
        # Remembering comes after the save: the reply is already on screen and on disk.
        settings = self.project.settings
        asked = asked_before(state.turns, len(state.turns) - 1)
        turn.summary = summarize_turn(self.project.services.llm, turn.user, turn.assistant, settings, asked)
        remember(self.project.store, self.project.services.embedder, turn)
        turn.indexed = True
        with ws.locked():
            ws.save_state(state)
        return TurnRecord(
            turn=turn.number, routing=d, retrieved=turn.retrieved, tokens=turn.tokens,
            reply=turn.assistant, tool_calls=turn.tool_calls,
        )


def start_turn(project: Project, message: str) -> PendingTurn:
    return PendingTurn(project, message)


def run_turn(project: Project, message: str) -> TurnRecord:
    return start_turn(project, message).finish()
