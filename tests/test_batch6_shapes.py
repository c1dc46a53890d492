"""Shapes and formats that corpus batch 6 (500–551) showed the engine did not read or did not recognise, as general
capabilities, each on a fixture written here in the layout its writer uses:

- Keras histories: `json.dump(model.fit(...).history, f)` (a dict of per-epoch lists; Python's json writes NaN bare),
  the same dict nested under another key and file name, and `tf.keras.callbacks.CSVLogger`'s `epoch,<metric>…` CSV.
- An HF `trainer_state.json` (`json.dumps(dataclasses.asdict(state), indent=2, sort_keys=True)`, as
  `TrainerState.save_to_json` writes it) saved under a name that does not say so.
- YOLOv5/v7's console table: `('%10s' * 8) % ('Epoch', 'gpu_mem', 'box', 'obj', 'cls', 'total', 'labels',
  'img_size')` and the validation header `('%20s' + '%12s' * 6) % ('Class', 'Images', 'Labels', 'P', 'R',
  'mAP@.5', 'mAP@.5:.95')` (WongKinYiu/yolov7 train.py / test.py; tests/corpus/532, 547).
- XLM's `logger.info("%s -> %.6f" % (k, v))` score lines (facebookresearch/XLM train.py; tests/corpus/533).
- PyTorch's DCGAN example progress line `[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f`
  (pytorch/examples dcgan/main.py; tests/corpus/548).
- TF-Slim's `global step %d: loss = %.4f (%.3f sec/step)` (tensorflow/models object_detection; tests/corpus/506).
- dlib's `Error while calling cudaMalloc(...) in file ...:190. code: 2, reason: out of memory` (davisking/dlib#370).
"""
import csv
import json

from trainwreck.collect.textmetrics import extract
from trainwreck.pipeline import diagnose


def run(d):
    r = diagnose(str(d), probe=False)
    return r, r.diagnosis.to_json()


def ids(r):
    return {f.id for f in r.findings}


# -- Keras / TF histories --------------------------------------------------------------------------------------

def keras_history(nan_from=3, epochs=6):
    loss = [0.9 - 0.1 * e if e < nan_from else float("nan") for e in range(epochs)]
    return {"loss": loss, "accuracy": [0.5 + 0.05 * e for e in range(epochs)],
            "val_loss": [x + 0.05 for x in loss], "val_accuracy": [0.48 + 0.05 * e for e in range(epochs)]}


def test_a_keras_history_json_with_nan_is_a_nan_run_cited_at_its_line(tmp_path):
    (tmp_path / "history.json").write_text(json.dumps(keras_history(), indent=2))
    r, rep = run(tmp_path)
    assert rep["classification"] == "NaN"
    cited = rep["primary_cause"]["evidence"][0]
    assert cited["path"] == "history.json" and cited["step"] == 3
    line = (tmp_path / "history.json").read_text().splitlines()[cited["line"] - 1]
    assert line.strip().rstrip(",") == "NaN"  # the line of the value itself
    assert "step 3" in rep["headline"]  # the epoch index, not a line number


def test_a_healthy_keras_history_is_no_failure(tmp_path):
    h = keras_history(nan_from=99, epochs=8)
    (tmp_path / "history.json").write_text(json.dumps(h))  # compact: every value on one line
    r, rep = run(tmp_path)
    assert rep["classification"] == "unclear"
    assert any(s.path == "history.json" and len(s.points) == 8 for s in r.bundle.series.get("loss", []))


def test_a_history_dict_under_another_name_and_key_is_read_by_its_content(tmp_path):
    (tmp_path / "out").mkdir()
    doc = {"epochs": [0.0, 1.0, 2.0, 3.0, 4.0], "metrics": keras_history(epochs=5)}
    (tmp_path / "out" / "run_summary.json").write_text(json.dumps(doc, indent=2))
    r, rep = run(tmp_path)
    assert rep["classification"] == "NaN"
    assert rep["primary_cause"]["evidence"][0]["path"] == "out/run_summary.json"


def test_a_keras_csvlogger_history_csv_is_read(tmp_path):
    with open(tmp_path / "history.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["epoch", "accuracy", "loss", "val_accuracy", "val_loss"])
        for e in range(6):
            w.writerow([e, 0.5 + 0.05 * e, 0.9 - 0.1 * e if e < 4 else "nan", 0.5, 0.8])
    _r, rep = run(tmp_path)
    assert rep["classification"] == "NaN"


def trainer_state(loss, eval_loss):
    hist = []
    for i, (lo, ev) in enumerate(zip(loss, eval_loss)):
        step = 50 * (i + 1)
        hist.append({"epoch": round(step / 157, 2), "learning_rate": 2e-5, "loss": lo, "step": step})
        hist.append({"epoch": round(step / 157, 2), "eval_accuracy": 0.25, "eval_loss": ev, "step": step})
    return {"best_metric": None, "epoch": 20.0, "global_step": 50 * len(loss), "log_history": hist,
            "max_steps": 50 * len(loss), "num_train_epochs": 20, "total_flos": 5.3e16}


def test_a_trainer_state_saved_under_a_source_name_is_read(tmp_path):
    st = trainer_state([1.3863 + 0.002 * ((-1) ** i) for i in range(40)], [1.38629] * 40)
    (tmp_path / "__init__.py").write_text(json.dumps(st, indent=2, sort_keys=True))
    (tmp_path / "train.py").write_text("import torch\nprint('loss', 1)\n")  # real source stays source
    r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert any(s.path == "__init__.py" for s in r.bundle.series.get("loss", []))
    assert not any(s.path == "train.py" for ss in r.bundle.series.values() for s in ss)


# -- YOLOv5/v7 tables ------------------------------------------------------------------------------------------

def yolo_log(rows, vals):
    out = []
    for (e, box, obj, cls, total), (p, rr, m50, m95) in zip(rows, vals):
        out.append(("%10s" * 8) % ("Epoch", "gpu_mem", "box", "obj", "cls", "total", "labels", "img_size"))
        out.append(("%10s" * 2 + "%10.4g" * 6) % (f"{e}/299", "2.6G", box, obj, cls, total, 58, 640)
                   + ": 100%|██████████| 26/26 [00:32<00:00,  1.23s/it]")
        out.append(("%20s" + "%12s" * 6) % ("Class", "Images", "Labels", "P", "R", "mAP@.5", "mAP@.5:.95")
                   + ": 100%|██████████| 4/4 [00:07<00:00,  1.76s/it]")
        out.append(("%20s" + "%12.3g" * 6) % ("all", 25, 40, p, rr, m50, m95))
        out.append("")
    return "\n".join(out) + "\n"


def test_yolov7_nan_box_and_total_loss_columns_are_a_nan_run(tmp_path):
    rows = [(40, 0.05, 0.015, 0.0, 0.065), (41, float("nan"), 0.0152, 0.0, float("nan")),
            (42, float("nan"), 0.0151, 0.0, float("nan"))]
    (tmp_path / "train.log").write_text(yolo_log(rows, [(0.85, 0.54, 0.61, 0.33)] * 3))
    r, rep = run(tmp_path)
    assert rep["classification"] == "NaN"
    assert {"box_loss", "obj_loss", "loss", "map50", "map50-95"} <= set(r.bundle.series)


def test_every_yolo_validation_metric_at_zero_while_the_loss_falls_is_not_learning(tmp_path):
    rows = [(0, 0.084, 2.13, 0.62, 2.84), (1, 0.088, 0.93, 0.61, 1.63), (2, 0.086, 0.47, 0.59, 1.14)]
    (tmp_path / "train.log").write_text(yolo_log(rows, [(0, 0, 0, 0)] * 3))
    r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "metric.task-metric-pinned" in ids(r)


def test_yolo_validation_metrics_that_rise_are_healthy(tmp_path):
    rows = [(0, 0.084, 2.13, 0.62, 2.84), (1, 0.088, 0.93, 0.61, 1.63), (2, 0.086, 0.47, 0.59, 1.14)]
    (tmp_path / "train.log").write_text(yolo_log(rows, [(0, 0, 0, 0), (0.2, 0.1, 0.05, 0.02), (0.4, 0.3, 0.2, 0.1)]))
    r, rep = run(tmp_path)
    assert rep["classification"] == "unclear"
    assert "metric.task-metric-pinned" not in ids(r)


# -- task metrics at their floor, other formats --------------------------------------------------------------

def test_xlm_bleu_lines_pinned_at_zero_are_not_learning(tmp_path):
    lines = []
    for e in range(3):
        ts = f"INFO - 07/14/19 1{e}:30:33 - {e + 4}:12:56 - "
        lines += [ts + f"============ End of epoch {e} ============", ts + f"epoch -> {e:.6f}",
                  ts + f"valid_en-fr_mt_ppl -> {51439.35 - 1000 * e:.6f}", ts + "valid_en-fr_mt_bleu -> 0.000000",
                  ts + "valid_fr-en_mt_bleu -> 0.000000"]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n")
    r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "valid_en-fr_mt_bleu" in r.bundle.series


def test_an_accuracy_of_exactly_zero_is_not_learning_even_without_a_trend(tmp_path):
    (tmp_path / "train.log").write_text("Epoch 71/99\n----------\nTraining Loss: 1046.7444 Acc: 0.0000\n\n"
                                        "Validation Loss: 693.5661 Acc: 0.0000\n")
    _r, rep = run(tmp_path)
    assert rep["classification"] == "stall"


def test_loss_and_grad_norm_both_exactly_zero_in_one_hf_line_is_not_learning(tmp_path):
    (tmp_path / "train.log").write_text("{'loss': 0.0, 'grad_norm': 0.0, 'learning_rate': 9.7e-06, 'epoch': 0.4}\n")
    r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "metric.loss-and-gradnorm-zero" in ids(r)
    assert rep["outcome"]["outcome"] == "unknown"  # the metrics show it going wrong, not how the run ended


def test_a_zero_loss_with_a_live_gradient_is_not_this_rule(tmp_path):
    (tmp_path / "train.log").write_text("{'loss': 0.0, 'grad_norm': 1.7, 'learning_rate': 9.7e-06, 'epoch': 0.4}\n")
    r, _rep = run(tmp_path)
    assert "metric.loss-and-gradnorm-zero" not in ids(r)


# -- GAN discriminator --------------------------------------------------------------------------------------------

def dcgan(d_x, d_gz, n=5):
    return "".join("[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f\n"
                   % (6, 25, i * 50, 1583, 1.0, 0.0071 + i * 1e-4, d_x, d_gz, d_gz) for i in range(n))


def test_a_discriminator_saturated_alike_on_real_and_fake_is_not_learning(tmp_path):
    (tmp_path / "train.log").write_text(dcgan(1.0, 1.0))
    r, rep = run(tmp_path)
    assert rep["classification"] == "stall"
    assert "metric.gan-discriminator-saturated" in ids(r)


def test_a_discriminator_that_tells_real_from_fake_is_not_flagged(tmp_path):
    (tmp_path / "train.log").write_text(dcgan(0.9999, 0.0001))
    r, _rep = run(tmp_path)
    assert "metric.gan-discriminator-saturated" not in ids(r)


# -- divergence at any magnitude ---------------------------------------------------------------------------------

def tf_slim(values, start=1300):
    return "".join(f"INFO:tensorflow:global step {start + i}: loss = {v:.4f} (6.596 sec/step)\n"
                   for i, v in enumerate(values))


def test_astronomical_finite_loss_spikes_are_a_divergence(tmp_path):
    (tmp_path / "train.log").write_text(tf_slim([6936561161601024.0, 0.0784, 0.0913, 3369519150006272.0, 0.0614,
                                                 0.0839, 0.0503]))
    r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "metric.loss-astronomical" in ids(r)


def test_one_large_but_plausible_loss_is_not_astronomical(tmp_path):
    (tmp_path / "train.log").write_text(tf_slim([5.2e6, 4.9e6, 4.1e6, 3.8e6, 3.1e6, 2.9e6, 2.2e6]))
    r, _rep = run(tmp_path)
    assert "metric.loss-astronomical" not in ids(r)


def test_loss_is_and_loss_for_x_is_lines_are_read():
    assert extract("Loss is: 0.176090 done")[1] == {"loss": 0.17609}
    assert extract("loss for discriminator is 1381222842368.000000  D cost is -624456368128.0")[1] == {
        "discriminator_loss": 1381222842368.0}
    assert extract("Size of doc_token dict is 0") is None
    got = extract("INFO - 07/14/19 15:30:33 - 4:12:56 - valid_fr-en_mt_bleu -> 0.000000")
    assert got is not None and got[1] == {"valid_fr-en_mt_bleu": 0.0}


# -- GPU memory from native code ---------------------------------------------------------------------------------

def test_a_raw_cudamalloc_out_of_memory_is_an_oom_not_a_crash(tmp_path):
    (tmp_path / "train.log").write_text(
        "avg_loss: 0.013177 [++++++++++++++++++++, 1464 / 1464, 100%]\n"
        "terminate called after throwing an instance of 'dlib::cuda_error'\n"
        "  what():  Error while calling cudaMalloc(&data, new_size*sizeof(float)) in file "
        "/home/user/dlib/dlib/cuda/gpu_data.cpp:190. code: 2, reason: out of memory\n")
    _r, rep = run(tmp_path)
    assert rep["classification"] == "OOM"
    assert rep["outcome"]["outcome"] == "failed"


# -- policy KL ----------------------------------------------------------------------------------------------------
# baselines' pposgd_simple prints `fmt_row(13, loss_names)` then one row per optimisation epoch (tests/corpus/054)

def ppo1_table(kls):
    head = " | ".join("%13s" % n for n in ("pol_surr", "pol_entpen", "vf_loss", "kl", "ent"))
    rows = [" | ".join("%13s" % v for v in (f"{0.9 - 0.1 * i:.5f}", "0.00000", "1.73e+05", f"{k:.5f}", "-0.34684"))
            for i, k in enumerate(kls)]
    return "********* Iteration 10 ************\nOptimizing...\n" + "\n".join([head] + rows) + "\n"


def test_a_policy_kl_that_jumps_a_hundredfold_within_one_update_is_a_divergence(tmp_path):
    (tmp_path / "train.log").write_text(ppo1_table([0.01685, 1.75743, 3.79148, 4.34279]))
    r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert "metric.kl-blowup" in ids(r)


def test_a_policy_kl_that_grows_slowly_is_not_a_blowup(tmp_path):
    (tmp_path / "train.log").write_text(ppo1_table([0.01, 0.012, 0.015, 0.02, 0.024, 0.03]))
    r, _rep = run(tmp_path)
    assert "metric.kl-blowup" not in ids(r)


# -- unnamed per-iteration values --------------------------------------------------------------------------------
# `print(f"Iter {i}: {loss:.6f}")`, quoted in a run report's code block (tests/corpus/514)

def counter_report(values, word="loss"):
    body = "\n".join(f"Iter {it:4d}: {v:.6f}" for it, v in values)
    return f"# Baseline run\n\nThe {word} over training:\n\n```\n{body}\n```\n\nTraceback-free run, lr 0.001.\n"


RISE = [(1, 0.245), (500, 0.089), (1000, 0.075), (1500, 0.0712), (1600, 0.0754), (2000, 0.0989), (3000, 0.157),
        (5000, 0.255), (8000, 0.3146), (10000, 0.29997)]


def test_unnamed_iteration_values_in_a_report_that_names_the_loss_are_its_loss(tmp_path):
    (tmp_path / "run_report.md").write_text(counter_report(RISE))
    r, rep = run(tmp_path)
    assert rep["classification"] == "divergence"
    assert len(r.bundle.series["loss"][0].points) == len(RISE)


def test_unnamed_iteration_values_are_not_guessed_when_no_loss_is_named(tmp_path):
    (tmp_path / "run_report.md").write_text(counter_report(RISE, word="PSNR"))
    r, _rep = run(tmp_path)
    assert "loss" not in r.bundle.series


def test_a_yolo_excerpt_that_starts_inside_the_table_reads_its_first_row(tmp_path):
    rows = [(41, float("nan"), 0.0152, 0.0, float("nan")), (42, float("nan"), 0.0151, 0.0, float("nan"))]
    text = yolo_log(rows, [(0.85, 0.54, 0.61, 0.33)] * 2)
    cut = text.split("\n", 1)[1]  # the excerpt begins with epoch 41's row, its header cut off
    (tmp_path / "train.log").write_text(cut)
    _r, rep = run(tmp_path)
    assert rep["classification"] == "NaN"
    assert rep["primary_cause"]["evidence"][0]["line"] == 1


def test_a_config_with_a_list_of_learning_rates_is_not_a_history(tmp_path):
    (tmp_path / "train.log").write_text("epoch 1 loss: 0.9\nepoch 2 loss: 0.7\nepoch 3 loss: 0.5\n")
    (tmp_path / "schedule.json").write_text(json.dumps({"lr": [0.1, 0.01, 0.001], "milestones": [30, 60]}, indent=2))
    r, _rep = run(tmp_path)
    assert not any(s.path == "schedule.json" for ss in r.bundle.series.values() for s in ss)
