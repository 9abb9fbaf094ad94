"""Mode 1 — Discover & Frame: what is really going on, and is it worth pursuing?"""

from __future__ import annotations

from pmforge.knowledge.catalog import Pattern, Probe

_M = "mode_1"

PROBES: tuple[Probe, ...] = (
    Probe(
        id="solution_problem_separation",
        name="Solution–Problem Separation",
        mode=_M,
        order=1,
        purpose=(
            "Separate the real problem from the proposed solution; the problem must stand on its "
            "own, backed by real examples."
        ),
        look_for=(
            "a feature named before any user pain",
            '"we need to build / add X"',
            "the problem described as the absence of the solution",
            "no named user or real example",
        ),
        questions=(
            "If this solution could never be built, what problem would still be hurting, and for whom?",
            "Describe the last specific time someone hit this problem: who was it, what were they trying to do, "
            "and what happened?",
            "How do people work around this today, and what does the workaround cost them in time or money?",
            "Where did the idea for this particular solution come from, and when did it first come up?",
            "Which other ways of solving this have been considered, and why were they set aside?",
            "What would users notice in their first month if the problem simply went away?",
        ),
        satisfied_when=(
            "The problem is stated in users' terms without mentioning the proposed solution, "
            "backed by at least one concrete instance."
        ),
    ),
    Probe(
        id="why_now",
        name="Why Now",
        mode=_M,
        order=2,
        purpose=(
            "Find the trigger that makes this urgent now; is it a lasting shift or a reaction to one "
            "event?"
        ),
        look_for=(
            "a recent incident, lost deal, executive request or competitor move",
            "a hard date (contract, regulation, budget cycle)",
            '"it has always been a problem"',
            "urgency with no identifiable source",
        ),
        questions=(
            "What happened in the last few months that put this on the roadmap now rather than a year ago?",
            "Who first asked for this, and what exactly did they say?",
            "If nothing were done for six months, what would concretely get worse, and for whom?",
            "Is there a date attached to this, such as a contract, regulation, launch or budget cycle? What is it?",
            "Has this been attempted before? What stopped it then, and what has changed since?",
        ),
        satisfied_when=(
            "The trigger is named with its source, and it is clear whether the urgency is structural "
            "or a reaction to a single event."
        ),
    ),
    Probe(
        id="immediate_vs_platform",
        name="Immediate vs Platform Framing",
        mode=_M,
        order=3,
        purpose=(
            "Choose between a one-off fix and a platform: the two need different scope, funding and "
            "success measures."
        ),
        look_for=(
            '"while we\'re at it"',
            "other teams said to want to reuse it",
            '"future-proof" or "scalable" used as a goal',
            "one pressing use case padded with speculative ones",
        ),
        questions=(
            "Which single use case has to work on day one for this to count as a success?",
            "Which other teams or products would build on this, and has any of them committed time or budget?",
            "If you built only the narrow fix for the first use case, what would you lose?",
            "How much of the scope exists for needs you expect later rather than needs you have now?",
            "Who would own and fund this as a shared capability after launch?",
        ),
        satisfied_when=(
            "The PM has explicitly chosen an immediate or a platform framing, and scope and success "
            "measures match that choice."
        ),
    ),
    Probe(
        id="execution_reality_check",
        name="Execution Reality Check",
        mode=_M,
        order=4,
        purpose=(
            "Name whose daily work must change; then test whether those people are able and willing "
            "to change it."
        ),
        look_for=(
            "value that depends on another team changing its behaviour",
            '"they\'ll just need to …"',
            "training or process change glossed over",
            "nobody accountable for adoption",
        ),
        questions=(
            "Once this ships, whose daily routine has to change, and what exactly do they start or stop doing?",
            "What is in it for those people, in their own terms rather than the company's?",
            "Who manages that group, and has that person agreed to the change?",
            "What happened the last time a new tool or process asked this group to work differently?",
            "Who, by name, is accountable for adoption after launch?",
            "What do you need from other teams (data, engineering, operations, legal), and have they agreed "
            "to provide it?",
        ),
        satisfied_when=(
            "Every group that must change its behaviour is named, with its incentive and an accountable "
            "owner for the change."
        ),
    ),
    Probe(
        id="status_quo_beneficiaries",
        name="Status Quo Beneficiaries",
        mode=_M,
        order=5,
        purpose=(
            "Find who benefits from the status quo (budget, headcount, control, a vendor, a metric) "
            "and how they could slow or block the change."
        ),
        look_for=(
            "a team whose role or budget shrinks",
            "an existing vendor or internal tool being replaced",
            'quiet resistance: "they\'re busy", slow replies',
            "a metric that looks worse in the short term",
        ),
        questions=(
            "Who would have less work, budget, headcount or control if this succeeded?",
            "Which existing tool, vendor or internal team does this replace, and who owns that relationship?",
            "Whose metric would get worse in the first quarter after launch, even if the overall result improves?",
            "Who has been non-committal or slow to respond when this came up, and what might explain it?",
            "What would a reasonable person in that position say to argue against this?",
        ),
        satisfied_when=(
            "Those who benefit from the status quo are named, with what they stand to lose "
            "and a plan for engaging them."
        ),
    ),
    Probe(
        id="edge_mapping",
        name="Edge Mapping",
        mode=_M,
        order=6,
        purpose=(
            "Map the dependencies around this work: upstream inputs, downstream consumers and "
            "adjacent initiatives, so knock-on effects surface before scope is fixed."
        ),
        look_for=(
            "inputs from another system or team",
            "outputs others consume (reports, billing, partners)",
            "neighbouring initiatives on the same users or data",
            '"that\'s another team\'s area"',
        ),
        questions=(
            "What inputs does this rely on (data, systems, decisions), and who controls each one?",
            "Who or what consumes the output downstream, and what breaks for them if it changes?",
            "Which other initiatives are touching the same users, systems or data this year?",
            "What is explicitly out of scope, and who will be disappointed by that?",
            "Where does this hand off to another team, and what goes wrong at that handoff today?",
        ),
        satisfied_when=(
            "Upstream inputs, downstream consumers and adjacent initiatives are listed with owners, "
            "and the scope boundary is explicit."
        ),
    ),
    Probe(
        id="value_hypothesis",
        name="Value Hypothesis",
        mode=_M,
        order=7,
        purpose=(
            "Define how value will be measured: a leading indicator that moves early, a lagging "
            "outcome the business cares about, and an anti-metric that must not get worse."
        ),
        look_for=(
            "vanity metrics (launches, page views, sign-ups alone)",
            "no baseline for the target number",
            "an outcome that lags by quarters with no early signal",
            "no guardrail against harm elsewhere",
        ),
        questions=(
            "Which number would you expect to move within the first few weeks if this is working?",
            "Which business outcome should it move over the following two quarters, and what is today's baseline?",
            "What must not get worse as a result; what is the anti-metric?",
            "What result by what date would make you stop or change course?",
            "Where will the data come from, and who will trust it?",
        ),
        satisfied_when=(
            "A leading metric, a lagging metric with baseline and target, an anti-metric "
            "and a stop condition are all named."
        ),
    ),
)

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        id="analytics_execution_gap",
        name="Analytics–Execution Gap",
        mode=_M,
        triggers=(
            "the dashboard shows",
            "we have the data but",
            "nobody acts on",
            "no one acts on",
            "report nobody reads",
            "nobody looks at the report",
            "insights aren't acted on",
            "we already track this",
        ),
        signals=(
            "The organisation already measures the problem, yet nothing changes, and the proposed fix "
            "is more analytics, dashboards or insight."
        ),
        stay_silent_when="The gap is genuinely missing data rather than missing action.",
        surface=(
            "More insight will not fix a decision or execution problem. Find who should act on "
            "the data today and why they don't."
        ),
        question="When the current data last showed this problem, who saw it, and what stopped them acting on it?",
    ),
    Pattern(
        id="dual_customer_ambiguity",
        name="Dual-Customer Ambiguity",
        mode=_M,
        triggers=(
            "the buyer isn't the user",
            "buyer is not the user",
            "procurement decides",
            "admins buy it",
            "both sides of the marketplace",
            "who pays isn't who uses",
            "users and their managers want",
        ),
        signals=(
            "The person who pays or approves differs from the person who uses it, and the PM "
            "switches between them without noticing."
        ),
        stay_silent_when="The PM has already chosen a primary customer and said how the other is served.",
        surface=(
            "You are designing for two customers with different goals. Pick whose problem comes first; "
            "the other becomes a constraint."
        ),
        question="If the buyer and the daily user wanted opposite things here, whose need wins?",
    ),
    Pattern(
        id="conference_driven_anchoring",
        name="Conference-Driven Solution Anchoring",
        mode=_M,
        triggers=(
            "at a conference",
            "analyst report",
            "gartner",
            "forrester",
            "keynote",
            "the ceo read",
            "every company is doing",
            "the industry is moving to",
            "vendor demo",
        ),
        signals=(
            "The solution arrived from outside (an event, analyst report, vendor pitch or an executive's "
            "reading) before a local problem was identified."
        ),
        stay_silent_when="The outside idea is being tested against a problem already evidenced here.",
        surface=(
            "The idea came before the problem. Check whether your users actually have the pain "
            "the outside story assumed."
        ),
        question="Which of your own users has this problem today, and how do you know?",
    ),
    Pattern(
        id="incumbent_complacency",
        name="Incumbent Complacency",
        mode=_M,
        triggers=(
            "we're the market leader",
            "customers won't leave",
            "switching costs are high",
            "too small to matter",
            "our customers are loyal",
            "they can't catch up",
            "we've always won",
            "nobody else can do what we do",
        ),
        signals=(
            "The PM dismisses a challenger or a shift in user expectations because of market share, "
            "contracts or switching costs."
        ),
        stay_silent_when="Retention and win/loss data show no erosion and the PM cites them.",
        surface=(
            "Lock-in buys time, not loyalty. Look at where new customers are going, not only "
            "whether existing ones stay."
        ),
        question="Of the last ten deals you lost or customers who left, where did they go and why?",
    ),
    Pattern(
        id="key_talent_dependency",
        name="Key Talent Dependency",
        mode=_M,
        triggers=(
            "only one person knows",
            "only she knows",
            "only he knows",
            "bus factor",
            "our one expert",
            "tribal knowledge",
            "if she leaves",
            "if he leaves",
            "nobody else understands",
        ),
        signals="Understanding of the problem, the process or the system rests with one or two people.",
        stay_silent_when="The knowledge is written down or at least two people can do the work.",
        surface=(
            "One person is a single point of failure for both discovery and delivery. "
            "Capture what they know before decisions depend on it."
        ),
        question="If that person were unavailable for two months, what would stall, and who would step in?",
    ),
    Pattern(
        id="profit_framing_distortion",
        name="Profit-Framing Distortion",
        mode=_M,
        triggers=(
            "increase revenue by",
            "pay for itself",
            "upsell opportunity",
            "new revenue stream",
            "monetise",
            "monetize",
            "cost savings of",
            "millions in revenue",
        ),
        signals=(
            "The case is framed as revenue or savings before user value is shown, "
            "with large top-down numbers."
        ),
        stay_silent_when="The figure traces back to observed user behaviour and a stated conversion assumption.",
        surface=(
            "A revenue number is not a problem statement. Show the change in user behaviour that "
            "produces the money; otherwise the figure is a wish."
        ),
        question="Which user action, repeated how often by how many people, produces that number?",
    ),
    Pattern(
        id="data_privacy_hidden_constraint",
        name="Data Privacy as Hidden Constraint",
        mode=_M,
        triggers=(
            "gdpr",
            "hipaa",
            "ccpa",
            "personal data",
            "patient data",
            "pii",
            "data protection",
            "user consent",
            "combine customer data",
        ),
        signals=(
            "The idea relies on collecting, combining or sharing personal data, and privacy, legal "
            "or security have not been consulted."
        ),
        stay_silent_when="A privacy review has happened and its conclusions are known.",
        surface=(
            "Privacy rules may change the design, the timeline or whether this can ship at all. "
            "Find out now, not at launch review."
        ),
        question="Which personal data does this need, and has your privacy or legal team seen the plan?",
    ),
    Pattern(
        id="capital_aversion_after_failure",
        name="Capital Aversion After a Failed Bet",
        mode=_M,
        triggers=(
            "last time we tried",
            "the last project failed",
            "previous attempt failed",
            "got burned",
            "burned before",
            "leadership is wary",
            "won't fund another",
            "wrote it off",
        ),
        signals=(
            "A past failure makes leadership reluctant to invest, so the PM shrinks or disguises "
            "the proposal."
        ),
        stay_silent_when="The earlier failure is unrelated and not shaping the current ask.",
        surface=(
            "The last failure is shaping this proposal more than the evidence is. Say what is different "
            "this time and ask for a small, staged commitment."
        ),
        question="Why did the last attempt fail, and what specifically is different about this one?",
    ),
)
