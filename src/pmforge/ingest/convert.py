"""Turn an upload into Markdown. Markdown is read as-is (so offsets are exact);
DOCX goes through MarkItDown after checking that the bytes really are a Word document."""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass
from functools import lru_cache

from ..errors import ForgeError

MARKDOWN_EXTENSIONS = (".md", ".markdown")
DOCX_EXTENSIONS = (".docx",)
SUPPORTED = MARKDOWN_EXTENSIONS + DOCX_EXTENSIONS

MAX_UNPACKED_BYTES = 400_000_000
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


@dataclass
class Converted:
    markdown: str
    note: str = ""  # e.g. "decoded as cp1252"


def extension(filename: str) -> str:
    dot = filename.rfind(".")
    return filename[dot:].lower() if dot >= 0 else ""


def convert(filename: str, data: bytes, max_bytes: int) -> Converted:
    ext = extension(filename)
    if ext not in SUPPORTED:
        raise ForgeError(f"{filename}: only .docx and .md files can be uploaded.")
    if len(data) > max_bytes:
        raise ForgeError(f"{filename} is {human_size(len(data))}, over the {human_size(max_bytes)} upload limit.")
    if not data.strip():
        raise ForgeError(f"{filename} is empty.")
    converted = _markdown(data) if ext in MARKDOWN_EXTENSIONS else _docx(filename, data)
    if not converted.markdown.strip():
        raise ForgeError(f"{filename} has no text Forge can read.")
    return converted


def human_size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.3g} MB"
    return f"{n / 1000:.3g} kB" if n >= 1000 else f"{n} bytes"


def _markdown(data: bytes) -> Converted:
    if data.startswith(b"\xef\xbb\xbf"):
        return Converted(data[3:].decode("utf-8", errors="replace"))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):  # Notepad's "Unicode"
        return Converted(data.decode("utf-16", errors="replace"), note="UTF-16; read as UTF-16")
    try:
        return Converted(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Converted(data.decode("cp1252", errors="replace"), note="not UTF-8; read as Windows-1252")


def _docx(filename: str, data: bytes) -> Converted:
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
    try:
        from markitdown import StreamInfo

        result = _markitdown().convert_stream(io.BytesIO(data), stream_info=StreamInfo(extension=".docx"))
    except Exception as exc:  # MarkItDown raises many types on damaged XML
        raise ForgeError(f"{filename} could not be parsed ({type(exc).__name__}); the file is kept.") from None
    return Converted(promote_bold_headings(result.text_content or ""))


@lru_cache(maxsize=1)
def _markitdown():
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)


_BOLD_LINE = re.compile(r"^\*\*([^*\n]{2,100}?)\*\*:?[ \t]*$", re.M)


def promote_bold_headings(markdown: str) -> str:
    """Word files often fake headings with a bold short paragraph; make them real headings.
    Documents that already use heading styles are left alone."""
    if re.search(r"^#{1,3} ", markdown, re.M):
        return markdown
    return _BOLD_LINE.sub(lambda m: f"## {m.group(1).strip()}", markdown)
