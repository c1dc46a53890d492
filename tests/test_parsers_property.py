"""Property-based tests for the engine's own parsers: never raise, results keep their promises."""
import json
import math
import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from trainwreck.collect.readers.jsonl import first_nonfinite, parse_record
from trainwreck.collect.redact import redact
from trainwreck.collect.safeio import clean_line
from trainwreck.collect.yamlish import scan

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
