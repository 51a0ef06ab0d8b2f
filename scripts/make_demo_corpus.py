"""Write the demo's search corpus and relevance judgments (issue 34, SPEC §8): for each demo
domain, termgate/demo_data/DOMAIN/corpus.jsonl (id, title, text) and qrels.txt (TREC qrels).

Synthetic demo data, not real documents: every id starts `demo-` and every title ends
"(demo)". Deterministic (seeded, stdlib only): running it again writes the same bytes
(tests/test_demo.py checks). Usage: python scripts/make_demo_corpus.py [OUT_DIR]

For each golden query (golden.jsonl) it writes relevant documents that use the query's
words and its expected terms, graded 3 (on the topic, most of its names), 2 (some names) and
1 (one name, in passing), and about a third of them never use the query's own words, as
real documents often do not (what expansion is for); judged non-relevant documents (grade 0)
that use the query's forbidden terms and other senses of its words, some of them the
candidates' drift terms ("panic attack" for "heart attack", "free will" for "will"); and
background documents of the domain.

One change is built to look better on term metrics and worse on search: e-commerce v3 adds
the golden term "wearable" to "smartwatch" (ecom-045), and the catalogue holds many
wearable things that are not watches (blankets, breast pumps, neck fans), which flood the
top ten.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 34
DEMO = Path(__file__).resolve().parent.parent / "termgate" / "demo_data"
PREFIX = {"medical": "med", "legal": "leg", "ecommerce": "ecom"}
BACKGROUND = 1900  # background documents per domain: a few thousand documents in all

# ------------------------------------------------------------------ the domains' wording

RELEVANT = {
    "medical": {
        "titles": ["{Q}: symptoms, diagnosis and treatment", "{P} explained for patients",
                   "Clinic guide to {P}", "{P}: when to see a doctor"],
        "lines": ["{t} is the name clinicians use for this problem.", "The leaflet explains how {t} is diagnosed.",
                  "Treatment of {t} depends on the cause and on how severe it is.",
                  "Ask your doctor whether {t} could explain the symptoms.",
                  "Nurses see {t} often in primary care.", "Follow-up for {t} is usually within a few weeks."],
        "passing": [("Clinic notes for the month", "The clinic's notes list {t} among the problems seen this month."),
                    ("Case reports from the ward", "A short case report mentions {t} in a patient with several other "
                                                   "conditions.")],
    },
    "legal": {
        "titles": ["{Q}: what the law says", "A practical guide to {P}", "{P}: your rights and options",
                   "Understanding {P}"],
        "lines": ["{t} is the term courts and lawyers use here.", "This guide explains how {t} works in practice.",
                  "The rules on {t} differ between jurisdictions.",
                  "Keep copies of every document that concerns {t}.",
                  "A solicitor can tell you whether {t} applies to your case.",
                  "Deadlines matter: act early on {t}."],
        "passing": [("The firm's newsletter", "A firm's newsletter touches on {t} among other recent cases."),
                    ("Court statistics for the year", "The court's annual statistics include {t} in a long table.")],
    },
    "ecommerce": {
        "titles": ["{Q} - shop the range", "Best {P} of the season", "{P}: buying guide", "New in: {P}"],
        "lines": ["Our {t} range ships free on orders over 50.", "Compare sizes and colours of every {t}.",
                  "Customers rate this {t} four stars and above.", "Each {t} comes with a two-year warranty.",
                  "Read the reviews before you pick a {t}.", "Returns on any {t} are free for 30 days."],
        "passing": [("This week's deals", "The weekly deals include a {t} among many other items."),
                    ("Gift ideas for everyone", "Gift ideas: a {t}, a candle or a voucher.")],
    },
}

# Other senses of a query's words, judged not relevant (grade 0): (title, text).
OTHER_SENSES = {
    "med-001": [("Panic attack: sudden fear and a racing heart",
                 "A panic attack is an anxiety attack, not a heart attack: "
                 "sudden fear, a racing heart and trembling that pass within minutes.")],
    "med-002": [("Heat stroke in hot weather",
                 "Heat stroke and sunstroke follow hours in the sun; cool the person down."),
                ("Swimming: improve your breast stroke", "Coaching notes on the breast stroke and stroke rate.")],
    "med-019": [("Syncope after standing up", "Syncope is a brief faint from low blood flow, not a seizure.")],
    "med-038": [("Golfer's elbow", "Golfer's elbow (medial epicondylitis) hurts on the inner side of the elbow."),
                ("Choosing a tennis racket", "Racket head size, grip and string tension for club players.")],
    "leg-010": [("Moral responsibility in criminal law", "Criminal law assumes that people choose their acts. "
                 "Philosophers ask whether free will is compatible with punishment, and courts rarely engage with "
                 "the question; they look at intent, recklessness and capacity instead.")],
    "leg-014": [("Bailment of goods",
                 "A bailment arises when goods are left with another, such as a coat at a cloakroom.")],
    "leg-040": [("Search warrant basics", "A search warrant lets police search a place, not arrest a person.")],
    "ecom-008": [("Underpants multipack", "Cotton underpants in a pack of five.")],
    "ecom-009": [("Jumper cables for cars", "Heavy-duty jumper cables to start a flat car battery.")],
    "ecom-031": [("Blowtorch for plumbing", "A propane blowtorch for soldering copper pipe.")],
    "ecom-044": [("Seat covers for the car", "Waterproof seat covers that fit most car seats front and back.")],
}

# The demo's one change with better terms and worse search (ecom-045, "wearable"): its
# partly relevant documents name a watch once, in passing, and the catalogue's many other
# wearable things name "wearable" in the title and the text.
FLOOD = ("ecom-045", [
    "wearable blanket with sleeves", "wearable breast pump", "wearable neck fan", "wearable sleeping bag for babies",
    "wearable neck speaker", "wearable heated shawl", "wearable baby carrier wrap", "wearable cooling towel",
    "wearable book light", "wearable posture corrector", "wearable hand warmer", "wearable desk fan",
    "wearable hoodie blanket", "wearable heated socks", "wearable travel pillow", "wearable mosquito repellent band",
])
FLOOD_RELEVANT = [
    ("Running gadgets roundup", "Our testers ran 100 km with a GPS fitness tracker on the wrist: battery life, "
                                "heart-rate accuracy and the strap all count."),
    ("Gadgets for the gym", "A slim smart watch that counts reps, logs workouts and shows your messages."),
    ("What to buy a teenager", "Top of the list this year: a smartwatch with calls, maps and a school mode."),
    ("Tech for swimmers", "Pool lengths, stroke rate and rest times, all on an Apple Watch."),
]
FLOOD_LINES = ["This wearable {x} keeps your hands free.", "A wearable design you can put on in seconds.",
               "Wearable and washable, in three sizes."]

# Background: topics of each domain that no golden query asks for.
TOPICS = {
    "medical": ["asthma in children", "iron deficiency anaemia", "osteoporosis", "migraine", "psoriasis", "acne",
                "measles vaccination", "travel vaccines", "cholesterol tests", "sleep apnoea", "insomnia",
                "back pain at work", "plantar fasciitis", "carpal tunnel syndrome", "glaucoma", "cataract surgery",
                "hearing aids", "head lice", "chickenpox", "tetanus boosters", "lyme disease", "coeliac disease",
                "irritable bowel syndrome", "haemorrhoids", "varicella vaccine", "prostate checks", "breast screening",
                "bowel cancer screening", "smoking cessation", "alcohol and liver health", "healthy weight",
                "vitamin D", "pregnancy nutrition", "newborn jaundice", "teething", "dementia care",
                "parkinson's disease",
                "multiple sclerosis", "rheumatoid arthritis", "osteoarthritis of the hand", "fibromyalgia",
                "chronic fatigue", "depression", "generalised anxiety", "burns first aid", "sprained ankle",
                "wound dressings", "blood donation", "hand hygiene", "antibiotic resistance"],
    "legal": ["company formation", "shareholder agreements", "partnership disputes", "tax appeals", "VAT registration",
              "planning permission", "boundary disputes", "easements", "conveyancing", "leasehold extension",
              "consumer refunds", "faulty goods", "parking fines", "speeding tickets", "licensing hearings",
              "charity law", "data breach notification", "cookie consent", "freedom of information requests",
              "judicial review", "mediation", "arbitration clauses", "legal aid", "court fees", "notarisation",
              "apostille", "name change by deed poll", "adoption", "surrogacy agreements", "pet custody",
              "noise nuisance", "neighbour disputes", "tree preservation orders", "construction contracts",
              "retention of title", "debt collection letters", "credit reports", "identity theft", "online scams",
              "gift aid", "inheritance tax", "trusts for children", "pensions on divorce", "school admissions appeals",
              "disability access", "jury verdicts in history", "court reporting", "legal translation",
              "witness expenses", "barristers' chambers"],
    "ecommerce": ["garden hose", "lawn mower", "paint rollers", "cordless drill", "tool box", "desk lamp",
                  "office chair", "standing desk", "bookshelf", "picture frames", "scented candles", "bath towels",
                  "shower curtain", "bath mat", "kettle", "toaster", "blender", "stand mixer", "air fryer",
                  "dinner plates", "wine rack", "ice cube trays", "water bottle", "lunch box", "board games",
                  "jigsaw puzzle", "building blocks", "dolls house", "art supplies", "sketchbook", "guitar strings",
                  "yoga mat", "dumbbells", "tent", "sleeping mat", "camping stove", "fishing rod", "dog bed",
                  "cat litter", "bird feeder", "printer ink", "usb cable", "keyboard", "computer mouse", "monitor",
                  "webcam", "wall clock", "alarm clock", "umbrella", "socks"],
}
ASPECTS = {
    "medical": ["what to expect", "questions to ask", "advice for carers", "latest guidance", "self-care at home",
                "tests and results", "living with it", "a nurse's notes", "myths and facts", "for parents",
                "in older adults", "a GP's view"],
    "legal": ["a short guide", "common mistakes", "forms and fees", "recent changes", "questions and answers",
              "a checklist", "what it costs", "a case study", "for small businesses", "time limits",
              "your first meeting", "after the hearing"],
    "ecommerce": ["deals this week", "buying guide", "best sellers", "customer favourites", "new arrivals",
                  "gift ideas", "clearance", "top rated", "under 20", "eco range", "bundle offers", "staff picks"],
}
OPENINGS = {
    "medical": ["What patients ask most about {topic}.", "Updated advice on {topic} from the clinic team.",
                "{Topic} affects people of every age.", "A plain-language summary of {topic}."],
    "legal": ["What clients ask most about {topic}.", "Our team's notes on {topic}.",
              "Disputes about {topic} are common.", "A plain-language summary of {topic}."],
    "ecommerce": ["Shop {topic} from trusted brands.", "Our {topic} picks, tested at home.",
                  "{Topic} for every budget.", "Everything you need: {topic} and more."],
}
FILLER = {
    "medical": ["Most people recover with simple measures.", "Bring a list of your medicines to the appointment.",
                "Call the emergency number if symptoms are sudden or severe.",
                "Results usually come back within a week.", "Children and older adults may need closer follow-up.",
                "A pharmacist can advise on over-the-counter options."],
    "legal": ["This is general information, not legal advice.", "Time limits can be short, so act promptly.",
              "Keep a written record of every conversation.", "Fees vary; ask for an estimate in writing.",
              "Some cases settle before a hearing.", "The court's website has the current forms."],
    "ecommerce": ["Free delivery on orders over 50.", "Order by 2pm for next-day dispatch.",
                  "Rated 4.6 by 1,200 shoppers.", "Available in several colours.", "Easy returns within 30 days.",
                  "Members earn points on every order."],
}


# ------------------------------------------------------------------ the documents


def _title(text: str) -> str:
    return text[:1].upper() + text[1:]


def _doc(title: str, text: str) -> dict:
    return {"title": f"{title} (demo)", "text": text}


def _relevant(rng: random.Random, domain: str, query: str, terms: list[str], grade: int, with_query: bool) -> dict:
    """One relevant document of `grade`: 3 names most of the terms, 2 some, 1 one in passing."""
    words, filler = RELEVANT[domain], FILLER[domain]
    if grade == 1:
        title, line = rng.choice(words["passing"])
        around = rng.sample(filler, 5)  # a long page: the name counts for little
        return _doc(title, " ".join([*around[:2], line.format(t=rng.choice(terms)), *around[2:]]))
    if grade == 3:
        named = terms[:1] + rng.sample(terms[1:], min(len(terms) - 1, 3))
    else:
        named = rng.sample(terms, min(len(terms), 2))
    lead = query if with_query else named[0]
    title = rng.choice(words["titles"]).format(Q=_title(lead), P=lead)
    lines = [_title(rng.choice(words["lines"]).format(t=t)) for t in named]
    if with_query:
        lines.insert(0, f"Searching for {query}? Start here.")
    return _doc(title, " ".join([*lines, *rng.sample(filler, 2)]))


def _query_docs(rng: random.Random, domain: str, entry: dict) -> list[tuple[dict, int]]:
    """The judged documents of one golden query, each with its grade."""
    query, qid = entry["query"], entry["query_id"]
    terms = [e["term"] for e in entry["expected_expansions"]]
    out = []
    for i, grade in enumerate((3, 3, 3, 2, 2, 2, 2, 1, 1, 1)):
        out.append((_relevant(rng, domain, query, terms, grade, with_query=i % 3 != 2), grade))
    if qid == FLOOD[0]:
        out[3:7] = [(_doc(title, " ".join([text, *rng.sample(FILLER[domain], 5)])), 2)
                    for title, text in FLOOD_RELEVANT]
    for term in entry.get("forbidden_terms", []):
        out.append((_doc(_title(term), f"{_title(term)} is a different topic. {rng.choice(FILLER[domain])}"), 0))
    out += [(_doc(title, text), 0) for title, text in OTHER_SENSES.get(qid, [])]
    if qid == FLOOD[0]:
        out += [(_doc(_title(x), " ".join(line.format(x=x.removeprefix("wearable ")) for line in FLOOD_LINES)), 0)
                for x in FLOOD[1]]
    return out


def _background(rng: random.Random, domain: str) -> list[dict]:
    """Documents on the domain's other topics, which no golden query asks for."""
    docs = []
    for n in range(BACKGROUND):
        topic = TOPICS[domain][n % len(TOPICS[domain])]
        aspect = ASPECTS[domain][(n // len(TOPICS[domain])) % len(ASPECTS[domain])]
        opening = rng.choice(OPENINGS[domain]).format(topic=topic, Topic=_title(topic))
        text = " ".join([opening, *rng.sample(FILLER[domain], 3)])
        docs.append(_doc(f"{_title(topic)}: {aspect}", text))
    return docs


def _related(golden: list[dict], made: list[tuple[str, dict, int]]) -> list[tuple[str, int, int]]:
    """Where a query's expected term is another query's text ("probate" for "will"), the
    other query's documents of grade 2 and 3 are partly relevant (grade 1) to it."""
    by_text = {entry["query"].casefold(): entry["query_id"] for entry in golden}
    out = []
    for entry in golden:
        for term in entry["expected_expansions"]:
            other = by_text.get(term["term"].casefold())
            out += [(entry["query_id"], i, 1) for i, (qid, _, grade) in enumerate(made) if qid == other and grade >= 2]
    return out


def build(domain: str, golden: list[dict]) -> tuple[list[dict], list[tuple[str, str, int]]]:
    """The domain's corpus (documents in id order) and its judgments (query, doc, grade)."""
    rng = random.Random(f"{SEED}-{domain}")
    made = [(entry["query_id"], doc, grade) for entry in golden for doc, grade in _query_docs(rng, domain, entry)]
    docs = [doc for _, doc, _ in made] + _background(rng, domain)
    judged = [(qid, i, grade) for i, (qid, _, grade) in enumerate(made)] + _related(golden, made)
    order = list(range(len(docs)))
    rng.shuffle(order)  # ids say nothing about a document's query or grade
    ids = {index: f"demo-{PREFIX[domain]}-{position:04d}" for position, index in enumerate(order, start=1)}
    corpus = [{"id": ids[i], **docs[i]} for i in order]
    qrels = sorted((qid, ids[i], grade) for qid, i, grade in judged)
    return corpus, qrels


def write(out_dir: Path) -> None:
    for domain in PREFIX:
        golden = [json.loads(line) for line in (DEMO / domain / "golden.jsonl").read_text(encoding="utf-8").splitlines()
                  if line.strip()]
        corpus, qrels = build(domain, golden)
        folder = out_dir / domain
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for doc in corpus:
                f.write(json.dumps(doc, ensure_ascii=False) + "\n")
        with open(folder / "qrels.txt", "w", encoding="utf-8", newline="\n") as f:
            for qid, doc, grade in qrels:
                f.write(f"{qid} 0 {doc} {grade}\n")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else DEMO)
