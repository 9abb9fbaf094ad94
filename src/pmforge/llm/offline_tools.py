"""The offline interviewer's note-taking: which tool calls a PM's message warrants, by plain rules.

Claude decides this from the instructions; offline, explicit phrasings drive the same tools, so
the register and the briefs fill up in an offline session too. Every argument comes from the
PM's own words.
"""

from __future__ import annotations

import re

from . import extractive

_ASSUMPTION_REF = re.compile(r"\b(A\d+)\b")
_INVALIDATED = re.compile(r"\b(is wrong|was wrong|not true|turns out|turned out|doesn't hold|does not hold|"
                          r"invalidated|disproved|false)\b", re.I)
_CONFIRMED = re.compile(r"\b(is confirmed|was confirmed|confirmed|holds|is true|proved|validated)\b", re.I)
_NAME = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z'’-]+)+)\b")
_ROLES = [
    ("decision_authority", re.compile(r"\b(signs? off|approves?|decides?|decision maker|final say|owns the budget)\b", re.I)),
    ("pain_holder", re.compile(r"\b(suffers?|complains?|struggles?|feels? the pain|pain holder|hates?)\b", re.I)),
    ("status_quo_beneficiary", re.compile(r"\b(benefits? from the (?:current|status quo)|likes? things as they are|"
                                          r"status quo|would lose)\b", re.I)),
    ("execution_dependency", re.compile(r"\b(would have to change|has to change|needs? to change|runs the|"
                                        r"depends on (?:her|his|their) team)\b", re.I)),
]
_METRICS = [
    ("leading", re.compile(r"\bleading (?:indicator|metric|signal)\b", re.I)),
    ("lagging", re.compile(r"\b(lagging (?:indicator|metric)|ultimately measure|the outcome we want)\b", re.I)),
    ("anti_metrics", re.compile(r"\b(anti-?metric|must not (?:get worse|rise|fall|drop)|without hurting)\b", re.I)),
]
_PROCEED = re.compile(r"\b(?:we should )?(?:proceed|go ahead|it is worth it|worth doing) if\b", re.I)
_DONT = re.compile(r"\b(?:do not proceed|don't proceed|kill it|stop|walk away) if\b", re.I)
_AUDIENCE = re.compile(r"\b(?:target (?:users?|audience|customers?) (?:is|are)|it is for|this is for)\b", re.I)
_ORG = re.compile(r"^(?:for context|about us|about our (?:company|organisation|organization|team))\b", re.I)
_ARTIFACT = re.compile(r"\b(generate|export|write up|download|produce)\b.*\b(brief|register|evaluation)\b", re.I)
_SOLUTION = re.compile(r"\b(?:the solution is|the idea is|we would build|we'd build|proposed solution is)\b", re.I)
_RISK = re.compile(r"\b(value|usability|feasibility|viability) risk is (low|medium|high)\b", re.I)
_BUILD = re.compile(r"\bwe should (build|buy|partner)\b", re.I)
_VALIDATE = re.compile(r"\b(?:test|validate|check) (A\d+) (?:with|by|through) (?:an? )?([^.;,]+)", re.I)
_GO = re.compile(r"\b(recommend(?:ation is)?|verdict is) (?:a )?(conditional go|no-go|no go|go)\b", re.I)


def _sentences_matching(message: str, pattern: re.Pattern) -> list[str]:
    return [s for s in extractive.sentences(message) if pattern.search(s)]


def tool_calls(
    message: str, mode: str, known_stakeholders: set[str], known_assumptions: set[str], org_context: str = ""
) -> list[tuple[str, dict]]:
    """(tool name, arguments) pairs for what this message states."""
    calls: list[tuple[str, dict]] = []
    org = _sentences_matching(message, _ORG)
    if org:  # the tool replaces the whole context, so send what was known plus what is new
        calls.append(("update_org_context", {"org_context": " ".join([org_context, *org]).strip()}))
    for sentence in extractive.sentences(message):
        refs = [r for r in _ASSUMPTION_REF.findall(sentence) if r in known_assumptions]
        for ref in refs:
            if _INVALIDATED.search(sentence):
                calls.append(("update_assumption_status", {"id": ref, "status": "invalidated", "reason": sentence}))
            elif _CONFIRMED.search(sentence):
                calls.append(("update_assumption_status", {"id": ref, "status": "confirmed", "reason": sentence}))
        for role, pattern in _ROLES:
            if pattern.search(sentence):
                for name in _NAME.findall(sentence):
                    if name.casefold() not in known_stakeholders and not name.startswith(("The ", "Our ")):
                        known_stakeholders.add(name.casefold())
                        calls.append(("add_stakeholder", {"name": name, "role": role,
                                                          "notes": extractive.clip_words(sentence, 40)}))
                break
    for field, pattern in _METRICS:
        found = _sentences_matching(message, pattern)
        if found:
            calls.append(("update_success_metrics", {field: [extractive.clip_words(s, 40) for s in found]}))
    for kind, pattern in (("do_not_proceed_if", _DONT), ("proceed_if", _PROCEED)):
        for sentence in _sentences_matching(message, pattern):
            calls.append(("add_decision_criterion", {"kind": kind, "criterion": extractive.clip_words(sentence, 40)}))
            break
    audience = _sentences_matching(message, _AUDIENCE)
    if audience:
        calls.append(("update_target_audience", {"target_audience": extractive.clip_words(audience[0], 40)}))
    if mode == "mode_2":
        calls += _mode_2_calls(message)
    if _ARTIFACT.search(message):
        kind = "assumption_register" if re.search(r"register", message, re.I) else (
            "solution_evaluation" if mode == "mode_2" else "problem_brief")
        calls.append(("generate_artifact", {"kind": kind}))
    return calls


def _mode_2_calls(message: str) -> list[tuple[str, dict]]:
    calls: list[tuple[str, dict]] = []
    solution = _sentences_matching(message, _SOLUTION)
    if solution:
        name = re.sub(_SOLUTION, "", solution[0]).strip(" :.").split(",")[0]
        calls.append(("set_solution_info", {"name": extractive.clip_words(name, 8).rstrip(" …") or "The solution",
                                            "description": extractive.clip_words(solution[0], 60)}))
    for sentence in extractive.sentences(message):
        risk = _RISK.search(sentence)
        if risk:
            calls.append(("set_risk_assessment", {"dimension": risk.group(1).lower(), "level": risk.group(2).lower(),
                                                  "summary": extractive.clip_words(sentence, 50)}))
        build = _BUILD.search(sentence)
        if build:
            calls.append(("set_build_vs_buy", {"recommendation": build.group(1).lower(),
                                               "rationale": extractive.clip_words(sentence, 50)}))
        test = _VALIDATE.search(sentence)
        if test:
            calls.append(("set_validation_plan", {"riskiest_assumption": test.group(1), "approach": test.group(2)[:200],
                                                  "description": extractive.clip_words(sentence, 60)}))
        go = _GO.search(sentence)
        if go:
            verdict = {"go": "go", "no-go": "no_go", "no go": "no_go", "conditional go": "conditional_go"}[go.group(2).lower()]
            conditions = [extractive.clip_words(sentence, 40)] if verdict == "conditional_go" else []
            calls.append(("set_go_no_go", {"recommendation": verdict, "conditions": conditions}))
    return calls
