"""Secrets never leave the engine: planted in every supported file type, none may survive any verb's output."""
import json
import os

import pytest

from trainwreck.collect.redact import PemTracker, redact

SECRETS = {
    "wandb": "3f1e2d4c5b6a79881726354a4b5c6d7e8f901234",
    "hf": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789",
    "openai": "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa",
    "anthropic": "sk-ant-api03-QwErTyUiOpAsDfGhJkLzXcVbNm1234567890-abcdEFGH",
    "aws_id": "AKIAIOSFODNN7EXAMPLQ",
    "aws_secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYQ",
    "github": "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8",
    "github_pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
    "slack": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "password": "Tr0ub4dor&3-horse-staple",
    "url_pw": "SuperS3cretPw",
    "netrc_pw": "n3trcPassw0rdValue",
    "pem_body": "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    "gcp_key_id": "d41d8cd98f00b204e9800998ecf8427e12345678",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
S = SECRETS


def plant(d):
    os.makedirs(f"{d}/.hydra")
    cfg = (f"model:\n  lr: 3.0e-3\nlogging:\n  wandb_api_key: {S['wandb']}\n  hf_token: {S['hf']}\n"
           f"data:\n  url: https://alice:{S['url_pw']}@data.example.org/shards\n  password: \"{S['password']}\"\n"
           f"  auth_header: Bearer {S['jwt']}\n")
    open(f"{d}/.hydra/config.yaml", "w").write(cfg)
    open(f"{d}/config.yaml", "w").write(cfg)
    open(f"{d}/env.txt", "w").write(
        f"OPENAI_API_KEY={S['openai']}\nANTHROPIC_API_KEY={S['anthropic']}\nAWS_ACCESS_KEY_ID={S['aws_id']}\n"
        f"AWS_SECRET_ACCESS_KEY={S['aws_secret']}\nGITHUB_TOKEN={S['github']}\nGH_PAT={S['github_pat']}\n"
        f"SLACK_BOT_TOKEN={S['slack']}\ntorch==2.5.1\n")
    open(f"{d}/.netrc", "w").write(f"machine api.wandb.ai\n  login user\n  password {S['netrc_pw']}\n")
    open(f"{d}/train.log", "w").write(
        f"wandb: Logging in with key {S['wandb']}\nusing token {S['hf']}\n"
        "-----BEGIN PRIVATE KEY-----\n" + S["pem_body"] + "\n-----END PRIVATE KEY-----\n"
        + "".join(f"step {i} loss={2.3 - i * 0.001:.4f}\n" for i in range(1, 50))
        + "step 50 loss=nan\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
        f"    raise FloatingPointError('nan; key {S['openai']}')\nFloatingPointError: nan; key {S['openai']}\n")
    open(f"{d}/metrics.jsonl", "w").write(json.dumps({"step": 1, "loss": 2.3, "note": S["github"]}) + "\n"
                                          + '{"step": 2, "loss": NaN, "api_key": "' + S["openai"] + '"}\n')
    open(f"{d}/trainer_state.json", "w").write(json.dumps(
        {"log_history": [{"loss": 2.3, "step": 1, "hub_token": S["hf"]}], "hub_token": S["hf"]}, indent=2))
    open(f"{d}/metrics.csv", "w").write(f"step,train_loss,token\n1,2.3,{S['hf']}\n")
    os.makedirs(f"{d}/wandb/latest-run/files")
    open(f"{d}/wandb/latest-run/files/wandb-metadata.json", "w").write(
        json.dumps({"args": ["--hf-token", S["hf"]], "email": "alice@example.org", "host": "node1"}))
    open(f"{d}/error.json", "w").write(json.dumps({"message": {"message": f"RuntimeError: boom {S['anthropic']}",
                                                               "extraInfo": {"py_callstack": f"Traceback:\n  x\nRuntimeError: boom token={S['slack']}"}}}))
    open(f"{d}/gcp-sa.json", "w").write(json.dumps({"type": "service_account", "private_key_id": S["gcp_key_id"],
                                                     "private_key": "-----BEGIN PRIVATE KEY-----\n" + S["pem_body"] + "\n-----END PRIVATE KEY-----\n"}))


@pytest.mark.parametrize("name,value", sorted(SECRETS.items()))
def test_each_secret_shape_is_redacted_in_a_line(name, value):
    line = f"prefix {name}_secret = {value} suffix"
    assert value not in redact(line)


def test_redaction_keeps_ordinary_training_text():
    for line in ["step 10 loss=2.31 lr=3e-4 tokens/s=51234", "max_tokens: 4096", "pad_token: <pad>",
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
                 "git commit 3f1e2d4c5b6a79881726354a4b5c6d7e8f901234"]:
        assert redact(line) == line


def test_pem_block_is_redacted_line_by_line():
    pem = PemTracker()
    out = [pem(x) for x in ["ok", "-----BEGIN RSA PRIVATE KEY-----", S["pem_body"], "-----END RSA PRIVATE KEY-----",
                            "after"]]
    assert out[0] == "ok" and out[-1] == "after"
    assert S["pem_body"] not in " ".join(out)


def test_no_planted_secret_survives_any_verb(tmp_path, cli):
    run = tmp_path / "run"
    plant(str(run))
    out = tmp_path / "out"
    outputs = []
    for args in (["diagnose", str(run), "--json", "--out", str(out), "--no-probe"], ["diagnose", str(run), "--no-probe"],
                 ["diagnose", str(run), "--md", "--no-probe"], ["collect", str(run), "--json", "--no-probe"],
                 ["collect", str(run), "--no-probe"], ["traceback", str(run), "--json"], ["curve", str(run), "--json"],
                 ["traceback", str(run / "train.log")]):
        p = cli(*args)
        assert p.returncode == 0, (args, p.stderr[-300:])
        outputs.append(p.stdout + p.stderr)
    for root, _dirs, files in os.walk(out):
        for f in files:
            outputs.append(open(os.path.join(root, f), "rb").read().decode("utf-8", "replace"))
    blob = "\n".join(outputs)
    leaked = [k for k, v in SECRETS.items() if v in blob]
    assert not leaked, f"leaked: {leaked}"
    assert "FloatingPointError" in outputs[0]  # diagnose --json cites the line; only the key inside it is masked



def test_hydra_override_and_quoted_or_multiword_passwords_are_redacted_whole():
    # a launch command echoed mid-line: only the key/value rule sees it (the line does not start with the key)
    assert "Hunter2Override" not in redact("launch: python train.py +db.password=Hunter2Override trainer.fp16=true")
    assert "zz9" not in redact("cmd ~db.password=zz9plural")
    assert redact('password: "correct horse battery"') == 'password: "[REDACTED:secret]"'
    assert redact("  password: correct horse battery  # rotated") == "  password: [REDACTED:secret]  # rotated"
    # escaped quotes inside a JSON string stay valid JSON after redaction
    out = redact(json.dumps({"m": 'password: "hunter2horse"'}))
    assert "hunter2horse" not in out and json.loads(out)["m"] == 'password: "[REDACTED:secret]"'
    assert redact("password: null") == "password: null"
