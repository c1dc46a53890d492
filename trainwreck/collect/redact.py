"""Secret redaction, applied once at collection time, before any detector or renderer sees text.

Two kinds of rules:
- token shapes that are secrets wherever they appear (hf_…, sk-…, AKIA…, ghp_…, xox…-, JWTs, PEM bodies);
- key/value pairs whose key names a secret (password=, api_key:, "token": …, AWS_SECRET_ACCESS_KEY=…,
  .netrc `password X`), and credentials inside URLs.
The replacement keeps the line readable: `[REDACTED:kind]`.
"""
from __future__ import annotations

import re
from typing import Callable, List, Tuple

from trainwreck import lazy_re

_Rule = Tuple[str, "re.Pattern[str]", Callable[["re.Match[str]"], str]]


def _tag(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _whole(kind: str) -> Callable[["re.Match[str]"], str]:
    return lambda m: _tag(kind)


_SHAPES: List[_Rule] = [
    ("private-key", lazy_re(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
     _whole("private-key")),
    ("anthropic-key", lazy_re(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"), _whole("anthropic-key")),
    ("openai-key", lazy_re(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), _whole("openai-key")),
    ("hf-token", lazy_re(r"\bhf_[A-Za-z0-9]{20,}"), _whole("hf-token")),
    ("github-token", lazy_re(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"), _whole("github-token")),
    ("aws-key-id", lazy_re(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), _whole("aws-key-id")),
    ("slack-token", lazy_re(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), _whole("slack-token")),
    ("slack-webhook", lazy_re(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), _whole("slack-webhook")),
    ("google-api-key", lazy_re(r"\bAIza[0-9A-Za-z_\-]{35}\b"), _whole("google-api-key")),
    ("jwt", lazy_re(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), _whole("jwt")),
    ("bearer", lazy_re(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/\-]{16,}=*"), lambda m: f"{m.group(1)} {_tag('token')}"),
    # user:password@host in any URL; the user name stays, the password goes.
    # (the scheme is found backwards from `://`, and an e-mail's local part is at most 64 characters: both rules
    # are then linear; a scheme-first or unbounded form backtracks quadratically on a long run of letters)
    ("url-credentials", lazy_re(r"((?<=[a-zA-Z0-9+.\-])://)([^/\s:@'\"]+):([^/\s@'\"]+)@"),
     lambda m: f"{m.group(1)}{m.group(2)}:{_tag('password')}@"),
    ("email", lazy_re(r"\b[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,16}\.[A-Za-z]{2,63}\b"),
     _whole("email")),
]

# Key names that mark their value as a secret.
_SECRET_KEY = (
    r"(?:[A-Za-z0-9]+[_\-.])*"
    r"(?:password|passwd|passphrase|pwd|secret|secret[_\-]?key|client[_\-]?secret|api[_\-]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|token|credentials?|session[_\-]?key)"
)
# Keys that end in "token" but name vocabulary items or counts, never secrets.
_NOT_SECRET = lazy_re(
    r"(?i)(?:^|[_\-.])(?:pad|eos|bos|unk|sep|cls|mask|max|min|num|n|total|special|start|end|image|added|decoder"
    r"|prompt|new|vocab|chat)[_\-.]?tokens?$|tokens?[_\-.]?(?:id|ids|len|length|count|type)$")
# `+db.password=…` / `~db.password`: Hydra's add / delete override prefixes may stand before the key
_KV = lazy_re(
    r"(?i)(?P<pre>(?:^|(?<=[\s,{;(\[\"'+~-]))(?P<q>[\"']?)(?P<key>" + _SECRET_KEY + r")(?P=q)\s*(?P<sep>[:=]|\s(?=\S))\s*)"
    r"(?P<vq>\\?[\"']?)(?P<val>(?<=\")[^\"\n\\]+(?=\\?\")|(?<=')[^'\n\\]+(?=\\?')|(?:[^\s\"',}\]\\]|\\(?![\"']))+)"
)
# A password-like key that opens a line (`password: two words`, `DB_PASSWORD=a b`): its whole unquoted value,
# to the end of the line or a ` #` comment, is the secret, not only its first word.
_PW_LINE = lazy_re(
    r"(?i)^(?P<pre>\s*(?:-\s+)?[+~]?(?:[A-Za-z0-9]+[_\-.])*(?:password|passwd|passphrase|pwd|secret|client[_\-]?secret"
    r"|secret[_\-]?key|private[_\-]?key|credentials?)\s*[:=][ \t]*)(?P<val>[^\s\"'\[{#][^#\n]*?)(?P<post>[ \t]+#.*)?$")
_NETRC = lazy_re(r"(?i)\b(password|passwd)\s+(\S+)")
_HEX40 = lazy_re(r"\b[0-9a-f]{40}\b")
_HEX_CONTEXT_OK = lazy_re(r"(?i)commit|sha|git|hash|revision|checksum|digest")
_BORING_VALUES = {"", "null", "none", "~", "false", "true", "***", "xxx", "<redacted>", "changeme"}


def _kv_sub(m: "re.Match[str]") -> str:
    key, val = m.group("key"), m.group("val")
    if val.startswith(("[REDACTED:", "${")) or val.lower() in _BORING_VALUES:  # ${…}: an interpolation, no secret
        return m.group(0)
    is_password = re.search(r"(?i)pass|pwd|secret|private|credential", key) is not None
    if not is_password:
        if _NOT_SECRET.search(key):
            return m.group(0)
        # a token/key value is a secret only if it looks like one: long, no spaces, not a plain number
        if len(val) < 8 or re.fullmatch(r"[-+]?[\d.eE+-]+", val) or re.fullmatch(r"[<\[].*[>\]]", val):
            return m.group(0)
        if m.group("sep") not in (":", "="):
            return m.group(0)
    elif m.group("sep") not in (":", "=") and not re.fullmatch(r"(?i)pass(word|wd)?", key):
        return m.group(0)
    return f"{m.group('pre')}{m.group('vq')}{_tag('secret')}"


def _pw_line_sub(m: "re.Match[str]") -> str:
    val = m.group("val").strip()
    if val.startswith(("[REDACTED:", "${")) or val.lower() in _BORING_VALUES:
        return m.group(0)
    return f"{m.group('pre')}{_tag('secret')}{m.group('post') or ''}"


# One cheap search decides whether a line can hold a secret at all; most log lines cannot.
_MAYBE = lazy_re(
    r"(?i)hf_|sk-|\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)|gh[pousr]_|github_pat|xox[abposr]-|AIza|eyJ|bearer|basic\s"
    r"|://[^/\s]*@|hooks\.slack\.com/|@[a-z0-9\-]+\.|PRIVATE KEY|[0-9a-f]{40}"
    r"|(?:pass|pwd|secret|key|token|credential|session)[\w\-.]*[\"']?\s*[:= ]")


# Literal hints, checked with `in` on the lower-cased line before any regex runs.
_HINTS = ("hf_", "sk-", "akia", "asia", "agpa", "aida", "aroa", "anpa", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
          "github_pat", "xox", "aiza", "eyj", "bearer", "basic", "://", "@", "private key", "pass", "pwd", "secret",
          "key", "token", "credential", "session")
_HEXRUN = lazy_re(r"[0-9a-f]{40}")


_DIGITS = str.maketrans("0123456789", "##########")
_CLEAN_LAYOUTS: "dict[str, bool]" = {}


def redact(text: str) -> str:
    """Return `text` with every recognised secret replaced by a [REDACTED:kind] marker."""
    if not text:
        return text
    low = text.lower()
    if not any(h in low for h in _HINTS) and not _HEXRUN.search(text):
        return text
    # Whether a line needs redaction does not change when only its digits change (every rule treats digits
    # alike), so a metrics line whose layout already proved clean ("tokens_per_second": N) is not re-scanned.
    layout = text.translate(_DIGITS) if len(text) < 2000 else None
    if layout is not None and _CLEAN_LAYOUTS.get(layout):
        return text
    # a 40-hex run (a git sha) is one of _MAYBE's alternatives: no need to compile and run it for that line
    out = _redact(text) if _HEXRUN.search(text) or _MAYBE.search(text) else text
    if layout is not None and len(_CLEAN_LAYOUTS) < 8192:
        _CLEAN_LAYOUTS[layout] = out == text
    return out


# A literal each rule's match must contain (any one of them; `None` when found case-insensitively, see _fold):
# a rule whose literals are all absent cannot match, so it is neither run nor compiled.
_NEEDS = {"private-key": ("-----BEGIN ",), "anthropic-key": ("sk-ant-",), "openai-key": ("sk-",), "hf-token": ("hf_",),
          "github-token": ("gh", "github_pat_"), "aws-key-id": ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"),
          "slack-token": ("xox",), "slack-webhook": ("https://hooks.slack.com/services/",), "google-api-key": ("AIza",),
          "jwt": ("eyJ",), "bearer": None, "url-credentials": ("://",), "email": ("@",)}
_PW_WORDS = ("pass", "pwd", "secret", "private", "credential")
_KV_WORDS = ("pass", "pwd", "secret", "key", "token", "credential")


def _fold(text: str) -> str:
    """Lower case as (?i) matches ASCII letters: also the long s and the dotless i, which re folds to s and i."""
    low = text.lower()
    return low if text.isascii() else low.replace("\u017f", "s").replace("\u0131", "i")


def _redact(text: str) -> str:
    for kind, rx, repl in _SHAPES:
        needs = _NEEDS.get(kind, ())
        if needs is None:
            if "bearer" not in _fold(text) and "basic" not in _fold(text):
                continue
        elif needs and not any(n in text for n in needs):
            continue
        text = rx.sub(repl, text)
    low = _fold(text)
    if any(w in low for w in _PW_WORDS):
        text = _PW_LINE.sub(_pw_line_sub, text)
        low = _fold(text)
    if any(w in low for w in _KV_WORDS):
        text = _KV.sub(_kv_sub, text)
        low = _fold(text)
    if "passw" in low:
        text = _NETRC.sub(lambda m: m.group(0) if m.group(2).startswith("[REDACTED") else f"{m.group(1)} {_tag('secret')}",
                          text)
    if _HEX40.search(text) and not _HEX_CONTEXT_OK.search(text):
        text = _HEX40.sub(_tag("key"), text)
    return text


class PemTracker:
    """Line-by-line redaction across a PEM block: lines between BEGIN and END PRIVATE KEY are all secret."""

    def __init__(self) -> None:
        self.inside = False

    def __call__(self, line: str) -> str:
        if self.inside:
            if "-----END" in line and "PRIVATE KEY-----" in line:
                self.inside = False
            return _tag("private-key")
        if "-----BEGIN" in line and "PRIVATE KEY-----" in line and "-----END" not in line:
            self.inside = True
            return _tag("private-key")
        return redact(line)


def _hinted_lines(low: str) -> List[int]:
    """Indexes of the lines of `low` (lower-cased, newline-joined) that contain a hint; str.find per hint runs
    at memory speed, where one regex alternation of all hints would try every branch at every position."""
    at = []
    for h in _HINTS:
        pos = low.find(h)
        while pos >= 0:
            at.append(pos)
            nl = low.find("\n", pos)
            if nl < 0:
                break
            pos = low.find(h, nl + 1)
    at.extend(m.start() for m in _HEXRUN.finditer(low))
    lines: List[int] = []
    line, prev = 0, 0
    for pos in sorted(set(at)):
        line += low.count("\n", prev, pos)
        prev = pos
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines

_BASE64_LINE = lazy_re(r"^[A-Za-z0-9+/=\s]*$")


def redact_lines(texts: List[str]) -> List[str]:
    """Redact a run of consecutive lines: one search over all of them finds the few lines that can hold a secret
    (the rest are returned as they are), and a PEM private-key block is masked whole, also when the lines start
    inside it (a window read from the middle of a file) or it opens and never closes."""
    out = list(texts)
    if not out:
        return out
    low = "\n".join(out).lower()  # lower() keeps every newline, so line indexes stay valid
    hinted = _hinted_lines(low)
    pem = [i for i in hinted if "private key-----" in out[i].lower()]
    masked = set()
    inside_from: "int | None" = None
    for i in pem:
        t = out[i]
        begin, end = "-----BEGIN" in t, "-----END" in t
        if begin and not end:
            inside_from = i if inside_from is None else inside_from
        elif end and not begin:
            if inside_from is None:  # the lines start inside a block: mask its body back to the first line
                j = i
                while j > 0 and _BASE64_LINE.match(out[j - 1]):
                    j -= 1
                inside_from = j
            masked.update(range(inside_from, i + 1))
            inside_from = None
    if inside_from is not None:
        masked.update(range(inside_from, len(out)))
    for i in masked:
        out[i] = _tag("private-key")
    for i in hinted:
        if i not in masked:
            out[i] = redact(out[i])
    return out
