"""Hand-written labelled rows for data/drift/train.jsonl (medical, legal, e-commerce).

Format (parsed by scripts/build_drift_labels.py):
    @ domain
    = query | expected term; expected term; ...
    code  candidate term
Codes, not drift: syn (synonym), rel (related: broader, narrower or closely related),
abbr (abbreviation), jar (domain jargon), arch (archaic or dated synonym).
Codes, drift: look (look-alike spelling, unrelated meaning), shift (a compound or
modifier that changes the sense), opp (opposite), aos (an abbreviation expanded in
another sense), unr (plainly unrelated).
Written from domain knowledge; no query here may appear in the held-out file.
"""

ROWS = """
@ medical
= myocardial infarction | heart attack; acute myocardial infarction; MI
abbr  AMI
abbr  STEMI
rel   acute coronary syndrome
rel   coronary thrombosis
shift panic attack
aos   Michigan
unr   garden hose

= hypertension | high blood pressure; HTN
syn   arterial hypertension
rel   essential hypertension
jar   elevated BP
opp   hypotension
look  hypertonia
look  hyperextension
unr   swimming pool

= tachycardia | rapid heart rate; fast heartbeat
rel   sinus tachycardia
rel   supraventricular tachycardia
abbr  SVT
opp   bradycardia
look  tachometer
unr   wedding dress

= multiple sclerosis | MS; demyelinating disease
arch  disseminated sclerosis
abbr  RRMS
rel   relapsing-remitting multiple sclerosis
aos   Microsoft
aos   mass spectrometry
shift systemic sclerosis
look  scoliosis
unr   tax return

= tuberculosis | TB; Mycobacterium tuberculosis infection
arch  consumption
arch  phthisis
arch  white plague
rel   pulmonary tuberculosis
rel   latent tuberculosis
aos   terabyte
look  tuberosity
unr   chocolate cake

= edema | swelling; fluid retention
arch  dropsy
syn   oedema
rel   peripheral edema
rel   pitting edema
look  enema
unr   parking ticket

= gastroesophageal reflux disease | GERD; acid reflux
abbr  GORD
rel   heartburn
rel   reflux esophagitis
jar   pyrosis
shift vesicoureteral reflux
unr   mountain bike

= cerebrovascular accident | stroke; CVA; brain attack
arch  apoplexy
rel   ischemic stroke
rel   transient ischemic attack
abbr  TIA
shift heat stroke
shift breaststroke
aos   costovertebral angle
unr   fishing rod

= anaemia | anemia; low red blood cell count
rel   iron deficiency anaemia
arch  chlorosis
jar   low Hb
opp   polycythaemia
look  anomia
unr   hiking boots

= hyperglycemia | high blood sugar; elevated blood glucose
rel   diabetes mellitus
rel   diabetic ketoacidosis
opp   hypoglycemia
look  hyperglycinemia
unr   roller coaster

= hyperthyroidism | overactive thyroid gland; thyrotoxicosis
rel   Graves' disease
rel   toxic multinodular goitre
opp   hypothyroidism
look  hyperparathyroidism
unr   sunflower

= epilepsy | seizure disorder; recurrent seizures
arch  falling sickness
rel   grand mal seizure
rel   focal epilepsy
rel   status epilepticus
shift seizure of assets
unr   pancake

= influenza | flu; influenza virus infection
arch  grippe
rel   seasonal flu
rel   avian influenza
shift stomach flu
look  influencer
unr   stock exchange

= atrial fibrillation | AF; irregular heartbeat
abbr  AFib
rel   atrial flutter
rel   arrhythmia
aos   Air Force
unr   coffee mug

= chronic kidney disease | CKD; chronic renal failure
rel   end-stage renal disease
abbr  ESRD
jar   renal insufficiency
opp   acute kidney injury
unr   ice cream

= pulmonary embolism | PE; lung blood clot
rel   deep vein thrombosis
abbr  DVT
rel   venous thromboembolism
aos   physical education
aos   price-to-earnings ratio
unr   rainbow

= rheumatoid arthritis | RA; inflammatory arthritis
rel   rheumatoid disease
rel   autoimmune arthritis
look  rheumatic fever
aos   resident assistant
unr   soup kitchen

= osteoarthritis | degenerative joint disease; OA
syn   wear and tear arthritis
rel   knee osteoarthritis
aos   open access
look  osteoporosis
look  osteomyelitis
unr   zebra

= syphilis | Treponema pallidum infection; sexually transmitted infection
arch  the pox
arch  lues
arch  great pox
rel   neurosyphilis
look  syphon
unr   birthday cake

= jaundice | icterus; yellowing of the skin
rel   hyperbilirubinemia
rel   neonatal jaundice
shift jaundiced view
unr   penguin

= low back pain | lumbago; lower back ache
rel   sciatica
rel   lumbar strain
abbr  LBP
shift low back dress
unr   jazz music

= malaria | Plasmodium infection
arch  ague
arch  marsh fever
rel   falciparum malaria
look  mania
unr   skateboard

= urinary tract infection | UTI; bladder infection
rel   cystitis
rel   pyelonephritis
rel   dysuria
unr   sports car

= congestive heart failure | CHF; heart failure
rel   left ventricular failure
rel   pulmonary edema
aos   Swiss franc
rel   cardiomyopathy
unr   guitar

= emergency department | ED; emergency room; ER
syn   accident and emergency
abbr  A&E
rel   triage
aos   erectile dysfunction
aos   estrogen receptor
unr   real estate agent

= physical therapy | PT; physiotherapy
rel   rehabilitation
rel   occupational therapy
aos   prothrombin time
aos   Portugal
unr   cheese platter

= schizophrenia | psychotic disorder
arch  dementia praecox
rel   paranoid schizophrenia
rel   psychosis
look  schizandra
unr   volcano

= rabies | rabies virus infection; lyssavirus infection
arch  hydrophobia
rel   post-exposure prophylaxis
look  rabbis
look  babies
unr   football stadium

= scurvy | vitamin C deficiency; ascorbic acid deficiency
rel   hypovitaminosis C
look  scurry
look  curvy
unr   strawberry jam

= gout | gouty arthritis; hyperuricemia
arch  podagra
rel   tophi
rel   uric acid crystals
look  grout
look  goat
unr   wallpaper

= stat | immediately; urgently
jar   statim
syn   right away
aos   statistics
unr   gardening gloves

= coronary artery bypass graft | CABG; heart bypass surgery
rel   coronary revascularization
rel   percutaneous coronary intervention
abbr  CABG surgery
shift gastric bypass
shift bypass road
unr   tennis racket

= type 2 diabetes mellitus | type 2 diabetes; T2DM; adult-onset diabetes
arch  non-insulin-dependent diabetes
abbr  NIDDM
abbr  DM2
rel   insulin resistance
shift diabetes insipidus
unr   sofa cushion

= dyspnea | breathlessness; shortness of breath; SOB
jar   air hunger
rel   orthopnea
rel   exertional dyspnea
syn   dyspnoea
look  dyspepsia
look  dysphagia
unr   bread knife

= hypothermia | low body temperature; dangerously low body temperature
opp   hyperthermia
rel   cold exposure
rel   frostbite
look  hypodermic needle
unr   jigsaw puzzle

= do not resuscitate order | DNR order; no-CPR order
jar   no code
jar   allow natural death
rel   advance directive
opp   full code
aos   Department of Natural Resources
unr   ironing board

= prostate-specific antigen test | PSA test; PSA screening
rel   prostate cancer screening
rel   digital rectal examination
aos   public service announcement
unr   sandcastle bucket

= idiopathic | of unknown cause; cause unknown
jar   cryptogenic
jar   essential
look  idiotic
look  idiom
unr   hatchback

= varicella | chickenpox; varicella-zoster virus infection
abbr  VZV
rel   shingles
rel   varicella vaccine
shift smallpox
look  vanilla
unr   lawn chair

= intravenous | IV; into a vein
abbr  i.v.
rel   intravenous drip
rel   infusion
aos   Roman numeral four
unr   beach towel

@ legal
= tort | civil wrong; tort law
rel   negligence
rel   personal injury claim
rel   intentional tort
look  torte
look  tart
unr   bicycle

= negligence | breach of duty of care; carelessness
rel   gross negligence
rel   comparative negligence
rel   duty of care
jar   culpa
look  negligee
unr   strawberry

= libel | written defamation; defamation
rel   slander
rel   defamatory statement
look  label
unr   solar panel

= plaintiff | claimant; complainant
rel   petitioner
opp   defendant
opp   respondent
look  plaintive
unr   birdhouse

= burglary | breaking and entering; unlawful entry
arch  housebreaking
rel   home invasion
rel   criminal trespass
rel   larceny
unr   pineapple

= felony | serious crime; indictable offence
rel   felony charge
rel   aggravated felony
jar   indictable offense
unr   garden gnome

= civil court | civil division; trial court
rel   small claims division
rel   county court
shift tennis court
shift food court
shift court jester
unr   kite

= lawsuit | legal action; civil action; litigation
syn   suit at law
rel   complaint
rel   class action
shift swimsuit
shift business suit
unr   peanut butter

= legal counsel | attorney; lawyer; legal adviser
rel   solicitor
rel   barrister
jar   counsel of record
look  city council
look  council tax
unr   snow globe

= court hearing | hearing; court proceeding
rel   preliminary hearing
rel   arraignment
shift hearing aid
shift hearing loss
unr   cappuccino

= legal appeal | appellate review; appeal to a higher court
rel   notice of appeal
rel   writ of certiorari
jar   cert petition
shift curb appeal
shift sex appeal
unr   dolphin

= motion to dismiss | dismissal motion; motion for dismissal
jar   12(b)(6) motion
jar   demurrer
rel   summary judgment
shift motion sickness
shift slow motion
unr   marble countertop

= criminal trial | prosecution; criminal proceedings
rel   jury trial
rel   bench trial
shift clinical trial
shift free trial
unr   oatmeal

= assault and battery | battery; physical assault
rel   aggravated assault
rel   simple assault
shift car battery
shift AA battery
unr   lighthouse

= bail bond | bail; surety bond
jar   bondsman
jar   ROR
rel   pretrial release
shift James Bond
shift chemical bond
look  bale of hay
unr   accordion

= lease agreement | tenancy agreement; rental agreement; lease
jar   demise
rel   sublease
look  leash
unr   canoe

= lessee | tenant; leaseholder
rel   sublessee
opp   lessor
opp   landlord
look  lessen
unr   broccoli

= easement | right of way; servitude
rel   prescriptive easement
rel   right of access
look  basement
unr   trumpet

= power of attorney for health care | health care proxy; medical power of attorney
rel   durable power of attorney
abbr  POA
jar   advance directive
aos   plan of action
unr   waffle iron

= intellectual property | IP; IP rights
rel   copyright
rel   trade secret
rel   patent
aos   Internet Protocol
aos   IP address
unr   grapefruit

= temporary restraining order | TRO; restraining order; protective order
rel   preliminary injunction
jar   ex parte order
shift restraining straps
unr   dishwasher

= excessive force claim | police misconduct claim; civil rights claim
jar   section 1983 claim
jar   Bivens action
jar   qualified immunity
rel   police misconduct
unr   hot air balloon

= legal guardianship | guardianship; guardian of a minor
jar   conservatorship
rel   ward
rel   custody
rel   guardian ad litem
shift guardian angel
unr   flower pot

= intestate succession | intestacy; dying without a will
rel   heirs at law
rel   probate
jar   laws of descent and distribution
opp   testate succession
look  interstate succession
unr   sandcastle

= perjury | lying under oath; false testimony
arch  false swearing
rel   subornation of perjury
rel   obstruction of justice
look  perfumery
unr   octopus

= embezzlement | misappropriation of funds; theft by an employee
jar   defalcation
jar   peculation
rel   fraud
rel   white-collar crime
look  embellishment
unr   sailboat

= alimony | spousal support; maintenance
rel   palimony
rel   separate maintenance
look  acrimony
look  alimentary canal
unr   skateboard ramp

= habeas corpus | writ of habeas corpus; challenge to unlawful detention
rel   unlawful detention
rel   post-conviction relief
shift corpus callosum
shift text corpus
unr   carousel

= precedent | case law; judicial precedent
jar   stare decisis
rel   binding authority
look  president
opp   case of first impression
unr   basketball hoop

= statute | legislation; act; enacted law
rel   statutory law
rel   code section
look  statue
look  stature
unr   bubble wrap

= accessibility lawsuit | ADA claim; disability discrimination claim
rel   Americans with Disabilities Act
jar   Title III claim
rel   reasonable accommodation
aos   American Dental Association
unr   lemonade stand

= eminent domain | compulsory purchase; condemnation
jar   taking
rel   just compensation
rel   expropriation
shift domain name
shift public domain
unr   scuba diving

= employer liability | vicarious liability; respondeat superior
rel   employer responsibility
rel   workplace injury liability
opp   employee liability
unr   kite festival

= creditor | lender; obligee
rel   secured creditor
rel   judgment creditor
opp   debtor
opp   obligor
unr   planetarium

= acquittal | not guilty verdict; exoneration
rel   directed verdict
rel   dismissal of charges
opp   conviction
opp   guilty verdict
look  acquittance
unr   cupcake

= mortgagor | borrower; homeowner
rel   mortgage
opp   mortgagee
opp   lender
unr   harmonica

= limited liability company | LLC; limited company
abbr  Ltd
rel   corporation
jar   pass-through entity
shift limited edition
unr   jam jar

= district attorney | DA; public prosecutor
rel   assistant district attorney
abbr  ADA
jar   the People
opp   defense attorney
opp   public defender
unr   ferris wheel

= pro bono | free legal services; pro bono publico
rel   legal aid
rel   public interest law
shift Bono (singer)
unr   paint thinner

= prima facie case | prima facie evidence; sufficient evidence to proceed
rel   burden of production
rel   rebuttable presumption
look  prima donna
unr   hamster wheel

= voir dire | jury selection; juror questioning
rel   peremptory challenge
rel   challenge for cause
jar   venire
unr   cinnamon roll

= chapter 7 bankruptcy | liquidation bankruptcy; straight bankruptcy
jar   means test
rel   bankruptcy discharge
rel   bankruptcy trustee
shift chapter 7 of a novel
unr   hedgehog

= juvenile court | youth court; children's court
rel   juvenile delinquency
jar   adjudication of delinquency
shift juvenile hormone
unr   soda fountain

= testamentary trust | trust created by will; trust under a will
rel   trustee
rel   estate plan
opp   inter vivos trust
opp   living trust
unr   raspberry

= sole custody | full custody; exclusive custody
rel   primary physical custody
rel   sole legal custody
opp   joint custody
shift police custody
unr   water slide

= contempt of court | contempt; disobeying a court order
rel   civil contempt
rel   criminal contempt
shift contempt for authority
unr   pumpkin pie

= hearsay | out-of-court statement; hearsay evidence
jar   hearsay exception
jar   dying declaration
look  heresy
unr   kayak

= mens rea | criminal intent; guilty mind
jar   scienter
jar   malice aforethought
rel   actus reus
unr   curling iron

= tenancy in common | co-ownership; TIC
rel   joint tenancy
rel   undivided interest
aos   tic disorder
unr   tuba

@ ecommerce
= running shoes | running sneakers; trainers; jogging shoes
rel   trail running shoes
rel   athletic shoes
syn   runners
shift running water
shift running nose
unr   tax attorney

= couch | sofa; settee
arch  davenport
arch  chesterfield
rel   loveseat
rel   sectional
shift couch potato
unr   pneumonia

= refrigerator | fridge; fridge freezer
arch  icebox
rel   mini fridge
rel   chest freezer
unr   violin

= record player | turntable; vinyl player
arch  gramophone
arch  phonograph
rel   vinyl records
shift criminal record
shift world record
unr   hedge trimmer

= raincoat | rain jacket; waterproof jacket
arch  mackintosh
abbr  mac
rel   poncho
rel   anorak
unr   cough syrup

= suitcase | luggage; travel bag
arch  valise
arch  portmanteau
rel   carry-on bag
rel   hard shell luggage
shift court case
unr   tulip bulbs

= eyeglasses | glasses; prescription glasses
arch  spectacles
rel   reading glasses
rel   frames
shift wine glasses
shift glass jars
unr   car insurance

= handbag | purse; shoulder bag
arch  pocketbook
rel   tote bag
rel   clutch bag
shift punching bag
shift sleeping bag
unr   orthodontist

= wireless mouse | cordless mouse; bluetooth mouse
rel   computer mouse
rel   mouse pad
shift mousetrap
shift field mouse
unr   bird seed

= bed sheets | bedsheets; sheet set; bed linen
rel   fitted sheet
rel   duvet cover
shift spreadsheets
shift sheet music
unr   asphalt

= blender | smoothie maker; countertop blender
rel   immersion blender
rel   food processor
shift blender 3d software
unr   parking garage

= electric kettle | kettle; water boiler
rel   tea kettle
rel   hot water dispenser
shift kettlebell
shift kettle drum
unr   lawn mower blade

= bluetooth speaker | wireless speaker; portable speaker
rel   smart speaker
rel   soundbar
shift keynote speaker
shift public speaker
unr   crab legs

= laptop stand | laptop riser; notebook stand
rel   monitor stand
rel   desk organizer
shift taxi stand
shift stand-up comedy
unr   scrambled eggs

= solid state drive | SSD; flash storage
rel   NVMe drive
rel   external hard drive
aos   social security disability
shift solid state physics
shift test drive
unr   knitting yarn

= memory upgrade | RAM; memory module
jar   DIMM
rel   DDR4 memory
aos   Dodge Ram
aos   male sheep
shift memory foam
shift memory loss
unr   garden shed

= air conditioner | AC unit; air conditioning; air con
rel   portable air conditioner
rel   window unit
aos   alternating current
opp   space heater
unr   poetry book

= stationery | writing paper; office supplies
rel   envelopes
rel   notebooks
look  stationary bike
look  stationary
unr   fire truck

= cash on delivery | COD; pay on delivery
rel   payment on delivery
aos   cod fish
aos   cod liver oil
opp   prepaid order
unr   bowling ball

= stock keeping unit | SKU; product code
rel   item number
rel   UPC
rel   barcode
look  skew
unr   hamster

= free shipping | free delivery; no shipping charge
rel   shipping cost
rel   free returns
opp   shipping surcharge
shift free speech
unr   trombone

= overcharged order | overcharge; billing error
rel   price discrepancy
rel   refund request
opp   undercharge
look  overcharged battery
unr   compost bin

= out of stock | sold out; unavailable
jar   backorder
abbr  OOS
rel   restock notification
opp   in stock
unr   giraffe

= return policy | returns and refunds; refund policy
jar   RMA
jar   restocking fee
rel   exchange policy
shift tax return
shift return key
unr   snorkel

= disputed charge | payment dispute; card dispute
jar   chargeback
rel   refund claim
rel   billing dispute
shift electric charge
shift criminal charge
unr   peacock feather

= buy one get one free | BOGO; two for one
rel   multi-buy offer
rel   bundle deal
opp   full price
unr   lighthouse keeper

= winter coat | parka; puffer jacket
rel   down jacket
rel   overcoat
shift coat of paint
shift coat of arms
unr   stethoscope

= dress | frock; gown
rel   maxi dress
rel   cocktail dress
shift dress code
shift salad dressing
unr   jigsaw

= mirror | looking glass; wall mirror
rel   vanity mirror
rel   full-length mirror
shift mirror neuron
unr   hand saw

= bedroom dresser | chest of drawers; bureau
rel   nightstand
rel   wardrobe
shift hair dresser
shift window dresser
unr   bananas

= bicycle | bike; cycle
arch  velocipede
rel   mountain bike
rel   road bike
shift bicycle kick
unr   pressure cooker pot

= apple iphone | iPhone; Apple smartphone
rel   smartphone
rel   iOS device
shift apple pie
shift Granny Smith apple
unr   hammock
= buy now pay later | BNPL; pay in instalments
jar   pay in 4
rel   instalment plan
opp   pay upfront
unr   tractor

= universal product code | UPC; barcode
abbr  EAN
abbr  GTIN
rel   product identifier
unr   seahorse

= direct to consumer | DTC; D2C
rel   online store
rel   brand webshop
aos   Depository Trust Company
unr   paper mill

= customer reviews | product reviews; ratings
abbr  UGC
rel   star rating
shift performance review
unr   kidney bean

= order confirmation | purchase confirmation; order receipt
rel   confirmation email
jar   order ID
shift confirmation sacrament
unr   snowplough

= wireless earbuds | true wireless earbuds; bluetooth earphones
abbr  TWS earbuds
rel   noise cancelling headphones
shift cotton buds
unr   pitchfork

= vacuum flask | thermos; insulated bottle
jar   Dewar flask
rel   travel mug
shift vacuum cleaner
unr   garden gnome statue

= extra large | XL; size XL
rel   plus size
opp   extra small
aos   Roman numeral forty
unr   oyster

= sweater | jumper; pullover
rel   guernsey
rel   cardigan
look  sweeter
look  sweatshop
unr   sundial

= dishwasher | dishwashing machine; dish washer
rel   dishwasher tablets
shift dishwasher (kitchen worker)
unr   trampoline
@ ecommerce
= frying pan | skillet; fry pan
rel   wok
rel   griddle
shift pan flute
unr   harmonica

= overcoat | greatcoat; winter overcoat
rel   trench coat
rel   topcoat
arch  ulster
shift coat of arms
unr   stapler

= slippers | house shoes; carpet slippers
rel   moccasins
rel   mules
shift slippery slope
unr   ping pong ball

= scarf | muffler; neck scarf
rel   shawl
rel   bandana
jar   stole
shift scarf joint
unr   toaster

= sideboard | buffet; credenza
rel   hutch
rel   cabinet
arch  chiffonier
look  sideburns
unr   kayak paddle

= saucepan | cooking pot; pot
rel   stockpot
rel   casserole
jar   bain-marie
shift jackpot
unr   tennis net

= binoculars | field glasses; opera glasses
rel   monocular
rel   telescope
arch  spyglass
shift bifocals
unr   pillowcase

= pajamas | pyjamas; sleepwear; nightwear
jar   jammies
rel   nightgown
rel   nightshirt
unr   leaf blower

@ medical
= nephritis | kidney inflammation; inflamed kidneys
rel   glomerulonephritis
rel   pyelonephritis
arch  Bright's disease
look  neuritis
look  nephrite
unr   bicycle pump

= cholecystitis | gallbladder inflammation; inflamed gallbladder
rel   cholelithiasis
rel   biliary colic
unr   tambourine

= laryngitis | voice box inflammation; hoarse voice
rel   croup
rel   pharyngitis
unr   lawn chair

= gingivitis | gum disease; inflamed gums
rel   periodontitis
rel   plaque
arch  pyorrhea
look  gingerbread
shift chewing gum
unr   snow globe

= migraine | severe headache; migraine headache
rel   aura
rel   cluster headache
arch  megrim
look  migrant
unr   garden trowel

@ legal
= bailiff | court officer; sheriff's officer
rel   marshal
jar   tipstaff
rel   court usher
unr   watering can

= affidavit | sworn statement; sworn declaration
rel   jurat
rel   oath
rel   statutory declaration
unr   swimming goggles

= codicil | will amendment; amendment to a will
rel   last will and testament
rel   testamentary document
unr   kite string
"""
