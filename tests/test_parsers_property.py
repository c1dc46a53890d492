"""Property-based tests for the engine's own parsers: never raise, results keep their promises."""
import json
import math
import os
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainwreck.collect.readers.jsonl import first_nonfinite, parse_record
from trainwreck.collect.redact import redact
from trainwreck.collect.safeio import clean_line
from trainwreck.collect.yamlish import YAMLError, loads, scan

texts = st.text(max_size=400)


@given(st.lists(texts, max_size=40))
def test_yaml_scan_never_raises_and_cites_real_lines(lines):
    for key, _val, n in scan(lines):
        assert 1 <= n <= len(lines)
        assert isinstance(key, str)


@given(texts)
def test_parse_record_never_raises(t):
    got = parse_record(t)
    if got is not None:
        step, values = got
        assert step is None or isinstance(step, int)
        assert all(isinstance(v, float) for v in values.values())


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=60))
@settings(max_examples=60)
def test_first_nonfinite_agrees_with_a_full_parse(values):
    data = "".join(json.dumps({"step": i, "loss": v}) + "\n" for i, v in enumerate(values)).encode()
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        hit = first_nonfinite(f.fileno(), len(data))
    want = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
    if want is None:
        assert hit is None
    else:
        assert hit is not None and hit[1] == want + 1
        assert json.loads(hit[2])["step"] == want


@given(texts)
def test_redact_is_idempotent_and_never_grows_secrets(t):
    once = redact(t)
    assert redact(once) == once


@given(st.binary(max_size=600))
def test_clean_line_never_raises_and_drops_nul_and_ansi(b):
    out = clean_line(b)
    assert "\x00" not in out
    body = b.replace(b"\x1b", b"")
    assert clean_line(b"\x1b[32m" + body) == clean_line(body)  # a colour code in front changes nothing


def test_first_nonfinite_on_a_large_file_finds_the_right_line(tmp_path):
    p = tmp_path / "m.jsonl"
    with open(p, "w") as f:
        for i in range(300_000):
            f.write(json.dumps({"step": i, "loss": 2.0, "info": "inference"}) + "\n")
        f.write('{"step": 300000, "loss": NaN}\n')
    fd = os.open(p, os.O_RDONLY)
    try:
        off, ln, line = first_nonfinite(fd, os.path.getsize(p))
    finally:
        os.close(fd)
    assert ln == 300_001 and b"NaN" in line


# YAML documents built from the pieces real configs and the catalog are made of, with the traps PyYAML
# resolves in surprising ways (YAML 1.1 numbers and booleans, quotes, comments, ': ' in values).
_YAML_KEYS = ["a", "b_c", "lr-max", "'q k'", '"d"', "x y"]
_YAML_VALUES = ["1", "-2", "+3", "0", "012", "0x1f", "1_000", "0.5", "-.5", ".5", "1.", "1e5", "1.0e5", "1.0e+5",
                "1:20", ".inf", ".nan", "true", "False", "yes", "off", "null", "~", "", "x y", "it's", "'it''s'",
                "'a # b'", '"t\\tx \\"q\\""', "[1, a, 'b c']", "[]", "{k: v, n: 2}", "a#b", "x # comment",
                "https://e.org/x#f", "a: b", "- x", "@x", "*ref", "|", "'open"]
_yaml_line = st.tuples(st.sampled_from(["", "  ", "    "]), st.sampled_from(["", "- "]),
                       st.one_of(st.just(None), st.sampled_from(_YAML_KEYS)), st.sampled_from(_YAML_VALUES))


def _yaml_text(lines):
    return "".join(f"{ind}{dash}{key + ': ' if key else ''}{val}\n" for ind, dash, key, val in lines)


@given(st.lists(_yaml_line, min_size=1, max_size=8))
@settings(max_examples=400)
def test_yaml_loads_refuses_or_agrees_with_pyyaml(lines):
    """The catalog's YAML reader never misreads: it gives PyYAML's result or refuses with YAMLError."""
    yaml = pytest.importorskip("yaml")
    text = _yaml_text(lines)
    try:
        got = loads(text)
    except YAMLError:
        return
    try:
        want = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AssertionError(f"loads accepted what PyYAML rejects: {text!r} -> {got!r} ({exc})") from None
    assert got == want, text
    assert repr(got) == repr(want), text  # same types too (1 vs 1.0 vs True)


@given(texts)
def test_yaml_loads_raises_nothing_but_yamlerror(t):
    try:
        loads(t)
    except YAMLError:
        pass
