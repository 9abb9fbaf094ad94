"""Real DOCX files built in the tests with python-docx."""

from __future__ import annotations

import io

from docx import Document

FILLER_PARAGRAPH = (
    "Store teams described a weekly rhythm of ordering, receiving and markdowns that varies by region. "
    "Interviewees mentioned staffing gaps on weekends and inconsistent labelling of reduced items. "
    "Several managers keep their own spreadsheets to track what sells after the first markdown."
)


def research_docx(buried_fact: str) -> bytes:
    """A research write-up: styled headings, a table, and one fact buried in a sub-section."""
    doc = Document()
    doc.add_heading("Fresh Shrink Research Q3", level=1)
    doc.add_paragraph("This report summarises interviews with 14 store managers and three regional directors.")
    doc.add_heading("Background", level=2)
    for _ in range(3):
        doc.add_paragraph(FILLER_PARAGRAPH)
    doc.add_heading("Findings", level=2)
    doc.add_paragraph("Shrink concentrates in bakery and prepared foods, where shelf life is under three days.")
    for _ in range(2):
        doc.add_paragraph(FILLER_PARAGRAPH)
    doc.add_heading("Enterprise stores", level=3)
    doc.add_paragraph(FILLER_PARAGRAPH)
    doc.add_paragraph(buried_fact)
    doc.add_heading("Neighbourhood stores", level=3)
    for _ in range(2):
        doc.add_paragraph(FILLER_PARAGRAPH)
    doc.add_heading("Shrink by department", level=2)
    table = doc.add_table(rows=4, cols=3)
    for row, values in zip(table.rows, [("Department", "Shrink %", "Trend"), ("Bakery", "9.1", "up"),
                                        ("Prepared foods", "7.4", "flat"), ("Produce", "5.2", "down")]):
        for cell, value in zip(row.cells, values):
            cell.text = value
    doc.add_heading("Recommendations", level=2)
    for _ in range(2):
        doc.add_paragraph(FILLER_PARAGRAPH)
    buffer = io.BytesIO()
    doc.save(buffer)
    return buffer.getvalue()
