"""What the app keeps for one browser window between Streamlit's reruns, typed in one place.

Widgets keep their values under their own keys, as Streamlit requires (the menus' open flags, the
rename and delete text boxes, the ticks on questions: `WidgetKeys`). Everything the app decides for
itself lives in one `AppState`, stored under a single session key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import streamlit as st

if TYPE_CHECKING:
    from pmforge.surfaces.ui.jobs import ProjectJobs

EAGER_TURNS = 20  # older turns render on request: reruns stay cheap in a 300-turn session
_KEY = "forge"


@dataclass
class AppState:
    project: str | None = None  # the open project's folder name
    project_toast: str = ""  # said once after a rename or a delete
    create_error: str = ""
    rename_error: str = ""
    delete_error: str = ""
    confirm_delete: str | None = None  # the file whose Delete was clicked, awaiting Yes or Cancel
    notices: list[tuple[bool, str]] = field(default_factory=list)  # (ok, text): shown on the next run, once
    # Each uploader is used once: a deleted file is never re-ingested from an uploader that still holds it.
    uploader_round: int = 0
    ingested: set[tuple[str, int, str, str]] = field(default_factory=set)  # (project, round, name, sha256)
    index_checked: set[str] = field(default_factory=set)  # projects whose index was brought up to date
    jobs: dict[str, ProjectJobs] = field(default_factory=dict)  # each project's queue of uploads and messages
    kept_message: str = ""  # a message that was not answered, offered to send again
    kept_reason: str = ""
    turn_error: str = ""
    history_shown: int = EAGER_TURNS  # how many of the latest turns are drawn
    restore_view: bool = False  # after a rename: back to where the PM was, not turn 1
    starter: str = ""  # a starter prompt the PM clicked, sent as their message on this run
    demo_reset_asked: bool = False
    demo_restored: bool = False
    examples_opened: set[str] = field(default_factory=set)  # examples already opened at their top
    example_shown: str = ""  # an example opened at its top in this run (noted once the run completes)
    developer_details: bool = False  # kept apart from the toggle's key, so it survives reruns without it

    def take_notices(self) -> list[tuple[bool, str]]:
        notices, self.notices = self.notices, []
        return notices


class WidgetKeys:
    """Session keys that belong to widgets (Streamlit stores a widget's value under its key)."""

    NEW_MENU, RENAME_MENU, DELETE_MENU = "new_project_menu", "rename_project_menu", "delete_project_menu"
    DEVELOPER_TOGGLE = "developer_details_toggle"
    NEW_PROJECT_NAME = "new_project_name"
    PICKS = "pick-"  # + a turn's number: the ticks on its questions

    @staticmethod
    def rename(slug: str) -> str:
        return f"rename-{slug}"

    @staticmethod
    def delete(slug: str) -> str:
        return f"delete-{slug}"

    @staticmethod
    def picks(turn_number: int) -> str:
        return f"{WidgetKeys.PICKS}{turn_number}"

    @staticmethod
    def edit_text(turn_id: str) -> str:
        return f"edit-text-{turn_id}"


def app_state() -> AppState:
    """This window's state, made on its first run."""
    state = st.session_state.get(_KEY)
    if not isinstance(state, AppState):
        state = st.session_state[_KEY] = AppState()
    return state


def forget_widgets(prefix: str) -> None:
    """Drop the values of widgets whose keys start with `prefix` (e.g. ticks on turns that are gone)."""
    for key in [k for k in st.session_state if str(k).startswith(prefix)]:
        del st.session_state[key]
