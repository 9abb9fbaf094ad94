"""`forge new`, `projects`, `rename`, `delete-project`."""

from __future__ import annotations

import sys

from pmforge.core.errors import ForgeError
from pmforge.surfaces.cli.common import ask, existing_project, services


def cmd_new(args) -> int:
    from pmforge.project.project import Project

    project = Project.create(services(), args.name)
    print(f"Created project '{project.ws.slug}' in {project.ws.root}")
    return 0


def cmd_projects(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.core.workspace import display_names

    for slug, name in display_names(get_settings().projects_root()).items():
        print(f"{slug}\t{name}")
    return 0


def cmd_rename(args) -> int:
    from pmforge.core.settings import get_settings

    ws = existing_project(get_settings().projects_root(), args.project)
    before = ws.read_display_name()
    after = ws.rename(args.name)
    print(f"Renamed '{before}' to '{after}'; its folder and the name commands take stay '{ws.slug}'.")
    return 0


def _confirm_deletion(ws, settings) -> None:
    """Ask on the terminal for the project's name; refuse when there is no terminal to ask on."""
    from pmforge.project.project import confirms_deletion, deletion_warning

    typed = ask(f"{deletion_warning(ws, settings)}\nType the project's name ({ws.slug}) to delete it: ",
                 f"Deleting project '{ws.slug}' needs a typed confirmation", "add --yes to delete it anyway")
    if not confirms_deletion(typed, ws):
        raise ForgeError(f"Nothing was deleted: what you typed is not '{ws.slug}'.")


def cmd_delete_project(args) -> int:
    from pmforge.core.settings import get_settings
    from pmforge.project.project import delete_project

    settings = get_settings()
    ws = existing_project(settings.projects_root(), args.project)
    if not args.yes:
        _confirm_deletion(ws, settings)
    print(delete_project(services(), ws.slug, on_wait=lambda text: print(text, file=sys.stderr, flush=True)))
    return 0
