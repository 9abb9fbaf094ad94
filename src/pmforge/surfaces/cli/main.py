"""The `forge` command's parser and entry point: every subcommand calls the same functions the app calls.

User mistakes end with one plain sentence on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import entry_points

from pmforge.core.errors import ForgeError
from pmforge.surfaces.cli.chat import cmd_chat, cmd_undo
from pmforge.surfaces.cli.common import show_notices
from pmforge.surfaces.cli.files import cmd_delete, cmd_files, cmd_ingest
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
    add_measuring_commands(sub)
    return parser


# `forge bench` and `forge eval` come with Forge's benchmark tools, a part installed on its own (benchmarks/):
# they register through this entry-point group, so the product never imports them.
COMMANDS_GROUP = "pmforge.commands"
MEASURING = {"bench": "print performance figures",
             "eval": "measure retrieval or whole-session quality on a labelled set"}


def add_measuring_commands(sub) -> None:
    for entry in entry_points(group=COMMANDS_GROUP):
        entry.load()(sub)
    for name, help_text in MEASURING.items():
        if name not in sub.choices:
            p = sub.add_parser(name, help=f"{help_text} (needs Forge's benchmark tools)")
            p.add_argument("rest", nargs=argparse.REMAINDER)
            p.set_defaults(func=_not_installed)


def _not_installed(args) -> int:
    raise ForgeError(f"forge {args.command} comes with Forge's benchmark tools, which are not installed here: run "
                     "./scripts/setup bench (or pip install -e ./benchmarks).")


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
