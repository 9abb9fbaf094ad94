"""Mode 2 — Evaluate Solution: will this specific approach work?"""

from __future__ import annotations

from pmforge.knowledge.catalog import Pattern, Probe

_M = "mode_2"

PROBES: tuple[Probe, ...] = (
    Probe(
        id="solution_problem_fit",
        name="Solution–Problem Fit",
        mode=_M,
        order=1,
        purpose=(
            "Check the solution still fits the agreed problem; catch scope that has drifted toward "
            "nice-to-haves."
        ),
        look_for=(
            "features that trace to no stated pain",
            "the problem quietly restated to fit the solution",
            "new audiences or use cases added along the way",
            "scope larger than the agreed problem",
        ),
        questions=(
            "In one sentence, which problem does this solution solve, and for whom?",
            "What has been added to the scope since the problem was agreed, and who asked for it?",
            "Which parts of the proposed scope would you cut because they don't map to that problem?",
            "Once users have this, which step of their current workaround disappears?",
            "What part of the problem does this solution deliberately leave unsolved?",
        ),
        satisfied_when=(
            "Each major element of the solution traces to the agreed problem, and anything that "
            "does not is cut or consciously kept."
        ),
    ),
    Probe(
        id="value_risk",
        name="Value Risk",
        mode=_M,
        order=2,
        purpose=(
            "Will target users choose this over today's workaround? Look for behaviour that shows "
            "demand, not stated interest."
        ),
        look_for=(
            '"users asked for it" with no behavioural evidence',
            "survey interest or stated intent treated as demand",
            "switching cost ignored",
            "no comparison with the current workaround",
        ),
        questions=(
            "What evidence shows users would switch from their current workaround: behaviour, not opinions?",
            "What does a user have to give up or learn to get the benefit?",
            "Which users would not want this, and why?",
            "If this were a paid add-on, who would pay for it, and roughly how much?",
            "What did users actually do the last time something similar was offered to them?",
        ),
        satisfied_when=(
            "Value risk is rated on evidence of real user behaviour, and the weakest part of the "
            "value case is named."
        ),
    ),
    Probe(
        id="usability_risk",
        name="Usability Risk",
        mode=_M,
        order=3,
        purpose=(
            "Can the intended users work it out unaided? Judge it in their real context: device, "
            "time pressure, skills."
        ),
        look_for=(
            "new concepts or vocabulary users must learn",
            "heavy setup or configuration",
            "users short on time, attention or digital confidence",
            "hard usage conditions (mobile, shift work, noise, gloves)",
        ),
        questions=(
            "Where and under what conditions will people use this: device, time pressure, interruptions?",
            "What is the first thing a new user must do, and what could go wrong at that step?",
            "Which new concepts or terms does a user need to understand that they don't use today?",
            "Has anyone from the target group tried a prototype, and what did they struggle with?",
            "What help or training will exist at launch, and who provides it?",
        ),
        satisfied_when=(
            "The main usage context and the hardest step for a first-time user are known, "
            "with prototype evidence or a plan to get it."
        ),
    ),
    Probe(
        id="feasibility_risk",
        name="Feasibility Risk",
        mode=_M,
        order=4,
        purpose=(
            "Can the team build, run and maintain it? Check skills, time, data and technology "
            "against what the solution needs."
        ),
        look_for=(
            "technology new to this team",
            "data that may not exist or is not clean",
            "estimates made without the engineers who would build it",
            "unknown performance, scale or legacy constraints",
        ),
        questions=(
            "Has an engineer who would build this reviewed it, and what did they flag as the hardest part?",
            "Which parts of this has the team never built before?",
            "What data does it need, does that data exist today, and how complete is it?",
            "Which systems must it integrate with, and who owns each one?",
            "What is the team's estimate, and what would double it?",
            "Who maintains and supports it after launch?",
        ),
        satisfied_when=(
            "The hardest technical unknowns are named by the people who would build it, "
            "with an estimate and what could break it."
        ),
    ),
    Probe(
        id="viability_risk",
        name="Viability Risk",
        mode=_M,
        order=5,
        purpose=(
            "Does it work for the business? Check running cost, pricing, legal and compliance, "
            "sales, support and reputation."
        ),
        look_for=(
            "running cost or unit economics unknown",
            "legal, compliance or security not consulted",
            "sales or support not briefed",
            "conflict with an existing offer, channel or partner",
        ),
        questions=(
            "What does it cost to run per user or per month at expected scale, and whose budget pays?",
            "Which functions (legal, compliance, security, finance, sales, support) must sign off, "
            "and have they seen it?",
            "How will it be priced, sold or rolled out, and does that clash with anything already offered?",
            "What is the worst complaint or headline this could generate?",
            "What would lead the business to shut it down six months after launch?",
        ),
        satisfied_when=(
            "Running cost, required sign-offs and go-to-market consequences are known, and every "
            "function with a veto is identified."
        ),
    ),
    Probe(
        id="build_buy_partner",
        name="Build vs Buy vs Partner",
        mode=_M,
        order=6,
        purpose=(
            "Choose to build, buy or partner: decide on whether the capability sets the business "
            "apart, and on its cost over time."
        ),
        look_for=(
            "building by default without looking at the market",
            "dismissing vendors without a comparison",
            "lock-in or data-ownership concerns",
            "maintenance cost left out of the estimate",
        ),
        questions=(
            "Does this capability set you apart from competitors, or is it something every company needs?",
            "Which vendors or partners offer this today, and has anyone compared them seriously?",
            "What would it cost over three years to build and maintain versus license or partner?",
            "What would you lose in control, speed or data ownership by depending on a vendor?",
            "If your team built it, what else would it not build this year?",
        ),
        satisfied_when=(
            "The choice is made explicitly, with a three-year cost view and a reason tied to differentiation."
        ),
    ),
    Probe(
        id="validation_approach",
        name="Validation Approach",
        mode=_M,
        order=7,
        purpose=(
            "Find the cheapest test of the riskiest assumption; run it before committing to the full "
            "build."
        ),
        look_for=(
            "jumping straight to building an MVP",
            "a test with no pass/fail threshold",
            "testing the easy assumption instead of the risky one",
            "no owner or date",
        ),
        questions=(
            "Which single assumption, if wrong, would sink this?",
            "What is the cheapest way to test that assumption within two weeks without production code?",
            "What result would make you stop, and what result would make you proceed?",
            "Who will run the test, with which users, and by what date?",
            "What will you do differently depending on the outcome?",
        ),
        satisfied_when=(
            "The riskiest assumption has a test with an owner, a date, participants and a pass/fail "
            "threshold agreed in advance."
        ),
    ),
)

PATTERNS: tuple[Pattern, ...] = (
    Pattern(
        id="build_it_and_they_will_come",
        name="Build It and They Will Come",
        mode=_M,
        triggers=(
            "they'll find it",
            "once it's live users will",
            "launch and see",
            "it sells itself",
            "users will discover",
            "adoption will follow",
            "no go-to-market",
            "word of mouth will",
        ),
        signals=(
            "The plan ends at launch; adoption is assumed to happen without onboarding, marketing, "
            "sales enablement or a change in users' routines."
        ),
        stay_silent_when="There is a named adoption plan with an owner and a target.",
        surface=(
            "Shipping is not adoption. Without a plan to reach users and change their habits, "
            "usage will stall at the early enthusiasts."
        ),
        question="In the first 30 days after launch, how will a typical user hear about this and why would they try it?",
    ),
    Pattern(
        id="v1_overengineering",
        name="V1 Overengineering",
        mode=_M,
        triggers=(
            "future-proof",
            "scale to millions",
            "fully configurable",
            "support every use case",
            "make it generic",
            "build the platform first",
            "enterprise-grade from day one",
            "microservices from the start",
        ),
        signals=(
            "The first version is designed for scale, flexibility or edge cases that no current user needs."
        ),
        stay_silent_when="The scale or flexibility requirement comes from real, current demand.",
        surface=(
            "You are paying for flexibility before you know what to be flexible about. "
            "Ship the narrowest version that tests the core value."
        ),
        question="Which part of this design could you remove and still learn whether users want it?",
    ),
    Pattern(
        id="data_optimism",
        name="Data Optimism",
        mode=_M,
        triggers=(
            "the data is there",
            "we have all the data",
            "just pull it from",
            "the data should be clean",
            "we'll train a model",
            "the ai will figure",
            "the crm has everything",
            "historical data will",
        ),
        signals=(
            "The solution depends on data that nobody has inspected for completeness, quality, access "
            "rights or timeliness."
        ),
        stay_silent_when="Someone has pulled a real sample and reported on its quality.",
        surface=(
            "Data you have not looked at is an assumption, not an asset. Expect gaps, duplicates "
            "and access hurdles until a sample proves otherwise."
        ),
        question="Who has actually pulled a sample of this data, and what did they find wrong with it?",
    ),
    Pattern(
        id="key_person_dependency",
        name="Key Person Dependency",
        mode=_M,
        triggers=(
            "the only engineer who",
            "the only one who can",
            "only person who understands",
            "wrote the original code",
            "built the legacy system",
            "depends on one engineer",
            "contractor who built",
            "single developer",
        ),
        signals="Delivery or operation of the solution hinges on one engineer, contractor or specialist.",
        stay_silent_when="A second person is already able to build or run the critical part.",
        surface=(
            "The plan has a single point of failure with a name. Budget time for knowledge transfer "
            "or the schedule belongs to that person."
        ),
        question="What happens to the timeline if that person is unavailable for a month?",
    ),
    Pattern(
        id="integration_underestimation",
        name="Integration Underestimation",
        mode=_M,
        triggers=(
            "just an api call",
            "simple integration",
            "just connect to",
            "plug into",
            "they have an api",
            "off-the-shelf connector",
            "erp integration",
            "single sign-on",
            "legacy system",
        ),
        signals=(
            "Connecting to other systems is treated as a small task, with no owner on the other side, "
            "no test environment and no error handling planned."
        ),
        stay_silent_when="The integration has been spiked or the other system's team has confirmed the effort.",
        surface=(
            "Integrations are where estimates go to die: auth, data mapping, rate limits and the other "
            "team's priorities. Treat it as its own workstream."
        ),
        question="Who owns the system on the other side, and have they agreed to the work and the timeline?",
    ),
)
