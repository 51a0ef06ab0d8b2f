"""Hand-written held-out rows for data/drift/heldout.jsonl (medical, legal, e-commerce).

Written from domain knowledge, not drawn from WordNet (WordNet relations are features of
the drift combiner, so rows built from them would flatter it). No query here may appear
in train.jsonl. Format and codes as in scripts/drift_hand_train.py.
"""

ROWS = """
@ medical
= pneumonia | lung infection; pneumonitis
rel   community-acquired pneumonia
rel   lobar pneumonia
abbr  CAP
jar   consolidation on chest x-ray
arch  lung fever
look  pneumatic drill
unr   picnic blanket

= bronchitis | inflammation of the bronchi; chest infection
rel   acute bronchitis
rel   chronic obstructive pulmonary disease
jar   productive cough
look  bronco
look  bronze medal
unr   wedding cake

= appendicitis | inflamed appendix; acute appendicitis
syn   inflammation of the appendix
rel   appendectomy
rel   McBurney's point tenderness
rel   right lower quadrant pain
shift appendix of a book
shift appendix in a contract
unr   electric guitar

= hypothyroidism | underactive thyroid; low thyroid function
syn   underactive thyroid gland
rel   Hashimoto's thyroiditis
rel   levothyroxine
arch  myxedema
opp   hyperthyroidism
look  hypoparathyroidism
unr   ski resort

= hypoglycemia | low blood glucose; hypoglycaemia
syn   low blood sugar
rel   insulin shock
rel   diabetic hypoglycemia
opp   hyperglycaemia
look  hypoglossal nerve
unr   beach umbrella

= bradycardia | slow heart rate; slow heartbeat
syn   slow pulse
rel   sinus bradycardia
rel   heart block
opp   tachyarrhythmia
look  bradykinesia
unr   bookshelf

= hypotension | low blood pressure; low BP
syn   low arterial pressure
rel   orthostatic hypotension
rel   postural hypotension
opp   hypertension
look  hypothesis
unr   golf course

= peptic ulcer | stomach ulcer; gastric ulcer; duodenal ulcer
abbr  PUD
rel   Helicobacter pylori infection
rel   gastritis
shift ulcerative colitis
shift mouth ulcer
unr   yoga mat

= cirrhosis | liver cirrhosis; hepatic fibrosis
syn   scarring of the liver
rel   end-stage liver disease
rel   alcoholic liver disease
rel   portal hypertension
look  psoriasis
look  sclerosis
unr   car wash

= septicemia | sepsis; blood poisoning
rel   septic shock
rel   bacteremia
shift septic tank
unr   toothpaste

= melanoma | malignant melanoma; skin cancer
rel   basal cell carcinoma
rel   atypical mole
abbr  MM
aos   multiple myeloma
unr   vending machine

= psoriasis | plaque psoriasis; psoriatic skin disease
rel   psoriatic arthritis
rel   scaly skin plaques
look  psychosis
unr   chess board

= glaucoma | glaucomatous optic neuropathy; glaucoma eye disease
rel   raised intraocular pressure
rel   open-angle glaucoma
rel   ocular hypertension
abbr  IOP
look  carcinoma
look  glaucous gull
unr   kitchen sink

= insomnia | sleeplessness; difficulty sleeping
syn   inability to sleep
rel   sleep deprivation
rel   sleep onset insomnia
jar   initial insomnia
opp   hypersomnia
unr   lawnmower

= Parkinson's disease | Parkinson disease; parkinsonism; PD
arch  shaking palsy
arch  paralysis agitans
rel   resting tremor
aos   police department
aos   pupillary distance
unr   chocolate fountain

= Alzheimer's disease | Alzheimer disease; dementia; AD
arch  senile dementia
rel   cognitive decline
rel   memory loss
aos   advertisement
aos   anno Domini
unr   motorbike

= angina pectoris | angina; chest pain from ischemia
rel   stable angina
rel   unstable angina
rel   coronary artery disease
shift Ludwig's angina
shift Vincent's angina
unr   bird feeder

= hepatitis | liver inflammation; viral hepatitis
syn   hepatic inflammation
rel   hepatitis B
rel   hepatitis C
abbr  HBV
look  hepatica
unr   tent peg

= smallpox | variola; variola major
arch  the speckled monster
rel   smallpox vaccine
rel   vaccinia
shift chickenpox
unr   ping pong table

= concussion | mild traumatic brain injury; mTBI
rel   traumatic brain injury
rel   post-concussion syndrome
abbr  TBI
look  percussion
look  concession stand
unr   paint roller

= gallstones | cholelithiasis; biliary calculi
syn   gallbladder stones
rel   biliary colic
rel   cholecystitis
jar   calculous cholecystitis
look  gall wasp
unr   mouth organ

= inguinal hernia | groin hernia; hernia
rel   hernia repair
rel   femoral hernia
unr   bread maker

= leprosy | Hansen's disease; Mycobacterium leprae infection
rel   lepromatous leprosy
rel   tuberculoid leprosy
look  leopard
look  lepidoptera
unr   salad spinner

= otitis media | middle ear infection; ear infection
abbr  AOM
rel   glue ear
rel   ear effusion
shift social media
unr   treadmill

= nausea | feeling sick; queasiness
rel   vomiting
rel   emesis
arch  qualm
rel   motion sickness
shift Nausea (Sartre novel)
unr   desk lamp

= benign prostatic hyperplasia | BPH; enlarged prostate
rel   prostate enlargement
rel   lower urinary tract symptoms
abbr  LUTS
shift benign paroxysmal positional vertigo
unr   pizza oven

= amyotrophic lateral sclerosis | ALS; motor neurone disease
syn   Lou Gehrig's disease
abbr  MND
aos   advanced life support
rel   progressive muscular atrophy
unr   dog leash

= pro re nata | as needed; PRN
jar   when required
rel   on demand dosing
aos   pseudo random number
unr   sunglasses case

= subcutaneous injection | SC injection; subcut injection
abbr  SQ injection
rel   insulin injection
aos   South Carolina
unr   surfboard

= hyperkalemia | high potassium; elevated serum potassium
opp   hypokalemia
rel   potassium level
rel   peaked T waves
look  hyperkeratosis
unr   carpet cleaner

= tachypnea | rapid breathing; fast breathing
opp   bradypnea
rel   respiratory distress
look  tachyon
unr   sewing machine

= hyperopia | farsightedness; long-sightedness
opp   myopia
rel   presbyopia
look  hyperbole
unr   parking meter

= lumbar puncture | spinal tap; LP
rel   cerebrospinal fluid analysis
aos   long-playing record
shift tap water
unr   fruit bowl

= electrocardiogram | ECG; EKG
rel   Holter monitor
rel   12-lead ECG
look  electroencephalogram
unr   garden trowel

= chronic fatigue syndrome | CFS; myalgic encephalomyelitis; ME
jar   post-exertional malaise
aos   cubic feet per second
aos   mechanical engineering
unr   skipping rope

= writer's cramp | focal hand dystonia; task-specific dystonia
arch  scrivener's palsy
shift writer's block
shift stomach cramp
unr   paper shredder

= tetanus | Clostridium tetani infection; tetanus infection
arch  lockjaw
rel   tetanus shot
look  tetany
unr   hockey stick

@ legal
= defendant | accused; respondent
rel   co-defendant
jar   the defense
opp   plaintiff
opp   prosecutor
look  descendant
unr   coconut

= testimony | sworn statement; evidence given under oath
syn   sworn testimony
rel   deposition
rel   witness statement
rel   affidavit
shift testimonial advertisement
shift testimony of faith
unr   cake stand

= larceny | theft; stealing
arch  thievery
rel   grand larceny
rel   petty larceny
rel   shoplifting
unr   bus stop

= fraud | deception; fraudulent misrepresentation
syn   deceit
rel   wire fraud
rel   securities fraud
jar   scienter
look  Freud
unr   cornflakes

= child support | child maintenance; support payments
rel   child support enforcement
rel   custody order
jar   support order
shift technical support
shift lumbar support
unr   squash racket

= annulment | nullity of marriage; declaration of nullity
rel   void marriage
rel   voidable marriage
look  annual meeting
unr   toaster

= manslaughter | unlawful killing without malice; culpable homicide
rel   involuntary manslaughter
rel   voluntary manslaughter
rel   homicide
unr   ice rink

= extradition | surrender of a fugitive; interstate rendition
rel   extradition treaty
rel   fugitive warrant
jar   rendition
look  extra edition
look  tradition
unr   bouncy castle

= money laundering | laundering the proceeds of crime; concealing illicit funds
rel   structuring deposits
rel   anti-money laundering
abbr  AML
shift laundry detergent
shift laundromat
unr   rocking chair

= wrongful death | wrongful death claim; wrongful death lawsuit
rel   survival action
rel   loss of consortium
shift death metal
shift death star
unr   bowling alley

= insider trading | trading on material nonpublic information; securities fraud
jar   MNPI
rel   Rule 10b-5
rel   tipping
shift inside joke
shift trading cards
unr   flip chart

= paternity | fatherhood; legal fatherhood
rel   paternity test
rel   acknowledgment of paternity
jar   filiation
opp   maternity
look  paternoster
unr   rubber duck

= mechanics lien | construction lien; materialman's lien
rel   lien waiver
rel   property lien
look  lean meat
look  loin chop
unr   hula hoop

= deposition | sworn out-of-court testimony; examination before trial
abbr  EBT
rel   discovery
rel   court reporter
shift deposition of sediment
shift vapor deposition
unr   paper airplane

= summons | writ of summons; court summons
rel   service of process
rel   citation
look  summit meeting
unr   accordion player

= notary public | notary; commissioner of oaths
rel   notarization
rel   acknowledgment
look  rotary club
unr   camping stove

= subrogation | substitution of creditor; insurer's right of recovery
rel   indemnification
jar   subrogation clause
look  interrogation
look  subordination agreement
unr   candle holder

= parole | supervised release; conditional release
syn   release on parole
rel   parole board
rel   probation
opp   incarceration
look  payroll
look  parable
unr   lemon squeezer

= arbitration | binding arbitration; alternative dispute resolution; ADR
rel   mediation
rel   arbitrator
aos   adverse drug reaction
aos   American Depositary Receipt
look  arbitrage
unr   hot tub

= indictment | grand jury indictment; formal charge
syn   bill of indictment
rel   true bill
jar   information
jar   presentment
look  indicator light
unr   piano bench

= misdemeanor | minor offense; summary offence
rel   petty offense
rel   infraction
syn   misdemeanour
look  demeanor
unr   flamingo

= adverse possession | squatter's rights; acquisitive prescription
rel   quiet title action
rel   prescriptive easement
look  adverse drug event
shift possession in basketball
unr   pie crust

= testator | maker of a will; will maker
arch  testatrix
rel   executor
rel   estate planning
opp   intestate decedent
look  testosterone
unr   pogo stick

= personal injury | PI; injury claim
rel   bodily injury
rel   compensatory damages
aos   private investigator
aos   principal investigator
aos   pi mathematical constant
unr   watercolor paint

= grantor | transferor; conveyor
rel   settlor
rel   deed of conveyance
opp   grantee
look  granite
unr   bird bath

= statutory rape | unlawful sexual intercourse with a minor; rape of a child
rel   age of consent
rel   sexual offense
look  rapeseed oil
unr   sunscreen

= miranda warning | Miranda rights; right to remain silent
rel   custodial interrogation
rel   Miranda v. Arizona
jar   Mirandize
shift Miranda Kerr
unr   waffle

= employee | worker; staff member
arch  employe
jar   W-2 employee
opp   employer
unr   kiwi fruit

= guilty plea | plea of guilty; admission of guilt
jar   nolo contendere
rel   plea agreement
opp   not guilty plea
unr   soap dish

= general counsel | GC; chief legal officer; CLO
rel   in-house counsel
aos   gas chromatography
aos   chief learning officer
unr   hot dog stand

= juris doctor | JD; law degree
rel   LL.M.
rel   bar admission
aos   John Deere
aos   Jack Daniel's
unr   beekeeping

= bequest | legacy; gift by will
jar   devise
rel   beneficiary
look  request
unr   seashell

= search warrant | warrant to search; search and seizure order
rel   probable cause
rel   Fourth Amendment
shift search engine
shift warrant officer
unr   bagel

@ ecommerce
= trainers | sneakers; athletic shoes; training shoes
syn   gym shoes
rel   basketball shoes
rel   canvas shoes
syn   kicks
shift sneaker wave
shift personal trainers
unr   tax lawyer

= sofa bed | sleeper sofa; futon
rel   pull-out couch
rel   daybed
arch  davenport bed
shift flower bed
shift river bed
unr   appendectomy

= television | TV; flat screen TV; smart TV
syn   telly
rel   4K TV
rel   OLED TV
aos   terminal velocity
look  telescope
unr   court ruling

= notebook computer | laptop; notebook
syn   portable computer
rel   ultrabook
rel   chromebook
shift notebook paper
unr   mango

= smartphone | mobile phone; cell phone
syn   mobile
rel   android phone
rel   unlocked phone
syn   handset
shift phone booth
unr   contract law

= jeans | denim jeans; denims
syn   blue jeans
arch  dungarees
rel   skinny jeans
rel   jean jacket
look  genes
look  genie
unr   sandpaper

= duvet cover | quilt cover; comforter cover
syn   doona cover
rel   pillowcase
rel   bedding set
shift manhole cover
shift cover letter
unr   harmonica case

= portable charger | power bank; battery pack
syn   external battery
rel   USB charging cable
rel   wall charger
shift Dodge Charger
shift charge sheet
unr   teapot

= USB-C cable | Type-C cable; USB cable
abbr  USB
rel   charging cable
rel   Thunderbolt cable
aos   United States Bowling Congress
look  USDA
unr   cheese grater

= LED bulbs | LED light bulbs; energy saving bulbs
rel   smart bulbs
rel   light fixtures
look  Led Zeppelin
shift tulip bulbs
shift bulb syringe
unr   hammer drill

= high definition TV | HDTV; HD television
abbr  HD
rel   1080p television
aos   Harley-Davidson
aos   Huntington's disease
unr   corkscrew

= personal computer | PC; desktop computer
rel   desktop tower
rel   workstation
aos   politically correct
aos   police constable
shift personal trainer
unr   clarinet

= gift card | gift voucher; gift certificate
syn   gift token
rel   store credit
rel   e-gift card
shift greeting card
shift red card
unr   ladder

= coupon code | promo code; discount code; voucher code
syn   discount voucher
rel   discount
rel   promotional offer
jar   promo
shift zip code
shift dress code
unr   stapler

= checkout | checkout page; payment page
rel   shopping cart
rel   payment gateway
jar   cart abandonment
shift hotel checkout time
shift check out a library book
unr   sprinkler

= drop shipping | dropshipping; direct fulfillment
rel   third-party fulfilment
rel   wholesale supplier
shift drop kick
shift shipping container
unr   tofu

= bulk discount | volume discount; quantity discount
rel   wholesale pricing
rel   tiered pricing
opp   price increase
shift bulk food
unr   typewriter

= refund | money back; reimbursement
rel   store credit refund
rel   partial refund
look  refurbished
unr   hairbrush

= wholesale price | trade price; wholesale cost
syn   wholesale rate
rel   bulk pricing
rel   distributor price
opp   retail price
look  whole grain
unr   bird cage

= recommended retail price | RRP; list price; MSRP
rel   manufacturer's suggested retail price
rel   sticker price
unr   bumper sticker

= shipping tracking | package tracking; order tracking
rel   tracking number
rel   delivery status
shift tracking shot
shift fitness tracking
unr   garden rake

= rucksack | backpack; knapsack; daypack
arch  haversack
rel   school bag
rel   hiking pack
shift six pack
shift backpacking trip
unr   sushi

= wristwatch | watch; timepiece
syn   wrist watch
rel   smartwatch
rel   analog watch
shift neighborhood watch
shift watch a movie
unr   pipe wrench

= pram | baby carriage; stroller
syn   baby buggy
arch  perambulator
rel   pushchair
rel   travel system
look  prawn
look  prom
unr   oven mitts

= cardigan | cardigan sweater; knit jacket
rel   jumper
rel   pullover
shift Cardigan Welsh Corgi
look  cardiogram
unr   power drill

= loafers | slip-on shoes; moccasins
rel   penny loafers
rel   boat shoes
shift loafer (idle person)
look  loaves of bread
unr   fish tank

= tablet computer | tablet; iPad
rel   e-reader
rel   2-in-1 laptop
shift tablet medication
shift stone tablet
unr   saddle

= cookware | pots and pans; kitchenware
syn   cooking pots
rel   frying pan
rel   saucepan
shift cooking show
shift pan flute
unr   tennis net

= wardrobe | closet; armoire
syn   clothes cupboard
rel   clothes rail
rel   chest of drawers
shift wardrobe malfunction
shift capsule wardrobe
unr   guinea pig
= gift wrapping | gift wrap; present wrapping
rel   gift box
look  rap music
unr   radiator

= refurbished laptop | renewed laptop; certified refurbished laptop
rel   open box laptop
jar   grade A refurbished
opp   brand new laptop
unr   chess clock

= pre-order | advance order; preorder
rel   release date
shift preorder relation
unr   hay bale

= shopping cart | basket; cart
syn   shopping basket
rel   wishlist
shift golf cart
shift cart horse
unr   pelican

= size chart | size guide; sizing table
syn   size table
rel   fit guide
shift pie chart
shift chart-topping single
unr   pipe organ

= express delivery | next-day delivery; expedited shipping
opp   economy shipping
shift express train
unr   bird's nest

= hair straightener | flat iron; straightening iron
rel   curling iron
shift waffle iron
shift iron supplement
unr   salt shaker

= crib | cot; baby cot
syn   baby bed
rel   crib mattress
shift crib sheet
look  cribbage
unr   skyscraper

= VAT included | value added tax included; tax inclusive price
jar   gross price
opp   excluding VAT
aos   vat (large tub)
unr   rowing boat
"""
