"""One fuzz target per parser. Each takes arbitrary bytes and must neither raise nor hang.

Run with atheris when it is installed (coverage-guided):   python fuzz/run.py NAME
or with the built-in mutation loop (no dependency):       python fuzz/run.py NAME --iterations 20000
The test suite runs every target briefly with the built-in loop (tests/test_fuzz_targets.py).
"""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from trainwreck.model import Line  # noqa: E402


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class Broken(AssertionError):
    """A parser returned something that breaks its contract (the fuzzer reports it like a crash)."""


def check(ok: bool, what: str) -> None:
    if not ok:
        raise Broken(what)


def _is_step(s) -> bool:
    return s is None or (isinstance(s, int) and not isinstance(s, bool))


def _check_metrics(result, what: str) -> None:
    """None, or (step int|None, {non-empty str: float})."""
    if result is None:
        return
    step, values = result
    check(_is_step(step), f"{what}: step {step!r} is not an int or None")
    check(isinstance(values, dict), f"{what}: values {values!r} are not a dict")
    for k, v in values.items():
        check(isinstance(k, str) and k != "", f"{what}: metric name {k!r}")
        check(isinstance(v, float), f"{what}: {k}={v!r} is not a float")


def _check_bundle(b, rel: str, n_lines: int) -> None:
    """Every point a reader added: a float value, an int-or-None step, and a source in this file, in range."""
    for name, series in b.series.items():
        check(isinstance(name, str) and name != "", f"series name {name!r}")
        for s in series:
            check(s.path == rel and s.total >= len(s.points) >= 1, f"series {name}: path {s.path!r}, total {s.total}")
            for pt in s.points:
                check(isinstance(pt.value, float), f"{name}: value {pt.value!r} is not a float")
                check(_is_step(pt.step), f"{name}: step {pt.step!r} is not an int or None")
                src = pt.source
                check(src.path == rel, f"{name}: cites {src.path!r}, not {rel!r}")
                check(src.line is None or 1 <= src.line <= max(n_lines, 1), f"{name}: line {src.line} of {n_lines}")
                check(src.value == pt.value or (src.value != src.value and pt.value != pt.value),
                      f"{name}: the cited value {src.value!r} is not the point's {pt.value!r}")
    for ln in b.extra_lines:
        check(ln.path == rel and (ln.line is None or 1 <= ln.line <= max(n_lines, 1)), f"extra line {ln!r}")
        check("\n" not in ln.text, f"extra line holds a newline: {ln.text!r}")


def _read_file(reader, name: str, data: bytes):
    """Run `reader.read` on a run directory holding one file `name` with `data`; returns (bundle, line count)."""
    import inspect
    import time

    from trainwreck.collect import Context
    from trainwreck.collect.bundle import Bundle
    from trainwreck.collect.safeio import Entry, Skip
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        b = Bundle(d, d)
        n_params = len(inspect.signature(Context).parameters)
        ctx = Context(b, time.monotonic() + 30) if n_params >= 2 else Context(b)
        try:
            reader.read(b, Entry(name, path, len(data), 0.0), ctx)
        except Skip:
            pass
    # Known bug (tests/test_parsers_property.py::test_readers_number_lines_like_an_editor, xfail): the readers
    # number lines with str.splitlines, which also breaks at \r, \x0b, \x0c, \x1c-\x1e, \x85, \u2028, so on such
    # input a citation can point past the file's last newline-separated line. Bound by the larger count until fixed.
    return b, max(data.count(b"\n") + 1, len(data.decode("utf-8", "replace").splitlines()))


def yaml_config(data: bytes) -> None:
    from trainwreck.collect.yamlish import scan
    lines = _text(data).splitlines()
    for key, _val, n in scan(lines):
        check(isinstance(key, str) and 1 <= n <= len(lines), f"yaml key {key!r} at line {n} of {len(lines)}")


def jsonl_record(data: bytes) -> None:
    from trainwreck.collect.readers.jsonl import parse_record
    for line in _text(data).splitlines()[:200]:
        _check_metrics(parse_record(line), "jsonl record")


def jsonl_scan(data: bytes) -> None:
    from trainwreck.collect.readers.jsonl import first_nonfinite
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        hit = first_nonfinite(f.fileno(), len(data))
    if hit is not None:
        off, ln, line = hit
        check(0 <= off < len(data) and data[off:off + len(line)] == line, f"offset {off} does not hold {line!r}")
        check(off == 0 or data[off - 1:off] == b"\n", f"offset {off} is not the start of a line")
        check(ln is None or ln == data.count(b"\n", 0, off) + 1, f"line number {ln} for offset {off}")


def redact(data: bytes) -> None:
    from trainwreck.collect.redact import redact as r
    once = r(_text(data))
    check(isinstance(once, str) and r(once) == once, "redaction is not idempotent")


def log_lines(data: bytes) -> None:
    from trainwreck.collect.safeio import clean_line
    for raw in data.split(b"\n")[:500]:
        out = clean_line(raw)
        check(isinstance(out, str) and "\x00" not in out and "\n" not in out, f"clean_line gave {out!r}")


def text_metrics(data: bytes) -> None:
    from trainwreck.collect.textmetrics import extract
    for line in _text(data).splitlines()[:200]:
        _check_metrics(extract(line), "text metrics")


def text_tables(data: bytes) -> None:
    from trainwreck.collect.texttables import rows
    lines = [Line("f.log", i, t) for i, t in enumerate(_text(data).splitlines()[:2000], 1)]
    for row in rows(lines):
        line, step, values = row
        check(line in lines, f"table row cites a line that was not given: {line!r}")
        _check_metrics((step, values), "text table")


def rank_prefixes(data: bytes) -> None:
    from trainwreck.collect.ranks import launcher_prefix, line_rank, prefix_rank, split_stream, strip_prefixes
    for line in _text(data).splitlines()[:200]:
        key, rank, body = split_stream(line)
        check(line.endswith(body), f"split_stream's body is not the end of the line: {line!r} -> {body!r}")
        check(prefix_rank(line) == rank, f"prefix_rank disagrees with split_stream on {line!r}")
        for r, rest in (launcher_prefix(line), strip_prefixes(line)):
            check(r is None or (isinstance(r, int) and r >= 0), f"rank {r!r} from {line!r}")
            check(line.endswith(rest), f"a prefix strip returned text that is not the end of {line!r}: {rest!r}")
        r = line_rank(line)
        check(r is None or (isinstance(r, int) and r >= 0), f"line_rank {r!r} from {line!r}")


def trainer_state(data: bytes) -> None:
    from trainwreck.collect.bundle import Bundle
    from trainwreck.collect.readers.trainer_state import _entries
    b = Bundle("/", "/")
    text = _text(data)
    n = _entries(b, "trainer_state.json", text, 1)
    check(isinstance(n, int) and n >= 0, f"entry count {n!r}")
    _check_bundle(b, "trainer_state.json", text.count("\n") + 1)


def tracebacks(data: bytes) -> None:
    from trainwreck.analyze.tracebacks.summary import summarize
    lines = [Line("f.log", i, t) for i, t in enumerate(_text(data).splitlines()[:2000], 1)]
    out = summarize(lines)
    check(isinstance(out, dict), "summary is not a dict")
    import json
    json.dumps(out)  # JSON-ready, as promised


def catalog_yaml(data: bytes) -> None:
    from trainwreck.collect.yamlish import YAMLError, loads
    try:
        loads(_text(data))
    except YAMLError:
        pass


def csv_metrics(data: bytes) -> None:
    from trainwreck.collect.readers import csvmetrics
    b, n = _read_file(csvmetrics, "metrics.csv", data)
    _check_bundle(b, "metrics.csv", n)


def env_facts(data: bytes) -> None:
    from trainwreck.collect.readers import facts
    for name in ("pip_freeze.txt", "seed.txt", "wandb-metadata.json"):
        b, n = _read_file(facts, name, data)
        _check_bundle(b, name, n)
        for key, src in b.facts.items():
            check(isinstance(key, str) and src.path == name, f"fact {key!r} cites {src.path!r}")
            check(src.line is None or 1 <= src.line <= n, f"fact {key!r} at line {src.line} of {n}")


def elastic_error(data: bytes) -> None:
    from trainwreck.collect.readers import elastic_error as reader
    b, n = _read_file(reader, "error.json", data)
    _check_bundle(b, "error.json", n)
    check(len(b.extra_lines) <= 400, f"{len(b.extra_lines)} lines kept from one error file (cap 400)")


def _hooks():
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks")
    if here not in sys.path:
        sys.path.insert(0, here)


def hook_transcript(data: bytes) -> None:
    """The Stop hook's backward transcript reader: lines are the file's own, in reverse; scan never raises."""
    _hooks()
    import quote_match
    import transcript_tail
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
        f.write(data)
        f.flush()
        f.seek(0)
        got = list(transcript_tail.lines_backward(f, len(data), 1 << 30))
        want = [ln for ln in data.split(b"\n") if ln.strip()][::-1]
        check(got == want, "lines_backward did not give the file's lines in reverse")
        turn = transcript_tail.scan(f.name, quote_match.Sources(), 1 << 20)
        check(0 <= turn.records <= len(want), f"{turn.records} records from {len(want)} lines")
        check(isinstance(turn.last_text, str) and isinstance(turn.prompt, str), "turn texts are not strings")
        for tid, text, has_output in turn.results:
            check(isinstance(text, str) and isinstance(has_output, bool), f"tool result {tid!r}")
        for text in transcript_tail.evidence_results(turn):
            check(isinstance(text, str), "evidence result is not a string")


def hook_quotes(data: bytes) -> None:
    """The Stop hook's claim and quote extraction: a reply always backs its own quotes."""
    _hooks()
    import claim_detector
    import quote_match
    msg = _text(data)
    a = claim_detector.analyse(msg)
    check(isinstance(a.domain, bool) or a.domain in (0, 1), f"domain {a.domain!r}")
    src = quote_match.Sources()
    src.add(msg)
    for q in a.quotes:
        check(q.kind in ("number", "text"), f"quote kind {q.kind!r}")
        if q.origin == "dquote" and "`" in msg:
            continue  # known bug (tests/hooks/test_guard_contract.py, xfail): inline code inside "…" is masked
        check(quote_match.found(q.text, q.kind, src), f"quote {q.text!r} is not found in its own message")
    for c in a.claims:
        check(isinstance(c, str) and c.strip() != "", f"claim {c!r}")


def run_dir(data: bytes) -> None:
    """The whole pipeline on a run directory whose files hold the fuzz input."""
    from trainwreck.model import CLASSIFICATIONS
    from trainwreck.pipeline import diagnose
    with tempfile.TemporaryDirectory() as d:
        k = len(data) // 4
        parts = [data[:k], data[k:2 * k], data[2 * k:3 * k], data[3 * k:]]
        for name, part in zip(("train.log", "metrics.jsonl", "config.yaml", "trainer_state.json"), parts):
            with open(os.path.join(d, name), "wb") as f:
                f.write(part)
        rep = diagnose(d, probe=False).diagnosis.to_json()
    check(rep["classification"] in CLASSIFICATIONS, f"classification {rep['classification']!r}")
    check(0.0 <= rep["confidence"] <= 1.0, f"confidence {rep['confidence']!r}")


TARGETS = {f.__name__: f for f in (yaml_config, jsonl_record, jsonl_scan, redact, log_lines, text_metrics,
                                    text_tables, rank_prefixes, trainer_state, tracebacks, catalog_yaml, csv_metrics, env_facts,
                                    elastic_error, hook_transcript, hook_quotes, run_dir)}

SEEDS = [
    b"model:\n  lr: 3e-3\n  layers:\n    - 1\n    - name: x\n",
    b'{"step": 1, "loss": NaN, "grad_norm": Infinity}\n{"step": 2, "loss": "nan"}\n',
    b"step 120 loss=nan lr=3.0\n{'loss': 2.31, 'grad_norm': nan, 'learning_rate': 4.9e-05}\n",
    b"Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    f()\nValueError: x\n"
    b"\nDuring handling of the above exception, another exception occurred:\n\nRuntimeError: y\n",
    b"OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz https://u:p@h.org/ password: hunter2\n",
    b" iteration      100/  500000 | lm loss: 7.1E+00 | loss scale: 65536.0 | grad norm: 1.2 |\n",
    b"epoch\ttrain_loss\tvalid_loss\taccuracy\n1\t2.76\t2.75\t0.44\n2\tnan\t6.22\t0.07\n",
    b'{"log_history": [\n  {\n    "loss": NaN,\n    "step": 1\n  },\n  {"loss": 2.0, "step": 2}]}',
    b"step,epoch,train_loss,val_loss\n0,0,2.31,\n1,0,nan,\n,0,,2.4\n2.0,1,inf,\n",
    b"torch==2.3.1\ndeepspeed @ git+https://x\nnumpy 1.26\nPyTorch version: 2.3.1\nDriver Version: 535.1\n42\n",
    b'{"message": {"message": "RuntimeError: x", "extraInfo": {"py_callstack": "Traceback (most recent call '
    b'last):\\n  File \\"t.py\\", line 3\\nRuntimeError: x", "timestamp": "1"}}}',
    b'{"type":"user","message":{"role":"user","content":"why is the loss NaN?"},"uuid":"u1"}\n'
    b'{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Bash",'
    b'"input":{"command":"tail train.log"}}]}}\n{"type":"user","message":{"content":[{"type":"tool_result",'
    b'"tool_use_id":"t1","content":"step 12 loss=nan"}]},"toolUseResult":{"stdout":"step 12 loss=nan"}}\n'
    b'{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"The root cause is the lr."}]}}\n',
    "The log shows `step 1170 loss=nan lr=3.0e-03`, so the root cause is fp16 overflow.\n```\nRuntimeError: "
    "CUDA error\n```\n> grad_norm=inf at step 3\n| metric | value |\n|---|---|\n| loss | `nan` |\n".encode(),
]
