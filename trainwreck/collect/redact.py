"""Secret redaction, applied once at collection time, before any detector or renderer sees text.

Secrets are matched by shape and by context:
- token shapes that are secrets wherever they appear (hf_…, sk-…, sk_live_…, glpat-…, AKIA…, ghp_…, xox…-, JWTs,
  PEM blocks and PEM body lines, which are known by their shape: 64 base64 characters);
- parameters that are keys or signatures by name (AccountKey=, SAS sig=, X-Amz-Signature=, Authorization: …);
- key/value pairs whose key names a secret (DB_PASS=, api_key:, "token": …, --api-key VALUE, .netrc `password X`),
  credentials inside URLs, and a 40-hex value only where a key name stands before it.
Look-alikes stay: git SHAs and snapshot hashes, digests, UUIDs, placeholders, "password authentication failed".
Every pattern is linear: bounded repetition, and a token is tried only where a run of token characters starts.
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


# A token starts where a run of token characters starts: one start per run keeps every rule linear (a rule tried
# at each position of a long run would rescan the run from each of them).
_RUN = r"(?:(?<![A-Za-z0-9_\-])|(?<=\\[nrt]))"  # also right after a JSON escape: "…\nhf_…"
_SHAPES: List[_Rule] = [
    ("private-key", lazy_re(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----.*?(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)",
                            re.S), _whole("private-key")),
    ("anthropic-key", lazy_re(_RUN + r"sk-ant-[A-Za-z0-9_\-]{16,}"), _whole("anthropic-key")),
    ("openai-key", lazy_re(_RUN + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"), _whole("openai-key")),
    ("stripe-key", lazy_re(_RUN + r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"), _whole("stripe-key")),
    ("gitlab-token", lazy_re(_RUN + r"gl(?:pat|dt|rt|ptt|cbt|ft|soat)-[A-Za-z0-9_\-]{20,}"), _whole("gitlab-token")),
    ("hf-token", lazy_re(_RUN + r"hf_[A-Za-z0-9]{20,}"), _whole("hf-token")),
    ("github-token", lazy_re(_RUN + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
     _whole("github-token")),
    ("aws-key-id", lazy_re(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b"), _whole("aws-key-id")),
    ("slack-token", lazy_re(_RUN + r"xox[abposr]-[A-Za-z0-9\-]{10,}"), _whole("slack-token")),
    ("slack-webhook", lazy_re(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), _whole("slack-webhook")),
    ("google-api-key", lazy_re(r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"), _whole("google-api-key")),
    ("jwt", lazy_re(_RUN + r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"), _whole("jwt")),
    # connection strings and signed URLs: the value of a parameter that is a key or a signature by its name
    ("signature", lazy_re(r"(?i)(?<![A-Za-z0-9_\-])(AccountKey|SharedAccessKey|SharedAccessSignature|X-Amz-Signature"
                          r"|X-Amz-Security-Token|X-Goog-Signature)=([^&;\s\"'<>]{1,4096})"),
     lambda m: f"{m.group(1)}={_tag('signature')}"),
    ("sas-signature", lazy_re(r"(?<=[?&])sig=[^&\s\"'<>]{1,4096}"), lambda m: f"sig={_tag('signature')}"),
    # an Authorization header: whatever follows its scheme is the credential, of any length
    ("authorization", lazy_re(r"(?i)\b((?:proxy-)?authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?)"
                              r"(?:(basic|bearer|token|digest|negotiate)[ \t]{1,4})?([^\s\"',;]{1,4096})"),
     lambda m: m.group(0) if _kept(m.group(3)) or (not m.group(2) and (len(m.group(3)) < 8 or m.group(3).isalpha()))
     else f"{m.group(1)}{m.group(2) + ' ' if m.group(2) else ''}{_tag('token')}"),
    ("bearer", lazy_re(r"(?i)\b(bearer)[ \t]{1,4}([A-Za-z0-9._~+/\-]{16,}=*)"), lambda m: f"{m.group(1)} {_tag('token')}"),
    # `Basic <base64>` outside a header: only base64 that cannot be a word ("Using basic scaled_dot_product…")
    ("basic", lazy_re(r"(?i)\b(basic)[ \t]{1,4}([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=_\-.])"),
     lambda m: f"{m.group(1)} {_tag('token')}" if _b64ish(m.group(2)) else m.group(0)),
    # user:password@host in any URL; the user name stays, the password goes.
    ("url-credentials", lazy_re(r"(?<![A-Za-z0-9+.\-])([a-zA-Z][a-zA-Z0-9+.\-]{0,31}://)([^/\s:@'\"]{1,128}):"
                                r"([^/\s@'\"]{1,256})@"),
     lambda m: f"{m.group(1)}{m.group(2)}:{_tag('password')}@"),
    ("email", lazy_re(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9][A-Za-z0-9.\-]{0,252}\.[A-Za-z]{2,24}\b"),
     _whole("email")),
]


def _b64ish(v: str) -> bool:
    return v.endswith("=") or any(c.isdigit() for c in v) or (len(v) >= 16 and not v.islower() and not v.isupper())


_PLACEHOLDER = lazy_re(r"(?i)[<\[][\w\-. ]{0,60}[>\]]|\$\{[^}]{0,200}\}|\$[A-Za-z_]\w{0,60}|your[\w\-]{0,30}|x{3,}|\*{3,}")


def _kept(val: str) -> bool:
    """A value that is no secret: empty, already redacted, a placeholder, an interpolation, a boolean."""
    return (val.lower() in _BORING_VALUES or val.startswith("[REDACTED:") or _PLACEHOLDER.fullmatch(val) is not None)


# `key = value` where the key names a secret. The key is a run of name characters whose last segment is one of
# the words below (DB_PASS, wandb.api_key, --api-key, "auth_token"); it starts where the run starts, and at most
# 64 characters before the word, so each run is tried once. Its value is parsed by _kv (in Python, bounded).
_KV = lazy_re(
    r"(?i)(?<![A-Za-z0-9_.\-])(?P<key>[A-Za-z0-9_.\-]{0,64}?(?<![A-Za-z0-9])"
    r"(?P<word>pass(?:word|wd|phrase)?|pwd|secret|token|key|apikey|credentials?))(?![A-Za-z0-9_.\-])"
    r"(?P<q>[\"']?)(?:[ \t]{0,8}(?P<sep>[:=])|(?P<sp>[ \t]{1,8}))[ \t]{0,8}(?P<vq>\\?[\"']?)")
_PW_WORDS_KV = {"pass", "password", "passwd", "passphrase", "pwd", "secret", "credential", "credentials"}
# Key names that end in "key" and are secrets whatever their value looks like; any other *_key needs a value
# that looks random (letters and digits) or an environment-style name (SIGNING_KEY).
_SECRET_KEYS = lazy_re(r"(?i)(?:^|[_\-.])(?:api|access|secret|private|account|signing|session|master|encryption"
                       r"|license|client|auth|service|deploy|ssh|app|wandb|openai|anthropic|cohere|hf|hub)[_\-.]?key$"
                       r"|^apikey$")
# Keys that end in "token" but name vocabulary items or counts, never secrets.
_NOT_SECRET = lazy_re(
    r"(?i)(?:^|[_\-.])(?:pad|eos|bos|unk|sep|cls|mask|max|min|num|n|total|special|start|end|image|added|decoder"
    r"|prompt|new|vocab|chat)[_\-.]?tokens?$|tokens?[_\-.]?(?:id|ids|len|length|count|type)$")
_VALUE = lazy_re(r"(?:[^\s\"',}\]\\]|\\(?![\"'])){1,4096}")
_QVALUE = lazy_re(r"[^\s\"'&;<>]{1,4096}")
_TRAILING = lazy_re(r"[ \t]{0,64}")
_PW_NAMES = lazy_re(r"(?i)(?:secret|private)[_\-.]?key$")
_NETRC_BEFORE = lazy_re(r"(?:^|\s)(?:login|machine)[ \t]{1,8}\S{1,80}[ \t]{1,8}$")
_LINE_START = lazy_re(r"[ \t]{0,64}(?:-[ \t]{1,8})?[+~]?")
_NUMBER = lazy_re(r"[-+]?[\d.eE+\-]{1,64}")
_BORING_VALUES = {"", "null", "none", "~", "false", "true", "***", "xxx", "<redacted>", "changeme"}


_KV_MAX = 512  # key/value candidates judged on one line; past them the rest of the line is masked (fail closed)


def _kv(text: str) -> str:
    out: List[str] = []
    pos = done = 0
    for _ in range(_KV_MAX):
        m = _KV.search(text, pos)
        if m is None:
            break
        vs = m.end()
        key, word, sep, vq = m.group("key", "word", "sep", "vq")
        if sep is None and key[:2] != "--" and word.lower() not in ("password", "passwd"):
            pos = vs  # `token embeddings`, `key 3`: a space after a key name is a separator for flags only
            continue
        q = vq[-1:]
        if q in ("\"", "'"):
            close = text.find(q, vs, vs + 4096)
            ve = close if close > vs else vs
            if ve > vs and text[ve - 1] == "\\":
                ve -= 1
        else:  # in a URL query or a connection string (`?token=…&`, `;Password=…;`) the value ends at `&` or `;`
            ks = m.start()
            v = (_QVALUE if ks and text[ks - 1] in "?&;" else _VALUE).match(text, vs)
            ve = v.end() if v else vs
        pos = max(m.end(), ve, m.start() + 1)
        if ve <= vs or (ve - vs < 8 and word.lower() in ("token", "key", "apikey") and not _PW_NAMES.search(key)):
            continue  # no value, or a token/key value too short to be one
        ve = _judge(text, m, vs, ve, q)
        if ve:
            out.append(text[done:vs])
            out.append(_tag("secret"))
            done = ve
            pos = max(pos, ve)
    else:  # a line of hundreds of key names (no log line has them): bounded work, nothing after them is shown
        if _KV.search(text, pos) is not None:
            out.append(text[done:pos])
            out.append(_tag("secret"))
            done = len(text)
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def _judge(text: str, m: "re.Match[str]", vs: int, ve: int, q: str) -> int:
    """Where the secret value [vs, ve) of key/value match `m` ends, or 0 when it is no secret."""
    key, word, sep = m.group("key"), m.group("word").lower(), m.group("sep")
    val = text[vs:ve]
    if _kept(val) or val.startswith("$") or (val[:1] in "[<" and _PLACEHOLDER.match(text, vs)):
        return 0
    cli = key.startswith("--")
    name = key.lstrip("-")
    if cli and not sep and val.startswith("-"):  # `--token --lr 3e-4`: the next flag, no value
        return 0
    ks = m.start()
    if word in _PW_WORDS_KV or _PW_NAMES.search(name):
        if word == "pass" and name.lower() == "pass" and not cli:  # `pass: 3` counts tests; DB_PASS is a password
            return 0
        if not sep and not cli:
            # `password VALUE` with no separator: a .netrc entry (its own line, or after `login X`), or a value that
            # is no plain word ("FATAL: password authentication failed" names no password)
            if name.lower().rsplit(".", 1)[-1] not in ("password", "passwd"):
                return 0
            if val.isalpha() and not (_LINE_START.fullmatch(text, 0, ks) and _TRAILING.fullmatch(text, ve)):
                before = max(0, ks - 100)
                if (text.find("login", before, ks) < 0 and text.find("machine", before, ks) < 0) or \
                        _NETRC_BEFORE.search(text, before, ks) is None:
                    return 0
        if sep and not q and _LINE_START.fullmatch(text, 0, ks) and val[:1] not in "[{#":
            # a password-like key that opens a line: its whole value, to the end or a ` #` comment, is the secret
            rest = text[vs:]
            cut = min((i for i in (rest.find(" #"), rest.find("\t#")) if i >= 0), default=len(rest))
            return vs + len(rest[:cut].rstrip())
        return ve
    if not sep and not cli:
        return 0
    if _NOT_SECRET.search(name) or len(val) < 8 or _NUMBER.fullmatch(val):
        return 0
    if word == "key" and not _SECRET_KEYS.search(name) and not (name.isupper() and "_" in name):
        # a value that looks random: letters and digits mixed, and not a name built only of words and short
        # counters (`store_based_barrier_key:1`); one random-looking part (`prod_user_9f8a7b6c5d4e`) is a secret
        parts = [w for w in _PARTS.split(val) if w]
        if not (any(c.isdigit() for c in val) and any(c.isalpha() for c in val)) or (
                sum(1 for w in parts if len(w) >= 4 and w.isalpha()) >= 2
                and all(w.isalpha() or (w.isdigit() and len(w) <= 6) for w in parts)):
            return 0
    return ve


_PARTS = lazy_re(r"[^A-Za-z0-9]+")


# A 40-hex value is a key only where a key name stands just before it ("Logging in with key <hex>"); alone, in a
# path or after commit/sha it is a git SHA or a Hugging Face snapshot hash and stays.
_HEX40 = lazy_re(r"(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])")
_HEX_KEY_BEFORE = lazy_re(r"(?i)(?:key|token|secret|passw(?:or)?d|auth|api|wandb)[\"']?[ \t:=]{1,4}[\"']?$")
_HEX_OK_BEFORE = lazy_re(r"(?i)commit|sha|git|hash|revision|checksum|digest|snapshots?/")
# A PEM body line: 64 base64 characters, with upper, lower case and digits (a hex digest is not one).
_PEM_BODY = lazy_re(r"[ \t]{0,16}[A-Za-z0-9+/]{64}[ \t]{0,4}")


def _pem_body(text: str) -> bool:
    if not 64 <= len(text) <= 84 or _PEM_BODY.fullmatch(text) is None:
        return False
    return any(c.isupper() for c in text) and any(c.islower() for c in text) and any(c.isdigit() for c in text)


def _hex_keys(text: str) -> str:
    def sub(m: "re.Match[str]") -> str:
        before = text[max(0, m.start() - 32):m.start()]
        return _tag("key") if _HEX_KEY_BEFORE.search(before) and not _HEX_OK_BEFORE.search(before) else m.group(0)
    return _HEX40.sub(sub, text)


# Literal hints, checked with `in` on the lower-cased line before any regex runs.
_HINTS = ("hf_", "sk-", "sk_live", "sk_test", "rk_live", "rk_test", "akia", "asia", "agpa", "aida", "aroa", "anpa", "ghp_", "gho_", "ghu_", "ghs_",
          "ghr_", "github_pat", "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glft-", "glsoat-", "xox", "aiza", "eyj",
          "bearer", "basic", "authorization", "sig=", "signature", "sharedaccess", "://", "@", "private key", "pass",
          "pwd", "secret", "key", "token", "credential")
_HINT_RX = lazy_re("|".join(re.escape(h) for h in _HINTS))


def _hinted(low: str) -> bool:
    """Whether lower-cased `low` holds a hint: one regex pass for a short text (a file name, a log line), one str
    scan per hint, at memory speed, for a long one."""
    return _HINT_RX.search(low) is not None if len(low) < 512 else any(h in low for h in _HINTS)


# and a 40-hex run after "api" / "wandb" (no other hint): `wandb <hex>`, `api <hex>`
_HEXRUN = lazy_re(r"(?<![0-9a-f])[0-9a-f]{40}")


_DIGITS = str.maketrans("0123456789", "##########")
_CLEAN_LAYOUTS: "dict[str, bool]" = {}


def redact(text: str) -> str:
    """Return `text` with every recognised secret replaced by a [REDACTED:kind] marker."""
    if not text:
        return text
    if _pem_body(text):
        return _tag("private-key")
    low = text.lower()
    if not _hinted(low) and not (("api" in low or "wandb" in low) and _HEXRUN.search(text)):
        return text
    # Whether a line needs redaction does not change when only its digits change (every rule treats digits
    # alike), so a metrics line whose layout already proved clean ("tokens_per_second": N) is not re-scanned.
    layout = text.translate(_DIGITS) if len(text) < 2000 else None
    if layout is not None and _CLEAN_LAYOUTS.get(layout):
        return text
    out = _redact(text)
    if layout is not None and len(_CLEAN_LAYOUTS) < 8192:
        _CLEAN_LAYOUTS[layout] = out == text
    return out


def redact_path(path: str) -> str:
    """A path with a secret in one of its names (a Hydra sweep directory `lr=0.1,wandb.api_key=<hex>`) redacted
    name by name, so the separators and every other name stay as they are."""
    if not _hinted(path.lower()):
        return path
    return "/".join(redact(p) for p in path.split("/"))


# A literal each rule's match must contain (any one of them; `None` when found case-insensitively, see _fold):
# a rule whose literals are all absent cannot match, so it is neither run nor compiled.
_NEEDS = {"private-key": ("-----BEGIN ",), "anthropic-key": ("sk-ant-",), "openai-key": ("sk-",),
          "stripe-key": ("k_live_", "k_test_"), "gitlab-token": ("gl",), "hf-token": ("hf_",),
          "github-token": ("gh", "github_pat_"), "aws-key-id": ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA"),
          "slack-token": ("xox",), "slack-webhook": ("https://hooks.slack.com/services/",), "google-api-key": ("AIza",),
          "jwt": ("eyJ",), "signature": None, "sas-signature": ("sig=",), "authorization": None, "bearer": None,
          "basic": None, "url-credentials": ("://",), "email": ("@",)}
_FOLDED = {"signature": ("accountkey", "sharedaccess", "x-amz-", "x-goog-"), "authorization": ("authorization",),
           "bearer": ("bearer",), "basic": ("basic",)}
_KV_WORDS = ("pass", "pwd", "secret", "key", "token", "credential")


def _fold(text: str) -> str:
    """Lower case as (?i) matches ASCII letters: also the long s and the dotless i, which re folds to s and i."""
    low = text.lower()
    return low if text.isascii() else low.replace("\u017f", "s").replace("\u0131", "i")


def _redact(text: str) -> str:
    low = _fold(text)
    for kind, rx, repl in _SHAPES:
        needs = _NEEDS.get(kind, ())
        if needs is None:
            if not any(w in low for w in _FOLDED[kind]):
                continue
        elif needs and not any(n in text for n in needs):
            continue
        new = rx.sub(repl, text)
        if new != text:
            text, low = new, _fold(new)
    if any(w in low for w in _KV_WORDS):
        text = _kv(text)
    if len(text) >= 40 and any(w in _fold(text) for w in ("key", "token", "secret", "passw", "auth", "api", "wandb")):
        text = _hex_keys(text)
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
    body = [i for i, t in enumerate(out) if 64 <= len(t) <= 84 and _pem_body(t)]  # a PEM body, by its shape
    if body:
        hinted = sorted(set(hinted).union(body))
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
