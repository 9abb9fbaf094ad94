"""What the commands share: opening a project (catching its store up), progress on a terminal, asking, notices."""

from __future__ import annotations

import sys
from pathlib import Path

from pmforge.core.errors import ForgeError


def services():
    from pmforge.project.services import Services

    return Services.from_settings()


def open_project(services, name: str):
    """Open a project, first adding to its store what this clone's files and transcript need (a catch-up
    that never drops anything: the store may be shared with other clones)."""
    from pmforge.project.project import Project

    project = Project.open(services, name)
    reason = project.reindex_reason()
    if reason:
        from pmforge.upkeep.reindex import reindex  # with the ingestion modules: only for a catch-up

        print(f"Catching up the vector store of '{project.ws.slug}' because {reason} "
              f"(`forge reindex {project.ws.slug}` does this on demand)…", file=sys.stderr)
        print(reindex(project, progress_bar), file=sys.stderr)
    return project


def progress_bar(stage: str, done: int, total: int) -> None:
    if not sys.stderr.isatty():
        return
    width = 24
    filled = int(width * done / total) if total else width
    sys.stderr.write(f"\r{stage:<28} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
    if stage == "Done":
        sys.stderr.write("\n")
    sys.stderr.flush()


def existing_project(projects_root: Path, name: str):
    from pmforge.core.workspace import Workspace

    try:
        return Workspace.open(projects_root, name)
    except ForgeError:  # not the "create it" hint: these commands act on a project that exists
        raise ForgeError(f"There is no project called '{name}' (`forge projects` lists them).") from None


def ask(question: str, needs: str, anyway: str) -> str:
    """The PM's answer to `question`, typed on the terminal; one sentence instead when there is no terminal
    to ask on (a script, a pipe): `needs` says what needs confirming, `anyway` how to go ahead."""
    if not sys.stdin.isatty():
        raise ForgeError(f"{needs}, and there is no terminal to ask on; {anyway}.")
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline()


def show_notices(but: str = "") -> None:
    """What the user must hear though the command went on (a session set aside, an upload left
    interrupted): on stderr, once."""
    from pmforge.core.workspace import take_notices

    for notice in take_notices():
        if notice != but:
            print(notice, file=sys.stderr, flush=True)
