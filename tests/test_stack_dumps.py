"""A stack dump taken during a hang makes the run a stall, and names where it waits."""
import json


def test_pyspy_dump_in_collective_is_a_stall(cli, tmp_path):
    (tmp_path / "train.log").write_text("step 100 loss=2.1\nstep 110 loss=2.0\n")
    (tmp_path / "py-spy-rank0.txt").write_text(
        'Thread 46 (idle): "MainThread"\n    backward (torch/autograd/__init__.py:266)\n'
        "    train (train.py:88)\nThread 4068 (active)\n"
        "    all_gather_into_tensor (torch/distributed/distributed_c10d.py:2709)\n"
        "    wrapper (torch/distributed/c10d_logger.py:72)\n")
    rep = json.loads(cli("diagnose", str(tmp_path), "--json", "--no-probe").stdout)
    assert rep["classification"] == "stall"
    ev = rep["primary_cause"]["evidence"][0]
    assert ev["path"] == "py-spy-rank0.txt" and ev["line"] == 5 and "all_gather_into_tensor" in ev["text"]


def test_faulthandler_timeout_dump_is_a_stall(cli, tmp_path):
    (tmp_path / "stderr.txt").write_text(
        "epoch 1 step 500 loss=1.2\nTimeout (0:30:00)!\nThread 0x00007f1c (most recent call first):\n"
        '  File "/usr/lib/python3.10/threading.py", line 320 in wait\n'
        '  File "/opt/venv/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 1133 in _try_get_data\n')
    rep = json.loads(cli("diagnose", str(tmp_path), "--json", "--no-probe").stdout)
    assert rep["classification"] == "stall"
