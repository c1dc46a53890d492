"""decide() through the typed Finding contract: findings carry kind / step / wrapper / timeout / precursor_of,
and decide weighs those, never a finding's wording or its detector's id (every finding here has a made-up id and
a claim that says nothing). Each test fails when the behaviour it names is broken."""
import json
import math

from trainwreck.analyze.chance_level import at_chance
from trainwreck.collect.bundle import Bundle
from trainwreck.decide import decide
from trainwreck.model import Finding, Point, Source


def _bundle(loss=None, checkpoints=()):
    b = Bundle(root="/nonexistent/run", target="run")
    for step, v in loss or []:
        b.add_point("loss", "metrics.jsonl", Point(step, v, Source("metrics.jsonl", step // 10, "", step=step,
                                                                    metric="loss", value=v)))
    b.checkpoints = [{"path": f"checkpoints/step_{s}.pt", "step": s, "size": 293, "ok": True, "problem": None}
                     for s in checkpoints]
    return b


def _line(n, text=None):
    return Source("train.log", n, text or f"log line {n}")


def _nan_at(step):
    return Finding("x.onset", "something happened", confidence=0.9, suggests="NaN", role="symptom", kind="nonfinite",
                   evidence=[Source("metrics.jsonl", step // 10, "", step=step, metric="loss", value=float("nan"))])


def test_rollback_takes_the_last_checkpoint_strictly_before_the_onset():
    loss = [(s, 2.0 if s < 60 else float("nan")) for s in range(10, 101, 10)]
    d = decide(_bundle(loss, checkpoints=(40, 50, 60, 70)), [_nan_at(60)])
    assert d.classification == "NaN" and d.onset["step"] == 60
    # the checkpoint saved at the NaN step already holds the broken weights
    assert d.rollback["checkpoint"]["step"] == 50
    assert d.verification["checkpoint"] == "checkpoints/step_50.pt"


def test_a_precursor_moves_the_rollback_before_it():
    loss = [(s, 2.0 if s < 60 else float("nan")) for s in range(10, 101, 10)]
    pre = Finding("x.before", "it rose", confidence=0.7, role="cause", kind="precursor", precursor_of="NaN",
                  evidence=[Source("metrics.jsonl", 3, "", step=30, metric="grad_norm", value=50.0)])
    d = decide(_bundle(loss, checkpoints=(20, 30, 50)), [_nan_at(60), pre])
    assert d.onset["step"] == 60 and d.onset["precursor_step"] == 30
    assert d.rollback["before_step"] == 30 and d.rollback["checkpoint"]["step"] == 20
    assert [p["step"] for p in d.precursors] == [30]


def _crash(claim="a child process failed", line=20, **kw):
    return Finding("x.exception", claim, confidence=0.85, suggests="crash", role="cause", kind="traceback",
                   evidence=[_line(line)], **kw)


def test_a_launcher_wrapper_is_demoted_to_context():
    d = decide(_bundle(), [_crash(wrapper=True)])
    assert d.classification == "unclear"
    assert "launcher" in d.headline and "--log-dir" in d.verification["command"]
    assert any("child process failed" in c["summary"] for c in d.contributing_factors)


def test_a_wrapper_line_seen_by_a_detector_demotes_the_exception_on_it():
    marker = Finding("x.wrapper-line", "", role="context", wrapper=True, kind="launcher-summary", confidence=0.0,
                     evidence=[_line(20)])
    assert decide(_bundle(), [_crash(), marker]).classification == "unclear"
    assert decide(_bundle(), [_crash(line=30), marker]).classification == "crash"  # another line: not the wrapper


def test_decide_reads_no_prose():
    """A claim worded like a wrapper message, on a finding not marked as one, stays a crash."""
    d = decide(_bundle(), [_crash("Step 1 exited with non-zero status 1; launcher reporting")])
    assert d.classification == "crash"


def _timeout(flag=True):
    return Finding("x.timed-out", "waited too long", confidence=0.8, suggests="stall", role="terminal",
                   signature="x.timed-out", timeout=flag, evidence=[_line(10)])


def test_a_timeout_folds_the_crash_it_caused_into_a_stall():
    d = decide(_bundle(), [_timeout(), _crash(line=12)])
    assert d.classification == "stall"
    assert not [c for c in d.causes + d.terminal_events if c["id"] == "x.exception"]
    assert [e["line"] for e in d.primary_cause["evidence"]] == [10, 12]  # the crash's line backs the timeout
    # the same findings without the timeout flag: the crash is the failure
    assert decide(_bundle(), [_timeout(False), _crash(line=12)]).classification == "crash"
    # a crash far from the timeout is not its consequence
    assert decide(_bundle(), [_timeout(), _crash(line=90)]).classification == "crash"


def _nan_message():
    return Finding("x.nan-message", "the log says nan", confidence=0.9, suggests="NaN", role="cause",
                   signature="x.nan-message", evidence=[_line(5)])


def test_a_nan_message_while_the_logged_loss_stays_finite_is_weakened():
    rival = Finding("x.other", "something else", confidence=0.7, suggests="crash", role="cause", evidence=[_line(9)])
    finite = [(s, 2.0 - s * 0.001) for s in range(10, 201, 10)]
    assert decide(_bundle(finite), [_nan_message(), rival]).classification == "crash"
    broken = finite[:-1] + [(200, float("nan"))]
    assert decide(_bundle(broken), [_nan_message(), rival]).classification == "NaN"


def test_chance_level_tolerance():
    assert at_chance(2.30, 10) and at_chance(math.log(10), 10)
    assert not at_chance(2.12, 10)  # 8% below ln(10): a model that learned a little, not uniform predictions
    assert at_chance(0.70, 2) and not at_chance(0.60, 2)


def _flat_run(tmp_path, level):
    (tmp_path / "config.yaml").write_text("model:\n  num_classes: 10\n")
    rows = [{"step": s, "loss": level + (0.004 if s % 20 else -0.004)} for s in range(0, 3000, 10)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(tmp_path)


def test_a_loss_flat_at_ln10_is_chance_level_and_at_2_12_it_is_not(cli, tmp_path):
    at = _flat_run(tmp_path / "at", 2.30) if (tmp_path / "at").mkdir() is None else None
    below = _flat_run(tmp_path / "below", 2.12) if (tmp_path / "below").mkdir() is None else None
    d = json.loads(cli("diagnose", at, "--json", "--no-probe").stdout)
    assert d["classification"] == "stall" and d["headline"].startswith("Not learning")
    assert d["chance"]["at_chance"] and "ln(10)" in d["primary_cause"]["summary"]
    assert "chance level" in cli("init-loss", at).stdout
    d = json.loads(cli("diagnose", below, "--json", "--no-probe").stdout)
    assert not d["chance"]["at_chance"]
    assert "ln(10)" not in json.dumps(d["causes"]) and "chance level" not in d["headline"]
    assert "chance level" not in cli("init-loss", below).stdout


def test_a_wrapper_exception_in_a_real_log_leaves_the_run_unclear(cli, tmp_path):
    """End to end: the detectors mark the wrapper's line, so the wrapper's traceback does not decide the run."""
    cmd = "['deepspeed', '--num_gpus', '8', 'main.py', '--model_name_or_path', 'facebook/opt-1.3b', " * 3
    (tmp_path / "train.log").write_text(
        "Traceback (most recent call last):\n"
        '  File "/home/u/train.py", line 40, in <module>\n'
        "    subprocess.run(cmd, check=True)\n"
        '  File "/usr/lib/python3.10/subprocess.py", line 526, in run\n'
        "    raise CalledProcessError(retcode, process.args,\n"
        f"subprocess.CalledProcessError: Command '{cmd}]' returned non-zero exit status 1.\n")
    d = json.loads(cli("diagnose", str(tmp_path), "--json", "--no-probe").stdout)
    assert d["classification"] == "unclear" and "launcher" in d["headline"], d["headline"]


# -- gaps the mutation run found (tests/README.md): each test names the behaviour a surviving mutant broke ---------

def _oom(step_line, confidence=0.95):
    return Finding("x.oom", "memory ran out", confidence=confidence, suggests="OOM", role="cause", kind="signature",
                   evidence=[_line(step_line)])


def _loss_points(first_nan):
    return [(s, 2.0 if s < first_nan else float("nan")) for s in range(10, 201, 10)]


def _nan_on_log(step, line):
    """A NaN seen in the log at `line`, dated on the timeline through the loss points logged around it."""
    b_src = Source("train.log", line, f"step {step} loss=nan", step=step, metric="loss", value=float("nan"))
    return Finding("x.log-nan", "loss went non-finite", confidence=0.8, suggests="NaN", role="symptom",
                   kind="nonfinite", evidence=[b_src])


def test_the_first_real_failure_wins_over_a_stronger_later_one():
    """A NaN at step 60 and an OOM logged after step 150: the OOM is a consequence, the run is a NaN run — even
    though the OOM finding is the stronger one. With the OOM first, the same findings make an OOM run."""
    b = _bundle(_loss_points(60))
    for s in range(10, 201, 10):  # log lines 1..20 carry steps 10..200, so line 16 is after step 150
        b.add_point("loss", "train.log", Point(s, 2.0, Source("train.log", s // 10, "", step=s, metric="loss",
                                                              value=2.0)))
    d = decide(b, [_nan_on_log(60, 6), _oom(16)])
    assert d.classification == "NaN"
    assert any("memory ran out" in t["summary"] and "consequence" in t["summary"] for t in d.terminal_events)
    d2 = decide(b, [_nan_on_log(160, 16), _oom(6)])
    assert d2.classification == "OOM"


def test_confidence_falls_when_a_rival_class_is_close():
    alone = decide(_bundle(), [_oom(10, 0.9)])
    rival = Finding("x.crash", "it raised", confidence=0.85, suggests="crash", role="cause", kind="traceback",
                    evidence=[_line(40)])
    contested = decide(_bundle(), [_oom(10, 0.9), rival])
    assert alone.classification == contested.classification == "OOM"
    assert 0.8 <= alone.confidence <= 0.97
    assert contested.confidence < alone.confidence


def test_a_damaged_checkpoint_is_never_the_rollback_point():
    b = _bundle(_loss_points(60), checkpoints=(30, 50))
    b.checkpoints[1].update(ok=False, problem="truncated zip: central directory missing")
    d = decide(b, [_nan_at(60)])
    assert d.rollback["checkpoint"]["step"] == 30
    assert d.verification["checkpoint"] == "checkpoints/step_30.pt"


def test_a_strong_crash_elsewhere_keeps_the_run_a_crash_even_with_a_timeout():
    """The timeout folds only the crash it caused; a separate, strong crash is still the failure."""
    other = _crash(claim="CUDA error: an illegal memory access", line=200)
    strong_timeout = _timeout()
    strong_timeout.confidence = 0.95  # stronger than either crash: folding the crash would make the run a stall
    d = decide(_bundle(), [strong_timeout, _crash(line=12), other])
    assert d.classification == "crash"
    assert "waited too long" not in d.primary_cause["summary"]
    assert any("illegal memory access" in c["summary"] for c in d.causes)


def test_one_line_of_evidence_is_one_cause():
    """Two detectors citing the same log line give one cause, which keeps the other's extra evidence."""
    a = Finding("x.a", "the exception", confidence=0.9, suggests="crash", role="cause", kind="exception-line",
                evidence=[_line(30), _line(25, "File train.py, line 7")])
    b = Finding("x.b", "the catalog's reading of it", confidence=0.8, suggests="crash", role="cause",
                kind="signature", signature="x-b", evidence=[_line(30), _line(31, "frame 2")])
    d = decide(_bundle(), [a, b])
    assert len(d.causes) == 1
    assert {e["line"] for e in d.primary_cause["evidence"]} >= {30, 31}
