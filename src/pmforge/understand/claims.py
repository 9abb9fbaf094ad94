"""Hedged beliefs as assumptions: the uncertain claim itself, cleanly worded, with the evidence kept apart.

"Last time we offered prepaid labels, only 8% of returners used them, so I'm not sure customers want
self-service at all" registers "Customers want self-service", with the prepaid-label figure as its basis.
"Nobody has checked whether the warehouse scanners can even read QR codes" registers "The warehouse scanners
can read QR codes". The claim is the clause the hedge governs, read from the dependency parse; whether a
sentence is hedged at all is a rule (`text.is_hedged`), because hedges are a closed class of words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pmforge.understand import text as t

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Words whose clausal complement is the uncertain claim.
_HEDGE_HEADS = frozenset("""
think believe assume suspect reckon guess imagine expect figure feel doubt bet hope wager sure certain confident
convinced tell told hear heard check verify confirm test validate measure know seem appear look say
guess hunch sense gut assumption belief hypothesis theory expectation read bet feeling impression
""".split())
_ADVERB_HEDGES = frozenset("""
probably presumably apparently supposedly allegedly likely hopefully seemingly reportedly arguably possibly
perhaps maybe
""".split())
# Words that colour a claim without changing it ("can even read", "want self-service at all").
_INTENSIFIERS = frozenset("even really actually necessarily honestly definitely certainly just".split())
_CLAUSE_DEPS = ("ccomp", "xcomp", "advcl", "acl", "relcl")


def _subtree(token: "Token") -> list["Token"]:
    """A clause's words, without a clause joined to it by "but"/"and" that has a subject of its own ("the API
    supports batch uploads[, but nobody has tested it]")."""
    cut: set[int] = set()
    for child in token.children:
        if child.dep_ == "conj" and child.pos_ in ("VERB", "AUX") and any(
                c.dep_ in ("nsubj", "nsubjpass") for c in child.children):
            cut |= {w.i for w in child.subtree}
            cut |= {c.i for c in token.children if c.dep_ in ("cc", "punct") and token.i < c.i < child.i}
    return sorted((w for w in token.subtree if w.i not in cut), key=lambda w: w.i)


def _complement(head: "Token") -> "Token | None":
    """The clause a hedge word governs: "sure [customers want…]", "checked [whether the scanners…]",
    "my guess is [that most stores…]", "I've been told [the ERP can't…]"."""
    # The clause after the hedge first: "The pilot stores loved it, so I think [the rest will adopt it]".
    for child in sorted(head.children, key=lambda c: (c.i < head.i, c.i)):
        if child.dep_ in ("ccomp", "xcomp") and child.pos_ in ("VERB", "AUX"):
            return child
        if child.dep_ == "advcl" and any(m.lower_ in ("whether", "if", "that") for m in child.children):
            return child
        if child.dep_ == "prep" and child.lower_ in ("about", "on", "that"):
            clauses = [c for c in child.children if c.dep_ in ("pcomp", "pobj") and c.pos_ in ("VERB", "AUX")]
            if clauses:
                return clauses[0]
    # "My guess is that…": the hedge noun is the subject of "is", whose complement is the claim.
    if head.dep_ in ("nsubj", "attr") and head.head.lemma_ == "be":
        return _complement(head.head) if head.head.i != head.i else None
    # "I've been told the ERP can't export": the model attaches the claim's subject to "told".
    if head.lower_ in ("told", "heard"):
        objects = [c for c in head.children if c.dep_ in ("dobj", "ccomp")]
        if objects:
            clause = [c for c in head.children if c.dep_ == "ccomp"]
            return clause[0] if clause else None
    return None


def _negated(token: "Token") -> bool:
    return any(c.dep_ == "neg" for c in token.children) or (token.lower_ == "doubt")


def _words(tokens: list["Token"]) -> str:
    """Tokens back to text; where tokens were left out between two, one space."""
    text = "".join(w.text + (w.whitespace_ if n + 1 == len(tokens) or tokens[n + 1].i == w.i + 1 else " ")
                   for n, w in enumerate(tokens)).strip()
    text = re.sub(r"\s+([,.;:!?%])", r"\1", text)
    return re.sub(r"\s{2,}", " ", text)


def _clean_claim(tokens: list["Token"]) -> str:
    keep = []
    for w in tokens:
        if w.dep_ == "mark" and w.lower_ in ("whether", "if", "that") and w.i == tokens[0].i:
            continue
        if w.lower_ in _INTENSIFIERS and w.dep_ == "advmod":
            continue
        if w.lower_ in _ADVERB_HEDGES and w.dep_ == "advmod":
            continue
        keep.append(w)
    text = _words(keep)
    text = re.sub(r"\s+at all\b|\s+or not\b|\s+anymore\b", "", text, flags=re.I)
    text = re.sub(r"^(?:that|whether|if)\s+", "", text, flags=re.I).strip(" ,;:—–-")
    return t.tidy(text) if text else ""


def _with_subject(claim: "Token", tokens: list["Token"], doc: "Doc") -> list["Token"]:
    """"I've been told [the ERP] [can't export daily data]": bring a subject the parse hung elsewhere back."""
    if any(c.dep_ in ("nsubj", "nsubjpass", "expl") for c in claim.children):
        return tokens
    head = claim.head
    objects = [c for c in head.children if c.dep_ == "dobj" and c.i < claim.i]
    return sorted(set(tokens) | {w for o in objects for w in o.subtree}, key=lambda w: w.i) if objects else tokens


def _negate(tokens: list["Token"]) -> list[str]:
    """"the drivers will use a tablet" → "the drivers will not use a tablet" (for "I don't think…")."""
    words = [w.text_with_ws for w in tokens]
    for n, w in enumerate(tokens):
        if w.dep_ in ("aux", "auxpass") or (w.lemma_ == "be" and w.dep_ in ("ROOT", "ccomp", "conj")):
            words[n] = w.text_with_ws.rstrip() + " not "
            return words
    for n, w in enumerate(tokens):
        if w.pos_ == "VERB" and w.dep_ in ("ccomp", "ROOT", "xcomp"):
            third = "Sing" in w.morph.get("Number", []) and "3" in w.morph.get("Person", [])
            words[n] = ("does not " if third or w.tag_ == "VBZ" else "do not ") + w.lemma_ + w.whitespace_
            return words
    return words


def claim_and_evidence(doc: "Doc") -> tuple[str, str]:
    """(claim, evidence) for a hedged sentence, both tidied; ("", "") when the parse finds no claim (the
    caller then falls back to the sentence without its hedge words)."""
    hedge_head = None
    for token in doc:
        word = token.lower_
        if word in _HEDGE_HEADS or token.lemma_.lower() in _HEDGE_HEADS:
            if _complement(token) is not None:
                hedge_head = token
                break
    if hedge_head is not None:
        clause = _complement(hedge_head)
        assert clause is not None
        tokens = _with_subject(clause, _subtree(clause), doc)
        negative_belief = hedge_head.lemma_ in ("think", "believe", "expect", "reckon") and _negated(hedge_head)
        if negative_belief:  # "I don't think the drivers will use it": the PM believes they won't
            claim = t.tidy(re.sub(r"\s{2,}", " ", "".join(_negate(tokens)).strip()))
        else:
            claim = _clean_claim(tokens)
        predicate = hedge_head
        while predicate.dep_ in ("acomp", "attr", "nsubj", "dobj", "neg", "prep") and predicate.head.i != predicate.i:
            predicate = predicate.head  # "I'm not [sure]", "[my guess] is": the hedge's whole clause
        # The hedge itself ("so I'm not sure", "my guess is that"): its predicate and the small words around it.
        hedge_words = {predicate.i, hedge_head.i} | {w.i for c in predicate.children if c.dep_ in (
            "nsubj", "nsubjpass", "aux", "auxpass", "neg", "acomp", "advmod", "cc", "mark", "punct", "attr", "prep",
            "expl") and c.i not in {x.i for x in clause.subtree} for w in c.subtree}
        claimed = {x.i for x in tokens}
        evidence = _evidence([w for w in doc if w.i not in hedge_words and w.i not in claimed])
        return claim, evidence
    adverb = next((w for w in doc if w.lower_ in _ADVERB_HEDGES), None)
    if adverb is not None:
        return _clean_claim([w for w in doc if w.dep_ != "punct" or w.i < len(doc) - 1]), ""
    return "", ""


def _evidence(tokens: list["Token"]) -> str:
    words = [w for w in tokens if not (w.dep_ in ("cc", "punct") and w.lower_ in (",", "so", "and", "but", ".", ";"))]
    text = _words(words).strip(" ,;:—–-")
    text = re.sub(r"^(?:so|and|but|because|since)\s+", "", text, flags=re.I)
    return t.tidy(text) if len(text.split()) >= 4 else ""
