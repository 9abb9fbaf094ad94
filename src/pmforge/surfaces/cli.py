"""The `forge` command. Every subcommand calls the same functions the app calls.

User mistakes end with one plain sentence on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pmforge.core.errors import ForgeError, without_kept_note
from pmforge.core.words import counted

if TYPE_CHECKING:
    from pmforge.outputs.artifacts import ArtifactKind


def _services():
    from pmforge.project.services import Services

    return Services.from_settings()


def _open(services, name: str):
    """Open a project, first adding to its store what this clone's files and transcript need (a catch-up
    that never drops anything: the store may be shared with other clones)."""
    from pmforge.project.project import Project

    project = Project.open(services, name)
    reason = project.reindex_reason()
    if reason:
        from pmforge.upkeep.reindex import reindex  # with the ingestion modules: only for a catch-up

        print(f"Catching up the vector store of '{project.ws.slug}' because {reason} "
              f"(`forge reindex {project.ws.slug}` does this on demand)…", file=sys.stderr)
        print(reindex(project, _progress_bar), file=sys.stderr)
    return project


def _start_log() -> None:
    from pmforge.core import logs
    from pmforge.core.settings import get_settings
    try:
        logs.configure(get_settings())
    except OSError as exc:  # an unwritable log folder must not stop the command
        print(f"Forge could not open its log ({exc.strerror}); continuing without it.", file=sys.stderr)


def _progress_bar(stage: str, done: int, total: int) -> None:
    if not sys.stderr.isatty():
        return
    width = 24
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\r{stage:<28} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if stage == "Done":
        sys.stderr.write("\n")
    sys.stderr.flush()


def _serve_until_stopped(command: list[str], grace_s: float) -> int:
    """Run a server as a child that never outlives this process: a stop signal sent to `forge` (a service
    manager's SIGTERM, Ctrl-C, a closed terminal's SIGHUP) is passed on, then `forge` waits for the server
    to stop, killing it if it takes longer than `grace_s`. Returns the server's exit status."""
    import signal
    import time

    child = subprocess.Popen(command, env=dict(os.environ))
    stop_asked: list[float] = []

    def pass_on(signum, _frame) -> None:
        stop_asked.append(time.monotonic())
        if child.poll() is None:  # a hang-up becomes a polite stop: Streamlit shuts down on SIGTERM
            child.send_signal(signal.SIGTERM if signum == getattr(signal, "SIGHUP", None) else signum)

    stop_signals = [getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)]
    previous = {signum: signal.signal(signum, pass_on) for signum in stop_signals}
    try:
        while True:
            try:
                code = child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if stop_asked and time.monotonic() - stop_asked[0] > grace_s:
                    child.kill()
    finally:
        if child.poll() is None:  # this process is leaving for another reason (an error): so does the server
            child.kill()
            child.wait()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return 128 - code if code < 0 else code  # killed by a signal: the shell's 128+N


def cmd_ui(args) -> int:
    import math

    from pmforge.core.settings import get_settings

    app = Path(__file__).with_name("app.py")
    command = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.port", str(args.port), "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.address", args.address,
        # The uploader refuses what ingestion would refuse anyway.
        "--server.maxUploadSize", str(max(1, math.ceil(get_settings().max_upload_mb))),
        "--client.toolbarMode", "minimal",
        "--runner.magicEnabled", "false",  # a bare expression in app code must never render as a widget
    ]
    return _serve_until_stopped(command, get_settings().ui_stop_grace_s)


def cmd_new(args) -> int:
    from pmforge.project.project import Project

    project = Project.create(_services(), args.name)
    print(f"Created project '{project.ws.slug}' in {project.ws.root}")
    return 0


def cmd_projects(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.core.workspace import display_names

    for slug, name in display_names(get_settings().projects_root()).items():
        print(f"{slug}\t{name}")
    return 0


def _existing(projects_root: Path, name: str):
    from pmforge.core.workspace import Workspace

    try:
        return Workspace.open(projects_root, name)
    except ForgeError:  # not the "create it" hint: these commands act on a project that exists
        raise ForgeError(f"There is no project called '{name}' (`forge projects` lists them).") from None


def cmd_rename(args) -> int:
    from pmforge.core.settings import get_settings

    ws = _existing(get_settings().projects_root(), args.project)
    before = ws.read_display_name()
    after = ws.rename(args.name)
    print(f"Renamed '{before}' to '{after}'; its folder and the name commands take stay '{ws.slug}'.")
    return 0


def cmd_delete_project(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.project.project import delete_project

    settings = get_settings()
    ws = _existing(settings.projects_root(), args.project)
    if not args.yes:
        _confirm_deletion(ws, settings)
    print(delete_project(_services(), ws.slug, on_wait=lambda text: print(text, file=sys.stderr, flush=True)))
    return 0


def _ask(question: str, needs: str, anyway: str) -> str:
    """The PM's answer to `question`, typed on the terminal; one sentence instead when there is no terminal
    to ask on (a script, a pipe): `needs` says what needs confirming, `anyway` how to go ahead."""
    if not sys.stdin.isatty():
        raise ForgeError(f"{needs}, and there is no terminal to ask on; {anyway}.")
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline()


def _confirm_deletion(ws, settings) -> None:
    """Ask on the terminal for the project's name; refuse when there is no terminal to ask on."""
    from pmforge.project.project import confirms_deletion, deletion_warning

    typed = _ask(f"{deletion_warning(ws, settings)}\nType the project's name ({ws.slug}) to delete it: ",
                 f"Deleting project '{ws.slug}' needs a typed confirmation", "add --yes to delete it anyway")
    if not confirms_deletion(typed, ws):
        raise ForgeError(f"Nothing was deleted: what you typed is not '{ws.slug}'.")


def cmd_ingest(args) -> int:
    from pmforge.ingest.pipeline import ingest_file

    project = _open(_services(), args.project)
    failures = 0
    for path in map(Path, args.files):
        if not path.is_file():
            print(f"{path} does not exist or is not a file.", file=sys.stderr)
            failures += 1
            continue
        result = ingest_file(project, path.name, path.read_bytes(), _progress_bar)
        print(result.message, file=sys.stdout if result.ok else sys.stderr)
        failures += not result.ok
    return 1 if failures else 0


def cmd_files(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.project.project import listed_files

    files = listed_files(get_settings(), args.project)  # the file list alone: no vector store needed
    _show_notices()
    for f in files:
        print(f"{f.filename}\t{f.uploaded_at}\t{f.chunk_count} passages\t{f.status}\t{f.summary}")
    return 0


def cmd_delete(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.core.workspace import Workspace
    from pmforge.ingest.pipeline import delete_file

    ws = Workspace.open(get_settings().projects_root(), args.project)
    if ws.load_manifest().find(args.filename) is None:  # a typo is no interrupted operation
        raise ForgeError(f"There is no file called '{args.filename}' in project '{ws.slug}' (`forge files "
                         f"{ws.slug}` lists them).")
    print(delete_file(_open(_services(), args.project), args.filename))
    return 0


def cmd_reindex(args) -> int:
    from pmforge.project.project import Project
    from pmforge.upkeep.reindex import reindex

    project = Project.open(_services(), args.project)
    if args.force:
        print(_force_plan(project), file=sys.stderr, flush=True)  # said before it is done
    done = reindex(project, _progress_bar, force=args.force)
    if project.kept_index:  # nothing was built: the index there was stays in use
        raise ForgeError(done)
    print(done)
    return 0


def _force_plan(project) -> str:
    files = sum(1 for f in project.manifest().file_summaries if f.indexed)
    turns = project.ws.load_state().turn_count
    where = (f"{project.store.location}, every clone's files and turns included" if project.store.shared
             else project.store.location)
    return (f"Re-embedding this clone's {files} file(s) and {turns} turn(s) of '{project.ws.slug}', then replacing "
            f"the vectors in {where} with them; other clones add theirs back when they next open it.")


def cmd_doctor(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.core.workspace import Workspace, take_notices
    from pmforge.project.project import Project
    from pmforge.upkeep import doctor

    merged = []
    if args.fix:  # a git merge first: opening a project on a server reads its manifest
        merged = Workspace.open(get_settings().projects_root(), args.project).resolve_conflicts().lines
    project = Project.open(_services(), args.project)  # quick repairs of an interrupted operation
    if project.recovered and not args.fix:
        doctor.repair(project)  # forge doctor finishes what the crash interrupted (re-indexing included)
    report = doctor.repair(project) if args.fix else doctor.examine(project)
    report.recovered = project.recovered
    report.repaired = merged + report.repaired
    for notice in take_notices():  # shown once, as part of the report
        if notice not in report.repaired:
            report.repaired.append(notice)
    if args.json:
        print(json.dumps(report.as_dict()))
        return 0 if report.consistent else 1
    if report.recovered:
        print(f"Finished an operation a crash interrupted ({report.recovered}).")
    for line in report.repaired:
        print(f"repaired: {line}")
    for line in report.notes:
        print(f"note: {line}")
    t = report.totals
    print(f"Project '{report.project}': {counted(t['files'], 'file')} ({t['indexed_files']} indexed), "
          f"{counted(t['passages'], 'passage')}, {counted(t['turns'], 'turn')}.")
    if report.consistent:
        print("Consistent: uploads, converted files, file list, vector store, keyword indexes and transcript agree.")
        return 0
    print(f"{counted(len(report.findings), 'problem')}:")
    for f in report.findings:
        print(f"  - [{f.layer}] {f.problem} (--fix: {f.repair})")
    if not args.fix:
        print(f"Run `forge doctor {report.project} --fix` to repair them.")
    return 1



def cmd_migrate(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.core.workspace import Workspace
    from pmforge.embed import make_embedder
    from pmforge.upkeep.migrate import migrate

    settings = get_settings()
    if args.host:
        settings = settings.model_copy(update={"chroma_host": args.host, "chroma_port": args.port or 8000})
    ws = Workspace.open(settings.projects_root(), args.project)
    print(migrate(ws, make_embedder(settings), settings, "server" if args.to_server else "local"))
    return 0


def cmd_chat(args) -> int:
    from pmforge.core.settings import get_settings

    project = _open(_services(), args.project)
    _show_notices()
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
            _show_notices(but=str(exc))
            # The app keeps a failed message in its box; here it is handed back, so that promise is left out.
            print(f"{without_kept_note(str(exc)).rstrip('.')}. Your message was not saved; here it is to send "
                  f"again:\n{message}",
                  file=sys.stderr, flush=True)
            failed += 1
    return 1 if failed else 0


def _answer(project, message: str, as_json: bool, verbose: bool = False) -> None:
    from pmforge.turn.orchestrator import start_turn

    pending = start_turn(project, message)
    if as_json:
        record = pending.finish()
        print(json.dumps(record.model_dump(mode="json"), ensure_ascii=False), flush=True)
        return
    print(f"\n> {message}\n")
    for delta in pending:
        print(delta, end="", flush=True)
    record = pending.finish()
    print()
    if verbose:  # for people tuning Forge, not for PMs: on stderr, so the reply itself stays clean
        print(f"[turn {record.turn} · phase A {record.tokens.phase_a} tok · phase B {record.tokens.phase_b} tok]",
              file=sys.stderr, flush=True)


def cmd_undo(args) -> int:
    """Take back the latest turn: show it, ask (unless --yes), then undo exactly that turn."""
    from pmforge.project.undo import turn_to_undo, undo_last_turn

    project = _open(_services(), args.project)
    _show_notices()
    turn = turn_to_undo(project)
    first_line = next((line.strip() for line in turn.user.splitlines() if line.strip()), "")
    print(f"Turn {turn.number}: {first_line}")
    if not args.yes:
        answer = _ask("Take back this turn and Forge's reply to it? [y/N] ",
                      "Taking back a reply needs a confirmation", "add --yes to take it back anyway")
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing was taken back.", file=sys.stderr)
            return 1
    undo_last_turn(project, turn_id=turn.id)
    print(f"Took back turn {turn.number}; the next message becomes turn {turn.number}.")
    return 0


def cmd_bench(args) -> int:
    if args.what == "ingest":
        from pmforge.surfaces.bench.ingest import bench_ingest

        figures = bench_ingest(words=args.words)
    elif args.what == "recall":
        from pmforge.surfaces.bench.recall import bench_recall

        figures = bench_recall(turns=args.turns or 360, retriever=args.retriever)
    elif args.what == "rerun":
        from pmforge.surfaces.bench.rerun import bench_rerun

        figures = bench_rerun(turns=args.turns or 300, files=args.files)
    elif args.what == "soak":
        from pmforge.surfaces.bench.soak import bench_soak

        figures = bench_soak(turns=args.turns or 1000, operations=args.ops)
    elif args.what == "understand":
        from pmforge.surfaces.bench.understand import bench_understand

        figures = bench_understand(Path(args.dir))
    elif args.what == "cli":
        from pmforge.surfaces.bench.cli import bench_cli

        figures = bench_cli(turns=args.turns or 8)
    elif args.what == "latency":
        from pmforge.surfaces.bench.latency import bench_latency

        figures = bench_latency(chunks=args.chunks, turns=args.turns or 1000)
    elif args.what == "cost":
        from pmforge.surfaces.bench.cost import bench_cost, markdown

        figures = bench_cost(turns=args.turns or 100)
        if not args.json:  # the README's block, as printed
            print(markdown(figures))
            return 0
    elif args.what == "ui":
        from pmforge.surfaces.bench.ui import bench_ui, format_table

        figures = bench_ui(turns=args.turns or 10)
        if not args.json:  # a short table for a person; --json for scripts
            print(format_table(figures))
            return 0
    else:
        from pmforge.surfaces.bench.prompt import bench_prompt

        figures = bench_prompt(args.turns or 100, chart=Path(args.chart) if args.chart else None,
                               workload=args.workload)
        if not args.json:
            figures.pop("series")
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))
    return 0


def cmd_eval(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.surfaces import evaluation
    settings = get_settings()
    if args.what == "sessions":
        return _eval_sessions(args, settings)
    if args.what == "answers":
        from pmforge.surfaces.answer_eval import evaluate_answers
        if not args.dir:
            raise ForgeError("forge eval answers needs --dir DIR (the files and questions.jsonl).")
        figures = evaluate_answers(Path(args.dir), settings)
        if not args.json:
            figures = {k: v for k, v in figures.items() if k != "missed"} | {"missed": len(figures["missed"])}
    elif args.what == "docs":
        if not (args.corpus and args.questions):
            raise ForgeError("forge eval docs needs --corpus DIR and --questions FILE.jsonl.")
        retriever = args.retriever or settings.document_retriever
        figures = evaluation.eval_docs(Path(args.corpus), Path(args.questions), args.k, retriever, settings,
                                       as_turn=args.as_turn, budget=args.budget)
    else:
        if not (args.conversation and args.questions):
            raise ForgeError("forge eval memory needs --conversation FILE.jsonl and --questions FILE.jsonl.")
        retriever = args.retriever or settings.conversation_retriever
        figures = evaluation.eval_memory(Path(args.conversation), Path(args.questions), args.k, retriever, settings,
                                         as_turn=args.as_turn, budget=args.budget)
    if args.json:
        print(json.dumps(figures))
    else:
        width = max(map(len, figures))
        for key, value in figures.items():
            print(f"{key:<{width}}  {value}")
    return 0


def _eval_sessions(args, settings) -> int:
    from pmforge.surfaces import session_eval
    if not args.dir:
        raise ForgeError("forge eval sessions needs --dir DIR (NAME.conversation.jsonl + NAME.gold.json files).")
    report = session_eval.evaluate_sessions(
        Path(args.dir), settings, only=args.only, keep=Path(args.keep) if args.keep else None
    )
    print(json.dumps(report, ensure_ascii=False) if args.json else session_eval.table(report))
    return 0


# `forge brief` kind -> artifact kind, and the formats each can be written in (json: the scored record).
BRIEF_KINDS: dict[str, tuple[ArtifactKind, tuple[str, ...]]] = {
    "problem-brief": ("problem_brief", ("md", "docx", "json")),
    "solution-evaluation": ("solution_evaluation", ("md", "docx", "json")),
    "register": ("assumption_register", ("csv", "json")),
}


def cmd_brief(args) -> int:
    from pmforge.outputs import artifacts
    from pmforge.project.project import Project
    from pmforge.surfaces.session_eval import scored_record

    kind, formats = BRIEF_KINDS[args.kind]
    if args.format not in formats:
        raise ForgeError(f"The {args.kind.replace('-', ' ')} comes as {', '.join(formats[:-1])} or {formats[-1]}, "
                         f"not {args.format}.")
    project = Project.open(_services(), args.project)
    state = project.state()
    if args.format == "json":
        # The whole record whatever --kind says: it is the one shape `forge eval sessions` scores.
        print(json.dumps(scored_record(state), indent=2, ensure_ascii=False))
        return 0
    with project.ws.locked():  # as the sidebar does: no other process writes the folder meanwhile
        result = artifacts.generate(project.ws, state, project.manifest(), kind, project.catalogue())
    print(next(p for p in result.paths if p.suffix == f".{args.format}"))
    if result.missing:
        print(f"Still to be confirmed: {', '.join(result.missing)}.", file=sys.stderr)
    return 0


def cmd_export(args) -> int:
    """The transcript as Markdown or Word: into the project's artifacts/ folder, to --out, or to stdout (-)."""
    from pmforge.core.settings import get_settings
    from pmforge.core.workspace import Workspace, atomic_write_bytes
    from pmforge.outputs.export import transcript_bytes, transcript_file_name

    ws = Workspace.open(get_settings().projects_root(), args.project)
    state = ws.load_state()
    title = ws.load_manifest().display_name or state.project_name or ws.slug
    data = transcript_bytes(state, title, args.format)
    if args.out == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    if args.out:
        path = Path(args.out)
        if not path.parent.is_dir():
            raise ForgeError(f"The folder {path.parent} does not exist; create it or choose another --out.")
        atomic_write_bytes(path, data)
    else:
        with ws.locked():  # as `forge brief` does: no other process writes the folder meanwhile
            ws.artifacts.mkdir(parents=True, exist_ok=True)
            path = ws.artifacts / transcript_file_name(ws.slug, args.format)
            atomic_write_bytes(path, data)
    print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="forge", description="Forge: a discovery copilot for product managers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ui", help="launch the Streamlit app")
    p.add_argument("--port", type=int, default=8501)
    p.add_argument("--address", default="127.0.0.1")
    p.set_defaults(func=cmd_ui)

    p = sub.add_parser("new", help="create a project")
    p.add_argument("name")
    p.set_defaults(func=cmd_new)

    p = sub.add_parser("projects", help="list projects, most recent first: slug<TAB>display name")
    p.set_defaults(func=cmd_projects)

    p = sub.add_parser("rename", help="change a project's display name (its folder keeps its slug)")
    p.add_argument("project")
    p.add_argument("name")
    p.set_defaults(func=cmd_rename)

    p = sub.add_parser("delete-project", help="delete a project's folder and its vectors (embedded or on the "
                                              "Chroma server)")
    p.add_argument("project")
    p.add_argument("--yes", action="store_true", help="do not ask for the project's name first")
    p.set_defaults(func=cmd_delete_project)

    p = sub.add_parser("ingest", help="upload files into a project (same path as the sidebar)")
    p.add_argument("project")
    p.add_argument("files", nargs="+")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("files", help="list a project's files")
    p.add_argument("project")
    p.set_defaults(func=cmd_files)

    p = sub.add_parser("delete", help="delete a file from a project")
    p.add_argument("project")
    p.add_argument("filename")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser(
        "chat", help="talk to Forge from the command line",
        description="Send messages to a project's session. With -m, each -m is one message. Without -m, Forge "
                    "reads standard input: each line you type (or pipe in) is one message, answered before the "
                    "next is read; end with Ctrl-D (Ctrl-Z then Enter on Windows).")
    p.add_argument("project")
    p.add_argument("-m", "--message", action="append",
                   help="a message (repeatable); without -m, one message per line of standard input until Ctrl-D")
    p.add_argument("--json", action="store_true", help="print one JSON record per turn")
    p.add_argument("--verbose", action="store_true", help="after each reply, the turn number and prompt tokens "
                                                          "(on stderr)")
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("undo", help="take back Forge's latest reply, as if that turn never happened")
    p.add_argument("project")
    p.add_argument("--yes", action="store_true", help="do not ask before taking it back")
    p.set_defaults(func=cmd_undo)

    p = sub.add_parser("eval", help="measure retrieval or whole-session quality on a labelled set")
    p.add_argument("what", choices=["docs", "memory", "sessions", "answers"])
    p.add_argument("--corpus", help="docs: a folder of .md/.docx files")
    p.add_argument("--conversation", help="memory: JSONL rows {id, role, text}")
    p.add_argument("--questions", help="JSONL questions with references (docs) or evidence (memory)")
    p.add_argument("-k", type=int, default=4, help="sections or turns retrieved per question")
    p.add_argument("--retriever", default=None, help="vector, bm25 or hybrid (default: the app's setting)")
    p.add_argument("--as-turn", action="store_true",
                   help="docs/memory: score what a turn's prompt section really shows (query, packing, budget)")
    p.add_argument("--budget", type=int, default=None, metavar="TOKENS",
                   help="with --as-turn: the documents or conversations section budget (default: the app's)")
    p.add_argument("--dir", help="sessions: a folder of NAME.conversation.jsonl + NAME.gold.json; answers: the files "
                                 "and questions.jsonl")
    p.add_argument("--only", metavar="NAME", help="sessions: run this one session")
    p.add_argument("--keep", metavar="DIR", help="sessions: keep the scratch projects in DIR for inspection")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("brief", help="write a project's brief or register, or print the scored record (json)")
    p.add_argument("project")
    p.add_argument("--kind", choices=list(BRIEF_KINDS), default="problem-brief")
    p.add_argument("--format", choices=["md", "docx", "json", "csv"], default="md")
    p.set_defaults(func=cmd_brief)

    p = sub.add_parser("export", help="write a project's transcript as Markdown or Word")
    p.add_argument("project")
    p.add_argument("--format", choices=["md", "docx"], default="md")
    p.add_argument("--out", metavar="FILE", help="where to write it (- for stdout); default: the project's artifacts/")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("bench", help="print performance figures")
    p.add_argument("what", choices=["cli", "cost", "ingest", "prompt", "recall", "latency", "rerun", "soak", "understand",
                                    "ui"])
    p.add_argument("--dir", default="benchmarks/sessions/dev", help="understand: a folder of discovery sessions")
    p.add_argument("--words", type=int, default=15_000, help="ingest: size of the generated report")
    p.add_argument("--turns", type=int,
                   help="cli (8), cost (100), prompt (100), recall (360), latency (1000), rerun (300), soak (1000), "
                        "ui (10): session length")
    p.add_argument("--ops", type=int, default=200, help="soak: random uploads, replacements and deletions")
    p.add_argument("--chunks", type=int, default=10_000, help="latency: document chunks in the store")
    p.add_argument("--files", type=int, default=50, help="rerun: files in the project")
    p.add_argument("--retriever", choices=["vector", "bm25", "hybrid"], help="recall: override the configured one")
    p.add_argument("--chart", help="prompt: write a PNG chart of the three curves here")
    p.add_argument("--workload", choices=["default", "heavy"], default="default",
                   help="prompt: 'heavy' = long messages, replies near the output cap, near-2,000-token document "
                        "sections and a long org context, every tool-loop round counted")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("reindex", help="add to a project's vectors what its uploads/ and transcript need "
                                         "(nothing is dropped)")
    p.add_argument("project")
    p.add_argument("--force", action="store_true",
                   help="drop the project's vectors (on a shared server, every clone's) and rebuild them")
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser("doctor", help="check that files, manifest, vectors, keywords and transcript agree")
    p.add_argument("project")
    p.add_argument("--fix", action="store_true", help="repair what disagrees (re-ingest, drop orphans, rebuild)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("migrate", help="copy a project's vectors to a Chroma server, or back")
    p.add_argument("project")
    direction = p.add_mutually_exclusive_group(required=True)
    direction.add_argument("--to-server", action="store_true", help="embedded store → CHROMA_HOST server")
    direction.add_argument("--to-local", action="store_true", help="CHROMA_HOST server → embedded store")
    p.add_argument("--host", help="the Chroma server (default: CHROMA_HOST)")
    p.add_argument("--port", type=int, help="its port (default: CHROMA_PORT, or 8000 with --host)")
    p.set_defaults(func=cmd_migrate)
    return parser


def _show_notices(but: str = "") -> None:
    """What the user must hear though the command went on (a session set aside, an upload left
    interrupted): on stderr, once."""
    from pmforge.core.workspace import take_notices

    for notice in take_notices():
        if notice != but:
            print(notice, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _start_log()
        code = args.func(args)
    except ForgeError as exc:
        _show_notices(but=str(exc))
        print(str(exc), file=sys.stderr)
        return 1
    except OSError as exc:  # the disk or a setting, not Forge: one sentence, not a traceback
        _show_notices()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"Forge could not read or write a file{where}: {exc.strerror or exc}.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    _show_notices()
    return code


if __name__ == "__main__":
    sys.exit(main())
