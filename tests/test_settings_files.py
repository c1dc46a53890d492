"""A run's settings and its end, from files whose names say nothing: a JSON or YAML document of training settings is
the run's config whatever it is called (config.json of a sweep, d3rlpy's params.json, a DeepSpeed config), and
HF's train_results.json / all_results.json say that Trainer.train returned.

Each test writes a small run, diagnoses it, and checks what a user reads: the outcome and the config keys the
engine found."""
import json

from trainwreck.collect import collect
from trainwreck.locate import locate
from trainwreck.pipeline import diagnose


def _metrics(tmp_path, last, every=50, name="metrics.jsonl"):
    steps = list(range(0, last, every)) + [last]
    rows = [{"step": s, "train_loss": round(9.0 - 7.0 * s / last, 4)} for s in steps]
    (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _outcome(tmp_path):
    return diagnose(str(tmp_path), probe=False).diagnosis.to_json()["outcome"]


def _settings(**kw):
    return json.dumps(dict({"lr": 0.003, "batch_size": 32, "warmup_iters": 250}, **kw), indent=2) + "\n"


def test_a_sweep_config_json_with_the_run_length_makes_the_run_completed(tmp_path):
    _metrics(tmp_path, 5000)
    assert _outcome(tmp_path)["outcome"] == "unknown"  # the metrics alone cannot say the run ended
    (tmp_path / "config.json").write_text(_settings(max_iters=5000))
    out = _outcome(tmp_path)
    assert out["outcome"] == "completed"
    assert "max_iters: 5000" in out["why"]
    assert any(e["path"] == "config.json" for e in out["evidence"])


def test_a_settings_file_of_any_name_is_the_runs_config(tmp_path):
    _metrics(tmp_path, 300, every=10)
    (tmp_path / "hyper-parameters.json").write_text(_settings(max_iters=300, optimizer="SGD"))
    (tmp_path / "experiment.yaml").write_text("trainer:\n  max_epochs: 3\n  gradient_clip_val: 1.0\n")
    bundle = collect(locate(str(tmp_path)))
    assert {"hyper-parameters.json", "experiment.yaml"} <= set(bundle.configs)
    assert bundle.config("optimizer").value == "SGD"
    assert bundle.config("gradient_clip_val").value == "1.0"


def test_a_model_architecture_config_is_not_taken_for_the_runs_settings(tmp_path):
    _metrics(tmp_path, 300, every=10)
    (tmp_path / "config.json").write_text(json.dumps({"vocab_size": 32000, "hidden_size": 4096,
                                                      "num_hidden_layers": 32, "max_steps_note": "x"}))
    (tmp_path / "eval_request.json").write_text(json.dumps({"batch_size": 8, "dataset": "wmt14", "split": "test"}))
    bundle = collect(locate(str(tmp_path)))
    assert "config.json" not in bundle.configs
    assert "eval_request.json" not in bundle.configs  # one setting does not make a document the run's settings
    assert _outcome(tmp_path)["outcome"] == "unknown"


def test_a_loop_counted_from_zero_ends_one_short_of_its_length(tmp_path):
    # `for step in range(max_iters)` logs step max_iters - 1 last; the evaluation there is the furthest record
    rows = [{"step": s, "train_loss": 3.0 - s / 5000} for s in range(0, 10000, 50)]
    rows.append({"step": 9999, "val_loss": 1.40})
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "config.json").write_text(_settings(max_iterations=10000))
    out = _outcome(tmp_path)
    assert out["outcome"] == "completed"
    assert "9999" in out["why"]


def test_a_run_that_stops_well_short_of_its_configured_length_is_not_completed(tmp_path):
    _metrics(tmp_path, 4000)
    (tmp_path / "config.json").write_text(_settings(max_iters=5000))
    assert _outcome(tmp_path)["outcome"] != "completed"


def test_n_steps_is_no_run_length(tmp_path):
    # Stable-Baselines3's n_steps is the rollout per update and d3rlpy's the N of an N-step return
    _metrics(tmp_path, 5000)
    (tmp_path / "params.json").write_text(_settings(n_steps=1))
    assert _outcome(tmp_path)["outcome"] == "unknown"


def test_hf_results_file_says_the_trainer_returned(tmp_path):
    (tmp_path / "train.log").write_text("step 10 loss 2.3\nstep 20 loss 2.1\nstep 30 loss 1.9\n")
    assert _outcome(tmp_path)["outcome"] == "unknown"
    (tmp_path / "all_results.json").write_text(json.dumps(
        {"epoch": 3.0, "train_loss": 1.95, "train_runtime": 228.1, "train_samples_per_second": 10.2}, indent=4))
    out = _outcome(tmp_path)
    assert out["outcome"] == "completed"
    assert out["evidence"][0]["path"] == "all_results.json"


def test_eval_results_alone_do_not_say_the_training_ended(tmp_path):
    (tmp_path / "train.log").write_text("step 10 loss 2.3\nstep 20 loss 2.1\nstep 30 loss 1.9\n")
    (tmp_path / "all_results.json").write_text(json.dumps({"epoch": 1.0, "eval_loss": 1.9, "eval_runtime": 3.2}))
    assert _outcome(tmp_path)["outcome"] == "unknown"


def _log(tmp_path, lines):
    (tmp_path / "train.log").write_text("".join(ln + "\n" for ln in lines))
    return _outcome(tmp_path)


def test_a_last_step_counter_at_its_total_is_the_end_of_training(tmp_path):
    # modded-nanogpt's record logs: `step:5625/5625 val_loss:3.27903 train_time:833.211s step_avg:148.13ms`
    lines = [f"step:{s}/5625 val_loss:{3.9 - s / 5625:.5f} train_time:{s * 0.148:.3f}s step_avg:148.13ms"
             for s in range(125, 5626, 125)]
    out = _log(tmp_path, lines)
    assert out["outcome"] == "completed" and "5625/5625" in out["why"]
    short = tmp_path / "short"
    short.mkdir()
    assert _log(short, lines[:-3])["outcome"] != "completed"  # stops at 5250/5625


def test_an_epochs_own_batch_counter_at_its_end_is_not_the_end_of_training(tmp_path):
    lines = [f"Epoch 3 | Batch [{b}/3811] | loss: {0.9 - b / 10000:.4f}" for b in range(100, 3812, 100)] + \
        ["Epoch 3 | Batch [3811/3811] | loss: 0.5190"]
    assert _log(tmp_path, lines)["outcome"] == "unknown"


# ---------------------------------------------------------------- from the review of these rules

def test_a_step_counter_of_one_epoch_or_of_an_evaluation_is_not_the_end(tmp_path):
    runs = {"tutorial": [f"Epoch [1/5], Step [{s}/600], Loss: {0.9 - s / 2000:.4f}" for s in range(100, 601, 100)],
            "yolox": [f"epoch: 3/300, iter: {i}/1870, mem: 7000Mb, total_loss: 5.1, ETA: 2 days" for i in
                      range(1670, 1871, 50)],
            "val": ["step 400 loss 1.2"] + [f"Validation step {s}/50" for s in range(10, 51, 10)]}
    for name, lines in runs.items():
        d = tmp_path / name
        d.mkdir()
        assert _log(d, lines)["outcome"] != "completed", name


def test_the_counter_regex_is_linear_on_long_runs_of_spaces():
    import time

    from trainwreck.analyze.outcome_progress import _STEP_OF
    t = time.process_time()
    for n in (500, 1000, 2000):
        _STEP_OF.search("step" + " " * n + "/")
    assert time.process_time() - t < 1.0  # was 40 s at n=1000 (three unbounded \s* around optional tokens)


def test_a_results_file_left_by_an_earlier_run_does_not_finish_a_short_one(tmp_path):
    (tmp_path / "all_results.json").write_text(json.dumps({"epoch": 3.0, "train_loss": 1.9, "train_runtime": 228.1}))
    (tmp_path / "trainer_state.json").write_text(json.dumps({
        "global_step": 1500, "max_steps": 3000,
        "log_history": [{"step": s, "loss": 3.0 - s / 1000, "epoch": s / 1000} for s in range(100, 1501, 100)]},
        indent=2))  # as Trainer writes it
    assert _outcome(tmp_path)["outcome"] != "completed"


def test_a_loop_counted_from_one_that_stops_one_short_did_not_finish(tmp_path):
    rows = [{"step": s, "train_loss": 3.0 - s / 1000} for s in range(1, 1000)]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "config.json").write_text(_settings(max_steps=1000))
    assert _outcome(tmp_path)["outcome"] != "completed"


def test_a_planned_schedule_is_not_how_far_the_run_got(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "train_loss": 3.0 - s / 5000}) + "\n"
                                                    for s in range(0, 3001, 50)))
    (tmp_path / "lr_schedule.csv").write_text("step,lr\n" + "".join(f"{s},{3e-4 * (1 - s / 10000):.6g}\n"
                                                                     for s in range(0, 10000, 100)) + "9999,0\n")
    (tmp_path / "config.json").write_text(_settings(max_iters=10000))
    assert _outcome(tmp_path)["outcome"] != "completed"


def test_a_named_config_wins_over_another_settings_file_and_a_length_far_below_the_run_is_not_its_end(tmp_path):
    _metrics(tmp_path, 3000)
    (tmp_path / "eval.yaml").write_text("batch_size: 16\nmax_steps: 200\n")
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text("trainer:\n  max_steps: 10000\n  lr: 0.001\n")
    bundle = collect(locate(str(tmp_path)))
    assert bundle.config("max_steps").value == "10000"
    assert _outcome(tmp_path)["outcome"] != "completed"
    (tmp_path / ".hydra" / "config.yaml").unlink()
    assert _outcome(tmp_path)["outcome"] != "completed"  # 3000 logged steps are no run of max_steps 200
