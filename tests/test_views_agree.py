"""One result, many views: every verb of the real registry, run on the example runs and on corpus cases with
metrics or ranks, reports the same classification, onset step, rollback checkpoint, first failing rank and
chance-level verdict as `diagnose` — each verb shows a slice of one Diagnosis and recomputes none of it."""
import contextlib
import io
import json
import os
import shutil

import pytest
from twtest import EXAMPLES, ROOT

from trainwreck import cli

CORPUS = os.path.join(ROOT, "tests", "corpus")
CASES = [os.path.join(EXAMPLES, d) for d in sorted(os.listdir(EXAMPLES))] + [os.path.join(CORPUS, d) for d in (
    "024-caffe-imagenet-loss-6.9-chance", "017-megatron-ds-grad-norm-nan-loss-scale-1",
    "020-keras-loss-rises-after-plateau", "122-gaze-regression-loss-nan-step-100-high-lr",
    "251-weathergen-srun-prefixed-rank11-allreduce-watchdog", "252-swift-4node-zero3-rank11-oom-then-watchdog",
    "209-dino-train-loss-creeps-to-ln-out-dim-no-learning", "204-llamafactory-32b-lora-predict-oom-after-train",
    "265-amvur-launch-4gpu-rank2-sigkill-host-memory-grows", "181-minigpt4-torchrun-summary-exitcode-1-only")]


def _run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(argv))
    assert rc == 0, (argv, rc, err.getvalue())
    return out.getvalue()


def _ckpt(c):
    return (c or {}).get("path")


# What each verb says about the shared facts, read from its --json output (None: the verb does not say).
VIEWS = {
    "diagnose": lambda j: {"classification": j["classification"], "onset": j["onset"]["step"],
                           "checkpoint": _ckpt(j["rollback"]["checkpoint"]),
                           "rank": (j["first_failing_rank"] or {}).get("rank"),
                           "at_chance": j["chance"]["at_chance"], "init_ok": j["chance"].get("ok")},
    "collect": lambda j: {"classification": j["classification"], "onset": j["onset"]["step"],
                          "checkpoint": _ckpt(j["rollback"]["checkpoint"]),
                          "rank": (j["first_failing_rank"] or {}).get("rank"),
                          "at_chance": j["chance"]["at_chance"], "init_ok": j["chance"].get("ok")},
    "curve": lambda j: {"classification": j["classification"], "onset": j["onset"]["step"]},
    "rollback": lambda j: {"classification": j["classification"], "onset": j["failure_onset_step"],
                           "checkpoint": _ckpt(j["rollback_to"])},
    "init-loss": lambda j: {"at_chance": j["at_chance"], "init_ok": j.get("ok")},
    # the traceback verb summarises the logs' tracebacks; when torchrun's own summary names the root-cause rank,
    # that is the diagnosis' first failing rank too (which rank printed first is the verb's own, lesser, account)
    "traceback": lambda j: {"rank": _launcher_rank(j.get("first_failure"))},
}


def _launcher_rank(ff):
    return ff["rank"] if ff and ff.get("source") == "elastic-summary" and ff.get("root_cause") else None
OPTIONAL = {"traceback": {"rank"}}  # facts a verb may leave unsaid (None) without disagreeing


def _verbs():
    return [m.NAME for m in cli._verb_modules() if m.NAME != "eval"]


def test_every_verb_of_the_registry_is_a_view():
    missing = [v for v in _verbs() if v not in VIEWS]
    assert not missing, f"verbs with no agreement check: {missing} (add what they say to VIEWS)"


@pytest.fixture(scope="module")
def nan_run_with_checkpoints(tmp_path_factory):
    """A log-only NaN run: a recovered loss-scale dip early on, grad_norm exploding from step 930, NaN from 960,
    checkpoints at steps 20, 500, 900 and 960 (the last saved at the NaN step)."""
    import math
    run = tmp_path_factory.mktemp("nanrun")
    (run / "checkpoints").mkdir()
    src = os.path.join(EXAMPLES, "nan-fp16", "checkpoints", "step_100.pt")
    for s in (20, 500, 900, 960):
        shutil.copy(src, run / "checkpoints" / f"step_{s}.pt")
    lines, scale = ["world size 1, model tiny"], 65536.0
    for s in range(10, 1001, 10):
        loss, g = 5.0 - s * 0.002 + 0.01 * math.sin(s), 1.0 + 0.05 * math.cos(s)
        scale = scale / 2 if 100 <= s <= 160 else (min(65536.0, scale * 2) if s <= 300 else scale)
        if s >= 930:
            g = 10 ** ((s - 920) / 10)
        if s >= 960:
            loss = g = float("nan")
        lines += [f"step {s} loss={loss:.4f} grad_norm={g:.4g} loss_scale={scale:g}", f"  data: batch {s}"]
    (run / "train.log").write_text("\n".join(lines) + "\n")
    return str(run)


def _facts(path):
    out = {}
    for verb in _verbs():
        out[verb] = VIEWS[verb](json.loads(_run(verb, path, "--json")))
    return out


def _assert_agree(path):
    facts = _facts(path)
    ref = facts["diagnose"]
    for verb, said in facts.items():
        for k, v in said.items():
            if v is None and k in OPTIONAL.get(verb, ()):
                continue
            assert v == ref[k], f"{verb} says {k}={v!r}, diagnose says {ref[k]!r} on {path}"
    return ref


@pytest.mark.parametrize("path", CASES, ids=os.path.basename)
def test_all_verbs_agree(path):
    _assert_agree(path)


def test_views_agree_on_the_rollback_checkpoint_and_it_precedes_the_instability(nan_run_with_checkpoints):
    ref = _assert_agree(nan_run_with_checkpoints)
    assert ref["classification"] == "NaN" and ref["onset"] == 960
    # grad_norm began to explode at 930: the checkpoint at 960 holds the broken state, the one at 20 wastes
    # 880 good steps; 900 is the last intact one before the instability
    assert ref["checkpoint"] == "checkpoints/step_900.pt"
    rb = json.loads(_run("rollback", nan_run_with_checkpoints, "--json"))
    assert rb["onset_step"] == 930 and rb["precursors"][0]["step"] == 930
    term = _run("diagnose", nan_run_with_checkpoints, "--no-probe")
    assert "checkpoints/step_900.pt" in term and "NaN at step 960" in term


@pytest.mark.parametrize("path", [os.path.join(EXAMPLES, "divergence-lr"),
                                  os.path.join(CORPUS, "024-caffe-imagenet-loss-6.9-chance"),
                                  os.path.join(CORPUS, "020-keras-loss-rises-after-plateau")], ids=os.path.basename)
def test_curve_never_says_no_anomaly_where_diagnose_sees_divergence_or_not_learning(path):
    d = json.loads(_run("diagnose", path, "--json", "--no-probe"))
    assert d["classification"] in ("divergence", "stall")
    text = _run("curve", path)
    assert "No anomaly in the trajectories:" not in text
    verdicts = json.loads(_run("curve", path, "--json"))["verdicts"]
    assert verdicts["loss"] in ("diverging", "at chance level", "not learning"), verdicts


def test_report_renderers_show_the_decided_checkpoint(nan_run_with_checkpoints, tmp_path):
    out = tmp_path / "snap"
    _run("diagnose", nan_run_with_checkpoints, "--no-probe", "--out", str(out))
    md = (out / "report.md").read_text()
    rep = json.loads((out / "report.json").read_text())
    assert "checkpoints/step_900.pt" in md and rep["verification"]["checkpoint"] == "checkpoints/step_900.pt"
    assert rep["onset"]["step"] == 960 and rep["rollback"]["before_step"] == 930
    assert not [n for n in rep["notes"] if "does not match its schema" in n], rep["notes"]


def test_the_plot_marks_the_decided_onset_and_rollback_step(nan_run_with_checkpoints, tmp_path, monkeypatch):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    from matplotlib.axes import Axes

    from trainwreck.pipeline import diagnose
    from trainwreck.report.plot import plot
    marks = []
    real = Axes.axvline
    monkeypatch.setattr(Axes, "axvline", lambda self, x=0, *a, **k: (marks.append(x), real(self, x, *a, **k))[1])
    r = diagnose(nan_run_with_checkpoints, probe=False)
    report = r.diagnosis.to_json()
    assert plot(r.bundle, report, str(tmp_path / "curves.png"))
    assert report["onset"]["step"] in marks and report["rollback"]["before_step"] in marks, marks
