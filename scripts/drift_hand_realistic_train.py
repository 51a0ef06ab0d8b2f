"""Hand-written *realistic* labelled rows for data/drift/train.jsonl (issue 36, the fit part).

The drift terms here are the kind a real model produces when it expands a query, not
far-fetched ones: a compound that reads the query's word in another sense (food court for
a court of appeals), a word related to the query only through another sense (sea lion for
a notary seal, student for the eye's pupil), an opposite with no prefix (malignant for
benign, tenant for landlord), a sibling (hepatitis A for hepatitis B, misdemeanour for
felony, a rival brand for a brand), a look-alike that reads like a short form (ileum for
ilium). Each has its mirror on the not-drift side in the same or a neighbouring group:
true abbreviations, Latin and regional jargon, brand/generic pairs, regional synonyms,
broader and narrower terms.

Written from domain knowledge (clinical, legal and retail usage); candidates whose label a
reviewer could dispute were left out. A line ending in `  # model` is a term the project's
local model (SmolLM2-135M-Instruct, llama.cpp, seed 36, asked for 8 alternative search
terms) actually produced for that query, labelled by hand; it gets source `model`.

Format and the older codes as in scripts/drift_hand_train.py. Codes added by issue 36:
not drift: brand (brand_generic), reg (regional), broad (broader), narr (narrower);
drift: sib (sibling, a co-hyponym that is not a synonym), osen (other_sense, related to
the query only through another sense of its word, with no compound).
No query here may appear in the held-out files or the demo golden sets.
"""

ROWS = """
@ medical
= hepatitis B vaccine | HBV vaccine; hepatitis B immunization
abbr  HepB vaccine
brand Engerix-B
brand Recombivax HB
brand Heplisav-B
broad hepatitis vaccine
narr  hepatitis B birth dose
sib   hepatitis A vaccine
sib   HPV vaccine

= type 1 diabetes | insulin-dependent diabetes; juvenile diabetes
abbr  T1D
abbr  IDDM
abbr  T1DM
broad diabetes mellitus
narr  latent autoimmune diabetes in adults
sib   type 2 diabetes
sib   gestational diabetes
sib   diabetes insipidus

= ilium fracture | iliac bone fracture; iliac wing fracture
narr  iliac crest fracture
narr  Duverney fracture
broad pelvic fracture
rel   pelvic ring injury
look  ileum
look  ileus

= benign tumour | benign neoplasm; non-cancerous tumour
reg   benign tumor
narr  lipoma
narr  fibroadenoma
narr  adenoma
opp   malignant tumour
opp   cancerous tumour
opp   sarcoma  # model

= malignant hypertension | hypertensive emergency; accelerated hypertension
syn   malignant phase hypertension
rel   hypertensive retinopathy
rel   papilledema
opp   benign hypertension
look  malignant hyperthermia

= acetaminophen overdose | acetaminophen toxicity; paracetamol poisoning
abbr  APAP overdose
brand Tylenol overdose
brand Panadol overdose
broad drug overdose
rel   N-acetylcysteine
rel   Rumack-Matthew nomogram
sib   ibuprofen overdose
sib   aspirin poisoning

= pupil reaction to light | pupillary light reflex; PLR
abbr  PERRLA
narr  consensual light reflex
rel   relative afferent pupillary defect
rel   miosis
broad cranial nerve examination
osen  student
shift pupil-teacher ratio

= cervical cancer screening | Pap smear; cervical screening
syn   Pap test
jar   cervical cytology
reg   smear test
narr  liquid-based cytology
rel   HPV test
broad cancer screening
shift cervical spine X-ray
sib   breast cancer screening
sib   colorectal cancer screening

= golfer's elbow | medial epicondylitis; medial elbow pain
jar   medial epicondylalgia
broad elbow tendinopathy
sib   tennis elbow
sib   lateral epicondylitis

= dysphagia | difficulty swallowing; swallowing disorder
jar   deglutition disorder
narr  oropharyngeal dysphagia
narr  esophageal dysphagia
rel   odynophagia
look  dysphasia
look  dysplasia

= peroneal nerve injury | common fibular nerve injury; foot drop
jar   peroneal palsy
narr  deep peroneal nerve injury
broad peripheral nerve injury
look  perineal nerve injury
sib   tibial nerve injury

= ureteral stones | ureteric calculi; kidney stone in the ureter
jar   ureterolithiasis
narr  distal ureteral stone
broad urolithiasis
rel   renal colic
rel   ureteroscopy
look  urethral stones
sib   gallstones

= hip abduction exercises | hip abductor strengthening; side-lying leg raises
narr  clamshell exercise
narr  banded lateral walks
rel   gluteus medius strengthening
broad hip strengthening exercises
opp   hip adduction exercises
shift child abduction

= atorvastatin | atorvastatin calcium; statin
brand Lipitor
broad cholesterol-lowering medication
broad HMG-CoA reductase inhibitor
sib   rosuvastatin
sib   simvastatin
sib   Crestor
look  atomoxetine
look  nystatin

= epinephrine auto-injector | epinephrine pen; auto-injectable epinephrine
reg   adrenaline auto-injector
brand EpiPen
brand Auvi-Q
rel   anaphylaxis
sib   insulin pen
sib   norepinephrine

= nothing by mouth | NPO; nil per os
reg   nil by mouth
abbr  NBM
rel   preoperative fasting
opp   per os
sib   clear liquid diet

= at bedtime | qhs; hora somni
jar   nocte
abbr  HS
syn   nightly
opp   mane

= cardiac arrest | sudden cardiac arrest; cardiopulmonary arrest
abbr  SCA
narr  asystole
rel   ventricular fibrillation
rel   cardiopulmonary resuscitation
sib   heart attack
shift house arrest
osen  detention

= temple headache | temporal headache; pain in the temples
broad headache
rel   temporal arteritis
osen  shrine
osen  synagogue

= discharge summary | hospital discharge letter; discharge note
abbr  DC summary
broad clinical documentation
shift vaginal discharge
osen  dismissal

@ legal
= court of appeals | appellate court; court of appeal
narr  Ninth Circuit Court of Appeals
rel   appellate jurisdiction
shift food court
osen  courtyard
sib   trial court
syn   appeals court  # model
sib   religious courts  # model

= notary seal | notarial seal; notary stamp
abbr  L.S.
narr  notary embosser
narr  self-inking notary stamp
rel   notarial acknowledgment
shift harbor seal
osen  sea lion
osen  gasket
rel   notary  # model

= felony charge | felony offense; serious criminal charge
reg   indictable offence
narr  class A felony
narr  violent felony
broad criminal charge
sib   misdemeanour charge
sib   summary offence
sib   infraction
narr  capital offense  # model
narr  felony murder  # model
narr  felonious assault  # model

= landlord obligations | landlord duties; landlord responsibilities
jar   lessor's covenants
narr  duty to repair
narr  warranty of habitability
narr  covenant of quiet enjoyment
broad landlord-tenant law
opp   tenant obligations

= not guilty verdict | acquittal; verdict of not guilty
jar   autrefois acquit
narr  directed verdict of acquittal
broad jury verdict
rel   double jeopardy
opp   conviction
opp   guilty verdict
sib   mistrial

= solicitor fees | solicitor's fees; legal fees
reg   attorney fees
jar   taxation of costs
narr  conveyancing fees
broad professional fees
look  solicitation
osen  door-to-door salesman

= court reporter | stenographer; court stenographer
abbr  CSR
reg   official shorthand writer
rel   stenotype
rel   court transcript
broad transcription services
sib   court clerk
sib   bailiff

= prosecution witness | witness for the prosecution; state's witness
reg   Crown witness
jar   King's evidence
narr  cooperating witness
broad trial witness
opp   defence witness
shift patent prosecution

= mortgagee rights | lender's rights; rights of the mortgage lender
jar   mortgagee in possession
narr  power of sale
narr  right of foreclosure
broad secured creditor rights
opp   mortgagor rights
opp   borrower rights

= nolo contendere plea | no contest plea; plea of nolo contendere
abbr  nolo plea
broad criminal plea
rel   plea bargain
sib   Alford plea
opp   not guilty plea
look  contender

= legal brief | appellate brief; written legal argument
jar   memorandum of points and authorities
reg   skeleton argument
narr  amicus brief
narr  reply brief
broad court filing
shift boxer briefs
shift briefcase
osen  briefing
broad legal writing  # model
broad legal document  # model

= advance directive | living will; advance health care directive
reg   advance decision
rel   POLST
broad end-of-life planning
sib   last will and testament
sib   living trust

= duty of care | legal duty of care; standard of care
jar   neighbour principle
narr  duty to warn
broad negligence law
shift customs duty
shift duty-free shop
shift home health care  # model
osen  occupational therapy  # model

= force majeure clause | act of God clause; force majeure provision
jar   vis major
narr  pandemic clause
rel   frustration of contract
rel   hardship clause
broad boilerplate clauses

= bar exam | bar examination; attorney licensing exam
narr  Multistate Bar Examination
narr  Uniform Bar Examination
reg   Solicitors Qualifying Examination
broad lawyer licensure
sib   LSAT
osen  bartending license
look  barber  # model
look  barber's chair  # model
unr   Bureau of Labor Statistics  # model

= patent claims | claims of a patent; patent claim language
narr  independent claim
narr  dependent claim
rel   prior art
shift patent leather
shift insurance claim

= police custody | custodial detention; held in custody
jar   remand in custody
broad detention
shift child custody
osen  guardianship

= sentencing guidelines | federal sentencing guidelines; sentencing guideline ranges
abbr  USSG
reg   Sentencing Council guidelines
rel   mandatory minimum sentence
shift sentence structure
osen  syntax

@ ecommerce
= Nike running shoes | Nike runners; Nike Pegasus
reg   Nike trainers
narr  Nike Vaporfly
narr  Nike Invincible Run
broad running shoes
sib   Adidas running shoes
sib   Asics Gel-Kayano

= Dyson cordless vacuum | Dyson stick vacuum; Dyson V15
narr  Dyson V8
broad cordless stick vacuum
rel   Dyson vacuum battery
sib   Shark cordless vacuum
sib   Dyson Airwrap
sib   Dyson Supersonic hair dryer

= Kleenex tissues | facial tissues; tissue paper
reg   paper hankies
narr  lotion tissues
narr  pocket tissues
sib   Puffs tissues
shift connective tissue
shift tissue sample

= ibuprofen tablets | ibuprofen 200 mg; ibuprofen caplets
brand Advil
brand Nurofen
brand Motrin
broad NSAID
sib   naproxen  # model
sib   Aleve
sib   Pepcid  # model

= cell phone battery | mobile phone battery; replacement phone battery
reg   mobile battery
narr  lithium-ion phone battery
broad phone accessories
rel   power bank
shift solar cell
shift prison cell
sib   laptop battery  # model
sib   electric vehicle battery  # model
rel   portable phone battery  # model

= tablet splitter | pill splitter; pill cutter
syn   pill divider
rel   pill crusher
shift tablet stand
shift tablet case
shift tablet computer
osen  laptop  # model

= nappy rash cream | diaper rash cream; barrier cream
reg   diaper rash ointment
brand Sudocrem
brand Desitin
brand Bepanthen
narr  zinc oxide cream
shift rash guard

= car boot organiser | car trunk organizer; car trunk storage
narr  collapsible boot organiser
broad car accessories
shift ankle boots
osen  shoe rack
osen  wellies

= wireless keyboard | Bluetooth keyboard; cordless keyboard
narr  Logitech MX Keys
narr  mechanical wireless keyboard
broad computer peripherals
opp   wired keyboard
sib   wireless mouse  # model
osen  digital piano
sib   wireless headphones  # model
sib   wireless microphone  # model

= king size duvet | king duvet; king size comforter
reg   king size quilt
reg   doona
narr  king size down duvet
sib   single duvet
shift duvet day
osen  King Kong  # model

= coffee grinder | coffee mill; bean grinder
narr  burr coffee grinder
narr  blade grinder
narr  Baratza Encore
broad coffee accessories
sib   coffee maker
shift angle grinder

= smart TV | internet TV; connected TV
abbr  CTV
reg   smart telly
narr  Android TV
narr  QLED smart TV
sib   smart speaker

= plasters | adhesive bandages; sticking plasters
brand Band-Aid
brand Elastoplast
narr  blister plasters
narr  waterproof plasters
broad first aid supplies
shift plaster of Paris
osen  drywall
osen  mortar  # model
osen  plasterwork  # model

= buy online pick up in store | BOPIS; in-store pickup
reg   click and collect
abbr  BOPUS
broad omnichannel retail
opp   home delivery
sib   ship from store

= restocking fee | restock charge; return restocking fee
rel   return policy
opp   free returns
sib   shipping fee

= bass guitar strings | bass strings; electric bass strings
narr  flatwound bass strings
narr  Ernie Ball Slinky bass strings
sib   acoustic guitar strings
shift sea bass
osen  fishing line
sib   electric guitar  # model

= mouse pad | mousepad; desk pad
reg   mouse mat
narr  gaming mouse pad
narr  wrist rest mouse pad
shift mousetrap
unr   couch  # model
unr   Adobe Photoshop  # model

= oxford shoes | oxfords; lace-up dress shoes
jar   balmorals
narr  cap-toe oxfords
sib   derby shoes
osen  Oxford University
shift oxford shirt
sib   high heels  # model

= bow tie | bowtie; self-tie bow tie
narr  pre-tied bow tie
sib   necktie
shift cable tie
shift hair bow

= jumper cables | booster cables; jump starter cables
reg   jump leads
narr  heavy-duty jumper cables
rel   portable jump starter
osen  sweater
shift jumper dress
"""
