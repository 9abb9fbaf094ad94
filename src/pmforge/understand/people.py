"""Who a sentence names as a stakeholder: people, roles and teams, read from the parse, not from phrase lists.

A stakeholder is a person ("Maria Lopez"), a role ("our VP of Stores") or a team ("Sunil's integration
team"). A person and the title beside them are one stakeholder ("Rachel Okafor, our VP of Customer
Experience"); a department inside a title is part of the title. Vendors, products and systems are not
stakeholders: a name that is bought, licensed, evaluated or that quotes a price is an option.

The role a stakeholder plays is read from the predicate that governs the mention ("signs off" is decision
authority, "would have to change" is an execution dependency, "is worried" is neither), never from a word
elsewhere in the sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# ---------------------------------------------------------------- vocabulary: what heads a role or a team

ROLE_NOUNS = frozenset("""
vp svp evp avp ceo cfo cto coo cio cmo cpo cro cdo ciso cco chro cno cmio gm md
president chair chairman chairwoman chairperson founder cofounder co-founder owner director head lead manager
officer controller treasurer counsel architect analyst supervisor superintendent coordinator administrator
sponsor champion steward rep representative commissioner councillor councilor minister dean registrar
principal matron foreman forewoman dispatcher planner scheduler buyer surveyor inspector auditor regulator
secretary partner executive exec engineer designer lawyer attorney accountant actuary underwriter adjuster
nurse doctor physician surgeon clinician pharmacist technician tech mechanic driver teacher coach
consultant specialist strategist recruiter advisor adviser ombudsman steward trustee governor mayor
attendant publisher editor estimator
""".split())
# Roles a sentence can name in the plural as a group that must act or that resists ("the dispatchers").
GROUP_ROLE_NOUNS = frozenset("""
manager supervisor planner scheduler dispatcher nurse doctor physician surgeon clinician pharmacist technician
tech mechanic driver teacher coach engineer analyst underwriter adjuster agent rep inspector surveyor
operative operator handler picker packer buyer recruiter caseworker advisor adviser accountant lawyer
receptionist clerk coordinator administrator lead attendant editor reporter journalist cashier porter courier
paramedic carer caregiver therapist volunteer installer contractor seller merchant reviewer approver assessor
examiner auditor officer broker banker estimator
""".split())
TEAM_NOUNS = frozenset("""
team department dept group committee union board council desk office function squad crew unit panel
taskforce leadership management c-suite staff folks guys people lot side
""".split())
# Heads that name a team only with a modifier that says which ("the ops folks", not "folks").
_QUALIFIED_TEAM_NOUNS = frozenset("group unit office function panel staff management desk crew squad folks guys "
                                  "people lot side".split())
# Functions people name as if they were a person ("finance wants…", "legal needs to review").
FUNCTIONS = frozenset("""
finance legal compliance procurement purchasing security infosec it hr payroll ops operations engineering
marketing sales support risk audit data analytics product design facilities estates dpo
""".split())
TITLE_MODIFIERS = frozenset("""
senior junior interim acting deputy assistant associate chief general regional area district national global
local executive principal lead head
""".split())
# What makes a name an option rather than a person: it is bought, licensed, trialled or quoted.
OPTION_VERBS = frozenset("""
buy purchase license licence subscribe adopt evaluate trial pilot integrate replace procure implement install
deploy use rollout demo quote price stress-test assess benchmark compare migrate switch
""".split())
OPTION_NOUNS = frozenset("""
vendor supplier tool platform product system software app module suite solution service provider plugin
add-on addon portal engine api saas crm erp integration bot chatbot
""".split())

_NOT_NAMES = frozenset("""
I I'm I'd I've I'll The A An And But Or So If When While Our We Us They Their This That These Those It Its My
Your You He She His Her Him Yes No Ok Okay Also Then There Here What Which Who Why How Where Because Let Let's
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
September October November December Q1 Q2 Q3 Q4 H1 H2 FY Mode Forge Success Last Next First Second Third Today
Tomorrow Yesterday Honestly Basically Actually Maybe Probably Sure Thanks Hi Hello Dear Re Fwd Subject Sent
Nobody Everyone Someone Anyone Everything Nothing Something Anything Both Each Every Most Many Some All None
""".split())

_HONORIFIC = re.compile(r"^(?:Dr|Mr|Mrs|Ms|Mx|Prof|Sir|Dame)\.?$")


# ---------------------------------------------------------------- what a stakeholder mention is


@dataclass
class Mention:
    """One stakeholder named in one sentence."""

    name: str  # as it should stand in the brief: "Maria Lopez", "VP of Stores", "Sunil's integration team"
    kind: str  # person | role | team
    role_type: str = "other"  # decision_authority | execution_dependency | status_quo_beneficiary | pain_holder | other
    title: str = ""  # a person's role, when the sentence gives it ("VP of Stores")
    affiliation: str = ""  # the team or function a person is from ("finance")
    note: str = ""  # what the sentence says about them, in a few words
    tokens: set[int] = field(default_factory=set)  # token indexes the mention covers (and its title)
    anchor: int = 0  # the token whose predicate the mention's part is read from
    acting: bool = False  # the subject of a verb people do, or someone talked to
    option: bool = False  # read as a vendor, product or system (bought, quoted, called a tool)


# ---------------------------------------------------------------- role types, from the governing predicate

_DECISION = re.compile(
    r"\b(?:sign(?:s|ed|ing)? off|sign(?:s|ed)? (?:it|this|the)|approv\w*|decid\w*|decision|final (?:say|call|word)|"
    r"(?:owns?|holds?|controls?|has|manages?) (?:the |our |a )?(?:budget|p&l|purse|money|funding)|budget holder|"
    r"veto\w*|sponsor\w*|green-?light\w*|fund(?:s|ed|ing)? (?:it|this|the)|calls? the shots|"
    r"say(?:s)? yes|accountable for (?:the )?(?:decision|budget|outcome)|gatekeep\w*|authori[sz]\w*)\b", re.I)
_EXECUTION = re.compile(
    r"\b(?:(?:would|will|'d|'ll|must) (?:have|need) to \w+|(?:has|have|needs?) to (?!be\b)\w+|"
    r"(?:would|will|'d|'ll|has|have|had|need|needs|must|going) (?:to )?(?:have to |need to )?(?:change|adopt|use|"
    r"learn|switch|stop|start|run|build|deliver|integrate|maintain|support|implement|roll|train|staff|do|own|"
    r"review|update|re-?key|enter|scan|follow|work|handle|answer|expose|migrate|move|carry|install|configure)|"
    r"(?:builds?|built|delivers?|implements?|integrates?|maintains?|runs?|operates?|owns?) (?:the |our |it|this|"
    r"that )(?:\w+ )?(?:system|feed|data|integration|api|platform|pos|erp|crm|rollout|pipeline|servers?|it|"
    r"build|work|migration|roll-?out|process|workflow|tooling|app|stack)?|day[- ]to[- ]day|on the hook|"
    r"responsible for|in charge of (?:the )?(?:rollout|build|integration|delivery)|depend(?:s|ing)? on|"
    r"stretched|bandwidth|capacity)\b", re.I)
_STATUS_QUO = re.compile(
    r"\b(?:benefit\w* from|likes? (?:it|things|the current|the old|the way|how)|prefer\w* the (?:old|current)|"
    r"comfortable with|resist\w*|push(?:es|ed|ing)? back|pushback|block\w*|oppos\w*|protective|protect\w* (?:their|"
    r"his|her)|turf|territorial|would lose|stands? to lose|lose (?:their|his|her|the) (?:budget|headcount|control|"
    r"bonus|commission|team|contract|say)|set (?:that|the) deal up|gives? (?:them|him|her) control|"
    r"against (?:it|this|the idea|change)|hates? the idea|won'?t like|not (?:thrilled|keen|happy)|built the "
    r"(?:current|existing|old)|incumbent|status quo|paid (?:per|by the))\b", re.I)
_PAIN = re.compile(
    r"\b(?:suffer\w*|complain\w*|struggl\w*|feels? the pain|frustrat\w*|stuck|wast(?:e|es|ing) (?:hours|time|"
    r"days)|spend\w* (?:hours|ages|days)|overwhelm\w*|burn(?:ed|t|ing)? out|drown\w*|hates? (?:the|doing|it|"
    r"that|entering|chasing))\b", re.I)
_ROLE_TYPES = (("decision_authority", _DECISION), ("status_quo_beneficiary", _STATUS_QUO),
               ("execution_dependency", _EXECUTION), ("pain_holder", _PAIN))


def role_type(predicate: str) -> str:
    """The role a predicate gives its subject ("signs off on anything here" → decision_authority)."""
    return next((kind for kind, pattern in _ROLE_TYPES if pattern.search(predicate)), "other")


# ---------------------------------------------------------------- reading a parsed sentence


def _lower(token: "Token") -> str:
    return token.lower_.strip(".")


def _is_role_head(token: "Token") -> bool:
    word = _lower(token)
    if token.pos_ not in ("NOUN", "PROPN"):
        return word in ("vp", "svp", "evp", "ceo", "cfo", "cto", "coo", "cio", "cmo", "cpo", "cro", "head", "lead")
    lemma = token.lemma_.lower()
    return word in ROLE_NOUNS or lemma in ROLE_NOUNS


def _is_team_head(token: "Token") -> bool:
    return token.pos_ in ("NOUN", "PROPN") and (token.lemma_.lower() in TEAM_NOUNS or _lower(token) in TEAM_NOUNS)


def _looks_like_name(token: "Token") -> bool:
    text = token.text
    return (len(text) >= 2 and text[:1].isupper() and text[1:].islower() and text not in _NOT_NAMES
            and token.pos_ in ("PROPN", "NOUN", "ADJ", "VERB") and token.lower_ not in ROLE_NOUNS | TEAM_NOUNS
            and token.lower_ not in FUNCTIONS and token.ent_type_ not in ("DATE", "TIME", "MONEY", "PERCENT",
                                                                          "CARDINAL", "GPE", "LOC")
            and (token.ent_type_ != "NORP" or _in_person_context(token)))


def _in_person_context(token: "Token") -> bool:
    """Where only a person stands: "X from finance", "X, our CFO", the subject of a verb people do."""
    return any((c.dep_ == "prep" and c.lower_ in ("from", "in", "at")) or (c.dep_ == "appos" and _is_role_head(c))
               for c in token.children) or (token.dep_ == "nsubj" and bool(_HUMAN_VERBS.match(token.head.lemma_)))


def _left_modifiers(head: "Token", allowed=("compound", "amod", "nmod", "poss", "case")) -> list["Token"]:
    """The head's own modifiers to its left ("night shift" supervisors, "Sunil 's integration" team)."""
    out: list["Token"] = []
    for child in head.lefts:
        if child.dep_ in allowed and child.lower_ not in ("our", "my", "their", "your", "his", "her", "the", "a",
                                                          "an", "its", "this", "that", "current", "new", "other"):
            out += [t for t in child.subtree if t.dep_ != "punct" or t.text in ("-", "&")]
    return out


def _role_span(head: "Token") -> list["Token"]:
    """A role with its modifiers and the "of X" it heads: "regional VP of Stores", "head of merchandising"."""
    tokens = _left_modifiers(head) + [head]
    for child in head.rights:
        if child.dep_ == "prep" and child.lower_ in ("of", "for"):
            objects = [c for c in child.children if c.dep_ == "pobj"]
            if objects:
                obj = objects[0]
                tokens += [child] + [t for t in obj.subtree if t.dep_ not in ("relcl", "acl", "punct", "prep")
                                     and t.i <= obj.i + 3 and not (t.dep_ == "det")]
                break
    return sorted(set(tokens), key=lambda t: t.i)


def _text(tokens: Iterable["Token"]) -> str:
    words = sorted(tokens, key=lambda t: t.i)
    out = ""
    for t, after in zip(words, words[1:] + [None]):
        gap = after is not None and after.i != t.i + 1  # words left out between: never glue the two
        out += t.text + (t.whitespace_ or (" " if gap else ""))
    out = re.sub(r"\s+'s\b", "'s", out.strip())
    return re.sub(r"^(?:the|our|my|their|a|an)\s+", "", out, flags=re.I).strip(" ,.;:")


def _person_tokens(doc: "Doc") -> list[list["Token"]]:
    """Runs of tokens naming a person: spaCy's PERSON entities, and capitalised given names it missed when
    they stand where people stand (the subject of a verb, "X from finance", "talked to X")."""
    runs: list[list["Token"]] = []
    taken: set[int] = set()
    for ent in doc.ents:
        if ent.label_ == "PERSON":
            words = [t for t in ent if not _HONORIFIC.match(t.text) and t.text not in _NOT_NAMES and t.text != "'s"]
            if words and not any(_is_role_head(t) or _is_team_head(t) for t in words):
                runs.append(words)
                taken |= {t.i for t in words}
    in_titles = {t.i for head in doc if _is_role_head(head) for t in _role_span(head)}
    runs = [run for run in runs if not any(t.i in in_titles for t in run)]
    taken = {t.i for run in runs for t in run}
    for token in doc:
        if token.i in taken or token.i in in_titles or not _looks_like_name(token) or token.ent_type_ in (
                "ORG", "PRODUCT", "FAC", "WORK_OF_ART"):
            continue
        if token.i == 0 and token.pos_ != "PROPN":
            continue
        human_slot = (token.dep_ in ("nsubj", "nsubjpass", "pobj", "dobj", "appos", "conj", "poss", "ROOT")
                      and (token.pos_ == "PROPN"))
        from_team = any(c.dep_ == "prep" and c.lower_ in ("from", "in", "at", "on") for c in token.children)
        if human_slot or from_team:
            run = [token]
            nxt = doc[token.i + 1] if token.i + 1 < len(doc) else None
            if nxt is not None and nxt.i not in taken and _looks_like_name(nxt) and nxt.dep_ in ("compound", "flat") \
                    or (nxt is not None and token.dep_ == "compound" and _looks_like_name(nxt)):
                run.append(nxt)
            runs.append(run)
            taken |= {t.i for t in run}
    # Lower-case typists: "maria from finance", "ask dave in ops".
    for token in doc:
        if token.i in taken or not token.text.isalpha() or not token.text.islower() or token.pos_ != "PROPN":
            continue
        if any(c.dep_ == "prep" and c.lower_ in ("from", "in", "at") for c in token.children):
            runs.append([token])
            taken.add(token.i)
    return runs


def is_option(tokens: list["Token"], options: set[str]) -> bool:
    """A name that is bought, licensed, trialled, quoted or called a vendor or a tool is an option."""
    name = _text(tokens).lower()
    if name in options or any(name == o.split()[0] for o in options if o):
        return True
    root = max(tokens, key=lambda t: t.i)
    head = root.head
    if root.dep_ in ("dobj", "pobj", "attr", "oprd") and head.lemma_.lower() in OPTION_VERBS:
        return True
    if root.dep_ == "pobj" and head.head.lemma_.lower() in OPTION_VERBS | {"go", "switch", "move"}:
        return True
    neighbours = [head] + list(root.children) + [c for c in head.children if c.dep_ == "appos"]
    inside = {t.i for t in tokens}
    if any(t.lemma_.lower() in OPTION_NOUNS for t in neighbours if t.i not in inside):
        return True
    rel = [c for c in root.children if c.dep_ in ("relcl", "acl")]
    if any(r.lemma_.lower() in ("quote", "charge", "cost", "offer", "sell", "integrate", "price") for r in rel):
        return True
    return any(re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*", t.text) for t in tokens)  # CamelCase: a product's name


def _governor(token: "Token") -> "Token":
    """The predicate a mention is the subject or object of ("Marco from the ops team is worried" → is)."""
    node = token
    for _ in range(4):
        if node.dep_ in ("appos", "compound", "flat", "poss", "conj", "amod") and node.head.i != node.i:
            node = node.head
            continue
        if node.dep_ == "pobj" and node.head.dep_ == "prep" and node.head.head.pos_ in ("NOUN", "PROPN"):
            node = node.head.head  # "Marco from [the ops team]": the team's predicate is Marco's
            continue
        break
    return node.head if node.dep_ not in ("ROOT",) else node


def _predicate_text(verb: "Token", subject: "Token") -> str:
    """The words of the clause the mention sits in, without its subject or joined clauses, e.g. "signs off on
    anything here", "would have to change how they order"."""
    skip: set[int] = set()
    for child in verb.children:
        if child.dep_ in ("nsubj", "nsubjpass", "conj", "cc", "advcl", "mark", "punct", "parataxis", "dep", "csubj"):
            skip |= {t.i for t in child.subtree}
    words = [t for t in verb.subtree if t.i not in skip and t.i not in {s.i for s in subject.subtree}]
    words = [t for t in words if t.i >= min(w.i for w in words)]
    return _text(words[:18])


def _note(verb: "Token", subject: "Token", sentence_words: int) -> str:
    if verb.pos_ not in ("VERB", "AUX", "ADJ") and verb.dep_ != "ROOT":
        return ""
    text = _predicate_text(verb, subject)
    return text if 1 <= len(text.split()) <= 16 else ""


def candidates(doc: "Doc", options: set[str] | None = None) -> list[Mention]:
    """Every span of a parsed sentence that could name a stakeholder — people (with the title or team beside
    them merged in), roles, teams, functions — each with what the parse says of it, for the learned filter
    (`stakeholders`) to judge. `options` are names already known to be vendors, products or systems."""
    options = {o.lower() for o in (options or set())}
    mentions: list[Mention] = []
    covered: set[int] = set()

    def add(mention: Mention, anchor: "Token") -> None:
        verb = _governor(anchor)
        predicate = _predicate_text(verb, anchor) if verb.i != anchor.i else ""
        mention.role_type = role_type(" ".join(filter(None, [verb.text if verb.pos_ in ("VERB", "AUX") else "",
                                                             predicate])))
        mention.note = _note(verb, anchor, len(doc)) if verb.i != anchor.i else ""
        mention.anchor = anchor.i
        mention.acting = _acts(anchor)
        mentions.append(mention)
        covered.update(mention.tokens)

    # People, with the title or team beside them.
    person_runs = _person_tokens(doc)
    for run in person_runs:
        root = max(run, key=lambda t: t.i)
        mention = Mention(name=_text(run), kind="person", tokens={t.i for t in run},
                          option=is_option(run, options))
        for t in list(root.children) + ([root.head] if root.dep_ == "appos" else []):
            if t.dep_ == "appos" or t.i == root.head.i:
                if _is_role_head(t):
                    span = _role_span(t)
                    mention.title, mention.tokens = _text(span), mention.tokens | {s.i for s in span}
            if t.dep_ == "prep" and t.lower_ in ("from", "in", "at", "on", "of"):
                objects = [c for c in t.children if c.dep_ == "pobj"]
                if objects and (_is_team_head(objects[0]) or objects[0].lower_ in FUNCTIONS):
                    span = _left_modifiers(objects[0]) + [objects[0]]
                    mention.affiliation = _text(span)
                    mention.tokens |= {s.i for s in span} | {t.i}
        # A title before the name: "Revenue team lead Lucía Fernández", "Head nurse Tash", "CFO Dan Brown".
        before = [w for w in doc[max(0, run[0].i - 4): run[0].i]]
        if not mention.title and before and _is_role_head(before[-1]) and before[-1].i not in covered:
            start = len(before) - 1
            while start > 0 and before[start - 1].pos_ in ("NOUN", "PROPN", "ADJ") and not before[start - 1].is_stop:
                start -= 1
            mention.title = _text(before[start:])
            mention.tokens |= {w.i for w in before[start:]}
        # "Ravi Shah is the head of merchandising"; "Deborah signs off — she's our SVP of Claims" (a title
        # given through a pronoun belongs to the one person the sentence names).
        copulas = [root.head] if root.dep_ == "nsubj" and root.head.lemma_ == "be" else []
        if len(person_runs) == 1:
            copulas += [w.head for w in doc if w.lower_ in ("she", "he") and w.dep_ == "nsubj" and w.head.lemma_ == "be"]
        for copula in copulas:
            attrs = [c for c in copula.children if c.dep_ == "attr" and _is_role_head(c) and c.i not in covered]
            if not mention.title and attrs:
                span = _role_span(attrs[0])
                mention.title, mention.tokens = _text(span), mention.tokens | {s.i for s in span}
        add(mention, root)

    # Roles ("our CFO", "the head of merchandising"), unless they are a person's title; a role with a person
    # in apposition ("our CFO, Dan Brown") was taken with the person.
    for token in doc:
        plural = token.tag_ in ("NNS", "NNPS") or (token.lower_.endswith("s") and token.lemma_.lower() != token.lower_)
        group = plural and token.pos_ == "NOUN" and token.lemma_.lower() in GROUP_ROLE_NOUNS  # "the agents"
        if token.i in covered or not (_is_role_head(token) or group):
            continue
        span = _role_span(token)
        if any(t.i in covered for t in span):
            continue
        add(Mention(name=_text(span), kind="team" if plural else "role", tokens={t.i for t in span}), token)

    # Teams ("Sunil's integration team", "the union") and functions ("finance wants…").
    for token in doc:
        if token.i in covered:
            continue
        if _is_team_head(token):
            span = _left_modifiers(token) + [token]
            before_token = doc[token.i - 1] if token.i else None
            if len(span) == 1 and before_token is not None and before_token.lower_ in FUNCTIONS:
                span = [before_token, token]  # "the ops folks", parsed apart
            if len(span) == 1 and token.lemma_.lower() in _QUALIFIED_TEAM_NOUNS:
                continue
            add(Mention(name=_text(span), kind="team", tokens={t.i for t in span}, option=is_option(span, options)),
                token)
        elif _lower(token) in FUNCTIONS and token.pos_ in ("NOUN", "PROPN", "ADJ"):
            add(Mention(name=token.text if token.text.isupper() else token.lower_, kind="team", tokens={token.i}),
                token)
    return _dedupe(mentions)


_HUMAN_VERBS = re.compile(
    r"^(?:say|tell|want|ask|need|think|believe|worry|fear|hate|love|like|prefer|agree|disagree|approve|sign|own|"
    r"run|lead|manage|decide|block|resist|push|insist|argue|complain|care|support|champion|sponsor|fund|veto|"
    r"review|check|refuse|object|accept|demand|expect|escalate|raise|flag|warn|help|drive|write|send|chase|"
    r"have|must|will|would|should|can|could|be|get)$", re.I)


def _acts(token: "Token") -> bool:
    """A function or group that acts in the sentence: the subject of a verb people do, or someone talked to."""
    if token.dep_ in ("nsubj", "nsubjpass") and _HUMAN_VERBS.match(token.head.lemma_):
        return True
    if token.dep_ == "pobj" and token.head.lower_ in ("to", "with", "from", "by") and token.head.head.lemma_ in (
            "talk", "speak", "meet", "check", "hear", "ask", "get", "push", "pushback", "approval", "sign", "buy-in"):
        return True
    if token.i == 0 and token.head.pos_ in ("VERB", "AUX") and token.head.i != token.i:
        return True  # "Legal needs to review…", read by the model as an adjective
    return token.dep_ == "nsubj" or (token.dep_ == "ROOT" and token.i == 0 and len(token.doc) > 2
                                     and token.doc[1].pos_ in ("VERB", "AUX", "NOUN"))


def _dedupe(mentions: list[Mention]) -> list[Mention]:
    out: list[Mention] = []
    for m in mentions:
        same = next((o for o in out if o.name.lower() == m.name.lower()), None)
        if same is None:
            out.append(m)
        elif same.role_type == "other":
            same.role_type = m.role_type
    return out


# ---------------------------------------------------------------- what the learned filter reads of a candidate

_ENT_KINDS = ("PERSON", "ORG", "PRODUCT", "GPE", "NORP", "LOC", "FAC")
_DEPS = ("nsubj", "nsubjpass", "dobj", "pobj", "appos", "compound", "conj", "attr", "ROOT", "poss", "amod")
_KINDS = ("person", "role", "team")
_ROLES = ("decision_authority", "execution_dependency", "status_quo_beneficiary", "pain_holder")


def mention_features(mention: Mention, doc: "Doc") -> list[float]:
    """Facts about a candidate the parse gives, as numbers (the filter also reads the name's embedding)."""
    anchor = doc[mention.anchor]
    first = doc[min(mention.tokens)] if mention.tokens else anchor
    last = doc[max(mention.tokens)] if mention.tokens else anchor
    name = mention.name
    following = doc[last.i + 1] if last.i + 1 < len(doc) else None
    preceding = doc[first.i - 1] if first.i > 0 else None
    plural = anchor.tag_ in ("NNS", "NNPS")
    subject_is_me = any(w.lower_ in ("i", "i'm") and w.dep_ in ("nsubj",) and w.head.i == anchor.head.i for w in doc)
    return [
        *[float(mention.kind == k) for k in _KINDS],
        *[float(anchor.ent_type_ == e) for e in _ENT_KINDS],
        float(not anchor.ent_type_),
        float(anchor.pos_ == "PROPN"), float(anchor.pos_ == "NOUN"),
        float(plural),
        float(name[:1].isupper()), float(name.isupper() and len(name) > 1),
        float(bool(re.search(r"[a-z][A-Z]", name))),
        min(len(name.split()), 5) / 5.0,
        float(first.i == 0),
        float(following is not None and following.text in (":", "-", "—", "–")),
        *[float(anchor.dep_ == d) for d in _DEPS],
        float(bool(_HUMAN_VERBS.match(anchor.head.lemma_))),
        float(anchor.head.lemma_.lower() in OPTION_VERBS),
        float(anchor.head.lemma_ == "be"),
        float(bool(mention.title)), float(bool(mention.affiliation)),
        float(preceding is not None and preceding.lower_ in ("the", "our", "their", "my", "your", "his", "her")),
        float(subject_is_me and anchor.dep_ == "attr"),
        float(mention.option), float(mention.acting),
        *[float(mention.role_type == r) for r in _ROLES],
        float(anchor.lower_ in FUNCTIONS), float(anchor.lemma_.lower() in TEAM_NOUNS),
        float(anchor.lemma_.lower() in ROLE_NOUNS), float(anchor.lemma_.lower() in GROUP_ROLE_NOUNS),
        float(anchor.like_num or any(c.isdigit() for c in name)),
    ]
