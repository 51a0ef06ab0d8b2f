"""Curated opposites and rivals the drift combiner checks beside WordNet (issue 36).

WordNet links few of the opposites a domain cares about (it has no antonym for landlord /
tenant or for joint / sole custody), so a short list per domain, each pair with where the
opposition is stated, fills the gap. A pair matches when a term and a reference are the two
sides, whole or by the words they differ in ('tenant rights' for 'landlord rights').

Also here, the two other string-level sibling checks: the same words but one letter, number
or numeral token apart ('hepatitis a' / 'hepatitis b', 'type 1 diabetes' / 'type 2
diabetes'), and the curated siblings of `SIBLING_SETS` (a rival brand, another drug of the
class, another grade of offence).
"""

from __future__ import annotations

from functools import lru_cache

from .lexical import tokens

__all__ = ["OPPOSITE_PAIRS", "SIBLING_SETS", "curated_opposite", "string_sibling", "curated_sibling", "curated_same"]

_MESH = "MeSH (U.S. National Library of Medicine), the two headings' scope notes"
_ANATOMY = "Terminologia Anatomica, anatomical terms of location"
_BLACKS = "Black's Law Dictionary (11th ed.), the two entries"
_COMMON = "the two sides of one transaction or attribute (Merriam-Webster's definitions)"

OPPOSITE_PAIRS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "medical": (
        ("benign", "malignant", _MESH), ("acute", "chronic", _MESH), ("systolic", "diastolic", _MESH),
        ("arterial", "venous", _MESH), ("constipation", "diarrhea", _MESH), ("constipation", "diarrhoea", _MESH),
        ("anterior", "posterior", _ANATOMY), ("proximal", "distal", _ANATOMY), ("medial", "lateral", _ANATOMY),
        ("superior", "inferior", _ANATOMY), ("dorsal", "ventral", _ANATOMY), ("flexion", "extension", _ANATOMY),
        ("abduction", "adduction", _ANATOMY), ("pronation", "supination", _ANATOMY),
        ("dominant", "recessive", _MESH), ("positive", "negative", _MESH), ("inpatient", "outpatient", _MESH),
        ("insomnia", "hypersomnia", _MESH), ("vasoconstriction", "vasodilation", _MESH),
        ("agonist", "antagonist", _MESH), ("excess", "deficiency", _MESH), ("overdose", "underdose", _MESH),
        ("gain", "loss", _MESH), ("myopia", "hyperopia", _MESH), ("hyperthyroidism", "hypothyroidism", _MESH),
        ("remission", "relapse", _MESH), ("left", "right", _ANATOMY), ("upper", "lower", _ANATOMY),
    ),
    "legal": (
        ("acquittal", "conviction", _BLACKS), ("acquitted", "convicted", _BLACKS), ("landlord", "tenant", _BLACKS),
        ("lessor", "lessee", _BLACKS), ("plaintiff", "defendant", _BLACKS), ("prosecution", "defense", _BLACKS),
        ("prosecution", "defence", _BLACKS), ("prosecutor", "defender", _BLACKS), ("guilty", "innocent", _BLACKS),
        ("creditor", "debtor", _BLACKS), ("buyer", "seller", _BLACKS), ("vendor", "purchaser", _BLACKS),
        ("appellant", "appellee", _BLACKS), ("petitioner", "respondent", _BLACKS), ("civil", "criminal", _BLACKS),
        ("testate", "intestate", _BLACKS), ("joint", "sole", _BLACKS),
        ("mortgagor", "mortgagee", _BLACKS), ("grantor", "grantee", _BLACKS), ("licensor", "licensee", _BLACKS),
        ("assignor", "assignee", _BLACKS), ("employer", "employee", _BLACKS), ("payer", "payee", _BLACKS),
        ("donor", "donee", _BLACKS), ("bailor", "bailee", _BLACKS), ("settlor", "beneficiary", _BLACKS),
        ("revocable", "irrevocable", _BLACKS), ("voluntary", "involuntary", _BLACKS),
        ("custodial", "noncustodial", _BLACKS), ("permanent", "temporary", _BLACKS),
    ),
    "ecommerce": (
        ("men", "women", _COMMON), ("mens", "womens", _COMMON), ("boys", "girls", _COMMON), ("male", "female", _COMMON),
        ("new", "used", _COMMON), ("new", "refurbished", _COMMON), ("wired", "wireless", _COMMON),
        ("indoor", "outdoor", _COMMON), ("summer", "winter", _COMMON), ("long", "short", _COMMON),
        ("wholesale", "retail", _COMMON), ("buy", "sell", _COMMON),
        ("debit", "credit", _COMMON), ("left", "right", _COMMON), ("hot", "cold", _COMMON),
        ("heavy", "light", _COMMON), ("waterproof", "breathable", _COMMON), ("firm", "soft", _COMMON),
        ("decaf", "caffeinated", _COMMON), ("gas", "electric", _COMMON), ("manual", "automatic", _COMMON),
    ),
}
"""(one side, the other side, source) per domain; 'general' uses every domain's pairs."""

_FDA = "FDA label (brand name and active ingredient)"
_RETAIL = "the brands' own product lines (competing products of one category)"

SIBLING_SETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # (source, identities of one category; an identity lists its names: brands and generic, '|' apart)
    (_FDA, ("tylenol|panadol|acetaminophen|paracetamol", "advil|motrin|nurofen|ibuprofen", "aleve|naproxen",
            "aspirin|bayer aspirin", "excedrin")),
    (_FDA, ("lipitor|atorvastatin", "crestor|rosuvastatin", "zocor|simvastatin", "pravachol|pravastatin")),
    (_FDA, ("prilosec|omeprazole", "nexium|esomeprazole", "prevacid|lansoprazole", "protonix|pantoprazole",
            "zantac|ranitidine", "pepcid|famotidine")),
    (_FDA, ("lopressor|toprol|metoprolol", "tenormin|atenolol", "inderal|propranolol", "coreg|carvedilol")),
    (_FDA, ("zestril|prinivil|lisinopril", "vasotec|enalapril", "altace|ramipril", "cozaar|losartan",
            "diovan|valsartan", "norvasc|amlodipine")),
    (_FDA, ("xanax|alprazolam", "ativan|lorazepam", "valium|diazepam", "klonopin|clonazepam")),
    (_FDA, ("oxycontin|oxycodone", "vicodin|norco|hydrocodone", "morphine", "fentanyl", "tramadol|ultram")),
    (_FDA, ("amoxil|amoxicillin", "zithromax|azithromycin", "cipro|ciprofloxacin", "doxycycline", "keflex|cephalexin")),
    (_FDA, ("lantus|insulin glargine", "humalog|insulin lispro", "novolog|insulin aspart", "levemir|insulin detemir")),
    (_FDA, ("viagra|sildenafil", "cialis|tadalafil", "levitra|vardenafil")),
    (_FDA, ("ambien|zolpidem", "lunesta|eszopiclone", "sonata|zaleplon")),
    (_FDA, ("zyrtec|cetirizine", "claritin|loratadine", "allegra|fexofenadine", "benadryl|diphenhydramine")),
    (_FDA, ("prozac|fluoxetine", "zoloft|sertraline", "lexapro|escitalopram", "paxil|paroxetine")),
    (_FDA, ("coumadin|warfarin", "eliquis|apixaban", "xarelto|rivaroxaban", "plavix|clopidogrel")),
    (_FDA, ("glucophage|metformin", "ozempic|wegovy|semaglutide", "jardiance|empagliflozin", "januvia|sitagliptin")),
    (_RETAIL, ("nike", "adidas", "puma", "reebok", "asics", "new balance", "under armour")),
    (_RETAIL, ("iphone", "galaxy", "pixel")),
    (_RETAIL, ("apple", "samsung", "google", "huawei", "xiaomi")),
    (_RETAIL, ("coca cola|coke", "pepsi")),
    (_RETAIL, ("dyson", "hoover", "shark", "bissell", "roomba")),
    (_RETAIL, ("kleenex", "puffs")),
    (_RETAIL, ("kindle", "kobo", "nook")),
    (_RETAIL, ("playstation", "xbox", "nintendo switch")),
    (_RETAIL, ("macbook", "chromebook", "thinkpad")),
    (_RETAIL, ("huggies", "pampers", "luvs")),
    (_RETAIL, ("nespresso", "keurig")),
    (_RETAIL, ("airpods", "beats", "bose", "sennheiser", "jabra")),
    (_RETAIL, ("roku", "chromecast", "fire tv stick", "apple tv")),
    (_RETAIL, ("amazon echo|alexa", "google nest|google home", "homepod")),
    (_RETAIL, ("ipad", "galaxy tab", "surface pro")),
    (_RETAIL, ("gillette", "schick", "harry's")),
    (_RETAIL, ("colgate", "crest", "sensodyne")),
    (_RETAIL, ("red bull", "monster energy")),
    (_RETAIL, ("fitbit", "garmin", "apple watch")),
    (_RETAIL, ("band aid|band-aid|adhesive bandage", "nexcare")),
    (_BLACKS, ("felony", "misdemeanor|misdemeanour", "infraction|violation", "summary offence|summary offense")),
    (_BLACKS, ("trial court", "court of appeals|appellate court|court of appeal", "supreme court")),
    (_BLACKS, ("guilty plea", "not guilty plea", "nolo contendere plea|no contest plea", "alford plea")),
    (_BLACKS, ("last will and testament", "living trust")),
    (_BLACKS, ("chapter 7", "chapter 11", "chapter 13")),
    (_BLACKS, ("patent", "trademark", "copyright", "trade secret")),
)
"""Siblings WordNet does not know: the identities of one category (rival brands, drugs of
one class, grades of offence, kinds of court). A term naming one identity for a reference
naming another is a sibling (drift); another name of the same identity (a brand for its
generic) is not."""

_NAMED: dict[tuple[str, ...], tuple[int, int]] = {}
for _c, (_source, _identities) in enumerate(SIBLING_SETS):
    for _i, _names in enumerate(_identities):
        for _name in _names.split("|"):
            _NAMED[tokens(_name)] = (_c, _i)
_LONGEST = max(len(k) for k in _NAMED)


@lru_cache(maxsize=1 << 14)
def _identities(text: str) -> frozenset[tuple[int, int, tuple[str, ...]]]:
    """(category, identity, the name's words) of every curated name in the text."""
    words = tokens(text)
    return frozenset(_NAMED[words[i:i + n]] + (words[i:i + n],) for n in range(1, _LONGEST + 1)
                     for i in range(len(words) - n + 1) if words[i:i + n] in _NAMED)


def curated_sibling(term: str, query: str, expected: list[str]) -> str | None:
    """The query, when it names one identity of a category and the term another ('advil' for
    'tylenol', 'misdemeanour charge' for 'felony charge'), the term not naming the query's too.
    Not when the query names none (for 'laptop', 'macbook' and 'chromebook' are both kinds of
    it), nor when the expected terms name another identity of that category (the golden set
    takes its members as kin: 'infraction' where 'summary offence' is expected beside
    'misdemeanor')."""
    mine = _identities(term)
    if not mine:
        return None
    asked = {(c, i) for c, i, _ in _identities(query)}
    for c, i, _ in mine:
        theirs = {ci for ci in asked if ci[0] == c}
        if len(theirs) != 1 or (c, i) in theirs or theirs & {(mc, mi) for mc, mi, _ in mine}:
            continue
        if all((ec, ei) in theirs or ec != c for e in expected for ec, ei, _ in _identities(e)):
            return query
    return None


def curated_same(term: str, refs: list[str]) -> str | None:
    """The first reference naming the term's identity by another name (a brand for its
    generic: 'tylenol' for 'paracetamol')."""
    mine = _identities(term)
    for ref in refs:
        for c, i, name in _identities(ref):
            if any((c, i) == (mc, mi) and name != mname for mc, mi, mname in mine):
                return ref
    return None


_BY_DOMAIN: dict[str, frozenset[tuple[str, str]]] = {}
for _domain, _pairs in OPPOSITE_PAIRS.items():
    _BY_DOMAIN[_domain] = frozenset(p for a, b, _ in _pairs for p in ((a, b), (b, a)))
_BY_DOMAIN["e-commerce"] = _BY_DOMAIN["ecommerce"]
_ALL = frozenset().union(*_BY_DOMAIN.values())
_PAIRED_WORDS = frozenset(w for a, _ in _ALL for w in (a,))


def _pairs_for(domain: str | None) -> frozenset[tuple[str, str]]:
    return _BY_DOMAIN.get((domain or "").strip().lower(), _ALL)


def curated_opposite(term: str, refs: list[str], domain: str | None) -> str | None:
    """The first reference the term is the curated opposite of: the two whole, or a word of
    the term against a word of the reference that the term lacks ('tenant' for 'landlord',
    'sole custody' for 'joint custody')."""
    mine = tokens(term)
    if _PAIRED_WORDS.isdisjoint(mine):
        return None
    pairs = _pairs_for(domain)
    for ref in refs:
        if (term, ref) in pairs:
            return ref
        theirs = tokens(ref)
        for a in mine:
            if a in theirs:
                continue
            for b in theirs:
                if b not in mine and (a, b) in pairs:
                    return ref
    return None


_NUMERALS = frozenset("i ii iii iv v vi vii viii ix x first second third fourth fifth".split())
# one number written three ways names the same thing ('type i diabetes' is 'type 1 diabetes')
_NUMBER_OF = {w: n for n, words in enumerate(("1 i one first", "2 ii two second", "3 iii three third",
                                               "4 iv four fourth", "5 v five fifth", "6 vi six", "7 vii seven",
                                               "8 viii eight", "9 ix nine", "10 x ten"), 1)
              for w in words.split()}


@lru_cache(maxsize=1 << 14)
def _variant_token(word: str) -> bool:
    """A letter, number, Roman numeral or ordinal that tells siblings apart ('a' of hepatitis a,
    'first' of first degree murder)."""
    return len(word) == 1 or word.isdigit() or word in _NUMERALS


def string_sibling(term: str, refs: list[str]) -> str | None:
    """The first reference the term matches word for word but for one letter, number or
    numeral token ('hepatitis a' for 'hepatitis b', 'type 1 diabetes' for 'type 2 diabetes'); one
    number written another way is no sibling ('type i diabetes' for 'type 1 diabetes')."""
    mine = tokens(term)
    if len(mine) < 2 or not any(_variant_token(w) for w in mine):
        return None
    for ref in refs:
        theirs = tokens(ref)
        if len(theirs) != len(mine):
            continue
        apart = [(a, b) for a, b in zip(mine, theirs) if a != b and _NUMBER_OF.get(a, a) != _NUMBER_OF.get(b, b)]
        if len(apart) == 1 and _variant_token(apart[0][0]) and _variant_token(apart[0][1]):
            return ref
    return None
