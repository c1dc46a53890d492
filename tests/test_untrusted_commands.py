"""Issue 10, "Found 2": a verification command is built from shell-quoted parts only. Every path, file name,
key and value it takes from the run reaches the script as one literal argument, whatever it holds (`;`,
backticks, `$()`, quotes, spaces, newlines); nothing from the run is ever run by the shell.

Each test plants the payloads in a run built in a tmp dir (a checkpoint file named
`step_300$(touch${IFS}PWNED).pt`, a script folder, Hydra keys and override values, wandb-recorded arguments),
runs the produced `verification.command` with `bash -c` in a scratch folder against a stub script that records
its argv, and asserts that no PWNED file appears anywhere and that the stub received the literal names. The log
lines come from examples/runs/nan-fp16 (PyTorch / Hydra wording); wandb-metadata.json has the fields wandb's
system-metadata writer sets (`program`, `args` = sys.argv[1:]).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from trainwreck.pipeline import diagnose

ROOT = Path(__file__).resolve().parents[1]
NAN_RUN = ROOT / "examples" / "runs" / "nan-fp16"
# built at run time, so that the payload is in the test and not in a fixture file
SUBST = "$(touch${IFS}PWNED)"
CKPT_NAME = f"step_300{SUBST}.pt"
DIR_NAME = "co de;$(touch PWNED)`touch PWNED`'q"
VALUE = "a b;$(touch PWNED) `touch PWNED` \"dq\" 'sq'"

STUB = r'''
import json, os, sys
with open(os.environ["ARGV_OUT"], "w") as f:
    json.dump(sys.argv, f)
'''
FAKE_TORCH = "class autograd:\n    @staticmethod\n    def set_detect_anomaly(on):\n        pass\n"


def _scratch(tmp: Path) -> dict:
    """A folder to run the command in (a fake `torch` beside it, `python` on PATH) and its environment."""
    cwd = tmp / "cwd"
    (cwd / "torch").mkdir(parents=True)
    (cwd / "torch" / "__init__.py").write_text(FAKE_TORCH)
    bindir = tmp / "bin"
    bindir.mkdir()
    os.symlink(sys.executable, bindir / "python")
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", ARGV_OUT=str(tmp / "argv.json"))
    return {"cwd": cwd, "env": env}


def _run_command(tmp: Path, command: str) -> list:
    box = _scratch(tmp)
    subprocess.run(["bash", "-n", "-c", command], check=True, timeout=30)
    res = subprocess.run(["bash", "-c", command], cwd=box["cwd"], env=box["env"], capture_output=True, text=True,
                         timeout=60)
    pwned = [p for p in tmp.rglob("*PWNED*") if p.name == "PWNED"]
    assert not pwned, f"the shell ran text from the run: {pwned}\n{command}"
    assert res.returncode == 0, res.stderr
    return json.loads((tmp / "argv.json").read_text())


def _hydra_unquote(word: str) -> str:
    """A Hydra override value in its quoted form, as Hydra's grammar reads it."""
    if len(word) > 1 and word[0] == word[-1] == "'":
        return word[1:-1].replace("\\${", "${").replace("\\'", "'").replace("\\\\", "\\")
    return word


def test_hydra_run_names_reach_the_script_literally(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(NAN_RUN, run)
    (run / "checkpoints" / "step_300.pt").rename(run / "checkpoints" / CKPT_NAME)
    code = tmp_path / DIR_NAME
    code.mkdir()
    script = code / "train.py"
    script.write_text(STUB)
    log = (run / "train.log").read_text().replace("/workspace/train.py", str(script))
    (run / "train.log").write_text(log)
    key = "we ird;$(touch PWNED)"
    with open(run / ".hydra" / "config.yaml", "a") as f:
        f.write(f"'{key}':\n  ckpt: null\n")
    with open(run / ".hydra" / "overrides.yaml", "a") as f:
        f.write(f"- \"data.path='{VALUE.replace(chr(39), '')}'\"\n")

    d = diagnose(str(run), probe=False).diagnosis.to_json()
    assert d["classification"] == "NaN"
    argv = _run_command(tmp_path, d["verification"]["command"])

    assert argv[0] == str(script)
    resume = [a for a in argv if a.startswith(f"{key}.ckpt=")]
    assert len(resume) == 1, argv
    assert _hydra_unquote(resume[0].split("=", 1)[1]) == str(run / "checkpoints" / CKPT_NAME)
    data = [a for a in argv if a.startswith("data.path=")]
    assert data == [f"data.path='{VALUE.replace(chr(39), '')}'"], argv


def test_recorded_arguments_with_newlines_reach_the_script_literally(tmp_path):
    """wandb records sys.argv[1:] as a list: an argument may hold a newline, quotes and a substitution."""
    run = tmp_path / "run"
    shutil.copytree(NAN_RUN, run, ignore=shutil.ignore_patterns(".hydra"))
    (run / "checkpoints" / "step_300.pt").rename(run / "checkpoints" / CKPT_NAME)
    code = tmp_path / (DIR_NAME + "\nnext line")
    code.mkdir()
    script = code / "train.py"
    script.write_text(STUB)
    note = VALUE + "\n`touch PWNED`\n$(touch PWNED)"
    args = ["--learning_rate", "0.003", "--note", note, "--resume_from_checkpoint", "none"]
    (run / "wandb-metadata.json").write_text(json.dumps({"program": str(script), "args": args}))

    d = diagnose(str(run), probe=False).diagnosis.to_json()
    assert d["classification"] == "NaN"
    argv = _run_command(tmp_path, d["verification"]["command"])

    assert argv[0] == str(script)
    assert argv[argv.index("--note") + 1] == note
    assert argv[argv.index("--resume_from_checkpoint") + 1] == str(run / "checkpoints" / CKPT_NAME)
    assert argv[argv.index("--learning_rate") + 1] == "0.0015"
    # the launch the command was built on is a command too: the same arguments, quoted the same way
    (tmp_path / "launch").mkdir()
    assert _run_command(tmp_path / "launch", d["verification"]["launch"]["command"]) == [str(script)] + args


def test_a_note_naming_a_run_value_quotes_it(tmp_path):
    """A setting the run has no place for is said in the command's comment: the run's value there is a shell
    word too, so that pasting it from the comment runs nothing."""
    run = tmp_path / "run"
    shutil.copytree(NAN_RUN, run, ignore=shutil.ignore_patterns(".hydra"))
    (run / "checkpoints" / "step_300.pt").rename(run / "checkpoints" / CKPT_NAME)
    d = diagnose(str(run), probe=False).diagnosis.to_json()
    cmd = d["verification"]["command"]
    code, _, comment = cmd.partition("  # ")
    assert "PWNED" not in code
    path = str(run / "checkpoints" / CKPT_NAME)
    assert f"'{path}'" in comment, comment
    assert f"{path} " not in comment.replace(f"'{path}'", "")


def test_a_checkpoint_path_from_a_log_line_stays_one_word(tmp_path):
    """A catalog hint (`ls -l <ckpt>; python -c "…zipfile.is_zipfile(\"<ckpt>\")"`) filled with the path the log
    names: the path is a quoted argument of both commands, never shell text. The message is PyTorch's own
    (caffe2/serialize/inline_container.cc), behind a loader's `failed to load PATH:` prefix."""
    ckpt = tmp_path / "ckpts" / CKPT_NAME
    ckpt.parent.mkdir()
    ckpt.write_bytes(b"not a zip")
    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text(f"step 10 loss=2.5\nfailed to load {ckpt}: RuntimeError: PytorchStreamReader "
                                   "failed reading zip archive: failed finding central directory\n")
    d = diagnose(str(run), probe=False).diagnosis.to_json()
    cmd = d["verification"]["command"]
    assert CKPT_NAME in cmd, cmd
    box = _scratch(tmp_path)
    res = subprocess.run(["bash", "-c", cmd], cwd=box["cwd"], env=box["env"], capture_output=True, text=True,
                         timeout=60)
    assert not [p for p in tmp_path.rglob("PWNED")], cmd
    assert res.returncode == 0 and res.stdout.split()[-1] == "False", (cmd, res.stdout, res.stderr)
    assert CKPT_NAME in res.stdout  # ls -l printed the file by its literal name
