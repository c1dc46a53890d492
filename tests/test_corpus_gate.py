"""The gate on the labelled corpus: `trainwreck eval tests/corpus --json` may not fall below the table the README
publishes (per class, overall, cause hit rate). The numbers are read from README.md itself, so the README and the
gate cannot drift apart: a better result is welcome, a worse one fails here, and a case added to the corpus fails
until the README's table counts it."""
import json
import os
import re

import pytest
from twtest import ROOT, run_cli

README = os.path.join(ROOT, "README.md")
CORPUS = os.path.join(ROOT, "tests", "corpus")


def readme_table(text):
    """({class: (cases, correct, accuracy %)}, overall (cases, correct, %), (cause hit %, cause cases))."""
    sec = text.split("\n## Diagnosis quality", 1)[1].split("\n## ", 1)[0]
    rows, overall = {}, None
    for line in sec.splitlines():
        m = re.match(r"^\|\s*(\*\*)?([\w ]+?)(\*\*)?\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*\**(\d+)%\**\s*\|$", line.strip())
        if not m:
            continue
        row = (int(m.group(4)), int(m.group(5)), int(m.group(6)))
        if m.group(2) == "overall":
            overall = row
        else:
            rows[m.group(2)] = row
    m = re.search(r"Cause hit rate[^:]*:\s*(\d+)% of (\d+) cases", sec)
    return rows, overall, (int(m.group(1)), int(m.group(2)))


@pytest.fixture(scope="module")
def table():
    with open(README, encoding="utf-8") as f:
        return readme_table(f.read())


@pytest.fixture(scope="module")
def scores():
    p = run_cli("eval", CORPUS, "--json", timeout=900)  # the whole corpus, once, for every assertion below
    assert p.returncode == 0, p.stderr[-500:]
    return json.loads(p.stdout)


def test_readme_table_is_complete_and_consistent(table):
    from trainwreck.model import CLASSIFICATIONS
    rows, overall, (hit_pct, hit_n) = table
    assert set(rows) == set(CLASSIFICATIONS)
    for cls, (n, ok, pct) in rows.items():
        assert 0 <= ok <= n and round(100 * ok / n) == pct, (cls, n, ok, pct)
    assert overall[0] == sum(r[0] for r in rows.values()) and overall[1] == sum(r[1] for r in rows.values())
    assert round(100 * overall[1] / overall[0]) == overall[2]
    assert 0 < hit_n <= overall[0] and 0 <= hit_pct <= 100


@pytest.mark.parametrize("cls", ["NaN", "OOM", "divergence", "stall", "crash", "unclear"])
def test_no_class_falls_below_the_readme(cls, table, scores):
    n, ok, _ = table[0][cls]
    got = scores["per_class"][cls]
    assert got["n"] == n, f"{cls}: the corpus has {got['n']} cases, the README table {n}: update the table"
    misses = [m["case"] for m in scores["misses"] if m["want"] == cls and m["got"] != cls]
    assert got["ok"] >= ok, f"{cls}: {got['ok']} of {n} correct, the README promises {ok}; misses: {misses}"


def test_overall_and_cause_hit_rate_hold(table, scores):
    _, (n, ok, _), (hit_pct, hit_n) = table
    assert scores["cases"] == n
    assert sum(v["ok"] for v in scores["per_class"].values()) >= ok
    assert scores["cause_cases"] == hit_n
    # the README rounds to a whole percent: the rate may not drop below the lowest value that rounds to it
    assert scores["cause_hit_rate"] * 100 >= hit_pct - 0.5, [m["case"] for m in scores["misses"] if m["cause_hit"] is False]


def test_the_gate_reads_numbers_not_constants(table):
    """The parser reads whatever the README says: a table with one correct case fewer moves that threshold."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    cls, (n, ok, pct) = next((c, r) for c, r in table[0].items() if r[1] > 0)
    row = re.compile(r"^\|\s*%s\s*\|\s*%d\s*\|\s*%d\s*\|" % (re.escape(cls), n, ok), re.M)
    assert len(row.findall(text)) == 1
    worse = row.sub("| %s | %d | %d |" % (cls, n, ok - 1), text).replace(
        "| %d | %d%% |" % (ok - 1, pct), "| %d | %d%% |" % (ok - 1, round(100 * (ok - 1) / n)), 1)
    assert readme_table(worse)[0][cls][:2] == (n, ok - 1)
