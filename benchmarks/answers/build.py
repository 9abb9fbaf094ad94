"""Rebuild the Word documents of the answers evaluation set, and check questions.jsonl.

    .venv/bin/python benchmarks/answers/build.py           # write the .docx files (byte-identical on every run)
    .venv/bin/python benchmarks/answers/build.py --check   # validate questions.jsonl against the documents

The Markdown documents are written by hand and are not generated here.
"""
from __future__ import annotations

import io
import json
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import docx
from docx.shared import Pt

HERE = Path(__file__).resolve().parent
FIXED = datetime(2025, 10, 1, 9, 0, 0, tzinfo=timezone.utc)
ZIP_TIME = (2025, 10, 1, 9, 0, 0)

# A document is a list of blocks: ("title", text), ("h", text), ("p", text), ("kv", text),
# ("bullets", [text, ...]), ("numbers", [text, ...]), ("table", [header_row, row, ...]).

VENDOR_EVALUATION = [
    ("title", "Returns Platform Vendor Evaluation"),
    ("p", "Prepared by Procurement and the Returns Product Team for the returns steering group, August 2025."),
    ("h", "1. Background"),
    ("p", "Tidewell has run customer returns through Circulo, a hosted returns management platform, since 2022. "
          "Circulo issues RMAs, generates return labels, tracks parcels and tells NetSuite when to refund the customer. "
          "The Circulo contract renews automatically on 30 November 2025 for a further three years unless we give "
          "written notice. Notice must reach Circulo by 1 October 2025, so the steering group has to choose a "
          "direction before then."),
    ("p", "Circulo works, but it no longer fits where the returns experience is going. Its per-return fee rose "
          "at the last renewal, it cannot offer QR-code drop-off, and refunds are triggered only when a parcel "
          "reaches one of our returns centers rather than at the carrier's first scan. The customer research "
          "completed this summer showed that the wait for the refund, and the silence during it, is the main "
          "reason customers contact us about returns."),
    ("h", "2. Evaluation team"),
    ("p", "The evaluation was run by Samuel Reyes from Procurement. His working group of six included "
          "representatives from returns operations, customer care, finance, IT and the Returns Product Team, and "
          "met twice a week from 7 July to 15 August 2025."),
    ("p", "Technical due diligence was led by Ingrid Solberg. She reviewed the API documentation, security "
          "questionnaires and reference architectures of every vendor, and ran a two-day integration spike with "
          "each of the two finalists."),
    ("h", "3. Requirements"),
    ("p", "Every vendor was asked to respond to the same requirements:"),
    ("bullets", [
        "QR-code drop-off at partner locations, with no printer needed.",
        "Refunds triggered automatically at the carrier's first scan, with configurable rules by product category.",
        "One-step exchanges for a different size or colour.",
        "Native integration with Shopify and NetSuite, and webhooks for customer care tooling.",
        "A current SOC 2 Type II report and data hosting in the United States.",
        "Support coverage that includes weekends during peak season.",
    ]),
    ("p", "Four new vendors responded in full, and Circulo submitted a renewal proposal. Two other vendors "
          "declined to bid because they do not support bulky furniture."),
    ("h", "4. Vendors compared"),
    ("p", "Table 1 summarises the commercial and service terms each vendor quoted. Prices are in US dollars and "
          "exclude carrier postage, which we pay separately. The refund SLA is the maximum time from first scan "
          "to refund instruction."),
    ("table", [
        ["Vendor", "Price per return", "Monthly platform fee", "Setup time", "Refund SLA", "Support hours"],
        ["Circulo (incumbent)", "$2.10", "$1,500", "Already live", "72 hours", "Mon–Fri, 8am–6pm ET"],
        ["ParcelBack", "$1.35", "$2,200", "10 weeks", "48 hours", "24/7"],
        ["Revasta", "$1.20", "$3,000", "14 weeks", "96 hours", "Mon–Fri, 9am–5pm CET"],
        ["Kestrel Returns", "$1.65", "$950", "6 weeks", "24 hours", "24/7"],
        ["BoxTurn", "$0.95", "$4,000", "8 weeks", "72 hours", "Mon–Sat, 7am–7pm ET"],
    ]),
    ("p", "Headline per-return prices are misleading at our volume. Table 2 estimates the annual cost of each "
          "option at 52,000 returns a year, the FY2026 forecast from Returns Analytics, including platform fees."),
    ("table", [
        ["Vendor", "Per-return cost per year", "Platform fees per year", "Estimated annual cost"],
        ["Circulo (incumbent)", "$109,200", "$18,000", "$127,200"],
        ["ParcelBack", "$70,200", "$26,400", "$96,600"],
        ["Revasta", "$62,400", "$36,000", "$98,400"],
        ["Kestrel Returns", "$85,800", "$11,400", "$97,200"],
        ["BoxTurn", "$49,400", "$48,000", "$97,400"],
    ]),
    ("p", "All four new vendors would save money compared with renewing Circulo, and the differences between them "
          "are small. Cost therefore did not decide the evaluation on its own."),
    ("h", "5. Scoring"),
    ("p", "The working group scored each vendor against five weighted criteria: cost (30%), customer experience "
          "(30%), integration effort and fit (20%), support (10%) and vendor risk (10%). Scores were agreed in a "
          "calibration session so that no single reviewer decided a criterion."),
    ("table", [
        ["Vendor", "Cost", "Customer experience", "Integration", "Support", "Risk", "Weighted score (out of 100)"],
        ["ParcelBack", "26", "27", "16", "9", "6", "84"],
        ["Kestrel Returns", "25", "24", "14", "9", "7", "79"],
        ["BoxTurn", "25", "18", "11", "6", "6", "66"],
        ["Circulo (incumbent)", "12", "15", "19", "5", "10", "61"],
        ["Revasta", "25", "17", "7", "4", "4", "57"],
    ]),
    ("h", "6. Recommendation"),
    ("p", "We recommend moving to ParcelBack. It scored highest overall, has the lowest estimated annual cost at "
          "our volume, supports every requirement including exchanges and QR drop-off, and its two reference "
          "customers, Harbor & Pine and Stillwater Outdoor, both reported that refund timing complaints fell "
          "within a quarter of going live. Kestrel Returns is a strong runner-up and should be kept as the "
          "fallback if contract negotiations with ParcelBack stall."),
    ("p", "The steering committee will make the final decision on 12 September 2025. If ParcelBack is approved, "
          "we will give Circulo notice immediately, run a four-week pilot at the Reno returns center starting "
          "6 October 2025, and complete the cut-over of all sites by 19 January 2026, after peak season."),
    ("h", "7. Risks"),
    ("bullets", [
        "ParcelBack's setup overlaps peak season. Mitigation: the pilot runs at one site only, and no other site "
        "moves until peak is over.",
        "ParcelBack is a younger company than Circulo. Mitigation: escrow of the integration code and a "
        "termination-for-convenience clause in the first year.",
        "Notice to Circulo is irreversible. If the ParcelBack contract is not signed by 1 November 2025, we will "
        "negotiate a six-month Circulo extension rather than a new three-year term.",
    ]),
    ("h", "8. Next steps"),
    ("numbers", [
        "Steering committee decision.",
        "Procurement sends written notice to Circulo and starts contract negotiation with ParcelBack.",
        "Returns Product Team and IT agree the integration plan with ParcelBack's implementation team.",
        "Operations prepares the Reno pilot with the site lead.",
    ]),
]

Q3_METRICS = [
    ("kv", "Author: Nadia Petrov"),
    ("kv", "Period: Q3 2025 (1 July – 30 September 2025)"),
    ("kv", "Status: Final, approved by Finance on 14 October 2025"),
    ("kv", "Owner: Returns Analytics"),
    ("kv", "Audience: Returns steering group and Returns Product Team"),
    ("title", "Q3 2025 Returns Metrics Report"),
    ("h", "Summary"),
    ("p", "Return volume rose compared with the second quarter, driven mostly by the South and the Northeast. "
          "Refund waits improved in four of the five regions. The South is the exception: its median wait got "
          "longer after the Memphis mezzanine conveyor failed in August, and the backlog had not fully cleared by "
          "the end of the quarter. Fit and sizing problems remain the leading reason for returns, and in-store "
          "returns remain by far the fastest and cheapest way for a customer to send something back."),
    ("p", "\"Where is my refund\" contacts fell in every month of the quarter, helped by the refund status email "
          "that went live in July. Processing cost per return rose slightly, mainly because of overtime in "
          "Memphis and courier pickups for bulky furniture."),
    ("p", "All figures below come from the Circulo export and NetSuite refund records, reconciled by Returns "
          "Analytics. Median refund wait is measured from the carrier's first scan to the refund being issued."),
    ("h", "1. Returns by region"),
    ("table", [
        ["Region", "Orders shipped", "Returns", "Return rate", "Median refund wait (Q3)", "Median refund wait (Q2)"],
        ["West", "48,210", "2,941", "6.1%", "4.5 days", "5.2 days"],
        ["Mountain", "19,870", "1,150", "5.8%", "6.0 days", "6.4 days"],
        ["Midwest", "36,402", "2,077", "5.7%", "5.5 days", "5.9 days"],
        ["South", "52,118", "3,388", "6.5%", "7.2 days", "6.8 days"],
        ["Northeast", "41,765", "2,965", "7.1%", "3.9 days", "4.6 days"],
        ["All regions", "198,365", "12,521", "6.3%", "5.4 days", "5.7 days"],
    ]),
    ("p", "Return rate is returns divided by orders shipped in the same quarter. Regions are assigned by the "
          "customer's delivery address, not by the site that processed the return."),
    ("h", "2. Reasons for return"),
    ("p", "Customers choose one reason when they start a return. Agents can correct it at QC if the item "
          "clearly shows another cause, for example transit damage."),
    ("table", [
        ["Reason", "Returns", "Share of returns"],
        ["Doesn't fit / wrong size", "3,881", "31.0%"],
        ["Changed mind", "2,629", "21.0%"],
        ["Not as described", "2,254", "18.0%"],
        ["Damaged in transit", "1,753", "14.0%"],
        ["Other", "1,253", "10.0%"],
        ["Arrived late", "751", "6.0%"],
    ]),
    ("h", "3. Return methods"),
    ("p", "QR-code drop-off is not yet available, so customers chose between a prepaid mail label, returning "
          "the item to a showroom, or a courier pickup for bulky items. Cost per return includes postage, "
          "handling at the returns center and, for courier pickups, the pickup fee."),
    ("table", [
        ["Return method", "Share of returns", "Median refund wait", "Cost per return"],
        ["Prepaid mail label", "64%", "6.6 days", "$8.40"],
        ["In-store return", "27%", "2.8 days", "$3.10"],
        ["Courier pickup", "9%", "7.9 days", "$14.75"],
    ]),
    ("h", "4. Customer contacts"),
    ("p", "The table shows contacts that customer care tagged with the WISMR reason code, and the average time "
          "an agent spent on each."),
    ("table", [
        ["Month", "WISMR contacts", "Average handle time"],
        ["July 2025", "4,102", "6 min 40 s"],
        ["August 2025", "3,876", "6 min 55 s"],
        ["September 2025", "3,390", "6 min 20 s"],
    ]),
    ("p", "Handle time rose in August because agents had to check Memphis backlog status manually for customers "
          "in the South."),
    ("h", "5. Cost and recovery"),
    ("table", [
        ["Measure", "Q3 2025", "Q2 2025"],
        ["Total returns processing cost", "$118,940", "$109,200"],
        ["Average processing cost per return", "$9.50", "$9.33"],
        ["Value of refunds issued", "$1,874,300", "$1,702,650"],
        ["Net recovery value (NRV)", "62%", "64%"],
    ]),
    ("p", "NRV fell because more Grade C furniture went to pallet sale while Memphis was short of capacity."),
    ("h", "6. Notes and next report"),
    ("bullets", [
        "The refund-wait pipeline was rebuilt this quarter. Tomás Ruiz from Data Engineering did the work. He "
        "replaced the nightly Circulo file drop with an hourly feed after the August outage exposed gaps in the "
        "old data.",
        "Figures for Q2 have been restated with the new pipeline, so they differ slightly from the Q2 report.",
        "The cost of customers returning an item and reordering it in another size will be sized in the Q4 "
        "report, as agreed with the Returns Product Team.",
        "The Q4 2025 report will be published by 20 January 2026.",
    ]),
]

LAUNCH_PLAN = [
    ("kv", "Author: Ben Adeyemi"),
    ("kv", "Status: Approved by the returns steering group"),
    ("kv", "Owner: Returns Product Team"),
    ("kv", "Version: 1.3"),
    ("kv", "Target launch: 2 March 2026"),
    ("title", "Self-Service Returns Portal: Launch Plan"),
    ("h", "1. What we are launching"),
    ("p", "We are replacing the current returns pages with a self-service returns portal built on the new "
          "returns platform from ParcelBack, subject to contract signature. The portal responds directly to the "
          "summer customer research: customers trust us to take an item back but not to tell them what happens "
          "next, many cannot print a label, and almost nobody finds the exchange option."),
    ("p", "At launch the portal will offer:"),
    ("bullets", [
        "QR-code drop-off at partner locations, so no printer is needed.",
        "Live refund tracking with three steps: parcel scanned, received at the returns center, refund issued.",
        "One-step exchanges for a different size or colour, shown next to the refund option.",
        "Instant store credit as an alternative to a card refund.",
        "Clear fee messaging before the customer confirms, including when a return is free and why.",
    ]),
    ("p", "Out of scope for this launch: returns for marketplace sellers, returns from business accounts, and "
          "changes to the returns policy itself."),
    ("h", "2. Goals and success metrics"),
    ("p", "Baselines come from the Q3 2025 returns metrics report. Targets are for the first full quarter after "
          "launch."),
    ("table", [
        ["Metric", "Baseline (Q3 2025)", "Target (Q2 2026)"],
        ["Median refund wait", "5.4 days", "3.0 days"],
        ["WISMR contacts per month", "3,390", "2,000"],
        ["Returns converted to exchanges", "6%", "15%"],
        ["Returns CSAT (1–5)", "3.4", "4.2"],
        ["Returns using QR drop-off", "0%", "40%"],
    ]),
    ("h", "3. Team"),
    ("p", "Ben Adeyemi is the accountable product manager for the launch and chairs the weekly launch review."),
    ("p", "Engineering is led by Hana Sato. Her squad of 11 engineers builds the portal front end, the ParcelBack "
          "integration and the refund status notifications."),
    ("p", "Design is led by Luis Ortega, who also owns the help centre content. Customer care readiness is owned "
          "by Omar Haddad, whose returns desk will handle the first wave of questions. Operations readiness at "
          "the three returns centers is coordinated by Henrik Dahl's team."),
    ("h", "4. Milestones"),
    ("table", [
        ["Milestone", "Date", "Owner"],
        ["Design freeze", "14 November 2025", "Luis Ortega"],
        ["Holiday code freeze", "15 December 2025 – 5 January 2026", "Hana Sato"],
        ["ParcelBack integration complete", "16 January 2026", "Hana Sato"],
        ["Agent training complete", "6 February 2026", "Omar Haddad"],
        ["Beta starts", "9 February 2026", "Ben Adeyemi"],
        ["Go / no-go review", "23 February 2026", "Returns steering group"],
        ["Help centre articles updated", "27 February 2026", "Luis Ortega"],
        ["Full launch (GA)", "2 March 2026", "Ben Adeyemi"],
    ]),
    ("h", "5. Rollout"),
    ("p", "The beta goes to 5% of customers who start a return, chosen at random, and excludes mattresses and "
          "bulky furniture. If the beta is healthy after one week we widen it to 25%, and the go / no-go review "
          "decides on the move to all customers."),
    ("p", "We will roll back to the old returns pages if refund failures exceed 0.5% of returns in any 24-hour "
          "period, or if the portal is unavailable for more than 30 minutes in a day. The on-call engineer can "
          "roll back without waiting for approval."),
    ("h", "6. Budget"),
    ("p", "The steering group approved the budget below in September. Carrier postage is not included because "
          "it is paid from the existing returns operating budget."),
    ("table", [
        ["Item", "Amount"],
        ["Engineering (internal, allocated)", "$410,000"],
        ["ParcelBack setup fee", "$85,000"],
        ["QR drop-off network onboarding", "$60,000"],
        ["Customer care training and materials", "$35,000"],
        ["Contingency", "$50,000"],
        ["Total", "$640,000"],
    ]),
    ("h", "7. Risks and mitigations"),
    ("bullets", [
        "Contract delay: if the ParcelBack contract is not signed by 1 November 2025, integration slips past the "
        "holiday code freeze. Fallback: Kestrel Returns, the runner-up in the vendor evaluation.",
        "Peak season: return volumes are highest during the integration work. No changes reach the returns "
        "centers until peak is over.",
        "Drop-off coverage: partner locations are sparse in the rural Mountain region. Prepaid mail labels stay "
        "available everywhere.",
        "Agent load during beta: customers in the beta may still contact care out of habit. The returns desk "
        "gets a daily list of beta RMAs.",
    ]),
    ("h", "8. Abbreviations used in this plan"),
    ("bullets", [
        "GA (General Availability): the point at which every customer gets the new portal.",
        "QR (Quick Response) code: the code a customer shows at a drop-off point instead of a printed label.",
        "WISMR (Where Is My Refund): the customer care contact reason for refund status questions.",
        "CSAT (Customer Satisfaction Score): the post-refund survey score on a scale of 1 to 5.",
    ]),
]

DOCUMENTS = {
    "vendor-evaluation-returns-platform.docx": ("Returns Platform Vendor Evaluation", "Samuel Reyes", VENDOR_EVALUATION),
    "q3-2025-returns-metrics.docx": ("Q3 2025 Returns Metrics Report", "Nadia Petrov", Q3_METRICS),
    "returns-portal-launch-plan.docx": ("Self-Service Returns Portal: Launch Plan", "Ben Adeyemi", LAUNCH_PLAN),
}


def render(title: str, author: str, blocks: list) -> bytes:
    document = docx.Document()
    document.styles["Normal"].font.name = "Calibri"
    document.styles["Normal"].font.size = Pt(11)
    props = document.core_properties
    props.title, props.author, props.last_modified_by = title, author, author
    props.created = props.modified = FIXED
    props.revision = 1
    for kind, content in blocks:
        if kind == "title":
            document.add_heading(content, level=0)
        elif kind == "h":
            document.add_heading(content, level=1)
        elif kind in ("p", "kv"):
            document.add_paragraph(content)
        elif kind in ("bullets", "numbers"):
            style = "List Bullet" if kind == "bullets" else "List Number"
            for item in content:
                document.add_paragraph(item, style=style)
        elif kind == "table":
            table = document.add_table(rows=len(content), cols=len(content[0]))
            table.style = "Table Grid"
            for r, row in enumerate(content):
                for c, value in enumerate(row):
                    cell = table.cell(r, c)
                    cell.text = value
                    if r == 0:
                        for run in cell.paragraphs[0].runs:
                            run.bold = True
            document.add_paragraph("")
        else:
            raise ValueError(kind)
    raw = io.BytesIO()
    document.save(raw)
    # Re-pack with fixed timestamps so the bytes are identical on every run.
    out = io.BytesIO()
    with zipfile.ZipFile(raw) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, ZIP_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def docx_text(path: Path) -> str:
    """Body paragraphs and table cells, in document order."""
    document = docx.Document(str(path))
    parts = []
    for block in document.element.body.iterchildren():
        tag = block.tag.rsplit("}", 1)[-1]
        if tag == "p":
            parts.append("".join(t.text or "" for t in block.iter() if t.tag.endswith("}t")))
        elif tag == "tbl":
            for row in block.iter():
                if row.tag.endswith("}tr"):
                    cells = []
                    for cell in row.iterchildren():
                        if cell.tag.endswith("}tc"):
                            cells.append(" ".join(
                                "".join(t.text or "" for t in p.iter() if t.tag.endswith("}t"))
                                for p in cell.iter() if p.tag.endswith("}p")))
                    parts.append(" | ".join(cells))
    return "\n".join(parts)


def document_text(path: Path) -> str:
    return docx_text(path) if path.suffix == ".docx" else path.read_text(encoding="utf-8")


def check() -> int:
    problems, rows = [], []
    for n, line in enumerate((HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"line {n}: not JSON ({err})")
            continue
        rows.append(row)
        path = HERE / str(row.get("file", ""))
        answers = row.get("answers")
        if not isinstance(row.get("question"), str) or not row["question"].strip():
            problems.append(f"line {n}: no question")
        if not path.is_file() or path.name in ("README.md", "questions.jsonl", "build.py"):
            problems.append(f"line {n}: file {row.get('file')!r} is not a document in this folder")
            continue
        if not isinstance(answers, list) or not 1 <= len(answers) <= 3 or not all(isinstance(a, str) and a for a in answers):
            problems.append(f"line {n}: answers must be 1-3 non-empty strings")
            continue
        if any(a != a.lower() or a != a.strip() for a in answers):
            problems.append(f"line {n}: answers must be lower case and trimmed: {answers}")
        text = document_text(path).lower()
        if not any(a in text for a in answers):
            problems.append(f"line {n}: no alternative occurs in {path.name}: {answers}")
    ids = [r.get("id") for r in rows]
    if len(ids) != len(set(ids)):
        problems.append("duplicate ids")
    for p in problems:
        print("PROBLEM", p)
    print(f"{len(rows)} questions, {len(problems)} problems")
    return 1 if problems else 0


def main() -> int:
    if "--check" in sys.argv[1:]:
        return check()
    for name, (title, author, blocks) in DOCUMENTS.items():
        (HERE / name).write_bytes(render(title, author, blocks))
        print("wrote", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
