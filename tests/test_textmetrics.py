"""Free-text metric lines: every format the engine reads, what it must never misread, and that it never raises."""
import math
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trainwreck.collect.textmetrics import extract

CANONICAL = {"loss", "eval_loss", "grad_norm", "lr", "loss_scale", "skipped_iterations", "nan_iterations",
             "throughput", "memory", "accuracy", "epoch"}
NAN = "NAN"  # sentinel: the value must be float nan

# (line, expected step, expected subset of metrics)
FORMATS = [
    # key=value / key: value progress lines
    ("step 120 loss=nan lr=3.0", 120, {"loss": NAN, "lr": 3.0}),
    ("[rank0] step 400 loss=2.0100 lr=3e-4 tokens/s=51234", 400, {"loss": 2.01, "lr": 3e-4, "throughput": 51234.0}),
    ("Epoch 3 | Step 1200 | loss: 1.234 | lr: 1.0e-04 | grad_norm: 0.98", 1200,
     {"loss": 1.234, "lr": 1e-4, "grad_norm": 0.98, "epoch": 3.0}),
    ("iter 100: loss 2.3456, time 120.3ms", 100, {"loss": 2.3456}),
    ("2023-03-22 09:32:52 iter 3010: loss nan, time 1019.95ms, mfu 14.12%", 3010, {"loss": NAN}),
    ("2023-03-22 09:32:32 step 3000: train loss 4.0390, val loss 4.0427", 3000, {"loss": 4.039, "eval_loss": 4.0427}),
    ("global_step=1000, loss=2.5, grad_norm=inf", 1000, {"loss": 2.5, "grad_norm": math.inf}),
    ("iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)", 39, {"loss": 10.8259}),
    ('{"step": 5, "loss": 1.5, "lr": 0.001}', 5, {"loss": 1.5, "lr": 0.001}),
    # HF Trainer dicts: no step inside
    ("{'loss': 2.31, 'grad_norm': nan, 'learning_rate': 4.9e-05, 'epoch': 0.12}", None,
     {"loss": 2.31, "grad_norm": NAN, "lr": 4.9e-05, "epoch": 0.12}),
    ("{'eval_loss': 1.92, 'eval_runtime': 10.2, 'eval_samples_per_second': 50.1, 'epoch': 1.0}", None,
     {"eval_loss": 1.92, "epoch": 1.0}),
    ("{'train_runtime': 1234.5, 'train_samples_per_second': 5.6, 'train_steps_per_second': 0.3, "
     "'train_loss': 1.23, 'epoch': 3.0}", None, {"throughput": 5.6, "epoch": 3.0}),
    # Megatron / DeepSpeed
    (" iteration      100/  500000 | consumed samples: 102400 | elapsed time per iteration (ms): 1234.5 | "
     "learning rate: 1.500E-04 | global batch size:  1024 | lm loss: 7.123456E+00 | loss scale: 65536.0 | "
     "grad norm: 1.234 | number of skipped iterations:   0 | number of nan iterations:   0 |", 100,
     {"lr": 1.5e-4, "loss": 7.123456, "loss_scale": 65536.0, "grad_norm": 1.234, "skipped_iterations": 0.0,
      "nan_iterations": 0.0}),
    (" iteration     5426/  250000 | learning rate: 2.999E-04 | loss scale: 1.0 | grad norm: nan | "
     "samples per second: 1.883 | TFLOPs: 78.36 |", 5426,
     {"lr": 2.999e-4, "loss_scale": 1.0, "grad_norm": NAN, "throughput": 1.883}),
    ("[Rank 0] step=100, skipped=2, lr=[0.0001], mom=[(0.9, 0.999)]", 100, {"skipped_iterations": 2.0, "lr": 1e-4}),
    ("steps: 100 loss: 2.3456 iter time (s): 0.5 samples/sec: 64.0", 100, {"loss": 2.3456, "throughput": 64.0}),
    (" 14%|█▍        | 378/2724 [13:58:09<86:18:35, 132.44s/it][2023-06-07 22:16:00,018] [INFO] "
     "[loss_scaler.py:181:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 64, "
     "reducing to 32", 378, {"loss_scale": 32.0}),
    ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 1.52587890625e-05", None,
     {"loss_scale": 1.52587890625e-05}),
    # tqdm / Lightning
    ("Epoch 1:  45%|████▌     | 450/1000 [01:23<01:42,  5.36it/s, loss=2.31, v_num=0]", 450,
     {"loss": 2.31, "throughput": 5.36}),
    ("Epoch 0:   6%|██    | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc, "
     "train_loss_step=2.590]", 32040, {"loss": 2.6}),
    ("Epoch 2: 100%|██████████| 50/50 [00:05<00:00,  9.1it/s, train_loss_step=0.412, val_loss=0.5]", 50,
     {"loss": 0.412, "eval_loss": 0.5}),
    # epoch summaries / Keras
    ("Epoch 5: train_loss=0.123 val_loss=0.456", None, {"loss": 0.123, "eval_loss": 0.456, "epoch": 5.0}),
    ("1875/1875 [==============================] - 5s 3ms/step - loss: 0.2971 - accuracy: 0.9135", None,
     {"loss": 0.2971, "accuracy": 0.9135}),
    ("10954/10954 [==============================] - 659s - loss: 0.0475 - val_loss: 0.0612", None,
     {"loss": 0.0475, "eval_loss": 0.0612}),
    # JAX / t5x / MaxText
    ("completed step: 100, seconds: 1.2, TFLOP/s/device: 123.4, loss: 2.345", 100, {"loss": 2.345}),
    # others seen in real failed runs
    ("10/30 22:18:02 - mmengine - INFO - Epoch(train) [1][200/735]  lr: 1.9870e-04  eta: 2:46:39  time: 2.8906  "
     "data_time: 0.0042  memory: 10762  loss: 2.7522  grad_norm: 3.0608", None,
     {"lr": 1.987e-4, "memory": 10762.0, "loss": 2.7522, "grad_norm": 3.0608}),
    ("2025-04-18 21:58:31,047 - mmdet - INFO - Iter [10100/316440]\tlr: 3.990e-04, eta: 7 days, 4:23:57, "
     "time: 2.125, loss: nan", 10100, {"lr": 3.99e-4, "loss": NAN}),
    ("INFO:tensorflow:global step 438: loss = 54059178029467303936.0000 (0.403 sec/step)", 438,
     {"loss": 5.4059178029467304e19}),
    ("I0127 08:53:57.633610 37204 solver.cpp:68] Iteration 78000, loss = 6.9063", 78000, {"loss": 6.9063}),
    ("40245, 4.021: 6.907692, 6.910023 avg, 0.081346 rate, 0.385639 seconds, 5151360 images", 40245,
     {"loss": 6.907692, "lr": 0.081346}),
    ("epoch 001:  100 / 1000 loss=9.8, nll_loss=9.5, ppl=900, wps=12000, num_updates=100, lr=1e-05, gnorm=2.3, "
     "loss_scale=64", 100, {"loss": 9.8, "lr": 1e-5, "grad_norm": 2.3, "loss_scale": 64.0}),
    ("loss: tensor(2.3100, device='cuda:0', grad_fn=<NllLossBackward0>)", None, {"loss": 2.31}),
    ("***WARNING*** Bad grad_norm detected (grad_norm=nan)", None, {"grad_norm": NAN}),
    ("loss=inf lr=-inf grad_norm=Infinity", None, {"loss": math.inf, "lr": -math.inf, "grad_norm": math.inf}),
    ("mem: 10.5GB acc: 91.2% loss: NaN", None, {"memory": 10.5, "accuracy": 91.2, "loss": NAN}),
]


@pytest.mark.parametrize("line,step,want", FORMATS, ids=[f[0][:40] for f in FORMATS])
def test_formats(line, step, want):
    got = extract(line)
    assert got is not None, line
    s, values = got
    assert s == step
    for k, v in want.items():
        assert k in values, (k, values)
        if v == NAN:
            assert math.isnan(values[k])
        elif math.isinf(v):
            assert values[k] == v
        else:
            assert values[k] == pytest.approx(v, rel=1e-9), k
    assert set(values) <= CANONICAL
    assert all(isinstance(v, float) for v in values.values())


def test_hf_summary_train_loss_is_not_a_point():
    _, values = extract("{'train_runtime': 99.0, 'train_samples_per_second': 5.6, 'train_loss': 1.23, 'epoch': 3.0}")
    assert "loss" not in values


def test_only_first_value_of_a_metric_is_kept():
    _, values = extract("loss=2.31, train_loss_step=2.30, train_loss_epoch=2.5")
    assert values["loss"] == 2.31


def test_carriage_return_tqdm_updates_use_the_last_segment_with_metrics():
    line = ("Epoch 1:  10%|▏| 100/1000 [00:10<01:30, 9.9it/s, loss=5.1]\r"
            "Epoch 1:  20%|▎| 200/1000 [00:20<01:20, 9.9it/s, loss=4.1]\r"
            "Epoch 1:  20%|▎| 200/1000 [00:20<01:20, 9.9it/s]")
    assert extract(line) == (200, {"loss": 4.1, "epoch": 1.0, "throughput": 9.9})
    # a bar without metrics in its postfix or description carries none: no step point from it
    assert extract("Epoch 1:  20%|▎| 200/1000 [00:20<01:20, 9.9it/s]") is None
    assert extract("loss 2.5 | 20%|▎| 200/1000 [00:20<01:20, 9.9it/s]") == (200, {"loss": 2.5, "throughput": 9.9})


NOT_METRICS = [
    "",
    "Traceback (most recent call last):",
    '  File "/x/loss.py", line 181, in forward',
    "  File \"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl",
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 79.15 GiB total capacity)",
    "[2023-06-07 22:16:00,018] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.9.2",
    "torch version: 2.1.0",
    "loss_scaler.py:181: warning",
    "GPU 0: NVIDIA A100-SXM4-80GB rank 3",
    "rank: 3, world_size: 8, local_rank: 3",
    "Epoch 3/10",
    "epoch: 3/10",
    "Validation loss 6312:  0.149928",
    "eta: 2:46:39 time: 12:30:00",
    "timestamp: 2023-06-07 22:16:00 loss",
    "  5%|▍         | 130/2724 [4:48:39<95:46:57, 132.93s/it]",
    "Downloading shards: 100%|██████████| 3/3 [00:00<00:00, 1234.56it/s]",
    "Namespace(lr=0.001, epochs=10, batch_size=32)",
    "TrainingArguments(learning_rate=5e-05, max_grad_norm=1.0, warmup_steps=0, logging_steps=10)",
    "best loss: 0.5, max grad norm: 1.0, min lr: 1e-6",
    "Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    "node01:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
    "x nll_loss 9.5: a",
    "loss: 3ms/step",
    "lr: 1.2.3",
    "loss 2023-06-07",
]


@pytest.mark.parametrize("line", NOT_METRICS)
def test_not_metrics(line):
    assert extract(line) is None


@given(st.text(max_size=300))
@settings(max_examples=400)
def test_never_raises_and_results_keep_their_promises(t):
    got = extract(t)
    if got is not None:
        step, values = got
        assert step is None or (isinstance(step, int) and step >= 0)
        assert values and set(values) <= CANONICAL
        assert all(isinstance(v, float) for v in values.values())


@given(st.text(max_size=300))
@settings(max_examples=400)
def test_no_separator_no_metric(t):
    # the only metric read without `=` or `:` is the apex/fairseq "… reducing loss scale to X" line
    assume("=" not in t and ":" not in t and "scale to" not in t.lower())
    assert extract(t) is None


_alphabet = st.sampled_from(list("loss lr=:.0123456789eE+-naifNIF[]{}()'\"|,/%\t\r stepitr_grad_norm"))


@given(st.lists(_alphabet, max_size=200).map("".join))
@settings(max_examples=400)
def test_never_raises_on_metric_shaped_garbage(t):
    got = extract(t)
    if got is not None:
        assert set(got[1]) <= CANONICAL


def test_huge_and_odd_inputs():
    # digits that overflow a float are a number too large, not an infinity (and no crash): no value is read
    assert (extract("loss=" + "9" * 5000) or (None, {}))[1].get("loss") is None
    assert (extract("loss=1e999 lr=0.1") or (None, {}))[1].get("loss") is None
    assert extract("loss=inf lr=0.1")[1]["loss"] == math.inf  # an infinity the program wrote stays one
    assert extract("x" * 100000) is None
    assert extract("loss: 1\x00\x00 lr: 2") is not None
    assert extract("İİİ loss 2.5, x: 1")[1]["loss"] == 2.5  # lower() changes the length: no misaligned read


def _rate(lines, n=20000):
    data = (lines * (n // len(lines) + 1))[:n]
    t = time.perf_counter()
    for line in data:
        extract(line)
    return (time.perf_counter() - t) / n * 1e6


def test_speed():
    """Rejecting ordinary non-metric lines is cheap; metric lines stay in the tens of µs. Loose bounds: CI
    machines are slow and shared."""
    plain = ["Traceback (most recent call last):", "    return forward_call(*args, **kwargs)",
             "INFO: Using 16bit native Automatic Mixed Precision (AMP)", "Saving model checkpoint to out/ckpt-500",
             "warnings.warn(", "***** Running training *****"]
    metric = [f[0] for f in FORMATS]
    assert _rate(plain) < 15
    assert _rate(metric, 5000) < 400
