"""Shapes and formats that corpus batch 7 (600–649) showed the engine did not read or did not recognise, as general
capabilities, each on a fixture written here in the layout its writer uses:

- char-rnn's guard (karpathy/char-rnn train.lua): progress `%d/%d (epoch %.3f), train_loss = %6.8f, grad/param norm
  = %6.4e, time/batch = %.4fs`, then `print('loss is exploding, aborting.')` when the loss passes 3x its first value
  (tests/corpus/604; karpathy/char-rnn#169).
- GAN progress: PyTorch's DCGAN example `[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f`
  (pytorch/examples dcgan/main.py), eriklindernoren/PyTorch-GAN `[Epoch %d/%d] [Batch %d/%d] [D loss: %f] [G loss:
  %f]`, and a `Generator error / Discriminator error` table of `x / y` rows (soumith/ganhacks#2; tests/corpus/610).
- Keras `model.fit` epoch bars `26/26 [====] - 9s 362ms/step - loss: … - acc: … - val_loss: … - val_acc: …` and
  ModelCheckpoint's `Epoch 00002: val_loss did not improve from 2.68635` (tests/corpus/611).
- Caffe's solver log (BVLC/caffe solver.cpp / sgd_solver.cpp): `Iteration %d, loss = %g`, `    Train net output
  #%d: %s = %g (* %g = %g loss)`, `Iteration %d, lr = %g` with glog prefixes (yun-liu/RCF#55; tests/corpus/603).
"""
from trainwreck.collect.textmetrics import extract
from trainwreck.pipeline import diagnose


def run(d):
    r = diagnose(str(d), probe=False)
    return r, r.diagnosis.to_json()


def ids(r):
    return {f.id for f in r.findings}


def write(tmp_path, lines, name="train.log"):
    (tmp_path / name).write_text("\n".join(lines) + "\n")
    return tmp_path


# -- a trainer's own loss-explosion guard ----------------------------------------------------------------------

def charrnn_lines(n=6, abort=True):
    out = [f"{i}/21150 (epoch {i / 423:.3f}), train_loss = {1.2 - 0.02 * i:.8f}, grad/param norm = 4.1e-02, "
           f"time/batch = 0.1200s" for i in range(1, n + 1)]
    out.append(f"{n + 1}/21150 (epoch {(n + 1) / 423:.3f}), train_loss = 3.95000000, grad/param norm = 9.8e-01, "
               "time/batch = 0.1200s")
    if abort:
        out.append("loss is exploding, aborting.")
    return out


def test_charrnn_abort_message_is_a_divergence(tmp_path):
    r, js = run(write(tmp_path, charrnn_lines()))
    assert js["classification"] == "divergence"
    assert "loss-explosion-guard" in ids(r)
    assert js["primary_cause"]["evidence"][0]["line"] == 8  # the guard's line, after the last progress line


def test_message_alone_in_a_one_line_log_is_a_divergence(tmp_path):
    r, js = run(write(tmp_path, ["Loss is exploding, aborting"]))
    assert js["classification"] == "divergence"


def test_charrnn_progress_without_the_guard_is_not_a_divergence_message(tmp_path):
    r, _ = run(write(tmp_path, charrnn_lines(abort=False)))
    assert "loss-explosion-guard" not in ids(r)


# -- GAN: the discriminator wins, the generator runs away ------------------------------------------------------

def dcgan_lines(d_vals, g_vals):
    return [f"[0/25][{i}/782] Loss_D: {d:.4f} Loss_G: {g:.4f} D(x): 0.9{i % 10} D(G(z)): 0.0{i % 10} / 0.0{i % 10}"
            for i, (d, g) in enumerate(zip(d_vals, g_vals))]


def test_dcgan_generator_runaway_is_a_divergence(tmp_path):
    d = [0.60 * (0.7 ** i) for i in range(12)]
    g = [0.8 + 0.4 * i for i in range(12)]
    r, js = run(write(tmp_path, dcgan_lines(d, g)))
    assert "metric.gan-generator-runaway" in ids(r)
    assert js["classification"] == "divergence"


def test_pytorch_gan_lines_and_a_g_over_d_table_are_read(tmp_path):
    lines = [f"[Epoch 0/200] [Batch {i}/938] [D loss: {0.7 * 0.6 ** i:f}] [G loss: {0.7 + 0.5 * i:f}]"
             for i in range(8)]
    r, _ = run(write(tmp_path, lines))
    assert "metric.gan-generator-runaway" in ids(r)
    table = ["Generator error / Discriminator error"] + [f"{0.76 + 0.3 * i} / {0.6 * 0.65 ** i}" for i in range(10)]
    r, js = run(write(tmp_path, table))
    assert "metric.gan-generator-runaway" in ids(r)
    assert js["classification"] == "divergence"


def test_a_balanced_gan_and_a_wgan_critic_are_not_a_runaway(tmp_path):
    d = [1.1, 0.6, 0.9, 0.4, 1.2, 0.7, 0.5, 0.9, 0.6, 0.8]
    g = [1.5, 2.8, 1.9, 3.4, 1.2, 2.6, 3.1, 1.8, 2.7, 2.2]
    r, _ = run(write(tmp_path, dcgan_lines(d, g)))
    assert "metric.gan-generator-runaway" not in ids(r)
    # a Wasserstein critic's loss is negative: "falls to 0" has no meaning there
    wd = [0.6, 0.3, 0.1, 0.02, -0.05, -0.1, -0.2, -0.3]
    wg = [0.5 + 0.8 * i for i in range(8)]
    r, _ = run(write(tmp_path, [f"[D loss: {a:f}] [G loss: {b:f}]" for a, b in zip(wd, wg)]))
    assert "metric.gan-generator-runaway" not in ids(r)


def test_a_discriminator_that_leads_and_then_loses_its_lead_is_not_a_runaway(tmp_path):
    # D fell to 0 and G climbed, but at the last line D is back at 0.5: the lead was a transient
    d = [0.6, 0.5, 0.6, 0.2, 0.05, 0.02, 0.01, 0.01, 0.5]
    g = [0.8, 0.9, 1.0, 2.0, 3.5, 4.0, 4.1, 4.2, 4.0]
    r, _ = run(write(tmp_path, dcgan_lines(d, g)))
    assert "metric.gan-generator-runaway" not in ids(r)


# -- Keras: validation frozen while training moves -------------------------------------------------------------

def keras_lines(train, val):
    out = []
    for e, (t, v) in enumerate(zip(train, val), 1):
        out += [f"Epoch {e}/50",
                f"26/26 [==============================] - 9s 362ms/step - loss: {t:.4f} - acc: 0.6692 - "
                f"val_loss: {v:.4f} - val_acc: 0.8333", ""]
    return out


def test_keras_val_loss_frozen_while_train_loss_moves_is_not_learning(tmp_path):
    lines = keras_lines([4.9882, 4.9594, 4.9411], [2.6863] * 3)
    lines.insert(-1, "Epoch 00003: val_loss did not improve from 2.68635")
    r, js = run(write(tmp_path, lines))
    assert "metric.eval-frozen" in ids(r)
    assert js["classification"] == "stall"
    # ModelCheckpoint's own line is cited first
    assert js["primary_cause"]["evidence"][0]["line"] == len(lines) - 1


def test_keras_val_loss_that_changes_is_not_frozen(tmp_path):
    r, _ = run(write(tmp_path, keras_lines([4.9882, 4.9594, 4.9411], [2.6863, 2.6101, 2.5877])))
    assert "metric.eval-frozen" not in ids(r)
    # the same evaluation printed twice (one step) is one evaluation, not a frozen series
    lines = ["{'eval_loss': 0.7312, 'eval_runtime': 3.1, 'epoch': 1.0, 'step': 100}",
             "{'loss': 0.9, 'learning_rate': 1e-05, 'epoch': 1.0, 'step': 100}",
             "{'eval_loss': 0.7312, 'eval_runtime': 3.1, 'epoch': 1.0, 'step': 100}",
             "{'loss': 0.8, 'learning_rate': 1e-05, 'epoch': 1.5, 'step': 150}"]
    r, _ = run(write(tmp_path, lines))
    assert "metric.eval-frozen" not in ids(r)


# -- Caffe: per-output losses and an order-of-magnitude jump ---------------------------------------------------

def caffe_lines(outputs, totals=None):
    """outputs: one {name: value} per display iteration; the total is their sum, as Caffe prints it, or (with
    `average_loss` in the solver) the given smoothed totals."""
    out = []
    for k, vals in enumerate(outputs):
        it = 15640 + 20 * k
        total = sum(vals.values()) if totals is None else totals[k]
        out.append(f"I1014 05:43:{k:02d}.372745 20911 solver.cpp:228] Iteration {it}, loss = {total:g}")
        for j, (name, v) in enumerate(vals.items()):
            out.append(f"I1014 05:43:{k:02d}.372750 20911 solver.cpp:244]     Train net output #{j}: {name} = {v:g} "
                       f"(* 1 = {v:g} loss)")
        out.append(f"I1014 05:43:{k:02d}.372756 20911 sgd_solver.cpp:106] Iteration {it}, lr = 1e-07")
    return out


def test_caffe_train_net_outputs_are_read_per_output():
    got = [extract(f"I1014 05:43:23.37 20911 solver.cpp:244]     Train net output #{j}: dsn{j + 1}_loss = {v} "
                   f"(* 1 = {v} loss)") for j, v in enumerate((0.65, 5445.25, 3.5))]
    assert [g[1] for g in got] == [{"dsn1_loss": 0.65}, {"dsn2_loss": 5445.25}, {"dsn3_loss": 3.5}]


def test_caffe_component_jumping_1000x_is_a_divergence(tmp_path):
    healthy = {"dsn1_loss": 0.66, "dsn2_loss": 0.61, "fuse_loss": 0.43}
    spike = {"dsn1_loss": 5445.25, "dsn2_loss": 3755.11, "fuse_loss": 3100.27}
    after = {"dsn1_loss": 1.75, "dsn2_loss": 2.03, "fuse_loss": 1.10}
    r, js = run(write(tmp_path, caffe_lines([healthy, spike, after, after])))
    assert "metric.loss-order-jump" in ids(r)
    assert js["classification"] == "divergence"
    # with a smoothed total (average_loss) that never jumps, the component's jump is the evidence, and the total
    # of the iteration where it jumped (`Iteration 15660, loss = 11782`) is cited with it
    lines = caffe_lines([healthy, spike, after, after], totals=[11860, 11782, 10258.6, 9733.33])
    r, js = run(write(tmp_path, lines))
    assert js["classification"] == "divergence"
    cited = {e["line"] for e in js["primary_cause"]["evidence"]}
    assert lines.index(next(x for x in lines if "Iteration 15660, loss" in x)) + 1 in cited


def test_caffe_healthy_components_and_a_hard_batch_near_zero_are_not_a_jump(tmp_path):
    outs = [{"dsn1_loss": 0.9 * 0.8 ** k, "fuse_loss": 0.5 * 0.8 ** k} for k in range(8)]
    r, _ = run(write(tmp_path, caffe_lines(outs)))
    assert "metric.loss-order-jump" not in ids(r)
    # converged near 0, then one batch 1000x its best value but still below its first value: a hard batch
    lines = [f"iter {i}: loss {v}" for i, v in enumerate([2.3, 0.5, 0.01, 0.0004, 0.0003, 0.6, 0.0004, 0.0003])]
    r, _ = run(write(tmp_path, lines))
    assert "metric.loss-order-jump" not in ids(r)


# -- RL: an Atari reward still at the random-policy level ------------------------------------------------------
# ikostrikov/pytorch-a2c-ppo-acktr-gail main.py: "Updates {}, num timesteps {}, FPS {} \n Last {} training episodes:
# mean/median reward {:.1f}/{:.1f}, min/max reward {:.1f}/{:.1f}\n" (tests/corpus/618)

def a2c_lines(rewards, every=80000):
    return [f"Updates {k * 1000}, num timesteps {(k + 1) * every}, FPS 1828 \n Last 10 training episodes: "
            f"mean/median reward {r:.1f}/{r:.1f}, min/max reward -21.0/{r + 1:.1f}, entropy 1.77331, "
            f"value loss 0.02498, policy loss 0.03232" for k, r in enumerate(rewards)]


def test_pong_reward_at_the_random_level_after_800k_steps_is_not_learning(tmp_path):
    (tmp_path / "cmdline.txt").write_text('python main.py --env-name "PongNoFrameskip-v4"\n')
    r, js = run(write(tmp_path, a2c_lines([-20.8, -20.5, -20.9, -20.4] * 3)))
    assert "metric.rl-reward-at-random-level" in ids(r)
    assert js["classification"] == "stall"


def test_pong_early_or_learning_or_another_game_is_not_flagged(tmp_path):
    (tmp_path / "cmdline.txt").write_text('python main.py --env-name "PongNoFrameskip-v4"\n')
    r, _ = run(write(tmp_path, a2c_lines([-20.6], every=5000)))  # 5k steps: every agent starts there
    assert "metric.rl-reward-at-random-level" not in ids(r)
    r, _ = run(write(tmp_path, a2c_lines([-20.6, -19.0, -15.2, -9.8])))  # climbing away from -20.7
    assert "metric.rl-reward-at-random-level" not in ids(r)
    (tmp_path / "cmdline.txt").write_text('python main.py --env-name "SeaquestNoFrameskip-v4"\n')
    r, _ = run(write(tmp_path, a2c_lines([1600.0, 1700.0])))
    assert "metric.rl-reward-at-random-level" not in ids(r)
