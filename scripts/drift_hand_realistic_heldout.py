"""Hand-labelled realistic rows, written as issue 36's first realistic held-out set (issue 36).

Where they go now: measured once as data/drift/heldout_realistic.jsonl in the first round,
they were moved into train.jsonl in the second round (scripts/build_drift_labels.py) and
are fitted on; scripts/drift_hand_realistic_heldout2.py holds the held-out rows since.

How written and by whom: by helper D of the 2026-12-04 session, from domain knowledge,
blind to the drift judge: its code (termgate/drift/*) was not read, the judge and
`termgate drift calibrate` were not run, and no row was checked against a score. No WordNet
look-ups were made either (WordNet relations are features of the judge). These rows were
not fitted on in the first round, where they were reported apart from train.jsonl and
heldout.jsonl. No query
here appears in train.jsonl, heldout.jsonl, the demo golden sets or
scripts/drift_hand_realistic_train.py.

What the rows cover: the five causes of issue 36, each with its mirror on the not-drift side,
written as an LLM expanding the query would plausibly produce them:
  - sense-shift compounds (`shift`): a compound holding a query word in another sense
    (angle grinder for a coffee grinder, boxer briefs for a legal brief,
    Dodge Charger for a phone charger, delivery room for a delivery charge);
  - other-sense words (`osen`): related to a query word only through another sense
    (schoolchild for a pupil, lentils for a pulse oximeter, publican for a landlord,
    sweater for jumper cables, thorax for a chest of drawers);
  - opposites with no prefix (`opp`): miosis / mydriasis, conviction / acquittal,
    tenant / landlord, free delivery / delivery charge;
  - siblings (`sib`): co-hyponyms, lettered or numbered variants (hepatitis C, type 2
    diabetes), rival brands (Galaxy Buds for AirPods), misdemeanor for felony;
    look-alikes (`look`), some reading like abbreviations (HPV for HBV, CRP for CRC,
    P&L for P&P, ileum for ilium);
  - mirrors (not drift): true abbreviations (`abbr`), Latin and regional jargon (`jar`:
    ischias, supersedeas, recognizance, factum, aural toilet, commode), brand/generic
    (`brand`), regional synonyms (`reg`), broader (`broad`) and narrower (`narr`) terms,
    plain related terms (`rel`), synonyms (`syn`) and dated forms (`arch`).

Format: as scripts/drift_hand_train.py (`@ domain`, `= query | expected; expected`, then one
`code  term` line per candidate), with the codes of issue 36: sib (sibling), osen
(other_sense), brand (brand_generic), reg (regional), broad (broader), narr (narrower) beside
the existing syn, rel, abbr, jar, arch, look, shift, opp, aos, unr. A line ending in
`  # model` is a term a real local model generated (source `model`), labelled by hand;
every other line is source `hand`.

Model rows: MODEL_NOTE below says which model, which prompts and settings, and what was kept.

Judgement calls: siblings a clinician or lawyer might still call related were kept only where the
searcher plainly means one of the pair (barrister for a solicitor, angiotensin receptor blocker
for an ACE inhibitor, chalazion for a stye); barrister for a trial lawyer is `reg` (the British
trial advocate). Regional spellings count as `reg` (benign tumor, judgement, woolen socks).
"""

MODEL_NOTE = """
Rows marked `  # model` (99 of 460): terms SmolLM2-135M-Instruct (Q4_1 GGUF) actually generated, served by
the session's local llama.cpp server (http://127.0.0.1:8600/v1, OpenAI-compatible), asked with
the `openai` client, one request at a time, temperature 0.7, max_tokens 128, on 2026-12-04
between 02:54 and 03:09 UTC. Every query of this file was asked four times, with two prompts:

  A (seeds 36, 37): 'You are a search assistant for a {domain} search engine. List synonyms
     and related search terms for the query "{query}", one per line.'
  B (seeds 136, 137): 'Give 5 alternative search terms for "{query}" in the {domain} domain.
     Write one term per line.'

(220 replies; {domain} is medical, legal or ecommerce.) Most replies were prose, repeats of
the query, or invented words (gallbladremy, Chettorel, Probabillist); those give no row. From
the rest, D took real words and phrases as the reply wrote them (case lowered for ordinary
nouns, list markers and glosses dropped), skipped plurals and reorderings of the query or of
an expected term, and labelled each by hand with the same rules as the hand rows. Every model
term appears in a reply for its own query (checked by a case-insensitive search of the saved
replies). Five model terms had already been written by hand before the model was asked
(hepatitis A, diabetes mellitus, benign tumor, cardiopulmonary resuscitation, judicial
review); their lines are marked `# model` too, since the model produced them as well.

The model's drift is mostly look-alikes (heparin and Hib for hepatitis B, paroxetine for
paracetamol, child abduction for adoption, AirDrops for AirPods, probabilism for probation),
siblings (glioblastoma for a benign tumour, femur fracture for an ilium fracture, bail judge
for a probation officer, espresso machine for a coffee grinder), other senses (dresses for a
dress shirt, solicit for a solicitor), and plainly unrelated words (Adderall, jihadism,
Walmart). Terms that share only a modifier with the query (legal aid, legal dictionaries for a
legal brief or writ) are labelled `unr`: they are unrelated in meaning, with no other sense
involved. Its not-drift terms are mostly broader terms (legal professional, guitar, crimes)
and plain synonyms (type I diabetes, shipping charges, screen protection).
"""

ROWS = """
@ medical
= dilated pupils | mydriasis; pupil dilation
osen  schoolchild
shift pupil-teacher ratio
opp   miosis
narr  pharmacological mydriasis
rel   anisocoria
broad pupillary abnormality
syn   pupillary dilatation  # model

= hepatitis B | HBV; hepatitis B virus infection
sib   hepatitis C
sib   hepatitis A  # model
look  HPV
narr  chronic hepatitis B
broad viral hepatitis
rel   HBsAg
abbr  HepB  # model
look  heparin  # model
look  Hib  # model

= type 1 diabetes | insulin-dependent diabetes; juvenile diabetes
sib   type 2 diabetes
sib   T2D
sib   diabetes insipidus
abbr  T1D
abbr  IDDM
rel   diabetic ketoacidosis
broad diabetes mellitus  # model
narr  brittle diabetes
syn   type I diabetes  # model
syn   insulin dependent diabetes mellitus  # model

= ilium fracture | iliac wing fracture; pelvic fracture
look  ileum
look  ileus
osen  Troy
sib   ischium fracture
syn   Duverney fracture
rel   iliac crest
broad pelvic injury
syn   fracture of ilium  # model
sib   femur fracture  # model
look  ileal injury  # model
look  ileum fractures  # model

= benign tumour | benign neoplasm; non-cancerous tumour
opp   malignant tumour
opp   malignancy
sib   borderline tumour
reg   benign tumor  # model
narr  lipoma
narr  fibroma
broad neoplasm
look  benefits  # model
sib   glioblastoma  # model
sib   neuroblastoma  # model
narr  meningioma  # model

= cardiac arrest | sudden cardiac arrest; cardiopulmonary arrest
shift arrest warrant
osen  detention
sib   myocardial infarction
sib   respiratory arrest
abbr  SCA
narr  asystole
jar   code blue
rel   cardiopulmonary resuscitation  # model
rel   chest compressions  # model
syn   cardiorespiratory arrest  # model
rel   CPR  # model
rel   cardiac death  # model

= cervical cancer | carcinoma of the cervix; cervix cancer
shift cervical spondylosis
shift cervical collar
osen  neck
sib   endometrial cancer
rel   Pap smear
rel   cervical intraepithelial neoplasia
narr  squamous cell carcinoma of the cervix
rel   cervix screening  # model

= paracetamol overdose | acetaminophen poisoning; paracetamol toxicity
reg   acetaminophen overdose
brand Tylenol overdose
brand Panadol overdose
rel   N-acetylcysteine
broad drug overdose
sib   aspirin overdose
sib   ibuprofen overdose
look  acetazolamide
look  paroxetine  # model
look  paraben  # model
rel   paracetamol  # model

= sciatica | sciatic nerve pain; lumbar radiculopathy
jar   ischias
rel   herniated disc
rel   piriformis syndrome
broad radiculopathy
sib   cervical radiculopathy
sib   femoral neuralgia
look  science  # model
unr   physics  # model

= stye | hordeolum; eyelid infection
syn   sty
osen  pigsty
sib   chalazion
narr  external hordeolum
broad eyelid disorder
unr   suture  # model
unr   stencil  # model
unr   cryotherapy  # model

= gallbladder removal | cholecystectomy; gallbladder surgery
jar   lap chole
narr  laparoscopic cholecystectomy
rel   biliary colic
sib   appendectomy
look  cholecystostomy
shift removal van

= tablet splitting | pill splitting; cutting tablets in half
shift tablet case
osen  iPad
shift splitting headache
rel   pill cutter
narr  scored tablet
syn   pill halving
unr   dereliction  # model

= colon cancer | colorectal cancer; bowel cancer; carcinoma of the colon
osen  semicolon
sib   gastric cancer
look  CRP
abbr  CRC
rel   colonoscopy
narr  colonic adenocarcinoma
broad carcinoma  # model
sib   non-small cell cancer  # model

= pulse oximeter | oximeter; SpO2 monitor; pulse ox
osen  lentils
shift pulse crops
sib   blood pressure monitor
sib   capnograph
brand Masimo
narr  fingertip pulse oximeter
rel   oxygen saturation
unr   puffer fish  # model
sib   electrocardiogram  # model

= ear wax removal | cerumen removal; earwax impaction treatment
jar   aural toilet
narr  microsuction
narr  ear irrigation
brand Debrox
shift leg waxing
shift car wax remover
look  earwig

= morning sickness | nausea and vomiting of pregnancy; pregnancy nausea
jar   emesis gravidarum
narr  hyperemesis gravidarum
abbr  NVP
syn   pregnancy sickness
shift morning-after pill
sib   motion sickness
sib   altitude sickness
rel   pregnancy  # model

= athlete's foot | tinea pedis; foot fungus
syn   ringworm of the foot
rel   terbinafine cream
narr  moccasin-type tinea pedis
sib   jock itch
sib   tinea capitis
shift athletic footwear

= ACE inhibitor | angiotensin-converting enzyme inhibitor; ACEI
narr  lisinopril
narr  ramipril
brand Zestril
broad antihypertensive drug
sib   angiotensin receptor blocker
sib   beta blocker
aos   ACE bandage
sib   ACE 2  # model
rel   angiotensin II  # model

= plaster cast | orthopaedic cast; fracture cast
abbr  POP cast
rel   splint
narr  short arm cast
broad immobilisation
shift cast iron skillet
shift sticking plaster
osen  drywall

@ legal
= court seal | official seal; seal of the court; court stamp
osen  sea lion
shift harbor seal
shift court shoes
narr  embossed seal
rel   certified copy
broad document authentication
unr   law enforcement  # model
broad legal seal  # model

= felony charge | felony indictment; serious criminal charge
sib   misdemeanor charge
sib   infraction
shift credit card charge
narr  class A felony
broad criminal charge
reg   indictable offence
rel   felonies  # model
rel   felony crime  # model
rel   criminal prosecutions  # model
broad crimes  # model
unr   Legal Defense Fund  # model

= not guilty verdict | acquittal; verdict of acquittal
opp   conviction
opp   guilty verdict
sib   mistrial
sib   nolle prosequi
rel   double jeopardy
narr  jury acquittal
rel   reasonable doubt

= landlord | lessor; property owner
opp   tenant
opp   renter
osen  publican
syn   landlady
narr  absentee landlord
rel   property manager
narr  buy-to-let landlord

= solicitor | lawyer; legal adviser
reg   attorney
sib   barrister
sib   paralegal
osen  canvasser
narr  family solicitor
broad legal professional
osen  solicit  # model
syn   legal counsel  # model
rel   legal advice  # model

= executor of estate | executor; personal representative; estate administrator
look  executioner
shift task executor
shift estate agent
arch  executrix
rel   probate
narr  co-executor
rel   letters testamentary
look  executives  # model
rel   estate planning  # model

= cross-examination | cross examination of a witness; questioning by opposing counsel
opp   direct examination
shift physical examination
sib   redirect examination
rel   leading question
rel   impeachment of a witness
broad witness examination

= adoption of a child | child adoption; legal adoption
shift technology adoption
osen  ratification
narr  stepparent adoption
narr  international adoption
rel   adoption agency
unr   garden shed
look  child abduction  # model

= patent attorney | patent lawyer; intellectual property attorney
shift patent leather shoes
shift patent ductus arteriosus
sib   trademark attorney
narr  chartered patent attorney
rel   patent prosecution
broad lawyer
broad legal professional  # model
sib   legal scholar  # model
unr   patent traders  # model

= bail hearing | bail application; pretrial release hearing
shift bailout package
opp   pretrial detention
sib   arraignment
reg   bond hearing
jar   recognizance
rel   surety
rel   bail conditions
unr   jihadism  # model
unr   djinns  # model
broad criminal justice system  # model

= sentence reduction | reduced sentence; sentence modification
shift run-on sentence
osen  syntax
opp   sentence enhancement
narr  commutation of sentence
rel   good time credit
jar   Rule 35 motion

= trial lawyer | litigator; trial attorney
shift clinical trial
shift free trial
sib   transactional attorney
reg   barrister
broad attorney
narr  criminal defense attorney
broad legal counsel  # model
broad legal advisor  # model

= tenancy deposit | security deposit; rental deposit; damage deposit
shift direct deposit
shift mineral deposit
osen  sediment
reg   bond
narr  pet deposit
rel   deposit protection scheme
syn   tenant deposit  # model
look  tenement deposit  # model

= probation officer | probation agent; community corrections officer
shift probationary period
osen  trainee
sib   correctional officer
reg   offender manager
narr  juvenile probation officer
rel   community supervision
sib   bail judge  # model
look  probabilism  # model

= legal brief | appellate brief; written legal argument
osen  underwear
shift boxer briefs
shift legal pad
narr  amicus brief
narr  reply brief
rel   memorandum of law
jar   factum
broad legal document  # model
unr   legal aid  # model
broad legal writing  # model

= writ of mandamus | mandamus; order to a public official
sib   writ of certiorari
sib   writ of prohibition
sib   habeas corpus
rel   judicial review  # model
narr  peremptory writ of mandamus
broad prerogative writ
broad legal writs  # model
unr   legal dictionaries  # model

= ruling | court ruling; judicial decision; judgment
shift ruling party
shift ruled paper
osen  governing
reg   judgement
narr  summary judgment
narr  interlocutory order
broad decision

= stay of execution | suspension of execution; reprieve
shift hotel stay
shift code execution
osen  lodging
jar   supersedeas
rel   clemency
narr  stay of execution pending appeal

@ ecommerce
= bass guitar | electric bass; four-string bass
shift largemouth bass
osen  subwoofer
sib   electric guitar
brand Fender Precision Bass
narr  fretless bass
rel   bass amplifier
broad string instrument
look  bosses  # model
broad guitar  # model

= Nike Air Max | Nike Air Max sneakers; Air Max trainers
sib   Adidas Ultraboost
sib   Air Jordan
shift Nike of Samothrace
narr  Air Max 90
narr  Air Max 270
broad Nike shoes
unr   nail-biting  # model
unr   Walmart  # model
unr   Samsung Galaxy S7  # model
broad Nike  # model

= flat pack furniture | ready-to-assemble furniture; self-assembly furniture; RTA furniture
osen  apartment
shift flat share
opp   fully assembled furniture
aos   road traffic accident
reg   knock-down furniture
abbr  KD furniture
brand IKEA furniture
narr  flat pack wardrobe
rel   Allen key
shift flatware  # model

= KitchenAid stand mixer | KitchenAid mixer; KitchenAid Artisan
sib   Kenwood Chef
sib   hand mixer
shift DJ mixer
osen  tonic water
brand stand mixer
narr  KitchenAid Professional 600
narr  tilt-head stand mixer
rel   dough hook
look  Kitchen Aide  # model

= Sellotape | sticky tape; adhesive tape
reg   Scotch tape
brand transparent tape
rel   tape dispenser
sib   duct tape
sib   masking tape
shift cassette tape
shift measuring tape
look  selling tape  # model
unr   marketing  # model

= jumper cables | booster cables; jump leads
osen  sweater
shift knitted jumper
shift show jumper
sib   tow rope
rel   portable jump starter
narr  heavy-duty jumper cables
broad car accessories

= coffee grinder | coffee mill; burr grinder
shift angle grinder
sib   meat grinder
osen  submarine sandwich
narr  blade grinder
narr  conical burr grinder
brand Baratza Encore
sib   espresso machine  # model
unr   cupcake machine  # model
syn   coffee grinding machines  # model

= dress shirt | button-down shirt; formal shirt
sib   polo shirt
sib   t-shirt
shift dress rehearsal
reg   business shirt
narr  French cuff shirt
narr  Oxford shirt
osen  dresses  # model
sib   trousers  # model
sib   suit  # model

= phone charger | mobile phone charger; charging adapter; USB charger
shift Dodge Charger
sib   laptop charger
sib   EV charger
reg   cell phone charger
narr  wall charger
narr  fast charger
rel   charging cable
syn   phone charging devices  # model

= mouse pad | mousepad; mouse mat
osen  rodent
shift mousetrap
shift notepad
narr  gaming mouse pad
narr  mouse pad with wrist rest
broad computer accessories

= baby bottle | feeding bottle; infant bottle
sib   sippy cup
sib   water bottle
shift baby carrots
narr  anti-colic bottle
narr  glass baby bottle
brand Tommee Tippee bottle
rel   bottle teat
unr   sugars  # model

= wool socks | woollen socks; merino socks
reg   woolen socks
narr  ragg wool socks
broad hosiery
sib   cotton socks
shift steel wool
shift windsock
rel   merino  # model

= AirPods | Apple wireless earbuds; Apple earphones
sib   Galaxy Buds
sib   Pixel Buds
shift coffee pods
brand true wireless earbuds
narr  AirPods Pro
rel   charging case
look  AirDrops  # model
unr   mango  # model

= delivery charge | shipping fee; delivery fee; postage
osen  accusation
shift delivery room
shift criminal charge
opp   free delivery
reg   postage and packing
abbr  P&P
look  P&L
abbr  S&H
jar   carriage
syn   shipping charges  # model
syn   charge for delivery  # model
unr   Google Shopping  # model

= chest of drawers | dresser; tallboy
osen  thorax
osen  knickers
shift chest X-ray
sib   wardrobe
reg   bureau
jar   commode
reg   highboy
broad bedroom storage furniture
unr   shoplifters  # model

= return label | prepaid return label; return shipping label
shift record label
shift tax return
shift return on investment
rel   RMA number
narr  QR code return label
rel   returns portal

= sandals | open-toed shoes; summer sandals
sib   clogs
look  sandalwood
look  scandals
opp   closed-toe shoes
narr  gladiator sandals
narr  flip flops
narr  huaraches
broad footwear
look  sand  # model

= screen protector | tempered glass protector; display protector
shift sunscreen
shift screen door
sib   phone case
narr  privacy screen protector
narr  matte screen protector
brand ZAGG InvisibleShield
syn   screen protection  # model
look  screener  # model
unr   Adderall  # model
"""
