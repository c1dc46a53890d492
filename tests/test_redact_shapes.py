"""Redaction by shape and context (issue 10, "Found 3"): one table of secret shapes that must never survive, one
table of look-alikes that must survive untouched, each row a test.

Every secret is assembled at run time from pieces (a provider prefix + generated characters), so no
secret-shaped literal sits in the repository and the repo's own secret checks keep passing."""
import random
import string
import time

import pytest

from trainwreck.collect.redact import redact, redact_lines

_R = random.Random(10)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"


def gen(n, alphabet=ALNUM):
    """`n` characters drawn from `alphabet`, with at least one digit and one upper/lower letter where possible."""
    s = "".join(_R.choice(alphabet) for _ in range(n))
    if alphabet in (ALNUM, B64) and n >= 3:
        s = "aZ7" + s[3:]
    return s


def j(*parts):
    return "".join(parts)


PW = j("Tr0ub4", "dor-", gen(6))  # a password: never long, never a known shape
HEX40 = gen(40, HEX)
PEM_LINES = [gen(64, B64) for _ in range(5)]

# (row id, text before the secret, the secret, text after it): the line as it appears in a log, config or env file
def _sas():
    return gen(43, B64).replace("/", "%2F") + "%3D"


SECRETS = [
    ("openai-sk", "openai ready with ", j("sk", "-", gen(48)), ""),
    ("openai-sk-proj", "OPENAI key ", j("sk", "-proj-", gen(40)), " loaded"),
    ("anthropic-sk-ant", "client(", j("sk", "-ant-api03-", gen(80)), ")"),
    ("stripe-sk-live", "stripe configured from ", j("sk", "_live_", gen(24)), ""),
    ("stripe-rk-live", "restricted ", j("rk", "_live_", gen(24)), " in use"),
    ("gitlab-glpat", "git clone with glpat ", j("glpat", "-", gen(20)), ""),
    ("github-ghp", "push with ", j("ghp", "_", gen(36)), ""),
    ("github-pat", "push with ", j("github", "_pat_", gen(22), "_", gen(59)), ""),
    ("slack-xoxb", "slack notifier ", j("xo", "xb-", gen(12, string.digits), "-", gen(24)), ""),
    ("slack-xoxp", "slack user ", j("xo", "xp-", gen(12, string.digits), "-", gen(32)), ""),
    ("huggingface-hf", "Logged in to the Hub with ", j("hf", "_", gen(34)), ""),
    ("json-escaped-newline", '{"log": "login ok\\n', j("hf", "_", gen(34)), '\\nready"}'),
    ("aws-key-id", "s3 upload as ", j("AK", "IA", gen(16, string.ascii_uppercase + string.digits)), " ok"),
    ("aws-secret-key-ini", "aws_secret_access_key = ", gen(40, B64), ""),
    ("google-aiza", "maps client ", j("AI", "za", gen(35)), " ready"),
    ("wandb-hex-after-key-name", "WANDB_API_KEY=", HEX40, ""),
    ("wandb-hex-after-login-key", "wandb: Logging in with key ", HEX40, ""),
    ("wandb-hex-json", '{"api_key": "', HEX40, '"}'),
    ("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=runs;AccountKey=", gen(86, B64) + "==",
     ";EndpointSuffix=core.windows.net"),
    ("azure-sas-sig", "GET https://runs.blob.core.windows.net/ckpt/step_300.pt?sv=2022-11-02&ss=b&sp=r"
     "&se=2026-12-01T00:00:00Z&sig=", _sas(), " HTTP/1.1"),
    ("jdbc-password", "jdbc:postgresql://db1:5432/runs?user=alice&password=", PW, "&ssl=true"),
    ("url-user-pass", "fetching postgresql://alice:", PW, "@db1.internal:5432/runs"),
    ("s3-presigned", "GET https://b.s3.amazonaws.com/x.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=",
     gen(64, HEX), "&X-Amz-Date=20261101T000000Z"),
    ("gcs-signed", "GET https://storage.googleapis.com/b/x.pt?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature=",
     gen(256, HEX), ""),
    ("basic-auth-short", "Authorization: Basic ", j("YWxp", "Y2U6cHc="), ""),
    ("basic-auth-long", "Authorization: Basic ", gen(44, B64) + "==", ""),
    ("bearer-auth", "Authorization: Bearer ", gen(40, ALNUM + "._-"), ""),
    ("env-db-pass", "DB_PASS=", PW, ""),
    ("env-smtp-passwd", "SMTP_PASSWD: ", PW, ""),
    ("env-db-password", "export DB_PASSWORD=", PW, ""),
    ("env-client-secret", "OAUTH_CLIENT_SECRET=", gen(32), ""),
    ("env-secret", "JWT_SECRET=", gen(24), ""),
    ("env-token", "CI_JOB_TOKEN=", gen(20), ""),
    ("env-key", "SIGNING_KEY=", gen(32), ""),
    ("env-api-key", "COHERE_API_KEY=", gen(40), ""),
    ("yaml-password", "  db_password: ", PW, ""),
    ("yaml-api-key", "  api_key: ", gen(32), ""),
    ("json-token", '{"auth_token": "', gen(32), '", "step": 3}'),
    ("json-password", '{"user": "alice", "password": "', PW, '"}'),
    ("cli-api-key-space", "python train.py --api-key ", gen(32), " --lr 3e-4"),
    ("cli-token-eq", "python train.py --token=", gen(32), " --lr 3e-4"),
    ("cli-password-space", "launch.sh --password ", PW, " --epochs 3"),
    ("cli-password-eq", "launch.sh --db-password=", PW, ""),
    ("pem-one-line", j("key = '-----BEGIN ", "PRIVATE KEY-----\\n"), PEM_LINES[0], "\\n-----END PRIVATE KEY-----'"),
    ("pem-body-line", "", PEM_LINES[1], ""),
    ("hydra-sweep-dir", "multirun/2026-11-01/10-00-00/lr=0.1,wandb.api_key=", HEX40, "/train.log"),
    # a generic key whose value mixes words with one random part: the words do not make it a name
    ("key-words-and-random", "key=", j("prod_user_", gen(24, HEX)), ""),
    ("cache-key-words-and-random", "cache_key=", j("team_alpha_", gen(27)), ""),
    ("key-node-and-hex", "key: ", j("master-node-", gen(32, HEX)), ""),
]


@pytest.mark.parametrize("row", SECRETS, ids=[r[0] for r in SECRETS])
def test_secret_shape_is_redacted(row):
    _, before, secret, after = row
    line = before + secret + after
    out = redact_lines([line])[0]
    assert secret not in out, out
    assert "[REDACTED:" in out
    if before.strip():  # the context that named the secret stays readable
        assert before.strip()[:4] in out, out


# (row id, line that holds no secret: it must come back unchanged)
LOOKALIKES = [
    ("git-sha-alone", HEX40),
    ("git-sha-commit", j("commit ", HEX40)),
    ("git-sha-in-path", j("/src/repo/.git/objects/pack/", HEX40, "/index")),
    ("git-sha-in-checkpoint-path", j("saving checkpoints/", HEX40, "/step_300.pt")),
    ("hf-snapshot", j("loading /root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B/snapshots/", HEX40,
                      "/config.json")),
    ("hf-snapshot-no-slash-before", j("models--org--name/snapshots/", HEX40)),
    ("sha256-digest", j("pulled image sha256:", gen(64, HEX))),
    ("cuda-uuid", j("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-", gen(8, HEX), "-", gen(4, HEX), "-", gen(4, HEX),
                    "-", gen(4, HEX), "-", gen(12, HEX), ")")),
    ("hex-address", j("Segmentation fault at address 0x", gen(12, HEX), " in libcuda.so")),
    ("hex-address-40", j("pointer 0x", HEX40, " freed twice")),
    ("basic-sdpa", "Using basic scaled_dot_product_attention implementation"),
    ("basic-block", "model: ResNet with Basic blocks, layers [2, 2, 2, 2]"),
    ("password-auth-failed", 'FATAL: password authentication failed for user "alice"'),
    ("password-auth-failed-psycopg", 'psycopg2.OperationalError: password authentication failed for user "ml"'),
    ("token-embeddings", "Resizing token embeddings to 32001 entries"),
    ("token-indices", "Token indices sequence length is longer than the specified maximum sequence length"),
    ("max-tokens", "generate(max_tokens=512, temperature=0.7)"),
    ("cli-max-tokens", "python serve.py --max-tokens 4096 --token-budget 512"),
    ("bearer-prose", "the bearer of the checkpoint is rank 0"),
    ("authorization-prose", "HTTP 403: authorization: denied by the bucket policy"),
    ("cli-flag-without-value", "python train.py --token --lr 3e-4 --password --epochs 3"),
    ("placeholder-brackets", "api_key: [YOUR_KEY_HERE]"),
    ("placeholder-angle", "api_key: <your-key>"),
    ("placeholder-cli", "python train.py --api-key <your-key>"),
    ("env-interpolation", "WANDB_API_KEY=${WANDB_API_KEY}"),
    ("yaml-text-key", "dataset_text_key: conversations"),
    ("pad-token", "pad_token: <pad>"),
    ("tokens-per-second", '{"step": 10, "tokens_per_second": 51234.5, "loss": 2.31}'),
    ("key-error", "KeyError: 'input_ids'"),
    # torch.distributed's store keys are names built of words and a counter (the store-based barrier's timeout)
    ("store-barrier-key", "Timed out initializing process group in store based barrier on rank: 0, for key: "
                          "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:02:00)"),
    ("store-broadcast-key", "Waiting in store based barrier to initialize process group for rank: 2, key: "
                            "store_based_barrier_key:2 (world_size=8, worker_count=7, timeout=0:30:00)"),
]


@pytest.mark.parametrize("row", LOOKALIKES, ids=[r[0] for r in LOOKALIKES])
def test_lookalike_is_left_alone(row):
    _, line = row
    assert redact(line) == line
    assert redact_lines([line])[0] == line


def test_pem_body_is_masked_when_the_window_starts_inside_the_block():
    """A tail window that starts in the middle of a key: no BEGIN line is ever seen, and the END line may lie past
    the window too. Body lines are recognised by their shape: a run of 64-character base64 lines."""
    steps = [f"step {i} loss={2.3 - i * 0.01:.3f}" for i in range(5)]
    # END inside the window
    out = redact_lines(PEM_LINES[2:] + ["-----END PRIVATE KEY-----"] + steps)
    assert not any(p in "\n".join(out) for p in PEM_LINES) and out[-5:] == steps
    # neither BEGIN nor END in the window
    out = redact_lines(steps + PEM_LINES[1:4])
    assert not any(p in "\n".join(out) for p in PEM_LINES) and out[:5] == steps
    # one line at a time (the log tail reader redacts a single line)
    assert PEM_LINES[3] not in redact_lines([PEM_LINES[3]])[0]


def test_runs_of_hex_digests_are_not_taken_for_a_pem_body():
    digests = [gen(64, HEX) for _ in range(4)]
    assert redact_lines(digests) == digests


ADVERSARIAL_UNITS = ["a", "-", " ", "=", ":", "@", "/", ".", "0", "A", "a-", "-a", "a.", "a@", "a:", "a=", "%", "_",
                     "key", "key=", "sk-", "hf_", "eyJ", "eyJ-", "x:", "a://", "://a:", "password ", "password:",
                     "basic ", "Bearer ", "-----BEGIN ", "--token ", "--api-key=", "a_key=", "\"", "\"password\":\"",
                     "&password=", "sig=", "AccountKey=", "X-Amz-Signature=", "0x", "GPU-", "sha256:", "a,", "a/",
                     "a key=b ", "x_key: abcdefgh1 ", "a password=b ", "login x password y ", "Authorization: ",
                     "a.b@c", "%2F", "aZ7+"]


@pytest.mark.parametrize("unit", ADVERSARIAL_UNITS)
def test_a_long_line_of_one_repeated_unit_redacts_fast(unit):
    """Every rule is linear (bounded repetition, one start per run of token characters): a 100,000-character line
    built from one repeated unit redacts in milliseconds; 0.5 s per call is a generous bound that a rule tried
    again at every position of a run (quadratic: minutes) cannot meet."""
    line = (unit * (100_000 // len(unit) + 1))[:100_000]
    for text in (line, "password: x" + line, line + " token=" + gen(20)):
        for f in (redact, lambda t: redact_lines([t])[0]):
            for _attempt in range(3):  # the best of three: a loaded machine slows a call, a quadratic rule all three
                t0 = time.perf_counter()
                f(text)
                took = time.perf_counter() - t0
                if took < 0.5:
                    break
            assert took < 0.5, f"{unit!r}: {took:.2f} s"


def test_no_pem_body_line_reaches_the_bundle_whatever_window_reads_it(tmp_path):
    """A log larger than a whole read: its head, its sampled middle and its tail are separate windows, and a key
    block that spans them is seen by some windows with neither its BEGIN nor its END line."""
    from test_redact_bundle import strings

    from trainwreck.collect import collect
    from trainwreck.locate import locate

    body = [gen(64, B64) for _ in range(4000)]
    steps = [f"step {i} loss={2.3 - i * 1e-5:.5f} lr=3e-4" for i in range(3000)]
    text = "\n".join(steps[:400] + ["-----BEGIN RSA PRIVATE KEY-----"] + body + ["-----END RSA PRIVATE KEY-----"]
                     + steps[400:] + ["step 3000 loss=nan"]) + "\n"
    (tmp_path / "train.log").write_text(text)
    bundle = collect(locate(str(tmp_path)))
    seen = "\n".join(strings(bundle))
    assert "[REDACTED:private-key]" in seen and "loss=nan" in seen
    leaked = [b for b in body if b in seen]
    assert not leaked, f"{len(leaked)} body lines leaked"


def test_a_line_of_hundreds_of_key_names_is_masked_after_them_not_shown():
    """Work on one line is bounded by a count of key/value candidates; what lies past them is masked (fail
    closed), so a secret placed after hundreds of decoy keys is not shown either."""
    secret = gen(32)
    out = redact("a key=b " * 600 + "api_key=" + secret)
    assert secret not in out and out.startswith("a key=b a key=b")
