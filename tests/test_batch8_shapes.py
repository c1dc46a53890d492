"""Shapes that corpus batch 8 (700–799) showed the engine did not recognise, as general capabilities, each on a
fixture written here from the frameworks' own text:

- PyTorch <= 1.0's THC allocator check `THCudaCheck FAIL file=…/THCStorage.cu line=58 error=2 : out of memory`
  (NVIDIA/nvvl#76, facebookarchive/loop#57), even glued to a tqdm bar.
- PaddlePaddle's allocator (paddle/fluid/memory/allocation/cuda_allocator.cc): `Out of memory error on GPU %d.
  Cannot allocate %s memory on GPU %d, …`, raised through `OSError: (External) ResourceExhaustedError:`
  (yeyupiaoling/PPASR#99, yeyupiaoling/PaddlePaddle-DeepSpeech#60).
- The CUDA runtime's error string for code 2 alone on a line (`out of memory`), then the illegal-address cascade
  it sets off in TensorFlow's stream executor (yangxue0827/R-DFPN_FPN_Tensorflow#6): the first failure is the OOM.
- An exception line with no traceback that the job outlived: conda's `CommandNotFoundError` at the top of a Slurm
  job's stderr, then the program's own warnings, or the scheduler's time limit (owencqueen/PolymerGNN; a
  smilesVAE Slurm job): the run was interrupted, not crashed.
- A script's per-epoch "Epoch 0 training completed" is not the end of the run (NVIDIA/nvvl#76).
"""
from trainwreck.pipeline import diagnose


def _run(tmp_path, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return diagnose(str(tmp_path), probe=False).diagnosis.to_json()


def _progress(n=5):
    return "".join(f"Epoch: [0][{i}/25]\tTime 1.199 (1.464)\tLoss {0.9 - i / 50:.4f} (0.5945)\tAcc@1 0.867 (0.798)\n"
                   for i in range(n))


TB = ('Traceback (most recent call last):\n  File "main.py", line 251, in main\n'
      '    lossV, accV, timeV = validate(val_loader, model, criterion, args)\n'
      '  File "main.py", line 364, in validate\n    output = model(input)\n')


def test_thc_out_of_memory_is_oom_not_a_cut_off_traceback(tmp_path):
    log = (_progress() + "Epoch 0 training completed: 2018-10-26T09:33:02.176891\n\n"
           "THCudaCheck FAIL file=/opt/pytorch/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : "
           "out of memory\n" + TB)
    d = _run(tmp_path, {"train.log": log})
    assert d["classification"] == "OOM", d["headline"]
    assert d["outcome"]["outcome"] == "failed", d["outcome"]  # the per-epoch "training completed" is no end


def test_thc_out_of_memory_glued_to_a_progress_bar(tmp_path):
    log = ("Valid (loss 53.34) epoch 1:   9%|██▍        | 1/11 [00:01<00:13,  1.33s/it]THCudaCheck FAIL "
           "file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory\n" + TB)
    assert _run(tmp_path, {"train.log": log})["classification"] == "OOM"


def test_paddle_out_of_memory_through_oserror_is_oom_not_a_crash(tmp_path):
    log = ("[2021-08-10 10:52:31] Train epoch: [1/65], batch: [120/3350], loss: 72.33\n"
           "Traceback (most recent call last):\n  File \"train.py\", line 62, in <module>\n    trainer.train()\n"
           "  File \"/ppasr/trainer.py\", line 359, in train\n    loss.backward()\n"
           "OSError: (External) ResourceExhaustedError:\n\n"
           "Out of memory error on GPU 0. Cannot allocate 801.000732MB memory on GPU 0, 11.999695GB memory has "
           "been allocated and available memory is only 6.500000MB.\n")
    d = _run(tmp_path, {"train.log": log})
    assert d["classification"] == "OOM", d["headline"]
    assert "PaddlePaddle ran out of GPU memory" in d["headline"] and "801.000732MB" in d["headline"]


def test_out_of_memory_alone_on_a_line_then_illegal_address_is_the_oom(tmp_path):
    ts = "2018-05-10 13:42:53.349641: E tensorflow/stream_executor/"
    log = ("2018-05-10 13:42:49: step247692    total_loss:1.17546725273 |\t per_cost_time:0.655s\n"
           "out of memory\ninvalid argument\n"
           f"{ts}stream.cc:289] Error recording event in stream: error recording CUDA event on stream "
           "0x55cd063dc950: CUDA_ERROR_ILLEGAL_ADDRESS; not marking stream as bad, as the Event object may be "
           "destroyed\n"
           f"{ts}cuda/cuda_event.cc:49] Error polling for event status: failed to query event: "
           "CUDA_ERROR_ILLEGAL_ADDRESS\n"
           f"{ts}cuda/cuda_event.cc:49] Error polling for event status: failed to query event: "
           "CUDA_ERROR_ILLEGAL_ADDRESS\n")
    assert _run(tmp_path, {"train.log": log})["classification"] == "OOM"


CONDA = ("\nCommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.\n"
         "To initialize your shell, run\n\n    $ conda init <SHELL_NAME>\n\n"
         "IMPORTANT: You may need to close and restart your shell after running 'conda init'.\n\n\n")
WARN = ("/lustre/scratch/<user>/PolymerGNN/polymerlearn/utils/graph_prep.py:293: RuntimeWarning: invalid value "
        "encountered in greater\n  acid_hit = (data.iloc[i,ac[0]:ac[1]].to_numpy() > 0)\n")
CANCEL = "slurmstepd: error: *** JOB 66031 ON clr1242 CANCELLED AT 2022-05-23T15:09:13 ***\n"
TIME = "slurmstepd: error: *** JOB 14621779 ON midway3-0022 CANCELLED AT 2024-01-27T03:29:05 DUE TO TIME LIMIT ***\n"


def test_a_setup_error_the_program_ran_past_is_not_the_failure(tmp_path):
    d = _run(tmp_path, {"job.e": CONDA + WARN + "  0%|          | 0/1 [00:00<?, ?it/s]" + CANCEL})
    assert d["classification"] == "unclear", d["headline"]
    assert d["outcome"]["outcome"] == "interrupted"


def test_a_setup_error_then_the_time_limit_is_interrupted(tmp_path):
    d = _run(tmp_path, {"job.err": CONDA + TIME})
    assert d["classification"] == "unclear", d["headline"]
    assert d["outcome"]["outcome"] == "interrupted" and d["outcome"]["by"] == "time-limit"


def test_a_bare_error_then_an_interpreter_clean_up_warning_is_still_the_crash(tmp_path):
    """Control: multiprocessing's resource_tracker warns at exit after a crash; that is no sign the run went on."""
    log = ("Epoch 1\nValueError: Expected input batch_size (32) to match target batch_size (16).\n"
           "/usr/lib/python3.8/multiprocessing/resource_tracker.py:216: UserWarning: resource_tracker: There appear "
           "to be 1 leaked semaphore objects to clean up at shutdown\n")
    assert _run(tmp_path, {"job.e": log})["classification"] == "crash"


def test_a_bare_error_then_a_plain_cancel_stays_the_crash(tmp_path):
    """Control: nothing of the program's after the error, and a cancel (not a time limit): the error stands."""
    d = _run(tmp_path, {"job.e": "Epoch 1\nValueError: Expected input batch_size (32) to match target batch_size "
                                 "(16).\n" + CANCEL})
    assert d["classification"] == "crash", d["headline"]


# -- one metric per file, no header: d3rlpy's logger (`<metric>.csv`, rows `epoch,step,value`) -------------------

def _d3rlpy(tmp_path, name, values):
    rows = "".join(f"{e},{e * 1000},{v:.6f}\n" for e, v in enumerate(values, 1))
    (tmp_path / name).write_text(rows)


def test_a_headerless_metric_file_named_after_its_metric_is_read(tmp_path):
    _d3rlpy(tmp_path, "critic_loss.csv", [28.4 + e / 10 for e in range(30)] + [150.0 * 4 ** k for k in range(12)])
    _d3rlpy(tmp_path, "environment.csv", [278.7 - e for e in range(42)])
    r = diagnose(str(tmp_path), probe=False)
    d = r.diagnosis.to_json()
    s = d["metrics_summary"]["critic_loss"]
    assert (s["n"], s["first_step"], s["last_step"]) == (42, 1000, 42000)
    assert d["classification"] == "divergence", d["headline"]
    assert d["metrics_summary"]["reward"]["n"] == 42  # environment.csv: d3rlpy's evaluation return, read too


def test_a_headerless_number_file_not_named_after_a_metric_is_no_metric(tmp_path):
    _d3rlpy(tmp_path, "coords.csv", [0.5] * 40)
    (tmp_path / "train.log").write_text("step 1 loss 2.0\nstep 2 loss 1.9\n")
    d = diagnose(str(tmp_path), probe=False).diagnosis.to_json()
    assert set(d["metrics_summary"]) == {"loss"}


def test_a_csv_with_a_header_and_no_spaces_is_a_metrics_table_not_a_word_list(tmp_path):
    rows = "".join(f"{e},{0.9 + e / 1000:.4f},{2.3 - e / 100:.4f}\n" for e in range(40))
    (tmp_path / "history_fold0.csv").write_text("epoch,accuracy,loss\n" + rows)
    d = diagnose(str(tmp_path), probe=False).diagnosis.to_json()
    assert d["metrics_summary"]["loss"]["n"] == 40
