"""Trajectory detectors on synthetic but realistic series, and on metric lines from the corpus."""
import glob
import json
import math
import os
import random

import pytest

from trainwreck.analyze import trajectory
from trainwreck.collect.bundle import Bundle, Series
from trainwreck.collect.textmetrics import extract
from trainwreck.model import DIRECT, HYPOTHESIS, ConfigEntry, Point, Source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")


def series(name, values, steps=None, path="metrics.jsonl", line0=1):
    """A Series as the jsonl reader builds it: one point per line, each with its own Source."""
    steps = list(steps) if steps is not None else [None] * len(values)
    pts = []
    for k, (stp, v) in enumerate(zip(steps, values)):
        text = json.dumps({"step": stp, name: v if math.isfinite(v) else str(v)})
        pts.append(Point(stp, float(v), Source(path, line0 + k, text, step=stp, metric=name, value=float(v))))
    return Series(name, path, pts, len(pts))


def bundle(*ss, config=None):
    b = Bundle(root="/tmp/run", target="/tmp/run")
    for s in ss:
        b.series.setdefault(s.name, []).append(s)
    for n, (k, v) in enumerate((config or {}).items(), 1):
        b.configs.setdefault("config.yaml", []).append(ConfigEntry(k, str(v), n, "config.yaml"))
    return b


def ids(findings):
    return [f.id for f in findings]


def one(findings, fid):
    got = [f for f in findings if f.id == fid]
    assert len(got) == 1, (fid, [(f.id, f.claim) for f in findings])
    return got[0]


def decreasing(n, start=3.0, end=1.2, noise=0.02, seed=0, step0=0, every=10):
    rng = random.Random(seed)
    steps = [step0 + every * i for i in range(n)]
    vals = [end + (start - end) * math.exp(-4 * i / n) + rng.gauss(0, noise) for i in range(n)]
    return steps, vals


def warmup_cosine(steps, peak=3e-4, warm=100, total=None):
    total = total or steps[-1] + 1
    out = []
    for s in steps:
        if s < warm:
            out.append(peak * (s + 1) / warm)
        else:
            out.append(peak * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - warm))))
    return out


# -- NaN and what preceded it ------------------------------------------------------------------------------

def nan_after_gradnorm_spike():
    steps = list(range(0, 500, 10))  # 0 … 490
    rng = random.Random(1)
    loss, grad = [], []
    for s in steps:
        if s < 400:
            loss.append(2.5 - s / 1000 + rng.gauss(0, 0.02))
        else:
            loss.append(math.nan)
        if s < 350:
            grad.append(9.8 + rng.gauss(0, 0.5))
        elif s < 400:
            grad.append(9.8 * 10 ** ((s - 340) / 50 * 4))  # 350 … 390: ×16 … ×1.2e4
        else:
            grad.append(math.nan)
    lr = warmup_cosine(steps, peak=3e-3, warm=50, total=5000)
    return bundle(series("loss", loss, steps), series("grad_norm", grad, steps), series("lr", lr, steps))


def test_nan_preceded_by_gradnorm_spike():
    f = trajectory.detect(nan_after_gradnorm_spike())
    nan = [x for x in f if x.id == "metric.first-nonfinite" and x.evidence[0].metric == "loss"][0]
    assert nan.suggests == "NaN" and nan.role == "symptom" and nan.label == DIRECT
    assert nan.evidence[0].step == 400 and nan.order == 400
    assert "step 400" in nan.claim and "last finite value" in nan.claim
    spike = one(f, "metric.gradnorm-spike-before-nan")
    assert spike.label == DIRECT and spike.role == "cause" and spike.suggests is None
    assert spike.evidence[0].step == 350 and spike.evidence[-1].step == 390
    assert spike.order == 350
    assert "steps 350–390" in spike.claim and "→" in spike.claim and "first loss NaN at step 400" in spike.claim
    assert "hypothesis" in spike.meaning.lower()
    assert "metric.divergence" not in ids(f)


def test_nan_onset_from_whole_history_scan():
    s = series("loss", [2.0, 1.9, 1.8], [0, 50, 100])
    s.total = 1000
    s.first_nonfinite = Point(150, math.nan, Source("metrics.jsonl", 151, '{"step": 150, "loss": NaN}',
                                                    step=150, metric="loss", value=math.nan))
    f = one(trajectory.detect(bundle(s)), "metric.first-nonfinite")
    assert f.evidence[0].step == 150 and "whole-file scan" in f.claim


def test_isolated_inf_is_a_factor_not_the_failure():
    steps, vals = decreasing(100)
    vals[40] = math.inf
    f = one(trajectory.detect(bundle(series("loss", vals, steps))), "metric.first-nonfinite")
    assert f.role == "factor" and f.suggests is None and "isolated" in f.claim
    assert "metric.divergence" not in ids(trajectory.detect(bundle(series("loss", vals, steps))))


def test_loss_scale_collapse_before_nan():
    steps = list(range(100))
    scale = [65536.0] * 80 + [65536.0 / 2 ** k for k in range(1, 17)] + [1.0] * 4
    loss = [2.0 - i / 500 for i in range(98)] + [math.nan, math.nan]
    skipped = [0.0] * 80 + [float(k) for k in range(1, 21)]
    f = trajectory.detect(bundle(series("loss", loss, steps), series("loss_scale", scale, steps),
                                 series("skipped_iterations", skipped, steps)))
    c = one(f, "metric.loss-scale-collapse-before-nan")
    assert "65536 → 1 over steps 80–95" in c.claim and c.evidence[0].step == 80 and c.role == "cause"
    s = one(f, "metric.skipped-iterations-before-nan")
    assert s.evidence[0].step == 80 and "0 → 20" in s.claim


def test_loss_scale_collapse_alone_is_a_nan_symptom():
    pts = [256.0, 128.0, 64.0, 32.0, 16.0, 8.0, 4.0, 2.0]
    f = one(trajectory.detect(bundle(series("loss_scale", pts, path="train.log", line0=18))),
            "metric.loss-scale-collapse")
    assert f.suggests == "NaN" and "256 → 2" in f.claim and "7 halvings" in f.claim and "lines 18–25" in f.claim


def test_lr_peak_right_before_nan():
    steps = list(range(0, 200, 5))
    lr = [1e-3 * min(1.0, (s + 5) / 180) for s in steps]
    loss = [2.0 - s / 1000 for s in steps[:-4]] + [math.nan] * 4
    f = one(trajectory.detect(bundle(series("loss", loss, steps), series("lr", lr, steps))),
            "metric.lr-peak-before-nan")
    assert f.role == "factor" and "peak 0.001 at step 175" in f.claim


# -- divergence, spikes ------------------------------------------------------------------------------------

def test_steady_decrease_has_no_findings_at_all():
    steps, loss = decreasing(300, noise=0.03)
    rng = random.Random(5)
    grad = [1.0 + 0.3 * math.exp(-i / 50) + rng.gauss(0, 0.05) for i in range(300)]
    lr = warmup_cosine(steps, warm=100)
    b = bundle(series("loss", loss, steps), series("grad_norm", grad, steps), series("lr", lr, steps),
               series("throughput", [51000 + rng.gauss(0, 500) for _ in steps], steps))
    assert trajectory.detect(b) == []


@pytest.mark.parametrize("seed", range(8))
def test_noisy_but_decreasing_loss_is_not_divergence(seed):
    rng = random.Random(seed)
    steps = list(range(0, 4000, 10))
    loss = [(1.5 + 2.0 * math.exp(-s / 800)) * math.exp(rng.gauss(0, 0.12)) for s in steps]
    f = trajectory.detect(bundle(series("loss", loss, steps)))
    assert "metric.divergence" not in ids(f)
    assert "metric.plateau" not in ids(f) and "metric.plateau-chance" not in ids(f)


def test_recovered_spike_is_not_divergence():
    steps, loss = decreasing(200, noise=0.02, seed=3)
    for k, m in ((100, 2.8), (101, 3.5), (102, 2.2)):
        loss[k] *= m
    f = trajectory.detect(bundle(series("loss", loss, steps)))
    assert "metric.divergence" not in ids(f)
    sp = one(f, "metric.loss-spike")
    assert sp.role == "factor" and sp.suggests is None and "recovered" in sp.claim
    assert sp.order == 1000 and sp.evidence[0].step == 1000 and sp.evidence[1].step == 1010


def test_sustained_rise_is_divergence():
    steps, loss = decreasing(200, start=3.0, end=1.0, noise=0.02, seed=4)
    for k in range(140, 200):
        loss[k] = loss[139] + 0.03 * (k - 139)  # climbs to ≈ +1.8 and stays up
    f = one(trajectory.detect(bundle(series("loss", loss, steps))), "metric.divergence")
    assert f.suggests == "divergence" and f.label == DIRECT
    assert 1390 <= f.order <= 1500
    assert "sustained" in f.claim and f.evidence[0].metric == "loss"


def test_divergence_of_finite_values_only():
    steps, loss = decreasing(100, seed=6)
    loss[30] = math.nan  # a masked hole does not break statistics
    for k in range(70, 100):
        loss[k] = 4.0 + 0.1 * (k - 70)
    f = trajectory.detect(bundle(series("loss", loss, steps)))
    assert "metric.divergence" in ids(f)


def test_huge_finite_blowup_like_tf_object_detection():
    steps = list(range(425, 443))
    loss = [0.06, 0.07, 0.05, 0.16, 0.06, 0.08, 0.06, 0.07, 0.05, 0.06, 0.06, 0.16, 0.058,
            5.4e19, 4.3e20, 2.1e21, 7.8e21, 2.5e22]
    f = one(trajectory.detect(bundle(series("loss", loss, steps, path="train.log"))), "metric.divergence")
    assert f.order == 438


# -- plateaus ----------------------------------------------------------------------------------------------

def chance(level, n=200, seed=7, step0=0):
    rng = random.Random(seed)
    steps = [step0 + 10 * i for i in range(n)]
    return steps, [level + rng.gauss(0, 0.004) for _ in steps]


def test_plateau_at_chance_with_num_classes_in_config_is_direct():
    steps, loss = chance(math.log(10))
    f = one(trajectory.detect(bundle(series("loss", loss, steps), config={"model.num_classes": 10})),
            "metric.plateau-chance")
    assert f.label == DIRECT and f.suggests == "stall"
    assert "ln(10)" in f.claim and "in the config" in f.claim
    assert any(e.path == "config.yaml" and e.line == 1 for e in f.evidence)


def test_plateau_at_chance_guessed_is_a_hypothesis():
    steps, loss = chance(math.log(1000), n=50, step0=40000)
    f = one(trajectory.detect(bundle(series("loss", loss, steps))), "metric.plateau-chance")
    assert f.label == HYPOTHESIS and "ln(1000)" in f.claim and "guessed" in f.claim


def test_flat_loss_not_at_chance_level():
    steps, loss = chance(1.234, n=60)
    f = trajectory.detect(bundle(series("loss", loss, steps), config={"num_classes": 10}))
    assert "metric.plateau-chance" not in ids(f)
    assert one(f, "metric.plateau").suggests == "stall"


def test_short_mid_run_flat_window_says_nothing():
    steps, loss = chance(3.99, n=10, step0=2920)
    assert trajectory.detect(bundle(series("loss", loss, steps))) == []


# -- learning-rate schedule --------------------------------------------------------------------------------

def test_lr_warmup_data_starting_mid_run_makes_no_warmup_claim():
    steps = list(range(5000, 6000, 10))
    lr = [3e-4] * len(steps)
    loss = [2.0 - i / 1000 for i in range(len(steps) - 5)] + [math.nan] * 5
    f = trajectory.detect(bundle(series("loss", loss, steps), series("lr", lr, steps)))
    assert not any("warmup" in x.claim for x in f), [x.claim for x in f]


def test_no_warmup_from_the_first_step_is_said_when_the_run_broke():
    steps = list(range(1, 500, 10))
    lr = [3e-3] * len(steps)
    loss = [2.0 - i / 1000 for i in range(len(steps) - 5)] + [math.nan] * 5
    f = trajectory.detect(bundle(series("loss", loss, steps), series("lr", lr, steps),
                                 config={"warmup_steps": 0}))
    w = [x for x in f if x.id == "metric.lr-anomaly" and "no warmup" in x.claim]
    assert len(w) == 1 and w[0].role == "factor" and "warmup_steps: 0" in w[0].claim


def test_no_warmup_is_not_claimed_for_a_healthy_run():
    steps, loss = decreasing(100, step0=1)
    assert trajectory.detect(bundle(series("loss", loss, steps), series("lr", [1e-3] * 100, steps))) == []


def test_lr_zero_negative_and_jump():
    steps = list(range(0, 200, 10))
    f = trajectory.analyze_series(series("lr", [0.0] * 20, steps).points, "lr")
    assert len(f) == 1 and f[0].suggests == "stall" and "0 at all 20" in f[0].claim
    f = trajectory.analyze_series(series("lr", [1e-4] * 10 + [-1e-4] * 10, steps).points, "lr")
    assert any("negative" in x.claim for x in f)
    lr = warmup_cosine(steps, peak=1e-4, warm=50, total=400)
    lr[15] = 1e-2
    f = trajectory.analyze_series(series("lr", lr, steps).points, "lr")
    assert any("jumped" in x.claim and x.evidence[0].step == 150 for x in f)


def test_lr_that_ends_at_zero_early():
    steps = list(range(0, 1000, 10))
    lr = [max(0.0, 1e-3 * (1 - s / 500)) for s in steps]
    f = trajectory.analyze_series(series("lr", lr, steps).points, "lr")
    assert len(f) == 1 and "since step 500" in f[0].claim


def test_warmup_then_cosine_restarts_are_not_anomalies():
    steps = list(range(0, 3000, 10))
    lr = [warmup_cosine([s % 1000], peak=1e-3, warm=100, total=1000)[0] for s in steps]
    assert trajectory.analyze_series(series("lr", lr, steps).points, "lr") == []


# -- stalls ------------------------------------------------------------------------------------------------

def test_step_counter_stalls_while_lines_keep_coming():
    steps = list(range(0, 400, 10)) + [400] * 30
    loss = [2.0 - i / 1000 for i in range(len(steps))]
    f = one(trajectory.detect(bundle(series("loss", loss, steps, path="train.log"))), "metric.step-stall")
    assert f.suggests == "stall" and "stays at 400" in f.claim and "last 30" in f.claim


def test_duplicated_log_lines_are_not_a_stall():
    steps = [s for s in range(0, 400, 10) for _ in range(2)]  # every line logged twice by two handlers
    loss = [2.0 - s / 1000 for s in steps]
    assert "metric.step-stall" not in ids(trajectory.detect(bundle(series("loss", loss, steps))))


def test_throughput_falls_to_zero():
    steps = list(range(0, 300, 10))
    tp = [51000.0] * 27 + [40.0, 10.0, 0.0]
    f = trajectory.analyze_series(series("throughput", tp, steps).points, "throughput")
    assert len(f) == 1 and f[0].suggests == "stall"


# -- text-only series (no steps), summary, single-metric analysis -------------------------------------------

def test_hf_dict_lines_without_steps_use_lines():
    lines = ["{'loss': %s, 'grad_norm': %s, 'learning_rate': 2e-05, 'epoch': 0.%d}" % (
        loss, g, i) for i, (loss, g) in enumerate([(1.2, 0.9), (1.1, 0.8), (1.05, 0.85), (1.0, 0.9), (0.98, "nan"),
                                             (0.0, "nan"), (0.0, "nan")])]
    b = Bundle(root="/r", target="/r")
    for n, line in enumerate(lines, 1):
        step, vals = extract(line)
        for k, v in vals.items():
            b.add_point(k, "train.log", Point(step, v, Source("train.log", n, line, step=step, metric=k, value=v)))
    f = one(trajectory.detect(b), "metric.first-nonfinite")
    assert f.evidence[0].metric == "grad_norm" and f.evidence[0].line == 5 and "line 5" in f.claim
    assert f.order == 4  # the point's index when there is no step


def test_summarize():
    b = nan_after_gradnorm_spike()
    s = trajectory.summarize(b)
    assert s["loss"]["first_nonfinite_step"] == 400 and s["loss"]["n"] == 50
    assert s["loss"]["first_step"] == 0 and s["loss"]["last_step"] == 490
    assert s["loss"]["last_finite_step"] == 390 and s["loss"]["nonfinite"] == 10
    assert s["grad_norm"]["max"] > 1e4 and s["lr"]["first_nonfinite_step"] is None
    json.dumps(s, allow_nan=False)  # JSON-clean: no NaN/inf in the summary


def test_analyze_series_single_metric():
    b = nan_after_gradnorm_spike()
    f = trajectory.analyze_series(b.best_series("grad_norm").points, "grad_norm")
    assert "metric.first-nonfinite" in ids(f) and "metric.gradnorm-spike-before-nan" in ids(f)
    assert trajectory.analyze_series([], "loss") == []


def test_every_finding_is_one_readable_line_with_sources():
    for b in (nan_after_gradnorm_spike(),):
        for f in trajectory.detect(b):
            assert "\n" not in f.claim and f.evidence and f.order is not None
            assert all(e.metric is not None or e.path == "config.yaml" for e in f.evidence)


# -- corpus logs through extract -----------------------------------------------------------------------------

def corpus_bundle(case):
    b = Bundle(root=CORPUS, target=case)
    for path in sorted(glob.glob(os.path.join(CORPUS, case, "*.log"))):
        rel = os.path.basename(path)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh.read().splitlines(), 1):
                got = extract(line)
                if got:
                    step, vals = got
                    for k, v in vals.items():
                        b.add_point(k, rel, Point(step, v, Source(rel, n, line, step=step, metric=k, value=v)))
    return b


@pytest.mark.parametrize("case,fid,check", [
    ("052-nanogpt-fp16-v100-loss-nan", "metric.first-nonfinite", lambda f: f.evidence[0].step == 3010),
    ("021-tf-object-detection-loss-explodes", "metric.divergence", lambda f: f.order == 438),
    ("026-darknet-imagenet-avg-loss-6.91", "metric.plateau-chance", lambda f: "ln(1000)" in f.claim),
    ("053-litgpt-loss-constant-10.8259", "metric.plateau-chance", lambda f: f.label == HYPOTHESIS),
    ("001-ds-loss-scale-minimum-llama", "metric.loss-scale-collapse", lambda f: f.suggests == "NaN"),
    ("019-apex-overflow-nan-inf-input-val-spike", "metric.loss-scale-collapse", lambda f: "256 → 2" in f.claim),
    ("051-hf-loss-rises-each-epoch", "metric.divergence",  # a slow rise from the minimum (line 2) to the peak
     lambda f: f.suggests == "divergence" and {(e.line, e.value) for e in f.evidence} >= {(2, 1.406), (12, 1.6139)}),
])
def test_corpus_cases(case, fid, check):
    if not os.path.isdir(os.path.join(CORPUS, case)):
        pytest.skip("corpus case not present")
    f = [x for x in trajectory.detect(corpus_bundle(case)) if x.id == fid]
    assert f and check(f[0]), [x.claim for x in f]


# -- robustness ----------------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**6, 10**6),
                    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324]))
_steps = st.one_of(st.none(), st.integers(-5, 10**7))


@given(st.dictionaries(st.sampled_from(["loss", "grad_norm", "lr", "loss_scale", "skipped_iterations",
                                        "nan_iterations", "throughput", "eval_loss", "epoch"]),
                       st.lists(st.tuples(_steps, _values), max_size=60), max_size=6),
       st.one_of(st.none(), st.sampled_from(["10", "0", "-3", "abc", "1e3", "50257"])))
@settings(max_examples=250, deadline=None)
def test_detect_never_raises_on_odd_series(data, k):
    b = bundle(config={"num_classes": k} if k is not None else None)
    for name, pts in data.items():
        s = Series(name, "m.jsonl", [Point(st_, float(v), Source("m.jsonl", i + 1, "", step=st_, metric=name,
                                                                   value=float(v)))
                                     for i, (st_, v) in enumerate(pts)], len(pts))
        b.series[name] = [s]
    for f in trajectory.detect(b):
        assert "\n" not in f.claim and f.evidence
    json.dumps(trajectory.summarize(b), allow_nan=False)
    for name, ss in b.series.items():
        trajectory.analyze_series(ss[0].points, name)


def test_large_series_is_fast_enough():
    import time
    rng = random.Random(0)
    n = 50000
    steps = list(range(n))
    loss = [2 + math.exp(-i / 5000) + rng.gauss(0, 0.05) for i in range(n)]
    b = bundle(series("loss", loss, steps), series("grad_norm", [1 + rng.gauss(0, 0.1) for _ in steps], steps),
               series("lr", warmup_cosine(steps, warm=2000), steps))
    t = time.perf_counter()
    trajectory.detect(b)
    trajectory.summarize(b)
    assert time.perf_counter() - t < 20
