"""End to end: one secret of each shape planted in a run's log, its root exception line, its config and the names
of its directories (a Hydra sweep directory, a checkpoint folder); every verb that prints or writes (diagnose
--json/--md/terminal/--out, collect, traceback, curve) is run and every output byte is searched for the planted
values. The secrets are generated at run time (see test_redact_shapes.py), none sits in the repository."""
import json
import os
import shutil

from test_redact_shapes import HEX40, PEM_LINES, PW, SECRETS, gen, j
from twtest import EXAMPLES


def _plant(base):
    key_in_dir = gen(32)
    run = os.path.join(base, "multirun", "2026-11-01", "10-00-00", f"3_lr=0.1,wandb.api_key={HEX40}")
    shutil.copytree(os.path.join(EXAMPLES, "nan-fp16"), run)
    stripe, glpat = j("sk", "_live_", gen(24)), j("glpat", "-", gen(20))
    planted = {"sweep-dir": HEX40, "ckpt-dir": key_in_dir, "stripe-root": stripe, "glpat-root": glpat,
               "pem": PEM_LINES[2]}
    planted.update({name: secret for name, _, secret, _ in SECRETS})
    log = os.path.join(run, "train.log")
    text = open(log).read()
    lines = [before + secret + after for _, before, secret, after in SECRETS]
    pem = ["-----BEGIN PRIVATE KEY-----"] + PEM_LINES + ["-----END PRIVATE KEY-----"]
    root = (f"Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
            f"    raise FloatingPointError(msg)\nFloatingPointError: loss is nan (billing {stripe}, repo {glpat})\n")
    open(log, "w").write("\n".join(lines + pem) + "\n" + text + root)
    os.makedirs(os.path.join(run, ".hydra"), exist_ok=True)
    open(os.path.join(run, ".hydra", "config.yaml"), "a").write(
        f"db:\n  password: {PW}\n  api_key: {planted['yaml-api-key']}\n"
        f"storage:\n  conn: \"{SECRETS[17][1]}{SECRETS[17][2]}{SECRETS[17][3]}\"\n")
    open(os.path.join(run, ".hydra", "overrides.yaml"), "w").write(f"- lr=0.1\n- wandb.api_key={HEX40}\n")
    ck = os.path.join(run, f"checkpoints,hub_token={key_in_dir}")
    os.rename(os.path.join(run, "checkpoints"), ck)
    return run, planted


def test_no_planted_secret_reaches_any_output(tmp_path, cli):
    run, planted = _plant(str(tmp_path))
    out = tmp_path / "out"
    outputs = []
    for args in (["diagnose", run, "--json", "--out", str(out), "--no-probe"], ["diagnose", run, "--no-probe"],
                 ["diagnose", run, "--md", "--no-probe"], ["collect", run, "--json", "--no-probe"],
                 ["collect", run, "--no-probe"], ["traceback", run, "--json"], ["traceback", run],
                 ["traceback", os.path.join(run, "train.log")], ["curve", run, "--json"]):
        p = cli(*args)
        assert p.returncode == 0, (args, p.stderr[-300:])
        outputs.append(p.stdout + p.stderr)
    written = []
    for root, dirs, files in os.walk(out):
        written += [os.path.join(root, n) for n in dirs + files]
        for f in files:
            outputs.append(open(os.path.join(root, f), "rb").read().decode("utf-8", "replace"))
    blob = "\n".join(outputs + written)
    leaked = sorted(k for k, v in planted.items() if v in blob)
    assert not leaked, f"leaked: {leaked}"
    rep = json.loads(outputs[0])
    assert rep["classification"] == "NaN"  # the diagnosis stands on redacted text
    assert "FloatingPointError" in outputs[0] and "[REDACTED:stripe-key]" in outputs[0]  # masked, not dropped
    assert "wandb.api_key=[REDACTED:" in rep["run"]  # the run path is shown, its secret is not
    assert not any(HEX40 in f["path"] for f in rep["evidence_files"])
