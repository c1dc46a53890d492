"""A message the run went on past is not the run's failure (issue 9, outcomes and families by meaning).

Fixtures are written into tmp dirs in the real formats:
- LSF job output (IBM Spectrum LSF's job report: "TERM_RUNLIMIT: job killed after reaching LSF run time limit.",
  "Exited with exit code 140."), with torch._dynamo's convert_frame warnings ("WON'T CONVERT … due to:",
  "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:") as torch 2.1 logs them at WARNING
  before falling back to eager; wording from the public LSF outputs of MrCogito/Deep_learning_2023
  (outputs/WeightInit/Markdown/WeightInit_0.md).
- A Slurm .e file: conda's "CommandNotFoundError: Your shell has not been properly configured to use
  'conda activate'." (conda/exceptions.py), tqdm bars, slurmstepd's "*** JOB … CANCELLED AT … DUE TO TIME LIMIT ***"
  (owencqueen/PolymerGNN formal/model_comparisons/SOAP/out_tg/SOAP_10.e).
- fairseq's trainer warning "OOM: Ran out of memory with exception: CUDA out of memory. Tried to allocate …"
  (fairseq/trainer.py, logger.warning) and nanoGPT's "iter N: loss X, time …ms" lines.
- CPython's "python: can't open file '…': [Errno 2] No such file or directory" (Modules/main.c,
  magic282/NeuSum#10) and dash's "/bin/sh: 1: torchrun: not found" (hiyouga/LlamaFactory#5216)."""
from trainwreck.pipeline import diagnose

DYNAMO = """[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] WON'T CONVERT <resume in get_neighbours_as_edge_index> /work/PaiNN.py line 120
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] due to:
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] Traceback (most recent call last):
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING]   File "/appl/python/3.10.12/lib/python3.10/concurrent/futures/_base.py", line 403, in __get_result
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING]     raise self._exception
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING]
[2023-11-29 11:04:57,788] torch._dynamo.convert_frame: [WARNING] Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information
"""

LSF_RUNLIMIT = """
------------------------------------------------------------
Sender: LSF System <lsfadmin@hpc.example>
Subject: Job 19591965: <WeightInit_0> in cluster <dcc> Exited

Job <WeightInit_0> was submitted from host <n-62-30-1> by user <u> in cluster <dcc> at Tue Nov 28 19:17:27 2023
Started at Wed Nov 29 11:02:54 2023
Terminated at Thu Nov 30 11:03:35 2023
Results reported at Thu Nov 30 11:03:35 2023

Your job looked like:

------------------------------------------------------------
# LSBATCH: User input
#!/bin/sh
#BSUB -q gpua100
#BSUB -W 1440
python main.py
------------------------------------------------------------

TERM_RUNLIMIT: job killed after reaching LSF run time limit.
Exited with exit code 140.

Resource usage summary:

    CPU time :                                   87241.00 sec.
    Run time :                                   86442 sec.

The output (if any) is above this job summary.
"""


def _epochs(first, last):
    return "".join(f"Epoch [{e}/1000], Train Loss: {0.02 / e:.4f}, Train L1 Loss: {0.6 / e ** 0.5:.4f}\n"
                   for e in range(first, last + 1))


def _run(tmp_path, name, text):
    d = tmp_path / "run"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return diagnose(str(d), probe=False).diagnosis.to_json()


def _primary_id(d):
    return (d.get("primary_cause") or {}).get("id")


def test_dynamo_warnings_then_training_then_lsf_run_limit_is_interrupted_not_crash(tmp_path):
    d = _run(tmp_path, "WeightInit_0.out", DYNAMO + _epochs(1, 40) + LSF_RUNLIMIT)
    assert d["classification"] == "unclear", d["headline"]
    assert d["outcome"]["outcome"] == "interrupted" and d["outcome"]["by"] == "time-limit", d["outcome"]
    assert _primary_id(d) != "torch-compile-failed"


def test_log_that_stops_after_dynamo_warnings_is_unclear_not_crash(tmp_path):
    """No progress after them: the warning level alone says the program caught the exception and went on."""
    d = _run(tmp_path, "fixWorkingSetup_12.out", "wandb: Syncing run WorkingSetup-12\n" + DYNAMO * 3)
    assert d["classification"] == "unclear", d["headline"]
    assert d["outcome"]["outcome"] == "unknown"
    ctx = [f for f in d["contributing_factors"] if "went on" in f.get("summary", "")]
    assert ctx, "the survived message is still shown, as context"


def test_the_same_exception_raised_uncaught_is_still_the_crash(tmp_path):
    """Control: torch._dynamo's BackendCompilerFailed in a real traceback (not logged at warning level) ends
    the run, even when one tqdm bar is printed after it as the exception unwinds."""
    tb = ("Traceback (most recent call last):\n  File \"/work/main.py\", line 54, in <module>\n    run()\n"
          "  File \"/work/main.py\", line 40, in run\n    out = model(batch)\n"
          "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
          "FileNotFoundError: [Errno 2] No such file or directory: 'ldconfig'\n")
    d = _run(tmp_path, "train.log", _epochs(1, 5) + tb + "  3%|▎         | 31/1000 [00:10<05:20,  3.02it/s]\n")
    assert d["classification"] == "crash", d["headline"]


SLURM_E = """
CommandNotFoundError: Your shell has not been properly configured to use 'conda activate'.
To initialize your shell, run

    $ conda init <SHELL_NAME>

IMPORTANT: You may need to close and restart your shell after running 'conda init'.


/scratch/u/PolymerGNN/polymerlearn/utils/graph_prep.py:226: RuntimeWarning: invalid value encountered in greater
  acid_hit = (data.iloc[i,ac[0]:ac[1]].to_numpy() > 0)
"""


def _bar(n, total=50):
    return "\r".join(f"{int(100 * i / total):3d}%|█         | {i}/{total} [{i * 10:02d}:29<8:34:20, 629.80s/it]"
                     for i in range(n + 1))


def test_bare_exception_that_hours_of_progress_follow_is_not_the_failure(tmp_path):
    text = SLURM_E + "  " + _bar(11) + \
        "slurmstepd: error: *** JOB 42189 ON clr1247 CANCELLED AT 2022-04-14T16:17:16 DUE TO TIME LIMIT ***\n"
    d = _run(tmp_path, "SOAP_10.e", text)
    assert d["classification"] == "unclear", d["headline"]
    assert d["outcome"]["outcome"] == "interrupted", d["outcome"]


def test_bare_exception_followed_by_one_teardown_bar_is_still_the_crash(tmp_path):
    """Control: one bar after the exception line is tqdm closing, not the run going on."""
    text = "Epoch 1\nValueError: Expected input batch_size (32) to match target batch_size (16).\n" + \
        "  0%|          | 0/50 [00:01<?, ?it/s]\n"
    d = _run(tmp_path, "job.e", text)
    assert d["classification"] == "crash", d["headline"]


OOM_W = ("2021-03-01 10:00:00 | WARNING | fairseq.trainer | OOM: Ran out of memory with exception: CUDA out of "
         "memory. Tried to allocate 1.96 GiB (GPU 0; 31.75 GiB total capacity; 27.62 GiB already allocated; "
         "1.34 GiB free; 29.19 GiB reserved in total by PyTorch)\n")  # fairseq/trainer.py: logger.warning("OOM: …")


def _iters(first, last):
    return "".join(f"iter {i}: loss {3.0 - i / 100:.4f}, time 35.00ms, mfu 20.00%\n" for i in range(first, last + 1))


def test_oom_logged_at_warning_level_that_steps_follow_is_not_the_failure(tmp_path):
    d = _run(tmp_path, "train.log", _iters(1, 5) + OOM_W + _iters(6, 20))
    assert d["classification"] != "OOM", d["headline"]


def test_oom_warning_at_the_end_of_the_log_keeps_its_oom_meaning(tmp_path):
    """Control: an OOM-class warning with no progress after it is not 'survived' (only an exception the program
    logged at warning level is caught by definition; an OOM may still have stopped it)."""
    d = _run(tmp_path, "train.log", _iters(1, 20) + OOM_W)
    assert d["classification"] == "OOM", d["headline"]


def test_python_cannot_open_the_training_script_is_a_crash_with_a_path_fix(tmp_path):
    text = ("python: can't open file '/zhome/u/Deep_learning_2023/main.py': [Errno 2] No such file or directory\n"
            + LSF_RUNLIMIT.replace("TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n", "")
            .replace("exit code 140", "exit code 2"))
    d = _run(tmp_path, "NewGPUfix_0.out", text)
    assert d["classification"] == "crash", d["headline"]
    assert _primary_id(d) == "script-not-found"
    assert d["outcome"]["outcome"] == "failed"
    assert any("absolute path" in f.get("fix", f.get("text", str(f))) for f in d["fix_candidates"]), \
        d["fix_candidates"]


def test_launcher_not_on_path_is_a_crash_naming_the_environment(tmp_path):
    text = ("08/20/2024 19:04:44 - INFO - llamafactory.cli - Initializing distributed tasks at: 10.0.0.13:2951\n"
            "/bin/sh: 1: torchrun: not found\n")
    d = _run(tmp_path, "train.log", text)
    assert d["classification"] == "crash", d["headline"]
    assert _primary_id(d) == "launcher-not-found"
    assert "torchrun" in str(d["primary_cause"])


def test_conda_not_initialised_is_not_the_launcher_missing(tmp_path):
    """Only the program that starts training: conda's own shell-setup complaint is no launcher-not-found."""
    d = _run(tmp_path, "job.e", SLURM_E + "  " + _bar(11) + "\n")
    assert _primary_id(d) != "launcher-not-found"


def _frozen_after(fall, frozen):
    """The PaiNN runs' lines: a train line and a validation line per epoch."""
    def epoch(e, v):
        return (f"Epoch [{e}/650], Train Loss: 0.0009, Train L1 Loss: 0.1971\n"
                f"Epoch [{e}/650], Validation Loss: 0.0017, Validation L1: {v:.4f}, Smoothed Validation Loss: 0.0017\n")
    return "".join(epoch(e, 0.5746 * 0.95 ** e) for e in range(1, fall + 1)) + \
        "".join(epoch(e, 0.5746 * 0.95 ** fall) for e in range(fall + 1, fall + frozen + 1))


def test_a_loss_component_that_fell_and_then_froze_is_not_called_not_learning(tmp_path):
    """Once the crash-class warnings of a finished run are survived, its frozen tail (converged, or the lr at 0)
    must not become 'not learning'."""
    d = _run(tmp_path, "train.log", DYNAMO + _frozen_after(15, 120))
    assert d["classification"] != "stall", d["headline"]


def test_a_loss_component_frozen_from_the_start_is_still_not_learning(tmp_path):
    """Control: the same frozen value from the first epoch is a run that never learned."""
    d = _run(tmp_path, "train.log", _frozen_after(0, 120))
    assert d["classification"] == "stall", d["headline"]


def test_a_failed_launch_that_another_attempt_follows_is_not_the_failure(tmp_path):
    """The job script tried `python` (not on PATH), then `python3` ran the training."""
    text = "/var/spool/slurmd/job4242/slurm_script: line 12: python: command not found\n" + _iters(1, 30)
    d = _run(tmp_path, "slurm-4242.out", text)
    assert d["classification"] != "crash", d["headline"]


def test_an_import_error_above_the_lsf_resource_summary_is_still_the_crash(tmp_path):
    """Control: the numbers of LSF's resource summary after the traceback are no training steps."""
    tb = ("Traceback (most recent call last):\n  File \"/zhome/u/ML_final/main.py\", line 28, in run\n"
          "    from big_vision_test import big_vision_test, update_fn\n"
          "ImportError: cannot import name 'update_fn' from 'big_vision_test' (/zhome/u/ML_final/big_vision_test.py)\n")
    summary = LSF_RUNLIMIT.replace("TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n", "").replace(
        "exit code 140", "exit code 1").replace("    Run time :", "    Max Memory :                                 191 MB\n"
                                                "    Average Memory :                             191.00 MB\n"
                                                "    Total Requested Memory :                     65536.00 MB\n"
                                                "    Delta Memory :                               65345.00 MB\n"
                                                "    Max Processes :                              4\n"
                                                "    Run time :")
    d = _run(tmp_path, "test_save_0.out", tb + summary)
    assert d["classification"] == "crash", d["headline"]
