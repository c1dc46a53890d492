"""Every parser's fuzz target survives a few hundred mutated inputs (the full fuzzing runs via fuzz/run.py), and
every target can fail: a parser that crashes or breaks its output contract is reported, never swallowed."""
import importlib
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks"))
from run import loop, mutate  # noqa: E402
from targets import SEEDS, TARGETS, Broken  # noqa: E402

from trainwreck.model import Point, Source  # noqa: E402

N = {"run_dir": 60, "env_facts": 150, "csv_metrics": 200, "elastic_error": 200}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_fuzz_target_survives(name):
    n = N.get(name, 400)
    seen = set()
    assert loop(name, n, seed=1, seen=seen) == n
    assert len(seen) > n * 0.8  # the mutator really varies the input (not one input n times)


def test_mutator_keeps_inputs_bounded_and_varied():
    import random
    rng = random.Random(3)
    out = [mutate(rng, SEEDS[0]) for _ in range(300)]
    assert all(len(b) <= 1 << 16 for b in out)
    assert len(set(out)) > 250 and any(b"\n" in b for b in out) and any(b != SEEDS[0] for b in out)


def _bad_point(bundle, name, path, step):
    bundle.add_point(name, path, Point(step, "2.3", Source(path, 10 ** 6, "x")))  # a str value, a line past the end


# Each target names the parser it drives; replacing that parser by one that breaks the contract must fail the target.
SABOTAGE = {
    "jsonl_record": ("trainwreck.collect.readers.jsonl", "parse_record", lambda t: ("7", {"loss": 1.0})),
    "text_metrics": ("trainwreck.collect.textmetrics", "extract", lambda t: (None, {"loss": "nan"})),
    "redact": ("trainwreck.collect.redact", "redact", lambda t: t + "*"),
    "log_lines": ("trainwreck.collect.safeio", "clean_line", lambda b: "a\x00b"),
    "jsonl_scan": ("trainwreck.collect.readers.jsonl", "first_nonfinite", lambda fd, n, *a, **k: (1, 99, b"zz")),
    "text_tables": ("trainwreck.collect.texttables", "rows", lambda lines: [(object(), 1, {"loss": 1.0})]),
    "tracebacks": ("trainwreck.analyze.tracebacks.summary", "summarize", lambda lines: ["not", "a dict"]),
    "trainer_state": ("trainwreck.collect.readers.trainer_state", "_entries",
                      lambda b, rel, text, first: _bad_point(b, "loss", rel, 1) or 1),
    "csv_metrics": ("trainwreck.collect.readers.csvmetrics", "read",
                    lambda b, e, c: _bad_point(b, "loss", e.rel, 1.5)),
    "env_facts": ("trainwreck.collect.readers.facts", "read",
                  lambda b, e, c: b.facts.__setitem__("torch", Source("elsewhere.txt", 1, "torch==2"))),
    "elastic_error": ("trainwreck.collect.readers.elastic_error", "read",
                      lambda b, e, c: _bad_point(b, "loss", "other.json", None)),
    "hook_transcript": ("transcript_tail", "lines_backward", lambda f, size, cap, state=None: iter([b"x"])),
    "hook_quotes": ("quote_match", "found", lambda text, kind, sources: False),
    "rank_prefixes": ("trainwreck.collect.ranks", "split_stream", lambda t: ("", None, "zz")),
    "yaml_config": ("trainwreck.collect.yamlish", "scan", lambda lines: iter([("k", "v", len(lines) + 5)])),
}


@pytest.mark.parametrize("name", sorted(SABOTAGE))
def test_target_reports_a_parser_that_breaks_its_contract(name, monkeypatch):
    mod, attr, bad = SABOTAGE[name]
    monkeypatch.setattr(importlib.import_module(mod), attr, bad)
    with pytest.raises(Broken):
        for seed in SEEDS:
            TARGETS[name](seed)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_a_crashing_parser_is_not_swallowed(name, monkeypatch):
    """Whatever a target drives, an exception inside it reaches the fuzzer."""
    mod, attr = {"run_dir": ("trainwreck.pipeline", "diagnose"),
                 "catalog_yaml": ("trainwreck.collect.yamlish", "loads"),
                 "hook_quotes": ("claim_detector", "analyse"),
                 "hook_transcript": ("transcript_tail", "scan")}.get(name, SABOTAGE.get(name, (None, None))[:2])

    def boom(*a, **k):
        raise RuntimeError("planted")
    monkeypatch.setattr(importlib.import_module(mod), attr, boom)
    with pytest.raises(RuntimeError, match="planted"):
        loop(name, 5, seed=2)


def test_every_target_is_checked_for_sabotage():
    assert set(TARGETS) - set(SABOTAGE) == {"run_dir", "catalog_yaml"}
