"""Capabilities from the dev half of blind batch 14 (issue 9), each a general situation, not one case:

- torch.multiprocessing.spawn re-raises a child's exception as `ProcessRaisedException`, with the child's own
  traceback after "-- Process N terminated with the following error:": the wrapper is the launcher reporting, and
  the child's error decides (a store-barrier timeout is then a rendezvous stall, not a crash);
- the BFC allocator (TensorFlow, JAX before its own allocator) failing a request outright — "ran out of memory
  trying to allocate 18.44GiB (rounded to 19805393664)requested by op", then its memory map — is a device OOM,
  while its "The caller indicates that this is not a failure" warning alone is not;
- cudaHostAlloc failing ("cudaHostAlloc failed, ret[2], out of memory") is pinned host memory exhausted: OOM of the
  host-memory family, whatever framework printed it;
- a training accuracy repeated to every printed digit over five evaluations, below its ceiling, is a model whose
  predictions do not move: not learning.

Message texts are the frameworks' own, as users pasted them (sources beside each)."""
import json

from twtest import diagnose_text

from trainwreck.pipeline import diagnose

_d = diagnose_text  # one file written into the run, diagnosed in-process


SPAWN = ("Traceback (most recent call last):\n"
         '  File "distributed_slurm_main.py", line 420, in <module>\n'
         "    main()\n"
         '  File "distributed_slurm_main.py", line 131, in main\n'
         "    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))\n"
         '  File "/usr/local/lib/python3.8/dist-packages/torch/multiprocessing/spawn.py", line 150, in join\n'
         "    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n"
         "torch.multiprocessing.spawn.ProcessRaisedException:\n\n"
         "-- Process 1 terminated with the following error:\n"
         "Traceback (most recent call last):\n"
         '  File "/usr/local/lib/python3.8/dist-packages/torch/multiprocessing/spawn.py", line 59, in _wrap\n'
         "    fn(i, *args)\n"
         '  File "distributed_slurm_main.py", line 137, in main_worker\n'
         "    dist.init_process_group(backend='nccl', init_method=args.dist_url)\n")


def test_a_spawned_childs_error_decides_not_the_spawn_wrapper(tmp_path):
    # https://github.com/tczhangzhi/pytorch-distributed/issues/18 (the child's store-barrier timeout)
    d = _d(tmp_path, "slurm.out", SPAWN + "RuntimeError: Timed out initializing process group in store based "
           "barrier on rank: 2, for key: store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)\n")
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "store-based-barrier-timeout"


def test_a_spawned_childs_crash_is_still_a_crash_named_by_the_child(tmp_path):
    d = _d(tmp_path, "slurm.out", SPAWN + "ValueError: too many values to unpack (expected 2)\n")
    assert d["classification"] == "crash", d["headline"]
    assert "ValueError" in d["headline"] and "ProcessRaisedException" not in d["headline"]


BFC = ("I0924 02:51:41.554258 140344264349504 submission_runner.py:236] Starting training loop.\n"
       "2022-09-24 02:54:07.009542: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:479] "
       "Allocator (GPU_0_bfc) ran out of memory trying to allocate 18.44GiB (rounded to 19805393664)requested by op\n"
       "2022-09-24 02:54:07.009772: W external/org_tensorflow/tensorflow/core/common_runtime/bfc_allocator.cc:491] "
       "**************************_______________________________________\n")


def test_the_bfc_allocator_failing_a_request_is_a_device_oom(tmp_path):
    # https://github.com/mlcommons/algorithmic-efficiency/issues/137
    d = _d(tmp_path, "train.log", BFC)
    assert d["classification"] == "OOM", d["headline"]
    assert d["primary_cause"]["id"] == "tf-bfc-allocator-failed" and "18.44GiB" in d["headline"]
    assert d["primary_cause"]["family"]["id"] == "gpu-memory"


def test_the_bfc_allocators_not_a_failure_warning_is_no_oom(tmp_path):
    # https://github.com/tensorflow/tensorflow/issues/43546: the warning TensorFlow says is not a failure
    d = _d(tmp_path, "train.log",
           "Epoch 1/3\n"
           "2020-09-24 21:35:23.363348: W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) "
           "ran out of memory trying to allocate 1.02GiB with freed_by_count=0. The caller indicates that this is not "
           "a failure, but may mean that there could be performance gains if more memory were available.\n"
           "1875/1875 [==============================] - 12s 6ms/step - loss: 0.2210 - accuracy: 0.9351\n"
           "Epoch 2/3\n1875/1875 [==============================] - 11s 6ms/step - loss: 0.1010 - accuracy: 0.9702\n"
           "Epoch 3/3\n1875/1875 [==============================] - 11s 6ms/step - loss: 0.0712 - accuracy: 0.9788\n")
    assert d["classification"] != "OOM", d["headline"]


def test_cuda_host_alloc_failing_is_host_memory(tmp_path):
    # https://github.com/mindspore-ai/mindspore/issues/172 (MindSpore's dataset queue, pinned host memory)
    d = _d(tmp_path, "train.log",
           "============== Starting Training ==============\n"
           "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.181 [mindspore/ccsrc/minddata/dataset/util/"
           "arena.cc:250] Init] cudaHostAlloc failed, ret[2], out of memory\n"
           "[ERROR] MD(14433,7fea2effd700,python):2021-12-12-14:13:43.932.253 [mindspore/ccsrc/minddata/dataset/util/"
           "task.cc:67] operator()] Task:  - thread(140643787593472) is terminated with err msg: Out of memory. "
           "Memory malloc failed.\n")
    assert d["classification"] == "OOM", d["headline"]
    assert d["primary_cause"]["id"] == "pinned-host-alloc-failed"
    assert d["primary_cause"]["family"]["id"] == "host-memory"


def _acc(values, val=None):
    val = val or ["13.6807"] * len(values)
    return "".join(f"Epoch {85 + i}\t\tTrain Accuracy: {v} %\t\tVal Accuracy: {w} %\n" for i, (v, w) in
                   enumerate(zip(values, val)))


def test_a_training_accuracy_frozen_to_every_digit_is_not_learning(tmp_path):
    # https://github.com/usef-kh/fer/issues/13: 13.9155 % every epoch on 7-class FER2013
    d = _d(tmp_path, "train.log", "Epoch    85: reducing learning rate of group 0 to 1.7818e-04.\n" +
           _acc(["13.9155"] * 5))
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "metric.accuracy-frozen" and "13.9155" in d["headline"]


def test_an_accuracy_that_moves_repeats_only_by_rounding_or_sits_at_its_ceiling_is_no_stall(tmp_path):
    moving = tmp_path / "a"
    moving.mkdir()
    assert _d(moving, "train.log", _acc(["13.9155", "14.0021", "15.3372", "17.1108", "18.9012"],
                                        ["13.1", "13.9", "14.6", "16.2", "17.7"]))["classification"] == "unclear"
    rounded = tmp_path / "b"
    rounded.mkdir()
    assert _d(rounded, "train.log", _acc(["61.5"] * 5, ["55.1", "56.0", "56.2", "57.9", "58.3"]))["classification"] == "unclear"  # few digits repeat
    ceiling = tmp_path / "c"
    ceiling.mkdir()
    assert _d(ceiling, "train.log", _acc(["97.1", "98.3"] + ["98.7654"] * 5,
                                         ["90.1", "90.6", "91.2", "91.0", "91.4", "91.3", "91.5"]))[
        "classification"] == "unclear"  # converged near its ceiling: a deterministic pass repeats exactly
    four = tmp_path / "d"
    four.mkdir()
    assert _d(four, "train.log", _acc(["13.9155"] * 4, ["13.1", "13.9", "14.6", "16.2"]))["classification"] == "unclear"  # fewer than five


def _csv(tmp_path, rows, header="epoch,step,train_loss_epoch,val_loss"):
    (tmp_path / "metrics.csv").write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return diagnose(str(tmp_path), probe=False).diagnosis.to_json()


def test_a_loss_that_fell_a_fifth_and_then_froze_converged(tmp_path):
    # PaiNN's epoch log (MrCogito/Deep_learning_2023): the L1 falls 0.7362 -> 0.5715 over 476 epochs and repeats to
    # every digit for the last 175 of a run LSF reports "Successfully completed": converged, the schedule's lr near 0
    rows = [(e, e, round(0.7362 - 0.00035 * e, 4), 0.01) for e in range(476)] + \
           [(e, e, 0.5715, 0.0074) for e in range(476, 651)]
    d = _csv(tmp_path, rows)
    assert d["classification"] == "unclear", d["headline"]
    stuck = tmp_path / "stuck"
    stuck.mkdir()
    rows = [(e, e, round(0.6300 - 0.0001 * e, 4), 0.01) for e in range(5)] + [(e, e, 0.6295, 0.0074)
                                                                              for e in range(5, 300)]
    assert _csv(stuck, rows)["classification"] == "stall"  # barely moved first: it never learned
    early = tmp_path / "early"
    early.mkdir()
    rows = [(e, e, round(0.7362 - 0.012 * e, 4), 0.01) for e in range(14)] + [(e, e, 0.5715, 0.0074)
                                                                             for e in range(14, 300)]
    assert _csv(early, rows)["classification"] == "stall"  # fell a sixth over 14 epochs, then frozen for 286


def test_a_long_spike_episode_the_run_went_on_past_is_transient(tmp_path):
    # a Lightning CSVLogger run (EEG, 4 classes): epoch losses 7.4, 7.8, 101.8, 4.4 at epochs 24-27, then the run
    # trains on to 0.85, below where it was before the episode
    loss = [1.38 - 0.006 * e for e in range(24)] + [7.40, 7.76, 101.84, 4.45] + \
        [1.16 - 0.004 * (e - 28) for e in range(28, 103)]
    rows = [(e, 3 * e, round(v, 4), "") for e, v in enumerate(loss)]
    d = _csv(tmp_path, rows)
    assert d["classification"] == "unclear", d["headline"]
    worse = tmp_path / "worse"
    worse.mkdir()
    loss = loss[:28] + [1.16 + 0.003 * (e - 28) for e in range(28, 103)]  # came back, then ends above where it was
    rows = [(e, 3 * e, round(v, 4), "") for e, v in enumerate(loss)]
    assert _csv(worse, rows)["classification"] == "divergence"


def test_a_loss_that_lives_at_an_astronomical_size_is_divergence_at_any_length(tmp_path):
    # PaiNN (MrCogito/Deep_learning_2023 dynamoFix_0.md): train loss ~3e31 for 90 epochs, eval loss 2.73563e+31
    # at every evaluation: a blow-up that saturated, not a model that stopped moving
    rows = [(e, e, 5.4e30 * (1 + 0.05 * min(e, 100)), 2.735630536932239e+31) for e in range(90)]
    d = _csv(tmp_path, rows)
    assert d["classification"] == "divergence", d["headline"]
    assert d["primary_cause"]["id"] == "metric.loss-astronomical"
    assert "metric.eval-frozen" not in json.dumps(d)  # the saturated eval loss is no "model that stopped moving"


def test_a_large_unnormalised_loss_that_falls_is_no_divergence(tmp_path):
    rows = [(e, e, 3.9e10 * (1 - 0.01 * e), "") for e in range(60)]  # an MSE on raw targets, training fine
    assert _csv(tmp_path, rows)["classification"] == "unclear"


def test_an_accuracy_that_rose_and_then_froze_converged(tmp_path):
    d = _d(tmp_path, "train.log", _acc(["20.1034", "45.2210", "70.9981", "85.3121"] + ["85.3121"] * 6,
                                       ["20.5", "44.0", "69.1", "80.2", "80.4", "80.3", "80.5", "80.1", "80.6", "80.2"]))
    assert d["classification"] == "unclear", d["headline"]


def _keras(val_accs, accs=None):
    accs = accs or ["0.4500", "0.4750", "0.4750", "0.4750", "0.4750"][:len(val_accs)]
    return "".join(f"Epoch {i + 1}/5\n880/880 [==============================] - 540s - loss: {1.3444 - 0.02 * i:.4f} - "
                   f"acc: {a} - val_loss: {1.2752 - 0.003 * i:.4f} - val_acc: {v}\n"
                   for i, (a, v) in enumerate(zip(accs, val_accs)))


def test_a_moderate_held_out_accuracy_frozen_over_four_epochs_is_one_class_picked(tmp_path):
    # https://github.com/keras-team/keras/issues/1869 (4 classes): val_acc 0.4455 = 98/220, the share of class 0,
    # at every epoch while the losses move
    d = _d(tmp_path, "train.log", _keras(["0.4455"] * 4))
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "metric.eval-frozen"
    for name, vals in (("three", ["0.4455"] * 3), ("high", ["0.9455"] * 4), ("moving", ["0.4455", "0.4512", "0.4603",
                                                                                        "0.4731"])):
        run = tmp_path / name
        run.mkdir()
        assert _d(run, "train.log", _keras(vals))["classification"] == "unclear", name


# ---------------------------------------------------------------- from batch 15's dev half

def test_a_table_row_whose_padding_collapsed_is_still_a_row(tmp_path):
    # spaCy v2's train_textcat example, pasted: `LOSS  P  R  F` then rows whose first gap is one space
    rows = "".join("184.500 0.505   1.000   0.671\n" for _ in range(20))
    d = _d(tmp_path, "train.log", "Training the model...\nLOSS      P       R       F\n" + rows)
    assert d["classification"] == "stall", d["headline"]
    assert "184.5" in d["headline"]


def test_episode_totals_of_rl_runs_are_the_reward(tmp_path):
    from trainwreck.collect.metricnames import canonical
    assert {canonical(n) for n in ("total_reward", "avg_reward", "average_return", "total_return")} == {"reward"}
    assert canonical("total_cost") is None


def test_a_loss_named_by_its_function_is_read(tmp_path):
    # EDSR-PyTorch's log: `[11200/16000]	[L1: 2948.0002]	65.9+0.1s`, a jump of 500x that stays
    lines = [f"[{b}/16000]\t[L1: {v}]\t65.9+0.1s" for b, v in ((1600, 6.0103), (3200, 5.9974), (4800, 5.9816),
                                                               (6400, 5.9686), (8000, 5.9985), (9600, 6.0579),
                                                               (11200, 2948.0002), (12800, 3150.1106),
                                                               (14400, 3019.9456), (16000, 2876.2886))]
    d = _d(tmp_path, "log.txt", "\n".join(lines) + "\n")
    assert d["classification"] == "divergence", d["headline"]


def test_a_term_whose_rise_is_a_sliver_of_the_total_is_no_divergence(tmp_path):
    # mmdetection, mAP 0 per epoch: loss_bbox 0.0023 -> 0.0053 -> 0.0070 beside a total loss of ~0.19
    line = ("2022-03-04 21:21:40,744 - mmdet - INFO - Epoch [3][{i}/88]\tlr: 2.500e-03, loss_rpn_cls: 0.1221, "
            "loss_cls: 0.0472, loss_bbox: {b}, loss: {t}")
    text = "\n".join(line.format(i=i, b=b, t=t) for i, b, t in ((10, 0.0023, 0.1890), (20, 0.0053, 0.1856),
                                                              (30, 0.0070, 0.1921))) + "\n"
    d = _d(tmp_path, "train.log", text)
    assert d["classification"] != "divergence", d["headline"]
    assert "too small to move the run" in json.dumps(d)


def test_chance_level_from_a_tiny_accuracy_over_thousands_of_classes(tmp_path):
    # a Caffe net over ~3,600 classes: loss 8.26 = ln(1/0.00028), test accuracy 0.00028 at every test pass
    text = "".join(f"I1010 17:40:30.682349 24907 solver.cpp:191] Iteration {i}, loss = {v}\n"
                   f"I1010 17:40:30.682417 24907 solver.cpp:298]     Test net output #0: accuracy = 0.00028\n"
                   for i, v in ((1000, 8.26466), (2000, 8.25553), (3000, 8.24047), (4000, 8.28462)))
    d = _d(tmp_path, "caffe_train.log", "I1010 17:36:51.521034 24907 solver.cpp:191] Iteration 0, loss = 87.3366\n"
           + text)
    assert d["classification"] == "stall", d["headline"]
    assert d["primary_cause"]["id"] == "metric.chance-level"
