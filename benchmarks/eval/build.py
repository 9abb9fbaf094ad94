"""Build the Kestrel retrieval evaluation set.

Writes, next to this file:
  docs_questions.jsonl    40 questions over docs/*.md, gold spans as character offsets
  conversation.jsonl      a scripted 150-turn discovery session (300 rows, ids r1..r300)
  memory_questions.jsonl  40 questions over the conversation, evidence as row ids

Offsets are never typed by hand: every gold passage below is located by exact
string search in the document text (read as UTF-8) and must occur exactly once.
Conversation evidence is named by turn key and resolved to row ids here.
Deterministic: filler turns are drawn with a fixed seed.

Run:  python benchmarks/eval/build.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"

RESEARCH = "store-research-findings.md"
MEMO = "strategy-memo.md"
NOTES = "pricing-sync-notes.md"
VENDORS = "vendor-evaluation.md"

# ---------------------------------------------------------------------------
# Document questions: (id, question, [(file, exact gold passage), ...])
# Kinds (for the README): exact = acronym/code/name lookup, para = paraphrase,
# num = numeric fact, multi = two references.
# ---------------------------------------------------------------------------
DOC_QUESTIONS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    ("d01", "exact", "How much capital is requested for PRJ-0419 in total, and what is the yearly operating cost?", [
        (MEMO, "I am asking for a total of $1.35 million in capital over FY2025 and FY2026, plus $420,000 a year in operating cost once the app is live in all stores."),
    ]),
    ("d02", "para", "On what date did leadership actually hand over the pilot money, and why was it late?", [
        (NOTES, "Grace confirmed that the ELT released the $480,000 pilot budget on June 12, a week later than planned because the April 24 decision was deferred for the CFO's review."),
    ]),
    ("d03", "exact", "What does DSD mean here, and why can't our staff reduce those items?", [
        (RESEARCH, "Bread, snack cakes and some packaged produce arrive by direct store delivery (DSD) from vendors who own the product until it scans at the register. Under these scan-based trading agreements, Harbor Foods is not allowed to mark the product down; the vendor's route driver pulls unsold items and issues a credit."),
    ]),
    ("d04", "num", "How many DSD items are missing their flag in MERCH-3?", [
        (NOTES, "Both vendors can exclude SKUs by a flag, but MERCH-3's DSD flag is incomplete: about 300 DSD items are not flagged."),
    ]),
    ("d05", "para", "In the pilot, are vendor-delivered products just shown with a warning, or left out of the app completely?", [
        (NOTES, "DSD items are excluded from Kestrel entirely in the pilot, not just flagged with a warning."),
    ]),
    ("d06", "num", "What is the baseline for fresh OSA at 5 pm, and who owns that KPI?", [
        (MEMO, "| Fresh OSA at 5:00 pm | 95.1% | 96% or higher | Marcus Bell |"),
    ]),
    ("d07", "exact", "Which store manager said regulars now turn up at 4:15 pm for the bakery reductions?", [
        (RESEARCH, "Renee Castillo, store manager at #114 in Bangor, told us that a group of regulars now arrives at 4:15 pm for the bakery markdown."),
    ]),
    ("d08", "num", "At the Lowell store, what share of meat waste came from packs that hit their sell-by date without being reduced?", [
        (RESEARCH, "In meat the figure was higher: at Store #81 in Lowell, 41% of meat shrink came from packages that reached their sell-by date with no markdown applied."),
    ]),
    ("d09", "para", "Which of the shadowed walks was the slowest, and what made it so long?", [
        (RESEARCH, "The fastest was 22 minutes (produce at #27); the slowest was 75 minutes (meat at #58, including reprinting labels after a printer jam)."),
    ]),
    ("d10", "num", "What share of the markdown walk is spent printing labels in the back office?", [
        (RESEARCH, "| Printing labels in the back office | 21% | Belt printers run out of labels often |"),
    ]),
    ("d11", "exact", "What does food safety policy FS-4 require?", [
        (RESEARCH, "Managers also follow hard food safety rules that no markdown recommendation may override: FS-12 for hot foods, FS-4 for cut fruit (discard after 72 hours) and FS-9 for ground meat (discard at sell-by)."),
    ]),
    ("d12", "multi", "Who will own the markdown depth rules, and how can a store get an exception?", [
        (MEMO, "Confirm that markdown depth rules are owned centrally by Fresh Merchandising, not set store by store."),
        (MEMO, "I am proposing that Lena Fischer's pricing analytics team write and maintain those rules, with store managers able to request exceptions through their district manager."),
    ]),
    ("d13", "exact", "What condition did the union attach to the consultation for Store #63?", [
        (NOTES, "Carla reported that the union consultation for Store #63 will close on June 18 and that the union has raised no objections so far, on the condition that recommendation acceptance rates are not used in individual performance reviews."),
    ]),
    ("d14", "exact", "What is the Northeast Grocers Council shrink benchmark?", [
        (MEMO, "The Northeast Grocers Council benchmark for chains of our size is 5.1%."),
    ]),
    ("d15", "num", "How many dollars of fresh product were written off last fiscal year?", [
        (MEMO, "Last fiscal year (FY2024, ended February 1, 2025) our fresh departments sold $862 million and wrote off $58.6 million as shrink, or 6.8% of fresh sales."),
    ]),
    ("d16", "para", "How long until Kestrel pays for itself, according to Finance?", [
        (MEMO, "Grace Liu's model puts the full-chain benefit at $9.8 million a year in reduced shrink at the 5.3% target, net of additional markdown cost, which gives a payback period of about 14 months from full rollout."),
    ]),
    ("d17", "num", "How much of the pilot budget is set aside for new HHT devices?", [
        (MEMO, "| 40 handheld terminals (HHT) | $72,000 |"),
    ]),
    ("d18", "para", "Is Kestrel going to change everyday shelf prices?", [
        (MEMO, "It is not dynamic pricing. Regular shelf prices stay exactly where Pricing sets them; Kestrel only touches product at the end of its life."),
    ]),
    ("d19", "exact", "Will Harbor Rewards send personalized markdowns in phase 1?", [
        (MEMO, "It will not send personalized digital markdowns through the Harbor Rewards app in phase 1. That idea is promising but depends on the loyalty platform upgrade planned for 2026."),
    ]),
    ("d20", "num", "How accurate is perpetual inventory in fresh compared with center store?", [
        (MEMO, "Perpetual inventory (PI) accuracy in fresh is only 71% today, against 94% in center store."),
    ]),
    ("d21", "para", "How far along is the inventory count clean-up in the pilot stores?", [
        (NOTES, "Perpetual inventory accuracy in fresh at the pilot stores has risen from 69% to 83% in the first two weeks of the clean-up, still short of the 90% target."),
    ]),
    ("d22", "para", "What result does the pilot need before Dana will ask for the next phase of funding?", [
        (MEMO, "I will not ask for Phase 2 money unless the pilot stores beat the control stores on shrink by at least 0.6 points with OSA held at 96% or better."),
    ]),
    ("d23", "exact", "How many of our stores have ESL in fresh?", [
        (MEMO, "Only 19 of our 62 stores have ESL in fresh."),
    ]),
    ("d24", "multi", "Which markdown ladder option was picked, and why was the other one rejected?", [
        (NOTES, "Grace pointed out that Option A breaks the memo's guardrail of no more than 0.4 points of extra markdown cost. Option B stays inside it for almost the same shrink benefit."),
        (NOTES, "Adopt Option B, the department-specific ladder, for the pilot."),
    ]),
    ("d25", "num", "What are the three markdown steps for produce?", [
        (NOTES, "| B: by department | produce 25%, bakery 30% | produce 40%, bakery 50% | produce 60%, bakery 70% | -1.0 pts | +0.3 pts |"),
    ]),
    ("d26", "para", "What is the lowest a reduced price is allowed to go?", [
        (NOTES, "A price floor applies: no markdown may take the price below 20% of the regular price."),
    ]),
    ("d27", "exact", "Which POS release supports the 13-digit price-embedded barcodes?", [
        (NOTES, "Ana Sousa confirmed that POS release 8.2 supports the 13-digit price-embedded barcodes that markdown labels need, with a prefix of 2 followed by the item code and the reduced price."),
    ]),
    ("d28", "multi", "Why was Lewiston a questionable choice of control store, and what is its fresh shrink?", [
        (NOTES, "Grace questioned using #58 as a control because its shrink is the highest in the chain and could make the pilot look better than it is."),
        (RESEARCH, "Store #58 in Lewiston has the highest fresh shrink in the chain at 9.2% of fresh sales."),
    ]),
    ("d29", "multi", "When do meat and seafood join the pilot, and what must a store show first?", [
        (NOTES, "Meat and seafood join in pilot week 6 (September 22) only if date capture at receiving is above 90% in that store."),
        (NOTES, "Meat stays at week 6, with a PI accuracy of at least 90% in the meat department added as a second condition."),
    ]),
    ("d30", "para", "What happens if a department spends too much on reductions during the pilot?", [
        (NOTES, "Lena proposed a weekly markdown cost guardrail for each pilot store: if markdown cost in a department runs above 3.0% of that department's sales for two weeks in a row, the ladder for that department is paused and reviewed."),
    ]),
    ("d31", "exact", "When is the go/no-go checkpoint and what are its criteria?", [
        (NOTES, "Go or no-go checkpoint on August 11, chaired by Priya Raman, with POS, PI accuracy and training completion as the three criteria."),
    ]),
    ("d32", "para", "Why can't we reuse the handhelds we already own with the chosen vendor's app?", [
        (NOTES, "One gap: Quayside's handheld app needs Android 11 or later, and the 40 new handhelds ordered for the pilot stores ship with Android 13, so this is not a problem for the pilot, but the existing fleet runs Android 8 and cannot be used."),
    ]),
    ("d33", "num", "What weighted scores did Verdant, Quayside and Osprey get?", [
        (VENDORS, "| **Weighted score** | **100%** | **3.40** | **4.15** | **3.30** |"),
    ]),
    ("d34", "num", "How much does Verdant charge per store per month?", [
        (VENDORS, "Verdant charges $1,150 per store per month; Quayside charges $690 per store per month plus a one-off implementation fee of $60,000."),
    ]),
    ("d35", "exact", "What is Quayside's SOC 2 status?", [
        (VENDORS, "Quayside holds a SOC 2 Type I report; its SOC 2 Type II audit period ends in August 2025, with the report expected by October 2025."),
    ]),
    ("d36", "exact", "Who is the named support engineer Quayside offered for the pilot?", [
        (VENDORS, "Support capacity is the main operational risk; Quayside has offered a named support engineer, Ilse Brandt, for the pilot."),
    ]),
    ("d37", "num", "How much sales history does Verdant's forecast need?", [
        (VENDORS, "Verdant needs a nightly extract of 104 weeks of sales history to train its forecast, which MERCH-3 cannot produce today without a new data feed."),
    ]),
    ("d38", "multi", "What would building Osprey cost us in terms of other IT work?", [
        (VENDORS, "Grace Liu noted that Osprey's figure does not include the opportunity cost of pulling five engineers off the e-commerce replatforming."),
        (VENDORS, "It would also compete for the same engineers as the e-commerce replatforming, which the ELT has ranked as the top IT priority for 2025."),
    ]),
    ("d39", "para", "Who walks the produce department early in the morning to plan reductions, and at what times?", [
        (RESEARCH, "At Store #27 in Portsmouth, produce manager Hal Dempsey does his markdown walk at 6:30 am, before the first delivery, and again at 3:00 pm."),
    ]),
    ("d40", "exact", "Who is leading the contract negotiation, and by when should it finish?", [
        (VENDORS, "Contract negotiation led by Procurement (Helen Ashby) to finish by June 20."),
    ]),
]

# ---------------------------------------------------------------------------
# Conversation: one entry per turn = (key, user, assistant).
# user is hand-written text for a fact turn, or "@pool" for a filler drawn from
# FILLERS with a fixed seed. key names fact turns for memory evidence.
# ---------------------------------------------------------------------------
FILLERS = {
    "@agree": ["yes", "yes please", "sure", "ok", "sounds good", "makes sense", "correct", "yep, that's right", "go ahead"],
    "@cont": ["ok, continue", "go on", "next", "let's keep going", "sure, move on", "ok"],
    "@unsure": ["not sure yet, park it", "don't know yet, come back to it later", "no idea yet, skip for now"],
    "@short": ["no, that's it", "nothing else", "one more thing", "thanks"],
}

TURNS: list[tuple[str | None, str, str]] = [
    # 1
    ("intro", "Hi Forge. I'm Priya Raman, product manager for Store Systems at Harbor Foods. I'm running discovery for Kestrel, our markdown pricing app for the fresh departments. The project code is PRJ-0419.",
     "Nice to meet you, Priya. Let's set the frame for Kestrel first.\n1. Who sponsors PRJ-0419, and who has the final say on scope?\n2. Which decision should this discovery feed, and when is it due?\n3. Which fresh departments are in scope?"),
    ("sponsor", "The sponsor is Dana Okafor, VP of Fresh Merchandising, and she decides scope. This discovery feeds the pilot scope decision at the Kestrel steering committee on June 11. In principle all four fresh departments are in scope: produce, bakery, meat and seafood, and deli.",
     "A fixed decision date helps us prioritize.\n1. What does the problem cost today, in numbers?\n2. Has the steering committee already agreed a target?"),
    ("shrink", "Fresh shrink is 6.8% of fresh sales, roughly $58 million a year. Dana's target is 5.3% by the end of FY2026.",
     "That is a 1.5-point gap to close.\n1. What budget do you have for discovery and the MVP?\n2. Who in Finance tracks it?"),
    ("budget", "We have 200k for discovery plus the MVP. Grace Liu in Finance signed it off and reviews spend with me monthly.",
     "Noted. Shall we go through the team next?"),
    (None, "@agree",
     "Then, on people:\n1. Who is on the Kestrel core team, and what does each person own?\n2. Is anyone part-time on the project?"),
    ("team", "Core team is me as PM, Lena Fischer for pricing analytics, Kofi Mensah as integration engineer and Beth Lindqvist as store change lead. Lena is only at 50% on Kestrel until July because she is also closing the Q2 price review.",
     "Thanks, that's a lean team.\n1. Which stores are you considering for the pilot?\n2. How will control stores be chosen?"),
    ("pilot_initial", "We're leaning toward #27 Portsmouth, #63 Worcester and #102 Manchester as pilot stores. Marcus Bell in Store Operations will pick a matched control store for each.",
     "A spread across three states and formats.\n1. Who is the primary user in the store?\n2. What does their working day look like?"),
    ("persona", "The main user is the closing department lead. They work 1:00 pm to 9:30 pm and are often alone in the department after 6 pm. Today the markdown walk happens whenever they find time, anywhere between 2 and 7 pm.",
     "That variability is a design input in itself.\n1. What did the store research find as the biggest source of avoidable shrink?\n2. Is discount depth or timing the bigger problem?"),
    ("timing", "Timing, by far. 38% of the fresh units we throw away were never marked down at all, and in meat at Store #81 it's 41%.",
     "So Kestrel's first job is to surface at-risk items earlier, not to fine-tune discounts. Does that match how you'd put it to Dana?"),
    # 10
    (None, "@agree",
     "Good. Now the hardware.\n1. What devices would associates use?\n2. How old is the fleet, and how do batteries hold up?"),
    ("devices", "The handhelds are six years old and run Android 8. Batteries die in under three hours. At #63 Joy Abernathy keeps one in her locker so she's sure to have a working one.",
     "Devices are a real risk for adoption.\n1. Is back-of-house connectivity also a problem?\n2. Would the app have to work offline?"),
    ("offline", "Offline is a must. Wi-Fi is dead in the walk-in coolers in four of the nine stores we visited, and that's exactly where the meat date checks happen.",
     "I'll record offline operation as a hard requirement.\n1. Is there a target go-live date for the pilot?\n2. What is driving that date?"),
    ("golive", "Target go-live is Monday, August 18, for bakery and produce. It's driven by the POS 8.2 upgrade on July 14 and two weeks of training after that.",
     "Understood. Do you want me to keep a running list of dates and dependencies as we go?"),
    (None, "@agree",
     "I'll keep it. Next, the market context.\n1. Is any competitor already doing app-driven markdowns?\n2. Have customers noticed?"),
    ("competitor", "Crestline Market rolled out a markdown app last fall in about 30 stores. Their bakery markdowns land at 7 pm, and some of our bakery regulars mention it.",
     "Useful signal.\n1. How will you know associates trust Kestrel?\n2. Is there a target for that?"),
    ("acceptance", "We'll track the share of recommendations associates accept. Target is 70% by the end of the pilot.",
     "A clear bar.\n1. What do you call the main screen today?\n2. What should it show first?"),
    ("todayslist", "The working name for the main handheld screen is Today's List. It should show items in walking order, starting at the department entrance, with the reason for each markdown in one line.",
     "Walking order plus a reason line. Shall I capture that as the core screen requirement?"),
    (None, "@agree",
     "Captured. Let's talk about the markdown ladder.\n1. Who owns the ladder rules?\n2. Is there a proposal on the table?"),
    ("ladder_owner", "Lena Fischer's pricing analytics team owns the ladder. Dana wants one central set of rules, with store managers requesting exceptions through their district manager.",
     "Central ownership will make the rules easier to encode.\n1. What do the ladder steps look like?\n2. Do they differ by department?"),
    # 20
    (None, "@unsure",
     "Fine, we can come back to it once Lena has options. Meanwhile, price endings:\n1. Do reduced prices need a particular ending?\n2. Is there a floor below which a markdown cannot go?"),
    ("floor", "Prices get rounded down to end in .49 or .99. And there's a floor: no markdown takes a price below 20% of the regular price.",
     "Noted.\n1. Which items must be excluded from markdowns entirely?\n2. How are they identified in the data?"),
    ("dsd", "DSD items. Bread and snack cakes from vendors on scan-based trading can't be marked down by our staff; the route driver pulls them. They're about 18% of bakery SKUs. MERCH-3 has a DSD flag, but around 300 items are missing it.",
     "So exclusion depends on a flag that's incomplete.\n1. Who is cleaning the DSD flag?\n2. By when?"),
    ("dsd_owner", "Lena's team is cleaning it for the pilot stores, due June 13.",
     "Thanks. Shall we move on to food safety rules?"),
    (None, "@cont",
     "On food safety:\n1. Which policies constrain markdowns?\n2. Should they be treated as hard rules or as inputs to the price?"),
    ("foodsafety", "Three policies: FS-4 says cut fruit is discarded after 72 hours, FS-9 says ground meat is discarded at sell-by, and FS-12 covers hot foods like rotisserie chicken, which go after four hours. They're hard rules; Kestrel must never suggest selling something the policy says to throw away.",
     "Hard constraints, not price inputs. Understood.\n1. Which integrations does the pilot need?\n2. Who owns each one?"),
    ("integrations", "Three integrations: the nightly MERCH-3 extract for on-hand, sales and date codes; the POS for price-embedded labels; and ESL for the stores that have it. Kofi owns all three, with Ana Sousa from the POS team on the register side.",
     "Kofi is carrying a lot.\n1. Which POS release do the labels need?\n2. What do the pilot stores run today?"),
    ("pos", "Labels need POS 8.2 for 13-digit price-embedded barcodes starting with a 2. The pilot stores are on 7.9 today.",
     "Then the upgrade is on the critical path. Want me to flag it as a top risk?"),
    (None, "@agree",
     "Flagged. Next:\n1. How many stores have electronic shelf labels?\n2. Which pilot stores have them?"),
    ("esl", "Only 19 of our 62 stores have ESL in fresh. Among the pilot candidates only #63 Worcester does, so printed labels are the main path.",
     "Printed labels first, ESL as the exception.\n1. What label printers do stores use?\n2. Any problems with them?"),
    # 30
    ("printers", "Belt printers in the back office. They run out of label stock all the time; Beth is ordering 2-inch stock for the pilot.",
     "Thanks. We've covered the frame, the users, the constraints and the integrations. Shall we look at solution options?"),
    (None, "@agree",
     "On options:\n1. Which vendors are in the running?\n2. Is there a build option?"),
    ("vendors", "Two vendors: Verdant Retail Systems with their Markdown Optimizer, and Quayside Labs with Quayside Fresh. Tomasz Wojcik in IT also scoped an internal build called Osprey.",
     "Three options.\n1. Which way are you leaning right now?\n2. What's driving that?"),
    ("vendor_lean", "Honestly I'm leaning Verdant right now. Their demand forecast was the most impressive thing in the demos.",
     "Noted as an early lean, not a decision.\n1. What did store operations think of the Verdant demo?\n2. Did either vendor show the reason behind a markdown?"),
    ("verdant_reason", "Verdant's demo showed a 35% markdown with no reason attached, and Marcus hated that. Quayside shows a one-line reason for every item.",
     "That connects to the trust finding.\n1. Does Verdant work offline?\n2. What devices does each vendor need?"),
    ("vendor_devices", "Verdant is iOS only and needs a live connection. Quayside runs on Android 11 or later and caches the day's list offline.",
     "So both need new devices, but only Quayside meets the offline requirement. Is that right?"),
    (None, "@agree",
     "Then let's cover cost.\n1. What does each vendor charge?\n2. Are there implementation fees?"),
    ("vendor_price", "Verdant is $1,150 per store per month. Quayside is $690 per store per month plus a one-off $60,000 implementation fee.",
     "Quayside is cheaper to run.\n1. What about Osprey's cost?\n2. How long would it take to build?"),
    ("osprey", "Osprey needs five engineers and a data scientist for seven months, and Tomasz would have to pull them off the e-commerce replatforming. It'd have no forecast in version one.",
     "That's a heavy cost in people.\n1. Are there security requirements for vendors?\n2. Who reviews them?"),
    ("security", "Nadia Petrov in Information Security reviews them. Verdant has SOC 2 Type II. Quayside only has Type I; their Type II report is expected in October.",
     "A possible condition for Quayside. Shall we park vendors until the evaluation panel scores them?"),
    # 40
    (None, "@agree",
     "Parked. Back to the pilot.\n1. Has Marcus confirmed the pilot and control stores?\n2. Any changes to your shortlist?"),
    ("pilot_revised", "One change: #102 Manchester is out because it's getting a full remodel in September. #114 Bangor replaces it. So the pilot stores are now #27, #63 and #114.",
     "Updated.\n1. Which control stores did Marcus choose?\n2. How were they matched?"),
    ("controls", "Controls are #31 Dover for #27, #90 Springfield for #63, and #58 Lewiston for #114. Grace worried #58 has the highest shrink in the chain, so we'll compare each store's change against its own baseline.",
     "Change against own baseline is the safer design.\n1. Who manages the Bangor store?\n2. What's their attitude to the pilot?"),
    ("renee", "Renee Castillo runs #114. She's supportive but worried about regulars who now come at 4:15 pm for the bakery markdown; she'd rather lose some margin than lose them.",
     "A real tension between shrink and loyalty.\n1. How will you test whether customers start waiting for markdowns?\n2. Who owns that analysis?"),
    ("conditioning", "Lena will compare full-price sell-through before 4 pm in pilot stores against control stores, weekly.",
     "Good. Shall we move to labor and union topics?"),
    (None, "@cont",
     "On labor:\n1. Are any pilot stores unionized?\n2. What does the agreement require before new handheld tasks?"),
    ("union", "#63 is the only unionized pilot store. The agreement needs 30 days of consultation before any new handheld task, and Carla Mendes in Labor Relations started it on May 19.",
     "So the earliest start for #63 is mid-June.\n1. Has the union raised any conditions?\n2. When does consultation close?"),
    (None, "@unsure",
     "OK, let's come back to it. On training:\n1. How will associates be trained?\n2. Who runs it?"),
    ("training", "Beth runs training: two 45-minute sessions per associate, the second one on the floor during a real markdown walk.",
     "Hands-on training is a good call.\n1. How many associates need training across the three pilot stores?\n2. Is backfill budgeted?"),
    ("trainees", "About 85 associates across the three stores. Backfill for training is $55,000 in the pilot budget.",
     "Noted.\n1. How will you measure the time saved on the markdown walk?\n2. What's today's baseline?"),
    # 50
    ("walk_time", "Today it's 48 minutes per department per day on average. The goal is 29 minutes, a 40% cut, and Marcus wants the hours reinvested in service, not cut from labor.",
     "That reinvestment point matters for the union conversation too. Ready to talk about reporting?"),
    (None, "@cont",
     "On reporting:\n1. Who produces the weekly pilot numbers?\n2. Which day do they come out?"),
    ("reporting", "Grace Liu reports shrink and markdown cost every Monday for pilot and control stores.",
     "Thanks.\n1. Is there a guardrail on markdown cost?\n2. What happens if it's breached?"),
    ("guardrail", "Yes: if markdown cost in a department runs above 3.0% of that department's sales two weeks in a row, we pause that department's ladder and review it.",
     "A clear trip-wire. Let me come back to the ladder, since Lena was still modelling it.\n1. Has she shared options?\n2. Which one is favoured?"),
    ("ladder", "She has. We chose option B, by department: produce goes 25%, 40%, 60% and bakery goes 30%, 50%, 70%. Option A, a flat 30/50/70 for everything, added 0.5 points of markdown cost, over the guardrail.",
     "Department-specific steps, then. Shall I add the ladder to the requirements list?"),
    (None, "@agree",
     "Added. Now meat and seafood.\n1. When does meat join the pilot?\n2. What has to be true first?"),
    ("meat", "Meat joins in pilot week 6, September 22, but only if date capture at receiving is above 90% in that store.",
     "A sensible gate.\n1. How accurate is perpetual inventory in fresh?\n2. Is there a clean-up plan?"),
    ("pi", "PI accuracy in fresh is 71%, versus 94% in center store. Marcus is running a PI clean-up in the pilot stores through July.",
     "Kestrel depends on those counts. Want me to add PI accuracy to the risk list?"),
    (None, "@agree",
     "Added. Let's talk about the deli.\n1. Is deli in the pilot?\n2. Why or why not?"),
    ("deli_out", "Deli is out of the pilot. Most deli shrink is food safety discards, like rotisserie chicken under FS-12, which a markdown tool can't fix. Olu Adeyemi, the deli lead at #45, agreed.",
     "So the pilot is bakery, produce and later meat.\n1. Who are the key people in each pilot store?\n2. Who will give the most honest feedback?"),
    # 60
    ("store_people", "At #27 it's Hal Dempsey, the produce manager; he already walks at 6:30 am and has 4.1% produce shrink. At #63 it's Joy Abernathy in bakery. At #114 Renee Castillo is the contact.",
     "Hal's morning walk could be the model for Kestrel's schedule. Should we design around a morning list?"),
    ("morning", "Yes, two lists a day: one at 6:30 am before the first delivery, and one at 3 pm. That's the Hal Dempsey pattern.",
     "Two lists a day.\n1. What should happen when an associate skips a recommendation?\n2. Do they need to give a reason?"),
    ("skip_reason", "They pick a skip reason from four options: already sold out, still looks fresh, DSD item, or other. No free text, it's too slow on the handheld.",
     "Four fixed reasons keeps it fast. Shall we come back to the union question now?"),
    (None, "@cont",
     "On the union:\n1. Has Carla heard back about Store #63?\n2. Are there any conditions?"),
    ("union_condition", "Yes. Consultation closes June 18 with no objections, on one condition: acceptance rates can't be used in individual performance reviews. So we report acceptance at store level only.",
     "Store level only.\n1. What should be on the store manager's view?\n2. How often will they look at it?"),
    ("manager_view", "Store managers want a weekly one-pager: shrink versus baseline, markdown cost, acceptance rate and the top ten items written off. They read it with the MERCH-3 shrink report on Tuesdays.",
     "A weekly one-pager.\n1. Does the district manager need anything?\n2. Who are the district managers for the pilot stores?"),
    ("dm", "Only one DM matters for now: Pete Lavoie covers both #27 and #114. Worcester is under Sandra Kim.",
     "Thanks.\n1. Coming back to money: any change to the budget?\n2. What's the split between discovery and MVP?"),
    (None, "@unsure",
     "OK. In the meantime:\n1. What's the biggest open question for you personally?\n2. What would change your mind about the scope?"),
    ("fallback_rule", "My biggest worry is whether associates will trust a number from a machine. If acceptance stays under 50% after four weeks, I'd rather simplify to a pure ladder than keep a forecast.",
     "A clear fallback rule. Shall I log it as a decision criterion?"),
    (None, "@agree",
     "Logged.\n1. How will you handle items with no date code?\n2. Do produce items have dates?"),
    # 70
    ("produce_dates", "Produce has no date codes, so for produce Kestrel works from days on hand and a visual check. The associate confirms condition with a three-level rating: good, fair, poor.",
     "A three-level condition rating.\n1. What about bakery dates?\n2. Are in-store baked goods labelled?"),
    ("bakery_dates", "In-store bakery items get a bake-date sticker. The 4 pm flat 50% rule goes away in the pilot stores.",
     "Retiring the 4 pm rule is a visible change for customers. Do you want a customer communication plan for that?"),
    ("comms", "Yes, but minimal: a shelf talker in bakery saying 'fresh reductions twice a day'. No flyer, no app push. Maya Ortiz in Marketing owns the wording.",
     "Noted.\n1. Have you seen Grace about the money yet?\n2. Any change to the budget?"),
    ("budget_revised", "Actually, the budget is now 350k, not 200k. Grace moved 150k over from the ESL expansion line because ESL won't reach more stores this year.",
     "Updated.\n1. What will the extra 150k fund?\n2. Does it change the team?"),
    ("extra_money", "It funds a second integration engineer for six months and some contingency. We're interviewing Ravi Nair for the engineer role.",
     "Good, that relieves Kofi.\n1. When could he start?\n2. What would he own?"),
    ("ravi", "Ravi could start July 7. He'd own the ESL integration and the label print service, so Kofi can focus on MERCH-3 and the POS.",
     "Clear split of ownership. Shall we go back to the vendor choice?"),
    (None, "@cont",
     "On vendors:\n1. Has the evaluation panel scored the options?\n2. What came out on top?"),
    ("vendor_scores", "The panel scored Quayside 4.15, Verdant 3.40 and Osprey 3.30 out of 5. Offline operation and associate usability decided it.",
     "A clear win on the panel's weights.\n1. Does that change your own lean?\n2. What conditions would you attach?"),
    ("vendor_decision", "It does. We're going with Quayside, not Verdant. Conditions: SOC 2 Type II by October 31, a six-month opt-out clause, and source code escrow. Verdant stays as the fallback.",
     "Three conditions and a fallback.\n1. Who negotiates the contract?\n2. By when?"),
    ("contract", "Helen Ashby in Procurement, done by June 20.",
     "Thanks.\n1. Who is your contact at the vendor?\n2. Have they committed support levels?"),
    # 80
    ("quayside_contact", "Our named support engineer is Ilse Brandt. They committed to a four-hour response on priority-one issues during the pilot.",
     "Good commitment for a small vendor. Want to go through pilot success criteria next?"),
    (None, "@cont",
     "On success criteria:\n1. What result do you need to go to Phase 2?\n2. What would stop the program?"),
    ("phase2_gate", "Pilot stores have to beat their control stores on shrink by at least 0.6 points, with OSA at 96% or better. If OSA drops below 94% in any pilot store for two weeks, we stop and review.",
     "Two clear gates.\n1. How is OSA measured?\n2. Who runs the audit?"),
    ("osa", "OSA is measured at 5 pm in the weekly OSA audit that Store Operations runs. Baseline in fresh is 95.1%.",
     "Thanks. Shall I draft the pilot scorecard with these measures?"),
    (None, "@agree",
     "I'll draft it. Next:\n1. Which languages does the app need?\n2. Any accessibility needs?"),
    ("language", "English and Spanish. Also a large-text mode; several of our closing leads at #114 asked for bigger fonts.",
     "Noted.\n1. How long can an associate spend on one item?\n2. Is there a target for the whole list?"),
    ("item_time", "Each item should take under 20 seconds: scan, confirm, print. The whole list should stay under 25 items per department per walk.",
     "That fits the shorter lists you liked in the demos. Shall we talk about go-live logistics?"),
    (None, "@cont",
     "On go-live:\n1. Who decides go or no-go?\n2. When is the checkpoint?"),
    ("gonogo", "The go/no-go checkpoint is August 11 and I chair it. Three criteria: POS 8.2 live, PI accuracy progress, and training completion.",
     "Understood.\n1. What happens on go-live day?\n2. Who is on site?"),
    ("hypercare", "Two weeks of hypercare: Beth and one Quayside person on site at each pilot store for the first three days, then a daily 8:30 am call.",
     "Thanks.\n1. Where will issues be logged?\n2. Who triages them?"),
    # 90
    ("issues", "Issues go into the Kestrel board in Jira under the KES project key. Kofi triages every morning before the 8:30 call.",
     "Thanks. Anything else on go-live before we look at risks?"),
    (None, "@short",
     "Then risks.\n1. Which risk would you rank first?\n2. What's the mitigation?"),
    ("top_risk", "Top risk is the handhelds. We ordered 40 new Android 13 devices for the pilot stores at $72,000, and delivery isn't confirmed. The old fleet can't run Quayside.",
     "Device delivery is now on the critical path.\n1. Who is chasing procurement?\n2. What's the fallback if devices are late?"),
    ("device_fallback", "Tomasz is chasing it. If the devices are late, we start with bakery only at #63 using a few loaner devices from Quayside.",
     "A narrow fallback start. Is the second risk the POS upgrade?"),
    (None, "@agree",
     "Then for the POS upgrade:\n1. Is there a rollback plan?\n2. Who owns it?"),
    ("pos_rollback", "Ana Sousa has a rollback plan ready: if 8.2 fails, stores go back to 7.9 overnight and we print labels with plain item barcodes and a manual price override.",
     "Thanks.\n1. What's the third risk?\n2. Anything about people?"),
    ("people_risk", "Lena's availability: the ladder tuning will need her full-time in August. Dana agreed that her deputy, Tom Reyes, takes over her other work from July 1.",
     "That frees Lena from July.\n1. Any customer-facing risk?\n2. Any regulatory concerns on pricing?"),
    ("weights_measures", "One regulatory point: markdown labels must show the regular price, the reduced price and the unit price per pound for weighed items. State weights and measures inspectors check that in Massachusetts.",
     "Important for Worcester. Should the label template go through Legal?"),
    ("legal", "Yes, Jordan Pike in Legal reviews the label template by July 25.",
     "Thanks. Want to pause for a recap of open items?"),
    (None, "@agree",
     "Open items: the contract is in progress, device delivery is unconfirmed, and the label template is with Legal. Anything to add?"),
    # 100
    (None, "@short",
     "Let's look past the pilot.\n1. What's the Phase 2 scope?\n2. When would it start?"),
    ("phase2", "Phase 2 is 20 stores in Maine and New Hampshire, February to May 2026, all four departments if deli gets a rules-only mode by then.",
     "Noted.\n1. And Phase 3?\n2. Any hard deadline?"),
    ("phase3", "Phase 3 is all 62 stores by October 2026, before the holiday freeze. The freeze starts November 10 every year.",
     "So October is a hard limit.\n1. Does the loyalty team want to be involved?\n2. Any plans for digital markdowns?"),
    ("loyalty", "Not in phase 1. Harbor Rewards could push personalized markdowns later, but that depends on the loyalty platform upgrade in 2026. Nikhil Shah runs loyalty and wants a seat at the Phase 2 review.",
     "Noted.\n1. How does Kestrel fit with the pricing system of record?\n2. Does Pricing need to approve each markdown?"),
    ("pricing_approval", "No per-markdown approval. Pricing approves the ladder rules once, in the MR-01 rule sheet, and Kestrel applies them. Any change to MR-01 needs Lena's sign-off.",
     "Rules approved once, applied automatically. Shall we cover data retention?"),
    (None, "@cont",
     "On data:\n1. How long should markdown history be kept?\n2. Is any personal data involved?"),
    ("retention", "Keep markdown events for 25 months, to allow year-over-year comparisons. No customer personal data in phase 1; associate IDs are stored but only shown at store level.",
     "Thanks.\n1. Where does Quayside host?\n2. Any data residency concern?"),
    ("hosting", "Quayside hosts in Canada, in Montreal. Nadia is fine with that as long as the contract names the region.",
     "Anything else from the security side?"),
    (None, "@short",
     "Then let's get specific about the pilot timeline.\n1. When does the integration sprint start?\n2. How long is it?"),
    ("sprint", "Kofi starts the Quayside integration sprint on June 23. It's five weeks, ending July 25, with INT-07, the markdown price event, as the first deliverable.",
     "Understood.\n1. Where will you test before go-live?\n2. Is there a lab store?"),
    # 110
    ("lab", "We'll test in the lab store at the Westbrook office, store code L-01, from July 28 to August 8.",
     "Two weeks of lab testing.\n1. Who signs off the lab test?\n2. What counts as passing?"),
    ("lab_pass", "Marcus signs off. Passing means 200 consecutive label prints scan correctly at the register with zero price mismatches.",
     "A concrete bar. Shall I add it to the go/no-go pack?"),
    (None, "@agree",
     "Added. Back to your users for a moment.\n1. Have you tested any prototypes?\n2. What did you learn?"),
    ("prototype", "We tested a paper prototype of Today's List with six closing leads. Five of the six wanted the label to print automatically after they confirm, with no extra tap.",
     "Auto-print after confirm. Any downside?"),
    ("autoprint", "Beth worries about wasted labels if people confirm by mistake, so we'll add a 3-second undo.",
     "Noted.\n1. Did the prototype tell you anything about the reason line?\n2. Did people understand it?"),
    ("reason_line", "Mostly. 'Two days of stock, one day of life' worked; percentages like 'sell-through 42%' confused everyone. So reasons are written in days and units, never percentages.",
     "Days and units, not percentages. Shall we move on?"),
    (None, "@cont",
     "Let's check who else needs to be informed.\n1. Who are the stakeholders outside the core team?\n2. How do you keep them updated?"),
    ("stakeholders", "The steering committee is Dana as chair, Marcus, Grace and Tomasz, monthly. Everyone else gets a fortnightly update email from me on Fridays.",
     "Thanks.\n1. When is the next steering committee?\n2. What do you need from it?"),
    ("next_steerco", "The next one is July 9. I need approval to spend contingency on extra label printers if the lab test shows the belt printers are too slow.",
     "Noted.\n1. How many printers per store today?\n2. What would extra ones cost?"),
    ("printer_cost", "Two per store today. Extra ones are $1,500 each, and I'd want two more per pilot store, so $9,000.",
     "That fits within contingency. Anything else on the timeline?"),
    # 120
    ("golive_revised", "Yes, bad news: go-live slipped a week to August 25. The POS upgrade moved from July 14 to July 21 because of a freezer-case refit at #63.",
     "Updated.\n1. Does meat's week 6 move too?\n2. Does the go/no-go checkpoint move?"),
    ("meat_revised", "Both shift by a week: meat joins on September 29 instead of September 22, and the go/no-go moves to August 18.",
     "Updated. Does the November pilot review move as well?"),
    ("review", "No, the pilot review stays on November 6, just before the holiday freeze. We lose one pilot week.",
     "Understood.\n1. Is there anything you'd cut to protect the timeline?\n2. Which features are must-haves for day one?"),
    ("mvp_scope", "Day-one must-haves: Today's List, the reason line, auto-print with undo, skip reasons, DSD exclusion and offline. Nice-to-haves that can slip: the manager one-pager and Spanish.",
     "Spanish can slip?\n1. Does the Worcester team need it on day one?\n2. Who decides?"),
    ("spanish", "Joy says her team is fine in English for the first month. Spanish arrives in release 1.1, planned for September 15.",
     "Noted.\n1. What else is in 1.1?\n2. Anything planned for later?"),
    ("release11", "1.1 also has the store manager one-pager and large-text mode. Meat-specific screens come in 1.2 for the week-6 start.",
     "Clear release plan. Shall we look at the budget split now that the number has changed?"),
    (None, "@agree",
     "How does it break down?\n1. Vendor fees?\n2. People and equipment?"),
    ("budget_split", "Roughly: 120k Quayside pilot fees and implementation, 110k for Ravi and internal integration time, 55k training backfill, 30k label printers and stock, and the rest contingency.",
     "That leaves 35k of contingency. Is that right?"),
    (None, "@agree",
     "Good. Let's come back to the customer side.\n1. Have you heard anything more about Crestline?\n2. Are they expanding?"),
    ("crestline_update", "Crestline is expanding its app to 60 stores this autumn, including two near our Portsmouth store. Dana wants a price check on their bakery markdowns every week during the pilot.",
     "A weekly competitor check.\n1. Who does it?\n2. How is it recorded?"),
    # 130
    ("price_check", "Hal Dempsey's team at #27 does it on Thursdays and logs it in a shared sheet Lena set up.",
     "Thanks. Shall we talk about how to communicate results?"),
    (None, "@cont",
     "On results:\n1. Who presents the pilot results?\n2. To whom?"),
    ("results", "I present to the steering committee, then Dana takes it to the ELT on November 20 for the Phase 2 money, the remaining 870k of capital.",
     "Noted.\n1. What will the ELT want to see first?\n2. Any format preference?"),
    ("elt_format", "Grace says the ELT wants one page: shrink change versus control, markdown cost, OSA and hours saved. No dashboards.",
     "One page, four numbers. Anything else you want captured today?"),
    (None, "@short",
     "Go ahead.\n1. Are there any decisions you're still waiting on?\n2. Any dependencies on other projects?"),
    ("it_constraints", "The e-commerce replatforming is the top IT priority, so any IT help beyond Kofi and Ravi has to be negotiated with Tomasz. And the data center retirement in 2027 means nothing new can be hosted on-prem.",
     "Two constraints from IT.\n1. Does the on-prem ban affect Kestrel?\n2. Anything else?"),
    ("onprem", "Not for Quayside since it's in their cloud. It would have killed Osprey anyway.",
     "Understood. Shall I update the risk register with the IT constraints?"),
    (None, "@agree",
     "Updated.\n1. Any changes to the acceptance target?\n2. Has the union condition changed how you report it?"),
    ("acceptance_revised", "Yes, we lowered the acceptance target to 65% for the pilot. Quayside's references took about eight weeks to pass 75%, and our pilot is shorter now.",
     "Noted.\n1. Does the fallback rule still apply?\n2. After how many weeks?"),
    (None, "@agree",
     "Fine.\n1. Is the training plan unchanged?\n2. Any changes to its format?"),
    # 140
    ("training_revised", "We changed it: one 60-minute classroom session plus a 15-minute floor walk with Beth, instead of two 45-minute sessions. Store managers said two sessions were too hard to roster.",
     "Updated.\n1. Does that change the backfill cost?\n2. When will training run?"),
    ("training_dates", "Backfill drops to about $40,000. Training runs August 11 to 22, finishing the Friday before go-live.",
     "Thanks. Shall I produce the discovery summary for the July 9 steering committee?"),
    (None, "@agree",
     "Before I draft it:\n1. Which three points should lead?\n2. Anything to leave out?"),
    ("lead_points", "Lead with: Quayside chosen with conditions, the new go-live date, and the budget increase. Leave out the Osprey detail; Tomasz doesn't want it reopened.",
     "Got it. Any names to credit?"),
    ("credit", "Credit Hal Dempsey for the morning list idea and Joy Abernathy for hosting the prototype sessions at #63.",
     "Will do. Anything else?"),
    (None, "@short",
     "Go ahead.\n1. Is there a decision you need from Dana before July 9?\n2. Anything I should ask her?"),
    ("dana_ask", "I need Dana to confirm in writing that the hours saved are reinvested in service and not removed from store labor budgets. Marcus and Carla both asked for that.",
     "Shall I draft the note to Dana?"),
    (None, "@agree",
     "Drafted. Last checks:\n1. Should the summary mention the Crestline expansion?\n2. Should it mention the lab store test?"),
    ("last_checks", "Mention Crestline in one line. The lab test goes in the appendix.",
     "OK. I'll prepare the summary and appendix. Anything else for today?"),
    (None, "@short",
     "Thanks, Priya. I'll have the summary ready for your review."),
    # 150
    (None, "@short",
     "You're welcome. Good luck with the pilot."),
]

# ---------------------------------------------------------------------------
# Memory questions: (id, kind, question, [(turn key, "user"|"assistant"), ...])
# kinds: early (first 20 turns), exact (name/code lookup), para, revised
# (evidence = the revising row only), plain.
# ---------------------------------------------------------------------------
MEMORY_QUESTIONS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    ("m01", "early", "What is Kestrel's project code?", [("intro", "user")]),
    ("m02", "early", "Who is the executive sponsor, and who decides scope?", [("sponsor", "user")]),
    ("m03", "early", "What shrink rate are we aiming for, and by when?", [("shrink", "user")]),
    ("m04", "revised", "What is the budget for discovery and the MVP?", [("budget_revised", "user")]),
    ("m05", "early", "Who in Finance signed off the discovery money, and how often is spend reviewed?", [("budget", "user")]),
    ("m06", "early", "Why can Lena only give part of her time to the project?", [("team", "user")]),
    ("m07", "revised", "Which three stores are in the pilot?", [("pilot_revised", "user")]),
    ("m08", "exact", "Why did Store #102 drop out?", [("pilot_revised", "user")]),
    ("m09", "early", "What hours does the closing department lead work?", [("persona", "user")]),
    ("m10", "early", "What share of the fresh units we throw away were never reduced?", [("timing", "user")]),
    ("m11", "early", "How long do the current handheld batteries last?", [("devices", "user")]),
    ("m12", "early", "Why does the app have to work without a network connection?", [("offline", "user")]),
    ("m13", "revised", "What is the pilot go-live date?", [("golive_revised", "user")]),
    ("m14", "early", "At what time does the competitor run its bakery markdowns?", [("competitor", "user")]),
    ("m15", "revised", "What recommendation acceptance rate are we targeting in the pilot?", [("acceptance_revised", "user")]),
    ("m16", "early", "What is the working name of the main handheld screen?", [("todayslist", "user")]),
    ("m17", "plain", "How are reduced prices rounded, and is there a minimum price?", [("floor", "user")]),
    ("m18", "exact", "How many DSD items are missing the flag in MERCH-3?", [("dsd", "user")]),
    ("m19", "exact", "What does FS-9 say?", [("foodsafety", "user")]),
    ("m20", "para", "What happens if associates ignore most of the suggestions in the first month?", [("fallback_rule", "user")]),
    ("m21", "exact", "Who is Ilse Brandt?", [("quayside_contact", "user")]),
    ("m22", "plain", "How did the evaluation panel score the three options?", [("vendor_scores", "user")]),
    ("m23", "revised", "Which vendor did we choose in the end?", [("vendor_decision", "user")]),
    ("m24", "exact", "Who in Procurement is negotiating the contract?", [("contract", "user")]),
    ("m25", "para", "Which store is the comparison store for Bangor?", [("controls", "user")]),
    ("m26", "para", "What did the union ask for in exchange for not objecting?", [("union_condition", "user")]),
    ("m27", "plain", "What are the markdown steps for produce?", [("ladder", "user")]),
    ("m28", "revised", "When does meat join the pilot now?", [("meat_revised", "user")]),
    ("m29", "exact", "Who is the district manager for Portsmouth and Bangor?", [("dm", "user")]),
    ("m30", "exact", "Who is Ravi Nair, when can he start, and what will he own?", [("extra_money", "user"), ("ravi", "user")]),
    ("m31", "para", "Why isn't the deli part of the pilot?", [("deli_out", "user")]),
    ("m32", "exact", "What is the Jira project key for Kestrel issues?", [("issues", "user")]),
    ("m33", "exact", "What is the lab store's code, and when does testing run there?", [("lab", "user")]),
    ("m34", "para", "What must a markdown label show for products sold by weight?", [("weights_measures", "user")]),
    ("m35", "revised", "How is associate training structured?", [("training_revised", "user")]),
    ("m36", "plain", "When will the Spanish version be available?", [("spanish", "user")]),
    ("m37", "exact", "Who in Marketing owns the wording of the bakery shelf talker?", [("comms", "user")]),
    ("m38", "para", "How long do we keep the history of markdown events?", [("retention", "user")]),
    ("m39", "plain", "How much contingency is left in the budget breakdown?", [("budget_split", "user"), ("budget_split", "assistant")]),
    ("m40", "plain", "When will the ELT look at the pilot results for the Phase 2 money?", [("results", "user")]),
]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def build_docs_questions() -> list[dict]:
    texts = {p.name: p.read_bytes().decode("utf-8") for p in sorted(DOCS.glob("*.md"))}
    rows = []
    for qid, _kind, question, golds in DOC_QUESTIONS:
        refs = []
        for filename, passage in golds:
            text = texts[filename]
            count = text.count(passage)
            assert count == 1, f"{qid}: gold passage occurs {count} times in {filename}: {passage[:60]!r}"
            start = text.index(passage)
            refs.append({"file": filename, "start": start, "end": start + len(passage)})
            assert text[start : start + len(passage)] == passage
        rows.append({"id": qid, "question": question, "references": refs})
    assert len({r["id"] for r in rows}) == len(rows)
    return rows


def build_conversation() -> tuple[list[dict], dict[tuple[str, str], str]]:
    rng = random.Random(419)
    rows: list[dict] = []
    where: dict[tuple[str, str], str] = {}
    for key, user, assistant in TURNS:
        if user.startswith("@"):
            assert key is None
            user = rng.choice(FILLERS[user])
        user_id = f"r{len(rows) + 1}"
        rows.append({"id": user_id, "role": "user", "text": user})
        assistant_id = f"r{len(rows) + 1}"
        rows.append({"id": assistant_id, "role": "assistant", "text": assistant})
        if key is not None:
            assert (key, "user") not in where, f"duplicate turn key {key}"
            where[(key, "user")] = user_id
            where[(key, "assistant")] = assistant_id
    return rows, where


def build_memory_questions(where: dict[tuple[str, str], str]) -> list[dict]:
    return [
        {"id": qid, "question": question, "evidence": [where[ev] for ev in evidence]}
        for qid, _kind, question, evidence in MEMORY_QUESTIONS
    ]


def main() -> None:
    docs_rows = build_docs_questions()
    conversation, where = build_conversation()
    memory_rows = build_memory_questions(where)
    write_jsonl(HERE / "docs_questions.jsonl", docs_rows)
    write_jsonl(HERE / "conversation.jsonl", conversation)
    write_jsonl(HERE / "memory_questions.jsonl", memory_rows)
    fillers = sum(1 for key, _, _ in TURNS if key is None)
    print(f"docs questions: {len(docs_rows)} ({sum(len(r['references']) > 1 for r in docs_rows)} multi-span)")
    print(f"conversation: {len(TURNS)} turns, {len(conversation)} rows, {fillers} filler turns")
    print(f"memory questions: {len(memory_rows)}")


if __name__ == "__main__":
    main()
