"""Build the Tidewater long-conversation memory evaluation set.

Writes, next to this file:
  conversation.jsonl  a long running chat between a PM (Noor, role "user") and an
                      engineer teammate (Mateo, role "assistant") over twelve
                      sessions, January to July 2025; ids r1..rN
  questions.jsonl     questions with evidence row ids and a category

Both sides state facts. Nothing is typed as a row id: every piece of evidence
below is an exact substring of one row, and the script asserts that it occurs
in exactly one row before resolving it to that row's id. Deterministic.

Run from /work/main:  .venv/bin/python benchmarks/eval/memory-long/build.py
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent

U = "user"  # Noor Haddad, product manager at Brightwell (ChairTime scheduling)
A = "assistant"  # Mateo Ruiz, backend and data engineer on the same team

# Session dates are never stated as rows; they only show up in the talk itself.
CONVERSATION: list[tuple[str, str]] = [
    # --- Session 1: Wednesday, January 8 -------------------------------------
    (U, "Happy new year, Mateo! How was Lisbon? I saw your photos of all those tiled buildings and got very jealous while I was shoveling my car out."),
    (A, "Lisbon was great, thanks. We ate far too many pasteis de nata, and Ines somehow got sunburnt in January, which I didn't think was possible."),
    (U, "Ha. Okay, news: Lorraine finally said yes to the waitlist backfill idea. Internally we're calling it Tidewater, and I'd love you to be the lead engineer on it."),
    (A, "I had a feeling. I'm in, as long as Priscilla takes me off the billing migration. Who else is on the team?"),
    (U, "Dev Anand on design, you on backend and data, and probably a second engineer later in the quarter. Priscilla already agreed to move you, I asked her before the break."),
    (A, "Sneaky. Before the break I pulled December numbers from the warehouse: across our 1,840 active clinics, 11.4% of booked appointments ended as no-shows or late cancellations."),
    (U, "That's higher than I expected. Do you know how many of the cancellations come in really late, like the same day or the night before?"),
    (A, "Of all cancellations, 62% arrive less than 24 hours before the appointment. Those are exactly the slots front desks almost never manage to refill."),
    (U, "Which is the whole pitch. Sales keeps quoting an empty dental chair-hour at about $180 of lost production, so it adds up fast."),
    (A, "I'd want to check that figure against our own data before we lean on it, but it's fine for a deck. What's the budget looking like?"),
    (U, "We've got $120k for the first two quarters. That covers SMS costs, a contractor for the clinic-side UI, and a bit of travel for design research."),
    (A, "SMS will be the big unknown. I'll get quotes from Twilio and Sinch this week so we're not guessing when Finance asks."),
    (U, "Perfect. Lorraine wants a beta running in real clinics by April 14, which feels tight but doable if we scope hard."),
    (A, "Mid-April works if we skip anything fancy. My rough estimate is six engineer-weeks for an MVP that texts the waitlist and books whoever answers first."),
    (U, "Whoever answers first? Not ranked by how long each person has been sitting on the waitlist?"),
    (A, "For the MVP, yes, first reply wins. Ranking brings a pile of edge cases, and clinics keep telling support they mostly care that the chair gets filled."),
    (U, "Fair enough. When a slot frees up, how many people would we text at once?"),
    (A, "Three at a time. If nobody claims it within the hold window, we move on to the next three people on the list."),
    (U, "And how long would that hold window be before we move on?"),
    (A, "Fifteen minutes to start. Long enough that someone at work can glance at their phone, short enough that the slot isn't wasted."),
    (U, "Will you need Kafka or something heavy for the messaging? Priscilla is definitely going to ask about infrastructure costs."),
    (A, "No Kafka. I'll use a plain Postgres job queue on the existing scheduling database; our volume is tiny next to what that box already handles."),
    (U, "She'll like that answer. Oh, and quiet hours. We really can't be texting people at six in the morning."),
    (A, "Agreed. I'll hard-code no texts before 8 am or after 8 pm, using the clinic's local time zone rather than the patient's phone area code."),
    (U, "Smart, people move and keep their old numbers. Which clinics should we approach as design partners? I was thinking five or six to start."),
    (A, "Pick from the clinics with the most late cancellations per chair. I'll send you a list of twenty by Friday, sorted by exactly that."),
    (U, "Dev wants to do a round of patient interviews before designing the texts. Is that worth the time, in your view?"),
    (A, "Yes, but keep it small. Five or six patients is plenty; the risky part is the clinic side, not the text itself."),
    (U, "Great, thanks. Okay, I have to run, Biscuit has a vet appointment at four."),
    (A, "Is he alright? Give the little beagle a scratch from me."),
    (U, "He's fine, just his yearly shots. He turned four in December and still acts like a puppy around the vet's office cat."),

    # --- Session 2: Wednesday, January 22 ------------------------------------
    (U, "Morning! I spent Monday and Tuesday visiting design partners. Lakeside Dental in Duluth was the highlight; Dr. Amara Osei runs four chairs there and she's very keen."),
    (A, "Nice. What does the front desk actually do today when someone cancels at the last minute?"),
    (U, "At Pine Street Physio in Madison, Gwen Farrell, the office manager, told me she spends about forty minutes a day phoning people on a paper waitlist."),
    (A, "That's a strong quote. Did she say how often those calls actually end with the slot filled?"),
    (U, "Maybe one call in four, she guessed. Most people don't pick up unknown numbers anymore, which is half the reason texting should work better."),
    (A, "Makes sense. I looked at usage too: only 23% of clinics use our built-in waitlist at all, and most of those lists have fewer than ten names."),
    (U, "Hm, that's a real risk. If the lists are tiny, there's nobody to text when a slot opens."),
    (A, "Right, so I think patients need a way to put themselves on the waitlist from the online booking page. I'd argue that belongs in the MVP."),
    (U, "Agreed, I'll add self-join to scope. Dr. Osei asked for one exclusion as well: never offer new-patient exams through the waitlist."),
    (A, "Why those in particular? Is it the paperwork, or something clinical?"),
    (U, "The paperwork. New patients fill in intake forms and the clinic runs an insurance check first, and none of that happens on a quarter hour's notice."),
    (A, "Got it. I'll add a per-clinic list of excluded appointment types, with new-patient exams excluded by default."),
    (U, "Oh, and Gwen's waitlist is literally a clipboard taped next to the phone, with names in pencil and half of them crossed out."),
    (A, "So that's the competition: a clipboard. Honestly, if we're not easier to use than a clipboard, we've failed."),
    (U, "Fair. So how did the SMS quotes come back from the two vendors?"),
    (A, "Twilio came in at $0.0079 per message segment. Sinch was slightly cheaper, but their delivery reporting is much worse, so I'm going with Twilio."),
    (U, "Does that fit inside what we've got, or do I need to warn Lorraine?"),
    (A, "Easily, for the beta. I'm assuming about 40,000 messages a month across the beta clinics, which is roughly $316 a month at that rate."),
    (U, "Great. Totally unrelated, are you still doing that half marathon you signed up for?"),
    (A, "Yep, the Lakefront Half on March 16. I want to finish under one hour fifty-five, so I'm running at 6 am three days a week, in January, in the dark."),
    (U, "Rather you than me. I've started bouldering at the climbing gym on Tuesday nights, and my forearms are completely destroyed."),
    (A, "Bouldering's fun, Ines did it for a year. Also, news: we're adopting a cat from the shelter on Saturday, a grey rescue called Pico."),
    (U, "Pico! Biscuit is going to be so jealous when I show him the pictures."),
    (A, "I'll send plenty. Last thing: Hannah from legal pinged me asking who owns the consent language for the patient texts."),
    (U, "That's me. I'm meeting Hannah Brooks on Thursday to go through the TCPA rules on texting patients."),
    (A, "Good. Send me her notes afterwards, because whatever she says changes what I have to store for each patient."),
    (U, "Did you ever send over that list of twenty candidate clinics? I can't find it anywhere."),
    (A, "Sent it two Fridays ago, subject line \"late cancellers\". Lakeside was number three on it, which is how we found them."),

    # --- Session 3: Tuesday, February 4 --------------------------------------
    (U, "Quick update from my session with Hannah. We need express written consent before sending any waitlist text, so a pre-ticked checkbox is out."),
    (A, "Okay, that's manageable. What exactly does the checkbox have to say?"),
    (U, "Her draft wording is \"Text me if an earlier appointment opens up,\" unticked by default, plus a line saying patients can reply STOP at any time."),
    (A, "Easy enough. I'll store the consent timestamp and the version of the wording with each patient record, so we can prove consent if anyone ever asks."),
    (U, "She'll love you for that. She also wants a consent log that can be exported for audits, but that can wait until after the beta."),
    (A, "Fine by me. Jonah Pike started yesterday, by the way, and Priscilla is putting him on Tidewater half-time."),
    (U, "Oh nice, I haven't met him yet. What's he like so far?"),
    (A, "Sharp. He came out of a coding bootcamp last year, and before that he did a year of support at a pharmacy chain, so he actually understands front desks."),
    (U, "Does he have a laptop and access sorted? Onboarding took ages last time."),
    (A, "Laptop yes, production access no. Security wants him through the HIPAA training first, which takes until Friday."),
    (U, "Where is he going to sit, by the way? The fourth floor is packed."),
    (A, "Next to me by the window, in Ravi's old spot. Ravi moved down to the platform team's floor last week."),
    (U, "Fine. Big news on my end: Lorraine raised our budget to $150k after I showed her what SMS volume looks like if this goes chain-wide."),
    (A, "Nice, that's thirty thousand more than we started with. Does it change anything for the beta itself?"),
    (U, "Mostly it means we can keep the UI contractor through May instead of letting her go in March."),
    (A, "Remind me who the contractor is again? I keep forgetting her name."),
    (U, "Marisol Vega. She did the booking page redesign last year, so she already knows that part of the front end."),
    (A, "Oh good, she's great to work with. Different subject: I've booked the team offsite for March 20 at the Larchmont Hotel downtown."),
    (U, "The one right by the river? That's fancy, how did you manage that?"),
    (A, "That one. They had a mid-week deal: the room and lunch for about twenty people came to $2,400 for the day."),
    (U, "I'll let Lorraine know it's on. And how's Pico settling in at home?"),
    (A, "He spent three days under the sofa, and now he sleeps on my keyboard during standup. Jonah has already met him on camera."),
    (U, "Sounds like he runs the team now. Biscuit had a rough week, though. He ate a sock on Saturday and needed surgery."),
    (A, "Oh no, poor guy! Is he going to be okay after that?"),
    (U, "Yeah, the vet got it out. He's home in a cone, feeling very sorry for himself, and I'm $1,900 poorer."),
    (A, "Ouch, that's a lot. Did you have pet insurance for him at least?"),
    (U, "Nope, lesson learned. I'm signing him up this week, before he finds the other sock."),

    # --- Session 4: Tuesday, February 18 -------------------------------------
    (U, "Dev shared the patient text mockups yesterday. What did you think of the message copy?"),
    (A, "Mostly good, but I'd shorten it to fit one 160-character segment. The current draft splits into two, which doubles what we pay per offer."),
    (U, "Good catch, I'll tell him. What would the one-segment version look like?"),
    (A, "Something like \"Lakeside Dental: a 2:30pm slot opened today. Reply YES to claim it in the next 15 min. STOP to opt out.\" That's 104 characters."),
    (U, "Nice. Marketing also wants a customer-facing name, by the way. Their first pick is Open Slot Alerts."),
    (A, "Bit of a mouthful, but honest. Does it have to appear in the texts themselves?"),
    (U, "No, only in the clinic settings screen and in the release notes."),
    (A, "Then I don't mind. The prototype works end to end on staging now, by the way. I claimed a fake cleaning through it from my own phone on Friday."),
    (U, "Already? That's well ahead of where I thought we'd be."),
    (A, "The booking part was easy, since the scheduling API already has a hold endpoint. The annoying part was clinics in Arizona, which don't observe daylight saving."),
    (U, "Of course it's Arizona. How many clinics do we have there?"),
    (A, "Sixty-three, all on Mountain Standard Time year-round. I've written tests specifically for them so this never bites us in March."),
    (U, "How did the fake booking look on the clinic's side? Did the calendar update properly?"),
    (A, "Instantly. The slot turned green with a little lightning icon that Dev designed, and Marisol is going to polish it."),
    (U, "Is there a risk clinics get confused about which bookings came in through Tidewater?"),
    (A, "A little, so every Tidewater booking gets a tag in the appointment notes saying it was filled from the waitlist."),
    (U, "Dev also asked whether patients should be able to reply with a different time, like \"no, but 4pm works\"."),
    (A, "Not in the MVP. Anything other than YES or STOP gets an automatic reply pointing them to the clinic's phone number."),
    (U, "Okay. Tasha in customer success asked whether she could get a weekly report of fill rates for each beta clinic."),
    (A, "Sure. I'll build a small Metabase dashboard instead of a report, so she can check whenever she likes. I'll own it for now."),
    (U, "Perfect. And what's the headline metric going to be on that dashboard?"),
    (A, "Fill rate: slots offered that got rebooked through Tidewater, divided by all slots offered. Plus the median minutes it takes to fill."),
    (U, "What about recovered revenue? Lorraine will definitely ask for a dollar figure."),
    (A, "I'll show it, labelled as an estimate: filled slots times the $180 chair-hour number, until someone checks that number properly."),
    (U, "Fair. Did you hear that Lorraine is going on sabbatical this summer?"),
    (A, "No, I hadn't heard! How long is she going to be away?"),
    (U, "Eight weeks starting July 1. She's walking part of the Camino, and Ravi Menon from platform will cover for her."),
    (A, "Good for her. Ravi's fine, just a bit slow on approvals, so we'll want anything needing sign-off done before July."),

    # --- Session 5: Tuesday, March 4 -----------------------------------------
    (U, "Bad news, sort of. Security booked the penetration test with Redline Security for April 7 to 11, and Lorraine won't start the beta before the report is back."),
    (A, "So the mid-April date we planned around is off the table, then?"),
    (U, "Yes. The beta now starts Monday, April 28. I told the design partners yesterday, and Dr. Osei was relaxed about it."),
    (A, "Honestly, two extra weeks helps me. I want more time on the race condition around simultaneous replies."),
    (U, "What race condition? This is the first I'm hearing of it."),
    (A, "If two people reply YES within the same second, both could get a confirmation. I lock the slot row while booking, but I haven't load-tested it yet."),
    (U, "Please do. A double-booked dentist is the worst headline we could possibly get."),
    (A, "Agreed. Also, an annoying offsite update: the Larchmont double-booked our date with a wedding, so I've moved us to Foundry Hall in the West Loop."),
    (U, "Is Foundry Hall more expensive than the hotel was, or about the same?"),
    (A, "Slightly cheaper, actually, $2,150, and they let us bring our own coffee. Same date, nothing else changes."),
    (U, "They've got two different rooms there, right? Which one did you get?"),
    (A, "I'm holding both for now: the blue room upstairs with the whiteboard wall, or the garden room, which is bigger but echoes badly. Your call."),
    (U, "The blue one, definitely. We'll be sketching flows all day, so the whiteboard wall is worth it."),
    (A, "Done, I'll confirm it with them this afternoon and release the other one."),
    (U, "Also, Lorraine asked whether the beta slip changes the budget at all."),
    (A, "Not really. Two more weeks of Marisol is about $6,000, and we have room after the increase."),
    (U, "By the way, Hannah signed off on the consent wording last week, with one tweak."),
    (A, "What did she change? I'd like to update the stored wording version."),
    (U, "She changed it to \"Text me if an earlier time opens up\", because physio clinics call them sessions, not appointments."),
    (A, "Easy. I'll bump the wording to version two; nobody has consented under version one yet, so there's nothing to migrate."),
    (U, "How's the training going, with the race less than two weeks away?"),
    (A, "Decent. I did my last long run on Sunday, eighteen kilometers, but my left knee is complaining, so I'm tapering early."),
    (U, "Take care of that knee. I'm moving apartments on April 5, by the way, so I'll be useless that whole weekend."),
    (A, "Oh exciting, where are you moving to? Still on the north side?"),
    (U, "Logan Square, a one-bedroom with a tiny yard, so Biscuit finally gets some grass of his own."),
    (A, "He's earned it after the sock ordeal. Need help carrying boxes? I still owe you for covering my on-call shift in January."),
    (U, "Yes please, if you're free that Saturday morning. I'll pay you in pizza and beer."),
    (A, "Deal. I'll bring Ines too; she's weirdly good at fitting furniture through narrow doorways."),
    (U, "Ha. Did Ines ever sign up for that pottery class she kept talking about?"),
    (A, "She did, Wednesday nights. We now own eleven slightly lopsided bowls and one mug that leaks."),

    # --- Session 6: Friday, March 21 -----------------------------------------
    (U, "Thanks again for organizing yesterday. The room was perfect, and people are still talking about the flow wall."),
    (A, "Glad it worked. Their coffee machine was terrible, though, so thank goodness we brought our own."),
    (U, "Ha, true. So tell me, did you make your time on Sunday?"),
    (A, "1:53:40! The knee held up until about kilometer seventeen, and after that I just gritted my teeth."),
    (U, "Congratulations! That's comfortably under what you were aiming for, right?"),
    (A, "By over a minute. Ines held a sign at the finish line that said \"run like the cat is chasing you\", which got a lot of laughs."),
    (U, "Love it. Okay, offsite decisions, let me write them down while they're fresh. Patients can add themselves to the waitlist from the booking page from day one of the beta."),
    (A, "Yes, and Dev is adding a \"notify me\" button under fully booked days. I'm building the endpoint for it this sprint."),
    (U, "We also talked about the size of the beta. I'm hoping for twelve clinics."),
    (A, "Twelve is what I planned capacity around, and Twilio's account limits are fine for that."),
    (U, "Second decision I wrote down: Jonah owns the consent audit log, right?"),
    (A, "Right, and he's already started on the export. It'll be a CSV file for now."),
    (U, "And the Arizona thing from last month, we're all good there?"),
    (A, "All good, tests pass. I also found Indiana clinics in two different time zones, but we store each clinic's zone explicitly, so that's fine too."),
    (U, "Did Dev present the patient interview findings? I had to step out for that part of the day."),
    (A, "He did. Five of the six patients said they'd answer within ten minutes if the text came from their own clinic's name."),
    (U, "Last offsite item: Lorraine wants a go/no-go review for the beta. When should we hold it?"),
    (A, "The Thursday before launch, April 24. By then Redline's report is in and we'd still have a few days to fix anything they find."),
    (U, "Works for me. I'll send the invite and make sure Priscilla and Hannah are both on it."),
    (A, "Good. Separately, Priscilla mentioned you wanted churn numbers, so I had a look at those yesterday evening."),
    (U, "Oh great, she told me you'd been digging. What did you find?"),
    (A, "Clinics that actively use the waitlist churned 3.1% last year, versus 4.6% for everyone else. Correlation, not causation, obviously."),
    (U, "Still a nice slide, though. Can I show it to Lorraine next week?"),
    (A, "Sure, with the caveat in small print: bigger clinics use the waitlist more, and bigger clinics churn less anyway."),
    (U, "Noted. Has the Sinch sales rep stopped emailing you yet?"),
    (A, "No, he emails every Thursday like clockwork. I've stopped replying, which apparently only encourages him."),
    (U, "Ha. One more: Dr. Osei wants to know if hygiene-only clinics can join the beta later on."),
    (A, "Sure, nothing in the design stops that. Hygiene visits are just another appointment type as far as we're concerned."),

    # --- Session 7: Wednesday, April 9 ---------------------------------------
    (U, "Thank you for hauling the couch up three flights on Saturday, seriously. Biscuit has already dug a hole in the new yard."),
    (A, "Happy to help. I'd pay money to see your landlord's face when he finds that hole."),
    (U, "Hopefully he never does. How's the pen test going so far this week?"),
    (A, "Redline started on Monday. They found one medium issue already: our reply webhook wasn't checking Twilio's request signature. I patched it the same day."),
    (U, "Good, that's quick. Have they found anything else so far, anything scary?"),
    (A, "Nothing yet; the final report is due Friday the 18th. On a sadder note, someone stole my bike from outside the office yesterday."),
    (U, "No way! Not the orange one you rebuilt last summer?"),
    (A, "That one. They cut straight through the lock. I've found a used Trek on Marketplace and I'm picking it up Thursday."),
    (U, "How much did the replacement cost you, if you don't mind me asking?"),
    (A, "Three hundred and twenty dollars, plus a new lock that weighs more than the front wheel."),
    (U, "Did Redline look at the consent data specifically, since it's sort of health-adjacent information?"),
    (A, "They did. Consent records are encrypted at rest and only the clinic's own staff can read them, which they were happy with."),
    (U, "Good. Okay, beta list: we ended up with fourteen clinics, not twelve. Tasha added two orthodontists in Milwaukee who begged to be included."),
    (A, "Fourteen is fine capacity-wise. Do the orthodontists have any unusual appointment types?"),
    (U, "Adjustment visits are only fifteen minutes long, so they churn through a lot of slots. Should be a decent stress test."),
    (A, "Then I need help on the reporting side. I'm handing the Metabase dashboard to Jonah from today; he'll own it through the beta."),
    (U, "Does Tasha know about the handover yet? She's attached to that thing."),
    (A, "I told her this morning. She's meeting Jonah on Thursday to go through what she wants to see."),
    (U, "Makes sense, you've got enough on your plate. Oh, and marketing changed their minds about the name."),
    (A, "Of course they did. What are we calling it this time?"),
    (U, "QuickFill. Apparently the old name tested badly with office managers, who assumed it was about patient portal notifications."),
    (A, "QuickFill is better anyway. I'll update the settings strings before the beta goes out."),
    (U, "Thanks. I'm also writing the beta feedback survey, five questions, going out after week two."),
    (A, "Could you add one about how long the front desk spends on the phone now? Then we can compare it with Gwen's number from January."),
    (U, "Great idea. I'll add it as question three, right after satisfaction."),

    # --- Session 8: Wednesday, April 30 --------------------------------------
    (U, "We're live! Two days into the beta and I've already had three happy emails from clinics. How does it look from your side?"),
    (A, "Clean so far. The first batch of offers went out at 8 am sharp on Monday, and the first slot was filled at Lakeside at 8:14."),
    (U, "Dr. Osei's clinic filled first? She's going to be unbearable about it."),
    (A, "Yep, a 10:30 hygiene cleaning. The patient replied YES in under two minutes."),
    (U, "Love it. Anything worrying in the logs that I should know about?"),
    (A, "Delivery failures are around 2%, mostly landlines that someone typed into the mobile field. I'm flagging those so clinics can fix the records."),
    (U, "Makes sense. How are the two orthodontists getting on with it?"),
    (A, "Busy. Bright Path Orthodontics in Milwaukee has sent 90 offers all by itself, more than half the total so far."),
    (U, "Wow. Any complaints from patients about getting too many texts?"),
    (A, "Two people replied STOP, which is fine. One replied \"who is this??\" and then booked the slot anyway."),
    (U, "Has any clinic asked to change its settings after the first couple of days?"),
    (A, "Pine Street asked us to exclude their first-visit assessments, same logic as Dr. Osei's new-patient exams."),
    (U, "Good, that's just a settings change on our side, right?"),
    (A, "Right, Jonah did it from the admin tool in two minutes while Gwen was still on the phone with support."),
    (U, "Nice. By the way, I'm off May 12 to 21 for my sister's wedding in Porto. Could you be the point person for the design partners?"),
    (A, "Of course, happy to. Is it Leila who's getting married?"),
    (U, "Yes, Leila, to a Portuguese guy she met in grad school. The ceremony is on the 17th at a vineyard up in the Douro valley."),
    (A, "Sounds amazing. Lisbon is a different vibe, but you'll love Portugal. Eat the bifanas, trust me."),
    (U, "Noted. Who should the partners contact in an emergency while I'm away?"),
    (A, "Me for anything technical, Tasha for anything about their accounts. I'll post that in the beta channel today."),
    (A, "Oh, and I've pencilled in a check-in call with Gwen at Pine Street for May 15, since you'll be gone. Thursday afternoons suit her best."),
    (U, "Perfect, thank you. Tell her the survey is coming and that we read every answer."),
    (U, "How's Pico, by the way? Ines posted a video of him chasing a laser pointer."),
    (A, "He's great, just enormous now. The vet says he's 5.2 kilos, which she called \"sturdy\" in a very diplomatic voice."),

    # --- Session 9: Friday, May 9 --------------------------------------------
    (U, "Okay, two weeks in. Hit me with the numbers before I present to Lorraine on Monday."),
    (A, "Through yesterday: 318 cancellations triggered offers and 201 slots got refilled, so a 63% fill rate. Median time to fill is seven minutes."),
    (A, "At $180 a slot that's roughly $36,180 of recovered chair time across the beta clinics, with the usual caveat about where the $180 comes from."),
    (U, "That's fantastic. Seven minutes, though. So most of the fifteen-minute window is wasted?"),
    (A, "Pretty much. Ninety percent of claims happen within nine minutes. I want to cut the hold window to ten minutes from Monday, so slots reach the next group faster."),
    (U, "Do it. Is there any downside I should be ready to explain?"),
    (A, "A few people at work might miss an offer, but the data says they rarely claim anyway. I'll watch the numbers closely for a week."),
    (U, "Okay. And last week's incident. Explain it to me in non-engineer words, because Lorraine will ask."),
    (A, "On May 2, two Lakeside patients replied YES in the same second and both got a confirmation. My lock didn't cover the step that sends the confirmation text."),
    (U, "Ugh. So what did we actually do about it on the day?"),
    (A, "Called the second patient and apologized, and Dr. Osei's team fit them in at 4 pm. I fixed the lock that afternoon and added a test with fifty parallel replies."),
    (U, "Good. For what it's worth, Dr. Osei was very gracious about the whole thing."),
    (A, "She really was. I sent her a thank-you card with a photo of Pico on it."),
    (U, "Has any clinic had the same slot refilled more than once yet?"),
    (A, "Yes, Bright Path had one 3:15 chair refilled three times last Thursday, cancellation after cancellation."),
    (U, "What did Redline's final report say in the end? I never saw the PDF."),
    (A, "One medium finding, the webhook signature we'd already fixed, and two lows about password rules in the admin tool. All closed by April 25."),
    (U, "And the go/no-go meeting, remind me, was that a clean yes?"),
    (A, "Clean yes from everyone, Hannah included. Priscilla's only condition was that I keep the kill switch within reach for the first week."),
    (U, "Ha. Different topic: pricing. Lorraine wants QuickFill sold as a paid add-on at $29 per location per month."),
    (A, "Seems reasonable next to those revenue numbers. Do the beta clinics get it free?"),
    (U, "Free for the first six months, then they pay. That was my promise when they signed up."),
    (A, "Fair. I'd put that in writing for them soon, before anyone's memory gets creative."),
    (U, "Tasha's sending a letter next week. Also, Lorraine wants general availability on June 23."),
    (A, "June 23 is doable if Spanish templates aren't a blocker. Support says plenty of clinics in Texas and Florida will want them."),
    (U, "Spanish is a must for GA. Who's doing the translation?"),
    (A, "Lucia Paredes from support volunteered. She's a native speaker and knows our terminology better than any agency would."),
    (U, "Amazing. Tell her I owe her lunch. Anything else before I go into the Lorraine meeting?"),
    (A, "One thing: the survey results should land in ten days or so, and I'd hold the recovered-revenue slide until we've validated the $180."),

    # --- Session 10: Tuesday, May 27 -----------------------------------------
    (U, "I'm back! Jet-lagged but happy. The wedding was gorgeous, and Leila cried through her own vows."),
    (A, "Welcome back! Please tell me there are photos of Biscuit in a tiny suit."),
    (U, "Sadly no, Biscuit stayed home with my neighbor Marguerite. So, what did I miss?"),
    (A, "Quite a bit. First, the shorter hold window is working: fill rate held at 62%, and median time to fill dropped to five minutes."),
    (U, "Great news. Did anything go wrong while I was on the other side of the ocean?"),
    (A, "One thing. Bright Path asked us to pause QuickFill on May 15 because they were short-staffed and couldn't handle extra bookings. We resumed it the next morning."),
    (U, "Interesting. Maybe clinics need their own pause button in the settings."),
    (A, "Jonah already built one last Thursday: a toggle with an automatic resume date, so nobody forgets to turn it back on."),
    (U, "How was Jonah as point person while I was gone? Honest answer."),
    (A, "Great. He handled the Bright Path pause call by himself and wrote it up before I'd even seen the ticket."),
    (U, "And how did your call with Gwen go in the end?"),
    (A, "Good. She says Pine Street refilled eleven slots in the first three weeks, and she's taken the clipboard down."),
    (U, "Love that. Lorraine pinged me over the weekend about pricing, too. She's dropped the add-on to $24 per location after sales pushed back."),
    (A, "Twenty-four, okay. What was the sales team's pushback on the first number?"),
    (U, "For single-chair clinics $29 was more than their base plan, which made for a weird conversation. At $24 it stays under."),
    (A, "Makes sense. And is general availability still on the date you had?"),
    (U, "No, GA slipped to July 7. Legal wants the consent log export finished before general availability, not after."),
    (A, "Jonah says the export will be ready by June 20, so July 7 has some slack. He's switching it from CSV to a signed PDF, which Hannah asked for."),
    (U, "Good. How about the Spanish templates, did Lucia get through them?"),
    (A, "She finished on May 22: eleven templates in total, covering every message we send."),
    (A, "And I had Pablo in sales, who's also a native speaker, review every one of them before they went into the system."),
    (U, "Great. Tasha says the survey results are in. Front desks report spending about fifteen minutes a day on waitlist calls now, down from around forty."),
    (A, "That's a much better story than any of my dashboards. Lead with it at the GA launch."),
    (U, "Will do. Oh, and I finally sent a V4 at the climbing gym on Saturday, after three weeks of falling off the same move."),
    (A, "Nice! Is that the purple one in the corner you kept complaining about?"),
    (U, "That's the one. The overhang with the horrible sloper at the top. My fingers still hurt."),
    (A, "Ines says the trick on slopers is keeping your hips close to the wall. Don't ask me, I just run in straight lines."),

    # --- Session 11: Tuesday, June 17 ----------------------------------------
    (U, "How are we doing on budget? Finance asked for a mid-year check before the end of the month."),
    (A, "We've spent $97,400 so far. SMS is only about $1,100 of that; most of it went on Marisol's contract and the Redline test."),
    (U, "The pen test came out of our budget? I assumed security paid for it."),
    (A, "Nope. Priscilla confirmed it came out of ours, $18,000 for the week of testing."),
    (U, "Ouch. Still fine, though. What's left on the engineering side before GA?"),
    (A, "Two things: per-clinic rate limiting, so one clinic can't send thousands of texts by mistake, and routing the Spanish templates by each patient's language preference."),
    (U, "What will the rate limit actually be? Sales will ask me."),
    (A, "Five hundred messages per clinic per day. Bright Path's busiest day so far was 187, so that leaves plenty of headroom."),
    (U, "Sounds sensible. Have you thought about the dashboard after GA? Tasha wants it for every clinic, not just the beta ones."),
    (A, "Jonah's rebuilding it on the data warehouse so it scales to all clinics. He estimates two weeks, starting right after GA."),
    (U, "Has Finance said anything about the second half's budget for QuickFill?"),
    (A, "They've pencilled in $90k for the second half, mostly SMS at GA volumes plus Jonah's time. Not approved yet."),
    (U, "Unrelated: did you get the new bike tuned up? You were complaining about the gears."),
    (A, "Yes, at the shop on Milwaukee Avenue. New chain and cassette, and it finally shifts without that horrible clunk."),
    (U, "Good. You're off next week for a few days, right?"),
    (A, "June 26 to 30. My dad turns sixty, so we're flying to San Antonio for a big family barbecue."),
    (U, "Sixty! That's a big one. Are you doing anything special for him?"),
    (A, "My brother and I restored his old 1978 Ford pickup as a surprise. It sat in a garage in Seguin for twelve years."),
    (U, "That's incredibly sweet, he's going to cry. Who's covering on-call while you're away?"),
    (A, "Jonah, with Priscilla as backup. The runbook's in the wiki, and I've walked him through the queue twice."),
    (U, "Perfect. Also, did you hear Priscilla is leaving at the end of July?"),
    (A, "I heard yesterday. She's joining a climate startup, and they haven't named her replacement yet."),
    (U, "We'll miss her. She fought for Tidewater back when nobody else believed in it."),
    (A, "She did. I'm organizing a goodbye dinner for her on July 24, somewhere with good dumplings. You in?"),
    (U, "Absolutely in. How's Ines feeling these days? You mentioned she'd been tired."),
    (A, "Better, thanks. And since you asked: we're expecting a baby in December. You're one of the first people at work to know."),
    (U, "Mateo! That's wonderful news, congratulations to you both. Pico is going to be so confused."),
    (A, "Thank you! Pico has already claimed the crib box as his new bed, so we'll see who wins."),

    # --- Session 12: Wednesday, July 9 ---------------------------------------
    (U, "GA, day three! 212 clinics turned QuickFill on in the first 48 hours, way beyond what sales predicted."),
    (A, "I saw. Peak load yesterday was 3,400 messages an hour, and the Postgres queue barely noticed."),
    (U, "I told Priscilla you'd say exactly that. Did anything break?"),
    (A, "Only the Spanish routing for patients with no language set: they got nothing instead of English. Fixed within an hour; 37 patients were affected."),
    (U, "Not bad for a launch. What's next for you after this?"),
    (A, "Priscilla's last decision before leaving was putting me on the insurance verification project from August. I'll stay on QuickFill part-time through July."),
    (U, "So who owns QuickFill engineering once you've moved over to that?"),
    (A, "Jonah takes over as engineering owner on August 1, with me as backup for the first month."),
    (U, "He's grown so much since February. Honestly, his pause toggle is the most-loved feature in the survey comments."),
    (A, "I'll tell him, he'll be thrilled. Did Lakeside say anything about GA?"),
    (U, "Dr. Osei wants to present QuickFill at the Minnesota Dental Association meeting in September, as a customer story."),
    (A, "That's great marketing we don't have to pay for. Loop in Tasha so the numbers she quotes are the validated ones."),
    (U, "What did the final beta numbers look like before GA, just for the record?"),
    (A, "Over ten weeks, 1,402 offers went out and 871 slots were refilled, which is 62% overall."),
    (U, "And did Dev's notify-me button pull its weight in the end?"),
    (A, "It did. A third of all waitlist sign-ups during the beta came through that button rather than the front desk."),
    (U, "Oh, before I forget: did you ever check that chair-hour figure sales kept quoting?"),
    (A, "I did, last week. Using our own billing data, the median production per dental chair-hour is $212, so the sales number was actually conservative."),
    (U, "Ha, for once sales undersold something. I'll update the GA deck tonight."),
    (A, "Also, the budget. With GA costs in, we'll finish the half-year at about $131,000, so roughly $19,000 goes back to Lorraine's pool."),
    (U, "She'll like hearing that. When is she back, by the way? I want the GA numbers in front of her first thing."),
    (A, "August 26, if the eight weeks hold. Ravi has been fine, for the record; only one approval took more than a week."),
    (U, "And what's the plan for the leftover SMS credit we bought?"),
    (A, "We prepaid $2,000 with Twilio in May; about $700 is left, and it rolls over to next quarter's usage."),
    (U, "Good. Okay, personal question now: have you two picked any baby names yet?"),
    (A, "Not officially. Ines likes Sofia, I like Luna, and Pico has no opinion beyond demanding breakfast at 5 am."),
    (U, "Both lovely. Biscuit and I are driving to Door County in August for a week at a dog-friendly cabin."),
    (A, "That sounds perfect. Send photos of him at the beach, especially if he tries to eat a seagull."),
    (U, "Knowing him, he'll try. Thanks for everything on this project, Mateo. It really was a team effort."),
    (A, "Thank you for fighting for the scope. Most PMs would have let ranking and three other features creep in."),
]

# ---------------------------------------------------------------------------
# Questions: (id, category, question, [exact substrings of evidence rows]).
# Categories: single, multi (2-3 rows), temporal (a date or time is the answer),
# update (a fact revised later; evidence is the revising row only),
# paraphrase (worded away from the evidence row), name (a person/place/thing name).
# ---------------------------------------------------------------------------
QUESTIONS: list[tuple[str, str, str, list[str]]] = [
    ("q1", "single", "What share of booked appointments ended as no-shows or late cancellations in December?", ["11.4% of booked appointments"]),
    ("q2", "paraphrase", "How many cancellations come in with less than a day's notice?", ["62% arrive less than 24 hours"]),
    ("q3", "name", "What is the internal codename for the waitlist backfill project?", ["Internally we're calling it Tidewater"]),
    ("q4", "multi", "Who is working on Tidewater, and in what roles?", ["Dev Anand on design, you on backend and data", "Jonah Pike started yesterday", "Marisol Vega. She did the booking page redesign"]),
    ("q5", "single", "What value does the sales team put on an empty dental chair-hour?", ["Sales keeps quoting an empty dental chair-hour"]),
    ("q6", "update", "What is the Tidewater budget?", ["Lorraine raised our budget to $150k"]),
    ("q7", "paraphrase", "How long did Mateo reckon building a bare-bones first version would take?", ["six engineer-weeks for an MVP"]),
    ("q8", "single", "When a slot opens, are waitlisted patients ranked by how long they've waited?", ["For the MVP, yes, first reply wins."]),
    ("q9", "single", "How many patients get texted at once when an appointment frees up?", ["Three at a time. If nobody claims it", "how many people would we text at once?"]),
    ("q10", "single", "How long was the hold window when Tidewater was first designed?", ["Fifteen minutes to start.", "And how long would that hold window be"]),
    ("q11", "update", "How long do patients have to claim an offered slot now?", ["I want to cut the hold window to ten minutes"]),
    ("q12", "single", "What is the messaging queue built on, and does it need Kafka?", ["No Kafka. I'll use a plain Postgres job queue"]),
    ("q13", "paraphrase", "During what hours are patients allowed to get offers, and whose clock decides?", ["no texts before 8 am or after 8 pm"]),
    ("q14", "multi", "What breed is Noor's dog, and how old is he?", ["Give the little beagle a scratch", "He turned four in December"]),
    ("q15", "name", "Which dentist runs Lakeside Dental, and where is it?", ["Dr. Amara Osei runs four chairs there"]),
    ("q16", "paraphrase", "How much of her day does the physio office manager lose ringing people on the waitlist?", ["she spends about forty minutes a day phoning people"]),
    ("q17", "single", "What share of clinics use the built-in waitlist?", ["only 23% of clinics use our built-in waitlist"]),
    ("q18", "paraphrase", "What does the physio clinic use to keep track of its waitlist today?", ["a clipboard taped next to the phone"]),
    ("q19", "single", "Why shouldn't new-patient exams be offered through the waitlist?", ["The paperwork. New patients fill in intake forms"]),
    ("q20", "single", "Which SMS provider did Mateo choose, and what does it charge per segment?", ["Twilio came in at $0.0079 per message segment"]),
    ("q21", "temporal", "When is Mateo's half marathon, and what time is he aiming for?", ["the Lakefront Half on March 16"]),
    ("q22", "name", "What is Mateo's cat called, and where did it come from?", ["a grey rescue called Pico"]),
    ("q23", "name", "Who is the lawyer Noor met about the texting rules?", ["I'm meeting Hannah Brooks on Thursday"]),
    ("q24", "single", "Can the consent checkbox be ticked by default?", ["so a pre-ticked checkbox is out"]),
    ("q25", "update", "What is the final wording of the consent checkbox, and why was it changed?", ["She changed it to \"Text me if an earlier time opens up\""]),
    ("q26", "single", "What does Mateo keep with each patient record so consent can be proven?", ["I'll store the consent timestamp and the version of the wording"]),
    ("q27", "paraphrase", "What was the new hire doing before he became a developer?", ["he did a year of support at a pharmacy chain"]),
    ("q28", "name", "Who is the UI contractor, and what did she work on before?", ["Marisol Vega. She did the booking page redesign"]),
    ("q29", "paraphrase", "What did the extra money from Lorraine buy the team?", ["keep the UI contractor through May"]),
    ("q30", "temporal", "What date is the team offsite?", ["I've booked the team offsite for March 20"]),
    ("q31", "update", "Where is the team offsite being held?", ["so I've moved us to Foundry Hall in the West Loop"]),
    ("q32", "update", "How much does the offsite venue cost for the day?", ["Slightly cheaper, actually, $2,150"]),
    ("q33", "single", "Which room did Noor pick for the offsite, and why?", ["The blue one, definitely.", "I'm holding both for now: the blue room upstairs"]),
    ("q34", "paraphrase", "Why did Noor's dog need an operation in February?", ["He ate a sock on Saturday and needed surgery."]),
    ("q35", "paraphrase", "Why did Mateo want the patient text made shorter?", ["I'd shorten it to fit one 160-character segment"]),
    ("q36", "name", "What customer-facing name did marketing suggest first?", ["Their first pick is Open Slot Alerts."]),
    ("q37", "update", "What is the feature called for customers?", ["QuickFill. Apparently the old name tested badly"]),
    ("q38", "single", "How many Brightwell clinics are in Arizona?", ["Sixty-three, all on Mountain Standard Time", "How many clinics do we have there?"]),
    ("q39", "paraphrase", "Why were clinics in one southwestern state a headache for the prototype?", ["clinics in Arizona, which don't observe daylight saving"]),
    ("q40", "update", "Who owns the Metabase fill-rate dashboard?", ["I'm handing the Metabase dashboard to Jonah"]),
    ("q41", "single", "How often did the physio clinic's phone calls to waitlisted patients actually fill the slot?", ["Maybe one call in four, she guessed."]),
    ("q42", "temporal", "When does Lorraine's sabbatical start, and who covers for her?", ["Eight weeks starting July 1."]),
    ("q43", "name", "Which firm ran the penetration test, and on what dates?", ["penetration test with Redline Security for April 7 to 11"]),
    ("q44", "update", "When does the beta start?", ["The beta now starts Monday, April 28."]),
    ("q45", "paraphrase", "What could go wrong if two patients accept the same offer at the same moment?", ["If two people reply YES within the same second"]),
    ("q46", "multi", "When and where is Noor moving?", ["I'm moving apartments on April 5", "Logan Square, a one-bedroom with a tiny yard"]),
    ("q47", "single", "What was Mateo's half marathon finishing time?", ["1:53:40!", "did you make your time on Sunday?"]),
    ("q48", "single", "What did the team decide at the offsite about patients joining the waitlist themselves?", ["Patients can add themselves to the waitlist from the booking page"]),
    ("q49", "update", "How many clinics are in the beta?", ["we ended up with fourteen clinics, not twelve"]),
    ("q50", "temporal", "When was the beta go/no-go review scheduled?", ["The Thursday before launch, April 24."]),
    ("q51", "paraphrase", "Does using the waitlist seem to keep clinics from leaving Brightwell?", ["Clinics that actively use the waitlist churned 3.1% last year"]),
    ("q52", "paraphrase", "What did Dev learn from talking to patients about answering offer texts?", ["Five of the six patients said they'd answer within ten minutes"]),
    ("q53", "multi", "What did Redline's penetration test find overall?", ["our reply webhook wasn't checking Twilio's request signature", "two lows about password rules in the admin tool"]),
    ("q54", "multi", "What happened to Mateo's bike, and what colour was it?", ["someone stole my bike from outside the office", "Not the orange one you rebuilt last summer?", "That one. They cut straight through the lock."]),
    ("q55", "paraphrase", "Why should the orthodontists make a good stress test for the beta?", ["Adjustment visits are only fifteen minutes long"]),
    ("q56", "temporal", "At what time was the first slot filled on launch day, and at which clinic?", ["the first slot was filled at Lakeside at 8:14"]),
    ("q57", "paraphrase", "Why were some of the texts bouncing in the first days of the beta?", ["mostly landlines that someone typed into the mobile field"]),
    ("q58", "name", "Which clinic sent the most offers in the first days of the beta?", ["Bright Path Orthodontics in Milwaukee has sent 90 offers"]),
    ("q59", "multi", "When and where is Noor's sister's wedding?", ["I'm off May 12 to 21 for my sister's wedding in Porto", "The ceremony is on the 17th at a vineyard"]),
    ("q60", "single", "Where in the beta survey did Noor put the question about phone time?", ["I'll add it as question three", "Could you add one about how long the front desk spends on the phone now?"]),
    ("q61", "multi", "What were the beta's fill rate and estimated recovered revenue after two weeks?", ["318 cancellations triggered offers", "roughly $36,180 of recovered chair time"]),
    ("q62", "temporal", "When did the double booking happen, and what caused it?", ["On May 2, two Lakeside patients replied YES"]),
    ("q63", "paraphrase", "How was the patient who got bumped by the double booking looked after?", ["Called the second patient and apologized"]),
    ("q64", "single", "What price did Lorraine first propose for QuickFill?", ["paid add-on at $29 per location per month"]),
    ("q65", "update", "How much will QuickFill cost per location?", ["She's dropped the add-on to $24 per location"]),
    ("q66", "paraphrase", "Why did sales object to the original add-on price?", ["For single-chair clinics $29 was more than their base plan"]),
    ("q67", "update", "When is general availability?", ["No, GA slipped to July 7."]),
    ("q68", "name", "Who volunteered to translate the Spanish templates?", ["Lucia Paredes from support volunteered"]),
    ("q69", "multi", "How many Spanish templates are there, and who checked them?", ["She finished on May 22: eleven templates in total", "And I had Pablo in sales"]),
    ("q70", "update", "What format will the consent log export use?", ["switching it from CSV to a signed PDF"]),
    ("q71", "paraphrase", "Why did one orthodontics practice switch QuickFill off for a day in May?", ["Bright Path asked us to pause QuickFill on May 15"]),
    ("q72", "multi", "How has the median time to fill a slot changed during the beta?", ["Median time to fill is seven minutes.", "median time to fill dropped to five minutes"]),
    ("q73", "single", "How much time do front desks spend on waitlist calls since QuickFill, according to the survey?", ["about fifteen minutes a day on waitlist calls now"]),
    ("q74", "single", "How many slots did Pine Street refill in its first three weeks, and what happened to the clipboard?", ["Pine Street refilled eleven slots in the first three weeks"]),
    ("q75", "multi", "How much of the budget had been spent by mid-June, and out of how much?", ["We've spent $97,400 so far.", "Lorraine raised our budget to $150k"]),
    ("q76", "single", "Where are Noor and Biscuit going on holiday in August?", ["driving to Door County in August"]),
    ("q77", "single", "What is the per-clinic daily message limit?", ["Five hundred messages per clinic per day.", "What will the rate limit actually be?"]),
    ("q78", "temporal", "When is Mateo away in June, and why?", ["June 26 to 30. My dad turns sixty"]),
    ("q79", "name", "Who looked after Noor's dog while she was in Portugal?", ["Biscuit stayed home with my neighbor Marguerite"]),
    ("q80", "temporal", "When is Mateo and Ines's baby due?", ["we're expecting a baby in December"]),
    ("q81", "single", "How many clinics turned on QuickFill in the first two days of general availability?", ["212 clinics turned QuickFill on"]),
    ("q82", "paraphrase", "What launch bug left some patients without any message, and how many?", ["they got nothing instead of English"]),
    ("q83", "update", "Who will own QuickFill engineering from August?", ["Jonah takes over as engineering owner on August 1"]),
    ("q84", "single", "What were the beta's final totals before general availability?", ["1,402 offers went out and 871 slots were refilled"]),
    ("q85", "update", "What is a dental chair-hour actually worth, based on Brightwell's own billing data?", ["the median production per dental chair-hour is $212"]),
    ("q86", "single", "How much of the budget will have been spent by the end of the half-year?", ["we'll finish the half-year at about $131,000"]),
    ("q87", "name", "Where is Dr. Osei going to present QuickFill?", ["Minnesota Dental Association meeting in September"]),
    ("q88", "name", "Which baby names are Mateo and Ines considering?", ["Ines likes Sofia, I like Luna"]),
    ("q89", "multi", "Which clinics took part as early partners, and who is the contact at each?", ["Dr. Amara Osei runs four chairs there", "At Pine Street Physio in Madison, Gwen Farrell", "Bright Path Orthodontics in Milwaukee has sent 90 offers"]),
]

MIN_WORDS, MAX_WORDS = 10, 45


def write_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def build_conversation() -> list[dict]:
    rows = []
    for i, (role, text) in enumerate(CONVERSATION, start=1):
        assert role in (U, A), f"row {i}: bad role {role!r}"
        words = len(text.split())
        assert MIN_WORDS <= words <= MAX_WORDS, f"row r{i} has {words} words: {text[:60]!r}"
        rows.append({"id": f"r{i}", "role": role, "text": text})
    texts = [r["text"] for r in rows]
    assert len(set(texts)) == len(texts), "duplicate row text"
    return rows


def resolve(rows: list[dict], qid: str, needle: str) -> str:
    hits = [r["id"] for r in rows if needle in r["text"]]
    assert len(hits) == 1, f"{qid}: evidence {needle!r} occurs in {len(hits)} rows {hits}"
    return hits[0]


def build_questions(rows: list[dict]) -> list[dict]:
    out = []
    for qid, category, question, needles in QUESTIONS:
        assert category in {"single", "multi", "temporal", "update", "paraphrase", "name"}, qid
        evidence = [resolve(rows, qid, n) for n in needles]
        assert len(set(evidence)) == len(evidence), f"{qid}: two needles resolve to the same row"
        if category == "multi":
            assert 2 <= len(evidence) <= 3, qid
        evidence.sort(key=lambda rid: int(rid[1:]))
        out.append({"id": qid, "question": question, "evidence": evidence, "category": category})
    assert len({q["id"] for q in out}) == len(out)
    return out


def main() -> None:
    rows = build_conversation()
    questions = build_questions(rows)
    write_jsonl(HERE / "conversation.jsonl", rows)
    write_jsonl(HERE / "questions.jsonl", questions)

    role_of = {r["id"]: r["role"] for r in rows}
    roles = Counter(r["role"] for r in rows)
    doubles = sum(1 for a, b in zip(rows, rows[1:]) if a["role"] == b["role"])
    words = [len(r["text"].split()) for r in rows]
    cats = Counter(q["category"] for q in questions)
    any_assistant = sum(1 for q in questions if any(role_of[e] == A for e in q["evidence"]))
    answer_by_assistant = sum(1 for q in questions if role_of[q["evidence"][-1]] == A)
    print(f"conversation: {len(rows)} rows ({roles[U]} user, {roles[A]} assistant), "
          f"{doubles} same-role neighbours, words per row {min(words)}-{max(words)}, "
          f"mean {sum(words) / len(words):.1f}")
    print(f"questions: {len(questions)} {dict(sorted(cats.items()))}")
    print(f"questions with an assistant evidence row: {any_assistant}; "
          f"answer row (last evidence) said by the assistant: {answer_by_assistant}")
    print(f"multi-row evidence: {sum(len(q['evidence']) > 1 for q in questions)}")


if __name__ == "__main__":
    main()
