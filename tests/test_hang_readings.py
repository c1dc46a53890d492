"""Hangs read by meaning (issue 9, batch 8): coordination-service barrier timeouts in JAX/XLA/TensorFlow are
rendezvous timeouts at start-up and collective timeouts later, never crashes; a Ctrl-C traceback printed after
other processes' output still says where the main process waited, while a DataLoader worker's own traceback
(idle in index_queue.get, as every worker is when any run is interrupted) says nothing; a hang that someone
ended by hand is outcome `interrupted`. Fixture sources: tests/fixtures/families/README.md and
tests/fixtures/stuck/README.md."""
import os

from twtest import ROOT

from trainwreck.pipeline import diagnose

FAM = os.path.join(ROOT, "tests", "fixtures", "families")
STUCK = os.path.join(ROOT, "tests", "fixtures", "stuck")


def _res(path):
    return diagnose(path, probe=False)


def _fam(d):
    return (d["primary_cause"] or {}).get("family", {}).get("id")


def test_jax_start_up_barrier_timeout_is_a_rendezvous_stall_not_a_crash():
    d = _res(os.path.join(FAM, "rendezvous-timeout", "jax-coordination-barrier.log")).diagnosis.to_json()
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "xla-coordination-register-timeout"
    assert _fam(d) == "rendezvous-timeout" and d["failure_stage"] == "startup"
    assert "PjRT_Client_Connect" in d["primary_cause"]["summary"]


def test_a_later_coordination_barrier_timeout_is_a_collective_timeout():
    d = _res(os.path.join(FAM, "collective-timeout", "jax-coordination-barrier.log")).diagnosis.to_json()
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "xla-coordination-barrier-timeout"
    assert _fam(d) == "collective-timeout"
    assert "multihost_broadcast_sync0" in d["primary_cause"]["summary"]


def test_coordination_service_registration_failure_log_is_a_rendezvous_stall(tmp_path):
    # coordination_service.cc PassBarrier: LOG(ERROR) << "Stopping coordination service as cluster registration
    # failed. …" << cluster_register_timeout_ << ".\n\nOriginal error: " << result (the barrier error's new wording)
    (tmp_path / "coordinator.log").write_text(
        "E0301 10:00:00.000000  1234 coordination_service.cc:512] Stopping coordination service as cluster "
        "registration failed. This may be due to 1) some tasks crashed earlier before connecting, 2) some tasks were "
        "never scheduled, or 3) scheduling delays. Consider setting a longer initialization timeout if such delays "
        "are expected, the timeout is currently set to: 5m.\n\n"
        "Original error: DEADLINE_EXCEEDED: Barrier timed out. Id: [Init]Wait_for_all_tasks_to_register::0. This "
        "usually happens because a task triggered the barrier too early or too slowly. Please look at the task logs "
        "(both timed out and first task) to debug further.\n", encoding="utf-8")
    d = _res(str(tmp_path)).diagnosis.to_json()
    assert d["classification"] == "stall" and _fam(d) == "rendezvous-timeout", d["headline"]
    assert d["outcome"]["outcome"] == "failed", "the timeout ended the job itself"


def _blocked(path):
    return [f for f in _res(path).findings if f.id == "interrupt.blocked-wait"]


def test_an_interrupt_printed_after_worker_tracebacks_still_names_the_main_wait():
    res = _res(os.path.join(STUCK, "interrupt-after-worker-output"))
    (f,) = [f for f in res.findings if f.id == "interrupt.blocked-wait"]
    assert "_get_batch" in f.claim and "DataLoader" in f.claim and f.label == "HYPOTHESIS"
    d = res.diagnosis.to_json()
    assert d["classification"] == "stall" and d["outcome"]["outcome"] == "interrupted"


def test_idle_dataloader_workers_interrupted_with_the_run_are_no_stall():
    res = _res(os.path.join(STUCK, "control-ctrl-c-idle-workers"))
    assert not [f for f in res.findings if f.id == "interrupt.blocked-wait"]
    d = res.diagnosis.to_json()
    assert d["classification"] != "stall" and d["outcome"]["outcome"] == "interrupted"


def test_a_timeout_that_ended_the_run_stays_failed_when_a_ctrl_c_follows(tmp_path):
    # the NCCL watchdog's own abort ends the run; a Ctrl-C after it does not make it "interrupted"
    text = open(os.path.join(FAM, "collective-timeout", "pytorch-nccl.log"), encoding="utf-8").read()
    (tmp_path / "train.log").write_text(text + "^C\n", encoding="utf-8")
    d = _res(str(tmp_path)).diagnosis.to_json()
    assert d["classification"] == "stall"
    assert d["outcome"]["outcome"] == "failed", d["outcome"]
