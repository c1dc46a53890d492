"""Issue 10, "Found 6": nothing from a run reaches a terminal or a Markdown page unneutralised.

The payloads are the outside probe's, generated here: OSC sequences (a window-title write `ESC ] 0 ; … BEL`, an
OSC 52 clipboard write), BEL, backspace, the one-byte C1 CSI U+009B, a carriage return mid-line, bidi overrides
and isolates (U+202E, U+2066), zero-width characters (U+200B, U+2060) and a BOM, and for Markdown `<script>`,
`<img onerror>`, `<!--`, a live `[click here](…)` link, backticks and a file name holding a backtick and a
newline followed by a heading. Each is planted in an exception message, in a log line and in the log's file
name; the tests run the real CLI (`diagnose`, `--md`, `--json`, `--out`, `collect`, `traceback`) and read its
bytes. Log layout: CPython's traceback (`Traceback (most recent call last):`, `  File "…", line N, in f`).
"""
import json
import re
import shutil

import pytest
from twtest import EXAMPLES, run_cli

ESC, BEL = "\x1b", "\x07"
CONTROLS = {  # planted character → how the output must show it
    ESC + "]0;title" + BEL: "\\x1b]0;title\\x07",
    ESC + "]52;c;ZXZpbA==" + BEL: "\\x1b]52;c;ZXZpbA==\\x07",
    "bs\x08": "bs\\x08",
    "c1\x9b31m": "c1\\x9b31m",
    "\u202e": "\\u202e", "\u2066": "\\u2066", "\u200b": "\\u200b", "\u2060": "\\u2060", "\ufeff": "\\ufeff",
}
HTML = "<script>alert(1)</script> <img src=x onerror=alert(1)> <!-- [click here](http://x.example) `tick`"
MESSAGE = "boom " + " ".join(CONTROLS) + " bel" + BEL + " " + HTML + " end"
FILE_NAME = "tr\u202eain`\n# Injected heading " + ESC + "]0;t" + BEL + " cr\rFAKE.log"
TB = 'Traceback (most recent call last):\n  File "/w/train.py", line 9, in <module>\n    loss.backward()\n'
# what must never be written raw: every planted control, bidi and invisible character
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile") / "run"
    d.mkdir()
    (d / FILE_NAME).write_text(f"step 10 loss=2.5\nlog line {MESSAGE}\n{TB}RuntimeError: {MESSAGE}\n",
                               encoding="utf-8")
    return d


def _out(*args, stdin=None):
    p = run_cli(*args, stdin=stdin)
    assert p.returncode == 0, p.stderr[-800:]
    return p.stdout


def _neutral(text: str, where: str) -> None:
    raw = RAW.findall(text)
    assert not raw, f"{where}: raw {[hex(ord(c)) for c in raw][:8]} reached the output"


@pytest.mark.parametrize("verb", [["diagnose", "--no-probe"], ["diagnose", "--no-probe", "--md"],
                                  ["collect", "--no-probe"], ["traceback"]])
def test_controls_are_shown_escaped(run, verb):
    out = _out(*verb, str(run))
    _neutral(out, " ".join(verb))
    if "--md" in verb:  # as it renders: Markdown's backslash escapes read
        out = re.sub(r"\\([\\`*\[\]|~_#+.!()-])", r"\1", out)
    for shown in ("\\x1b]0;title\\x07", "\\x9b31m", "\\u202e"):
        assert shown in out, f"{verb}: {shown} is not shown: the message is missing or not escaped"
    assert "\\u202eain`\\n# Injected" in out  # the file name, on one line, its newline shown


def test_every_planted_control_is_escaped_in_the_quoted_line(run):
    out = _out("collect", "--no-probe", str(run))  # collect quotes the log tail whole
    _neutral(out, "collect")
    for planted, shown in CONTROLS.items():
        assert shown in out, f"{planted!r} is not shown as {shown}"
    assert "bel\\x07 " in out


@pytest.mark.parametrize("verb", [["diagnose", "--no-probe"], ["collect", "--no-probe"], ["traceback"]])
def test_a_carriage_return_mid_line_is_shown(run, verb):
    """A log reader splits lines at a lone CR (progress bars); a file name keeps it, and it is shown as \\r."""
    out = _out(*verb, str(run))
    _neutral(out, " ".join(verb))
    assert "cr\\rFAKE.log" in out


def test_json_on_a_terminal_is_neutral_and_the_data_unchanged(run):
    out = _out("diagnose", "--no-probe", "--json", str(run))
    _neutral(out, "--json")
    d = json.loads(out)
    assert "\u202e" in d["headline"] and "c1\x9b31m" in d["causes"][0]["evidence"][0]["text"]
    assert any(f["path"] == FILE_NAME for f in d["evidence_files"])
    _neutral(_out("collect", "--no-probe", "--json", str(run)), "collect --json")
    _neutral(_out("traceback", "--json", str(run)), "traceback --json")


def _markdown_is_inert(md: str) -> None:
    _neutral(md, "report.md")
    for raw in ("<script", "<img", "<!--"):
        assert raw not in md, f"report.md carries {raw!r} unescaped"
    assert not re.search(r"(?<!\\)\]\(", md), "report.md carries a live link"
    headings = [ln for ln in md.splitlines() if ln.lstrip().startswith("#")]
    assert headings and all(re.match(r"#{1,2} (trainwreck diagnosis|[A-Z])", h) for h in headings), headings
    assert not any("Injected" in h for h in headings)
    assert "&lt;script&gt;" in md and "\\[click here\\]" in md  # the text is there, as text
    prose = re.sub(r"(`+)(?:(?!\1).)+?\1", "", md)  # outside code spans, GitHub would link a bare URL
    assert "http://x.example" in md and "://" not in prose.replace("https://github.com", ""), "a bare URL is live"


def test_report_md_escapes_html_and_markdown(run, tmp_path):
    out = tmp_path / "out"
    _out("diagnose", "--no-probe", "--out", str(out), str(run))
    _markdown_is_inert((out / "report.md").read_text(encoding="utf-8"))
    _markdown_is_inert(_out("diagnose", "--no-probe", "--md", str(run)))


def test_report_json_written_by_out_is_neutral_and_the_data_unchanged(run, tmp_path):
    out = tmp_path / "out"
    _out("diagnose", "--no-probe", "--out", str(out), str(run))
    for name in ("report.json", "artifacts/failure.lock.json"):
        text = (out / name).read_text(encoding="utf-8")
        _neutral(text, name)  # `cat report.json` must not act on a planted control
    assert "\u202e" in json.loads((out / "report.json").read_text(encoding="utf-8"))["headline"]


def test_a_backtick_in_a_file_name_cannot_close_its_code_span():
    from trainwreck.report.safe import md_code
    span = md_code("a`` b`\n# h")
    fence = re.match(r"`+", span).group(0)
    assert len(fence) == 3 and span.endswith(fence) and "\n" not in span


def test_a_verb_without_its_own_escaping_is_neutral_too(tmp_path):
    """`rollback` prints checkpoint names as they are: the CLI's stdout itself neutralises what any verb writes."""
    run = tmp_path / "run"
    shutil.copytree(f"{EXAMPLES}/nan-fp16", run)
    planted = "step_300" + ESC + "]0;title" + BEL + "\u202e.pt"
    (run / "checkpoints" / "step_300.pt").rename(run / "checkpoints" / planted)
    out = _out("rollback", str(run))
    _neutral(out, "rollback")
    assert "step_300\\x1b]0;title\\x07\\u202e.pt" in out
