"""No secret survives collection: each secret is planted in its real shape (a bare token in a log line, a password
in a config, a Hydra override, .netrc, env.txt, metrics files …), the run is collected, and the WHOLE in-memory
Bundle is walked (every dataclass field, list and dict: logs, configs incl. ConfigEntry.value, series point
sources, facts, extra lines, checkpoints, notes, files). Each case also asserts the marker of the rule that must
have caught it, so dropping one rule turns exactly its case red."""
import dataclasses
import json
import os

import pytest

from trainwreck.collect import collect
from trainwreck.locate import locate

HF = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789"
OPENAI = "sk-proj-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
ANTHROPIC = "sk-ant-api03-QwErTyUiOpAsDfGhJkLzXcVbNm1234567890-abcdEFGH"
AWS = "AKIAIOSFODNN7EXAMPLQ"
GHP = "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8"
GH_PAT = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"[:35]
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
URL_PW = "SuperS3cretPw"
WANDB = "3f1e2d4c5b6a79881726354a4b5c6d7e8f901234"
STEPS = "".join(f"step {i} loss={2.3 - i * 0.01:.4f}\n" for i in range(1, 20))


def log(line):
    return {"train.log": STEPS + line + "\n" + STEPS}


# (case, files, secret, marker of the rule that must catch it)
CASES = [
    ("hf-bare-in-log", log(f"Logged in to the Hub as alice with {HF}"), HF, "[REDACTED:hf-token]"),
    ("openai-bare-in-log", log(f"openai client ready ({OPENAI})"), OPENAI, "[REDACTED:openai-key]"),
    ("anthropic-bare-in-log", log(f"anthropic client ready ({ANTHROPIC})"), ANTHROPIC, "[REDACTED:anthropic-key]"),
    ("aws-key-id-bare-in-log", log(f"s3 upload as {AWS} to bucket runs"), AWS, "[REDACTED:aws-key-id]"),
    ("github-ghp-bare-in-log", log(f"pushing checkpoint with {GHP}"), GHP, "[REDACTED:github-token]"),
    ("github-pat-bare-in-log", log(f"pushing checkpoint with {GH_PAT}"), GH_PAT, "[REDACTED:github-token]"),
    ("slack-bare-in-log", log(f"notifier uses {SLACK} for alerts"), SLACK, "[REDACTED:slack-token]"),
    ("google-bare-in-log", log(f"maps client {GOOGLE} ready"), GOOGLE, "[REDACTED:google-api-key]"),
    ("jwt-bare-in-log", log(f"auth header {JWT} accepted"), JWT, "[REDACTED:jwt]"),
    ("pem-block-in-log", {"train.log": STEPS + "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n" + PEM_BODY[::-1]
                          + "\n-----END PRIVATE KEY-----\n" + STEPS}, PEM_BODY, "[REDACTED:private-key]"),
    ("url-credentials-in-log", log(f"fetching https://alice:{URL_PW}@data.example.org/shards/0.tar"), URL_PW,
     "[REDACTED:password]"),
    ("password-kv-in-log", log("connecting with db_password=Tr0ub4dor&3x to host db1"), "Tr0ub4dor&3x",
     "[REDACTED:secret]"),
    ("password-multiword-in-config", {"config.yaml": "model:\n  lr: 0.1\ndb:\n  password: correct horse battery\n"},
     "horse battery", "[REDACTED:secret]"),
    ("password-in-hydra-config", {".hydra/config.yaml": "db:\n  host: db1\n  password: hunter2horse\n"},
     "hunter2horse", "[REDACTED:secret]"),
    ("hydra-override-password", {".hydra/config.yaml": "db:\n  host: db1\n",
                                 ".hydra/overrides.yaml": "- trainer.fp16=true\n- +db.password=Hunter2Override\n"},
     "Hunter2Override", "[REDACTED:secret]"),
    ("netrc", {".netrc": "machine api.wandb.ai\n  login alice\n  password n3trcPassw0rdValue\n",
               "train.log": STEPS}, "n3trcPassw0rdValue", "[REDACTED:secret]"),
    ("wandb-key-in-env", {"env.txt": f"WANDB_API_KEY={WANDB}\nCUDA_VISIBLE_DEVICES=0\n", "train.log": STEPS},
     WANDB, "[REDACTED:"),
    ("token-in-metrics-jsonl", {"metrics.jsonl": json.dumps({"step": 1, "loss": 2.3, "hub": HF}) + "\n"
                                + json.dumps({"step": 2, "loss": 2.2}) + "\n"}, HF, "[REDACTED:hf-token]"),
    ("token-in-trainer-state", {"trainer_state.json": '{\n  "global_step": 2,\n  "log_history": [\n    '
                                + json.dumps({"loss": 2.3, "step": 1, "pushed_with": GHP}) + ",\n    "
                                + json.dumps({"loss": 2.2, "step": 2}) + "\n  ]\n}\n"}, GHP,
     "[REDACTED:github-token]"),
    ("token-in-metrics-csv", {"metrics.csv": f"step,train_loss,note\n1,2.3,{SLACK}\n2,2.2,ok\n"}, SLACK,
     "[REDACTED:slack-token]"),
    ("token-in-error-json", {"error.json": json.dumps({"message": {"message": f"RuntimeError: boom {ANTHROPIC}",
                                                                   "extraInfo": {"py_callstack": "Traceback:\n  x\n"
                                                                                 f"RuntimeError: boom {ANTHROPIC}"}}})},
     ANTHROPIC, "[REDACTED:anthropic-key]"),
    ("token-in-wandb-metadata", {"wandb-metadata.json": json.dumps({"program": f"train.py --hub {HF}",
                                                                    "host": "node1"}),
                                 "train.log": STEPS}, HF, "[REDACTED:hf-token]"),
]


def strings(obj, seen=None):
    """Every string reachable from `obj`: dataclass fields, instance attributes, dict keys and values, sequences."""
    seen = set() if seen is None else seen
    if isinstance(obj, str):
        yield obj
        return
    if isinstance(obj, (int, float, bool, type(None), bytes)):
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            yield from strings(getattr(obj, f.name), seen)
        extra = {k: v for k, v in vars(obj).items() if k not in {f.name for f in dataclasses.fields(obj)}}
        yield from strings(extra, seen)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from strings(k, seen)
            yield from strings(v, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for v in obj:
            yield from strings(v, seen)
    elif hasattr(obj, "__dict__"):
        yield from strings(vars(obj), seen)


def plant(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


@pytest.mark.parametrize("case,files,secret,marker", CASES, ids=[c[0] for c in CASES])
def test_secret_in_its_real_shape_never_reaches_the_bundle(tmp_path, case, files, secret, marker):
    plant(str(tmp_path), files)
    bundle = collect(locate(str(tmp_path)))
    assert bundle.files, "nothing was collected: the case tests nothing"
    everything = list(strings(bundle))
    leaked = [s for s in everything if secret in s]
    assert not leaked, f"{case}: {leaked[:2]}"
    assert any(marker in s for s in everything), f"{case}: the rule for this shape did not fire"


def test_all_shapes_together_and_config_values_hold_no_secret(tmp_path):
    merged = {}
    for _case, files, _s, _m in CASES:
        for rel, text in files.items():
            merged[rel] = merged.get(rel, "") + text if rel.endswith((".log", ".txt", "rc")) else text
    merged["config.yaml"] = "db:\n  password: correct horse battery\n  user: alice\n"
    merged[".hydra/overrides.yaml"] = "- +db.password=Hunter2Override\n- trainer.fp16=true\n"
    plant(str(tmp_path), merged)
    bundle = collect(locate(str(tmp_path)))
    everything = "\n".join(strings(bundle))
    for _case, _files, secret, _m in CASES:
        assert secret not in everything, _case
    pw = [e for entries in bundle.configs.values() for e in entries if e.key.endswith("password")]
    assert {e.value for e in pw} == {"[REDACTED:secret]"} and len(pw) == 2
    assert bundle.config("user").value == "alice"  # ordinary values stay readable
    assert bundle.config("fp16").value == "true"
