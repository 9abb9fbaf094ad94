"""The one exception type whose message is shown to users as-is."""

from __future__ import annotations

import re


class ForgeError(Exception):
    """A problem the user can act on. `str(error)` is one plain sentence, never a traceback."""


# How a failed turn's sentence promises the message is kept: "…; your message is kept, try again." and
# "…. Your message is kept." (the app keeps it in the input box).
_KEPT_MID = re.compile(r"[;,]\s*your message is kept,\s*", re.I)
_KEPT_END = re.compile(r"(?:[;,]\s*|\.\s+|\s+\(|\s+and\s+)your message is kept\)?(?=[.)]?\s*$)", re.I)


def without_kept_note(message: str) -> str:
    """A failure's sentence without its promise that the message is kept, for a surface that deals with the
    message itself (the terminal hands it back; the router loses nothing)."""
    return _KEPT_END.sub("", _KEPT_MID.sub("; ", message)).strip()
