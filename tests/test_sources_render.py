"""Sources that read like the document: a Word file's tables open as tables (in the sources list's passage, in a
citation's panel and in a file card), every sentence a reply quotes is marked in the passage it opened, a file
card's summary starts from the document's title, and file names and sections show exactly as written, with
nothing from a document able to run, load an image or link to javascript:.

Real Word files made with python-docx, the real ingest into a temp projects dir, real passages, and the real
app through AppTest. What AppTest hands back is Markdown source: it is rendered here by a CommonMark renderer
with raw HTML on and tables enabled (`rendered`), which reads it the way the page does.
"""

from __future__ import annotations

import io
import random
from html.parser import HTMLParser

from docx import Document
from docx.oxml import OxmlElement
from streamlit.testing.v1 import AppTest

from pmforge.core.models import SourceRef
from pmforge.ingest.pipeline import ingest_file
from pmforge.surfaces.ui.citations import linked_reply, literal, literal_block, passage_markdown
from pmforge.turn.orchestrator import run_turn
from test_app import DOCX_MIME, _create_project, _source_popovers
from test_citations import PIECES, Tags, assert_inert, rendered

TITLE = "(V) ILLUSTRATIVE CASES"
PIXEL = "![pixel](http://127.0.0.1:9/pixel.png)"
PATRICK = [  # one paragraph of the document, sentence by sentence
    "Patrick runs the Dayton store.",
    "He counts every markdown by hand.",  # "every markdown" is bold in the document
    "His evening walk takes forty minutes.",
    "The label printer jams twice a week.",
    "Reduced labels often go on the wrong shelf.",
    "Most staff leave at six.",
    "Nobody checks the bakery after that.",
    "The waste bin is full by Sunday.",
    "He calls the count “the worst hour of my day”.",
    "Regional reports arrive a month late.",
]
SHRINK = [("Store", "Shrink"), ("Ohio", "9.1"), ("Iowa <img src=x onerror=alert(1)>", "[call](javascript:alert(1))")]
LEADS = [("Region", "Lead"), ("Midwest", "Patrick")]


def _table(doc, rows: list[tuple[str, str]], header: bool) -> None:
    table = doc.add_table(rows=len(rows), cols=2)
    for row, values in zip(table.rows, rows):
        for cell, value in zip(row.cells, values):
            cell.text = value
    if header:  # Word's "Repeat as header row": the only way a Word table has a header row
        table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))


def cases_docx(note: str = "") -> bytes:
    """A document titled in Word's Title style, a paragraph with bold words, a table with a header row and
    hostile cells, and a table whose header row is empty (as most Word tables convert). `note` makes two
    copies different files."""
    doc = Document()
    doc.add_paragraph(TITLE, style="Title")
    doc.add_paragraph("These cases show how store managers track fresh shrink today." + note)
    doc.add_heading(f"Patrick {PIXEL}", 1)  # a section's name that would fetch an image, read as Markdown
    paragraph = doc.add_paragraph(PATRICK[0] + " He counts ")
    paragraph.add_run("every markdown").bold = True
    paragraph.add_run(" by hand. " + " ".join(PATRICK[2:]))
    doc.add_heading("Shrink by store", 1)
    _table(doc, SHRINK, header=True)
    doc.add_paragraph("Leads by region follow.")
    _table(doc, LEADS, header=False)
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()


class Tables(HTMLParser):
    """The tables in rendered HTML, a <table> or a citation panel's inline one (role="table"): each a list of
    rows, each row ("th" or "td", [cell texts as a reader sees them])."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[tuple[str, list[str]]]] = []
        self._open: list[tuple[str, bool]] = []  # (tag, is a cell)
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        role = dict(attrs).get("role")
        cell = tag in ("th", "td") or role in ("cell", "columnheader")
        if tag == "table" or role == "table":
            self.tables.append([])
        elif tag == "tr" or role == "row":
            self.tables[-1].append(("td", []))
        elif cell:
            kind, cells = self.tables[-1][-1]
            self.tables[-1][-1] = ("th" if tag == "th" or role == "columnheader" else kind, cells + [""])
        if tag not in ("br", "input"):
            self._open.append((tag, cell))

    def handle_endtag(self, tag):
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if any(cell for _, cell in self._open):
            self.tables[-1][-1][1][-1] += data


def shown(markdown: str) -> str:
    """What a reader sees of Markdown source: the text of its rendering."""
    return Tags(rendered(markdown)).text.strip()


def elements(markdown: str) -> set[str]:
    return Tags(rendered(markdown)).names()


SHRINK_TABLE = [("th", ["Store", "Shrink"]), ("td", ["Ohio", "9.1"]),
                ("td", ["Iowa <img src=x onerror=alert(1)>", "call"])]  # a link's words, never its target
LEADS_TABLE = [("td", ["Region", "Lead"]), ("td", ["Midwest", "Patrick"])]  # an empty header is no header


# ---------------------------------------------------------------- tables

def test_a_word_files_tables_open_as_tables_and_nothing_in_them_runs(project):
    assert ingest_file(project, "cases.docx", cases_docx()).ok
    turn = _turn(project, "What is the shrink in Ohio?")
    passages = [project.passage(s) for s in turn.sources]
    html = "".join(rendered(passage_markdown(p)) for p in passages if p)
    assert Tables(html).tables == [SHRINK_TABLE, LEADS_TABLE]
    found = assert_inert(html)  # no element from the document, no javascript: link
    assert "img" not in found.names() and not [a for t, a in found.tags if t == "a"]
    assert "Iowa <img src=x onerror=alert(1)>" in found.text  # shown as written

    # The citation's panel in the reply shows the rows it opens on as a table too, with the quoted row marked.
    reply_html = rendered(linked_reply(turn.assistant, turn.sources, project.passage))
    reply, panel = assert_inert(reply_html), Tables(reply_html).tables
    assert panel and ("td", ["Ohio", "9.1"]) in panel[0]
    assert reply.marks == ["Ohio", "9.1"]
    assert "| Ohio |" not in reply.text  # no row as pipe text


def test_a_passage_cut_from_the_middle_of_a_long_table_opens_as_a_table(project):
    doc = Document()
    doc.add_heading("Store audit", 1)
    _table(doc, [("Store", "Shrink")] + [(f"Store {i}", f"{i % 9}.{i % 7} percent, audited in week {i % 52}")
                                         for i in range(1, 301)], header=False)
    buffer = io.BytesIO()
    doc.save(buffer)
    assert ingest_file(project, "audit.docx", buffer.getvalue()).ok
    passages = [p for p in (project.passage(s) for s in _turn(project, "What is the shrink in Store 250?").sources) if p]
    assert any(not p.startswith(("#", "|  |")) for p in passages)  # at least one begins among the rows
    for passage in passages:
        html = rendered(passage_markdown(passage))
        rows = [line for line in passage.splitlines() if line.startswith("| Store ")]
        assert sum(len(table) for table in Tables(html).tables) == len(rows)
        assert "|" not in Tags(html).text  # no row left as pipe text


def _turn(project, message: str):
    run_turn(project, message)
    return project.state().turns[-1]


def test_a_summary_with_a_table_shows_it_as_a_table_and_the_rest_as_written():
    summary = ("Shrink **by** store <b>x</b> :red[y] " + PIXEL + ":\n\n| | |\n| --- | --- |\n| Ohio | 9.1 |\n"
               "| Iowa | 5.2 …")  # a card clips a long summary, here inside the table
    html = rendered(literal_block(summary))
    assert Tables(html).tables == [[("td", ["Ohio", "9.1"]), ("td", ["Iowa", "5.2 …"])]]
    found = assert_inert(html)
    assert found.names() == {"p", "table", "tbody", "tr", "td"}
    assert found.text.startswith(f"Shrink **by** store <b>x</b> :red[y] {PIXEL}:")


# ---------------------------------------------------------------- quotes

def test_every_sentence_a_reply_quotes_is_marked_in_the_passage(project):
    assert ingest_file(project, "cases.docx", cases_docx()).ok
    source = next(s for s in _turn(project, "What is the shrink in Ohio?").sources
                  if PATRICK[0] in (project.passage(s) or ""))
    reply = (f"Patrick's own words {source.citation}: “{PATRICK[0]}” and, further on, “{PATRICK[5]}”.\n\n"
             f"- “**He counts   every markdown** by hand.”\n"  # emphasis and spacing of its own
             f"- “Nobody checks the bakery …” and \"The waste bin is full by Sunday.\"\n"  # trimmed; straight quotes
             f"- “He calls the count ‘the worst hour of my day’.” and “… arrive a month late.”")
    found = assert_inert(rendered(linked_reply(reply, [source], project.passage)))
    assert found.marks == [PATRICK[i] for i in (0, 1, 5, 6, 7, 8, 9)]


def test_the_table_row_an_offline_answer_quotes_is_the_one_marked(project):
    assert ingest_file(project, "cases.docx", cases_docx()).ok
    turn = _turn(project, "Who leads the Midwest region?")
    assert "“Region: Midwest; Lead: Patrick”" in turn.assistant  # how the offline answer quotes a row
    found = assert_inert(rendered(linked_reply(turn.assistant, turn.sources, project.passage)))
    assert found.marks == ["Midwest", "Patrick"]  # not "Patrick runs the Dayton store."


# ---------------------------------------------------------------- file cards and labels

def test_a_file_card_summary_starts_from_the_documents_title(project):
    entry = ingest_file(project, "cases.docx", cases_docx()).entry
    assert entry is not None
    assert entry.summary.startswith(f"{TITLE}. Covers: Patrick {PIXEL}; Shrink by store. ")
    assert "These cases show how store managers track fresh shrink today." in entry.summary


def test_names_from_documents_and_users_show_as_written():
    for text in ["poi__MultipleBodyBug.docx", "__draft__ notes.docx", "- list.docx", "1. first.md", "---",
                 "# heading", "> quote", f"{PIXEL} <img src=x> &amp; $x$ `code` ~~gone~~ \\*", "a\n\nb"]:
        assert shown(literal(text)) == " ".join(text.split()), text
        assert elements(literal(text)) == {"p"}, text
        assert elements(f"**{literal(text)}**") == {"p", "strong"}, text


def test_the_app_shows_names_titles_tables_and_sections_as_written(app: AppTest):
    _create_project(app, "Cases")
    names = ["poi__MultipleBodyBug.docx", "__draft__ notes.docx"]
    files = [(name, cases_docx(f" Copy {i}."), DOCX_MIME) for i, name in enumerate(names)]
    app.sidebar.get("file_uploader")[0].set_value(files).run()
    assert not app.exception and not app.error

    # The file cards: each name as written, in bold; the summary from the document's title.
    cards = [m.value for m in app.sidebar.markdown if "docx" in m.value]
    assert [shown(card).split(" ", 1)[1] for card in cards] == names  # after the status icon
    assert all(elements(card) == {"p", "strong"} for card in cards)
    assert sorted(b.help for b in app.sidebar.button if b.help and b.help.startswith("Delete")) == \
        sorted(f"Delete {literal(name)}" for name in names)
    summaries = [c.value for c in app.sidebar.caption if TITLE.split()[1] in c.value]
    assert len(summaries) == 2 and all(shown(s).startswith(f"{TITLE}. Covers: Patrick") for s in summaries)

    # A reply's sources: the section (with a heading that holds an image link) as written, the passage's
    # tables as tables, nothing fetched.
    app.chat_input[0].set_value("What is the shrink in Ohio?").run()
    assert not app.exception
    popovers = _source_popovers(app)
    assert popovers
    for popover in popovers:
        label = popover.proto.popover.label
        assert elements(label) == {"p"} and PIXEL in shown(label) and shown(label).split(" › ")[0] in names
        caption = popover.caption[0].value
        assert shown(caption).split(",")[0] in names and elements(caption) == {"p"}
        html = "".join(rendered(m.value) for m in popover.markdown)
        assert Tables(html).tables == [SHRINK_TABLE, LEADS_TABLE]
        assert "img" not in assert_inert(html).names()


def test_a_citation_panel_and_a_passage_keep_the_documents_own_words():
    """MarkItDown escapes a Word file's literal markdown characters: the panel shows the characters."""
    passage = "Patrick said \\*\\*never\\*\\* and 3 \\< 4.\n\n| a \\| b | c |\n| --- | --- |"
    source = SourceRef(citation="[n.docx › Notes]", file_id="f", filename="n.docx", start=0, end=1)
    found = assert_inert(rendered(linked_reply("Patrick said never [n.docx › Notes].", [source], lambda s: passage)))
    assert found.marks == ["Patrick said **never** and 3 < 4."]
    assert Tables(rendered(passage_markdown(passage))).tables == [[("th", ["a | b", "c"])]]


TABLE_PIECES = ["| a | b |\n", "| --- | --- |\n", "|  |  |\n", "a | b\n", "--- | ---\n", "| x \\| y |", "|"]


def test_hostile_documents_and_names_render_no_foreign_element_or_link():
    rng = random.Random(20241129)  # fixed: the same 800 documents every run
    for _ in range(800):
        text = "".join(rng.choice(PIECES + TABLE_PIECES * 3) for _ in range(rng.randint(1, 40)))
        for markdown in (passage_markdown(text), literal_block(text), literal(text)):
            assert_inert(rendered(markdown))
        assert elements(literal(text)) <= {"p"} and shown(literal(text)) == " ".join(text.split())
