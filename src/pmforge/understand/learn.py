"""Training the learned parts of understanding from the labelled corpus in `training/sentences/`.

`python -m pmforge.understand.learn` (or `scripts/train-understanding`) rebuilds `data/fields.npz` from the
corpus, deterministically: the same corpus and the same embedder give the same weights. It prints each
label's precision and recall on folds held out by writer (a writer's sentences are never both trained on and
scored), which is how the thresholds are chosen.
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np

from pmforge.understand import fields, nlp, people, scoring

L2 = 0.1  # on standardised features; chosen on the held-out folds, not on any session set
STEPS = 400
TARGET_PRECISION = 0.8  # each label's threshold is the lowest whose held-out precision reaches this
MIN_THRESHOLD, MAX_THRESHOLD = 0.35, 0.9
FOLDS = 8
HASHED_SCALE = 0.3  # chosen on the held-out writer folds (micro F1), not on any session set


def matrix(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    texts = [r["text"] for r in rows]
    docs = nlp.parse(texts)
    x = fields.features(texts, docs)
    y = np.array([[float(label in _labels(r)) for label in fields.LABELS] for r in rows], dtype=np.float32)
    return x, y


def _labels(row: dict) -> set[str]:
    """A row's field labels and the role labels its stakeholders' parts give it."""
    roles = {fields.ROLE_LABELS[s["role"]] for s in row.get("stakeholders", []) if s.get("role") in fields.ROLE_LABELS}
    return set(row["labels"]) | roles


def fit(x: np.ndarray, y: np.ndarray, hashed_from: int | None = None
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One-vs-rest logistic regression by full-batch gradient descent with Adam (deterministic: no sampling).
    Positives are weighted up to the negatives' mass, so a rare label is not learnt as "never". Columns from
    `hashed_from` on are 0/1 word and relation indicators: they keep one common scale instead of being
    standardised, which would make a word seen in three sentences as loud as the embedding."""
    x = x.astype(np.float32)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    if hashed_from is not None:
        mean[hashed_from:], scale[hashed_from:] = 0.0, HASHED_SCALE
    z = (x - mean) / scale
    n, d = z.shape
    labels = y.shape[1]
    # Single precision: the same answer to the digits that matter, in half the time.
    coef = np.zeros((labels, d), dtype=np.float32)
    bias = np.zeros(labels, dtype=np.float32)
    positives = y.sum(axis=0)
    weight = np.where(y > 0, ((n - positives) / np.maximum(positives, 1.0)) ** 0.5, 1.0).astype(np.float32)
    m_c, v_c, m_b, v_b = (np.zeros_like(coef), np.zeros_like(coef), np.zeros_like(bias), np.zeros_like(bias))
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, STEPS + 1):
        p = 1.0 / (1.0 + np.exp(-(z @ coef.T + bias)))
        error = (p - y) * weight / n
        grad_c = error.T @ z + L2 * coef
        grad_b = error.sum(axis=0)
        m_c = beta1 * m_c + (1 - beta1) * grad_c
        v_c = beta2 * v_c + (1 - beta2) * grad_c ** 2
        m_b = beta1 * m_b + (1 - beta1) * grad_b
        v_b = beta2 * v_b + (1 - beta2) * grad_b ** 2
        correction1, correction2 = 1 - beta1 ** step, 1 - beta2 ** step
        coef -= rate * (m_c / correction1) / (np.sqrt(v_c / correction2) + 1e-8)
        bias -= rate * (m_b / correction1) / (np.sqrt(v_b / correction2) + 1e-8)
    return coef, bias, mean, scale


def held_out(rows: list[dict], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each row's probabilities from a model trained on the other writers' rows only (writers are dealt into
    FOLDS groups, so a growing corpus does not multiply the training time)."""
    fold_of = writer_folds(rows)
    out = np.zeros_like(y)
    for fold in sorted(set(fold_of)):
        test = np.array([f == fold for f in fold_of])
        coef, bias, mean, scale = fit(x[~test], y[~test], fields.HASHED_FROM)
        out[test] = 1.0 / (1.0 + np.exp(-(((x[test] - mean) / scale) @ coef.T + bias)))
    return out


def writer_folds(rows: list[dict]) -> list[int]:
    """Each row's fold: writers in name order, dealt round-robin into FOLDS groups."""
    writers = sorted({r["source"] for r in rows})
    fold = {w: i % FOLDS for i, w in enumerate(writers)}
    return [fold[r["source"]] for r in rows]


def choose_thresholds(probs: np.ndarray, y: np.ndarray) -> np.ndarray:
    cuts = []
    for j in range(y.shape[1]):
        chosen = MAX_THRESHOLD
        for cut in np.arange(MIN_THRESHOLD, MAX_THRESHOLD + 1e-9, 0.025):
            predicted = probs[:, j] >= cut
            if predicted.sum() >= 5 and (y[predicted, j].mean() >= TARGET_PRECISION):
                chosen = float(cut)
                break
        cuts.append(chosen)
    return np.array(cuts)


def report(probs: np.ndarray, y: np.ndarray, cuts: np.ndarray) -> list[str]:
    lines = [f"{'label':20} {'n':>4} {'cut':>5} {'P':>5} {'R':>5}"]
    for j, label in enumerate(fields.LABELS):
        predicted = probs[:, j] >= cuts[j]  # (role labels are read only through probes and people)
        hits = float((predicted & (y[:, j] > 0)).sum())
        precision = hits / predicted.sum() if predicted.sum() else 0.0
        recall = hits / y[:, j].sum() if y[:, j].sum() else 0.0
        lines.append(f"{label:20} {int(y[:, j].sum()):4d} {cuts[j]:5.2f} {precision:5.2f} {recall:5.2f}")
    predicted = probs >= cuts
    hits = float((predicted & (y > 0)).sum())
    lines.append(f"{'micro':20} {int(y.sum()):4d} {'':5} {hits / max(predicted.sum(), 1):5.2f} {hits / y.sum():5.2f}")
    return lines


def train(folder=fields.CORPUS, out=fields.WEIGHTS, quiet: bool = False) -> fields.Weights:
    rows = fields.read_corpus(folder)
    x, y = matrix(rows)
    probs = held_out(rows, x, y)
    cuts = choose_thresholds(probs, y)
    if not quiet:
        print(f"{len(rows)} sentences from {len({r['source'] for r in rows})} writers; "
              f"scores on each writer's sentences from a model trained on the others':", file=sys.stderr)
        print("\n".join(report(probs, y, cuts)), file=sys.stderr)
    coef, bias, mean, scale = fit(x, y, fields.HASHED_FROM)
    from pmforge.embed.local import LocalEmbedder

    model = fields.Weights(labels=fields.LABELS, coef=coef, bias=bias, thresholds=cuts, mean=mean, scale=scale,
                           corpus=fields.corpus_digest(folder), embedder=LocalEmbedder.name)
    model.save(out)
    return model


# ---------------------------------------------------------------- the stakeholder filter

_GENERIC = frozenset("the our their my a an team teams department dept group people folks s".split())
PEOPLE_TARGET_PRECISION = 0.8  # as for the fields: a stakeholder row is kept when 4 in 5 such rows are right


def _name_words(name: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9&]+", name.lower().replace("'s", "")) if w not in _GENERIC}


def _same(candidate: str, names: list[str]) -> bool:
    words = _name_words(candidate)
    return any(words & _name_words(n) for n in names) if words else False


def people_matrix(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """One row per stakeholder candidate the parse offers in the corpus: 1 when it names an annotated
    stakeholder (and not an annotated option)."""
    docs = nlp.parse([r["text"] for r in rows])
    xs, ys, sources = [], [], []
    for row, doc in zip(rows, docs):
        found = people.candidates(doc)
        if not found:
            continue
        gold = [s["name"] for s in row.get("stakeholders", [])]
        options = row.get("options", [])
        xs.append(scoring.features(found, doc))
        ys += [float(_same(m.name, gold) and not _same(m.name, options)) for m in found]
        sources += [row["source"]] * len(found)
    return np.vstack(xs), np.array(ys, dtype=np.float32)[:, None], sources


def train_people(rows: list[dict], quiet: bool = False) -> fields.Weights:
    from pmforge.embed.local import LocalEmbedder

    x, y, sources = people_matrix(rows)
    groups = np.array(sources)
    probs = np.zeros_like(y)
    for source in sorted(set(sources)):
        test = groups == source
        coef, bias, mean, scale = fit(x[~test], y[~test])
        probs[test] = 1.0 / (1.0 + np.exp(-(((x[test] - mean) / scale) @ coef.T + bias)))
    cut = MAX_THRESHOLD
    for candidate in np.arange(0.3, MAX_THRESHOLD + 1e-9, 0.025):
        kept = probs[:, 0] >= candidate
        if kept.sum() and y[kept, 0].mean() >= PEOPLE_TARGET_PRECISION:
            cut = float(candidate)
            break
    if not quiet:
        kept = probs[:, 0] >= cut
        print(f"stakeholder filter: {len(y)} candidates, {int(y.sum())} stakeholders; on held-out writers at "
              f"{cut:.2f}: precision {y[kept, 0].mean():.2f}, recall {y[kept, 0].sum() / y.sum():.2f} "
              f"(all candidates: precision {y.mean():.2f})", file=sys.stderr)
    coef, bias, mean, scale = fit(x, y)
    model = fields.Weights(labels=("stakeholder",), coef=coef, bias=bias, thresholds=np.array([cut]), mean=mean,
                           scale=scale, corpus=fields.corpus_digest(), embedder=LocalEmbedder.name)
    model.save(scoring.WEIGHTS)
    return model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rebuild understanding's learned weights from training/sentences/.")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    train(quiet=args.quiet)
    train_people(fields.read_corpus(), quiet=args.quiet)
    print(f"wrote {fields.WEIGHTS.name} and people.npz in {fields.WEIGHTS.parent}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
