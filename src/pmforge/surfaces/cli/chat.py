"""`forge chat` and `undo`: turns at the terminal, one message per line or with -m."""

from __future__ import annotations

import json
import sys
import threading

from pmforge.core.errors import ForgeError, without_kept_note
from pmforge.surfaces.cli.common import ask, open_project, services, show_notices


def cmd_chat(args) -> int:
    from pmforge.core.settings import get_settings

    project = open_project(services(), args.project)
    show_notices()
    offline_notice = not project.services.llm.online  # said once per invocation, on stderr: never in a reply
    wait_s = get_settings().chat_busy_wait_s
    # A reply's save waits for another command's write (an upload embeds its files holding it) as it would
    # for another turn, and says so.
    project.ws.lock_wait_s = max(project.ws.lock_wait_s, wait_s)
    project.on_wait = lambda text: print(text, file=sys.stderr, flush=True)
    failed = 0
    messages = args.message if args.message else (line.rstrip("\n") for line in sys.stdin)
    for message in messages:
        if not message.strip():
            continue
        try:
            # One message at a time per project: wait for a turn another command is answering.
            with project.ws.turn_slot(wait_s, on_wait=lambda: print(
                    f"Project '{project.ws.slug}' is answering another message; waiting up to {wait_s:.0f} s…",
                    file=sys.stderr, flush=True)):
                if offline_notice:  # just before the first reply (after any wait for the project)
                    from pmforge.interviewer.offline import OFFLINE_NOTICE

                    print(OFFLINE_NOTICE, file=sys.stderr, flush=True)
                    offline_notice = False
                _answer(project, message, args.json, args.verbose)
        except ForgeError as exc:
            # Never lose what the PM typed: say what happened, give the message back, go on with the next.
            show_notices(but=str(exc))
            # The app keeps a failed message in its box; here it is handed back, so that promise is left out.
            print(f"{without_kept_note(str(exc)).rstrip('.')}. Your message was not saved; here it is to send "
                  f"again:\n{message}",
                  file=sys.stderr, flush=True)
            failed += 1
    return 1 if failed else 0


def _answer(project, message: str, as_json: bool, verbose: bool = False) -> None:
    from pmforge.turn.orchestrator import start_turn

    waiting = _waiting_notice(project)  # a slow model's first words: say what Forge is waiting for
    try:
        pending = start_turn(project, message)
        if as_json:
            record = pending.finish()
            print(json.dumps(record.model_dump(mode="json"), ensure_ascii=False), flush=True)
            return
        print(f"\n> {message}\n")
        for delta in pending:
            waiting.cancel()
            print(delta, end="", flush=True)
    finally:
        waiting.cancel()
    record = pending.finish()
    print()
    if verbose:  # for people tuning Forge, not for PMs: on stderr, so the reply itself stays clean
        print(f"[turn {record.turn} · phase A {record.tokens.phase_a} tok · phase B {record.tokens.phase_b} tok]",
              file=sys.stderr, flush=True)


def _waiting_notice(project) -> threading.Timer:
    """A started timer that says on stderr, if the model has not answered within `slow_model_notice_s`, which
    model Forge is waiting for (a local model on a CPU can take minutes). Cancel it at the first words."""
    llm = project.services.llm
    text = f"Forge: waiting for the model ({project.services.describe()['llm']})…"
    timer = threading.Timer(project.settings.slow_model_notice_s, lambda: print(text, file=sys.stderr, flush=True))
    timer.daemon = True
    if llm.online:
        timer.start()
    return timer


def cmd_undo(args) -> int:
    """Take back the latest turn: show it, ask (unless --yes), then undo exactly that turn."""
    from pmforge.project.undo import turn_to_undo, undo_last_turn

    project = open_project(services(), args.project)
    show_notices()
    turn = turn_to_undo(project)
    first_line = next((line.strip() for line in turn.user.splitlines() if line.strip()), "")
    print(f"Turn {turn.number}: {first_line}")
    if not args.yes:
        answer = ask("Take back this turn and Forge's reply to it? [y/N] ",
                      "Taking back a reply needs a confirmation", "add --yes to take it back anyway")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was taken back.", file=sys.stderr)
            return 1
    undo_last_turn(project, turn_id=turn.id)
    print(f"Took back turn {turn.number}; the next message becomes turn {turn.number}.")
    return 0
