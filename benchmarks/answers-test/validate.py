"""Validate the sealed answers-test set (structure only; no model is run).

    /work/main/.venv/bin/python /work/main/benchmarks/answers-test/validate.py
"""
import collections
import json
import os
import sys

import docx

HERE = os.path.dirname(os.path.abspath(__file__))


def doc_text(path):
    if path.endswith(".docx"):
        d = docx.Document(path)
        parts = [p.text for p in d.paragraphs]
        parts += [c.text for t in d.tables for r in t.rows for c in r.cells]
        return "\n".join(parts)
    with open(path, encoding="utf-8") as f:
        return f.read()


def main():
    errors = []
    rows = []
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append(f"line {n}: bad JSON: {e}")
                continue
            if set(r) != {"file", "question", "answers"}:
                errors.append(f"line {n}: keys {sorted(r)}")
            rows.append((n, r))

    texts, words = {}, {}
    for n, r in rows:
        fn = r.get("file", "")
        p = os.path.join(HERE, fn)
        if not os.path.isfile(p):
            errors.append(f"line {n}: missing file {fn}")
            continue
        if fn not in texts:
            texts[fn] = doc_text(p)
            words[fn] = len(texts[fn].split())
        low = texts[fn].lower()
        ans = r.get("answers", [])
        if not (isinstance(ans, list) and 1 <= len(ans) <= 3):
            errors.append(f"line {n}: need 1-3 answers, got {ans!r}")
            continue
        for a in ans:
            if a != a.lower() or a != a.strip() or not a:
                errors.append(f"line {n}: answer not lower-case/trimmed: {a!r}")
        if not any(a in low for a in ans):
            errors.append(f"line {n}: no answer found in {fn}: {ans}")

    cats = json.load(open(os.path.join(HERE, "categories.json"), encoding="utf-8"))
    qs = [r["question"] for _, r in rows]
    if [c["question"] for c in cats] != qs:
        errors.append("categories.json out of sync with questions.jsonl")
    cc = collections.Counter(c["category"] for c in cats)
    fc = collections.Counter(r["file"] for _, r in rows)

    print(f"rows: {len(rows)}")
    print("per file:", dict(fc))
    print("words per file:", words)
    print("categories:", dict(cc))
    print("  who:", cc["who"], " when:", cc["when"],
          " how many/much:", cc["how_many"] + cc["how_many_table"],
          f"(table-cell only: {cc['how_many_table']})",
          " stands-for:", cc["acronym"], " which:", cc["which_compare"],
          " header-line:", cc["header"])
    if errors:
        print("ERRORS:")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
