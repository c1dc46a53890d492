"""A run whose own path holds a secret (a Hydra sweep directory `3_lr=0.1,wandb.api_key=<hex>`, issue 10): the
secret is printed nowhere, and the verification command still runs. It names the run through a shell variable
(`"$RUN"/checkpoints/step_300.pt`), and `verification.variables` (and every view) says to set RUN first.

The secret is generated at run time (test_redact_shapes.gen); the runs reuse the stub scripts of
test_verification_runs.py (a Hydra train.py that parses its overrides strictly and records them)."""
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from test_redact_shapes import HEX40
from test_verification_runs import code_of, nan_hydra_run_with_checkpoint, stubs
from twtest import EXAMPLES, ROOT

from trainwreck.pipeline import diagnose

SWEEP = f"3_lr=0.1,wandb.api_key={HEX40}"
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "outcome")


def _hydra_run_in_a_sweep_dir(tmp: Path):
    project, run = nan_hydra_run_with_checkpoint(tmp)
    sweep = project / "multirun" / "2024-05-01" / "12-00-00" / SWEEP
    sweep.parent.mkdir(parents=True)
    shutil.move(str(run), str(sweep))
    return project, sweep


def _run(cmd: str, tmp: Path, run: Path) -> subprocess.CompletedProcess:
    """The command as pasted into bash, with RUN set first (the only thing verification.variables asks for)."""
    st = stubs(tmp)
    script = tmp / "verify.sh"
    script.write_text(f"RUN={shlex.quote(str(run))}\n{cmd}\n")
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    p = subprocess.run(["bash", str(script)], cwd=str(tmp), env=st["env"], capture_output=True, text=True, timeout=60)
    assert not list(tmp.rglob("pwned")), "a path from the run was expanded by the shell"
    return p, st


def _no_secret_and_runnable(v: dict) -> str:
    cmd = v["command"]
    assert HEX40 not in cmd and "[REDACTED" not in cmd, cmd
    assert '"$RUN"' in cmd and v["variables"] == {"RUN": "the run directory: its path holds a secret and is not printed"}
    shlex.split(cmd, comments=True)  # one valid shell line (raises on an unclosed quote)
    return cmd


def test_the_rerun_names_the_checkpoint_through_RUN_and_runs(tmp_path):
    project, run = _hydra_run_in_a_sweep_dir(tmp_path)
    d = diagnose(str(run), probe=False).diagnosis.to_json()
    assert d["classification"] == "NaN"
    cmd = _no_secret_and_runnable(d["verification"])
    assert "trainer.ckpt_path=" in code_of(cmd)  # the checkpoint is named, inside the run: through "$RUN"
    p, st = _run(cmd, tmp_path, run)
    assert p.returncode == 0, f"{cmd}\n{p.stderr}"
    rec = [json.loads(x) for x in st["record"].read_text().splitlines()]
    got = next(r for r in rec if "script" in r)
    assert got["errors"] == [] and got["set"]["trainer.ckpt_path"] == str(run / "checkpoints" / "step_300.pt")
    assert got["script"] == str(project / "train.py")


def test_a_command_that_reads_a_log_of_the_run_runs_on_it(tmp_path):
    run = tmp_path / "multirun" / SWEEP
    shutil.copytree(os.path.join(EXAMPLES, "stall-nccl"), run)
    v = diagnose(str(run), probe=False).diagnosis.to_json()["verification"]
    cmd = _no_secret_and_runnable(v)
    p, _st = _run(cmd, tmp_path, run)
    # grep read the log (exit 2 and a message when a file is missing; 1: no line matched), as the same command
    # spelled with the real path does
    assert p.returncode in (0, 1) and p.stderr == "", (cmd, p.stderr)
    direct = subprocess.run(["bash", "-c", cmd.replace('"$RUN"', shlex.quote(str(run)))], capture_output=True,
                            text=True)
    assert (p.returncode, p.stdout) == (direct.returncode, direct.stdout)


@pytest.mark.parametrize("target", ["dir", "file", "relative"])
def test_every_spelling_of_the_run_is_named_so(tmp_path, target):
    run = tmp_path / "multirun" / SWEEP
    shutil.copytree(os.path.join(EXAMPLES, "stall-nccl"), run)
    name = {"dir": str(run), "file": str(run / "slurm-48213.out"), "relative": f"multirun/{SWEEP}"}[target]
    v = diagnose(name, cwd=str(tmp_path), probe=False).diagnosis.to_json()["verification"]
    cmd = _no_secret_and_runnable(v)
    p, _st = _run(cmd, tmp_path, run)
    assert p.returncode in (0, 1) and p.stderr == "", (cmd, p.stderr)  # grep read the log: no "No such file"


def test_the_secret_is_in_no_output_and_every_view_says_what_to_set(tmp_path, cli):
    project, run = _hydra_run_in_a_sweep_dir(tmp_path)
    out = tmp_path / "out"
    outputs = {}
    for args in (["diagnose", str(run), "--no-probe"], ["diagnose", str(run), "--json", "--no-probe"],
                 ["diagnose", str(run), "--md", "--no-probe"], ["diagnose", str(run), "--out", str(out), "--no-probe"],
                 ["collect", str(run), "--no-probe"], ["collect", str(run), "--json", "--no-probe"],
                 ["rollback", str(run)], ["curve", str(run), "--json"]):
        p = cli(*args)
        assert p.returncode == 0, (args, p.stderr[-300:])
        outputs[" ".join(args[:1] + args[2:])] = p.stdout + p.stderr
    for root, dirs, files in os.walk(out):
        for f in files:
            outputs[f] = open(os.path.join(root, f), "rb").read().decode("utf-8", "replace")
        outputs["names"] = " ".join(dirs + files)
    assert not [k for k, text in outputs.items() if HEX40 in text]
    says = "RUN=<the run directory: its path holds a secret and is not printed>"
    assert f"Set     {says}" in outputs["diagnose --no-probe"]
    assert '"$RUN"' in outputs["diagnose --no-probe"].split(says, 1)[1]  # the command below it names RUN
    assert "Set first:" in outputs["diagnose --md --no-probe"] and "RUN=&lt;the run directory" in outputs["report.md"]
    assert f"set {says} first" in outputs["collect --no-probe"]
    rep = json.loads(outputs["report.json"])
    _no_secret_and_runnable(rep["verification"])
    assert "wandb.api_key=[REDACTED:" in rep["run"]  # the run's path is shown redacted where it is not a command


@pytest.mark.parametrize("how", ["dir", "file", "relative", "relative-file"])
def test_a_completed_run_named_any_way_gets_a_curve_command_on_RUN(tmp_path, how):
    """A completed run's command is `trainwreck curve <the target as named>`: a directory, a log file in it, or a
    path relative to where trainwreck was run; each becomes "$RUN" plus its place in the run."""
    run = tmp_path / "multirun" / SWEEP
    shutil.copytree(os.path.join(FIXTURES, "hf-log-completed"), run)
    name = {"dir": str(run), "file": str(run / "train.log"), "relative": f"multirun/{SWEEP}",
            "relative-file": f"multirun/{SWEEP}/train.log"}[how]
    d = diagnose(name, cwd=str(tmp_path), probe=False).diagnosis.to_json()
    assert d["outcome"]["outcome"] == "completed"
    cmd = _no_secret_and_runnable(d["verification"])
    assert shlex.split(cmd)[:2] == ["trainwreck", "curve"]
    want = str(run / "train.log") if how.endswith("file") else str(run)
    got = subprocess.run(["bash", "-c", f'RUN={shlex.quote(str(run))}; printf "%s" {cmd.split(" ", 2)[2]}'],
                         capture_output=True, text=True).stdout
    assert got == want  # the word the shell passes to `trainwreck curve` is the run as named


def test_a_secret_in_the_target_files_own_name_stays_redacted_in_the_command(tmp_path):
    """The secret is in the log's file name, not in the run's folder: the part after "$RUN" would show it, so the
    command keeps the redacted path (safe, not pasteable) and says nothing about setting RUN."""
    run = tmp_path / "run7"
    shutil.copytree(os.path.join(FIXTURES, "hf-log-completed"), run)
    log = run / f"train_wandb_api_key={HEX40}.log"
    (run / "train.log").rename(log)
    d = diagnose(str(log), probe=False).diagnosis.to_json()
    text = json.dumps(d)
    assert HEX40 not in text
    assert "variables" not in (d["verification"] or {})


ROOTS = [f"/tmp/sweep/{SWEEP}", f"/tmp/my proj $(touch pwned)/{SWEEP}", f"/tmp/it's \"q\" `x` \\ $HOME/{SWEEP}"]


@pytest.mark.parametrize("root", ROOTS, ids=["plain", "space-and-substitution", "quotes-and-escapes"])
@pytest.mark.parametrize("words", [
    lambda r: [r],  # the path alone
    lambda r: [r + "/train.log"],  # a file in it
    lambda r: ["--ckpt=" + r + "/checkpoints/step 300.pt"],  # inside a longer word, after `=`
    lambda r: [f"trainer.ckpt_path='{r}/ck.pt'"],  # inside Hydra's quotes, themselves inside the shell's
    lambda r: ["a", r + "/x", "b", r],  # twice
], ids=["alone", "file", "after-eq", "hydra-quoted", "twice"])
def test_a_path_in_any_quoting_becomes_RUN_and_the_shell_sees_the_same_words(root, words):
    from trainwreck.decide.shellvar import name_path
    argv = words(root)
    for spelled in (" ".join(shlex.quote(w) for w in argv),  # as shlex.quote writes each word
                    " ".join('"' + w.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
                             .replace("`", "\\`") + '"' for w in argv)):  # in double quotes, escaped
        cmd = name_path(spelled, root)
        assert root not in cmd and SWEEP not in cmd, cmd
        shown = subprocess.run(["bash", "-c", f"RUN={shlex.quote(root)}; printf '<%s>' {cmd}"],
                               capture_output=True, text=True)
        assert shown.stdout == "".join(f"<{w}>" for w in argv), (spelled, cmd, shown.stderr)
    assert name_path(f"ls {shlex.quote(root + 'X')}", root) == f"ls {shlex.quote(root + 'X')}"  # another name
    assert name_path(f"ls x{shlex.quote(root)}", root) == f"ls x{shlex.quote(root)}"  # the tail of another name
    assert name_path(f"ls  # see {root}/a.log", root) == 'ls  # see "$RUN"/a.log'  # a comment says it in words
