"""The learned filter over stakeholder candidates: which spans the parse offered really name a person, a role
or a team someone would list in a brief ("Rachel Okafor", "the union", "Sunil's integration team"), and which
do not (a vendor, a label such as "Guardrail:", the PM's own title, "processing").

A logistic regression over the candidate's parse facts and the MiniLM embedding of its name, trained from the
stakeholders annotated in `training/sentences/` (`scripts/train-understanding`), shipped as `data/people.npz`
with the threshold chosen on held-out writers.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pmforge.understand import fields
from pmforge.understand.people import Mention, candidates, mention_features

if TYPE_CHECKING:
    from spacy.tokens import Doc

WEIGHTS = Path(__file__).with_name("data") / "people.npz"


def features(mentions: list[Mention], doc: "Doc") -> np.ndarray:
    names = fields.sentence_vectors([m.name for m in mentions])
    facts = np.array([mention_features(m, doc) for m in mentions], dtype=np.float32)
    return np.hstack([names, facts])


@lru_cache(maxsize=1)
def weights() -> fields.Weights:
    return fields.Weights.load(WEIGHTS)


def stakeholder_probabilities(mentions: list[Mention], doc: "Doc") -> list[float]:
    if not mentions:
        return []
    return [float(p) for p in weights().probabilities(features(mentions, doc))[:, 0]]


def keep_stakeholders(mentions: list[Mention], doc: "Doc") -> list[bool]:
    cut = float(weights().thresholds[0])
    return [p >= cut for p in stakeholder_probabilities(mentions, doc)]


def stakeholders(doc: "Doc", options: set[str] | None = None) -> list[Mention]:
    """The stakeholders one parsed sentence names: the parse's candidates that the learned filter keeps."""
    return stakeholders_among(candidates(doc, options), doc)


def stakeholders_among(found: list[Mention], doc: "Doc") -> list[Mention]:
    """The candidates (`people.candidates` of the sentence) that the learned filter keeps."""
    if not found:
        return []
    kept = [m for m, keep in zip(found, keep_stakeholders(found, doc)) if keep]
    return [m for m in kept if not _describes_another(m, kept, doc)]


def _describes_another(mention: Mention, others: list[Mention], doc: "Doc") -> bool:
    """"Accountable for adoption would be our COO, Femi Adeyemi", "Adoption owner is Tomás Reyes": the subject
    of "be" whose complement names a person or a role describes that person, and is no second stakeholder."""
    anchor = doc[mention.anchor]
    if anchor.dep_ not in ("nsubj", "nsubjpass") or mention.kind == "team":
        return False
    # "… would have to be our COO": the copula may sit under a modal verb's complement.
    copula = anchor.head if anchor.head.lemma_ == "be" else next(
        (c for c in anchor.head.children if c.dep_ == "xcomp" and c.lemma_ == "be"), None)
    if copula is None:
        return False
    complement = [w for c in copula.children if c.dep_ in ("attr", "acomp") for w in c.subtree]
    said = {w.i for w in complement}
    if anchor.ent_type_ != "PERSON" and mention.tokens & said:
        return True  # the complement was read as the subject's own title: it is the one being described
    return any(w.ent_type_ == "PERSON" for w in complement) or any(
        other is not mention and other.kind in ("person", "role") and other.tokens & said for other in others)
