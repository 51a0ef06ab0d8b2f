"""Hostile replies of about 20 kB each: read by tests/test_reply_styles.py (outcome) and
timed by bench/bench_replies.py."""

HOSTILE = ["sofa" + "\t" * 20000 + "couch", "- a" + " " * 20000 + "b", '"' * 20000, "**a " * 5000,
           "- MI " + "(note) " * 3000, "<think>" * 3000, '["a", ' * 3333, "[" * 20000, "- " + "\u00a0" * 20000 + "x",
           "- " + '"' * 10000 + "a" + '"' * 10000, "- term\n" * 3000, "word, " * 3300, "a_" * 10000,
           "\x1b[31m" * 4000, "1. " * 6000, "Synonyms: " * 2000 + "a"]
