"""Issue 35, third round of the reading rules (docs/harness.md steps 2-5): one test per rule,
each with the shapes the rule reads and the shapes it must leave alone."""

from __future__ import annotations

import pytest

from termgate.llm.replies import read_json_reply, read_reply


@pytest.mark.parametrize("reply, expected", [
    # a comma part opening with a note word is a note on the part before it
    ("1. Security deposit dispute (additionally)\n2. Security deposit dispute, including additional details",
     ["Security deposit dispute", "Security deposit dispute"]),
    ("1. DUINED (dui-dee-on), also spelled duh-deed", ["DUINED"]),
    ("- Ibuprofen, also known as Advil\n- Acetaminophen, e.g. Tylenol\n- Naproxen, such as Aleve",
     ["Ibuprofen", "Acetaminophen", "Naproxen"]),
    ("couch, settee, including loveseat", ["couch", "settee"]),
    # a part that merely contains such a word is a term
    ("sofa, couch with a chaise, settee", ["sofa", "couch with a chaise", "settee"]),
])
def test_a_comma_part_opening_with_a_note_word_is_a_note(reply, expected):
    assert read_reply(reply) == expected


def test_a_long_note_part_still_makes_the_commas_a_sentences():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Sofas come in many styles, including all the sectionals and loveseats that you love.")


@pytest.mark.parametrize("reply, expected", [
    # `A = B` where B defines A (a describing opener, or a lower-case phrase joined by and/or): A only
    ("1. Sore = pain or discomfort caused by injury, illness, etc.\n2. Throat = mouth and nose\n"
     "3. SORE = to be very painful or sore\n4. STRESSED = to be extremely tired or stressed",
     ["Sore", "Throat", "SORE", "STRESSED"]),
    ("1. Heart attack = a blockage of blood flow to the heart", ["Heart attack"]),
    # B a name: two terms, a clause after its comma a note (the second round's rule)
    ("1. MI = myocardial infarction\n2. Fares = flights, which can be expensive.\n3. Sofa = Couch",
     ["MI", "myocardial infarction", "Fares", "flights", "Sofa", "Couch"]),
])
def test_a_definition_after_an_equals_sign_gives_the_left_side(reply, expected):
    assert read_reply(reply) == expected


def test_an_equals_sign_inside_a_phrase_makes_no_pair():
    # "Using the" is a phrase cut off by the sign, not a side of `A = B`
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Here:\n4. Using the `*=` operator to multiply by 10 when possible (e.g., `x = x * 5`)")


@pytest.mark.parametrize("reply, expected", [
    # a sentence after a term's colon explains the term, commas in it or not
    ("Here are some examples:\n1. Asthma inhalers: Asthma medications, such as bronchodilators and "
     "corticosteroids, can be used to treat asthma.\n2. Asthma treatments: Asthma is a condition of the airways.",
     ["Asthma inhalers", "Asthma treatments"]),
    # a list after the colon is still the list
    ("1. Brand names: Tylenol, Panadol", ["Tylenol", "Panadol"]),
    ("1. Inhalers: puffer, spacer, nebulizer.", ["puffer", "spacer", "nebulizer"]),
])
def test_a_sentence_after_a_colon_is_no_list(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    "I'm sorry for any misunderstanding, but I don't have the capability to provide support.\n"
    "WiFi not working\nDomain: software\nExpansion terms:",
    "I am sorry, I cannot help.\nQuery: sofa\nDomain: retail\nIntent: shopping\n**Synonyms:**",
])
def test_an_apology_that_echoes_the_prompt_is_a_refusal(reply):
    with pytest.raises(ValueError, match="refusal"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # an apology before a list under its heading is no refusal
    ("Sorry for the delay!\nSynonyms:\n- couch\n- settee", ["couch", "settee"]),
    ("Sorry, here is the corrected list:\ncouch, settee", ["couch", "settee"]),
    # the prompt's own fields are commentary, not terms
    ("Query: sofa\nDomain: retail\nExpansion terms: couch, settee", ["couch", "settee"]),
])
def test_an_apology_before_a_list_and_prompt_fields(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # records anywhere in the answer give their naming field; a record naming nothing gives nothing
    ('```json\n{"syc-1": [{"name": "Steroids", "synonyms": [{"type": "Aroma"}]}, {"type": "Bacillus"}]}\n```',
     ["Steroids"]),
    ('```json\n{"keywords": [{"type": "string", "defaultValue": "smart watch"},\n'
     '{"type": "object", "defaultValue": "Smartwatch"}]}\n```', ["smart watch", "Smartwatch"]),
    # fields that never name a term (tags, description, type) are not read, however they look
    ('```json\n{"data": {"name": "Mintrust", "description": "A trademark.", "type": "legal terms"},\n'
     '"tags": ["mintrust_tag", "brands.finance.landmark"]}\n```', ["Mintrust"]),
    ('{"results": [{"term": "couch", "id": 3}, {"value": "settee", "tags": ["a"]}, {"word": "divan"}]}',
     ["couch", "settee", "divan"]),
    # a term key still wins, and a keywords list of strings is terms
    ('{"name": "sofa", "synonyms": ["couch", "settee"]}', ["couch", "settee"]),
    ('{"keywords": ["injury", "lawyer"]}', ["injury", "lawyer"]),
    # one record as the whole JSON: its name is the thing described, what its fields list are terms
    ('{"name": "sofa", "related": ["couch", "settee"], "tags": ["furniture"]}', ["couch", "settee"]),
    # a list inside JSON already read is part of it, not an answer beside it
    ('{"query": "sofa", "results": ["couch", "settee"]}', ["couch", "settee"]),
])
def test_json_records_give_their_naming_field(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # one record as the whole JSON describes one thing: no terms
    '```json\n{"name": "cell_phone", "description": {"type": "device"}}\n```',
    # records beside a program are the program's data
    '```python\nimport json\nfoods = {"Bacon": "Vegan"}\njson.dumps(foods)\n```\n'
    'This will create:\n```python\n{"Bacon": {"name": "Vegan", "cuisine": "Italian"}}\n```',
    # only type, id, tags, description: nothing names a term
    '{"data": {"type": "noun", "id": 4, "description": "a seat"}, "tags": ["seat", "sofa"]}',
])
def test_json_that_names_no_term_is_no_answer(reply):
    with pytest.raises(ValueError):
        read_reply(reply)


def test_json_mode_reads_records_by_the_same_rule():
    assert read_json_reply('{"results": [{"name": "couch", "type": "noun"}]}') == ["couch"]
    with pytest.raises(ValueError):
        read_json_reply('{"name": "sofa", "type": "noun"}')


# Issue 35, fourth round: prose under headings, the program's own JSON, notes after an
# abbreviation or a list, stray brackets.

@pytest.mark.parametrize("reply", [
    # a sentence after a list item's colon that does not speak of its label: the label heads prose
    'Here are the words that mean "ear infection":\n'
    '1. Etymology: The word "ear" is derived from the Latin word, which refers to the outer ear.\n'
    '2. Etymological: Both words have a similar etymology, but they are not exactly the same thing.',
    "To expand the query, you can use the following options:\n"
    "- Thesaurus: to add synonyms to your search query.\n"
    "- Google Suggestions: provide additional suggestions based on user preferences.",
])
def test_a_label_over_a_sentence_that_is_not_about_it_is_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # the sentence repeats a word of the label
    ("1. Asthma inhalers: Asthma medications, such as bronchodilators, can be used to treat asthma.\n"
     "2. Asthma treatments: Asthma is a medical condition that affects the airways in the lungs.",
     ["Asthma inhalers", "Asthma treatments"]),
    # or points back to it, or defines it
    ("1. **Otitis Media**: This is the medical term for a middle ear infection.\n"
     "2. Sofa: A long upholstered seat for several people to sit on.\n"
     "3. Couch: Another word used in America and in Canada.", ["Otitis Media", "Sofa", "Couch"]),
])
def test_a_label_explained_by_a_sentence_about_it_is_a_term(reply, expected):
    assert read_reply(reply) == expected


PRINTER = ("The AI can assist with various tasks, including:\n\n"
           "1. Printer Support:\n- Supports printing on different types of devices (printer, scanner)\n"
           "2. Printer Support:\n- Supports printing on multiple platforms (desktop, tablet, smartphone)\n"
           "3. Printer Support:\n- Supports printing on any type of device that supports a PDF reader\n"
           "4. Printer Support:\n- Supports printing on any device that runs Adobe Acrobat 10.x or above")


@pytest.mark.parametrize("reply", [
    # headings over sentences: another kind of marker under a heading is its body; most items are sentences
    PRINTER,
    # the same marker: a heading item over a sentence item heads it (no stray colon)
    PRINTER.replace("1. ", "- ").replace("2. ", "- ").replace("3. ", "- ").replace("4. ", "- "),
    # unbulleted: headings set aside, a line with commas only inside brackets is no one-line list
    "\n".join(line.lstrip("-1234. ") for line in PRINTER.split("\n")),
    "- sofa\n- The sofa is a long seat made for several people to sit on.\n"
    "- It has been used in homes across Europe since the eighteenth century.",
    "sofa\nThe sofa is a long upholstered seat for several people.\nIt was made popular in homes across Europe by 1700.",
])
def test_a_list_whose_items_are_mostly_sentences_is_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # half or fewer of the items sentences: the short items are the terms
    ("1. legal document\n2. power of attorney\n3. legal document that gives you the right to decide for me\n"
     "4. legal document that allows someone else to act in your favor", ["legal document", "power of attorney"]),
    # a heading item over another kind of marker: its body items, the heading no term
    ("1. Brand names:\n- Tylenol\n- Panadol\n2. Generic names:\n- acetaminophen", ["Tylenol", "Panadol", "acetaminophen"]),
    # a heading item with nothing under it: a stray colon
    ("- Luggage Bags:\n- Lighter Baggies:", ["Luggage Bags", "Lighter Baggies"]),
])
def test_a_list_with_few_sentences_keeps_its_terms(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # the program's dict quoted again after it, in a fence tagged with the program's language
    'Here is a sample:\n```python\nimport json\nd = {\n    "name": "Allergy Medicine",\n'
    '    "synonyms": ["Asthma, Allergy", "Respiratory Diseases"]\n}\nprint(json.dumps(d))\n```\n'
    'This will create:\n```python\n{\n    "name": "Allergy Medicine",\n'
    '    "synonyms": ["Asthma, Allergy", "Respiratory Diseases"]\n}\n```',
    # the same, fenced as JSON: the program's own data, quoted again
    '```python\nimport json\nd = {"synonyms": ["sofa", "couch"]}\nprint(json.dumps(d))\n```\n'
    'Output:\n```json\n{"synonyms": ["sofa", "couch"]}\n```',
])
def test_a_program_s_own_json_quoted_after_it_is_code(reply):
    with pytest.raises(ValueError, match="^code, not terms$"):
        read_reply(reply)


def test_json_data_beside_a_program_that_it_does_not_hold_is_the_answer():
    reply = ('```python\nimport json\nprint(json.dumps(load()))\n```\nIt prints:\n'
             '```json\n{"synonyms": ["sofa", "couch"]}\n```')
    assert read_reply(reply) == ["sofa", "couch"]


@pytest.mark.parametrize("reply, expected", [
    # a dotted abbreviation then "for …": what it stands for is a note
    ("* p.s. for permanent agreements\n* p.o.g. for permanent and permanent-only agreements", ["p.s.", "p.o.g."]),
    # an undotted phrase with "for" is a term as written
    ("- CBT for anxiety\n- Vegan Meal Planning for Dummies", ["CBT for anxiety", "Vegan Meal Planning for Dummies"]),
])
def test_an_abbreviation_for_its_meaning_is_the_abbreviation(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a note label after a comma or semicolon ends the list, and a postscript line is a note
    ("sofa, couch; Note: both are informal", ["sofa", "couch"]),
    ("sofa, couch, P.S. these are the common words", ["sofa", "couch"]),
    ("sofa\ncouch\nP.S. ask me for more.", ["sofa", "couch"]),
    ("- sofa, couch; NB: informal\n- settee", ["sofa", "couch", "settee"]),
    # "note" inside a term is no label
    ("notebook, laptop", ["notebook", "laptop"]),
])
def test_a_trailing_note_is_no_term(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a bracket whose pair is not in the term goes from its end
    ("1. travel-insurance\n2. travel-in-the-world-to-travel-and-insure)", ["travel-insurance",
                                                                          "travel-in-the-world-to-travel-and-insure"]),
    ("- (MI\n- [heart attack", ["MI", "heart attack"]),
    # balanced brackets keep their reading: a trailing note goes, a bracket inside a term stays
    ("- naloxone (generic name)\n- Vitamin B(12) deficiency", ["naloxone", "Vitamin B(12) deficiency"]),
])
def test_a_stray_bracket_is_stripped_from_a_term(reply, expected):
    assert read_reply(reply) == expected


def test_an_explanation_heading_over_a_list_of_terms_gives_the_list():
    assert read_reply("- Examples: sofa, couch\n- Origin: Latin\n- sofa bed") == ["sofa", "couch", "sofa bed"]


@pytest.mark.parametrize("reply", [
    # the headings of an explanation name what is said of the topic, not terms
    "1. Usage: used in medicine\n2. Origin: from Latin",
    "- Etymology - The word ear is derived from the Latin word auris.\n- Usage - It is used in medicine.",
    "**Definition:** a painful throat\n**Meaning:** pain",
    # a heading word alone over paragraphs, bulleted or not
    "1. **Etymology**\nThe word ear is derived from Latin and means hearing.\n2. **Meaning**\nIt is used in medicine.",
    "**Etymology**\nThe word ear is derived from Latin and means hearing.",
])
def test_the_headings_of_an_explanation_are_no_terms(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # `A - B` with a finite verb in B: B is a note, not a second term
    ("- Sofa - It is used in homes\n- Couch - Davenport", ["Sofa", "Couch", "Davenport"]),
    # an unbulleted line, or a value after its colon, ending with a full stop over three or more words is a statement
    ("Definition:\nA sore throat is pain in the throat.\nCauses:\nViruses cause it.\nsore throat", ["sore throat"]),
    ("Printer Support: It supports printing on your devices.\nprinter offline", ["printer offline"]),
    # one or two words with a full stop are still terms; a comma list is a list
    ("sofa.\nsofa bed.\nLaptop bag: laptop bags.", ["sofa", "sofa bed", "laptop bags"]),
    ("1. Acute coronary syndrome.\n2. Vegan (from the Latin word, which means plant).",
     ["Acute coronary syndrome", "Vegan"]),
    ("sofa bed, pull-out couch, futon.", ["sofa bed", "pull-out couch", "futon"]),
    # opening with an article and holding a lower-case finite verb: a statement, full stop or not
    ("The legal domain is trademark registration\ntrademark filing", ["trademark filing"]),
    ("- wifi is down\n- The router is off", ["wifi is down"]),
    # a long value after a label holding a finite verb is a sentence, full stop or not
    ("Home loan refinancing: Home loans are a type of financial product that allows refinancing\nremortgage",
     ["remortgage"]),
    # a bulleted item too: instructions and statements ending with a full stop give nothing
    ("Here are some tips:\n1. Restart the printer.\n2. Check the cable.\n3. printer offline", ["printer offline"]),
    ("- The printer is offline.\n- printer status", ["printer status"]),
    # a note after a dash is no statement of the term's own
    ("Sofa - a long seat for the family.\nCouch - a seat.", ["Sofa", "Couch"]),
    ("- Sofa - it is a seat.\n- Couch - a seat for people.", ["Sofa", "Couch"]),
])
def test_a_statement_is_no_term(reply, expected):
    assert read_reply(reply) == expected


# Issue 35, fifth round: clauses without their full stop, labels over commentary, and the
# judgement calls a general rule reads as the person did.

@pytest.mark.parametrize("reply", [
    # a subject, a lower-case modal verb, then a lower-case word: a clause, stop or not
    'Here is a bulleted list of ways to say "sofa":\n1. Sofas can seat three people\n'
    "2. Couches may come with a chaise\n3. Families should buy a sofa bed",
    "- Tenants must report damage quickly\n- Landlords will fix the roof",
    # an auxiliary in an item of five or more words is one too
    "Tenants are responsible for minor repairs\nLandlords have duties under the lease",
    # a comma part that is a clause makes the commas a sentence's
    "sofa, couches may seat three people, settee",
])
def test_a_clause_is_a_statement_without_its_full_stop(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # a modal or auxiliary that is a noun, joins nothing, or stands in a short item: terms
    ("- Last will and testament\n- living will for couples\n- trash can with lid\n- wifi is down",
     ["Last will and testament", "living will for couples", "trash can with lid", "wifi is down"]),
    ("- wifi is not working\n- printer is offline", ["wifi is not working", "printer is offline"]),
    # a question a searcher types is a query, not a statement
    ("- what is a living trust\n- living trust", ["what is a living trust", "living trust"]),
    # a note after a dash is no part of the clause
    ("glitches (verb) - to make something behave in a way that is not normal\nglint (noun) - a flash",
     ["glitches", "glint"]),
])
def test_a_modal_that_makes_no_clause_leaves_the_term(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # labels over sentences are the body of the reply, not lines around a one-line list
    "Theft of personal property, including sexual harassment.\n"
    "Severity: 15 years in prison for every offense committed against a person's dignity.\n"
    "Impact on employment: Sexual harassment can have severe consequences for employees.",
    # the same without full stops: a label over a long phrase not about it heads commentary
    "Theft of personal property, including sexual harassment\n"
    "Severity: 15 years in prison for every offense committed against a person's dignity\n"
    "Impact on employment: Sexual harassment can have severe consequences for employees",
])
def test_labels_over_sentences_make_the_reply_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # a lead-in or closing sentence around a one-line list is still set aside
    ("Here are some words for sofa.\nsofa, couch, settee\nThese are common in the US.", ["sofa", "couch", "settee"]),
    # one label over a sentence beside a list is not most of the reply
    ("sofa, couch, settee\nDefinition: A sofa is a long seat for several people.", ["sofa", "couch", "settee"]),
    # a long value that speaks of its label still names the topic
    ("Laptop bag: laptop bags for travel and work in the city\nbackpack", ["Laptop bag", "backpack"]),
])
def test_labels_over_sentences_leave_a_list_alone(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a label repeated over items, each with a list after it, names the topic
    ("1. Sofa - couch, settee, divan\n2. Sofa - loveseat, futon", ["couch", "settee", "divan", "loveseat", "futon"]),
    # once, or repeated over one second term, it is a term
    ("1. breach - breaching, breached", ["breach", "breaching", "breached"]),
    ("* CAGR: Compound Annual Growth Rate\n* CAGR: Compound Annual Growth Rate",
     ["CAGR", "Compound Annual Growth Rate", "CAGR", "Compound Annual Growth Rate"]),
])
def test_a_repeated_label_over_lists_names_the_topic(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # figures after a label annotate it: the label is the term
    ("1. **Flat tire**: 20% flat, 30% flat\n2. **Floats on the road**: 45% flat, 60% flat",
     ["Flat tire", "Floats on the road"]),
    ("* Interest rate percentage: 8%, 9%, 10%, etc.", ["Interest rate percentage"]),
    # names that open with a digit are terms
    ("- Brand names: 3M, 7-Eleven", ["3M", "7-Eleven"]),
])
def test_figures_after_a_label_leave_the_label(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # after a dash, a second form and a description of it are both a note on the term (the
    # fifth round took the form too, after one labeller; after fresh19-fresh22 five labellers
    # of this shape against that one take the term alone)
    ('1. Hi-lax - Hi-lo-la, a combination of "Hi-Lalo" and "Lo-la".', ["Hi-lax"]),
    ("1. Dog-bite-suit - dog-bite suit, a legal term referring to a court case.", ["Dog-bite-suit"]),
    # "not …" is a note on the first term, as before
    ("1. Last - LAST, not lastwill;", ["Last"]),
])
def test_a_second_form_and_its_description_after_a_dash_are_a_note(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a bracket inside a term, words on both sides, is a gloss
    ("1. Ankle-foot-ankle (AFNA) ankle injury: This refers to an ankle injury.\n2. Sprained ankle",
     ["Ankle-foot-ankle ankle injury", "Sprained ankle"]),
    ("- naloxone (generic) nasal spray\n- Narcan (brand)", ["naloxone nasal spray", "Narcan"]),
])
def test_a_bracket_inside_a_term_is_a_note(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # one record under a key naming it is the thing described: no term
    ('```json\n{"living_trust": {"name": "Living Trust", "description": "A document."}}\n```', None),
    # a key naming a list keeps its record's name
    ('{"keywords": {"name": "living trust"}}', ["living trust"]),
])
def test_one_record_under_a_key_naming_it_is_the_thing_described(reply, expected):
    if expected is None:
        with pytest.raises(ValueError):
            read_reply(reply)
    else:
        assert read_reply(reply) == expected


# Issue 35, sixth round: contracted verbs, a label heading every item over remarks, records'
# synonyms, figures and dates, lists of phrases with empty values, long noun phrases with notes.

@pytest.mark.parametrize("reply", [
    # a contracted verb ("'re", "'ve", "n't", a pronoun's "'s") in four or more words makes a
    # clause, full stop or not
    # (after fresh9, a noun's "n't" is a searcher's phrase: "sofas don't fold out" is no longer here)
    "- they're not old anymore\n- we've called them couches\n- you don't need one\n- it's a long seat",
    # a comma part holding one makes the commas a sentence's
    "sofa, couch, it's a long seat for two",
])
def test_a_contracted_verb_makes_a_statement(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # "'s" is also a possessive; a contraction in a short item, or a title's, leaves the term
    ("- St. John's wort\n- Alzheimer's disease\n- car won't start", ["St. John's wort", "Alzheimer's disease",
                                                                     "car won't start"]),
])
def test_a_possessive_or_a_short_contraction_leaves_the_term(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a capitalised value holding a contracted verb is a statement: a note on its label, not a
    # second term
    ("- Sofas: They're not old anymore.\n- Couches: They've become common.", ["Sofas", "Couches"]),
    ("- Sofa: It's a long seat.\n- Couch: Isn't common", ["Sofa", "Couch"]),
])
def test_a_contracted_verb_after_a_label_is_no_second_term(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # one label over every item, over remarks that do not say what it is: the topic of commentary
    'Here are some examples of a bulleted list with "sofa":\n'
    "1. Sofas: 20 years ago, they were called old sofas.\n"
    "2. Sofas: These days, we just call them sofas.\n"
    "3. Sofas: They're not old anymore.\n"
    "4. Sofas: They're just another word for sofas.",
    # the same with the full stops dropped
    "1. Sofas: 20 years ago, they were called old sofas\n"
    "2. Sofas: These days, we just call them sofas\n"
    "3. Sofas: They're not old anymore\n"
    "4. Sofas: They're just another word for sofas",
])
def test_one_label_over_remarks_is_the_topic_of_commentary(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # one label over definitions of it is a term each time
    ("1. Living Trusts: A living trust is a legal arrangement for managing your assets.\n"
     "2. Living Trusts: A living trust is a legal document created by someone for their heirs.",
     ["Living Trusts", "Living Trusts"]),
    # distinct labels over sentences that speak of them stay terms
    ("1. Asthma inhalers: Asthma medications, such as bronchodilators, can be used to treat asthma.\n"
     "2. Asthma treatments: Asthma is a medical condition that affects the airways in the lungs.",
     ["Asthma inhalers", "Asthma treatments"]),
    # after a dash the sentence is a note on the term, remark or not
    ("1. hair dryer - a device that helps dry the hair.\n2. hair dryer - they're used every day by everyone.",
     ["hair dryer", "hair dryer"]),
])
def test_a_label_over_definitions_stays_a_term(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a record's own synonyms (or aliases) list is its answer; the records' names are no answer beside it
    ('```json\n{"sofa": [{"name": "Sofas", "description": "A seat.", "synonyms": ["couch", "settee"],'
     ' "keywords": ["sofa"]}, {"name": "Furniture", "tags": ["furniture"]}]}\n```', ["couch", "settee"]),
    ('[{"name": "Ibuprofen", "aliases": ["Advil", "Motrin"]}, {"name": "Acetaminophen", "aliases": ["Tylenol"]}]',
     ["Advil", "Motrin", "Tylenol"]),
    # records without such a list still give their names
    ('[{"name": "Ibuprofen", "type": "drug"}, {"name": "Acetaminophen"}]', ["Ibuprofen", "Acetaminophen"]),
])
def test_a_record_s_synonyms_list_is_its_answer(reply, expected):
    assert read_reply(reply) == expected
    assert read_json_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # a part with no letter is a date, a price, a version or a count, not a search term
    "1. 2018-07-31: 2019-07-31: 2019-07-31\n2. 2018-04-25: 2019-04-26: 2019-04-26",
    "- 10.95\n- 24.95\n- 2.7.1",
    "- 3\n- 12\n- 2018-04",
    # an ISO 8601 date-time: its T and Z are separators, not letters of a term
    "- 2019-08-31T14:57:56.133\n- 2019-09-01T08:00:00Z\n- 2019-09-01 08:00",
])
def test_digits_and_punctuation_are_no_term(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


def test_a_term_with_a_letter_and_digits_stays_a_term():
    assert read_reply("- 401k\n- 7-Eleven\n- COVID-19\n- 2.7.1") == ["401k", "7-Eleven", "COVID-19"]


def test_a_code_of_digits_stays_a_term():
    # a CPT code, a tax form, an emergency number: digits that name something
    assert read_reply("- 99213\n- office visit\n- 10.95") == ["99213", "office visit"]
    assert read_reply("Form 1040, 1040, 1040-SR") == ["Form 1040", "1040", "1040-SR"]


@pytest.mark.parametrize("reply, expected", [
    # every line "Phrase:" with nothing after it: a list of phrases with stray colons
    ("Sofa bed: \nCouch with chaise: \nLoveseat:", ["Sofa bed", "Couch with chaise", "Loveseat"]),
    # a lead-in among them stays a lead-in
    ("Here are some synonyms:\nCouch:\nSettee:", ["Couch", "Settee"]),
    # a heading over a list is still a heading
    ("Synonyms:\ncouch\nsettee", ["couch", "settee"]),
])
def test_lines_that_all_end_with_an_empty_colon_are_a_list(reply, expected):
    assert read_reply(reply) == expected


def test_lines_of_empty_headings_that_are_sentences_give_nothing():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Here are some synonyms:\nSofas can be described as follows:")


def test_long_noun_phrases_with_notes_are_no_sentences():
    # seven-word lower-case noun phrases, their notes in brackets aside, are no terms but no
    # sentences: the short item among them is the term
    reply = ("* sofa bed (additionally)\n"
             "* sofas with a pull out bed frame (also known as sleeper sofas, which you can unfold at night)\n"
             "* sofas with a fold out bed frame (more specific terms that may be used by a shop)\n"
             "* couches with a pull out bed frame (additionally)")
    assert read_reply(reply) == ["sofa bed"]


@pytest.mark.parametrize("reply", [
    # long items that are sentences by a pronoun, a verb or a label still make the list prose
    "* sofa bed\n* sleeping on any type of frame that you like\n* folding on many frames with your own hands",
    "* sofa bed\n* sofas can be unfolded into beds at night\n* couches are made for several people to sit on",
    # a long item opening with a capital, as a sentence does, is one
    "* sofa bed\n* Supports sleeping on many types of frames\n* Supports folding on many frames with two hands",
])
def test_long_sentence_items_still_make_the_list_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # a label over an e-mail or web address is a contact field: neither side is a term
    ("- couch\n- Website: https://example.com/sofas\n- settee", ["couch", "settee"]),
    ("Sofa, couch\nEmail: help@example.com", ["Sofa", "couch"]),
    # a term's note that merely holds an address is still a note on the term
    ("- couch (see www.example.com)\n- settee", ["couch", "settee"]),
])
def test_a_label_over_an_address_gives_no_term(reply, expected):
    assert read_reply(reply) == expected


def test_a_reply_of_chat_and_a_contact_field_is_no_list():
    with pytest.raises(ValueError):
        read_reply("I'm here to help you with a password manager. What's the best one for you?\nChat: help@example.com")



# seventh round: the reader knows the query (run_prompt gives it)

@pytest.mark.parametrize("reply, query, expected", [
    # a label that is the query itself, over a list of terms, gives the list (the guide's rule)
    ("cheap flights: cheap, fleets\ncheap travel deals: cheaper, flightshare", "cheap flights",
     ["cheap", "fleets", "cheaper", "flightshare"]),
    ("1. Credit Score - credit card, credit-rating\n2. FICO - credit-factor, credit-value", "credit score",
     ["credit card", "credit-rating", "FICO", "credit-factor", "credit-value"]),
    # a plural or an identifier's underscores are still the query; one term after its colon is the term
    ("1. Insulin pumps: insulin-pump injector\n2. Insulin pumps: insulin pumps (not in the original)", "insulin pump",
     ["insulin-pump injector", "insulin pumps"]),
    # over a definition or a note, the query stays the term it explains
    ("1. Divorce - the legal end of a marriage\n2. Separation - living apart", "divorce", ["Divorce", "Separation"]),
    ("1. **Rental car**: A vehicle used for rental purposes.\n2. **Rentals**: The act of renting.", "rental car",
     ["Rental car", "Rentals"]),
])
def test_a_label_that_is_the_query_gives_its_list(reply, query, expected):
    assert read_reply(reply, query) == expected


def test_without_the_query_a_label_before_a_dash_list_is_a_term():
    assert read_reply("1. Credit Score - credit card, credit-rating", None) == ["Credit Score", "credit card",
                                                                                 "credit-rating"]


@pytest.mark.parametrize("reply, query, expected", [
    # a record naming the query, with records under its own answer key: those are the terms
    ('```json\n{"acid_reflux": [{"name": "Acid Reflux", "synonyms": [{"type": "adjective"}, '
     '{"value": "acetic acid"}]}, {"type": "noun"}]}\n```', "acid reflux", ["acetic acid"]),
    # one record as the whole JSON: the thing described when it names the query, else a term
    ('```json\n{"healthcare_proxy": {"name": "Healthcare", "description": "A healthcare proxy"}}\n```',
     "healthcare proxy", ["Healthcare"]),
    # records beside it: the query, listed, is a term; other fields ("keywords") are not its answer
    ('{"x": [{"name": "Bluetooth Speaker", "keywords": ["wireless"]}, {"name": "Speaker"}]}', "bluetooth speaker",
     ["Bluetooth Speaker", "Speaker"]),
])
def test_json_records_read_with_the_query(reply, query, expected):
    assert read_reply(reply, query) == expected


def test_one_record_naming_the_query_offers_no_term():
    with pytest.raises(ValueError):
        read_reply('```json\n{"living_trust": {"name": "Living Trust", "description": "A trust"}}\n```', "living trust")


@pytest.mark.parametrize("reply, expected", [
    # a trailing comma before a closing bracket is forgiven, never inside a string
    ('```json\n{"keywords": [{"type": "noun", "defaultValue": "rightful_termination"},\n]}\n```',
     ["rightful_termination"]),
    ('["sofa", "couch,]", "settee",]', ["sofa", "couch,]", "settee"]),
    ('["sofa \\" x", "couch",\n]', ['sofa " x', "couch"]),
])
def test_a_trailing_comma_in_json_is_forgiven(reply, expected):
    assert read_reply(reply) == expected


def test_json_broken_otherwise_is_still_invalid():
    with pytest.raises(ValueError, match="invalid JSON"):
        read_reply('```json\n{"terms": ["sofa" "couch"],}\n```')


@pytest.mark.parametrize("reply, expected", [
    # a long name in title case is no sentence: the list keeps its short items
    ("1. Uterine Proliferative Adenocarcinoma of the Urethral Vulpallus\n"
     "2. Ureteral Proliferative Adenocarcinoma of the Urethral Vulpallus\n"
     "3. Uremic Acidosis of the Urethral Vulpallus\n"
     "4. Urea II Absorption of Urate in the Urethral Vulpallus", ["Uremic Acidosis of the Urethral Vulpallus"]),
    # a relative clause after a comma is a note on the part before it
    ("1. Redness of the eyes (blepharitis)\n2. Discharge from the nose\n"
     "3. Inflamation of the conjunctiva, which can lead to infection and inflammation in the eye area",
     ["Redness of the eyes", "Discharge from the nose", "Inflamation of the conjunctiva"]),
    # a long lower-case name among short terms is no term, and no sentence's comma
    ("1. UTI treatment, uromitrogenic medical device for urinary tract infection\n2. UTI prevention",
     ["UTI treatment", "UTI prevention"]),
    # a comma grouping thousands splits nothing; a figure after "=" annotates the term
    ("1. Lost = ⅛ 2,000\n2. Laid = ⅛ 3,000", ["Lost", "Laid"]),
    ("1. Flat tire: 1,250 flat, 30% flat\n2. Puncture", ["Flat tire", "Puncture"]),
])
def test_long_names_relative_clauses_and_figures(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # a sentence with its commas stays prose: a relative clause after a sentence, or an article
    'Here are the words that mean "ear infection":\n'
    '1. Etymology: The word "ear" is derived from the Latin word, which refers to the outer ear.\n'
    '2. Etymological: Both words have a similar etymology, but they are not exactly the same thing.',
    "The drug, which is cheap, helps many people with pain every day.",
    # long parts that read as sentences (a pronoun, a verb) are not names
    "rest is what your body needs, fluids, sleep for recovery from the flu",
    # a list of capitalised sentences is still prose
    "1. Supports printing on any type of device that you own\n2. Supports printing from the cloud to any printer\n"
    "3. Prints",
])
def test_sentences_with_commas_stay_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


def test_the_query_over_sentences_in_every_item_offers_nothing():
    reply = ("Here are some additional ways to use the index fund terminology:\n"
             "1. Index Funds: A financial instrument that tracks a diversified portfolio of securities.\n"
             "2. Index Funds: A type of investment where funds are managed by an index provider.\n"
             "3. **Index Funds** (also known as trackers): A fund that follows a market index closely.")
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply, "index funds")
    assert set(read_reply(reply, "mutual funds")) == {"Index Funds"}  # another label over definitions is the term
    assert set(read_reply(reply)) == {"Index Funds"}


def test_a_sign_inside_brackets_pairs_nothing():
    reply = ('1. Plantar fasciitis (plantar means "sole" in Latin)\n2. Plantar fasciitis (fascii = feet, fasciae = skin)\n'
             "3. Heel spur (spur = bone growth)")
    assert read_reply(reply) == ["Plantar fasciitis", "Plantar fasciitis", "Heel spur"]


def test_a_span_inside_a_broken_json_fence_is_no_answer():
    reply = ('Here is a sample:\n```json\n{"chest_pain": [{"name": "chest_pain", "synonyms": ["heartache", "heartburn"]},\n'
             '{"name": "heartache", "synonyms": ["heartbreak", "heartwrenching"}"}]}\n```')
    with pytest.raises(ValueError, match="invalid JSON"):
        read_reply(reply)
    # the same span in prose, or in a fence that parses, is read
    assert read_reply('Try these: ["heartache", "heartburn"] or more.') == ["heartache", "heartburn"]


# after fresh8's one measurement

def test_a_records_own_answer_list_of_records_gives_their_values():
    reply = ('```json\n{"data": [{"name": "phone", "synonyms": [{"type": "adjective"}, {"value": "mobile"}]},\n'
             '{"name": "apple", "synonyms": [{"type": "noun"}, {"value": "orange"}]}]}\n```')
    assert read_reply(reply) == ["mobile", "orange"]


def test_the_querys_own_contraction_is_no_sign_of_a_sentence():
    reply = ("Here are some related search terms:\n* won't charge phone battery\n* won't work on phone charger")
    assert read_reply(reply, "phone won't charge") == ["won't charge phone battery", "won't work on phone charger"]
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("* They're not old anymore\n* We've called them couches", "old couch")


@pytest.mark.parametrize("reply, expected", [
    # a long description after a numbered item's comma, opening with an article: a note on the term
    ("1. Cola-narrows, a medical term referring to an injection of colostumax into the stomach.\n"
     "2. Colonic, a medical term used to describe any part of the digestive system that is not visible.",
     ["Cola-narrows", "Colonic"]),
    # glosses after a dash ("medical = medicine") are notes, for the query's label too
    ("1. Medical malpractice - medical = medical, legal = legal (legal)\n2. Legal malpractice - legal = legalism",
     ["Medical malpractice", "Legal malpractice"]),
    ("1. Rest, a way to help your body recover from the flu\n2. Fluids, a drink of water or juice taken often",
     ["Rest", "Fluids"]),
])
def test_appositives_and_glosses_are_notes(reply, expected):
    assert read_reply(reply, "medical malpractice") == expected


@pytest.mark.parametrize("reply", [
    # an appositive that is itself a sentence, or a sentence adverb, leaves the commas a sentence's
    "1. In legal terms, juries are composed of the people who decide.\n"
    "2. In other contexts, such as politics or social justice movements, a jury is a group that makes decisions.",
    "additionally, the search query \"adopemodel\" with synonyms.",
    "However, the term covers many meanings, sofa, couch",
])
def test_sentences_opening_with_a_phrase_and_a_comma_stay_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


def test_a_description_list_after_a_dash_keeps_only_the_term():
    reply = ("1. portable - something that is meant to be carried around easily;\n"
             "2. chargers - devices specifically designed to charge electronic devices like computers, smartphones, "
             "and televisions;")
    assert read_reply(reply) == ["portable", "chargers"]


def test_a_nouns_not_is_a_searchers_phrase_a_pronouns_a_sentence():
    # after fresh9: "app doesn't work anymore" is typed into search boxes; "It doesn't work anymore" is said
    assert read_reply("* app crashes\n* app doesn't work anymore\n* printer isn't printing at all") == [
        "app crashes", "app doesn't work anymore", "printer isn't printing at all"]
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("* It doesn't work anymore\n* They're not old anymore")


# after fresh10's one measurement

@pytest.mark.parametrize("reply, query, expected", [
    # quoted alternatives joined by "or" are each a term, a clause or not
    ('* "bluetooth is down" or "battery is low" (to avoid ambiguity)\n* "no bluetooth available"', "bluetooth",
     ["bluetooth is down", "battery is low", "no bluetooth available"]),
    # a label opening with a preposition says where: its value is the term
    ("- In English: MRI (Magnetic Resonance Imaging)\n- In French: IRM\n- For kids: brain scan", "mri scan",
     ["MRI", "IRM", "brain scan"]),
    # "slang for …" after a comma is a note; a note in brackets makes no sentence of a pair
    ('1. Payday = payday, slang for "payday" (a quick money trick);\n2. bed = bed (the only difference is the sound)',
     "payday loan", ["Payday", "payday", "bed", "bed"]),
    # the query as the label over sentences in most items: those items explain it
    ("1. **Rotator Cuff Tear**: Rotator cuff tears can be described as tears in the rotator cuff.\n"
     "2. **Rotator Cuff Tear**: Rotator cuff tears are often referred to as tears, but this is not a term.\n"
     '3. **Tearing of Rotator Cuff**: The most common medical term for the tear in the rotator cuff is "tear".',
     "rotator cuff tear", ["Tearing of Rotator Cuff"]),
])
def test_after_fresh10(reply, query, expected):
    assert read_reply(reply, query) == expected


@pytest.mark.parametrize("reply, query", [
    # an echoed instruction under a lead-in is a statement, not a term
    ('The search query "bluetooth won\'t connect" can be rephrased to:\n\nReply with a comma-separated list.',
     "bluetooth won't connect"),
    # the query (hyphens aside) as the one label over a sentence explains it
    ("High-yield savings:\n1. High-yield savings: A high-yield savings account offers higher returns than "
     "traditional accounts, often with a 20% interest rate.", "high yield savings"),
])
def test_after_fresh10_prose(reply, query):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply, query)


def test_a_hyphenated_spelling_of_the_query_before_a_list_is_a_term():
    reply = "1. breach - breaching, breach (adjective)\n2. breach-of-contract - breach-of-contraction, breach-of-contracts"
    assert read_reply(reply, "breach of contract") == ["breach", "breaching", "breach", "breach-of-contract",
                                                         "breach-of-contraction", "breach-of-contracts"]


# after fresh11's one measurement

def test_a_short_phrase_stating_a_condition_is_a_term():
    reply = "* Keyboard is not typing.\n* Keyboard is disabled.\n* No power is available.\n* Keyboard is out of range."
    assert read_reply(reply) == ["Keyboard is not typing", "Keyboard is disabled", "No power is available",
                                 "Keyboard is out of range"]
    with pytest.raises(ValueError, match="no terms found"):  # a pronoun, an article or a determiner: said, not searched
        read_reply("* It is broken.\n* The domain is medicine.\n* Restart the printer.")


@pytest.mark.parametrize("reply, expected", [
    ('Here are some additional ways to use the word "webcam":\n1. Webcams - 2. Cameras - 3. VideoCameras - 4.',
     ["Webcams", "Cameras", "VideoCameras"]),
    ("Synonyms: 1. sofa 2. couch 3. settee", ["sofa", "couch", "settee"]),
])
def test_a_numbered_list_run_inline_is_a_list(reply, expected):
    assert read_reply(reply) == expected


def test_numbers_that_do_not_run_on_are_text():
    assert read_reply("Size 10. Colour 2. Model 7.") != ["Size", "Colour", "Model"]


# after fresh12's one measurement

def test_an_amount_is_no_term():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("1. 10,000,000 USD (US Dollars)\n2. 10,000,000 USD (USD)\n3. 2.5 mg\n4. 20%")
    assert read_reply("- CPT 99213\n- 1040\n- 401k\n- 4k monitor") == ["CPT 99213", "1040", "401k", "4k monitor"]


def test_a_long_phrase_whose_verbs_are_a_relative_clauses_is_no_sentence():
    reply = ("1. slip and fall claim\n2. legal claims of injury to a person who is injured by falling from a height\n"
             "3. legal claims of injuries caused by falls that are not the result of physical activity")
    assert read_reply(reply) == ["slip and fall claim"]
    with pytest.raises(ValueError, match="no terms found"):  # a verb of its own, or a full stop: a sentence
        read_reply("1. slip and fall claim\n2. injured people can claim damages from the owner of the shop\n"
                   "3. most claims are settled out of court before any trial begins.")


# after fresh13's one measurement

@pytest.mark.parametrize("reply", [
    'The search query "pressure cooker" is a compound word consisting of two words: "pressuracron."',
    'The search query "insulin pump" is a compound word consisting of two words: insulin and pump.',
    'The search query "torn meniscus" is a compound word that contains multiple words. To expand the search query, '
    'you can use the hyphen in the search term to create a compound word with two letters: "TORN".',
])
def test_a_colon_inside_a_sentence_that_ends_after_one_item_offers_nothing(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    ("The most common synonym for a heart attack is: myocardial infarction.", ["myocardial infarction"]),
    ("Here is the best expansion for your query about heart disease: cardiopathy.", ["cardiopathy"]),
    ("The search query can be expanded with these synonyms: MI.", ["MI"]),
    ("The search query is a compound word of two parts: insulin, pump.", ["insulin", "pump"]),
])
def test_a_lead_in_before_a_colon_still_gives_its_list(reply, expected):
    assert read_reply(reply) == expected


def test_a_double_quote_without_its_pair_leaves_the_term():
    # after fresh18: '1. **"neck pillow**' (the model opened a quote and never closed it)
    assert read_reply('1. **"neck pillow**\n2. **"Necks pillow**\n3. travel pillow"\n4. "U-shaped" pillow') == [
        "neck pillow", "Necks pillow", "travel pillow", '"U-shaped" pillow']


# the eighth round: general rules from the misses of fresh14-fresh18 (each measured once, blind,
# with the seventh round's rules frozen); docs/harness.md "eighth round"

def test_a_label_whose_value_opens_a_numbered_list_heads_it():
    # "English: 1. tonsillitis (French)" then "2. …": the label heads the list, its value is item 1
    assert read_reply("Synonyms: 1. MI\n2. heart attack\n3. cardiac arrest") == ["MI", "heart attack", "cardiac arrest"]
    assert read_reply("English: 1. tonsillitis (French)\n2. tonsillectomies (Spanish)", "tonsillectomy") == [
        "tonsillitis", "tonsillectomies"]
    # no list running on below: the line is a label and its value, as before
    assert read_reply("Dose: 1. tablet daily") == ["Dose"]


def test_a_relative_clause_ending_an_item_after_an_article_is_a_note():
    assert read_reply("* A moonlit window.\n* A night light, which is often used as a metaphor for calm.",
                      "nightstand") == ["A moonlit window", "A night light"]
    # a clause with a sentence going on after it is still a sentence's
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("- The drug, which is cheap, helps many people sleep.\n"
                   "- The pill, which is small, works fast for most users.")


def test_a_sentence_on_a_words_stem_speaks_of_its_label():
    # "Encroaching is …" explains "Encroachance" (seven letters in common): the label is a term
    assert read_reply("1. Encroachance: Encroaching is the act of invading land.\n"
                      "2. Trespass: Trespassing is entering land without leave.", "encroachment") == [
        "Encroachance", "Trespass"]
    # a heading over sentences about something else still heads prose
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("1. Etymology: The word comes from the Latin for heart.\n2. Usage: Doctors say it every day.",
                   "heart attack")


def test_the_query_as_a_value_explains_its_label():
    # "encroaching: Encroachment": the label is the word offered, the query says what it means
    assert read_reply("Enroachance: Encroachment\nencroaching: Encroachment", "encroachment") == [
        "Enroachance", "encroaching"]
    assert read_reply("Laptop bag: laptop bags", "laptop bag") == ["laptop bags"]


def test_a_list_word_inside_a_hyphenated_word_names_no_list():
    # "Age-related claims - A legal term …, such as …" is a term and its definition, not "Related: …"
    assert read_reply("1. Age-related claims - A legal term describing claims based on age, such as a denial of "
                      "rights.\n2. Age bias - A legal term.", "age discrimination") == ["Age-related claims", "Age bias"]
    assert read_reply("Related terms - sofa, couch") == ["sofa", "couch"]


def test_the_query_before_a_dash_on_a_line_gives_the_list_after_it():
    reply = "Here are some:\n\ntravel pillow - travel pillows, neck pillows, sleepers"
    assert read_reply(reply, "travel pillow") == ["travel pillows", "neck pillows", "sleepers"]
    # another query: the phrase before the dash is a term of the list
    assert read_reply(reply, "sofa") == ["travel pillow", "neck pillows", "sleepers"]


def test_the_query_among_the_values_of_the_query_as_a_repeated_label_is_a_term():
    reply = ("- Wireless Router: wireless router, Wi-Fi, mesh router\n"
             "- Wireless Router: wireless router, Wi-Fi router, access point")
    assert read_reply(reply, "wireless router") == ["wireless router", "Wi-Fi", "mesh router", "wireless router",
                                                     "Wi-Fi router", "access point"]
    # a repeated label that is not the query still names the topic
    assert read_reply("- Credit Score - credit card, credit rating\n- Credit Score - credit factor, credit value") == [
        "credit card", "credit rating", "credit factor", "credit value"]


def test_a_pronunciation_before_a_part_of_speech_is_no_term():
    assert read_reply("1. Chronic - CHA-ruhk, a noun (a chronic disease)\n2. Cough - KAWF, a verb (to expel air)",
                      "chronic cough") == ["Chronic", "Cough"]
    # a second term alone after the dash stays one
    assert read_reply("1. Chronic cough - Persistent cough") == ["Chronic cough", "Persistent cough"]


def test_commas_inside_a_values_brackets_make_no_list():
    assert read_reply("1. Toenails: Toenail (tooth)\n2. Toys totered: Toiletteer (toileth, not tootetter)",
                      "teething toys") == ["Toenails", "Toenail", "Toys totered", "Toiletteer"]


# after fresh19-fresh22 (the eighth round measured once on them, blind, at 435/454): rules
# written on their misses; they change none of the blind figures

def test_a_dash_value_opening_with_a_describing_participle_or_adverb_is_a_note():
    assert read_reply("1. Antibiotic - Antimicrobial, specifically referring to antibiotics (e.g., penicillin)\n"
                      "2. Burn gel - Aloe gel, typically used on burns") == ["Antibiotic", "Burn gel"]
    # a list of terms after the dash stays one
    assert read_reply("- breach - breaching, breached") == ["breach", "breaching", "breached"]


def test_a_label_naming_a_kind_of_word_heads_its_value():
    assert read_reply("1. Noun: Nursing\n2. Adjective: Nourishing\n3. Abbreviation: NP") == [
        "Nursing", "Nourishing", "NP"]


def test_a_prompts_domain_echoed_with_its_name_is_commentary():
    assert read_reply("Medical Negligence Suit: Medical Negligness Suit\nLegal Domain: Legal",
                      "medical negligence suit") == ["Medical Negligness Suit"]
    # "public domain" is a term of copyright law, not the prompt's field
    assert read_reply("- Public domain: works free to use\n- Fair use: quoting a work", "copyright") == [
        "Public domain", "Fair use"]


def test_a_dates_comma_before_its_year_splits_nothing():
    assert read_reply("* Increase in rent notice\n* RENT INCREASE ON SEPTEMBER 31, 2019") == [
        "Increase in rent notice", "RENT INCREASE ON SEPTEMBER 31, 2019"]
    assert read_reply("sofa, 2018, couch") == ["sofa", "2018", "couch"]


def test_a_definition_by_kind_after_a_list_items_colon_defines_its_label():
    assert read_reply("1. Chemotherapy drugs: Medications that are used to kill cancer cells.\n"
                      "2. Chemo: Treatment given to patients who have cancer.", "chemotherapy") == [
        "Chemotherapy drugs", "Chemo"]
    # a participle's phrase after the colon is the label's definition, no second term
    assert read_reply("1. Chemotherapeutic agents: Substances used for treating cancer.", "chemotherapy") == [
        "Chemotherapeutic agents"]
    # a purpose, or a sentence with a verb of its own, still heads prose
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("- Thesaurus: to add synonyms to your search query.\n- Etymology: The word comes from the Latin.")


def test_a_quoted_phrase_named_by_its_frame_is_the_term():
    assert read_reply('- The search query "tying up feet" (with synonyms)\n'
                      '- The search query "fleeting feet" (with synonyms)', "tingling feet") == [
        "tying up feet", "fleeting feet"]
    with pytest.raises(ValueError, match="no terms found"):
        read_reply('- The search query is "tying up feet"')


def test_beside_a_broken_json_block_a_span_in_the_prose_is_no_answer():
    reply = ('Here is the JSON:\n```json\n{"keywords": [{"type": "text"},\n]]\n}\n```\n'
             'The `["type", "dataType"]` syntax sets the type.')
    with pytest.raises(ValueError, match="invalid JSON"):
        read_reply(reply, "whiplash")
    assert read_reply('Here it is: ["sofa", "couch"]') == ["sofa", "couch"]


def test_a_short_form_after_a_dash_quoted_or_on_its_stem_is_a_second_term():
    assert read_reply('* email (prefix) - "emails"\n* sync - "synced"') == ["email", "emails", "sync", "synced"]
    assert read_reply("1. travel-adapter - travel adapters\n2. travel-plug - travel plugs") == [
        "travel-adapter", "travel adapters", "travel-plug", "travel plugs"]
    # a lower-case word of another stem is a note, as before
    assert read_reply("1. Tylenol - brand\n2. Sofa - seat") == ["Tylenol", "Sofa"]


def test_a_list_marker_alone_on_its_line_numbers_the_next():
    # (fresh13's futon: "1. " then "Futon - FUTON, FUTONAN, …", a line too long to run on as a term)
    assert read_reply("1. \nSofa - couch, settee, divan, loveseat, futon, chesterfield, davenport\n"
                      "2. \nBed - cot, bunk, berth") == ["Sofa", "couch", "settee", "divan", "loveseat", "futon",
                                                        "chesterfield", "davenport", "Bed", "cot", "bunk", "berth"]
    # a rule of dashes is no marker
    assert read_reply("Here:\n---\n- sofa\n- couch") == ["sofa", "couch"]


def test_the_query_hyphenated_as_a_label_over_one_value_gives_the_value():
    reply = "* travel-pillow: travel pillows.\n* take the trip-pillow: trips that bring you home."
    assert read_reply(reply, "travel pillow") == ["travel pillows", "take the trip-pillow"]
    # the query over one noun phrase with an article gives the phrase
    assert read_reply("* Shoe rack: Shoes with a rack.\n* Boot tray: Trays equipped with rims.", "shoe rack") == [
        "Shoes with a rack", "Boot tray"]


def test_two_names_on_a_line_of_their_own_are_two_terms_when_the_query_is_known():
    reply = "Nicotine patch: Nicotamine patches\nNarcan: Nalonamine patches"
    assert read_reply(reply, "nicotine patch") == ["Nicotamine patches", "Narcan", "Nalonamine patches"]
    # the query as the value explains its label; without the query the label stays alone
    assert read_reply("Enroachance: Encroachment\nencroaching: Encroachment", "encroachment") == [
        "Enroachance", "encroaching"]
    assert read_reply("Narcan: Nalonamine patches") == ["Narcan"]


def test_the_query_before_an_equals_sign_gives_what_follows():
    reply = 'The search query "vpn not connecting" can be rephrased:\n\n* vpn-not-connecting = vpn-connected'
    assert read_reply(reply, "vpn not connecting") == ["vpn-connected"]
    assert read_reply("* Fares = flights", "cheap flights") == ["Fares", "flights"]


def test_a_variable_assigned_is_a_line_of_code():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Loan Default Judgment:\nloan_default_judgment = loan_default_judgment", "loan default judgment")
    assert read_reply("* Sofa = Couch") == ["Sofa", "Couch"]


# after fresh23-fresh26 (the ninth round measured once on them, blind, at 429/448): rules
# written on their misses; they change none of the blind figures

def test_a_hash_number_with_a_stop_is_a_marker():
    assert read_reply("Repossessed Car:\n#1. Republished Car:\n#2. Reclaimed Car:", "repossessed car") == [
        "Republished Car", "Reclaimed Car"]


def test_the_query_over_definitions_in_most_items_offers_nothing():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Here are some examples:\n1. Crib sheets: 2018-04-30Crucial to the game, but now obsolete.\n"
                   "2. Crib sheets: A marketing tool for advertising.\n"
                   "3. Crib sheets: A type of paper that is used in a business setting.", "crib sheets")


def test_an_instruction_with_a_quoted_phrase_is_advice():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply('* Use "supplement" instead of "ingredient": "Iron supplements"\n'
                   '* Use "in addition to" or "additionally": "iron supplements"', "iron supplements")
    assert read_reply('* "supplement" or "tablet"') == ["supplement", "tablet"]


def test_words_joined_by_underscores_pair_in_a_list_and_assign_on_a_line():
    assert read_reply("Here are the words:\n1. medical_bill = medical_bills\n2. medical_care = medical_cares",
                      "medical bill collections") == ["medical_bill", "medical_bills", "medical_care", "medical_cares"]
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Loan Default Judgment:\nloan_default_judgment = loan_default_judgment", "loan default judgment")


def test_a_participle_in_a_list_after_a_dash_makes_it_a_description():
    assert read_reply("1. Dislocation - injury caused by movement or stretching; breaking of bone\n"
                      "2. Dislocate - dislodge, displace") == ["Dislocation", "Dislocate", "dislodge", "displace"]


def test_a_letter_after_a_dash_is_no_second_term():
    assert read_reply("1. Child - C\n2. Visit - Visitation", "child visitation") == ["Child", "Visit", "Visitation"]


def test_a_records_field_label_heads_its_value():
    assert read_reply("Sleeper sofa:\n- Product: Sleeper Sofa\n- Description: A luxurious sofa that can be "
                      "customized to fit any style.", "sleeper sofa") == ["Sleeper Sofa"]


def test_a_relative_clauses_nt_after_a_noun_is_a_searchers_phrase():
    assert read_reply("* keyboard shortcuts not working\n* keyboard shortcuts that don't work",
                      "keyboard shortcuts not working") == ["keyboard shortcuts not working",
                                                            "keyboard shortcuts that don't work"]
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("- It says that doesn't work anymore")


def test_the_querys_own_words_name_no_list():
    reply = ('1. "name change after divorce" - This is a legal term that refers to changing a name. It can also '
             'refer to any change, such as marriage, divorce, or even death.\n'
             '2. "divorcee" - This term can refer to a person who has been divorced.')
    assert read_reply(reply, "name change after divorce") == ["name change after divorce", "divorcee"]


# the tenth round (its rules frozen before fresh27-fresh30 were read): broader word classes
# for the families the earlier rounds found, and three shapes of the tuned sets' misses

@pytest.mark.parametrize("reply, expected", [
    # any participle with its preposition describes, not only the ones seen so far
    ("1. Chemotherapeutic agents: Substances delivered to the bloodstream.\n2. Chemo drugs: Medications",
     ["Chemotherapeutic agents", "Chemo drugs", "Medications"]),
    ("* Sofa: Couch\n* Settee: Loveseat", ["Sofa", "Couch", "Settee", "Loveseat"]),
])
def test_any_participle_and_its_preposition_describe(reply, expected):
    assert read_reply(reply, "seating") == expected


def test_a_records_field_names_head_their_values():
    assert read_reply("Bunker: Furniture\nCategory: Bunk Bed\nType: Loft bed\nColour: Oak", "bunk bed") == [
        "Bunker", "Furniture", "Bunk Bed", "Loft bed", "Oak"]


@pytest.mark.parametrize("reply, expected", [
    ("1. mamma - breast cancer screening\n2. mammagallina - breast health and wellness\n"
     "3. mammagallina-breast health and wellness\n4. mammabellini-breast health and wellness",
     ["mamma", "mammagallina", "mammagallina", "mammabellini"]),
    ("1. Dislodged - to remove something from its place\n2. Dislodged-to remove, break something from its place",
     ["Dislodged", "Dislodged"]),
    # a compound with no such sibling stays one term
    ("1. Long-term care and support\n2. Home care - care given at home", ["Long-term care and support", "Home care"]),
])
def test_a_bare_hyphen_is_a_dash_where_another_item_has_its_word_or_gloss(reply, expected):
    assert read_reply(reply) == expected


def test_a_short_word_list_after_a_dash_may_end_in_a_full_stop():
    assert read_reply("Measuring cups:\n- Measured - Measureful, precise.\n- Cup - Beaker, mug.", "measuring cups") == [
        "Measured", "Measureful", "precise", "Cup", "Beaker", "mug"]
    # a longer phrase with a full stop is still a description
    assert read_reply("- Eczema - a dry, itchy skin condition.") == ["Eczema"]


def test_a_note_part_ends_the_comma_list():
    assert read_reply("1. Browser's performance\n2. Other devices running slow, such as tablets, smartphones, etc.") == [
        "Browser's performance", "Other devices running slow"]
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Theft of personal property, including money and other valuables, is a serious offense.")


def test_an_identifier_after_a_names_colon_is_a_second_term():
    assert read_reply("Mixing Bars: mix_barns", "mixing bowls") == ["Mixing Bars", "mix_barns"]


@pytest.mark.parametrize("reply, expected", [
    ("- Laser eye surgery: LASIK, PRK\n- Purpose: improve vision\n- Risks: dry eyes, glare", ["LASIK", "PRK", "dry eyes", "glare"]),
    ("MRI, CT scan\nConfidence: high\nLanguage: English", ["MRI", "CT scan"]),
    ("Sofa, couch\nIn summary, both are seats.\nYou can also search for settee.", ["Sofa", "couch"]),
])
def test_more_headings_and_fields_of_commentary(reply, expected):
    assert read_reply(reply, "seating") == expected


@pytest.mark.parametrize("reply, expected", [
    ("1. Escrow - where a third party holds money, deposits\n2. Lien - Charge", ["Escrow", "Lien", "Charge"]),
    ("1. Settee - something to sit on, couch\n2. Sofa - Couch", ["Settee", "Sofa", "Couch"]),
])
def test_more_describing_words_open_a_note_after_a_dash(reply, expected):
    assert read_reply(reply) == expected


# after fresh27-fresh30 (the tenth round measured once on them, blind, at 453/482): rules
# written on their misses; they change none of the blind figures

def test_a_condition_among_statements_is_a_statement():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("Here are some examples:\n1. Blood is blood, not blood-borne.\n2. Blood transfusions can be "
                   "life-saving.\n3. Blood is vital for survival.\n4. Blood is essential for human health and well-being.")
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("* No mouse is available.\n* The mouse is unavailable.\n* The mouse is lost.")
    # among conditions and terms, a condition stays a searcher's phrase
    assert read_reply("* Keyboard is disabled.\n* No power is available.\n* keyboard lock") == [
        "Keyboard is disabled", "No power is available", "keyboard lock"]


@pytest.mark.parametrize("reply, expected", [
    ("Here are some examples:\n1. Paid maternity leave, paid leave (2)\n"
     "2. Paid maternity leave for children with parents who have died or cannot work due to illness (3)\n"
     "3. Paid maternity leave for children with other family members who are not married",
     ["Paid maternity leave", "paid leave"]),
    ("This includes fees such as:\n1. Fees for wire transfers (e.g., 1.9%, 4.8%)\n"
     "2. Other fees that may not be directly related to wire transfers but are still included\n"
     "3. Fees for security measures, such as encryption and data protection regulations",
     ["Fees for wire transfers", "Fees for security measures"]),
])
def test_a_long_noun_phrase_with_a_relative_clause_is_no_sentence(reply, expected):
    assert read_reply(reply) == expected


def test_a_long_item_opening_with_a_verb_is_still_prose():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("I can assist you with tasks, including:\n1. Searching for specific keywords\n"
                   "2. Searching for data or services related to your query\n"
                   "3. Providing assistance in various areas such as web development and more\n"
                   "4. Offering suggestions based on user inputted queries")


def test_a_degree_adverb_opens_a_description_after_a_dash():
    assert read_reply("1. Hoar (adjective) - to make something sound hoarse\n"
                      "2. Hoar-shen (adjective) - very unruly, noisy, or untamed.") == ["Hoar", "Hoar-shen"]


def test_an_iso_date_stamps_an_item_and_a_label_stamps_its_value():
    assert read_reply("1. Burn blister - 2019-08-31 20:45:57.BULLEDER (CALIFORNIA)\n"
                      "2. Burn blister - 2019-08-31 20:46:12.BURNINGBLADES (AZULA)", "burn blister") == [
        "Burn blister", "Burn blister"]
    assert read_reply("1. 2023-08-24: Changing Table\n2. 2023-09-05: Changing Table") == [
        "Changing Table", "Changing Table"]


def test_two_words_each_with_its_note_joined_by_and_are_two_terms():
    assert read_reply("- Salad (French) and Spinning (Italian)\n- Salt and pepper (seasoning)") == [
        "Salad", "Spinning", "Salt and pepper"]


def test_a_stray_colon_before_an_item_with_a_note_in_brackets():
    assert read_reply("Here are some ways:\n1. **Ear Pressure**:\n2. **Pressure**:\n"
                      "3. **Pounds** (to emphasize the weight of air)", "ear pressure") == [
        "Ear Pressure", "Pressure", "Pounds"]


@pytest.mark.parametrize("reply", [
    "Wire transfer fee: 1.5%\nExpanded search query: Wire Transfer Fee: 20%",
    "Wire transfer limit: 10,000\nExpand the search query with synonyms.",
    "* Measuring Spoons: 1.234, 2.56, 3.08\n* Measuring Spoons: 1.234, 2.56",
    "1. Wire transfer fee: 2023-08-24 25% OFF",
])
def test_the_query_over_figures_offers_nothing(reply):
    query = "measuring spoons" if "Spoons" in reply else ("wire transfer limit" if "limit" in reply else "wire transfer fee")
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply, query)


def test_among_other_labels_over_figures_the_query_is_a_term_too():
    assert read_reply("1. **Flat tire**: 20% flat, 30% flat\n2. **Floats on the road**: 45% flat", "flat tire") == [
        "Flat tire", "Floats on the road"]
    assert read_reply("Luggage scale: 1.2\nAscender: 3.0", "luggage scale") == ["Luggage scale", "Ascender"]


# after fresh31-fresh34 (the eleventh round measured once on them, blind, at 431/459): rules
# written on their misses; they change none of the blind figures

def test_the_query_over_a_sentence_offers_nothing():
    # the guide: "a label that is the query itself ... gives the values"; a sentence gives none
    # (ten of the thirteen labellers since fresh18 read it so)
    assert read_reply("* Subpoena: A legal term that refers to an official request for documents.\n"
                      "* Subpoena ad populum: A Latin phrase meaning an official request.", "subpoena") == [
        "Subpoena ad populum"]
    # without the query known, or over values, the label stays the term it is
    assert read_reply("* Subpoena: A legal term that refers to an official request for documents.") == ["Subpoena"]
    assert read_reply("1. Subpoena: writ, summons", "subpoena") == ["writ", "summons"]


@pytest.mark.parametrize("reply, expected", [
    ("1. A: Pepper-grinded\n2. B: Pepper-grinding", ["Pepper-grinded", "Pepper-grinding"]),
    ("- Chat: SmolLM-BabyToy\n- teething ring\n- smol@huggingface.com", ["teething ring"]),
])
def test_a_letter_label_gives_its_value_and_chat_fields_and_addresses_are_no_terms(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    '1. Use it as a reference: "Ring light is used in many contexts."\n2. Use it to add variety: "Use it often."',
    "* E-Sync stands for Electronic Subscription Service, which is a service.\n"
    "* E-Sink refers to an electronic device with a touchscreen.",
    "1. **Rocking Chair**: This is a classic example of a bulleted list.\n"
    '2. **Beverage**: You can also use bulleted lists for other phrases like "beverage".\n'
    "3. **Fashion**: You can use bulleted lists in fashion, where you include many items.",
])
def test_advice_and_what_a_word_stands_for_are_prose(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply, "rocking chair")


def test_numbered_keyword_fields_of_json_hold_terms():
    reply = ('```json\n{"Lumbar Puncture": [{"Keyword1": "lumbar puncture", "KeyWord2": "lukerence"},\n'
             '{"Keyword3": "dermatology", "type": "string"}]}\n```')
    assert read_reply(reply, "lumbar puncture") == ["lumbar puncture", "lukerence", "dermatology"]


def test_a_lower_case_phrase_joined_by_or_after_a_dash_is_a_definition_even_in_a_list():
    assert read_reply("1. Insurance (from Latin) - protection against loss or misfortune; safety net\n"
                      "2. Jewels - gems, stones") == ["Insurance", "Jewels", "gems", "stones"]


def test_the_prompts_count_of_terms_echoed_is_no_term():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply('1. 5 alternative search terms for "colander"', "colander")
    assert read_reply("- Terms of service\n- 3M tape") == ["Terms of service", "3M tape"]


# after fresh35-fresh38 (the twelfth round measured once on them, blind, at 435/463)

def test_using_it_as_and_writing_instructions_are_advice():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply('1. **Using it as a verb**: "The company will be ringing ears to the news."\n'
                   '2. **Using it as a noun**: "A bell can ring ears."', "ringing ears")
    assert read_reply("- Add a hyphen (to create a compound adjective)\n- garlic press") == ["garlic press"]


def test_a_lower_case_participle_phrase_after_an_equals_sign_defines():
    assert read_reply("1. Sprained = spelt with a 'w' sound, as in strain.\n2. Wartined = wounded by injury.\n"
                      "3. Wrist = Carpus") == ["Sprained", "Wartined", "Wrist", "Carpus"]
