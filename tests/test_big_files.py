"""Big files through the real pipeline (hashing embedder, real Chroma, real conversion worker): indexed in a
bounded number of passages that still read alone, and kept consistent for `forge doctor`.

Time is measured by hand with the real model, not here (see the report of the change): these tests check
the structure that keeps it bounded.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import broken_files as bf
from forge_cli import run_forge
from pmforge.core.tokens import count_tokens
from pmforge.ingest.chunk import record_spans
from pmforge.ingest.pipeline import ingest_file
from pmforge.project.project import Project
from test_ingest_files import assert_consistent, assert_file_offsets_exact, converted_text, stored

TITLE = re.compile(r"^# (.+)$", re.M)


def test_a_file_of_20000_headings_is_indexed_in_passages_named_by_the_headings_they_hold(project: Project):
    result = ingest_file(project, "headings.md", bf.many_headings(20_000))
    assert result.ok, result.message
    entry = project.manifest().find("headings.md")
    settings = project.settings
    # grouped into about max_sections sections (each passage-sized), where one per heading would be 20,000
    assert entry.parent_count <= 1.1 * settings.max_sections
    assert entry.chunk_count <= 2 * entry.parent_count

    titles = []
    for _, doc, meta in sorted(stored(project, "document_parents", entry.file_id), key=lambda p: p[2]["start"]):
        held = TITLE.findall(doc)
        assert held, meta
        titles += held
        section = meta["section"]
        assert len(section) <= 200 and held[0] in section and held[-1] in section, (section, held[0], held[-1])
        assert re.search(rf"\b{held[-1]}$", section), section  # not a longer title that merely starts alike
    assert titles == [f"Heading {i}" for i in range(20_000)]  # every heading, once, in order
    for _, doc, meta in stored(project, "documents", entry.file_id):
        assert doc.startswith("[Source: headings.md > "), doc[:80]  # the citation's path travels with it
    assert_file_offsets_exact(project, "headings.md")
    assert_consistent(project)


def test_a_30000_row_table_is_indexed_as_row_groups_that_each_repeat_its_header(project: Project):
    header = "| Store | City | Shrink % |\n| --- | --- | --- |\n"
    row = re.compile(r"^\| (\d+) \| City \d+ \| \d\.\d \|$")
    text = "# Shrink by store\n\n" + header + "".join(
        f"| {i} | City {i % 40} | {i % 9}.{i % 7} |\n" for i in range(30_000))
    result = ingest_file(project, "stores.md", text.encode("utf-8"))
    assert result.ok, result.message
    entry = project.manifest().find("stores.md")

    records = stored(project, "documents", entry.file_id)
    assert len(records) == len({meta["leaf_id"] for _, _, meta in records}) == entry.chunk_count  # a passage each
    converted = converted_text(project, "stores.md")
    seen = []
    for _, doc, meta in records:
        crumb, rest = doc.split("\n", 1)
        assert crumb == "[Source: stores.md > Shrink by store]"
        body = rest.removeprefix("# Shrink by store\n\n")
        assert body.startswith(header), body[:120]  # the first group holds the header; every other repeats it
        lines = body[len(header):].split("\n")
        assert all(row.match(line) for line in lines), lines[:3]  # whole rows: no group starts or ends mid-row
        assert count_tokens(converted[meta["start"] : meta["end"]]) <= project.settings.leaf_max_tokens + 5
        seen += [int(row.match(line).group(1)) for line in lines]
    assert sorted(seen) == list(range(30_000))  # every row in exactly one passage
    assert len(seen) / entry.chunk_count >= 20  # row groups, not rows: the passage count stays bounded
    assert_file_offsets_exact(project, "stores.md")


def test_past_the_embedding_budget_every_word_stays_in_a_record_and_vectors_read_bounded_text():
    windows = [[(0, 100), (80, 180), (160, 220)], [(0, 50)], [(0, 100), (90, 150)]]
    assert record_spans(windows, 10) == [[(s, e, e) for s, e in w] for w in windows]  # within budget: as it was
    # over it, each leaf keeps its share of windows and its last record runs to the leaf's end
    assert record_spans(windows, 4) == [[(0, 100, 100), (80, 220, 180)], [(0, 50, 50)], [(0, 150, 100)]]
    # more leaves than the budget: one record per leaf, its vector made from a share of its first window
    assert record_spans(windows, 2) == [[(0, 220, 66)], [(0, 50, 33)], [(0, 150, 66)]]


@pytest.mark.parametrize("newline", ["\r", "\r\n"], ids=["cr-only", "crlf"])
def test_forge_doctor_agrees_with_ingestion_on_a_file_without_unix_line_ends(project: Project, isolated_env: Path,
                                                                             newline: str):
    text = ("# Plan\n\nThe pilot runs eight weeks in nine stores.\n\n## Scope\n\n"
            "| Store | City |\n| --- | --- |\n| 12 | Dayton |\n\nBakery and deli only.\n")
    path = isolated_env / "plan.md"
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    slug = project.ws.slug

    done = run_forge(isolated_env, "ingest", slug, str(path), env={})
    assert done.returncode == 0, done.stdout + done.stderr
    for args in (["doctor", slug, "--json"], ["doctor", slug, "--fix", "--json"], ["doctor", slug, "--json"]):
        done = run_forge(isolated_env, *args, env={})
        report = json.loads(done.stdout)
        assert done.returncode == 0 and report["consistent"], report
        assert report["problems"] == [] and report["repaired"] == [], report
    assert converted_text(project, "plan.md") == text  # line ends made "\n" once, at conversion
    assert_file_offsets_exact(project, "plan.md")
