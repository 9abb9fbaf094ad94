"""Git conflict markers in a workspace's files, resolved by keeping both sides.

Workspaces are committed, so two clones that both talked to Forge meet in a merge. `turns.jsonl` is
union-merged (`.gitattributes`), but `state.json` and `project_state.json` end up with `<<<<<<<`,
`=======` and `>>>>>>>` lines that no JSON reader accepts. Everything here is pure: text and plain
JSON values in, merged values and one note per choice out. `Workspace.resolve_conflicts` does the I/O.

The rules: items with an identity (turns and assumptions by `id`, files by `file_id`, stakeholders by
`name`) are joined; other lists are joined without duplicates; where the two sides hold different
scalars for the same field, the side saved more recently (`updated_at`) wins and the other value is
noted, so the PM can see what was set aside.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

START, MIDDLE, BASE, END = "<<<<<<<", "=======", "|||||||", ">>>>>>>"

# Keys that identify the items of a list, tried in order.
IDENTITY_KEYS = ("file_id", "id", "name")

NOTE_VALUE_CHARS = 80


class Unmergeable(ValueError):
    """The two sides cannot be read (a side is not valid JSON): the file needs a hand merge."""


def has_markers(text: str) -> bool:
    """A line that opens a conflict, and one that closes it (a reply quoting '=======' is not enough)."""
    lines = text.splitlines()
    return any(l.startswith(START) for l in lines) and any(l.startswith(END) for l in lines)


def split_sides(text: str) -> tuple[str, str]:
    """The file as each side of the merge wrote it: lines outside conflicts go to both, `ours` (between
    <<<<<<< and =======) to the first, `theirs` (between ======= and >>>>>>>) to the second. The common
    ancestor's lines of a diff3-style conflict (after |||||||) go to neither."""
    ours, theirs = [], []
    where = "both"
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare.startswith(START) and where == "both":
            where = "ours"
        elif bare.startswith(BASE) and where == "ours":
            where = "base"
        elif bare == MIDDLE and where in ("ours", "base"):
            where = "theirs"
        elif bare.startswith(END) and where == "theirs":
            where = "both"
        else:
            if where in ("both", "ours"):
                ours.append(line)
            if where in ("both", "theirs"):
                theirs.append(line)
    return "".join(ours), "".join(theirs)


def parse_sides(text: str) -> tuple[Any, Any]:
    ours, theirs = split_sides(text)
    try:
        return json.loads(ours), json.loads(theirs)
    except json.JSONDecodeError as exc:
        raise Unmergeable(f"one side of the conflict is not valid JSON ({exc.msg})") from None


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= NOTE_VALUE_CHARS else text[: NOTE_VALUE_CHARS - 1] + "…"


def _identity(items: list) -> str | None:
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    return next((k for k in IDENTITY_KEYS if all(k in i for i in items)), None)


def merge_values(ours: Any, theirs: Any, ours_newer: bool, path: str, notes: list[str]) -> Any:
    """One value holding both sides (see the module's rules); each scalar choice is added to `notes`."""
    if ours == theirs:
        return ours
    if isinstance(ours, dict) and isinstance(theirs, dict):
        merged = {}
        for key in list(ours) + [k for k in theirs if k not in ours]:
            if key not in theirs:
                merged[key] = ours[key]
            elif key not in ours:
                merged[key] = theirs[key]
            else:
                merged[key] = merge_values(ours[key], theirs[key], ours_newer, f"{path}.{key}" if path else key,
                                           notes)
        return merged
    if isinstance(ours, list) and isinstance(theirs, list):
        return _merge_lists(ours, theirs, ours_newer, path, notes)
    kept, other = (ours, theirs) if ours_newer else (theirs, ours)
    notes.append(f"{path}: kept {_show(kept)} (saved later); the other side had {_show(other)}")
    return kept


def _merge_lists(ours: list, theirs: list, ours_newer: bool, path: str, notes: list[str]) -> list:
    key = _identity(ours + theirs)
    if key is None:  # plain values: both sides' items, each once, in order of first appearance
        merged = list(ours)
        seen = {json.dumps(v, sort_keys=True) for v in ours}
        for item in theirs:
            if json.dumps(item, sort_keys=True) not in seen:
                merged.append(item)
        return merged
    theirs_by_key = {item[key]: item for item in theirs}
    merged = []
    for item in ours:
        other = theirs_by_key.pop(item[key], None)
        merged.append(item if other is None else
                      merge_values(item, other, ours_newer, f"{path}[{item[key]}]", notes))
    merged += [item for item in theirs if item[key] in theirs_by_key]
    return merged


def _ours_newer(ours: dict, theirs: dict) -> bool:
    """Whether our side was saved more recently. Files from before `updated_at` existed: ours (HEAD)."""
    return str(ours.get("updated_at") or "") >= str(theirs.get("updated_at") or "")


def _assumption_number(assumption_id: str) -> int:
    digits = "".join(ch for ch in str(assumption_id) if ch.isdigit())
    return int(digits) if digits else 0


def _distinct_assumptions(ours: list, theirs: list, notes: list[str]) -> list:
    """Both clones number new assumptions from the same register, so "A4" on each side may be two different
    claims: the other side's gets the next free id instead of being merged into ours."""
    ours_claims = {a.get("id"): a.get("claim") for a in ours if isinstance(a, dict)}
    top = max((_assumption_number(a.get("id", "")) for a in ours + theirs if isinstance(a, dict)), default=0)
    renamed = []
    for a in theirs:
        if isinstance(a, dict) and a.get("id") in ours_claims and ours_claims[a["id"]] != a.get("claim"):
            top += 1
            notes.append(f"assumptions: the other side's {a['id']} ({_show(a.get('claim', ''))}) is a different "
                         f"claim; kept it as A{top}")
            a = {**a, "id": f"A{top}"}
        renamed.append(a)
    return renamed


def merge_state(ours: dict, theirs: dict) -> tuple[dict, list[str]]:
    """state.json: both sides' assumptions, brief and routing; the later save wins a scalar."""
    notes: list[str] = []
    if isinstance(ours.get("assumptions"), list) and isinstance(theirs.get("assumptions"), list):
        theirs = {**theirs, "assumptions": _distinct_assumptions(ours["assumptions"], theirs["assumptions"], notes)}
    merged = merge_values(ours, theirs, _ours_newer(ours, theirs), "", notes)
    return merged, [n for n in notes if not n.startswith("updated_at:")]


def _exact_name(entry: dict) -> str:
    """A file entry's name as uploads compare names: exactly, in NFC."""
    return unicodedata.normalize("NFC", str(entry.get("filename", "")))


def merge_manifest(ours: dict, theirs: dict) -> tuple[dict, list[str]]:
    """project_state.json: every file of both sides by file id; two versions of one file name (each clone
    uploaded its own) keep the later upload, and the other is noted. Names are compared exactly (NFC), as
    uploads compare them: 'Straße.md' and 'STRASSE.md' are two files, both kept."""
    notes: list[str] = []
    merged = merge_values(ours, theirs, _ours_newer(ours, theirs), "", notes)
    files = merged.get("file_summaries")
    if isinstance(files, list):
        latest: dict[str, dict] = {}
        for entry in files:
            if not isinstance(entry, dict):
                continue
            name = _exact_name(entry)
            held = latest.get(name)
            if held is None or str(entry.get("uploaded_at", "")) > str(held.get("uploaded_at", "")):
                if held is not None:
                    notes.append(f"file_summaries: kept the later upload of {entry.get('filename')}; the other "
                                 f"side's version ({held.get('uploaded_at', '?')}) needs uploading again")
                latest[name] = entry
            else:
                notes.append(f"file_summaries: kept the later upload of {held.get('filename')}; the other side's "
                             f"version ({entry.get('uploaded_at', '?')}) needs uploading again")
        merged["file_summaries"] = [e for e in files if isinstance(e, dict)
                                    and latest.get(_exact_name(e)) is e]
    return merged, [n for n in notes if not n.startswith("updated_at:")]


# ---------------------------------------------------------------- the transcript


def transcript_lines(text: str) -> list[str]:
    """turns.jsonl without its conflict markers: every line of both sides (turns and patches are self-
    contained and carry ids, so keeping both is a union merge)."""
    return [l for l in text.splitlines()
            if l.strip() and not l.startswith((START, BASE, END)) and l.rstrip("\r") != MIDDLE]


def renumber(numbers: list[int]) -> list[int]:
    """Turn numbers that go strictly up, in transcript order: a number not above the one before it (both
    clones' turn 12 after a union merge) becomes the one before it plus one. Gaps (a lost line) stay, so
    turns after them keep the numbers their memory was stored under."""
    out: list[int] = []
    for n in numbers:
        out.append(n if not out or n > out[-1] else out[-1] + 1)
    return out
