"""Documents the tests upload: a small Markdown plan, and real DOCX files built with python-docx."""

from __future__ import annotations

import io
from datetime import datetime

from docx import Document

PLAN = b"""# Pilot plan

## Scope
The pilot covers 20 stores in the Midwest region for eight weeks.

## Metrics
Success means fresh shrink falls below 4.5 percent with no rise in out-of-stocks.
"""

FILLER_PARAGRAPH = (
    "Store teams described a weekly rhythm of ordering, receiving and markdowns that varies by region. "
    "Interviewees mentioned staffing gaps on weekends and inconsistent labelling of reduced items. "
    "Several managers keep their own spreadsheets to track what sells after the first markdown."
)


TOPICS = {
    "Ordering": "Orders are placed each evening from a handheld, using last week's sales as the guide. "
                "Holiday weeks and local events are adjusted by hand, and the adjustment is rarely written down.",
    "Receiving": "Deliveries arrive between 5am and 7am and are checked against the packing slip. "
                 "Short-dated stock from the depot is accepted because refusing it delays the whole truck.",
    "Staffing": "Weekend shifts run two people short in most stores. Department leads cover the gaps "
                "themselves, so the afternoon walk of the shelves is the first task to be dropped.",
    "Labelling": "Reduced-price labels are printed on a single printer in the back office. "
                 "Each round of labels takes about forty minutes including the walk back and forth.",
    "Reporting": "Regional directors receive a monthly shrink report by store, with no department split. "
                 "By the time the report arrives, the habits behind the numbers are weeks old.",
    "Suppliers": "Two bakery suppliers offer buy-back on unsold bread, but only with a signed daily count. "
                 "Few stores keep that count, so the buy-back is almost never claimed.",
    "Customers": "Shoppers who buy reduced items tend to visit after 6pm on weekdays. "
                 "Several managers believe regular customers now wait for the evening markdown.",
}


def _paragraphs(doc, text: str, n: int = 3) -> None:
    for i in range(n):
        doc.add_paragraph(f"{text} (Note {i + 1}.)")


def research_docx(buried_fact: str, modified: datetime | None = None) -> bytes:
    """A research write-up: styled headings, a table, many distinct sections, and one fact
    buried in a sub-section, so retrieval has to choose among more sections than it returns."""
    doc = Document()
    doc.add_heading("Fresh Shrink Research Q3", level=1)
    doc.add_paragraph("This report summarises interviews with 14 store managers and three regional directors.")
    doc.add_heading("Findings", level=2)
    for title, text in TOPICS.items():
        doc.add_heading(title, level=3)
        _paragraphs(doc, text)
    doc.add_heading("Enterprise stores", level=3)
    _paragraphs(doc, FILLER_PARAGRAPH, 1)
    doc.add_paragraph(buried_fact)
    _paragraphs(doc, "Enterprise stores carry twice the bakery range of neighbourhood stores.", 2)
    doc.add_heading("Shrink by department", level=2)
    table = doc.add_table(rows=4, cols=3)
    for row, values in zip(table.rows, [("Department", "Shrink %", "Trend"), ("Bakery", "9.1", "up"),
                                        ("Prepared foods", "7.4", "flat"), ("Produce", "5.2", "down")]):
        for cell, value in zip(row.cells, values):
            cell.text = value
    doc.add_heading("Recommendations", level=2)
    _paragraphs(doc, FILLER_PARAGRAPH)
    if modified:
        doc.core_properties.modified = modified
    return _save(doc)


def _save(doc) -> bytes:
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
