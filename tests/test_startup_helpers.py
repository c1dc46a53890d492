"""The start-up shortcuts keep their promises: a lazily compiled regex is the regex, a record is a value like
the dataclass it replaced, plug-ins are found as pkgutil finds them, a call imports only its verb (and a new
verb file is still all it takes), the literal prefilters never hide a match, and ending the process without
interpreter teardown loses no output."""
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys

import pytest
from twtest import ROOT

from trainwreck import cli, lazy_re, record_replace, submodules
from trainwreck import verbs as verbs_pkg
from trainwreck.collect.metricnames import canonical
from trainwreck.collect.redact import redact
from trainwreck.model import Finding, Source


def test_lazy_re_compiles_on_first_use_and_answers_as_the_regex():
    p = lazy_re(r"(?P<k>loss)=(\d+)", re.I)
    assert "search" not in vars(p)  # nothing compiled at definition
    m = p.search("step 3 LOSS=42")
    assert m and m.group("k") == "LOSS" and m.group(2) == "42"
    assert p.pattern == r"(?P<k>loss)=(\d+)" and p.flags & re.I
    assert p.sub("x", "loss=1 loss=2") == "x x"
    assert "search" in vars(p)  # the compiled method is kept on the object


def test_records_compare_by_value_and_get_fresh_defaults():
    a, b = Source("train.log", 3, "x"), Source("train.log", 3, "x")
    assert a == b and a != Source("train.log", 4, "x")
    assert repr(a) == "Source(path='train.log', line=3, text='x', step=None, metric=None, value=None, byte=None)"
    with pytest.raises(TypeError):
        hash(a)
    f1, f2 = Finding("d", "c"), Finding("d", "c")
    f1.evidence.append(a)
    assert f2.evidence == []  # a default list is the instance's own
    g = record_replace(Finding("d", "c", evidence=[Source("m.jsonl", step=7, metric="loss", value=1.0)]), claim="z")
    assert g.claim == "z" and g.step == 7  # built through __init__, as dataclasses.replace


@pytest.mark.parametrize("pkg", ["trainwreck.analyze", "trainwreck.verbs", "trainwreck.collect.readers"])
def test_plugin_discovery_lists_what_pkgutil_lists(pkg):
    mod = importlib.import_module(pkg)
    assert submodules(mod.__path__) == sorted(i.name for i in pkgutil.iter_modules(mod.__path__))


def test_plugin_discovery_finds_modules_and_subpackages_only(tmp_path):
    for f in ("b.py", "a.py", "__init__.py", "notes.txt", "bad-name.py"):
        (tmp_path / f).write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "data").mkdir()
    assert submodules([str(tmp_path)]) == ["a", "b", "pkg"]


def _verbs_imported(verb):
    code = (f"import sys; from trainwreck import cli; cli.build_parser({verb!r}); "
            "print(sorted(m for m in sys.modules if m.startswith('trainwreck.verbs.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT), check=True).stdout
    return eval(out)  # noqa: S307 - our own print of a list of module names


def test_a_call_imports_only_its_own_verb():
    assert _verbs_imported("init-loss") == ["trainwreck.verbs.initloss"]
    assert _verbs_imported("curve") == ["trainwreck.verbs.curve"]
    every = _verbs_imported(None)  # --help, --version, an unknown verb: all of them
    assert len(every) == len(submodules(verbs_pkg.__path__)) >= 7


def test_a_new_verb_is_one_module_in_the_verbs_folder(tmp_path, monkeypatch, capsys):
    (tmp_path / "hello_world.py").write_text(
        "NAME = 'hello-world'\nHELP = 'say hello'\n\ndef add_arguments(p):\n    p.add_argument('who')\n\n"
        "def run(args):\n    print('hello', args.who)\n    return 0\n")
    monkeypatch.setattr(verbs_pkg, "__path__", list(verbs_pkg.__path__) + [str(tmp_path)])
    monkeypatch.delitem(sys.modules, "trainwreck.verbs.hello_world", raising=False)
    try:
        assert cli.main(["hello-world", "you"]) == 0
        assert capsys.readouterr().out == "hello you\n"
        with pytest.raises(SystemExit):
            cli.main(["--help"])
        assert "hello-world" in capsys.readouterr().out
    finally:
        sys.modules.pop("trainwreck.verbs.hello_world", None)


SHAPES = {  # one line per redaction rule: the prefilter must let each one through to its regex
    "private-key": "-----BEGIN RSA PRIVATE KEY-----MIIEvQIBADANBgkqhkiG9w0BAQEF-----END RSA PRIVATE KEY-----",
    "anthropic-key": "key sk-ant-api03-QwErTyUiOpAsDfGhJkLz",
    "openai-key": "using sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1",
    "hf-token": "login hf_QwErTyUiOpAsDfGhJkLzXcVbNm01",
    "github-token": "clone with ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8",
    "github-pat": "clone with github_pat_11ABCDEFG0123456789_abcdefghij",
    "aws-key-id": "id ASIAIOSFODNN7EXAMPLQ used",
    "slack-token": "bot xoxb-123456789012-1234567890123",
    "slack-webhook": "posting to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX",
    "google-api-key": "maps AIzaSyA1234567890abcdefghijklmnopqrstuv",
    "jwt": "auth eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    "bearer": "header: BEARER abcdefghijklmnopqrstuvwxyz012345",
    "url-credentials": "fetch https://alice:S3cretPw@data.example.org/x",
    "email": "contact alice.smith@example.org now",
    "password-line": "DB_PASSWORD=two words here",
    "key-value": "WANDB_API_KEY=3f1e2d4c5b6a79881726354a4b5c6d7e",
    "netrc": "machine x login y password n3trcPassw0rd",
    "hex40": "api 3f1e2d4c5b6a79881726354a4b5c6d7e8f901234",
}
SECRET_PART = {"private-key": "MIIEvQ", "anthropic-key": "QwErTy", "openai-key": "Zx9Yw8", "hf-token": "QwErTy",
               "github-token": "1A2b3C", "github-pat": "11ABCD", "aws-key-id": "IOSFOD", "slack-token": "1234567890",
               "slack-webhook": "XXXXXXXX", "google-api-key": "SyA123", "jwt": "dozjgN", "bearer": "abcdefghij",
               "url-credentials": "S3cretPw", "email": "alice.smith", "password-line": "two words",
               "key-value": "3f1e2d4c", "netrc": "n3trcPassw0rd", "hex40": "3f1e2d4c"}


@pytest.mark.parametrize("kind", sorted(SHAPES))
def test_every_redaction_rule_still_reaches_its_shape(kind):
    out = redact(SHAPES[kind])
    assert "[REDACTED:" in out and SECRET_PART[kind] not in out, out


@pytest.mark.parametrize("key,canon", [
    ("val_loss", "eval_loss"), ("train/loss", "loss"), ("cross_entropy", "loss"), ("nll", "loss"),
    ("xent", "loss"), ("objective", "loss"), ("gnorm", "grad_norm"), ("total norm", "grad_norm"),
    ("learning_rate", "lr"), ("lr-Adam", "lr"), ("loss_scale", "loss_scale"), ("scale", "loss_scale"),
    ("skipped iterations", "skipped_iterations"), ("nan_iterations", "nan_iterations"), ("it/s", "throughput"),
    ("images_per_sec", "throughput"), ("steps_per_second", "throughput"), ("throughput", "throughput"),
    ("max_memory_allocated", "memory"), ("acc", "accuracy"), ("epoch", "epoch"), ("tokens", None), ("step", None),
])
def test_metric_names_pass_the_literal_prefilter(key, canon):
    assert canonical(key) == canon


def test_the_command_flushes_all_its_output_before_it_exits(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # a pipe's output stays buffered
    env["PYTHONPATH"] = ROOT
    run = os.path.join(ROOT, "examples", "runs", "oom-cuda")
    p = subprocess.run([sys.executable, "-m", "trainwreck", "diagnose", run, "--json", "--no-probe",
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env, cwd=ROOT)
    assert p.returncode == 0
    assert json.loads(p.stdout)["classification"] == "OOM"  # the whole report reached the pipe
    assert json.loads((tmp_path / "o" / "report.json").read_text())["classification"] == "OOM"
    small = subprocess.run([sys.executable, "-m", "trainwreck", "diagnose", run, "--no-probe"],
                           capture_output=True, text=True, env=env, cwd=ROOT)  # smaller than the pipe's buffer
    assert small.returncode == 0 and small.stdout.endswith("(GPU, processes, kernel log) was not examined\n")
    bad = subprocess.run([sys.executable, "-m", "trainwreck", "diagnose", str(tmp_path / "none")],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert bad.returncode == 2 and bad.stderr.startswith("trainwreck: ")


def test_a_small_diagnosis_imports_no_heavy_standard_library_module():
    """statistics (which imports fractions, decimal and random), dataclasses and inspect cost 10-30 ms of every
    call; a diagnosis of a small run needs none of them."""
    run = os.path.join(ROOT, "examples", "runs", "nan-fp16")
    code = ("import sys, io, contextlib; before = set(sys.modules); from trainwreck import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try: cli.main(['diagnose', {run!r}, '--no-probe'])\n"
            "    except SystemExit: pass\n"
            "print(sorted(m for m in ('statistics', 'fractions', 'decimal', 'random', 'dataclasses', 'inspect', "
            "'ast', 'tokenize', 'pathlib', 'email', 'urllib') if m in sys.modules and m not in before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT), check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
