"""`forge reindex`, `doctor`, `migrate`: keeping a project's index sound and moving it."""

from __future__ import annotations

import json
import sys

from pmforge.core.errors import ForgeError
from pmforge.core.words import counted
from pmforge.surfaces.cli.common import progress_bar, services


def cmd_reindex(args) -> int:
    from pmforge.project.project import Project
    from pmforge.upkeep.reindex import reindex

    project = Project.open(services(), args.project)
    if args.force:
        print(_force_plan(project), file=sys.stderr, flush=True)  # said before it is done
    done = reindex(project, progress_bar, force=args.force)
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
    project = Project.open(services(), args.project)  # quick repairs of an interrupted operation
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
