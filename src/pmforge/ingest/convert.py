"""Turn an upload into Markdown. Markdown is read as-is (so offsets are exact) but for its line ends,
which become "\n" here, once, for every kind of upload; DOCX goes through MarkItDown after checking
that the bytes really are a Word document, and through Forge's plain reader (`docx_text`) when
MarkItDown refuses it or runs out of budget.

Decoding and converting run in a worker process (`worker.py`) under a time and memory budget:
a hostile file is refused in one sentence instead of hanging or exhausting Forge.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pmforge.core.errors import ForgeError
from pmforge.ingest.docx_text import TooMuchText, read_docx_text

log = logging.getLogger(__name__)

MARKDOWN_EXTENSIONS = (".md", ".markdown")
DOCX_EXTENSIONS = (".docx",)
SUPPORTED = MARKDOWN_EXTENSIONS + DOCX_EXTENSIONS

MAX_UNPACKED_BYTES = 400_000_000
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Characters no text file is made of: control codes other than tab, line and page breaks and ESC
# (terminal colours), DEL, C1 controls and the decoder's replacement character.
_JUNK = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]")
MAX_JUNK_SHARE = 0.01


@dataclass
class Converted:
    markdown: str
    note: str = ""  # e.g. "decoded as cp1252"


@dataclass(frozen=True)
class Budget:
    """What converting one upload may cost (Settings: convert_timeout_s, convert_memory_mb, max_text_chars)."""

    timeout_s: float = 20.0  # per attempt: MarkItDown, then the plain reader if MarkItDown gives up
    memory_mb: int = 2048
    max_chars: int = 1_000_000


class Unfinished(Exception):
    """A conversion the worker could not finish: kind is "time", "memory", "parse" or "crash"."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


def extension(filename: str) -> str:
    dot = filename.rfind(".")
    return filename[dot:].lower() if dot >= 0 else ""


def unsupported_message(filename: str) -> str:
    return f"{filename}: only .docx and .md files can be uploaded."


def convert(filename: str, data: bytes, max_bytes: int, budget: Budget | None = None) -> Converted:
    budget = budget or Budget()
    ext = extension(filename)
    if ext not in SUPPORTED:
        raise ForgeError(unsupported_message(filename))
    if len(data) > max_bytes:
        raise ForgeError(f"{filename} is {human_size(len(data))}, over the {human_size(max_bytes)} upload limit.")
    if not data.strip():
        raise ForgeError(f"{filename} is empty.")
    if ext in MARKDOWN_EXTENSIONS:
        converted = _finish(filename, "markdown", data, budget)
    else:
        _check_word_container(filename, data)
        converted = _docx(filename, data, budget)
    if not converted.markdown.strip():
        raise ForgeError(f"{filename} has no text Forge can read.")
    # A reader with universal newlines (Python's text mode, as citations and forge doctor read converted
    # files) sees "\r" and "\r\n" as "\n": stored offsets hold only if the text has no other line end.
    converted.markdown = converted.markdown.replace("\r\n", "\n").replace("\r", "\n")
    return converted


def human_size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.3g} MB"
    return f"{n / 1000:.3g} kB" if n >= 1000 else f"{n} bytes"


def _check_word_container(filename: str, data: bytes) -> None:
    """Cheap checks in this process before a worker is started: the signature and the zip directory."""
    if data.startswith(_OLE_MAGIC):
        raise ForgeError(
            f"{filename} is password-protected or an old .doc file; save it as a normal .docx and upload again."
        )
    if data.startswith(b"%PDF"):
        raise ForgeError(f"{filename} is a PDF renamed to .docx; export it to Word or Markdown first.")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            if "word/document.xml" not in zf.namelist():
                raise ForgeError(f"{filename} is a zip archive, not a Word document.")
            unpacked = sum(info.file_size for info in zf.infolist())
            if unpacked > MAX_UNPACKED_BYTES:  # a decompression bomb, or a Word file stuffed with media
                raise ForgeError(f"{filename} unpacks to {human_size(unpacked)}, more than Forge will open.")
    except ForgeError:
        raise
    except Exception:  # BadZipFile, and damaged directories raise NotImplementedError, UnicodeDecodeError, …
        raise ForgeError(f"{filename} is not a valid Word document (the file is damaged or mislabelled).") from None


def _docx(filename: str, data: bytes, budget: Budget) -> Converted:
    try:
        return run_in_worker("docx", filename, data, budget)
    except Unfinished as exc:
        # MarkItDown refused the file (it rejects some valid XML, such as entity declarations) or ran
        # out of budget: the plain reader is linear and safe, so it gets its own try.
        log.info("MarkItDown did not convert %s (%s); reading it with the plain reader", filename, exc.kind)
    return _finish(filename, "docx-plain", data, budget)


def _finish(filename: str, task: str, data: bytes, budget: Budget) -> Converted:
    try:
        return run_in_worker(task, filename, data, budget)
    except Unfinished as exc:
        raise ForgeError(unfinished_message(filename, exc.kind, budget)) from None


def unfinished_message(filename: str, kind: str, budget: Budget) -> str:
    split = "split it into smaller files and upload those"
    if kind == "time":
        return f"{filename} took more than {budget.timeout_s:g} seconds to convert, so Forge stopped; {split}."
    if kind in ("memory", "crash"):
        return f"{filename} needed more than {budget.memory_mb:,} MB of memory to convert, so Forge stopped; {split}."
    if kind == "too_much_text":
        return (f"{filename} holds more than {budget.max_chars:,} characters of text, the most Forge indexes "
                f"from one file; {split}.")
    if extension(filename) in DOCX_EXTENSIONS:
        return f"{filename} could not be parsed as a Word document (its contents are damaged); save it again from Word."
    return f"{filename} could not be read as text; save it again as UTF-8 Markdown."


# ---------------------------------------------------------------- the worker process

def run_in_worker(task: str, filename: str, data: bytes, budget: Budget) -> Converted:
    """Run TASKS[task] in `python -m pmforge.ingest.worker` under the budget; ForgeError for a refusal
    the task explains itself, Unfinished for one it could not finish."""
    job = json.dumps({"task": task, "filename": filename, "max_chars": budget.max_chars,
                      "memory_mb": budget.memory_mb})
    try:
        # stderr is dropped: a converter's warnings may quote the document, and they are no use to the PM
        done = subprocess.run([sys.executable, "-m", "pmforge.ingest.worker", job], input=data,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=budget.timeout_s,
                              env=_worker_env())
    except subprocess.TimeoutExpired:  # run() has killed the worker
        raise Unfinished("time") from None
    try:
        reply = json.loads(done.stdout)
    except ValueError:
        # No reply: the worker died, usually of the memory limit inside a C library.
        log.warning("conversion worker for %s exited with status %s", task, done.returncode)
        raise Unfinished("crash") from None
    if "refused" in reply:
        raise ForgeError(reply["refused"])
    if "failed" in reply:
        if reply["failed"] == "too_much_text":
            raise ForgeError(unfinished_message(filename, "too_much_text", budget))
        raise Unfinished(reply["failed"])
    return Converted(reply["markdown"], reply.get("note", ""))


def _worker_env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2])  # so the worker finds pmforge however Forge was started
    path = os.environ.get("PYTHONPATH")
    # PYTHONSAFEPATH: the working directory is not searched for modules (Python 3.11+)
    return {**os.environ, "PYTHONPATH": src + (os.pathsep + path if path else ""), "PYTHONSAFEPATH": "1"}


def markdown_text(filename: str, data: bytes, max_chars: int) -> Converted:
    converted = decode_markdown(data)
    if (b"\x00" in data and not converted.note.startswith("UTF-16")) or _mostly_junk(converted.markdown):
        raise ForgeError(f"{filename} is not text (it holds binary data); upload a Markdown or Word file instead.")
    if len(converted.markdown) > max_chars:
        raise TooMuchText
    return converted


def decode_markdown(data: bytes) -> Converted:
    if data.startswith(b"\xef\xbb\xbf"):
        return Converted(data[3:].decode("utf-8", errors="replace"))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Notepad's "Unicode"
        return Converted(data.decode("utf-16", errors="replace"), note="UTF-16; read as UTF-16")
    try:
        return Converted(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Converted(data.decode("cp1252", errors="replace"), note="not UTF-8; read as Windows-1252")


def _mostly_junk(text: str) -> bool:
    junk = len(text) - len(_JUNK.sub("", text))
    return junk > MAX_JUNK_SHARE * len(text)


def markitdown_docx(filename: str, data: bytes, max_chars: int) -> Converted:
    from markitdown import StreamInfo

    result = _docx_converter().convert(io.BytesIO(data), StreamInfo(extension=".docx"))
    markdown = promote_bold_headings(_normalize(result.markdown or ""))
    if len(markdown) > max_chars:
        raise TooMuchText
    return Converted(markdown)


def _normalize(text: str) -> str:
    """What MarkItDown does to every converter's output: no trailing spaces, at most one blank line."""
    text = "\n".join(line.rstrip() for line in re.split(r"\r?\n", text))
    return re.sub(r"\n{3,}", "\n\n", text)


def plain_docx(filename: str, data: bytes, max_chars: int) -> Converted:
    return Converted(read_docx_text(io.BytesIO(data), max_chars), note="read as plain text; MarkItDown could not convert it")


TASKS = {"markdown": markdown_text, "docx": markitdown_docx, "docx-plain": plain_docx}


@lru_cache(maxsize=1)
def _docx_converter():
    # MarkItDown's Word converter on its own: the MarkItDown object would also load a file-type model
    # (Magika) that a known .docx does not need.
    from markitdown.converters import DocxConverter

    return DocxConverter()


_BOLD_LINE = re.compile(r"^\*\*([^*\n]{2,100}?)\*\*:?[ \t]*$", re.M)


def promote_bold_headings(markdown: str) -> str:
    """Word files often fake headings with a bold short paragraph; make them real headings.
    Documents that already use heading styles are left alone."""
    if re.search(r"^#{1,3} ", markdown, re.M):
        return markdown
    return _BOLD_LINE.sub(lambda m: f"## {m.group(1).strip()}", markdown)
