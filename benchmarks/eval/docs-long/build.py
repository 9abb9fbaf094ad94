"""Build the Juniper heading-less document evaluation set.

Reads the four Markdown documents in docs/ (UTF-8, no headings anywhere) and writes
questions.jsonl next to this file: one row per question with gold character spans
({"file", "start", "end"}) into the document text.

No offset is typed by hand. Every gold passage below is an exact string; the script
asserts that it occurs exactly once in its file and computes the offsets. It also
checks the documents themselves: no line starts with '#', no bold markup, and every
document is 2,500-4,000 words.

Run from /work/main:  .venv/bin/python benchmarks/eval/docs-long/build.py
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE / "docs"

I = "grand-junction-interview.md"  # store manager interview transcript, June 10, 2025
M = "juniper-strategy-memo.md"  # VP Store Operations memo to the ELT, July 21, 2025
E = "locker-vendor-emails.md"  # vendor / IT / finance email thread, July 8 - August 18
N = "juniper-working-notes.md"  # weekly working-session notes, August 21 - November 6

# (id, kind, question, [(file, exact gold passage), ...])
# kind: name = person/place/vendor lookup, num = numeric fact, para = paraphrase
# (worded away from the text), exact = term or code lookup, plain = ordinary question
# that reuses the text's own words, multi = two references.
QUESTIONS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    # --- Grand Junction interview -------------------------------------------------
    ("d1", "name", "Who did Darlene Fuentes take over from at Grand Junction, and when?", [
        (I, "I started as a cashier at the Montrose store when I was nineteen, moved to the paint desk, then went to Delta as assistant manager, and I took over Grand Junction in 2017 when Hank Sorensen retired."),
    ]),
    ("d2", "num", "How big is Store #12 and how many employees does it have?", [
        (I, "We're about 62,000 square feet under roof plus the lumber yard out back, and I have 74 people on the payroll, a few more in spring when the garden center opens up and everybody in the valley wants tomato cages on the same weekend."),
    ]),
    ("d3", "para", "What fraction of the Grand Junction store's revenue comes from trade customers?", [
        (I, "By sales it's about forty percent contractors, a bit more in the summer."),
    ]),
    ("d4", "num", "How many pickup orders did Grand Junction handle last month, and how does that compare with before the pandemic?", [
        (I, "Last month we did about 1,400 pickup orders. Before COVID it was maybe 600 a month, so it's more than doubled."),
    ]),
    ("d5", "exact", "When does the service desk check ID during a pickup?", [
        (I, "Whoever is on the desk asks for the order number or looks them up by phone number, checks ID if it's a card-not-present order over $250, and then walks back to the staging shelves behind the desk."),
    ]),
    ("d6", "para", "What was the longest wait the store manager remembers, and what had the customer come for?", [
        (I, "The worst one I remember was a lady last March who waited twenty-six minutes for a box of cabinet hinges."),
    ]),
    ("d7", "num", "By how much have the Grand Junction service desk's weekly hours been cut compared with 2023?", [
        (I, "I lost part of a desk position in last year's labor budget, so I'm running that desk on 11.5 fewer hours a week than I had in 2023."),
    ]),
    ("d8", "name", "Who puts together the Saturday staff schedule at Grand Junction?", [
        (I, "My assistant manager, Tomas Reyes, builds the Saturday schedule and he says it's the hardest puzzle of his week."),
    ]),
    ("d9", "plain", "How does someone collect an online order for drywall or lumber today?", [
        (I, "Anything that won't fit on the staging shelf, so lumber, drywall, bagged concrete, water heaters, gets staged out in the yard with a printed tag on it. The customer checks in at the desk first, then drives around to the yard gate, and someone from the yard loads them with the forklift."),
    ]),
    ("d10", "multi", "How common are oversized items in Grand Junction's pickup orders, according to the store manager and according to the OrderHub data?", [
        (I, "About a quarter of our pickup orders here have at least one yard item in them, because of all the trade business."),
        (N, "Chain-wide, 17% of pickup orders contain at least one item that will not fit a large Parcelwise door, but the share varies a lot, from 9% at Aurora to 26% at Grand Junction, because of the lumber yard."),
    ]),
    ("d11", "exact", "How was curbside pickup set up at the Grand Junction store when it started?", [
        (I, "We started curbside in April 2020 with four numbered parking spots and a phone number on a sign."),
    ]),
    ("d12", "name", "Which competitor already has a locker wall nearby, and in which town?", [
        (I, "Summit Supply put a locker wall into their Delta store last fall."),
    ]),
    ("d13", "para", "What does the Grand Junction manager fear she would lose if customers collect from a locker?", [
        (I, "When a contractor comes to the desk for his pickup, half the time he remembers he needs screws or a saw blade and grabs it on the way out."),
    ]),
    ("d14", "exact", "Where would Darlene put a locker in her store, and why that spot?", [
        (I, "In the vestibule, on the left side, where the propane exchange cage used to be before we moved it outside in 2021. There's an outlet there already, it's out of the weather, and it's visible from the registers, which matters a lot for theft."),
    ]),
    ("d15", "name", "Which customer was handed the wrong generator, and what was it worth?", [
        (I, "Last November we handed a $1,100 generator to the wrong Martinez, and we only found out when the right Martinez showed up an hour later."),
    ]),
    ("d16", "num", "How many of the orders waiting on the Grand Junction staging shelves never get collected?", [
        (I, "At any given time I've got thirty or forty orders sitting on the staging shelves, and maybe six or seven of those will never get picked up."),
    ]),
    ("d17", "num", "How cold does it get in Grand Junction in winter?", [
        (I, "Grand Junction is mild compared to the Front Range, but we still get nights down around five degrees in January."),
    ]),
    ("d18", "para", "Which months did the store manager want to avoid for starting a pilot, and why?", [
        (I, "Yes, but not starting in November or December. The holidays are our second busiest stretch after spring, and I don't want my people learning a new thing while we're slammed with snow blowers and Christmas lights."),
    ]),
    ("d19", "para", "What three signs would tell Darlene that the lockers worked?", [
        (I, "Whether the Saturday line at the desk gets shorter, which I can see with my own eyes without any report. Whether the abandoned orders go down. And whether my add-on sales hold up."),
    ]),
    ("d20", "num", "What did the separate pickup counter in Darlene's capital request cost, and what happened to it?", [
        (I, "I asked for a separate pickup counter in my 2024 capital request, it came to about $9,000 for the counter, a scanner and moving an outlet, and it got cut in the spring."),
    ]),
    ("d21", "num", "How long is the vestibule wall at Store 12 exactly, and how far is the nearest network drop?", [
        (I, "I measured the vestibule wall at 13 feet 10 inches, and the nearest network drop is in the receiving office, roughly 280 feet of cable run away by the route facilities would have to use."),
    ]),
    ("d22", "multi", "Darlene asked for a cheat sheet at the desk; did she get one?", [
        (I, "I'd want a one-page cheat sheet taped up at the desk and the override on the handhelds we already carry, not on some separate tablet that's always dead."),
        (N, "Hector will also produce a one-page cheat sheet for each service desk, which was Darlene's request, laminated rather than taped."),
    ]),
    # --- Strategy memo ------------------------------------------------------------
    ("d23", "num", "How much money is the ELT asked to approve for the locker pilot, and for how long?", [
        (M, "I am asking the ELT to approve, at its meeting on August 14, a pilot of self-service pickup lockers in four stores, with a total budget of $310,000 over sixteen weeks."),
    ]),
    ("d24", "num", "What share of company sales were online orders in fiscal 2024, and how many of those were picked up in a store?", [
        (M, "In fiscal 2024 online orders made up 11.2% of company sales, and 64% of those online orders were collected in a store rather than shipped."),
    ]),
    ("d25", "num", "How many pickup orders did Ridgeback hand over last year, and how fast is that growing?", [
        (M, "We handed over 412,000 pickup orders across our 48 stores last year, 19% more than the year before."),
    ]),
    ("d26", "para", "Typically, how long does a pickup customer stand at the desk on a weekday compared with a Saturday morning?", [
        (M, "The median wait was 9 minutes on weekdays and 14 minutes on Saturdays between 8 am and noon."),
    ]),
    ("d27", "num", "How many pickup handovers did the research team time, and at how many stores?", [
        (M, "In May and June, Owen Tate's research team timed 1,180 pickup handovers at eleven stores with a stopwatch, from the moment a customer joined the desk line to the moment they left with their order."),
    ]),
    ("d28", "para", "What do unhappy pickup customers complain about most often?", [
        (M, "Waiting is the most common theme in detractor comments about pickup, named in 44% of them, well ahead of out-of-stock substitutions at 18% and order accuracy at 9%."),
    ]),
    ("d29", "num", "What share of service desk time goes to handing over pickup orders?", [
        (M, "Using the desk activity study from last autumn, we estimate that service desk associates spend 38% of their time on pickup handovers, including walking to staging shelves and the yard, and that share rises to almost half on Saturdays."),
    ]),
    ("d30", "multi", "What was the uncollected-order rate before the pilot, and what was it at the pilot stores at the first readout?", [
        (M, "Orders that are never collected are cancelled automatically after five days; the uncollected rate is 6.5% of pickup orders, and each one has to be restocked by hand."),
        (N, "The uncollected rate at the pilot stores was 3.1% for the period, against 6.4% at the controls."),
    ]),
    ("d31", "num", "How many misreleases were recorded last year, and how much merchandise was written off?", [
        (M, "We also recorded 214 misreleases last year, where an order was handed to the wrong person, and wrote off $61,000 in merchandise that did not come back."),
    ]),
    ("d32", "num", "In the Pro desk survey, what did contractors say would most improve pickup?", [
        (M, "Asked what would most improve pickup, 41% chose being able to collect before the store opens, 33% chose a faster handover inside the store, and only 12% chose curbside."),
    ]),
    ("d33", "para", "Would trade customers actually use a self-service locker regularly?", [
        (M, "Asked whether they would use a self-service locker, 58% said they would use one at least once a week, and the figure rose to 71% among contractors who already place more than four pickup orders a month."),
    ]),
    ("d34", "num", "What would a staffed pickup counter cost to build and run across all stores?", [
        (M, "A simple counter with a scanner and power costs about $9,000 per store, or $432,000 across 48 stores. The problem is the staffing: to keep the counter open during peak hours we would need roughly 0.6 of a full-time associate per store, which at a loaded cost of $38,000 a year comes to about $1.09 million a year chain-wide, every year."),
    ]),
    ("d35", "num", "What did curbside cost in its last full year, and what share of pickup orders did it handle?", [
        (M, "In 2021, its last full year, curbside cost us $1.4 million in store labor, and it accounted for only 14% of pickup orders."),
    ]),
    ("d36", "plain", "Why doesn't the VP want to bring back curbside pickup?", [
        (M, "Stores told us the associate running carts outside was the first position cut whenever a shift ran short. Bringing curbside back in the mountain winter would face the same problem, with the added cost of clearing and marking parking spaces."),
    ]),
    ("d37", "para", "What proportion of orders would fit in one indoor locker door?", [
        (M, "Based on the dimensions of last year's orders, about 70% of our pickup orders would fit in a single Parcelwise door."),
    ]),
    ("d38", "multi", "Which third locker maker was considered, and why wasn't it asked for a quote?", [
        (M, "We also spoke to a third locker maker, Stackwell, whose indoor towers are cheaper at about $33,000 each."),
        (M, "Their towers can only be loaded and managed from a proprietary handheld device, which would put a second device in every associate's pocket, and they have no existing connection to OrderHub, so Ike's team estimates four to five months of integration work before a single order could be collected."),
    ]),
    ("d39", "multi", "What did BoxBay quote for a new outdoor unit installed, and what did it ask for the refurbished demo unit?", [
        (E, "The installed price is $68,000, including a poured concrete pad, delivery and crane placement."),
        (E, "The price for the demo unit is $59,500 installed, with the same monthly fee."),
    ]),
    ("d40", "plain", "Why was Fort Collins chosen for the outdoor unit?", [
        (M, "Store #31 in Fort Collins gets a single BoxBay outdoor unit, because it has the coldest winters in our network and the strongest demand from contractors for early-morning collection."),
    ]),
    ("d41", "multi", "Which stores were first proposed for the indoor towers, and which store ended up replacing one of them?", [
        (M, "Three stores get indoor Parcelwise towers: Store #12 in Grand Junction, Store #19 in Provo and Store #7 in Aurora."),
        (N, "The group agreed to replace it with Orem, Store #22, which is twenty minutes away, has a similar customer mix and a network closet only 40 feet from the entrance."),
    ]),
    ("d42", "para", "Why did the Utah store originally picked for the pilot drop out?", [
        (N, "Ruth Okonkwo joined for ten minutes to confirm that Provo, Store #19, starts a full remodel of its front end on October 13, with the vestibule and service desk both being rebuilt."),
    ]),
    ("d43", "multi", "When was the pilot supposed to begin according to the memo, and when did the indoor stores actually start?", [
        (M, "I propose the pilot begins on Monday, September 29, assuming contracts are signed by August 29."),
        (E, "With Parcelwise's six-week lead time from today, the towers arrive in the last week of September, so the indoor pilot now starts on Monday, October 6, a week later than the memo said."),
    ]),
    ("d44", "num", "How many pickup orders a month does the Aurora store handle?", [
        (M, "Aurora is a metro store with the highest pickup volume in the chain, roughly 2,300 orders a month, so it will show us whether two towers are enough at peak."),
    ]),
    ("d45", "num", "How much of the pilot budget is set aside for network cabling and electrical work?", [
        (M, "Network cabling and electrical work at the four sites is estimated at $24,000, although IT will confirm each site."),
    ]),
    ("d46", "num", "What is the pilot's target for the Saturday morning wait at the desk?", [
        (M, "The main one is the Saturday morning median wait at the service desk, which we want to fall from 14 minutes to 6 minutes or less."),
    ]),
    ("d47", "num", "What share of pickup trips include an extra purchase, and how much do those add-ons average?", [
        (M, "Today 27% of pickup trips include an additional purchase made in the store on the same visit, and those add-ons average $23.40."),
    ]),
    ("d48", "para", "How much revenue could the chain lose if lockers cut down on impulse buying?", [
        (M, "Shauna Kowalski in Finance estimates that if lockers cut the add-on rate from 27% to 20% across the chain, we would lose about $675,000 a year in sales, which is more than the labor we would save at the desk."),
    ]),
    ("d49", "para", "How long would a chain-wide rollout take to pay for itself?", [
        (M, "Shauna's preliminary model puts payback at about 26 months, driven by desk labor redeployed to the sales floor, fewer misreleases and fewer abandoned orders."),
    ]),
    ("d50", "plain", "What has to happen before Celeste will ask for rollout funding?", [
        (M, "I will not ask for rollout money unless the Saturday wait target and the add-on guardrail are both met in at least three of the four pilot stores."),
    ]),
    ("d51", "para", "Will shoppers be able to bring back unwanted items through the lockers?", [
        (M, "It is not a returns locker; returns will stay at the desk, where they need a person to inspect the item."),
    ]),
    ("d52", "name", "Who owns the financial model and the add-on analysis for Juniper?", [
        (M, "Ike Brennan owns network and installation readiness, Pete Alvarado owns loss prevention, and Shauna Kowalski owns the financial model and the add-on analysis."),
    ]),
    ("d53", "num", "What smaller pilot would Celeste propose if the ELT wanted to test counters first?", [
        (M, "If the ELT prefers to test a dedicated counter first, I would ask for a smaller pilot of counters in three stores at about $60,000 including temporary staffing, but I believe that would cost us a year on the question our contractors are already asking, which is why they cannot pick up their orders at six in the morning."),
    ]),
    ("d54", "para", "Can a shopper opt out of the locker and be served by staff instead?", [
        (M, "During the pilot, a customer at a pilot store whose order fits the lockers will be told in the ready email that the order is waiting in a locker, with a code and a photo of where to find it, and with a link to have it moved to the desk instead if they prefer to deal with a person."),
    ]),
    # --- Vendor email thread ------------------------------------------------------
    ("d55", "num", "How are the 36 doors of a Parcelwise tower split by size?", [
        (E, "Each tower has 36 doors: 12 small, 16 medium and 8 large."),
    ]),
    ("d56", "exact", "What power and network connections does a Parcelwise tower need?", [
        (E, "Each tower needs one Power over Ethernet Plus network drop and one standard 120-volt outlet within six feet."),
    ]),
    ("d57", "para", "How does OrderHub find out that a customer has taken an order out of a locker?", [
        (E, "When the door opens, we post a pickup event back to OrderHub, which closes the order exactly as the handheld does today."),
    ]),
    ("d58", "num", "How large and heavy an item fits in BoxBay's oversized doors?", [
        (E, "The BoxBay Outdoor 24 has 24 doors in total, 20 standard doors and 4 oversized doors that take items up to 72 inches long and 90 pounds, which we understand matters for your contractor customers."),
    ]),
    ("d59", "num", "Down to what outside temperature does BoxBay's heating keep the interior warm?", [
        (E, "The unit is heated to keep the interior above 40 degrees Fahrenheit down to an outside temperature of minus 30, and it has active cooling for summer."),
    ]),
    ("d60", "para", "Why does BoxBay take so long to deliver a new unit?", [
        (E, "Current lead time is fourteen weeks from purchase order, because our Denver assembly line is fully booked through the autumn."),
    ]),
    ("d61", "exact", "What electrical circuit does the BoxBay outdoor unit require?", [
        (E, "The unit needs a dedicated 240-volt, 30-amp circuit and a network connection, which can be cellular if running a cable outside is impractical."),
    ]),
    ("d62", "num", "What did IT estimate for the network work at Provo?", [
        (E, "Provo is harder because the closet is on the mezzanine; we would add a small switch in the front office, about $2,400 all in."),
    ]),
    ("d63", "multi", "What did IT estimate for connecting the Grand Junction locker to the network, and what did it end up costing?", [
        (E, "I would rather put a small switch in the front office fed by fiber, estimated at $6,200."),
        (N, "The fiber run and front-office switch at Grand Junction were finished the week before and cost $5,850, below Ike's $6,200 estimate even with the access point included."),
    ]),
    ("d64", "multi", "What was the estimate for the Fort Collins power trench, and what was the final cost?", [
        (E, "Our facilities contractor estimates $9,800 for the trench, conduit and circuit, and we would use BoxBay's cellular option instead of running network outside."),
        (N, "The trench for power was finished on September 9 and came in at $9,350, a little under the estimate."),
    ]),
    ("d65", "para", "Will the lockers be able to reach the point-of-sale systems?", [
        (E, "All lockers will sit on their own network segment, separate from the point of sale and from store Wi-Fi, and neither vendor gets access to anything else on our network."),
    ]),
    ("d66", "plain", "Why isn't a QR code on its own good enough for loss prevention?", [
        (E, "Second, a QR code alone is not enough, because people screenshot codes and send them to whoever is driving by."),
    ]),
    ("d67", "multi", "Who asked for a shorter locker hold time, and what was finally agreed for orders left in a locker?", [
        (E, "Third, I would like orders to sit in a locker for no more than 72 hours."),
        (N, "Orders sit in a locker for up to 72 hours; after that the handheld shows them on a retrieval list, a store associate moves them to the desk staging shelf, and the customer gets a message saying the order is now at the service desk."),
    ]),
    ("d68", "plain", "Can two customers' small orders share one locker door?", [
        (E, "No, we do not allow two customers' orders in one door, because the door opening is the proof of pickup and sharing breaks that audit trail."),
    ]),
    ("d69", "para", "Why can customers use only 30 of the doors on each tower?", [
        (E, "On accessibility, the top row of each tower sits at 58 inches, above the 48-inch forward reach limit, so we recommend those 6 doors be reserved for staff use, which leaves 30 customer doors per tower."),
    ]),
    ("d70", "num", "What discount did Parcelwise offer, and what does a tower cost after it?", [
        (E, "If we receive a signed purchase order by August 29, we can offer an 8% discount on hardware for the pilot, which brings the installed price to $38,180 per tower."),
    ]),
    ("d71", "plain", "What did Finance recommend doing with the money saved on the towers?", [
        (E, "My recommendation is that we keep the memo total at $310,000 and treat that saving as extra contingency rather than reducing the ask, because Pete's camera requirement and Ike's fiber run at Grand Junction are not fully costed yet."),
    ]),
    ("d72", "num", "How much sales tax is expected on the pilot hardware?", [
        (E, "And neither quote includes sales tax, which varies by city; for the four pilot sites it adds roughly $17,000, which also comes out of contingency."),
    ]),
    ("d73", "exact", "What is BoxBay's SOC 2 status, and what did Information Security decide about it?", [
        (E, "BoxBay only has a SOC 2 Type I so far, with the Type II audit finishing in December. Marta says she can accept a Type I for a single pilot unit on its own cellular connection, since it never touches our network, but she will not accept it for any rollout."),
    ]),
    ("d74", "num", "How much does camera coverage over the lockers cost?", [
        (E, "Our security integrator quotes $2,800 per site for a camera and recording channel over each locker, so $11,200 for the four sites."),
    ]),
    ("d75", "plain", "Why did Celeste want the baseline measured before anything was installed?", [
        (E, "I would also like Owen's baseline measurement to happen at all eight stores, pilots and controls, in September, before any installation, so nobody can say the baseline was taken after the pilot had already started."),
    ]),
    ("d76", "multi", "On what date is each indoor tower installation scheduled, and which store got the September 30 slot?", [
        (E, "Our install crew is now confirmed for Tuesday, September 23 at Aurora, Thursday, September 25 at Grand Junction and Tuesday, September 30 at the third store, whichever store that ends up being."),
        (N, "Gordon Hale at Parcelwise was told the same afternoon that the September 30 install moves from Provo to Orem."),
    ]),
    # --- Working-session notes ----------------------------------------------------
    ("d77", "para", "What happens if impulse purchases at a pilot store keep falling?", [
        (N, "Add-on sales at each pilot store will be reported every week, not only at the end, and the pilot has a stop rule: if a store's add-on purchase rate falls more than 4 points below its baseline for three weeks in a row, lockers at that store are switched to staff-assisted mode while we investigate."),
    ]),
    ("d78", "name", "Which control store is matched with each pilot store?", [
        (N, "Owen proposed matched control stores for each pilot store, chosen on pickup volume, share of contractor sales and region: Store #15 in Montrose for Grand Junction, Store #9 in Westminster for Aurora, Store #26 in Sandy for Orem and Store #34 in Loveland for Fort Collins."),
    ]),
    ("d79", "plain", "Why did the working group decide not to split orders between a locker and the desk?", [
        (N, "Splitting was rejected because it means two handovers and two pickup messages for one order, which is worse than today for the customer, and because store teams said they would lose track of half-orders."),
    ]),
    ("d80", "num", "What size and weight limits make an item locker-eligible?", [
        (N, "An item is locker-eligible if it weighs 40 pounds or less, fits inside a large door, which is 18 by 24 by 30 inches, and is not on the restricted list."),
    ]),
    ("d81", "exact", "Can spray paint or propane go in the lockers?", [
        (N, "The restricted list for the pilot is propane cylinders, pool chlorine and other oxidizers, ammunition, spray paint in quantities over six cans, and any item with a lithium battery above 100 watt-hours."),
    ]),
    ("d82", "multi", "Which version of the store app was needed for locker loading, and did it arrive on time?", [
        (N, "This needs version 4.3 of the store app, which the mobile team has promised for September 22."),
        (N, "The store app version 4.3 shipped on September 24, two days late, with locker loading and the override included."),
    ]),
    ("d83", "para", "Why might the customers using lockers in the pilot not be typical?", [
        (N, "Owen flagged that this makes pilot locker users slightly unrepresentative, because opt-in customers skew younger and more frequent."),
    ]),
    ("d84", "name", "Who manages the Fort Collins store, and what did she ask about the unit's location?", [
        (N, "Store #31's manager, Carol Lindahl, asked whether the unit could sit closer to the contractor entrance instead; Ike said no, because the contractor entrance has no room for a pad without losing two parking spaces reserved for accessible parking."),
    ]),
    ("d85", "num", "What was Grand Junction's baseline Saturday morning wait, and the longest single wait?", [
        (N, "Grand Junction had the longest Saturday morning median wait of any store in the study, at 15 minutes, with a longest single wait of 31 minutes."),
    ]),
    ("d86", "num", "In the first days of the pilot, how long did customers typically spend at the tower?", [
        (N, "The median time a customer spent at the tower, from scanning the code to closing the door, was 41 seconds."),
    ]),
    ("d87", "multi", "What problems did the dress rehearsal turn up, and how were they fixed?", [
        (N, "The PIN text was sometimes arriving up to ten minutes after the email, because the e-commerce team batched text messages every ten minutes; they changed it to send immediately."),
        (N, "And associates at Orem loaded three orders into the wrong size of door, because the handheld suggested a door but did not force one; version 4.3.1 of the store app now locks the suggested door size."),
    ]),
    ("d88", "para", "How far did Saturday desk waits drop at Aurora and Orem by the first readout?", [
        (N, "Aurora went from 12 minutes to 5, and Orem from 11 to 6."),
    ]),
    ("d89", "para", "What is Darlene's idea for winning back extra purchases from locker customers?", [
        (N, "She wants to try putting a small rack of fasteners, blades and gloves beside the tower, and the group agreed to test it at Grand Junction from October 27."),
    ]),
    ("d90", "num", "What did the first weeks show for add-on purchases among locker customers?", [
        (N, "Shauna's weekly report shows the add-on purchase rate for locker pickups at 24%, against a baseline of 27%, so down 3 points. That is inside the 4-point stop rule but outside the memo's 2-point guardrail, and Shauna was clear that two and a half weeks is too short to know whether it will stabilize."),
    ]),
    ("d91", "num", "When did Aurora's towers first fill up completely?", [
        (N, "Aurora's two towers filled up completely for the first time on Saturday, October 11, at 10:40 am, with all 60 customer doors occupied, and for about ninety minutes new orders went to the desk instead."),
    ]),
    ("d92", "num", "How did the outdoor unit cope with the first really cold night in Fort Collins?", [
        (N, "On the night of November 5 the outside temperature dropped to minus 4 degrees and the interior stayed at 43, with a can of latex paint left inside overnight as a test, which was fine in the morning."),
    ]),
    ("d93", "num", "What share of Fort Collins locker pickups happened outside store hours?", [
        (N, "In the first three days, 22% of Fort Collins locker pickups happened outside store hours, most of them between 5 and 6:30 am, which is exactly the contractor behavior the memo predicted."),
    ]),
    ("d94", "exact", "When is the ELT readout now, and why did it move?", [
        (N, "The ELT readout has moved from January 13 to January 27, 2026, because the ELT's January 13 meeting is now the budget meeting, and Celeste wants the full sixteen weeks of indoor data, which end on January 25."),
    ]),
    ("d95", "para", "Over what dates is nobody allowed to change the locker setup, and who can approve exceptions?", [
        (N, "The group agreed a configuration freeze from November 24 to January 2: no changes to lockers, messaging, the app or eligibility rules during the holiday peak, except for urgent fixes approved by Yuki and Ike together."),
    ]),
]

MIN_WORDS, MAX_WORDS = 2500, 4000


def check_document(name: str, text: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        assert not line.lstrip().startswith("#"), f"{name}:{number} looks like a heading"
    assert "**" not in text and "__" not in text, f"{name} has bold markup"
    words = len(text.split())
    assert MIN_WORDS <= words <= MAX_WORDS, f"{name} has {words} words"
    for paragraph in (p for p in text.split("\n\n") if p.strip()):
        n = len(paragraph.split())
        assert 60 <= n <= 200, f"{name}: paragraph of {n} words: {paragraph[:60]!r}"
    return words


def build() -> list[dict]:
    texts = {p.name: p.read_bytes().decode("utf-8") for p in sorted(DOCS.glob("*.md"))}
    assert set(texts) == {I, M, E, N}, sorted(texts)
    for name, text in texts.items():
        print(f"{name}: {check_document(name, text)} words")
    rows = []
    for qid, kind, question, golds in QUESTIONS:
        assert kind in {"name", "num", "para", "exact", "plain", "multi"}, qid
        assert (kind == "multi") == (len(golds) > 1), qid
        refs = []
        for filename, passage in golds:
            text = texts[filename]
            count = text.count(passage)
            assert count == 1, f"{qid}: gold passage occurs {count} times in {filename}: {passage[:60]!r}"
            start = text.index(passage)
            assert text[start : start + len(passage)] == passage
            refs.append({"file": filename, "start": start, "end": start + len(passage)})
        rows.append({"id": qid, "question": question, "references": refs})
    assert len({r["id"] for r in rows}) == len(rows)
    return rows


def main() -> None:
    rows = build()
    with (HERE / "questions.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    kinds = Counter(kind for _, kind, _, _ in QUESTIONS)
    cross = sum(1 for _, _, _, g in QUESTIONS if len({f for f, _ in g}) > 1)
    per_file = Counter(ref["file"] for row in rows for ref in row["references"])
    print(f"questions: {len(rows)} {dict(sorted(kinds.items()))}; multi-span across two files: {cross}")
    print(f"references per file: {dict(sorted(per_file.items()))}")


if __name__ == "__main__":
    main()
