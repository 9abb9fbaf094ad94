"""Deterministically build the .docx documents of the answers-test set.

Run from anywhere:
    /work/main/.venv/bin/python /work/main/benchmarks/answers-test/build.py

Writes (next to this script only):
    field_service_vendor_comparison.docx
    lumora_qbr_q3_fy2025.docx

The Markdown document (outpatient_scheduling_discovery.md) is hand-written
and is not generated here.  Output is byte-stable: document properties are
fixed and every zip entry gets the same timestamp.
"""

import datetime as dt
import io
import os
import zipfile

import docx

HERE = os.path.dirname(os.path.abspath(__file__))
FIXED_TIME = dt.datetime(2025, 11, 1, 9, 0, 0)
ZIP_TIME = (2025, 11, 1, 9, 0, 0)


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def new_doc(title):
    d = docx.Document()
    cp = d.core_properties
    cp.title = title
    cp.author = "Forge benchmark (answers-test)"
    cp.last_modified_by = "Forge benchmark (answers-test)"
    cp.created = FIXED_TIME
    cp.modified = FIXED_TIME
    cp.revision = 1
    return d


def table(d, rows):
    """rows[0] holds the column names."""
    t = d.add_table(rows=len(rows), cols=len(rows[0]))
    t.style = "Table Grid"
    for r, row in enumerate(rows):
        for c, val in enumerate(row):
            cell = t.cell(r, c)
            cell.text = val
            if r == 0:
                for run in cell.paragraphs[0].runs:
                    run.bold = True
    return t


def bullets(d, items):
    for it in items:
        d.add_paragraph(it, style="List Bullet")


def save(d, name):
    buf = io.BytesIO()
    d.save(buf)
    buf.seek(0)
    out = io.BytesIO()
    with zipfile.ZipFile(buf) as zin, zipfile.ZipFile(
        out, "w", zipfile.ZIP_DEFLATED
    ) as zout:
        for info in zin.infolist():
            zi = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            zout.writestr(zi, zin.read(info.filename))
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(out.getvalue())


# --------------------------------------------------------------------------
# Document 2: field-service vendor comparison
# --------------------------------------------------------------------------
def build_vendor_comparison():
    d = new_doc("Field Service Management Platform: Vendor Comparison")
    d.add_heading("Field Service Management Platform: Vendor Comparison", 0)
    d.add_paragraph("Halvorsen Valley Water & Power — Grid and Network Operations")
    d.add_paragraph(
        "Evaluation lead: Joaquín Ferreira, Field Operations Program Manager"
    )
    d.add_paragraph("Version 1.3, 27 October 2025")

    d.add_heading("1. Background", 1)
    d.add_paragraph(
        "Halvorsen Valley Water & Power (HVWP) maintains 2,800 km of water "
        "mains, 1,900 km of distribution lines and 63 pumping stations. Our "
        "340 field technicians work out of five depots: Brandvik, Eastmoor, "
        "Kellet Ridge, Oxley and Sandholm. Work orders are still dispatched "
        "from WorkLine 7, an on-premises system that went live in 2011 and "
        "whose vendor ends support on 31 December 2026. Technicians carry "
        "paper job packs for roughly a third of jobs because WorkLine has no "
        "usable offline mode, and dispatchers re-key meter readings and "
        "asset updates at the end of each shift."
    )
    d.add_paragraph(
        "This document compares the four shortlisted FSM platforms on cost, "
        "capability, pilot results and references, and sets out the "
        "evaluation team's recommendation."
    )

    d.add_heading("2. Process", 1)
    d.add_paragraph(
        "The RFP was issued on 9 June 2025. Eleven vendors responded and four "
        "were shortlisted after written scoring. Each shortlisted vendor ran "
        "scripted demonstrations between 18 and 29 August 2025, followed by a "
        "six-week field pilot with live crews at the Eastmoor and Oxley "
        "depots. Pilot crews used each platform for planned maintenance, "
        "leak response and meter exchanges. The scoring panel had seven "
        "members drawn from Field Operations, IT, GIS, Control Room and "
        "Procurement."
    )

    d.add_heading("3. Commercial summary", 1)
    table(d, [
        ["Vendor", "Licence model", "Price per technician per month",
         "Implementation fee", "Minimum term"],
        ["Trakwell", "Named user", "$62", "$48,000", "3 years"],
        ["Ostrander Field Systems", "Named user", "$55", "$71,500", "5 years"],
        ["MeridianOps", "Enterprise flat fee", "$58 (equivalent)", "$39,000",
         "3 years"],
        ["Kestrel Mobile", "Concurrent user", "$74", "$25,000", "2 years"],
    ])
    d.add_paragraph(
        "MeridianOps quotes a single annual enterprise fee; the per-technician "
        "figure above divides that fee by our current headcount. All prices "
        "exclude sales tax."
    )

    d.add_heading("4. Capability scores", 1)
    d.add_paragraph(
        "Each capability was scored from 1 (poor) to 5 (excellent) by the "
        "panel. Weights: offline mobile 30%, GIS integration 25%, SCADA "
        "integration 25%, scheduling optimisation 20%."
    )
    table(d, [
        ["Vendor", "Offline mobile", "GIS integration", "SCADA integration",
         "Scheduling optimisation", "Weighted total"],
        ["Trakwell", "4", "3", "3", "4", "3.50"],
        ["Ostrander Field Systems", "5", "4", "5", "3", "4.35"],
        ["MeridianOps", "3", "5", "4", "4", "3.95"],
        ["Kestrel Mobile", "4", "2", "2", "5", "3.20"],
    ])

    d.add_heading("5. Pilot results", 1)
    table(d, [
        ["Vendor", "Pilot crews", "First-time fix rate",
         "Average hours to close a work order", "Uptime SLA"],
        ["Trakwell", "4", "81%", "6.5", "99.5%"],
        ["Ostrander Field Systems", "3", "86%", "5.2", "99.9%"],
        ["MeridianOps", "5", "78%", "7.9", "99.7%"],
        ["Kestrel Mobile", "2", "84%", "4.8", "99.0%"],
    ])
    d.add_paragraph(
        "Close time is measured from dispatch to the technician marking the "
        "job complete on the device. Crews were not told which metrics were "
        "being compared."
    )

    d.add_heading("6. Reference checks", 1)
    table(d, [
        ["Vendor", "Reference customer", "Years in production",
         "Account manager"],
        ["Trakwell", "Coastline Gas Distribution", "6", "Priyanka Bhatt-Lowe"],
        ["Ostrander Field Systems", "Three Rivers Municipal Utilities", "9",
         "Owen Castellanos"],
        ["MeridianOps", "Northfield Electric Cooperative", "4",
         "Greta Vanhoutte"],
        ["Kestrel Mobile", "Pinecrest Water Authority", "3", "Dev Malhotra"],
    ])

    d.add_heading("7. Risks", 1)
    bullets(d, [
        "Ostrander's five-year minimum term limits our flexibility; "
        "Procurement has negotiated an exit clause after year three.",
        "The MeridianOps flat fee does not fall if technician headcount "
        "falls, which matters if the proposed depot consolidation goes ahead.",
        "Kestrel Mobile's weak SCADA integration would need custom "
        "middleware, estimated at $60,000 to build and $12,000 a year to run.",
        "Trakwell's GIS connector depends on a third-party plug-in that the "
        "vendor does not support directly.",
    ])

    d.add_heading("8. Recommendation", 1)
    d.add_paragraph(
        "The evaluation team recommends Ostrander Field Systems, with "
        "MeridianOps as the fallback option. The estimated five-year total "
        "cost of ownership for Ostrander is $2.31 million, including "
        "implementation, licences and internal backfill for technicians "
        "attending training. The recommendation will be presented to the "
        "Capital Projects Board on 14 November 2025. If it is approved, "
        "contract signature is targeted for 12 December 2025 and the first "
        "depot, Eastmoor, would go live in April 2026, with the remaining "
        "depots following at six-week intervals."
    )

    d.add_heading("Glossary", 1)
    bullets(d, [
        "FSM — Field Service Management",
        "SCADA — Supervisory Control and Data Acquisition",
        "GIS — Geographic Information System",
        "SLA — Service Level Agreement",
        "RFP — Request for Proposal",
    ])
    save(d, "field_service_vendor_comparison.docx")


# --------------------------------------------------------------------------
# Document 3: B2B SaaS quarterly business review
# --------------------------------------------------------------------------
def segment_table(d, rows):
    table(d, [["Metric", "Q2 FY2025", "Q3 FY2025", "Change"]] + rows)


def build_qbr():
    d = new_doc("Lumora Analytics — Quarterly Business Review")
    d.add_heading("Lumora Analytics — Quarterly Business Review", 0)
    d.add_paragraph(
        "Prepared by: Danielle Okonkwo-Reyes, Director of Revenue Operations"
    )
    d.add_paragraph("Quarter: Q3 FY2025 (July–September 2025)")
    d.add_paragraph("Sponsor: Henrik Solberg, Chief Revenue Officer")
    d.add_paragraph("Classification: Confidential — internal distribution only")

    d.add_heading("1. Executive summary", 1)
    d.add_paragraph(
        "Lumora closed the quarter with $3.51M in MRR, up 4.2% on Q2, for an "
        "ARR run-rate of $42.1M. Growth came almost entirely from the "
        "Enterprise segment, where two large expansions landed in August. "
        "Mid-Market grew slowly and SMB contracted for the second quarter in "
        "a row despite record self-serve sign-ups. Blended NRR was 109%. "
        "Blended CAC rose to $14,800 per new logo and CAC payback lengthened "
        "from 15 to 17 months, mainly because paid acquisition costs in SMB "
        "kept climbing."
    )

    d.add_heading("2. Segment snapshot (end of Q3)", 1)
    table(d, [
        ["Segment", "Accounts", "MRR", "NRR", "GRR", "Logo churn (quarter)"],
        ["Enterprise", "87", "$1.97M", "121%", "96%", "0.8%"],
        ["Mid-Market", "344", "$1.15M", "102%", "91%", "2.9%"],
        ["SMB", "2,910", "$0.39M", "91%", "84%", "6.7%"],
    ])

    d.add_heading("3. Enterprise", 1)
    segment_table(d, [
        ["MRR", "$1.84M", "$1.97M", "+7.1%"],
        ["NRR", "118%", "121%", "+3 pts"],
        ["New logos", "9", "12", "+3"],
        ["Average ACV", "$268,000", "$281,000", "+4.9%"],
        ["Logo churn", "0.6%", "0.8%", "+0.2 pts"],
    ])
    d.add_paragraph(
        "Two expansions drove most of the gain: Vantor Logistics added 600 "
        "seats and Helmsgate Insurance moved to the Premium tier. The one "
        "Enterprise loss was a subsidiary consolidated into its parent's "
        "contract after an acquisition."
    )

    d.add_heading("4. Mid-Market", 1)
    segment_table(d, [
        ["MRR", "$1.12M", "$1.15M", "+2.7%"],
        ["NRR", "104%", "102%", "-2 pts"],
        ["New logos", "31", "27", "-4"],
        ["Average ACV", "$46,500", "$47,200", "+1.5%"],
        ["Logo churn", "2.4%", "2.9%", "+0.5 pts"],
    ])
    d.add_paragraph(
        "Mid-Market win rates held steady, but two territories in the US "
        "Midwest were uncovered for most of the quarter while we backfilled "
        "account executives."
    )

    d.add_heading("5. SMB", 1)
    segment_table(d, [
        ["MRR", "$0.41M", "$0.39M", "-4.9%"],
        ["NRR", "93%", "91%", "-2 pts"],
        ["New logos", "148", "163", "+15"],
        ["PQLs", "1,920", "2,240", "+16.7%"],
        ["Logo churn", "6.1%", "6.7%", "+0.6 pts"],
    ])
    d.add_paragraph(
        "Self-serve sign-ups and PQLs both set records, but most churned SMB "
        "accounts never connected a second data source. Exit surveys point to "
        "onboarding rather than price."
    )

    d.add_heading("6. Organisation", 1)
    d.add_paragraph(
        "Two leaders now own the post-sale motion. Marisol Achterberg joined "
        "as VP of Customer Success in May 2025 from a payments company. Her "
        "organisation has 41 customer success managers across the Rotterdam "
        "and Austin offices and owns every Enterprise and Mid-Market renewal. "
        "Kwame Asante-Lindqvist moved over from Sales Engineering at the start "
        "of the quarter. His Digital Success team of nine specialists runs the "
        "pooled, tech-touch model for SMB accounts and also owns in-app "
        "onboarding."
    )

    d.add_heading("7. Priorities for Q4", 1)
    bullets(d, [
        "Usage-based add-on pricing for the Connectors module goes live on "
        "1 December 2025 for all new contracts.",
        "Launch an SMB save desk staffed by Digital Success to contact "
        "accounts that have not connected a second data source by day 14.",
        "Close the two open Mid-Market territories and restore full "
        "account-executive coverage.",
        "Bring blended CAC payback back under 15 months by shifting SMB "
        "budget from paid search to partner referrals.",
    ])

    d.add_heading("8. Risks and asks", 1)
    d.add_paragraph(
        "The largest risk to the Q4 forecast is renewal timing: three "
        "Enterprise renewals worth a combined $610,000 in ARR fall in the last "
        "two weeks of December, when customer procurement teams are often "
        "short-staffed. Revenue Operations asks the executive team to approve "
        "early-renewal incentives of up to two months' credit for those "
        "accounts, and to release headcount for two additional Digital "
        "Success specialists so that the SMB save desk can launch on time "
        "rather than in the new year."
    )

    d.add_heading("9. Acronyms used in this review", 1)
    bullets(d, [
        "MRR — Monthly Recurring Revenue",
        "ARR — Annual Recurring Revenue",
        "ACV — Annual Contract Value",
        "CAC — Customer Acquisition Cost",
        "Net Revenue Retention (NRR)",
        "Gross Revenue Retention (GRR)",
        "Product-Qualified Lead (PQL)",
    ])
    save(d, "lumora_qbr_q3_fy2025.docx")


if __name__ == "__main__":
    build_vendor_comparison()
    build_qbr()
    print("built")
