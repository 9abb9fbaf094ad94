"""Forge's log: one rotating file in a git-ignored folder (`FORGE_LOG_DIR`, default `./logs`).

What is logged is operational — which turn, which probe, how many tokens and passages, what failed and
why — never the text of documents or messages, and never a key: a filter masks the configured keys
should one ever reach a message (an exception text quoting a header, say).
"""

from __future__ import annotations

import logging
from logging.handlers import RotatingFileHandler
from pathlib import Path

from pmforge.core.settings import Settings

LOGGER = "pmforge"


class RedactKeys(logging.Filter):
    def __init__(self, secrets: list[str]):
        super().__init__()
        self.secrets = [s for s in secrets if len(s) >= 8]

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if any(secret in text for secret in self.secrets):
            for secret in self.secrets:
                text = text.replace(secret, "[redacted]")
            record.msg, record.args = text, ()
        return True


class _ForgeLog(RotatingFileHandler):
    """forge.log's handler; `forge_log` (the file's path) tells it apart from handlers others added."""

    forge_log = ""


def configure(settings: Settings) -> Path:
    """Send Forge's log records to `<log_dir>/forge.log` (once per process and folder)."""
    folder = Path(settings.log_dir).expanduser().resolve()
    path = folder / "forge.log"
    logger = logging.getLogger(LOGGER)
    for handler in logger.handlers:
        if getattr(handler, "forge_log", None) == str(path):
            return path
    for handler in [h for h in logger.handlers if getattr(h, "forge_log", None)]:
        logger.removeHandler(handler)  # settings changed (tests, another projects folder)
        handler.close()
    folder.mkdir(parents=True, exist_ok=True)
    own = _ForgeLog(path, maxBytes=settings.log_max_bytes, backupCount=settings.log_backups, encoding="utf-8")
    own.forge_log = str(path)
    own.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    keys = [k.get_secret_value() for k in (settings.anthropic_api_key, settings.voyage_api_key) if k]
    own.addFilter(RedactKeys(keys))
    logger.addHandler(own)
    logger.setLevel(logging.INFO)
    return path
