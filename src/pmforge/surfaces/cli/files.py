"""`forge ingest`, `files`, `delete`: a project's uploads."""

from __future__ import annotations

import sys
from pathlib import Path

from pmforge.core.errors import ForgeError
from pmforge.surfaces.cli.common import open_project, progress_bar, services, show_notices


def cmd_ingest(args) -> int:
    from pmforge.ingest.pipeline import ingest_file

    project = open_project(services(), args.project)
    failures = 0
    for path in map(Path, args.files):
        if not path.is_file():
            print(f"{path} does not exist or is not a file.", file=sys.stderr)
            failures += 1
            continue
        result = ingest_file(project, path.name, path.read_bytes(), progress_bar)
        print(result.message, file=sys.stdout if result.ok else sys.stderr)
        failures += not result.ok
    return 1 if failures else 0


def cmd_files(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.project.project import listed_files

    files = listed_files(get_settings(), args.project)  # the file list alone: no vector store needed
    show_notices()
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
    print(delete_file(open_project(services(), args.project), args.filename))
    return 0
