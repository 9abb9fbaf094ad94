"""`forge brief` and `export`: what a session produced."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pmforge.core.errors import ForgeError
from pmforge.surfaces.cli.common import services

if TYPE_CHECKING:
    from pmforge.outputs.artifacts import ArtifactKind

# `forge brief` kind -> artifact kind, and the formats each can be written in (json: the scored record).
BRIEF_KINDS: dict[str, tuple[ArtifactKind, tuple[str, ...]]] = {
    "problem-brief": ("problem_brief", ("md", "docx", "json")),
    "solution-evaluation": ("solution_evaluation", ("md", "docx", "json")),
    "register": ("assumption_register", ("csv", "json")),
}


def cmd_brief(args) -> int:
    from pmforge.outputs import artifacts
    from pmforge.outputs.record import scored_record
    from pmforge.project.project import Project

    kind, formats = BRIEF_KINDS[args.kind]
    if args.format not in formats:
        raise ForgeError(f"The {args.kind.replace('-', ' ')} comes as {', '.join(formats[:-1])} or {formats[-1]}, "
                         f"not {args.format}.")
    project = Project.open(services(), args.project)
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
