"""Score and surviving mutants from a mutmut 2 cache, also while a run is still going or after it was stopped.

    python3 tests/mutation/report.py /tmp/tw-mutation/NAME [--survivors]

Score = killed (incl. timeouts) / tested. Untested mutants are counted apart, so a partial run says how much of the
module it covered. --survivors prints each surviving mutant's line (see `mutmut show ID` in that folder for the diff).
"""
import os
import sqlite3
import sys


def report(work, survivors=False):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(work, ".mutmut-cache"), uri=True)
    counts = dict(db.execute("select status, count(*) from Mutant group by status").fetchall())
    killed = counts.get("ok_killed", 0) + counts.get("bad_timeout", 0)
    survived = counts.get("bad_survived", 0) + counts.get("ok_suspicious", 0)
    tested = killed + survived
    total = sum(counts.values())
    name = os.path.basename(work.rstrip("/"))
    score = 100.0 * killed / tested if tested else 0.0
    print("%s: %d killed, %d survived of %d tested (%d of %d mutants tested); score %.1f%%"
          % (name, killed, survived, tested, tested, total, score))
    if survivors:
        rows = db.execute("select m.id, l.line_number, m.\"index\", l.line from Mutant m join Line l on m.line = l.id "
                          "where m.status in ('bad_survived', 'ok_suspicious') order by l.line_number, m.\"index\"")
        for mid, ln, idx, text in rows:
            print("  #%d line %d (mutation %d): %s" % (mid, ln + 1, idx, text.strip()[:110]))
    return killed, tested, total


if __name__ == "__main__":
    report(sys.argv[1], "--survivors" in sys.argv)
