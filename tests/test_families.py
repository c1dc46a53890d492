"""Families by meaning: a failure is recognised by what it IS, whatever framework printed it.

Every fixture under tests/fixtures/families/<family>/ is real text (sources in its README). Each is diagnosed
as a user would get it: the family's classification, and the family named in the primary cause. Host-memory
runs never get GPU advice and GPU-memory runs never get host-memory advice; a watchdog that caught a CUDA
error is a crash while a watchdog timeout is a stall; when all ranks but one time out, the silent one is named.
"""
from __future__ import annotations

import json
import os
import re
import shutil

import pytest
from twtest import ROOT, run_cli

from trainwreck import catalog
from trainwreck.pipeline import diagnose

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "families")
FAMILIES = catalog.families()
CASES = sorted((fam, name) for fam in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, fam))
               for name in os.listdir(os.path.join(FIXTURES, fam)) if name.endswith(".log"))


def _diag(fam: str, name: str):
    return diagnose(os.path.join(FIXTURES, fam, name), probe=False).diagnosis


def _advice(d) -> list:
    return [fx["fix"] for fx in d.fix_candidates] + [d.verification.get("command") or ""]


def test_every_family_has_fixtures_from_several_frameworks():
    by_family = {}
    for fam, name in CASES:
        by_family.setdefault(fam, set()).add(name.split("-")[0])
    assert set(by_family) == set(FAMILIES), "each family needs a fixture folder, each folder a family"
    thin = {f: sorted(v) for f, v in by_family.items() if len(v) < 2}
    assert not thin, f"families with fixtures from fewer than two frameworks: {thin}"


@pytest.mark.parametrize("fam,name", CASES, ids=[f"{f}/{n}" for f, n in CASES])
def test_fixture_is_classified_by_its_family(fam, name):
    d = _diag(fam, name)
    want = FAMILIES[fam]["classification"]
    assert d.classification == want, f"{fam}/{name}: {d.classification}, want {want} — {d.headline}"
    family = (d.primary_cause or {}).get("family") or {}
    assert family.get("id") == fam, f"{fam}/{name}: primary cause names family {family.get('id')!r}: {d.headline}"
    assert family.get("title") == FAMILIES[fam]["title"]


@pytest.mark.parametrize("fam,name", [c for c in CASES if FAMILIES[c[0]].get("not_advice")],
                         ids=[f"{f}/{n}" for f, n in CASES if FAMILIES[f].get("not_advice")])
def test_memory_runs_never_get_the_other_memorys_advice(fam, name):
    d = _diag(fam, name)
    wrong = [a for a in _advice(d) for rx in FAMILIES[fam]["not_advice"] if re.search(rx, a)]
    assert not wrong, f"{fam}/{name} was told: {wrong}"


@pytest.mark.parametrize("fam", ["host-memory", "gpu-memory"])
def test_host_and_gpu_memory_read_differently(fam):
    """The headline itself says which memory ran out, whichever framework printed the message."""
    for name in sorted(n for f, n in CASES if f == fam):
        d = _diag(fam, name)
        assert d.classification == "OOM"
        if fam == "host-memory":
            assert re.search(r"host|RAM|memory limit|memory request|memory pressure", d.headline), d.headline
            assert not re.search(r"\bGPU\b|CUDA|device memory", d.headline), d.headline
        else:
            assert re.search(r"GPU|CUDA|HIP|MPS|NPU|cuBLAS|cuDNN|device", d.headline), d.headline
            assert not re.search(r"host|\bRAM\b", d.headline), d.headline


def test_catalog_entries_of_a_memory_family_carry_only_its_own_advice():
    """The catalog's own fixes and verification commands, whichever frameworks the entries are for."""
    for sig in catalog.load():
        fam = FAMILIES.get(sig.meaning_family or "")
        for rx in (fam or {}).get("not_advice", []):
            for text in sig.fixes + [sig.verify.command]:
                assert not re.search(rx, text), f"{sig.id} ({fam['id']}): {text!r} matches {rx!r}"


def test_entries_have_their_familys_classification():
    for sig in catalog.load():
        if sig.meaning_family:
            assert sig.classification == FAMILIES[sig.meaning_family]["classification"], sig.id


def test_watchdog_that_caught_a_cuda_error_is_a_crash_and_a_watchdog_timeout_a_stall():
    for name in ("pytorch-nccl-watchdog-cuda-error.log", "lmdeploy-watchdog-cuda-error-prefixed.log"):
        d = _diag("accelerator-fault", name)
        assert d.classification == "crash", (name, d.headline)
        assert "illegal memory access" in d.primary_cause["summary"]
    for name in ("pytorch-nccl.log", "picotron-watchdog-terminate.log"):  # the second aborts via `terminate called`
        d = _diag("collective-timeout", name)
        assert d.classification == "stall", (name, d.headline)


def test_the_silent_rank_is_named_as_the_suspect():
    d = _diag("silent-rank", "pytorch-nccl-3ranks.log")
    assert d.classification == "stall"
    assert d.primary_cause["rank"] == 0 and "rank 0" in d.primary_cause["summary"], d.primary_cause["summary"]
    assert d.headline.startswith("Stall on rank 0"), d.headline
    for name in ("horovod-missing-ranks.log", "horovod-ready-ranks.log"):
        d = _diag("silent-rank", name)
        assert d.primary_cause["rank"] == 0, (name, d.primary_cause)


def test_one_ranks_timeout_alone_names_no_silent_rank():
    res = diagnose(os.path.join(FIXTURES, "collective-timeout", "pytorch-nccl.log"), probe=False)
    assert not [f for f in res.findings if f.kind == "silent-rank"]


def test_per_rank_logs_name_a_silent_rank_only_when_its_log_is_there(tmp_path):
    """Split the real 3-rank log into one file per rank: rank 0's file holds its progress lines only."""
    lines = open(os.path.join(FIXTURES, "silent-rank", "pytorch-nccl-3ranks.log"), encoding="utf-8").read().splitlines()
    progress = [x for x in lines if x.startswith("Preparing")]
    run = tmp_path / "run"
    run.mkdir()
    for r in (1, 2):
        (run / f"rank{r}.log").write_text("\n".join(x for x in lines if f"[Rank {r}]" in x) + "\n")
    res = diagnose(str(run), probe=False)
    assert not [f for f in res.findings if f.kind == "silent-rank"], "rank 0's log is missing, not silent"
    (run / "rank0.log").write_text("\n".join(progress) + "\n")
    d = diagnose(str(run), probe=False).diagnosis
    assert d.primary_cause["rank"] == 0 and "rank 0" in d.primary_cause["summary"], d.primary_cause


def test_json_report_names_the_family_and_validates(tmp_path):
    path = tmp_path / "stderr.txt"
    shutil.copy(os.path.join(FIXTURES, "host-memory", "lsf.log"), path)
    out = run_cli("diagnose", str(path), "--json", "--no-probe")
    rep = json.loads(out.stdout)
    assert rep["classification"] == "OOM"
    assert rep["primary_cause"]["family"] == {"id": "host-memory", "title": FAMILIES["host-memory"]["title"]}
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.load(open(os.path.join(ROOT, "trainwreck", "schemas", "diagnosis.schema.json")))
    jsonschema.validate(rep, schema)


def test_every_family_is_described():
    for fam in FAMILIES.values():
        assert len(fam["meaning"]) >= 80 and fam["classification"] in ("OOM", "stall", "crash"), fam["id"]


def test_only_an_interrupt_blocked_in_a_wait_says_where_the_run_stalled():
    res = diagnose(os.path.join(FIXTURES, "data-pipeline-deadlock", "pytorch-ctrl-c-in-dataloader.log"), probe=False)
    (f,) = [f for f in res.findings if f.id == "interrupt.blocked-wait"]
    assert "DataLoader" in f.claim and f.label == "HYPOTHESIS"
    # an exception the code raised inside the loader is its own failure, not a stall
    raised = diagnose(os.path.join(ROOT, "tests", "data", "tracebacks", "dataloader_worker_keyerror_chain.log"),
                      probe=False)
    assert not [f for f in raised.findings if f.id == "interrupt.blocked-wait"]
    assert raised.diagnosis.classification == "crash"


def test_a_message_listing_sigsegv_as_a_possible_cause_is_no_segfault(tmp_path):
    # Ray's actor-death message (https://github.com/Unakar/Logic-RL/issues/18) lists causes it cannot tell apart
    log = tmp_path / "train.log"
    log.write_text("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit "
                   "detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some "
                   "potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. "
                   "(2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other "
                   "unexpected errors.\n")
    res = diagnose(str(log), probe=False)
    assert not [f for f in res.findings if f.id == "segfault"], [f.claim for f in res.findings]


def test_a_log_that_goes_on_past_initialisation_is_not_stuck_there(tmp_path):
    res = diagnose(os.path.join(FIXTURES, "rendezvous-timeout", "lightning-stuck-after-init.log"), probe=False)
    (f,) = [f for f in res.findings if f.id == "log.stuck-after-init"]
    assert f.label == "HYPOTHESIS" and res.diagnosis.classification == "stall"
    text = open(os.path.join(FIXTURES, "rendezvous-timeout", "lightning-stuck-after-init.log"), encoding="utf-8").read()
    progress = open(os.path.join(FIXTURES, "silent-rank", "pytorch-nccl-3ranks.log"), encoding="utf-8").readline()
    log = tmp_path / "train.log"
    log.write_text(text + progress)  # a tqdm progress line after the init line: the run went on
    assert not [f for f in diagnose(str(log), probe=False).findings if f.id == "log.stuck-after-init"]


@pytest.mark.parametrize("fam,other", [("host-memory", "gpu-memory"), ("gpu-memory", "host-memory")])
def test_no_memory_fixture_raises_a_finding_of_the_other_memory(fam, other):
    """torch.OutOfMemoryError is not Python's MemoryError; TF's OOM on device:CPU is not a GPU's."""
    for name in sorted(n for f, n in CASES if f == fam):
        res = diagnose(os.path.join(FIXTURES, fam, name), probe=False)
        wrong = [f.id for f in res.findings if (f.family or {}).get("id") == other]
        assert not wrong, f"{fam}/{name}: {wrong}"


def test_an_entry_naming_an_unknown_family_fails_the_build():
    entry = {"id": "x-y", "title": "xyz", "classification": "OOM", "role": "cause", "weight": 0.5, "patterns": ["x"],
             "needles": ["error"], "family": "no-such-family"}
    with pytest.raises(ValueError, match="no-such-family"):
        catalog.signatures({"families": {"memory": [entry]}, "meaning_families": list(FAMILIES.values())})
    entry["family"] = "host-memory"
    assert catalog.signatures({"families": {"memory": [entry]}, "meaning_families": list(FAMILIES.values())})
