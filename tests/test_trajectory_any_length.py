"""Trajectories at every length and grain (issue 9, "What to build" 3): the same shape gives the same verdict from
a 3-point excerpt to a million-step history, epoch-level summaries and loss components count, not-learning runs
are called stall in every shape and dated where they became stuck, benign shapes stay healthy, and confidence
grows with the number of points.

Metric files are written the way the libraries write them: `metrics.csv` with the csv module in the layout of
Lightning's CSVLogger (`epoch,step,<metric>` columns, one row per log call), `metrics.jsonl` with json (one HF
`log_history`-like record per line). Log lines copy real frameworks' shapes: mmdetection's `Epoch [e][i/n]\tlr: …,
loss_cls: …, loss: …, grad_norm: …` (open-mmlab/mmdetection#4440, as in tests/corpus/208), fairseq-py's
`| epoch 001  1000 / 331737 loss=9.57 (10.94), … gnorm=2.0540` (facebookresearch/fairseq#41, tests/corpus/126),
Ultralytics' console table (`Epoch GPU_mem box_loss cls_loss dfl_loss Instances Size` / `Class Images Instances
Box(P R mAP50 mAP50-95)`, Sompote/DINOV3-YOLOV12#30, tests/corpus/222), a cGAN's `[e/50] - ptime: …, loss_d: …,
loss_g: …` (znxlwm/pytorch-MNIST-CelebA-cGAN-cDCGAN#9, tests/corpus/131), and TRL's GRPOTrainer log dict (its
`_metrics` keys `reward`, `reward_std`, `frac_reward_zero_std`, `kl`, printed by Trainer.log as a Python dict).
"""
import csv
import json
import math
import random

import pytest

from trainwreck.pipeline import diagnose
from trainwreck.verbs.initloss import check


def run(d):
    r = diagnose(str(d), probe=False)
    return r, r.diagnosis.to_json()


def jsonl(d, rows, name="metrics.jsonl"):
    with open(d / name, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def big_jsonl(d, n, value, every=1):
    """A million-step history, written fast: `value(step)` gives (loss, grad_norm)."""
    with open(d / "metrics.jsonl", "w") as f:
        for i in range(0, n, every):
            lo, g = value(i)
            f.write(f'{{"step": {i}, "loss": {lo!r}, "grad_norm": {g!r}, "learning_rate": 0.0003}}\n')


def falling(n, start=3.0, end=1.5, noise=0.02, seed=1):
    rnd = random.Random(seed)
    return [start + (end - start) * i / max(1, n - 1) + rnd.gauss(0, noise) for i in range(n)]


# -- divergence ------------------------------------------------------------------------------------------------

def diverging_rows(n):
    """Loss falls for the first 60%, then more than doubles while the grad norm jumps ×100."""
    k = max(2, int(n * 0.6))
    loss = falling(k) + [1.5 * (1 + 2.0 * (i + 1) / (n - k)) for i in range(n - k)]
    grad = [0.5] * k + [50.0 + i for i in range(n - k)]
    return [{"step": 10 * i, "loss": lo, "grad_norm": g} for i, (lo, g) in enumerate(zip(loss, grad))]


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_loss_doubling_with_grad_jump_is_divergence_at_any_length(tmp_path, n):
    jsonl(tmp_path, diverging_rows(n))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence", rep["primary_cause"]
    if n < 10:
        assert f"only {n} points" in rep["primary_cause"]["summary"]  # says how little data there was


def test_confidence_grows_with_the_number_of_points(tmp_path):
    conf = {}
    for n in (3, 10, 1000):
        d = tmp_path / str(n)
        d.mkdir()
        jsonl(d, diverging_rows(n))
        conf[n] = run(d)[1]["confidence"]
    assert conf[3] < conf[10] <= conf[1000], conf


def test_divergence_in_a_million_step_history(tmp_path):
    big_jsonl(tmp_path, 1_000_000, lambda i: ((2.0 - i * 1e-6) if i < 600_000 else 1.4 + (i - 600_000) * 1e-5,
                                             0.8 if i < 600_000 else 40.0), every=1)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"


def test_finite_blowup_before_an_inf_grad_norm_is_divergence_not_nan(tmp_path):
    # fairseq-py 2017 (facebookresearch/fairseq#41): gnorm reaches inf only after the finite loss exploded
    rows = [(1000, "9.57 (10.94)", "2.0540"), (2000, "8.61 (9.91)", "1.7149"), (3000, "7.50 (9.23)", "2.7501"),
            (4000, "6.87 (8.75)", "100615.8788"), (5000, "10405.01 (136.96)", "1500459828271.3960"),
            (6000, "4773454961.36 (92926125.94)", "37459419138681.4219"),
            (7000, "7746569234820.15 (126329286789.38)", "inf")]
    (tmp_path / "train.log").write_text("".join(
        f"| epoch 001  {s} / 331737 loss={lo}, wps=18515, wpb=31259, bsz=861, lr=1.25, clip=100%, gnorm={g}\n"
        for s, lo, g in rows))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence", rep["primary_cause"]


def test_one_line_with_an_astronomical_grad_norm_is_divergence(tmp_path):
    (tmp_path / "train.log").write_text(
        "2021-01-03 10:02:15,629 - mmdet - INFO - Epoch [1][500/58633]\tlr: 1.996e-02, eta: 3 days, 18:12:13, "
        "time: 0.434, data_time: 0.005, memory: 4851, loss_rpn_cls: 2.5725, loss_rpn_bbox: 0.0047, "
        "loss_cls: 2326544033.5461, acc: 84.1525, loss_bbox: 135189261.4936, loss: 2461733416.8998, "
        "grad_norm: 1170372919273.4768\n")
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "only 1 point" in rep["primary_cause"]["summary"]


@pytest.mark.parametrize("n", [4, 10])
def test_rising_epoch_summaries_are_divergence_not_a_silent_stop(tmp_path, n):
    d = tmp_path / "lightning_logs" / "version_0"
    d.mkdir(parents=True)
    with open(d / "metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epoch", "step", "train_loss_epoch", "val_loss"])
        for e in range(n):
            lo = 0.9 if e == 0 else 0.9 * 1.35 ** e
            w.writerow([e, 99 + 100 * e, f"{lo:.4f}", f"{lo * 1.1:.4f}"])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence", rep["headline"]
    assert "stops with no error" not in rep["headline"]


def test_rising_epoch_summary_lines_without_separators_are_read(tmp_path):
    (tmp_path / "train.log").write_text("".join(
        f"Epoch {e} | train_loss {lo} | val_loss {lo + 0.1}\n" for e, lo in enumerate([0.61, 0.83, 1.22, 1.97])))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert rep["metrics_summary"]["loss"]["n"] == 4


def test_a_diverging_rank_behind_a_healthy_one_is_found(tmp_path):
    # horovod interleaves ranks as `[1,r]<stderr>:`; rank 0's cross_entropy climbs while rank 1's is fine
    lines = []
    for r1, r0 in [(3.21, 3936.8), (3.39, 8630.3), (11.08, 10853.7), (3.98, 19648.4)]:
        lines.append(f"[1,1]<stderr>:INFO:tensorflow:cross_entropy = {r1}, learning_rate = 0.0139 (7.3 sec)\n")
        lines.append(f"[1,0]<stderr>:INFO:tensorflow:cross_entropy = {r0}, learning_rate = 0.0139 (7.3 sec)\n")
    (tmp_path / "train.log").write_text("".join(lines))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "rank 0" in rep["primary_cause"]["summary"]


# -- loss components -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [5, 22, 1000])
def test_a_rising_component_without_a_total_is_divergence(tmp_path, n):
    rnd = random.Random(3)
    (tmp_path / "train.log").write_text("".join(
        f"[{e + 1}/{n}] - ptime: 29.42, loss_d: {max(0.002, 0.85 * 0.8 ** e):.3f}, "
        f"loss_g: {1.26 + 6.0 * e / (n - 1) + rnd.gauss(0, 0.05):.3f}\n" for e in range(n)))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "loss_g" in rep["primary_cause"]["summary"]


def test_a_rising_component_while_the_total_falls_is_not_the_failure(tmp_path):
    rows = []
    for i, total in enumerate(falling(60, 3.0, 1.0)):
        kl = 0.01 + 0.5 * i / 59  # a VAE's KL term grows while the total loss falls
        rows.append({"step": i * 10, "loss": total, "loss_kl": kl, "loss_rec": total - kl})
    jsonl(tmp_path, rows)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "unclear"


def test_a_constant_component_is_not_learning(tmp_path):
    (tmp_path / "train.log").write_text("".join(
        f"2021-01-03 10:0{i}:15,629 - mmdet - INFO - Epoch [1][{50 * (i + 1)}/5000]\tlr: 2.000e-02, "
        f"loss_cls: 13.8155, loss_bbox: {0.41 - 0.003 * i:.4f}\n" for i in range(6)))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "loss_cls" in rep["primary_cause"]["summary"] and "constant" in rep["primary_cause"]["summary"]


# -- not learning --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [10, 1000])
def test_loss_constant_to_every_digit_is_stall_dated_where_it_froze(tmp_path, n):
    # falls for five logged steps, then frozen at 2.7183 from step 50 on
    rows = [{"step": 10 * i, "loss": 4.0 - 0.2 * i, "learning_rate": 1e-4} for i in range(5)]
    rows += [{"step": 10 * i, "loss": 2.7183, "learning_rate": 1e-4} for i in range(5, 5 + n)]
    jsonl(tmp_path, rows)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert rep["headline"].startswith("Not learning")
    assert rep["primary_cause"]["evidence"][0]["step"] == 50


def test_not_learning_in_a_million_step_history_is_dated_at_its_start(tmp_path):
    rnd = random.Random(5)
    noise = [rnd.gauss(0, 0.01) for _ in range(1000)]
    big_jsonl(tmp_path, 1_000_000, lambda i: (round((4.0 - i * 0.03 if i < 50 else math.log(10))
                                                    + noise[i % 1000], 5), 1.0))
    r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "ln(10)" in rep["primary_cause"]["summary"]
    assert rep["primary_cause"]["evidence"][0]["step"] <= 60  # flat from step 50, not from mid-run


@pytest.mark.parametrize("n", [1000, 5000])
def test_chance_plateau_is_dated_where_the_loss_became_flat(tmp_path, n):
    rnd = random.Random(2)
    rows = [{"step": i, "loss": (4.0 - i * 0.03 if i < 50 else math.log(10)) + rnd.gauss(0, 0.01)}
            for i in range(n)]
    jsonl(tmp_path, rows)
    (tmp_path / "config.yaml").write_text("model:\n  num_classes: 10\n")
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert rep["primary_cause"]["evidence"][0]["step"] <= 60


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_loss_at_ln_k_with_accuracy_at_1_over_k_infers_k_from_the_data(tmp_path, n):
    rnd = random.Random(4)
    k = 7  # not a common class count: K comes from the accuracy 1/K, the loss confirms ln K
    rows = [{"epoch": e, "loss": round(math.log(k) + rnd.gauss(0, 0.003), 4),
             "accuracy": round(1 / k + rnd.gauss(0, 0.004), 4)} for e in range(n)]
    jsonl(tmp_path, rows)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert f"ln({k})" in rep["primary_cause"]["summary"]


@pytest.mark.parametrize("n", [30, 1000])
def test_a_loss_flat_from_the_start_at_ln_k_of_a_small_k_infers_k(tmp_path, n):
    rnd = random.Random(12)
    jsonl(tmp_path, [{"step": 10 * i, "loss": round(math.log(3) + rnd.gauss(0, 0.002), 4)} for i in range(n)])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "ln(3)" in rep["primary_cause"]["summary"]


def test_a_loss_flat_from_the_start_off_any_ln_k_is_not_called_chance(tmp_path):
    rnd = random.Random(13)
    jsonl(tmp_path, [{"step": 10 * i, "loss": round(1.36 + rnd.gauss(0, 0.002), 4)} for i in range(300)])
    r, _rep = run(tmp_path)
    assert not [f for f in r.findings if f.kind == "chance"]


@pytest.mark.parametrize("n", [3, 10])
def test_loss_exactly_zero_with_the_metric_at_its_floor_is_stall(tmp_path, n):
    jsonl(tmp_path, [{"step": 50 * (i + 1), "loss": 0.0, "accuracy": 0.0} for i in range(n)])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "loss is exactly 0" in rep["primary_cause"]["summary"]
    assert "accuracy" in rep["primary_cause"]["summary"]  # the metric at its floor is named with it


def test_loss_exactly_zero_from_the_first_steps_is_stall(tmp_path):
    (tmp_path / "train.log").write_text("".join(f"step {s} loss=0.0000 lr=1.0e-04\n" for s in range(10, 60, 10)))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "loss is exactly 0" in rep["primary_cause"]["summary"]


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_grad_norm_exactly_zero_is_stall(tmp_path, n):
    jsonl(tmp_path, [{"loss": 2.3026 + 0.0001 * (i % 3), "grad_norm": 0.0, "learning_rate": 5e-5,
                      "epoch": round(i / 100, 2), "step": 10 * (i + 1)} for i in range(n)])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert any("grad_norm is exactly 0" in c["summary"] for c in [rep["primary_cause"]] + rep["causes"])


def test_a_zero_grad_norm_while_the_loss_falls_is_a_logging_artefact(tmp_path):
    jsonl(tmp_path, [{"loss": lo, "grad_norm": 0.0, "step": 10 * (i + 1)} for i, lo in enumerate(falling(50))])
    assert run(tmp_path)[1]["classification"] == "unclear"


@pytest.mark.parametrize("n", [3, 10])
def test_zero_reward_spread_is_stall(tmp_path, n):
    # key names as GRPO trainers log them (TRL's GRPOTrainer metrics; ms-swift's logging.jsonl in
    # modelscope/ms-swift#5890: "reward", "reward_std", "frac_reward_zero_std", "kl")
    (tmp_path / "train.log").write_text("".join(
        f"{{'loss': 0.0, 'grad_norm': 0.0{i}, 'learning_rate': 1e-06, 'reward': 0.0, 'reward_std': 0.0, "
        f"'frac_reward_zero_std': 1.0, 'kl': 0.0{i}, 'epoch': 0.0{i + 1}}}\n" for i in range(1, n + 1)))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "reward" in rep["primary_cause"]["summary"]


def test_task_metric_pinned_at_floor_while_the_loss_creeps_is_stall(tmp_path):
    blocks = []
    for e, (box, cls, dfl) in enumerate([(3.074, 17.88, 2.114), (2.411, 17.94, 1.653), (3.018, 17.77, 2.087)], 1):
        blocks.append("      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n"
                      f"       {e}/50      3.59G      {box}      {cls}      {dfl}         18        640: 100%|"
                      "██████████| 69/69 [00:19<00:00,  3.47it/s]\n"
                      "                 Class     Images  Instances      Box(P          R      mAP50  mAP50-95): "
                      "100%|██████████| 15/15 [00:02<00:00,  6.00it/s]\n"
                      "                   all         58        136          0          0          0          0\n\n")
    (tmp_path / "train.log").write_text("".join(blocks))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "map50" in rep["primary_cause"]["summary"]


def test_init_loss_is_not_ok_when_the_loss_is_still_at_chance_at_its_last_step(tmp_path):
    rnd = random.Random(6)
    jsonl(tmp_path, [{"step": 10 * i, "loss": math.log(10) + rnd.gauss(0, 0.005)} for i in range(300)])
    (tmp_path / "config.yaml").write_text("num_classes: 10\n")
    r = check(diagnose(str(tmp_path), probe=False))
    assert r["ok"] is False
    assert "look right" not in r["verdict"] and "not learning" in r["verdict"]


def test_init_loss_is_ok_when_the_loss_starts_at_chance_and_falls(tmp_path):
    jsonl(tmp_path, [{"step": 10 * i, "loss": math.log(10) * (1 - 0.8 * i / 299)} for i in range(300)])
    (tmp_path / "config.yaml").write_text("num_classes: 10\n")
    assert check(diagnose(str(tmp_path), probe=False))["ok"] is True


# -- controls: benign shapes stay healthy ----------------------------------------------------------------------

@pytest.mark.parametrize("n", [10, 1000])
def test_single_batch_spikes_that_recover_are_healthy(tmp_path, n):
    loss = falling(n, 2.5, 0.8, noise=0.01)
    for i in range(n // 4, n, max(3, n // 4)):
        loss[i] *= 3.0  # one bad batch in the epoch average, gone at the next point
    jsonl(tmp_path, [{"epoch": i, "loss": lo} for i, lo in enumerate(loss)])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "unclear", rep["primary_cause"]


@pytest.mark.parametrize("n", [10, 1000])
def test_large_but_stable_grad_norms_while_the_loss_converges_are_healthy(tmp_path, n):
    rnd = random.Random(8)
    jsonl(tmp_path, [{"step": 10 * i, "loss": lo, "grad_norm": 3.0e4 * (1 + rnd.gauss(0, 0.1))}
                     for i, lo in enumerate(falling(n, 6.0, 2.0))])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "unclear", rep["primary_cause"]


def test_one_grad_norm_nan_skipped_by_the_fp16_scaler_is_healthy(tmp_path):
    rows = [{"step": 10 * i, "loss": lo, "grad_norm": 1.2 + 0.01 * (i % 5)} for i, lo in enumerate(falling(200))]
    rows[120]["grad_norm"] = float("nan")  # json writes NaN, as Python's json and HF's log_history do
    jsonl(tmp_path, rows)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "unclear", rep["primary_cause"]


@pytest.mark.parametrize("n", [3, 10, 1000])
def test_a_healthy_falling_loss_is_no_anomaly_at_any_length(tmp_path, n):
    jsonl(tmp_path, [{"step": 10 * i, "loss": lo, "grad_norm": 1.0} for i, lo in enumerate(falling(n))])
    r, rep = run(tmp_path)
    assert rep["classification"] == "unclear"
    assert not [f for f in r.findings if f.suggests in ("divergence", "stall")]


def test_an_epoch_jump_that_never_comes_back_is_divergence(tmp_path):
    # Keras' epoch lines (`<n>/<n> [====] - 6702s - loss: … - acc: …`): the loss more than doubles at one epoch and
    # is still far above its best many epochs later
    (tmp_path / "train.log").write_text("".join(
        f"1563/1563 [==============================] - 61s 39ms/step - loss: {lo} - acc: {a}\n"
        for lo, a in [(0.4412, 0.85), (0.9630, 0.71), (0.8101, 0.74), (0.6634, 0.79)]))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "never came back" in rep["primary_cause"]["summary"]


def test_a_jump_that_comes_back_to_its_best_is_not_divergence(tmp_path):
    (tmp_path / "train.log").write_text("".join(
        f"1563/1563 [==============================] - 61s 39ms/step - loss: {lo} - acc: {a}\n"
        for lo, a in [(0.4412, 0.85), (0.9630, 0.71), (0.5101, 0.83), (0.4301, 0.86)]))
    assert run(tmp_path)[1]["classification"] == "unclear"


def test_a_loss_repeating_only_by_rounding_is_not_constant(tmp_path):
    # printed with two decimals, a slowly converging loss repeats its last digits: not a frozen model
    (tmp_path / "train.log").write_text("".join(
        f"step {s} loss={lo}\n" for s, lo in [(100, "0.61"), (200, "0.55"), (300, "0.52"), (400, "0.52"),
                                             (500, "0.52"), (600, "0.52")]))
    assert run(tmp_path)[1]["classification"] == "unclear"


def test_loss_exactly_zero_late_in_a_long_run_without_a_stuck_metric_is_not_stall(tmp_path):
    # a memorised training set ends at a loss of 0.0000: nothing says the model did not learn
    rows = [{"step": s, "loss": round(max(0.0, 1.2 - s / 4000), 4)} for s in range(0, 9000, 500)]
    jsonl(tmp_path, rows)
    rep = run(tmp_path)[1]
    assert rep["classification"] == "unclear", rep["primary_cause"]


def test_a_metric_at_its_floor_while_the_loss_falls_fast_is_not_pinned(tmp_path):
    jsonl(tmp_path, [{"epoch": e, "loss": 3.0 * 0.6 ** e, "map50": 0.0} for e in range(4)])
    r, _rep = run(tmp_path)
    assert not [f for f in r.findings if f.id == "metric.task-metric-pinned"]


def test_loss_and_accuracy_at_chance_are_dated_where_the_loss_reached_chance(tmp_path):
    rnd = random.Random(9)
    k = 7
    rows = [{"step": s, "loss": round(3.5 - s * 0.08 if s < 20 else math.log(k) + rnd.gauss(0, 0.004), 4),
             "accuracy": round(1 / k + rnd.gauss(0, 0.004), 4)} for s in range(200)]
    jsonl(tmp_path, rows)
    r, rep = run(tmp_path)
    f = next(f for f in r.findings if f.id == "metric.chance-level")
    assert f.evidence[0].step <= 25, f.claim


def test_components_in_a_lightning_csv_are_read(tmp_path):
    # Lightning's GAN example logs `g_loss` and `d_loss`; CSVLogger writes them as columns
    d = tmp_path / "lightning_logs" / "version_0"
    d.mkdir(parents=True)
    rnd = random.Random(11)
    with open(d / "metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["d_loss", "epoch", "g_loss", "step"])
        for i in range(60):
            w.writerow([f"{max(0.01, 0.7 - 0.02 * i):.4f}", i // 10, f"{0.7 + 0.1 * i + rnd.gauss(0, 0.02):.4f}",
                        49 + 50 * i])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "g_loss" in rep["primary_cause"]["summary"]


def test_a_loss_creeping_up_to_ln_k_over_epochs_is_not_learning(tmp_path):
    # epoch-level records (`{"train_loss": …, "epoch": e}`, no step): after two epochs, a loss that does not fall
    # and sits at ln(1000) is a model that predicts uniformly
    jsonl(tmp_path, [{"train_loss": 6.2 + 0.7 * (1 - 0.75 ** e), "epoch": e} for e in range(12)], name="log.jsonl")
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "ln(1000)" in rep["primary_cause"]["summary"]


def test_an_excerpt_ending_at_an_astronomical_loss_is_divergence(tmp_path):
    rows = [{"step": 100 * (i + 1), "loss": 2.0 - 0.01 * i} for i in range(9)] + [{"step": 1000, "loss": 3.1e6}]
    jsonl(tmp_path, rows)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "orders of magnitude" in rep["primary_cause"]["summary"]


def test_step_less_evidence_is_not_shown_at_step_none(tmp_path, cli):
    # epoch-level rows carry no step: the terminal view must not print "at step None" for them
    jsonl(tmp_path, [{"epoch": e, "loss": round(math.log(7) + 0.001 * (e % 2), 4), "accuracy": 0.1429}
                     for e in range(6)])
    p = cli("diagnose", str(tmp_path), "--no-probe")
    assert "Not learning" in p.stdout
    assert "step None" not in p.stdout


def test_a_model_card_training_results_table_is_read():
    # transformers' modelcard.make_markdown_table: `| name | … |`, a `|:---:|` rule, "No log" before the first log
    from trainwreck.collect.texttables import rows
    from trainwreck.model import Line
    text = ("### Training results\n\n"
            "| Training Loss | Epoch | Step | Validation Loss | Accuracy |\n"
            "|:-------------:|:-----:|:----:|:---------------:|:--------:|\n"
            "| No log        | 1.0   | 50   | 2.2981          | 0.1012   |\n"
            "| 2.3051        | 2.0   | 100  | 2.3012          | 0.0998   |\n")
    got = [(step, values) for _ln, step, values in rows([Line("README.md", i + 1, t)
                                                          for i, t in enumerate(text.splitlines())])]
    assert got == [(50, {"epoch": 1.0, "eval_loss": 2.2981, "accuracy": 0.1012}),
                   (100, {"loss": 2.3051, "epoch": 2.0, "eval_loss": 2.3012, "accuracy": 0.0998})]


def test_accuracy_at_its_ceiling_late_in_a_converged_run_is_not_pinned(tmp_path):
    # the end of a run that fit its training set: 100 % accuracy, a tiny loss that barely moves
    jsonl(tmp_path, [{"step": s, "loss": 0.0012 - s * 1e-9, "accuracy": 1.0} for s in range(20000, 20300, 100)])
    assert run(tmp_path)[1]["classification"] == "unclear"


def test_accuracy_at_its_ceiling_with_a_zero_loss_from_the_start_is_stall(tmp_path):
    # mmcv's TextLoggerHook line shape as mmsegmentation prints it (`Iter [i/n]\tlr: …, decode.loss_ce: …,
    # decode.acc_seg: …, loss: …`); the numbers are this test's own
    (tmp_path / "train.log").write_text("".join(
        f"2024-02-11 08:1{i}:02,114 - mmseg - INFO - Iter [{20 * (i + 1)}/40000]\tlr: 1.000e-02, eta: 6:02:11, "
        f"time: 0.402, data_time: 0.011, memory: 7311, decode.loss_ce: 0.0000, decode.acc_seg: 100.0000, "
        f"loss: 0.0000\n" for i in range(5)))
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"


def test_a_small_loss_term_growing_a_thousandfold_is_not_implausible(tmp_path):
    # a value loss that starts near 0 and grows with the returns: large ratio, ordinary magnitude
    jsonl(tmp_path, [{"step": 100 * i, "vf_loss": v} for i, v in enumerate([0.002, 0.3, 1.1, 2.4, 3.0, 2.9, 3.2, 3.1,
                                                                            2.8, 3.0, 3.3])])
    r, _rep = run(tmp_path)
    assert not [f for f in r.findings if f.id == "metric.loss-implausible"]
