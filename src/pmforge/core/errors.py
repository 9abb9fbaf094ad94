"""The one exception type whose message is shown to users as-is."""


class ForgeError(Exception):
    """A problem the user can act on. `str(error)` is one plain sentence, never a traceback."""
