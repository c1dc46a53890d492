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
