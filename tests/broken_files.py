"""Small builders of real upload files, good and broken, for the ingestion robustness tests.

Every builder returns the exact bytes a user could drop on Forge: DOCX files are saved by
python-docx, damaged ones are cut or patched from such a real file, and Markdown is encoded
the way the editors that produce it do (UTF-8, UTF-8 with a BOM, Windows-1252, UTF-16).
"""

from __future__ import annotations

import io
import random
import struct
import zipfile

from docx import Document

# ---------------------------------------------------------------- good DOCX

UNICODE_LINE = "Crème brûlée, naïve café, Ærøskøbing — 東京の店舗で試験 — 计划 — 🚀🥐 emoji survive."
TABLE_FACT_ROW = ("Store 047", "Dayton", "Bakery", "11.8")


def _save(doc) -> bytes:
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


def rich_docx(fact: str, table_rows: int = 64) -> bytes:
    """Styled headings (levels 1-3), nested bulleted lists, a table of `table_rows` data rows,
    unicode text in body and heading, and one distinctive `fact` in its own sub-section."""
    doc = Document()
    doc.add_heading("Markdown Pilot Review", level=1)
    doc.add_paragraph(
        "This review covers the evening markdown pilot in fresh departments across twelve stores. "
        "It records what store teams did, what the numbers show and what the regional leads decided."
    )
    doc.add_heading("Team practices", level=2)
    doc.add_paragraph("Practices observed on the shop floor:")
    for item, children in (
        ("Bakery counts unsold bread at 4pm", ["Counts are written on paper", "Paper sheets go to the office"]),
        ("Produce culls bruised fruit at opening", ["Culled fruit is weighed", "Weights are rarely recorded"]),
        ("Deli reprices salads at 6pm", ["Labels come from one printer"]),
    ):
        doc.add_paragraph(item, style="List Bullet")
        for child in children:
            doc.add_paragraph(child, style="List Bullet 2")
    doc.add_heading("Findings in Dayton", level=3)
    doc.add_paragraph(
        "Dayton stores ran the pilot for six weeks with the same staffing as before. " + fact
    )
    doc.add_heading("Internationale Notizen — 国際", level=3)
    doc.add_paragraph(UNICODE_LINE)
    doc.add_heading("Shrink by store", level=2)
    table = doc.add_table(rows=table_rows + 1, cols=4)
    header = ("Store", "City", "Department", "Shrink %")
    cities = ("Akron", "Toledo", "Columbus", "Cincinnati", "Canton", "Dayton")
    departments = ("Bakery", "Produce", "Deli", "Dairy")
    for r, row in enumerate(table.rows):
        if r == 0:
            values = header
        elif r == 47:
            values = TABLE_FACT_ROW
        else:
            values = (f"Store {r:03d}", cities[r % len(cities)], departments[r % len(departments)],
                      f"{(r * 37 % 90) / 10 + 2:.1f}")
        for cell, value in zip(row.cells, values):
            cell.text = value
    doc.add_heading("Decisions", level=2)
    doc.add_paragraph("The regional leads agreed to keep the pilot running through the winter quarter.")
    return _save(doc)


def bold_heading_docx(sections: dict[str, str]) -> bytes:
    """A Word file whose 'headings' are short bold paragraphs in the Normal style."""
    doc = Document()
    for title, body in sections.items():
        doc.add_paragraph().add_run(title).bold = True
        doc.add_paragraph(body)
    return _save(doc)


def plain_docx(*paragraphs: str) -> bytes:
    doc = Document()
    for text in paragraphs:
        doc.add_paragraph(text)
    return _save(doc)


def empty_docx() -> bytes:
    """A real, valid Word document with no paragraphs at all."""
    return _save(Document())


# ---------------------------------------------------------------- broken "DOCX"

def truncated_docx() -> bytes:
    """The first half of a real DOCX: the zip's central directory is gone."""
    data = plain_docx("A paragraph that will never be read because the file is cut in half.")
    return data[: len(data) // 2]


def random_bytes(n: int = 4096, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    data = bytes(rng.randrange(256) for _ in range(n))
    # never accidentally start with a signature the converter recognises
    return b"\x00" + data[1:]


OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def ole_docx() -> bytes:
    """What an encrypted .docx or an old .doc looks like: an OLE compound file header and junk."""
    return OLE_MAGIC + b"\x00" * 16 + b"\x3e\x00\x03\x00\xfe\xff\x09\x00" + random_bytes(2000, seed=3)


def minimal_pdf() -> bytes:
    return (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
        b"trailer << /Root 1 0 R >>\n%%EOF\n"
    )


def zip_without_document() -> bytes:
    """A valid zip archive with Office-looking parts but no word/document.xml."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        zf.writestr("word/styles.xml", '<?xml version="1.0"?><styles/>')
        zf.writestr("notes.txt", "quarterly numbers, not a Word file")
    return buffer.getvalue()


def text_as_docx() -> bytes:
    return b"Meeting notes\n\nThese are plain text notes that someone renamed to .docx.\n"


def _rebuild(data: bytes, replace: dict[str, bytes] | None = None, extra: dict[str, bytes] | None = None) -> bytes:
    """Copy a zip member by member, replacing or adding some members."""
    replace, extra = replace or {}, extra or {}
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, replace.get(info.filename, src.read(info.filename)))
        for name, body in extra.items():
            dst.writestr(name, body)
    return out.getvalue()


def corrupt_xml_docx() -> bytes:
    """A zip with every DOCX part, but word/document.xml is not XML."""
    data = plain_docx("Soon to be damaged.")
    return _rebuild(data, replace={"word/document.xml": b"<w:document><w:body><w:p>unclosed \x00\x01 garbage"})


def bad_zip_version_docx() -> bytes:
    """A real DOCX whose central directory claims every member needs zip version 10.0 to extract
    (a corrupted 'version needed' field, as a damaged download or a bad repair tool leaves it)."""
    data = bytearray(plain_docx("The central directory of this file is damaged."))
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        struct.pack_into("<H", data, pos + 6, 100)  # version needed to extract: 10.0
        pos = data.find(b"PK\x01\x02", pos + 4)
    return bytes(data)


def bad_name_encoding_docx() -> bytes:
    """A real DOCX with one extra member whose name is flagged UTF-8 but is not valid UTF-8
    (what some Windows zip tools write for non-ASCII names)."""
    data = _rebuild(plain_docx("The zip directory of this file has a mangled member name."),
                    extra={"customXml/m\u00e9dia.xml": b"<x/>"})
    mangled = data.replace("m\u00e9dia".encode("utf-8"), b"m\x96\x96dia")
    assert mangled != data
    return mangled


# ---------------------------------------------------------------- Markdown

def bom_markdown(text: str) -> bytes:
    return b"\xef\xbb\xbf" + text.encode("utf-8")


def cp1252_markdown(text: str) -> bytes:
    data = text.encode("cp1252")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    raise AssertionError("the text must not also be valid UTF-8")


def utf16_markdown(text: str) -> bytes:
    """What Windows Notepad's 'Unicode' encoding writes: a UTF-16 LE BOM and two bytes a character."""
    return text.encode("utf-16")  # Python writes the BOM for the platform's byte order (LE here)


_WORDS = (
    "store managers markdown labels shelf evening bakery produce deli dairy shrink waste order delivery "
    "weekend staffing printer regional report customer loyalty price discount count trays freezer chiller "
    "audit supplier buyback forecast handheld routine habit spreadsheet threshold pilot review quarter"
).split()


def headerless_markdown(words: int, fact: str, seed: int = 11) -> str:
    """Prose with no headings at all: paragraphs of plain sentences, and `fact` in the middle."""
    rng = random.Random(seed)
    paragraphs: list[str] = []
    count = 0
    while count < words:
        sentences = []
        for _ in range(rng.randint(4, 7)):
            n = rng.randint(8, 16)
            sentence = " ".join(rng.choice(_WORDS) for _ in range(n))
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
            count += n
        paragraphs.append(" ".join(sentences))
    paragraphs.insert(len(paragraphs) // 2, fact)
    return "\n\n".join(paragraphs) + "\n"


# ---------------------------------------------------------------- hostile files (what a red team uploads)

def random_blob(n: int, seed: int = 5) -> bytes:
    """`n` random bytes, quickly (random_bytes above draws byte by byte)."""
    return random.Random(seed).randbytes(n)


def one_line_markdown(n: int = 5_000_000, seed: int = 1) -> bytes:
    """About `n` bytes of ordinary words on a single line: no heading, paragraph or line break."""
    rng = random.Random(seed)
    words, size = [], 0
    while size < n:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words).encode("utf-8")


def nested_quotes(levels: int = 5000) -> bytes:
    """One paragraph quoted `levels` deep: "> > > … text"."""
    return ("> " * levels + "The deepest quote says the Dayton pilot saved 3 percent.\n").encode("utf-8")


def many_headings(n: int = 20_000) -> bytes:
    return "".join(f"# Heading {i}\n\nNote {i} on shrink.\n\n" for i in range(n)).encode("utf-8")


def _document_xml(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.read("word/document.xml").decode("utf-8")


def docx_with_paragraphs(n: int, text: str = "Paragraph {i} about shrink audits in the Dayton stores, "
                         "with count {i}.") -> bytes:
    """A real DOCX with `n` paragraphs, written straight into document.xml (python-docx slows down
    quadratically when it adds tens of thousands)."""
    data = plain_docx("MARKER")
    xml = _document_xml(data)
    start = xml.rindex("<w:p", 0, xml.index("MARKER"))
    end = xml.index("</w:p>", start) + len("</w:p>")
    body = "".join(xml[start:end].replace("MARKER", text.format(i=i)) for i in range(n))
    return _rebuild(data, replace={"word/document.xml": (xml[:start] + body + xml[end:]).encode("utf-8")})


def docx_unpacking_to(megabytes: int) -> bytes:
    """A small real DOCX whose document.xml unpacks to about `megabytes` MB of paragraphs (under the
    zip-bomb guard: each part is ordinary, there is just a great deal of it)."""
    data = plain_docx("MARKER")
    xml = _document_xml(data)
    start = xml.rindex("<w:p", 0, xml.index("MARKER"))
    end = xml.index("</w:p>", start) + len("</w:p>")
    para = xml[start:end].replace("MARKER", "Shrink audit text repeated in every paragraph of this file.")
    body = para * (megabytes * 1_000_000 // len(para))
    return _rebuild(data, replace={"word/document.xml": (xml[:start] + body + xml[end:]).encode("utf-8")})


def docx_with_external_entity(url: str, visible: str, parameter: bool = False) -> bytes:
    """A readable DOCX whose document.xml declares an external entity pointing at `url` (a file:// path
    or an http:// address) and uses it in a paragraph after `visible`. `parameter`: a parameter entity,
    used inside the DTD (what fetches a remote DTD), instead of a general one."""
    data = plain_docx(visible, "Entity here: PLACEHOLDER.")
    xml = _document_xml(data)
    head, rest = xml.split("?>", 1)
    if parameter:
        doctype = f'<!DOCTYPE w:document [<!ENTITY % ext SYSTEM "{url}"> %ext;]>'
        use = ""
    else:
        doctype = f'<!DOCTYPE w:document [<!ENTITY ext SYSTEM "{url}">]>'
        use = "&ext;"
    xml = head + "?>" + doctype + rest.replace("PLACEHOLDER", use)
    return _rebuild(data, replace={"word/document.xml": xml.encode("utf-8")})


def markdown_with_private_key() -> bytes:
    return (b"# Deploy notes\n\nThe key for the pilot server:\n\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
            b"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
            b"-----END OPENSSH PRIVATE KEY-----\n")
