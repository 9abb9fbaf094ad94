"""The `forge` command's parser and entry point: every subcommand calls the same functions the app calls.

User mistakes end with one plain sentence on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import sys

from pmforge.core.errors import ForgeError
from pmforge.surfaces.cli.chat import cmd_chat, cmd_undo
from pmforge.surfaces.cli.common import show_notices
from pmforge.surfaces.cli.files import cmd_delete, cmd_files, cmd_ingest
from pmforge.surfaces.cli.measure import cmd_bench, cmd_eval
from pmforge.surfaces.cli.outputs import BRIEF_KINDS, cmd_brief, cmd_export
from pmforge.surfaces.cli.projects import cmd_delete_project, cmd_new, cmd_projects, cmd_rename
from pmforge.surfaces.cli.serve import cmd_ui
from pmforge.surfaces.cli.upkeep import cmd_doctor, cmd_migrate, cmd_reindex


def _start_log() -> None:
    from pmforge.core import logs
    from pmforge.core.settings import get_settings
    try:
        logs.configure(get_settings())
    except OSError as exc:  # an unwritable log folder must not stop the command
        print(f"Forge could not open its log ({exc.strerror}); continuing without it.", file=sys.stderr)


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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _start_log()
        code = args.func(args)
    except ForgeError as exc:
        show_notices(but=str(exc))
        print(str(exc), file=sys.stderr)
        return 1
    except OSError as exc:  # the disk or a setting, not Forge: one sentence, not a traceback
        show_notices()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"Forge could not read or write a file{where}: {exc.strerror or exc}.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    show_notices()
    return code


if __name__ == "__main__":
    sys.exit(main())
