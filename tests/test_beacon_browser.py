"""One hostile string through every surface of the real app, in Chromium, with a beacon on 127.0.0.1 that must
receive nothing; and through every export, which must hold no active element.

The string asks for the beacon in each way a page can be made to load or run something: a Markdown image, an
<img>, <script>, <iframe>, a stylesheet, a style's url() and a javascript: link. It goes in as a project name,
an organisation context, a document's title, headings and body, the PM's message, a long paste and a hedged
claim the register keeps; the app then shows it in the page heading, the picker, the file card, the sources,
the chat, the register and the org context. Needs /usr/bin/chromium (or FORGE_CHROMIUM) and playwright.
"""

from __future__ import annotations

import io
import re
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from forge_bench.bench.browser import WAIT_MS, chromium, forge_ui, missing_browser, offline_env, open_app
from forge_cli import run_forge

pytestmark = [pytest.mark.browser, pytest.mark.skipif(missing_browser() is not None, reason=str(missing_browser()))]


class Beacon:
    """An HTTP server on a free loopback port that records every request it receives."""

    def __init__(self):
        hits: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def _hit(self):
                hits.append(f"{self.command} {self.path}")
                self.send_response(204)
                self.end_headers()

            do_GET = do_POST = do_HEAD = do_OPTIONS = _hit

            def log_message(self, *args):  # quiet
                pass

        self.hits = hits
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def hostile(url: str) -> str:
    return (f'![pixel]({url}/md-image) <img src="{url}/img-tag"> <script>fetch("{url}/script")</script> '
            f'<iframe src="{url}/iframe"></iframe> <link rel="stylesheet" href="{url}/stylesheet"> '
            f'<div style="background:url({url}/style-url)">box</div> [call](javascript:fetch("{url}/js"))')


ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "beacon"
ACTIVE = re.compile(r"<(?:img|script|iframe|link|object|embed|video|audio|svg)\b|<[a-z][^>]*\s(?:on\w+|style|srcset)"
                    r"\s*=|href=\"\s*(?:javascript|data|vbscript):", re.I)


def active_elements(markdown: str) -> list[str]:
    """What the Markdown becomes as HTML in a viewer that allows raw HTML (and any link): each element that
    would load or run something. Text that merely reads like markup is escaped by the renderer."""
    viewer = MarkdownIt("commonmark")
    viewer.validateLink = lambda url: True  # a lax viewer: the export itself must hold no such link
    return ACTIVE.findall(viewer.render(markdown))


@pytest.fixture
def beacon():
    server = Beacon()
    yield server
    server.stop()


def test_a_hostile_string_on_every_surface_and_in_every_export_loads_and_runs_nothing(tmp_path: Path, beacon):
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    bad = hostile(beacon.url)
    projects = tmp_path / "projects"
    env = offline_env(projects)

    def forge(*args: str):
        run = run_forge(tmp_path, *args, env=env)
        assert run.returncode == 0, run.stderr
        return run

    forge("new", f'Returns ![p]({beacon.url}/name-image) <img src="{beacon.url}/name-tag">')  # names hold 120
    slug = forge("projects").stdout.split("\t")[0].strip()
    doc = tmp_path / "plan.md"
    doc.write_text(f"# Returns plan {bad}\n\n## Scope {bad}\n\nThe pilot covers 20 stores for eight weeks. {bad}\n",
                   encoding="utf-8")
    forge("ingest", slug, str(doc))
    from pmforge.core.workspace import Workspace

    ws = Workspace.open(projects, slug)
    manifest = ws.load_manifest()
    manifest.org_context = f"A regional grocer with 62 stores. {bad}"
    ws.save_manifest(manifest)
    forge("chat", slug, "-m", f"I think customers will want self-service returns. {bad}",
          "-m", "How many stores does the pilot cover?",
          "-m", "Interview notes from the stores follow. " + f"The bakery lead prints labels by hand. {bad} " * 30)

    with forge_ui(tmp_path) as url, chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
        page.set_default_timeout(30_000)
        open_app(page, url)
        main, sidebar = page.get_by_test_id("stMainBlockContainer"), page.get_by_test_id("stSidebar")
        expect(main.get_by_test_id("stChatMessage")).to_have_count(6, timeout=WAIT_MS)
        for name in ("Organisation context", "assumption"):  # the sidebar's panels, opened
            panel = sidebar.get_by_test_id("stExpander").filter(has_text=name).first
            if panel.count():
                panel.locator("summary").click()
        sources = main.get_by_role("button", name="plan.md")
        for i in range(sources.count()):  # every source a reply cites, opened
            sources.nth(i).click()
            page.wait_for_timeout(300)
            page.keyboard.press("Escape")
        page.mouse.wheel(0, -20_000)
        page.wait_for_timeout(3000)  # time for anything that would load to load
        page.screenshot(path=str(ARTIFACTS / "beacon.png"), full_page=True)
        # Nothing on the page points at the beacon in a way that loads: only an <a> may name it (a link, unclicked).
        loading = page.evaluate("""(beacon) => [...document.querySelectorAll('*')].filter(e =>
            e.tagName !== 'A' && ['src', 'href', 'data', 'style', 'srcset', 'poster'].some(a =>
                (e.getAttribute(a) || '').includes(beacon))).map(e => e.outerHTML.slice(0, 200))""", beacon.url)
        assert loading == []
    assert beacon.hits == [], beacon.hits

    transcript = forge("export", slug, "--format", "md", "--out", "-").stdout
    assert "Returns plan" in transcript or "self-service" in transcript
    brief = forge("brief", slug, "--format", "md").stdout
    for name, markdown in (("transcript", transcript), ("brief", brief)):
        assert active_elements(markdown) == [], (name, active_elements(markdown))
    word = tmp_path / "transcript.docx"
    forge("export", slug, "--format", "docx", "--out", str(word))
    with zipfile.ZipFile(io.BytesIO(word.read_bytes())) as docx:
        relations = "".join(docx.read(n).decode("utf-8") for n in docx.namelist() if n.endswith(".rels"))
        body = docx.read("word/document.xml").decode("utf-8")
    assert "javascript:" not in relations.lower() and "/image" not in relations.lower()
    assert beacon.url not in relations  # no image, frame or link that a viewer would load from the beacon
    assert "<w:drawing" not in body and "<w:pict" not in body
