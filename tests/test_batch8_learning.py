"""Trajectory shapes that corpus batch 8 showed the engine misread, as general capabilities, each on a minimal run
written here in the layout its writer uses, with controls:

- Julia's `@show` (Base.@show: "Prints one or more expressions, and their results"): `@show loss(x, y)` prints
  `loss(x, y) = 0.2001447729236289`, `@show (i, loss(x, y))` prints `(i, loss(x, y)) = (1, 0.29…)`; Flux's
  Tracker shows a tracked scalar as `0.29… (tracked)` (FluxML/Flux.jl#798). Python's `f"{loss(x)=}"` prints the
  same `expr=value` layout.
- A bracketed step counter, `print("%s: Step [%d]  train Loss : %f, training accuracy :  %g" % …)`
  (PanJinquan/tensorflow_models_learning#23), where a loss of exactly 0 with the accuracy at 1 from step 0 is a
  degenerate objective, not a solved task.
- MMEngine's LoggerHook lines `Epoch(train)  [20][200/290]  base_lr: … grad_norm: 0.0000  loss: …`, its
  CheckpointHook's `Saving checkpoint at 20 epochs` and the validation loop's `Epoch(val)  [20][  50/1160] …`
  (AILab-CVC/YOLO-World#276): a gradient norm of exactly 0 is the cause, and validation progress after the save
  says the save finished.
- Stable-Baselines3's CSV logger (`progress.csv`, keys `rollout/ep_rew_mean`, `train/value_loss`,
  `train/entropy_loss`, `train/loss`; stable_baselines3/common/logger.py): a value loss that rises while the
  episode reward climbs, a policy entropy frozen by a fixed std, and a rise that is a sliver of the loss's scale.
- Detectron2's JSONWriter (`metrics.json`, one object per line: `iteration`, `total_loss`, `loss_box_reg`, …;
  detectron2/utils/events.py): one component rising while the total loss falls.
- Keras' CSVLogger (`epoch,accuracy,loss`): a loss rise while the accuracy improves over the same span.
"""
import json
import math

from trainwreck.analyze import stuck_at_phase
from trainwreck.collect.textmetrics import extract
from trainwreck.pipeline import diagnose


def run(d):
    r = diagnose(str(d), probe=False)
    return r, r.diagnosis.to_json()


def found(r, fid):
    return [f for f in r.findings if f.id == fid]


def write(tmp_path, lines, name="train.log"):
    (tmp_path / name).write_text("\n".join(lines) + "\n")
    return tmp_path


# -- Julia @show: `expression = value` ---------------------------------------------------------------------------

def flux_lines(values):
    out = ["    model((dataset[1])[1]) = [0.0 0.0; 1.46359 0.0] (tracked)",
           "    loss(dataset[1]...) = 0.2001447729236289 (tracked)"]
    out += [f"    (i, loss(dataset[1]...)) = ({i}, {v!r} (tracked))" for i, v in enumerate(values, 1)]
    return out


def test_show_layout_is_read_as_metrics():
    assert extract("    (i, loss(dataset[1]...)) = (3, 0.29602579662457984 (tracked))")[1] == {
        "loss": 0.29602579662457984}
    assert extract("    loss(dataset[1]...) = 0.2001447729236289 (tracked)")[1] == {"loss": 0.2001447729236289}
    assert extract("loss(x)=0.25, accuracy(y) = 0.5")[1] == {"loss": 0.25, "accuracy": 0.5}
    # not that layout: a comparison, a config echo, an array value
    assert extract("if (a) == b") is None
    assert extract("    model((dataset[1])[1]) = [0.0 0.0; 1.46359 0.0] (tracked)") is None


def test_a_loss_frozen_after_the_first_update_in_julia_output_is_not_learning(tmp_path):
    r, js = run(write(tmp_path, flux_lines([0.29602579662457984] * 10), "train_output.txt"))
    assert js["classification"] == "stall"
    assert js["primary_cause"]["id"] == "metric.loss-constant"
    # the step up from the first value to the frozen one is not a "sustained rise"
    assert not found(r, "metric.divergence")


def test_control_a_falling_loss_in_julia_output_is_not_a_stall(tmp_path):
    r, js = run(write(tmp_path, flux_lines([0.3 * 0.8 ** i for i in range(10)]), "train_output.txt"))
    assert not found(r, "metric.loss-constant")
    assert js["classification"] != "stall"


# -- loss exactly 0 with accuracy at its ceiling from step 0 -----------------------------------------------------

def tf_lines(start, losses, accs):
    out = []
    for k, (loss, acc) in enumerate(zip(losses, accs)):
        step = start + 10 * k
        out.append(f"2019-11-27 22:0{k % 10}:34.371258: Step [{step}]  train Loss : {loss:f}, "
                   f"training accuracy :  {acc:g}")
    return out


def test_bracketed_step_counter_is_the_step():
    assert extract("2019-11-27 22:04:34.371258: Step [20]  train Loss : 0.000000, training accuracy :  1") == (
        20, {"loss": 0.0, "accuracy": 1.0})
    assert extract("Iteration [ 40]: loss=2.5")[0] == 40
    assert extract("lr [0.001] loss: 3")[0] is None  # a bracketed lr is not a counter


def test_zero_loss_and_perfect_accuracy_from_step_0_is_a_degenerate_objective(tmp_path):
    r, js = run(write(tmp_path, tf_lines(0, [0.0] * 4, [1] * 4)))
    assert js["classification"] == "stall"
    f = found(r, "metric.loss-exactly-zero")[0]
    assert "ceiling" in f.claim and "first step" in f.claim
    assert "degenerate objective" in f.meaning
    assert any("distinct labels" in x for x in f.fixes)


def test_control_a_run_that_learns_to_perfect_accuracy_is_not_flagged(tmp_path):
    r, js = run(write(tmp_path, tf_lines(0, [2.3, 1.2, 0.5, 0.1, 0.0, 0.0], [0.1, 0.5, 0.8, 0.95, 1, 1])))
    assert not found(r, "metric.loss-exactly-zero")
    assert js["classification"] != "stall"


def test_control_zero_loss_late_in_a_long_run_is_not_flagged(tmp_path):
    r, _ = run(write(tmp_path, tf_lines(50000, [0.0] * 4, [1] * 4)))
    assert not found(r, "metric.loss-exactly-zero")


# -- MMEngine: grad_norm exactly 0, then a checkpoint save and validation progress --------------------------------

MM_TRAIN = ("04/24 02:0{m}:52 - mmengine - INFO - Epoch(train)  [20][{it}/290]  base_lr: 2.0000e-03 lr: 1.6436e-03  "
            "eta: 1:15:55  time: 0.1741  data_time: 0.0130  memory: 4603  grad_norm: {g}  loss: {loss}  "
            "loss_cls: {cls}  loss_bbox: 57.3539  loss_dfl: 66.5625")
MM_SAVE = "04/24 02:07:07 - mmengine - INFO - Saving checkpoint at 20 epochs"
MM_VAL = ("04/24 02:07:1{k} - mmengine - INFO - Epoch(val)  [20][{it:>4}/1160]    eta: 0:00:32  time: 0.0297  "
          "data_time: 0.0012  memory: 597  ")


def mm_lines(g="0.0000", val=True):
    out = [MM_TRAIN.format(m=6, it=200, g=g, loss="208.9762", cls="85.0598"),
           MM_TRAIN.format(m=7, it=250, g=g, loss="208.7317", cls="84.9639"), MM_SAVE]
    if val:
        out += [MM_VAL.format(k=k, it=50 * (k + 1)) for k in range(4)]
    return out


def test_bracketed_iteration_counters_are_progress():
    assert stuck_at_phase.advances("04/24 02:07:13 - mmengine - INFO - Epoch(val)  [20][ 100/1160]    eta: 0:00:31")
    assert not stuck_at_phase.advances("Epoch(val)  [20][   0/1160]")


def test_grad_norm_exactly_zero_is_the_cause_not_the_checkpoint_save(tmp_path):
    r, js = run(write(tmp_path, mm_lines()))
    assert js["classification"] == "stall"
    assert js["primary_cause"]["id"] == "metric.gradnorm-zero"
    assert not found(r, "log.stuck-at-phase")  # validation ran after the save


def test_control_a_log_that_ends_at_the_save_stays_stuck_at_the_save(tmp_path):
    r, _ = run(write(tmp_path, mm_lines(g="12.3456", val=False)))
    assert found(r, "log.stuck-at-phase")


# -- RL: value loss rising with the reward, a frozen entropy, a sliver of a rise ----------------------------------

SB3_HEADER = ("rollout/ep_len_mean,rollout/ep_rew_mean,time/fps,time/iterations,time/total_timesteps,"
              "train/approx_kl,train/entropy_loss,train/loss,train/policy_gradient_loss,train/value_loss")


def sb3_csv(tmp_path, value_loss, reward, entropy=None, loss=None):
    rows = [SB3_HEADER]
    n = len(value_loss)
    for i in range(n):
        ent = entropy[i] if entropy is not None else -1.4189385175704956
        tot = loss[i] if loss is not None else 0.05 * value_loss[i] - 0.01 + 0.0001 * ((i * 7) % 5)
        rows.append(f"200,{reward[i]!r},{300 + i % 7},{i + 1},{2048 * (i + 1)},0.0{(i * 3) % 9 + 1},{ent!r},"
                    f"{tot!r},{-0.001 * ((i * 5) % 7)!r},{value_loss[i]!r}")
    (tmp_path / "progress.csv").write_text("\n".join(rows) + "\n")
    return tmp_path


def falling_then(n_fall, lo, rise_to, n_rise, start=0.25):
    """A value loss falling from `start` to `lo` over n_fall rows, then rising to about `rise_to`."""
    fall = [start * (lo / start) ** (i / (n_fall - 1)) for i in range(n_fall)]
    rise = [lo + (rise_to - lo) * (i + 1) / n_rise * (1 + 0.05 * ((i * 7) % 3)) for i in range(n_rise)]
    return fall + rise


def test_value_loss_rising_while_reward_climbs_is_a_note_not_divergence(tmp_path):
    v = falling_then(40, 0.05, 0.4, 40)  # a rise as large as the start: only the reward says it is healthy
    rew = [-600 + 17 * i for i in range(80)]
    r, js = run(sb3_csv(tmp_path, v, rew))
    assert js["classification"] != "divergence"
    div = [f for f in found(r, "metric.divergence") if f.evidence[0].metric == "value_loss"]
    assert div and div[0].role == "factor" and div[0].confidence <= 0.3
    assert "reward improved" in div[0].claim and "value targets" in div[0].claim


def test_control_value_loss_rising_while_reward_falls_is_divergence(tmp_path):
    v = falling_then(40, 0.05, 0.4, 40)
    rew = [-600 + 17 * i for i in range(40)] + [80 - 15 * i for i in range(40)]
    r, js = run(sb3_csv(tmp_path, v, rew, loss=[x + 0.5 for x in v]))
    assert js["classification"] == "divergence"


def test_a_rise_that_is_a_sliver_of_the_loss_scale_is_not_divergence(tmp_path):
    v = falling_then(60, 4.6e-4, 9e-4, 40)  # 0.25 → 4.6e-4 → 9e-4: 0.2 % of where it started
    r, _ = run(sb3_csv(tmp_path, v, [-600.0 + (i % 3) for i in range(100)], loss=[x + 0.5 for x in v]))
    assert not found(r, "metric.divergence")


def test_control_a_rise_that_is_large_against_the_scale_is_divergence(tmp_path):
    v = falling_then(60, 0.02, 0.2, 40)  # back up to most of where it started
    r, _ = run(sb3_csv(tmp_path, v, [-600.0 + (i % 3) for i in range(100)], loss=[x + 0.5 for x in v]))
    assert found(r, "metric.divergence")


def test_entropy_frozen_while_the_reward_climbs_is_not_a_stall(tmp_path):
    v = [0.25 * 0.97 ** i for i in range(80)]
    r, js = run(sb3_csv(tmp_path, v, [-600 + 17 * i for i in range(80)], loss=[0.3 * 0.97 ** i for i in range(80)]))
    const = [f for f in found(r, "metric.loss-constant") if "entropy_loss" in f.claim]
    assert const and const[0].role == "factor" and const[0].suggests is None
    assert js["classification"] == "unclear"
    assert js["trajectories"]["entropy_loss"]["verdict"] != "not learning"  # the curve view agrees


def test_control_entropy_frozen_while_nothing_improves_is_a_stall(tmp_path):
    flat = [0.25 + 0.001 * ((i * 7) % 3) for i in range(80)]
    r, js = run(sb3_csv(tmp_path, flat, [-600.0 + (i % 3) for i in range(80)], loss=flat))
    const = [f for f in found(r, "metric.loss-constant") if "entropy_loss" in f.claim]
    assert const and const[0].suggests == "stall"


# -- a component rising while the total loss falls ---------------------------------------------------------------

def d2_metrics(tmp_path, total, box):
    rows = []
    for i, (t, b) in enumerate(zip(total, box)):
        it = 19 + 20 * i
        rows.append(json.dumps({"data_time": 0.004, "eta_seconds": 3.0 * (len(total) - i), "fast_rcnn/cls_accuracy":
                                0.9, "iteration": it, "loss_box_reg": b, "loss_cls": max(0.05, t - b - 0.05),
                                "loss_rpn_cls": 0.03, "loss_rpn_loc": 0.02, "lr": 0.00025, "time": 0.31,
                                "total_loss": t}))
    (tmp_path / "metrics.json").write_text("\n".join(rows) + "\n")
    return tmp_path


def box_rise(n):
    return [0.53, 0.54, 0.62, 0.486, 0.476] + [0.49 + 0.25 * (1 - math.exp(-i / 8)) + 0.02 * ((i * 7) % 3)
                                               for i in range(n - 5)]


def test_component_rising_while_total_falls_over_its_span_is_not_divergence(tmp_path):
    n = 80
    # the total falls all along but ends above 1.1 × its minimum (a noisy, flattening end)
    total = [2.7 * math.exp(-i / 15) + 1.0 + 0.09 * ((i * 5) % 3) for i in range(n)]
    r, js = run(d2_metrics(tmp_path, total, box_rise(n)))
    assert js["classification"] != "divergence"
    div = [f for f in found(r, "metric.divergence") if f.evidence[0].metric == "loss_box_reg"]
    assert div and div[0].role == "factor" and "total loss fell" in div[0].claim
    assert js["trajectories"]["loss_box_reg"]["verdict"] != "diverging"  # the curve view agrees


def test_control_component_rising_while_total_is_flat_is_divergence(tmp_path):
    n = 80
    total = [1.5 + 0.01 * ((i * 5) % 3) for i in range(n)]
    r, js = run(d2_metrics(tmp_path, total, box_rise(n)))
    div = [f for f in found(r, "metric.divergence") if f.evidence[0].metric == "loss_box_reg"]
    assert div and div[0].suggests == "divergence"


# -- the loss rising while the task metric improves --------------------------------------------------------------

def keras_csv(tmp_path, acc, loss):
    rows = ["epoch,accuracy,loss"] + [f"{i},{a!r},{x!r}" for i, (a, x) in enumerate(zip(acc, loss))]
    (tmp_path / "log.csv").write_text("\n".join(rows) + "\n")  # CSVLogger("log.csv")
    return tmp_path


def test_loss_rise_with_accuracy_improving_is_a_note(tmp_path):
    loss = [1.0 - 0.05 * i for i in range(10)] + [0.55 + 0.04 * i + 0.01 * (i % 2) for i in range(20)]
    acc = [0.3 + 0.02 * i for i in range(30)]
    r, js = run(keras_csv(tmp_path, acc, loss))
    assert js["classification"] != "divergence"
    div = found(r, "metric.divergence")
    assert div and div[0].role == "factor" and "accuracy improved" in div[0].claim


def test_control_loss_rise_with_accuracy_falling_is_divergence(tmp_path):
    loss = [1.0 - 0.05 * i for i in range(10)] + [0.55 + 0.04 * i + 0.01 * (i % 2) for i in range(20)]
    acc = [0.3 + 0.04 * i for i in range(10)] + [0.7 - 0.02 * i for i in range(20)]
    r, js = run(keras_csv(tmp_path, acc, loss))
    assert js["classification"] == "divergence"


def test_control_a_rise_of_a_fifth_after_a_deep_fall_is_still_divergence(tmp_path):
    # nanoGPT's `iter %d: loss %.4f` lines: 10.8 → 0.5, then a sustained climb to 0.6 (under 1 % of the scale)
    fall = [0.5 + 10.3 * math.exp(-i / 25) for i in range(300)]
    rise = [0.5 + 0.1 * min(1.0, i / 30) + 0.001 * (i % 3) for i in range(100)]
    lines = [f"iter {10 * i}: loss {v:.4f}, time 35.12ms, mfu 12.01%" for i, v in enumerate(fall + rise)]
    r, _ = run(write(tmp_path, lines))
    assert found(r, "metric.divergence")


# -- a wide bump that came back down is not divergence (HF trainer_state.json) -----------------------------------

def hf_state(tmp_path, losses):
    hist = [{"epoch": round(0.1 * (i + 1), 2), "learning_rate": 0.0003, "loss": v, "step": 50 * (i + 1)}
            for i, v in enumerate(losses)]
    n = 50 * len(losses)
    hist.append({"epoch": 6.0, "step": n, "total_flos": 1.2e19, "train_loss": 1900.0, "train_runtime": 9000.0,
                 "train_samples_per_second": 2.1, "train_steps_per_second": 0.3})
    state = {"epoch": 6.0, "global_step": n, "max_steps": n, "log_history": hist, "num_train_epochs": 6}
    (tmp_path / "trainer_state.json").write_text(json.dumps(state, indent=2))
    return tmp_path


def bump(back_to):
    """CTC-sized losses: fall 11000 → ~880, bump to ~2400, then come down to `back_to`."""
    fall = [880 + 10000 * math.exp(-i / 6) + 15 * ((i * 7) % 3) for i in range(40)]
    up = [880 + 1500 * math.sin(math.pi * i / 16) for i in range(1, 9)]
    down = [2380 - (2380 - back_to) * (i / 12) for i in range(1, 13)]
    return fall + up + down


def test_a_bump_that_came_back_down_is_not_divergence(tmp_path):
    r, js = run(hf_state(tmp_path, bump(back_to=1060)))
    assert not found(r, "metric.divergence")
    assert js["classification"] == "unclear"


def test_control_a_rise_that_stays_up_is_divergence(tmp_path):
    r, js = run(hf_state(tmp_path, bump(back_to=2000)))
    assert found(r, "metric.divergence")


# -- Stable-Baselines' console dumps (HumanOutputFormat): `| key | value |` blocks between dashes ----------------

def sb3_block(i, rew, value_loss):
    return ["-----------------------------------------",
            "| rollout/                |             |",
            "|    ep_len_mean          | 250         |",
            f"|    ep_rew_mean          | {rew:<11} |",
            "| time/                   |             |",
            "|    fps                  | 170         |",
            f"|    iterations           | {i:<11} |",
            f"|    total_timesteps      | {2048 * i:<11} |",
            "| train/                  |             |",
            "|    entropy_loss         | -1.38       |",
            f"|    loss                 | {-0.01 - 0.001 * (i % 3):<11} |",
            f"|    n_updates            | {10 * i:<11} |",
            f"|    value_loss           | {value_loss:<11} |",
            "-----------------------------------------"]


def sb3_log(tmp_path, rewards, value_losses):
    lines = ["Using cuda device"]
    for i, (r, v) in enumerate(zip(rewards, value_losses), 1):
        lines += sb3_block(i, r, v)
    return write(tmp_path, lines)


def test_sb3_console_blocks_are_read_with_their_timestep():
    from trainwreck.collect.kvtables import blocks
    from trainwreck.model import Line
    lines = [Line("train.log", k + 1, t) for k, t in enumerate(sb3_block(3, 2.6, 0.25))]
    got = {name: (step, v) for _line, step, vals in blocks(lines) for name, v in vals.items()}
    assert got["reward"] == (6144, 2.6) and got["value_loss"] == (6144, 0.25) and got["entropy_loss"][1] == -1.38
    # baselines prints full keys, no sections
    base = ["---------------------------------", "| eprewmean          | -1.02e+03 |",
            "| loss/value_loss    | 0.0626   |", "| misc/total_timesteps | 2048   |", "---------------------------------"]
    got = {n: (s, v) for _l, s, vals in blocks([Line("log.txt", k, t) for k, t in enumerate(base, 1)])
           for n, v in vals.items()}
    assert got == {"reward": (2048, -1020.0), "loss/value_loss": (2048, 0.0626)}


def test_control_a_markdown_hyperparameter_table_is_not_a_metric_block():
    from trainwreck.collect.kvtables import blocks
    from trainwreck.model import Line
    md = ["### Training hyperparameters", "", "| Hyperparameter | Value |", "|---|---|", "| learning_rate | 5e-05 |",
          "| train_batch_size | 8 |"]
    assert list(blocks([Line("README.md", k, t) for k, t in enumerate(md, 1)])) == []


def test_early_ppo_value_loss_rising_with_the_reward_is_not_divergence(tmp_path):
    r, js = run(sb3_log(tmp_path, [1.43, 1.9, 2.6, 3.4, 4.3], [0.0626, 0.12, 0.25, 0.41, 0.55]))
    assert js["classification"] != "divergence"
    f = found(r, "metric.loss-blowup")
    assert f and f[0].role == "factor" and "reward improved" in f[0].claim


def test_control_value_loss_blowing_up_while_the_reward_stalls_is_divergence(tmp_path):
    r, js = run(sb3_log(tmp_path, [1.43, 1.41, 1.44, 1.42, 1.43], [0.0626, 0.12, 0.25, 0.41, 0.55]))
    assert js["classification"] == "divergence"


# -- one metric per headerless file: d3rlpy's `<metric>.csv` (`print(f"{epoch},{step},{metric}", file=f)`) ------

def d3rlpy_run(tmp_path, critic, returns):
    (tmp_path / "critic_loss.csv").write_text("".join(f"{e},{1000 * e},{v!r}\n" for e, v in enumerate(critic, 1)))
    (tmp_path / "environment.csv").write_text("".join(f"{e},{1000 * e},{v!r}\n" for e, v in enumerate(returns, 1)))
    (tmp_path / "params.json").write_text(json.dumps({"batch_size": 256, "gamma": 0.99}))
    return tmp_path


def test_headerless_per_metric_csvs_are_read_and_a_critic_blowup_is_divergence(tmp_path):
    critic = [1.0 + 0.01 * (i % 3) for i in range(60)] + [1.0 * 1.5 ** i for i in range(40)]
    r, js = run(d3rlpy_run(tmp_path, critic, [300.0 + (i % 5) for i in range(100)]))
    s = r.bundle.best_series("critic_loss")
    assert s is not None and len(s.points) == 100 and s.points[-1].step == 100000
    assert js["classification"] == "divergence"


def test_control_a_critic_loss_that_grows_with_the_return_is_healthy(tmp_path):
    # TD3+BC-like: the critic loss grows ~20x as the Q-values grow, the evaluation return climbs
    critic = [1.0 + 20 * (1 - math.exp(-i / 15)) + 0.3 * ((i * 7) % 3) for i in range(100)]
    r, js = run(d3rlpy_run(tmp_path, critic, [2900.0 + 22 * i + 5 * ((i * 3) % 4) for i in range(100)]))
    assert r.bundle.best_series("reward") is not None  # environment.csv: the evaluation return
    assert js["classification"] == "unclear"


def test_a_metric_named_csv_with_a_header_is_an_ordinary_metrics_csv(tmp_path):
    (tmp_path / "loss.csv").write_text("epoch,step,loss\n" + "".join(f"{e},{10 * e},{2.0 - 0.1 * e}\n"
                                                                     for e in range(1, 11)))
    r, _ = run(tmp_path)
    s = r.bundle.best_series("loss")
    assert s is not None and [p.step for p in s.points][:2] == [10, 20] and s.points[0].value == 1.9
