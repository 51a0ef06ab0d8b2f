"""bench_replies: the slowest read of hostile replies of about 20 kB each (runs of tabs,
blanks or quotes, unbalanced emphasis, thousands of notes, reasoning tags, brackets).

Prints each reply's read time (the slower of reading it without and with a query) and the slowest beside the goal (≤ 50 ms per 20 kB reply:
every step of the reading is linear), then how many finished real replies of each labelled
part termgate reads as the person did (tests/data/real_replies/; issue 35's goal, 97%, is
for a part no rule was tuned on: the README there gives each part's blind figure), and how
often two blind labellers of the same replies read them alike. tests/test_reply_styles.py reads the same replies (tests/reply_payloads.py)
and checks their outcome, never their time.

Usage: python bench/bench_replies.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

def main() -> None:
    root = Path(__file__).resolve().parent.parent
    sys.path[:0] = [str(root), str(root / "tests")]
    from termgate.llm.replies import read_reply
    from termgate.llm.reply_items import unmark, unquote
    from reply_payloads import HOSTILE

    times = []
    for reply in HOSTILE:
        took = []
        for query in (None, "term"):  # the query known (as the harness reads) or not
            unmark.cache_clear()  # each read cold: nothing cached from the reply before
            unquote.cache_clear()
            start = time.perf_counter()
            try:
                read_reply(reply, query)
            except ValueError:
                pass
            took.append((time.perf_counter() - start) * 1000)
        times.append(max(took))
    worst = max(range(len(times)), key=times.__getitem__)
    print(f"bench_replies {len(HOSTILE)} hostile replies of ~20 kB: slowest read {times[worst]:.1f} ms "
          f"(reply {worst}: {HOSTILE[worst][:24]!r}…) [goal ≤ 50 ms]; all: "
          + ", ".join(f"{t:.1f}" for t in times))
    from real_replies import PARTS, SECOND_READINGS, agreement, load, two_people

    for part in PARTS:
        result = agreement(load(part))
        print(f"bench_replies real replies {part}: {result.agreed}/{result.rows} finished replies read as the person did "
              f"({result.share:.1%}), {len(result.prose_read_as_terms)} prose read as terms; "
              f"{result.clear_agreed}/{result.clear_rows} ({result.clear_share:.1%}) of those the labeller "
              "did not call a judgement call")
    alike = [two_people(part) for part in SECOND_READINGS]
    same, rows = sum(a for a, _ in alike), sum(n for _, n in alike)
    print(f"bench_replies two blind labellers of {', '.join(SECOND_READINGS)} read {same}/{rows} finished replies "
          f"alike ({same / rows:.1%}): the ceiling a reader of these replies can reach")


if __name__ == "__main__":
    main()
