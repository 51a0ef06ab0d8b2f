"""Record real replies of a local model to query-expansion prompts, for the labelled set in
tests/data/real_replies/ (issue 35; how they were labelled: tests/data/real_replies/README.md).

It talks to the server with the bare `openai` client, not with termgate, so the recording
does not depend on the reading it is there to test. Each prompt style is asked for every
query at temperature 0 (one answer per request: the server is deterministic there), plus a
few styles at temperature 0.8 with a fixed seed for shapes temperature 0 never gives.

The rows are split before any is recorded, by a fixed shuffle of their ids (`split_ids`,
written to split.json): 125 go to heldout.jsonl, the rest to tuning.jsonl. The script
prints counts only, never a reply.

    python scripts/record_replies.py --base-url http://127.0.0.1:8000/v1 [--base-url ...] --out tests/data/real_replies
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from pathlib import Path

QUERIES = [
    ("heart attack", "medical", "symptom lookup"), ("high blood pressure", "medical", "condition"),
    ("flu shot", "medical", "treatment"), ("broken arm", "medical", "injury"),
    ("diabetes medication", "medical", "treatment"), ("migraine", "medical", "symptom lookup"),
    ("knee replacement", "medical", "procedure"), ("covid-19 vaccine", "medical", "treatment"),
    ("skin rash", "medical", "symptom lookup"), ("pregnancy test", "medical", "diagnosis"),
    ("divorce", "legal", "family law"), ("wrongful termination", "legal", "employment"),
    ("tenant eviction", "legal", "housing"), ("last will", "legal", "estate planning"),
    ("speeding ticket", "legal", "traffic"), ("copyright infringement", "legal", "intellectual property"),
    ("power of attorney", "legal", "estate planning"), ("breach of contract", "legal", "contracts"),
    ("child custody", "legal", "family law"), ("personal injury lawyer", "legal", "find a lawyer"),
    ("cell phone", "ecommerce", "product search"), ("running shoes", "ecommerce", "product search"),
    ("laptop bag", "ecommerce", "product search"), ("sofa", "ecommerce", "furniture"),
    ("wireless headphones", "ecommerce", "electronics"), ("winter jacket", "ecommerce", "clothing"),
    ("coffee maker", "ecommerce", "kitchen"), ("baby stroller", "ecommerce", "baby"),
    ("mortgage rates", "finance", "loans"), ("retirement savings", "finance", "investing"),
    ("credit card fraud", "finance", "banking"), ("stock market crash", "finance", "news"),
    ("cheap flights", "travel", "booking"), ("hotel near airport", "travel", "booking"),
    ("python tutorial", "software", "learning"), ("password reset", "software", "support"),
    ("car insurance", "insurance", "quotes"), ("used cars", "automotive", "buying"),
    ("climate change", "science", "research"), ("vegan recipes", "food", "cooking"),
]

PROMPTS = {
    "plain": "List synonyms and related search terms for the query: {query}",
    "comma": "Expand the search query \"{query}\" with synonyms. Reply with a comma-separated list.",
    "lines": "Give 5 alternative search terms for \"{query}\" in the {domain} domain. Write one term per line.",
    "assistant": "You are a search assistant for a {domain} search engine. Suggest query expansions for: {query}",
    "json": "Return a JSON array of synonyms for: {query}",
    "bullets": "What are other ways to say \"{query}\"? Use a bulleted list.",
    "fields": "Query: {query}\nDomain: {domain}\nIntent: {intent}\nExpansion terms:",
    "explain": "Which words mean the same as \"{query}\"? Explain each one.",
}
FRESH_QUERIES = [
    ("kidney stones", "medical", "condition"), ("sore throat", "medical", "symptom lookup"),
    ("asthma inhaler", "medical", "treatment"), ("back pain", "medical", "symptom lookup"),
    ("small claims court", "legal", "procedure"), ("trademark registration", "legal", "intellectual property"),
    ("security deposit dispute", "legal", "housing"), ("DUI charge", "legal", "traffic"),
    ("gaming chair", "ecommerce", "furniture"), ("electric toothbrush", "ecommerce", "personal care"),
    ("yoga mat", "ecommerce", "sports"), ("smart watch", "ecommerce", "electronics"),
    ("home loan refinancing", "finance", "loans"), ("train tickets", "travel", "booking"),
    ("wifi not working", "software", "support"), ("pet insurance", "insurance", "quotes"),
]
"""The fresh held-out set (`--fresh`, recorded after the rules of issue 35's first round had
been tuned on all 360 rows above): new queries, every style at temperature 0, all held out."""
FRESH2_QUERIES = [
    ("gallbladder removal", "medical", "procedure"), ("ear infection", "medical", "condition"),
    ("vitamin D deficiency", "medical", "condition"), ("allergy medicine", "medical", "treatment"),
    ("prenuptial agreement", "legal", "family law"), ("workers compensation claim", "legal", "employment"),
    ("noise complaint neighbor", "legal", "housing"), ("patent application", "legal", "intellectual property"),
    ("standing desk", "ecommerce", "furniture"), ("hair dryer", "ecommerce", "personal care"),
    ("camping tent", "ecommerce", "outdoors"), ("bluetooth speaker", "ecommerce", "electronics"),
    ("student loan forgiveness", "finance", "loans"), ("travel insurance", "insurance", "quotes"),
    ("printer offline", "software", "support"), ("electric car charging", "automotive", "ownership"),
]
"""The third round's fresh held-out set (`--fresh2`): recorded after the rules were tuned on
every row above, fresh.jsonl included."""
FRESH3_QUERIES = [
    ("appendicitis symptoms", "medical", "symptom lookup"), ("cataract surgery", "medical", "procedure"),
    ("thyroid medication", "medical", "treatment"), ("sprained ankle", "medical", "injury"),
    ("living trust", "legal", "estate planning"), ("sexual harassment at work", "legal", "employment"),
    ("landlord repairs", "legal", "housing"), ("hit and run accident", "legal", "traffic"),
    ("office chair", "ecommerce", "furniture"), ("electric shaver", "ecommerce", "personal care"),
    ("hiking boots", "ecommerce", "outdoors"), ("gaming laptop", "ecommerce", "electronics"),
    ("credit score", "finance", "banking"), ("rental car", "travel", "booking"),
    ("forgot email password", "software", "support"), ("flat tire", "automotive", "repair"),
]
"""The fourth round's fresh held-out set (`--fresh3`): recorded before the fourth round's rules
were merged, after they had been tuned on every row above, fresh2.jsonl included."""
FRESH4_QUERIES = [
    ("gout flare", "medical", "condition"), ("high cholesterol", "medical", "condition"),
    ("physical therapy", "medical", "treatment"), ("blood test results", "medical", "symptom lookup"),
    ("small business license", "legal", "business"), ("custody modification", "legal", "family law"),
    ("car accident lawyer", "legal", "traffic"), ("copyright fair use", "legal", "intellectual property"),
    ("trail running shoes", "ecommerce", "sports"), ("air purifier", "ecommerce", "home"),
    ("kitchen knife set", "ecommerce", "kitchen"), ("wireless earbuds", "ecommerce", "electronics"),
    ("roth ira", "finance", "investing"), ("hotel cancellation", "travel", "booking"),
    ("slow computer", "software", "support"), ("home insurance", "insurance", "quotes"),
]
"""The fifth round's fresh held-out set (`--fresh4`): recorded before the fifth round's rules
were written, after they had been tuned on every row above, fresh3.jsonl included."""
FRESH5_QUERIES = [
    ("shingles vaccine", "medical", "prevention"), ("acid reflux", "medical", "condition"),
    ("knee brace", "medical", "treatment"), ("urinary tract infection", "medical", "symptom lookup"),
    ("healthcare proxy", "legal", "estate planning"), ("eviction notice", "legal", "housing"),
    ("speeding ticket appeal", "legal", "traffic"), ("trade secret theft", "legal", "intellectual property"),
    ("electric kettle", "ecommerce", "kitchen"), ("baby monitor", "ecommerce", "baby"),
    ("rain boots", "ecommerce", "clothing"), ("mechanical keyboard", "ecommerce", "electronics"),
    ("identity theft", "finance", "fraud"), ("flight delay compensation", "travel", "claims"),
    ("password manager", "software", "security"), ("motorcycle insurance", "insurance", "quotes"),
]
"""The sixth round's fresh held-out set (`--fresh5`): recorded before the sixth round's rules
were written, after they had been tuned on every row above, fresh4.jsonl included."""
FRESH6_QUERIES = [
    ("chronic sinusitis", "medical", "condition"), ("insulin pump", "medical", "device"),
    ("hearing aids", "medical", "device"), ("pink eye", "medical", "symptom lookup"),
    ("non-compete agreement", "legal", "employment"), ("jury duty", "legal", "civic duty"),
    ("will contest", "legal", "estate planning"), ("tenant rights", "legal", "housing"),
    ("robot vacuum", "ecommerce", "home"), ("dog bed", "ecommerce", "pets"),
    ("yoga pants", "ecommerce", "clothing"), ("external hard drive", "ecommerce", "electronics"),
    ("mortgage preapproval", "finance", "loans"), ("lost luggage", "travel", "claims"),
    ("screen flickering", "software", "support"), ("boat insurance", "insurance", "quotes"),
]
"""A fresh held-out set recorded after the sixth round (`--fresh6`): no round tunes on it
before it is measured; it measures the rules as they stand."""
FRESH7_QUERIES = [
    ("plantar fasciitis", "medical", "condition"), ("blood thinners", "medical", "treatment"),
    ("sleep apnea machine", "medical", "device"), ("chest pain when breathing", "medical", "symptom lookup"),
    ("adverse possession", "legal", "property"), ("wage garnishment", "legal", "debt"),
    ("guardianship of a minor", "legal", "family law"), ("class action lawsuit", "legal", "litigation"),
    ("standing fan", "ecommerce", "home"), ("cast iron skillet", "ecommerce", "kitchen"),
    ("car seat for toddler", "ecommerce", "baby"), ("noise cancelling headphones", "ecommerce", "electronics"),
    ("index funds", "finance", "investing"), ("visa application", "travel", "documents"),
    ("blue screen error", "software", "support"), ("renters insurance", "insurance", "quotes"),
]
"""A held-out set recorded before the seventh round's rules were written (`--fresh7`)."""
FRESH8_QUERIES = [
    ("tennis elbow", "medical", "injury"), ("antibiotic side effects", "medical", "treatment"),
    ("colonoscopy prep", "medical", "procedure"), ("night sweats", "medical", "symptom lookup"),
    ("easement dispute", "legal", "property"), ("bankruptcy chapter 7", "legal", "debt"),
    ("adoption process", "legal", "family law"), ("medical malpractice", "legal", "litigation"),
    ("bookshelf", "ecommerce", "furniture"), ("rice cooker", "ecommerce", "kitchen"),
    ("diaper bag", "ecommerce", "baby"), ("portable charger", "ecommerce", "electronics"),
    ("savings account interest", "finance", "banking"), ("passport renewal", "travel", "documents"),
    ("phone won't charge", "software", "support"), ("life insurance", "insurance", "quotes"),
]
"""The held-out set the seventh round is measured on once (`--fresh8`), recorded with fresh7."""
FRESH9_QUERIES = [
    ("carpal tunnel syndrome", "medical", "condition"), ("statin alternatives", "medical", "treatment"),
    ("hip replacement recovery", "medical", "procedure"), ("blurry vision", "medical", "symptom lookup"),
    ("zoning variance", "legal", "property"), ("debt collector harassment", "legal", "debt"),
    ("spousal support", "legal", "family law"), ("defamation claim", "legal", "litigation"),
    ("recliner chair", "ecommerce", "furniture"), ("air fryer", "ecommerce", "kitchen"),
    ("crib mattress", "ecommerce", "baby"), ("usb-c hub", "ecommerce", "electronics"),
    ("certificate of deposit", "finance", "banking"), ("travel visa waiver", "travel", "documents"),
    ("app keeps crashing", "software", "support"), ("pet health insurance", "insurance", "quotes"),
]
"""A held-out set recorded after fresh7's measurement, before any rule was tuned on fresh8 (`--fresh9`)."""
FRESH10_QUERIES = [
    ("rotator cuff tear", "medical", "injury"), ("eczema cream", "medical", "treatment"),
    ("mri scan", "medical", "procedure"), ("dizziness after standing", "medical", "symptom lookup"),
    ("boundary line dispute", "legal", "property"), ("payday loan debt", "legal", "debt"),
    ("paternity test", "legal", "family law"), ("product liability", "legal", "litigation"),
    ("bunk bed", "ecommerce", "furniture"), ("stand mixer", "ecommerce", "kitchen"),
    ("baby carrier", "ecommerce", "baby"), ("4k monitor", "ecommerce", "electronics"),
    ("high yield savings", "finance", "banking"), ("international driving permit", "travel", "documents"),
    ("bluetooth won't connect", "software", "support"), ("dental insurance", "insurance", "quotes"),
]
"""A held-out set recorded with fresh9 (`--fresh10`)."""
FRESH11_QUERIES = [
    ("shin splints", "medical", "injury"), ("migraine prevention", "medical", "treatment"),
    ("cortisone injection", "medical", "procedure"), ("ringing in ears", "medical", "symptom lookup"),
    ("quiet title action", "legal", "property"), ("credit card debt lawsuit", "legal", "debt"),
    ("visitation rights", "legal", "family law"), ("wrongful death lawsuit", "legal", "litigation"),
    ("tv stand", "ecommerce", "furniture"), ("blender", "ecommerce", "kitchen"),
    ("high chair", "ecommerce", "baby"), ("webcam", "ecommerce", "electronics"),
    ("overdraft fee", "finance", "banking"), ("green card renewal", "travel", "documents"),
    ("keyboard not typing", "software", "support"), ("flood insurance", "insurance", "quotes"),
]
"""A held-out set recorded after fresh9's measurement (`--fresh11`)."""
FRESH12_QUERIES = [
    ("frozen shoulder", "medical", "condition"), ("nasal spray", "medical", "treatment"),
    ("cataract lens options", "medical", "procedure"), ("numb fingers", "medical", "symptom lookup"),
    ("eminent domain", "legal", "property"), ("medical debt relief", "legal", "debt"),
    ("grandparents rights", "legal", "family law"), ("slip and fall claim", "legal", "litigation"),
    ("coffee table", "ecommerce", "furniture"), ("toaster oven", "ecommerce", "kitchen"),
    ("baby bottle", "ecommerce", "baby"), ("gaming mouse", "ecommerce", "electronics"),
    ("wire transfer limit", "finance", "banking"), ("schengen visa", "travel", "documents"),
    ("email not syncing", "software", "support"), ("umbrella insurance", "insurance", "quotes"),
]
"""A held-out set recorded with fresh11 (`--fresh12`)."""
FRESH13_QUERIES = [
    ("torn meniscus", "medical", "injury"), ("acne treatment", "medical", "treatment"),
    ("endoscopy", "medical", "procedure"), ("shortness of breath", "medical", "symptom lookup"),
    ("property line survey", "legal", "property"), ("debt settlement", "legal", "debt"),
    ("legal separation", "legal", "family law"), ("breach of warranty", "legal", "litigation"),
    ("futon", "ecommerce", "furniture"), ("pressure cooker", "ecommerce", "kitchen"),
    ("baby swing", "ecommerce", "baby"), ("smart speaker", "ecommerce", "electronics"),
    ("joint checking account", "finance", "banking"), ("travel adapter", "travel", "gear"),
    ("printer paper jam", "software", "support"), ("earthquake insurance", "insurance", "quotes"),
]
"""A held-out set recorded after fresh12's measurement (`--fresh13`)."""
FRESH14_QUERIES = [
    ("heel pain", "medical", "symptom lookup"), ("hormone therapy", "medical", "treatment"),
    ("tonsillectomy", "medical", "procedure"), ("kidney infection", "medical", "condition"),
    ("right of way dispute", "legal", "property"), ("student loan default", "legal", "debt"),
    ("child support calculator", "legal", "family law"), ("dog bite lawsuit", "legal", "litigation"),
    ("loveseat", "ecommerce", "furniture"), ("waffle maker", "ecommerce", "kitchen"),
    ("baby gate", "ecommerce", "baby"), ("drawing tablet", "ecommerce", "electronics"),
    ("mobile check deposit", "finance", "banking"), ("airport lounge access", "travel", "booking"),
    ("mouse cursor frozen", "software", "support"), ("landlord insurance", "insurance", "quotes"),
]
"""A held-out set recorded with fresh13 (`--fresh14`)."""
FRESH15_QUERIES = [
    ("gallstones", "medical", "condition"), ("blood pressure medication", "medical", "treatment"),
    ("wisdom tooth extraction", "medical", "procedure"), ("swollen ankles", "medical", "symptom lookup"),
    ("encroachment", "legal", "property"), ("debt consolidation loan", "legal", "debt"),
    ("alimony modification", "legal", "family law"), ("securities fraud", "legal", "litigation"),
    ("ottoman", "ecommerce", "furniture"), ("electric griddle", "ecommerce", "kitchen"),
    ("baby bath tub", "ecommerce", "baby"), ("graphics card", "ecommerce", "electronics"),
    ("atm withdrawal limit", "finance", "banking"), ("luggage scale", "travel", "gear"),
    ("wifi keeps dropping", "software", "support"), ("critical illness insurance", "insurance", "quotes"),
]
"""A held-out set recorded after fresh14's measurement (`--fresh15`)."""
FRESH16_QUERIES = [
    ("lower back spasm", "medical", "symptom lookup"), ("antidepressants", "medical", "treatment"),
    ("lasik surgery", "medical", "procedure"), ("strep throat", "medical", "condition"),
    ("lien on property", "legal", "property"), ("repossession rights", "legal", "debt"),
    ("sole custody", "legal", "family law"), ("age discrimination claim", "legal", "litigation"),
    ("nightstand", "ecommerce", "furniture"), ("food processor", "ecommerce", "kitchen"),
    ("bassinet", "ecommerce", "baby"), ("wireless router", "ecommerce", "electronics"),
    ("foreign transaction fee", "finance", "banking"), ("travel pillow", "travel", "gear"),
    ("laptop overheating", "software", "support"), ("short term disability insurance", "insurance", "quotes"),
]
"""A held-out set recorded with fresh15 (`--fresh16`)."""
FRESH17_QUERIES = [
    ("bunion", "medical", "condition"), ("insulin resistance", "medical", "condition"),
    ("physical therapy for knee", "medical", "treatment"), ("chronic cough", "medical", "symptom lookup"),
    ("property tax appeal", "legal", "property"), ("garnished wages", "legal", "debt"),
    ("custody evaluation", "legal", "family law"), ("class action settlement", "legal", "litigation"),
    ("bean bag chair", "ecommerce", "furniture"), ("slow cooker", "ecommerce", "kitchen"),
    ("teething toys", "ecommerce", "baby"), ("external monitor", "ecommerce", "electronics"),
    ("savings bond", "finance", "banking"), ("packing cubes", "travel", "gear"),
    ("sound not working", "software", "support"), ("gap insurance", "insurance", "quotes"),
]
"""A held-out set recorded after the rules were frozen (`--fresh17`)."""
FRESH18_QUERIES = [
    ("tendonitis", "medical", "injury"), ("allergy shots", "medical", "treatment"),
    ("cardiac stress test", "medical", "procedure"), ("itchy eyes", "medical", "symptom lookup"),
    ("landlord entry rights", "legal", "property"), ("tax debt relief", "legal", "debt"),
    ("surrogacy agreement", "legal", "family law"), ("whistleblower retaliation", "legal", "litigation"),
    ("shoe rack", "ecommerce", "furniture"), ("knife sharpener", "ecommerce", "kitchen"),
    ("baby formula", "ecommerce", "baby"), ("noise machine", "ecommerce", "electronics"),
    ("routing number", "finance", "banking"), ("neck pillow", "travel", "gear"),
    ("update failed", "software", "support"), ("cyber insurance", "insurance", "quotes"),
]
"""A held-out set recorded with fresh17 (`--fresh18`)."""
FRESH19_QUERIES = [
    ("hamstring strain", "medical", "injury"), ("antibiotic ointment", "medical", "treatment"),
    ("bone density scan", "medical", "procedure"), ("swollen lymph nodes", "medical", "symptom lookup"),
    ("title insurance claim", "legal", "property"), ("debt validation letter", "legal", "debt"),
    ("child relocation", "legal", "family law"), ("medical negligence suit", "legal", "litigation"),
    ("dining table", "ecommerce", "furniture"), ("french press", "ecommerce", "kitchen"),
    ("nursing pillow", "ecommerce", "baby"), ("wireless charger", "ecommerce", "electronics"),
    ("direct deposit", "finance", "banking"), ("hiking backpack", "travel", "gear"),
    ("screen frozen", "software", "support"), ("long term care insurance", "insurance", "quotes"),
]
"""The eighth round's first held-out set, recorded before its rules were frozen and read after (`--fresh19`)."""
FRESH20_QUERIES = [
    ("concussion", "medical", "injury"), ("chemotherapy", "medical", "treatment"),
    ("knee arthroscopy", "medical", "procedure"), ("blood in urine", "medical", "symptom lookup"),
    ("rent increase notice", "legal", "property"), ("bankruptcy chapter 13", "legal", "debt"),
    ("divorce mediation", "legal", "family law"), ("breach of fiduciary duty", "legal", "litigation"),
    ("wardrobe", "ecommerce", "furniture"), ("dish rack", "ecommerce", "kitchen"),
    ("baby wipes", "ecommerce", "baby"), ("soundbar", "ecommerce", "electronics"),
    ("cashier's check", "finance", "banking"), ("luggage lock", "travel", "gear"),
    ("microphone not detected", "software", "support"), ("health insurance deductible", "insurance", "quotes"),
]
"""The eighth round's second held-out set (`--fresh20`)."""
FRESH21_QUERIES = [
    ("ankle fracture", "medical", "injury"), ("acupuncture", "medical", "treatment"),
    ("ct scan", "medical", "procedure"), ("persistent headache", "medical", "symptom lookup"),
    ("squatters rights", "legal", "property"), ("credit report dispute", "legal", "debt"),
    ("child support arrears", "legal", "family law"), ("false advertising lawsuit", "legal", "litigation"),
    ("bar stool", "ecommerce", "furniture"), ("cutting board", "ecommerce", "kitchen"),
    ("baby thermometer", "ecommerce", "baby"), ("portable projector", "ecommerce", "electronics"),
    ("checking account fees", "finance", "banking"), ("compression socks", "travel", "gear"),
    ("vpn not connecting", "software", "support"), ("business liability insurance", "insurance", "quotes"),
]
"""The eighth round's third held-out set (`--fresh21`)."""
FRESH22_QUERIES = [
    ("whiplash", "medical", "injury"), ("nicotine patch", "medical", "treatment"),
    ("mammogram", "medical", "procedure"), ("tingling feet", "medical", "symptom lookup"),
    ("home inspection contingency", "legal", "property"), ("loan default judgment", "legal", "debt"),
    ("restraining order", "legal", "family law"), ("patent infringement", "legal", "litigation"),
    ("filing cabinet", "ecommerce", "furniture"), ("pizza stone", "ecommerce", "kitchen"),
    ("pacifier", "ecommerce", "baby"), ("smart thermostat", "ecommerce", "electronics"),
    ("credit union", "finance", "banking"), ("money belt", "travel", "gear"),
    ("browser running slow", "software", "support"), ("classic car insurance", "insurance", "quotes"),
]
"""The eighth round's fourth held-out set (`--fresh22`)."""
FRESH23_QUERIES = [
    ("stress fracture", "medical", "injury"), ("iron supplements", "medical", "treatment"),
    ("echocardiogram", "medical", "procedure"), ("heart palpitations", "medical", "symptom lookup"),
    ("hoa fines", "legal", "property"), ("debt collection lawsuit", "legal", "debt"),
    ("stepparent adoption", "legal", "family law"), ("employment discrimination", "legal", "litigation"),
    ("accent chair", "ecommerce", "furniture"), ("spice rack", "ecommerce", "kitchen"),
    ("crib sheets", "ecommerce", "baby"), ("usb microphone", "ecommerce", "electronics"),
    ("stop payment order", "finance", "banking"), ("passport holder", "travel", "gear"),
    ("printer driver error", "software", "support"), ("travel health insurance", "insurance", "quotes"),
]
"""The ninth round's first held-out set, recorded before its rules were frozen and read after (`--fresh23`)."""
FRESH24_QUERIES = [
    ("rib fracture", "medical", "injury"), ("cold laser therapy", "medical", "treatment"),
    ("biopsy", "medical", "procedure"), ("dry mouth", "medical", "symptom lookup"),
    ("property deed transfer", "legal", "property"), ("medical bill collections", "legal", "debt"),
    ("name change after divorce", "legal", "family law"), ("personal injury settlement", "legal", "litigation"),
    ("sleeper sofa", "ecommerce", "furniture"), ("measuring cups", "ecommerce", "kitchen"),
    ("baby sling", "ecommerce", "baby"), ("hdmi cable", "ecommerce", "electronics"),
    ("money market account", "finance", "banking"), ("luggage tags", "travel", "gear"),
    ("keyboard shortcuts not working", "software", "support"), ("mobile home insurance", "insurance", "quotes"),
]
"""The ninth round's second held-out set (`--fresh24`)."""
FRESH25_QUERIES = [
    ("torn ligament", "medical", "injury"), ("allergy eye drops", "medical", "treatment"),
    ("spinal tap", "medical", "procedure"), ("night cramps", "medical", "symptom lookup"),
    ("lease termination", "legal", "property"), ("debt forgiveness tax", "legal", "debt"),
    ("child visitation schedule", "legal", "family law"), ("contract dispute lawsuit", "legal", "litigation"),
    ("tv wall mount", "ecommerce", "furniture"), ("garlic press", "ecommerce", "kitchen"),
    ("toddler bed", "ecommerce", "baby"), ("fitness tracker", "ecommerce", "electronics"),
    ("bank reconciliation", "finance", "banking"), ("universal charger", "travel", "gear"),
    ("app not installing", "software", "support"), ("windstorm insurance", "insurance", "quotes"),
]
"""The ninth round's third held-out set (`--fresh25`)."""
FRESH26_QUERIES = [
    ("dislocated shoulder", "medical", "injury"), ("antiviral medication", "medical", "treatment"),
    ("ekg test", "medical", "procedure"), ("chest tightness", "medical", "symptom lookup"),
    ("landlord harassment", "legal", "property"), ("repossessed car", "legal", "debt"),
    ("annulment", "legal", "family law"), ("fraud lawsuit", "legal", "litigation"),
    ("side table", "ecommerce", "furniture"), ("mixing bowls", "ecommerce", "kitchen"),
    ("breast pump", "ecommerce", "baby"), ("e-reader", "ecommerce", "electronics"),
    ("atm card blocked", "finance", "banking"), ("neck wallet", "travel", "gear"),
    ("slow internet", "software", "support"), ("term life insurance", "insurance", "quotes"),
]
"""The ninth round's fourth held-out set (`--fresh26`)."""
FRESH27_QUERIES = [
    ("rotator cuff strain", "medical", "injury"), ("nebulizer treatment", "medical", "treatment"),
    ("spinal fusion", "medical", "procedure"), ("ear pressure", "medical", "symptom lookup"),
    ("lien on house", "legal", "property"), ("credit card lawsuit", "legal", "debt"),
    ("paternity leave", "legal", "family law"), ("deposition", "legal", "litigation"),
    ("corner desk", "ecommerce", "furniture"), ("salad spinner", "ecommerce", "kitchen"),
    ("bottle warmer", "ecommerce", "baby"), ("usb hub", "ecommerce", "electronics"),
    ("wire transfer fee", "finance", "banking"), ("rain poncho", "travel", "gear"),
    ("wifi keeps disconnecting", "software", "support"), ("vision insurance", "insurance", "quotes"),
]
"""The tenth round's first held-out set, recorded before its rules were frozen and read after (`--fresh27`)."""
FRESH28_QUERIES = [
    ("burn blister", "medical", "injury"), ("cortisone cream", "medical", "treatment"),
    ("blood transfusion", "medical", "procedure"), ("hoarse voice", "medical", "symptom lookup"),
    ("quitclaim deed", "legal", "property"), ("charged off debt", "legal", "debt"),
    ("grandparent visitation", "legal", "family law"), ("summary judgment", "legal", "litigation"),
    ("armoire", "ecommerce", "furniture"), ("dutch oven", "ecommerce", "kitchen"),
    ("swaddle blanket", "ecommerce", "baby"), ("power bank", "ecommerce", "electronics"),
    ("cashier check fraud", "finance", "banking"), ("travel towel", "travel", "gear"),
    ("mouse not working", "software", "support"), ("critical illness cover", "insurance", "quotes"),
]
"""The tenth round's second held-out set (`--fresh28`)."""
FRESH29_QUERIES = [
    ("jammed finger", "medical", "injury"), ("nicotine gum", "medical", "treatment"),
    ("appendectomy", "medical", "procedure"), ("cold sweats", "medical", "symptom lookup"),
    ("home inspection dispute", "legal", "property"), ("payday loan lawsuit", "legal", "debt"),
    ("joint custody", "legal", "family law"), ("appeal deadline", "legal", "litigation"),
    ("hall tree", "ecommerce", "furniture"), ("measuring spoons", "ecommerce", "kitchen"),
    ("nursing bra", "ecommerce", "baby"), ("smart plug", "ecommerce", "electronics"),
    ("bank statement", "finance", "banking"), ("passport wallet", "travel", "gear"),
    ("no sound", "software", "support"), ("crop insurance", "insurance", "quotes"),
]
"""The tenth round's third held-out set (`--fresh29`)."""
FRESH30_QUERIES = [
    ("bruised ribs", "medical", "injury"), ("iron infusion", "medical", "treatment"),
    ("hernia repair", "medical", "procedure"), ("metallic taste", "medical", "symptom lookup"),
    ("hoa lawsuit", "legal", "property"), ("judgment lien", "legal", "debt"),
    ("marital assets", "legal", "family law"), ("defamation lawsuit", "legal", "litigation"),
    ("folding table", "ecommerce", "furniture"), ("can opener", "ecommerce", "kitchen"),
    ("changing table", "ecommerce", "baby"), ("drone", "ecommerce", "electronics"),
    ("mobile deposit", "finance", "banking"), ("tsa lock", "travel", "gear"),
    ("battery draining fast", "software", "support"), ("fire insurance", "insurance", "quotes"),
]
"""The tenth round's fourth held-out set (`--fresh30`)."""
FRESH31_QUERIES = [
    ("pinched nerve", "medical", "injury"), ("cold compress", "medical", "treatment"),
    ("lumbar puncture", "medical", "procedure"), ("jaw pain", "medical", "symptom lookup"),
    ("mold disclosure", "legal", "property"), ("collection agency dispute", "legal", "debt"),
    ("emancipation of minor", "legal", "family law"), ("injunction", "legal", "litigation"),
    ("rocking chair", "ecommerce", "furniture"), ("colander", "ecommerce", "kitchen"),
    ("baby walker", "ecommerce", "baby"), ("dash cam", "ecommerce", "electronics"),
    ("debit card declined", "finance", "banking"), ("garment bag", "travel", "gear"),
    ("cannot login", "software", "support"), ("jewelry insurance", "insurance", "quotes"),
]
"""The eleventh round's first held-out set, recorded before its rules were written and read after (`--fresh31`)."""
FRESH32_QUERIES = [
    ("hip fracture", "medical", "injury"), ("antifungal cream", "medical", "treatment"),
    ("skin graft", "medical", "procedure"), ("restless legs", "medical", "symptom lookup"),
    ("lease renewal", "legal", "property"), ("bank levy", "legal", "debt"),
    ("foster care", "legal", "family law"), ("subpoena", "legal", "litigation"),
    ("daybed", "ecommerce", "furniture"), ("wok", "ecommerce", "kitchen"),
    ("teething ring", "ecommerce", "baby"), ("tablet stand", "ecommerce", "electronics"),
    ("account frozen", "finance", "banking"), ("water bottle filter", "travel", "gear"),
    ("disk full", "software", "support"), ("flood zone premium", "insurance", "quotes"),
]
"""The eleventh round's second held-out set (`--fresh32`)."""
FRESH33_QUERIES = [
    ("black eye", "medical", "injury"), ("laser eye surgery", "medical", "treatment"),
    ("root canal", "medical", "procedure"), ("frequent urination", "medical", "symptom lookup"),
    ("sublease agreement", "legal", "property"), ("promissory note", "legal", "debt"),
    ("surrogacy contract", "legal", "family law"), ("out of court settlement", "legal", "litigation"),
    ("console table", "ecommerce", "furniture"), ("baking sheet", "ecommerce", "kitchen"),
    ("play mat", "ecommerce", "baby"), ("ring light", "ecommerce", "electronics"),
    ("minimum balance fee", "finance", "banking"), ("sleeping mask", "travel", "gear"),
    ("camera not working", "software", "support"), ("mobile phone insurance", "insurance", "quotes"),
]
"""The eleventh round's third held-out set (`--fresh33`)."""
FRESH34_QUERIES = [
    ("groin strain", "medical", "injury"), ("speech therapy", "medical", "treatment"),
    ("pap smear", "medical", "procedure"), ("hair loss", "medical", "symptom lookup"),
    ("zoning permit", "legal", "property"), ("debt buyer lawsuit", "legal", "debt"),
    ("name change petition", "legal", "family law"), ("arbitration clause", "legal", "litigation"),
    ("shoe cabinet", "ecommerce", "furniture"), ("pepper grinder", "ecommerce", "kitchen"),
    ("diaper pail", "ecommerce", "baby"), ("e-ink tablet", "ecommerce", "electronics"),
    ("check bounced", "finance", "banking"), ("power adapter", "travel", "gear"),
    ("bluetooth pairing failed", "software", "support"), ("wedding insurance", "insurance", "quotes"),
]
"""The eleventh round's fourth held-out set (`--fresh34`)."""
FRESH35_QUERIES = [
    ("sprained wrist", "medical", "injury"), ("antibiotic cream", "medical", "treatment"),
    ("vasectomy", "medical", "procedure"), ("numb toes", "medical", "symptom lookup"),
    ("encroaching fence", "legal", "property"), ("wage levy", "legal", "debt"),
    ("parenting plan", "legal", "family law"), ("civil complaint", "legal", "litigation"),
    ("storage bench", "ecommerce", "furniture"), ("garlic crusher", "ecommerce", "kitchen"),
    ("crib bumper", "ecommerce", "baby"), ("phone case", "ecommerce", "electronics"),
    ("bank transfer limit", "finance", "banking"), ("packing list", "travel", "gear"),
    ("app crash", "software", "support"), ("auto insurance claim", "insurance", "quotes"),
]
"""The twelfth round's first held-out set, recorded before its rules were written and read after (`--fresh35`)."""
FRESH36_QUERIES = [
    ("dog bite infection", "medical", "injury"), ("pain relief patch", "medical", "treatment"),
    ("cardiac catheterization", "medical", "procedure"), ("chest burning", "medical", "symptom lookup"),
    ("easement rights", "legal", "property"), ("debt statute", "legal", "debt"),
    ("adoption papers", "legal", "family law"), ("discovery request", "legal", "litigation"),
    ("coat rack", "ecommerce", "furniture"), ("mandoline slicer", "ecommerce", "kitchen"),
    ("bath thermometer", "ecommerce", "baby"), ("screen protector", "ecommerce", "electronics"),
    ("savings goal", "finance", "banking"), ("toiletry bag", "travel", "gear"),
    ("keyboard lag", "software", "support"), ("health plan", "insurance", "quotes"),
]
"""The twelfth round's second held-out set (`--fresh36`)."""
FRESH37_QUERIES = [
    ("neck strain", "medical", "injury"), ("heat therapy", "medical", "treatment"),
    ("hip arthroscopy", "medical", "procedure"), ("dizzy spells", "medical", "symptom lookup"),
    ("landlord entry notice", "legal", "property"), ("creditor harassment", "legal", "debt"),
    ("marital settlement", "legal", "family law"), ("motion to dismiss", "legal", "litigation"),
    ("murphy bed", "ecommerce", "furniture"), ("pizza cutter", "ecommerce", "kitchen"),
    ("stroller fan", "ecommerce", "baby"), ("usb cable", "ecommerce", "electronics"),
    ("atm fee", "finance", "banking"), ("hiking poles", "travel", "gear"),
    ("printer jam", "software", "support"), ("term insurance", "insurance", "quotes"),
]
"""The twelfth round's third held-out set (`--fresh37`)."""
FRESH38_QUERIES = [
    ("cut finger", "medical", "injury"), ("wound dressing", "medical", "treatment"),
    ("stent placement", "medical", "procedure"), ("ringing ears", "medical", "symptom lookup"),
    ("rent control", "legal", "property"), ("repossession notice", "legal", "debt"),
    ("guardianship papers", "legal", "family law"), ("court filing fee", "legal", "litigation"),
    ("entryway table", "ecommerce", "furniture"), ("meat thermometer", "ecommerce", "kitchen"),
    ("baby socks", "ecommerce", "baby"), ("hdmi splitter", "ecommerce", "electronics"),
    ("account closure", "finance", "banking"), ("camping stove", "travel", "gear"),
    ("wifi password", "software", "support"), ("renters policy", "insurance", "quotes"),
]
"""The twelfth round's fourth held-out set (`--fresh38`)."""
FRESH_SETS = {
    "fresh": (FRESH_QUERIES, "the fresh held-out set, every style at temperature 0"),
    "fresh2": (FRESH2_QUERIES, "the third round's held-out set"),
    "fresh3": (FRESH3_QUERIES, "the fourth round's held-out set"),
    "fresh4": (FRESH4_QUERIES, "the fifth round's held-out set"),
    "fresh5": (FRESH5_QUERIES, "the sixth round's held-out set"),
    "fresh6": (FRESH6_QUERIES, "a held-out set after the sixth round"),
    "fresh7": (FRESH7_QUERIES, "the seventh round's first held-out set"),
    "fresh8": (FRESH8_QUERIES, "the seventh round's second held-out set"),
    "fresh9": (FRESH9_QUERIES, "a held-out set recorded after fresh7's measurement"),
    "fresh10": (FRESH10_QUERIES, "a held-out set recorded with fresh9"),
    "fresh11": (FRESH11_QUERIES, "a held-out set recorded after fresh9's measurement"),
    "fresh12": (FRESH12_QUERIES, "a held-out set recorded with fresh11"),
    "fresh13": (FRESH13_QUERIES, "a held-out set recorded after fresh12's measurement"),
    "fresh14": (FRESH14_QUERIES, "a held-out set recorded with fresh13"),
    "fresh15": (FRESH15_QUERIES, "a held-out set recorded after fresh14's measurement"),
    "fresh16": (FRESH16_QUERIES, "a held-out set recorded with fresh15"),
    "fresh17": (FRESH17_QUERIES, "a held-out set recorded after the rules were frozen"),
    "fresh18": (FRESH18_QUERIES, "a held-out set recorded with fresh17"),
    "fresh19": (FRESH19_QUERIES, "the eighth round's first held-out set"),
    "fresh20": (FRESH20_QUERIES, "the eighth round's second held-out set"),
    "fresh21": (FRESH21_QUERIES, "the eighth round's third held-out set"),
    "fresh22": (FRESH22_QUERIES, "the eighth round's fourth held-out set"),
    "fresh23": (FRESH23_QUERIES, "the ninth round's first held-out set"),
    "fresh24": (FRESH24_QUERIES, "the ninth round's second held-out set"),
    "fresh25": (FRESH25_QUERIES, "the ninth round's third held-out set"),
    "fresh26": (FRESH26_QUERIES, "the ninth round's fourth held-out set"),
    "fresh27": (FRESH27_QUERIES, "the tenth round's first held-out set"),
    "fresh28": (FRESH28_QUERIES, "the tenth round's second held-out set"),
    "fresh29": (FRESH29_QUERIES, "the tenth round's third held-out set"),
    "fresh30": (FRESH30_QUERIES, "the tenth round's fourth held-out set"),
    "fresh31": (FRESH31_QUERIES, "the eleventh round's first held-out set"),
    "fresh32": (FRESH32_QUERIES, "the eleventh round's second held-out set"),
    "fresh33": (FRESH33_QUERIES, "the eleventh round's third held-out set"),
    "fresh34": (FRESH34_QUERIES, "the eleventh round's fourth held-out set"),
    "fresh35": (FRESH35_QUERIES, "the twelfth round's first held-out set"),
    "fresh36": (FRESH36_QUERIES, "the twelfth round's second held-out set"),
    "fresh37": (FRESH37_QUERIES, "the twelfth round's third held-out set"),
    "fresh38": (FRESH38_QUERIES, "the twelfth round's fourth held-out set"),
}
"""Each fresh set's queries and what it measures, by name: `--NAME` records it to NAME.jsonl."""
SAMPLED = ("assistant",)
"""Styles also asked at temperature 0.8 (seed 35), for shapes temperature 0 never gives."""


async def record(base_urls: list[str], model: str, max_tokens: int, raw: Path, fresh: list | None = None) -> list[dict]:
    """Every request's row; rows already in `raw` (an interrupted recording) are kept and not
    asked again, each new row is appended to it as it comes. One request at a time per server."""
    from openai import AsyncOpenAI

    done = {}
    if raw.exists():
        for line in raw.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["id"]] = row
    clients = [AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=5, timeout=600) for url in base_urls]
    free: asyncio.Queue = asyncio.Queue()
    for client in clients:
        free.put_nowait(client)
    if fresh:
        requests = [(style, 0.0, q) for style in PROMPTS for q in fresh]
    else:
        requests = [(style, 0.0, q) for style in PROMPTS for q in QUERIES]
        requests += [(style, 0.8, q) for style in SAMPLED for q in QUERIES]

    async def one(style: str, temperature: float, item: tuple[str, str, str]) -> dict:
        query, domain, intent = item
        row_id = f"{style}-{'t08' if temperature else 't0'}-{query.replace(' ', '_')}"
        if row_id in done:
            return done[row_id]
        prompt = PROMPTS[style].format(query=query, domain=domain, intent=intent)
        extra = {"seed": 35} if temperature else {}
        client = await free.get()
        try:
            reply = await client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": prompt}], temperature=temperature,
                max_tokens=max_tokens, **extra)
        finally:
            free.put_nowait(client)
        choice = reply.choices[0]
        row = {"id": row_id, "style": style, "temperature": temperature, "query": query, "domain": domain,
               "prompt": prompt, "reply": choice.message.content or "", "finish_reason": choice.finish_reason,
               "completion_tokens": reply.usage.completion_tokens if reply.usage else None,
               "max_tokens": max_tokens, "model": "SmolLM2-135M-Instruct.Q4_1 (llama-cpp-python 0.3.36)"}
        with raw.open("a", encoding="utf-8") as out:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
        return row

    rows = await asyncio.gather(*(one(*r) for r in requests))
    for client in clients:
        await client.close()
    return list(rows)


def row_ids() -> list[str]:
    """Every request's id, known before any reply exists."""
    ids = [f"{style}-t0-{q.replace(' ', '_')}" for style in PROMPTS for q, _, _ in QUERIES]
    return ids + [f"{style}-t08-{q.replace(' ', '_')}" for style in SAMPLED for q, _, _ in QUERIES]


HELD_OUT = 125
"""Held-out rows: enough that at least 100 of them finish (the rest are cut off at max_tokens)."""


def split_ids() -> dict[str, list[str]]:
    """The split, decided from the ids alone (a fixed shuffle) before any reply was recorded,
    so the rows could be labelled as they arrived: {"heldout": [...], "tuning": [...]}, each
    in the shuffled order."""
    order = row_ids()
    random.Random(35).shuffle(order)
    return {"heldout": order[:HELD_OUT], "tuning": order[HELD_OUT:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True, action="append", help="a server (give it more than once to share the requests)")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--out", type=Path, required=True)
    for name, (queries, what) in FRESH_SETS.items():
        parser.add_argument(f"--{name}", action="store_const", const=name, dest="fresh",
                            help=f"record {what} ({len(queries)} queries) to {name}.jsonl")
    args = parser.parse_args()
    started = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        target = args.out / f"{args.fresh}.jsonl"
        if target.exists():  # before asking the server anything
            raise SystemExit(f"{target}: exists; recordings are never overwritten (move it away first)")
        rows = asyncio.run(record(args.base_url, args.model, args.max_tokens, args.out / f"{args.fresh}.partial.jsonl",
                                  fresh=FRESH_SETS[args.fresh][0]))
        rows = sorted(rows, key=lambda r: r["id"])
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        (args.out / f"{args.fresh}.partial.jsonl").unlink()  # the resume log, now whole in the target
        cut = sum(r["finish_reason"] != "stop" for r in rows)
        print(f"recorded {len(rows)} fresh replies in {time.monotonic() - started:.0f} s ({cut} cut off), all held out")
        return
    rows = asyncio.run(record(args.base_url, args.model, args.max_tokens, args.out / "recording.partial.jsonl"))
    parts = split_ids()
    by_id = {row["id"]: row for row in rows}
    tuning, held = ([by_id[i] for i in sorted(parts[name])] for name in ("tuning", "heldout"))
    for name, part in (("tuning.jsonl", tuning), ("heldout.jsonl", held)):
        target = args.out / name
        if target.exists():
            raise SystemExit(f"{target}: exists; recordings are never overwritten (move it away first)")
        target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in part), encoding="utf-8")
    cut = sum(r["finish_reason"] != "stop" for r in rows)
    print(f"recorded {len(rows)} replies in {time.monotonic() - started:.0f} s ({cut} cut off): "
          f"{len(tuning)} tuning, {len(held)} held out")


if __name__ == "__main__":
    main()
