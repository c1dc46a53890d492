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


def yaml_config(data: bytes) -> None:
    from trainwreck.collect.yamlish import scan
    list(scan(_text(data).splitlines()))


def jsonl_record(data: bytes) -> None:
    from trainwreck.collect.readers.jsonl import parse_record
    for line in _text(data).splitlines()[:200]:
        parse_record(line)


def jsonl_scan(data: bytes) -> None:
    from trainwreck.collect.readers.jsonl import first_nonfinite
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.flush()
        first_nonfinite(f.fileno(), len(data))


def redact(data: bytes) -> None:
    from trainwreck.collect.redact import redact as r
    r(_text(data))


def log_lines(data: bytes) -> None:
    from trainwreck.collect.safeio import clean_line
    for raw in data.split(b"\n")[:500]:
        clean_line(raw)


def text_metrics(data: bytes) -> None:
    from trainwreck.collect.textmetrics import extract
    for line in _text(data).splitlines()[:200]:
        extract(line)


def text_tables(data: bytes) -> None:
    from trainwreck.collect.texttables import rows
    list(rows([Line("f.log", i, t) for i, t in enumerate(_text(data).splitlines()[:2000], 1)]))


def trainer_state(data: bytes) -> None:
    from trainwreck.collect.bundle import Bundle
    from trainwreck.collect.readers.trainer_state import _entries
    _entries(Bundle("/", "/"), "trainer_state.json", _text(data), 1)


def tracebacks(data: bytes) -> None:
    from trainwreck.analyze.tracebacks.summary import summarize
    summarize([Line("f.log", i, t) for i, t in enumerate(_text(data).splitlines()[:2000], 1)])


def catalog_yaml(data: bytes) -> None:
    from trainwreck.collect.yamlish import YAMLError, loads
    try:
        loads(_text(data))
    except YAMLError:
        pass


def run_dir(data: bytes) -> None:
    """The whole pipeline on a run directory whose files hold the fuzz input."""
    from trainwreck.pipeline import diagnose
    with tempfile.TemporaryDirectory() as d:
        k = len(data) // 4
        parts = [data[:k], data[k:2 * k], data[2 * k:3 * k], data[3 * k:]]
        for name, part in zip(("train.log", "metrics.jsonl", "config.yaml", "trainer_state.json"), parts):
            with open(os.path.join(d, name), "wb") as f:
                f.write(part)
        diagnose(d, probe=False)


TARGETS = {f.__name__: f for f in (yaml_config, jsonl_record, jsonl_scan, redact, log_lines, text_metrics,
                                    text_tables, trainer_state, tracebacks, catalog_yaml, run_dir)}

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
]
