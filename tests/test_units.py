"""Pure functions below the turn: filler detection, chunking, file names, tool validation."""

from __future__ import annotations

import random

import pytest

from pmforge.core.errors import ForgeError
from pmforge.core.models import Manifest, SessionState
from pmforge.core.tokens import count_tokens
from pmforge.core.workspace import safe_filename
from pmforge.ingest.chunk import ChunkSizes, chunk_markdown, split_sections
from pmforge.knowledge import builtin_catalogue
from pmforge.tools import ToolContext, run_tool, tool_specs
from pmforge.understand.text import is_filler


@pytest.mark.parametrize("text", ["yes", "ok, continue", "that makes sense, move on", "Sure, go ahead.",
                                  "continue", "thanks!", "sounds good, let's move on", "Great, next question please"])
def test_filler(text):
    assert is_filler(text)


@pytest.mark.parametrize("text", ["Yes, 20 stores.", "no", "ok but the VP disagrees", "continue with the pilot in Ohio",
                                  "What does the research say?"])
def test_not_filler(text):
    assert not is_filler(text)


WORDS = "store pilot shrink markdown bakery label printer region director budget metric shopper".split()


def _markdown(rng: random.Random) -> str:
    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25))).capitalize() + rng.choice(".!?")

    parts = []
    for _ in range(rng.randint(1, 12)):
        level = rng.choice([1, 2, 3, 4])
        parts.append("#" * level + " " + " ".join(rng.choice(WORDS) for _ in range(3)))
        for _ in range(rng.randint(0, 8)):
            kind = rng.random()
            if kind < 0.1:
                parts.append("```\n# not a heading\ncode()\n```")
            elif kind < 0.2:
                parts.append("| a | b |\n|---|---|\n" + "\n".join(f"| {rng.choice(WORDS)} | {i} |" for i in range(30)))
            else:
                parts.append(" ".join(sentence() for _ in range(rng.randint(1, 40))))
    return "\n\n".join(parts) + "\n"


@pytest.mark.parametrize("seed", range(25))
def test_chunks_keep_exact_offsets_and_sizes(seed):
    rng = random.Random(seed)
    md = _markdown(rng)
    sizes = ChunkSizes(leaf_max=200, parent_max=800, merge_below=50)
    parents = chunk_markdown(md, sizes)
    assert parents
    covered = 0
    for parent in parents:
        assert md[parent.start : parent.end] == parent.text
        assert parent.leaves
        for leaf in parent.leaves:
            assert md[leaf.start : leaf.end] == leaf.text
            assert parent.start <= leaf.start < leaf.end <= parent.end
            assert count_tokens(leaf.text) <= sizes.leaf_max + 5
        covered += sum(len(l.text.split()) for l in parent.leaves)
    assert covered == len(md.split())  # every word of the document is in exactly one leaf


def test_headings_inside_code_fences_are_not_sections():
    md = "# Real\n\ntext here\n\n```\n# fake\n```\n\n## Also real\n\nmore text\n"
    assert [s.path for s in split_sections(md)] == [["Real"], ["Real", "Also real"]]


@pytest.mark.parametrize("hostile, expected", [
    ("../../x.md", "x.md"), ("..\\..\\evil.docx", "evil.docx"), ("/etc/passwd.md", "passwd.md"),
    ("Résumé Q3.DOCX", "Résumé Q3.docx"), (".hidden.md", "hidden.md"), ("a\x00b.md", "ab.md"),
])
def test_safe_filename(hostile, expected):
    assert safe_filename(hostile) == expected


def test_safe_filename_bounds_length_and_rejects_empty():
    assert len(safe_filename("x" * 250 + ".md")) <= 120 and safe_filename("x" * 250 + ".md").endswith(".md")
    with pytest.raises(ForgeError):
        safe_filename("../..")


def test_tool_schemas_come_from_models_and_bad_calls_are_errors():
    specs = {s.name: s for s in tool_specs()}
    assert specs["register_assumption"].input_schema["required"] == ["claim", "type", "impact"]
    ctx = ToolContext(state=SessionState(), manifest=Manifest(), turn_number=3,
                      catalogue=builtin_catalogue(), pm_words="For context, we are a grocery chain with 400 stores.")
    ok, text = run_tool("register_assumption", {"claim": "Shoppers wait for markdowns", "type": "vibes"}, ctx)
    assert not ok and "type" in text and ctx.state.assumptions == []
    ok, text = run_tool("register_assumption", {"claim": "Shoppers wait for markdowns", "type": "value",
                                                "impact": "high", "depends_on": ["A9"]}, ctx)
    assert not ok and "A9" in text
    ok, text = run_tool("register_assumption", {"claim": "Shoppers wait for markdowns", "type": "value",
                                                "impact": "high"}, ctx)
    assert ok and ctx.state.assumptions[0].id == "A1" and ctx.state.assumptions[0].surfaced_turn == 3
    ok, text = run_tool("no_such_tool", {}, ctx)
    assert not ok and "Unknown tool" in text
    ok, _ = run_tool("record_probe", {"probe": "Why Now"}, ctx)
    assert ok and ctx.state.routing.probes_fired == ["why_now"]
    ok, text = run_tool("update_org_context", {"org_context": "Grocery chain, 400 stores."}, ctx)
    assert ok and ctx.manifest.org_context == "Grocery chain, 400 stores."


def test_an_unreadable_state_is_moved_aside_and_reported(tmp_path):
    from pmforge.core.workspace import Workspace

    ws = Workspace.create(tmp_path, "Damaged")
    ws.state_path.write_text('{"turns": [ {"number": 1, "user": "half a sa')  # a crash mid-write of an old Forge
    with pytest.raises(ForgeError, match="moved to state.unreadable-.*a fresh session was started"):
        ws.load_state()
    kept = list(tmp_path.glob("damaged/state.unreadable-*.json"))
    assert len(kept) == 1 and "half a sa" in kept[0].read_text()
    fresh = ws.load_state()
    assert fresh.turns == [] and fresh.recovered_from == kept[0].name


def test_a_paste_shows_in_the_transcript_as_a_quote_without_tags():
    from pmforge.prompt import render
    block = render.pasted_block("pasted-turn-3.md", 4000, "indexed", "Store teams </pasted> order nightly")
    shown = render.for_display("What does this say?\n" + block)
    assert "<pasted" not in shown and "</pasted>" not in shown
    assert shown.startswith("What does this say?") and "> Store teams" in shown and "pasted-turn-3.md" in shown


def test_settings_take_aliased_fields_by_their_own_names_too(tmp_path):
    from pmforge.core.settings import Settings

    assert Settings(projects_dir=tmp_path / "p").projects_dir == tmp_path / "p"
