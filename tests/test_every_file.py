"""Every file of a run is evidence: what a file is comes from its content, not its name.

Fixture text is real message text, written into tmp dirs at test time:
- the CUDA OOM is PyTorch's own message (c10/cuda/CUDACachingAllocator.cpp, torch >= 2.1 wording);
- the LSF job report is the layout LSF appends to a job's output file, as committed in
  github.com/FredslundMagnus/Myretuen outputs/*/*.md (LSF outputs kept as .md) and quoted in marbl/canu#444;
  TERM_MEMLIMIT's wording is LSF's ("job killed after reaching LSF memory usage limit", LSF configuration reference);
- Slurm: `slurmstepd: error: *** JOB 4191701 ON c5-1 CANCELLED AT ... DUE TO TIME LIMIT ***` (Computational-Plant-
  Science/plantit#198); PBS: `=>> PBS: job killed: walltime 86415 exceeded limit 86400` (marbl/canu#1214);
  SGE: `qacct -j` with `failed 37 : qmaster enforced h_rt, h_cpu, or h_vmem limit` (StatFunGen/xqtl-protocol#156);
- Kubernetes: `kubectl describe pod` as in kubernetes/kubernetes#10861, with the `Last State: Terminated /
  Reason: OOMKilled / Exit Code: 137` block of gimlet-io/gimlet#649.
"""
import bz2
import gzip
import json
import lzma
import math
import os
import tracemalloc

import pytest

from trainwreck.collect import collect, content, inflate
from trainwreck.locate import locate

OOM = ("Traceback (most recent call last):\n"
       "  File \"/workspace/train.py\", line 212, in <module>\n"
       "    loss.backward()\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
       "79.15 GiB of which 1.06 MiB is free. Including non-PyTorch memory, this process has 79.14 GiB memory in "
       "use. Of the allocated memory 77.20 GiB is allocated by PyTorch, and 1.31 GiB is reserved by PyTorch but "
       "unallocated.\n")
LSF_REPORT = """
------------------------------------------------------------
Sender: LSF System <lsfadmin@n-62-21-92>
Subject: Job 6200494: <train-gpt> in cluster <dcc> Exited

Job <train-gpt> was submitted from host <n-62-27-19> by user <s183905> in cluster <dcc> at Thu Apr 16 17:05:41 2020
Job was executed on host(s) <n-62-21-92>, in queue <hpc>, as user <s183905> in cluster <dcc> at Thu Apr 16 17:05:42 2020
Started at Thu Apr 16 17:05:42 2020
Terminated at Sun Apr 19 17:06:02 2020

Your job looked like:

------------------------------------------------------------
# LSBATCH: User input
#!/bin/sh
#BSUB -q hpc
python train.py
------------------------------------------------------------

Exited with exit code 1.

Resource usage summary:

    CPU time :                                   113099.00 sec.
    Max Memory :                                 40947 MB

The output (if any) is above this job summary.
"""
SCHEDULER_TEXT = {
    "lsf": "epoch 3 step 1200 loss=2.31\n" + LSF_REPORT,
    "slurm": "step 1200 loss=2.31\nslurmstepd: error: *** JOB 4191701 ON c5-1 CANCELLED AT 2021-08-17T15:09:00 "
             "DUE TO TIME LIMIT ***\n",
    "pbs": "step 1200 loss=2.31\n=>> PBS: job killed: walltime 86415 exceeded limit 86400\n",
    "sge": "qname        csg.q\nhostname     node55\njobnumber    2253236\nfailed       37  : qmaster enforced h_rt, "
           "h_cpu, or h_vmem limit\nexit_status  137                  (Killed)\nru_wallclock 18001s\n",
    "kubernetes": ("Name:\t\t\t\ttrainer-0\nNamespace:\t\t\tdefault\nNode:\t\t\t\tgpu-node-3/10.240.216.66\n"
                   "Status:\t\t\t\tRunning\nContainers:\n  trainer:\n    Image:\ttrainer:latest\n"
                   "    State:          Running\n    Last State:     Terminated\n      Reason:       OOMKilled\n"
                   "      Exit Code:    137\n    Restart Count:\t5\nEvents:\n"),
}


def _progress(n, start=0):
    return "".join(f"step {i} loss={2.5 - i * 1e-4:.4f} lr=3.0e-04\n" for i in range(start, start + n))


def _diagnose(cli, d):
    p = cli("diagnose", str(d), "--json", "--no-probe", timeout=60)
    assert "Traceback (most recent call last)" not in p.stderr, p.stderr[-400:]
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def _evidence(rep):
    return [(e["path"], e.get("line")) for e in rep["primary_cause"]["evidence"]]


# each name alone in a run: the log of any name is read and its error is found
NAMES = ["train_log.txt", "output.txt", "nohup.out", "job.err", "train.log.1", "stdout_capture", "run-1234",
         "lsf_job_6200494.md"]


@pytest.mark.parametrize("name", NAMES)
def test_a_log_of_any_name_is_read_and_its_error_found(cli, tmp_path, name):
    body = _progress(200) + OOM
    if name.endswith(".md"):  # an LSF output kept as Markdown: the job's output, then LSF's report
        body += LSF_REPORT
    (tmp_path / name).write_text(body)
    p, rep = _diagnose(cli, tmp_path)
    assert p.returncode == 0, p.stderr
    assert rep["classification"] == "OOM", rep["headline"]
    assert (name, 204) in _evidence(rep)  # the OOM line, cited in the file it is in


def test_a_run_whose_only_log_is_train_log_txt_is_diagnosed(cli, tmp_path):
    (tmp_path / "train_log.txt").write_text(_progress(50) + OOM)
    (tmp_path / "weights.safetensors").write_bytes(b"\x00" * 64)
    p, rep = _diagnose(cli, tmp_path)
    assert p.returncode == 0 and rep["classification"] == "OOM"


@pytest.mark.parametrize("sched", sorted(SCHEDULER_TEXT))
def test_scheduler_outputs_are_recognised_by_content(tmp_path, sched):
    (tmp_path / "report").write_text(SCHEDULER_TEXT[sched])  # a name that says nothing
    (tmp_path / "train.log").write_text(_progress(30))
    bundle = collect(locate(str(tmp_path)))
    kinds = {log.path: log.scheduler for log in bundle.logs}
    assert kinds == {"report": sched, "train.log": None}
    assert {f.path: f.to_json().get("scheduler") for f in bundle.files} == kinds  # in the JSON's evidence_files
    assert any("read as logs by their content" in n and "report (" in n for n in bundle.notes)


@pytest.mark.parametrize("ext,compress", [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)])
def test_a_compressed_logs_oom_is_cited_by_file_and_line(cli, tmp_path, ext, compress):
    (tmp_path / f"train.log{ext}").write_bytes(compress((_progress(3000) + OOM).encode()))
    p, rep = _diagnose(cli, tmp_path)
    assert p.returncode == 0, p.stderr
    assert rep["classification"] == "OOM", rep["headline"]
    assert (f"train.log{ext}", 3004) in _evidence(rep)
    rec = next(f for f in rep["evidence_files"] if f["path"] == f"train.log{ext}")
    assert rec["compression"] == {".gz": "gzip", ".bz2": "bz2", ".xz": "xz"}[ext]
    assert rec["size"] == (tmp_path / f"train.log{ext}").stat().st_size  # on disk; the hash is of what was read
    assert rec["hashed"] == "head+tail"  # 90 KB decompressed: more than a log read whole


def test_a_large_gz_log_keeps_exact_line_numbers_and_samples_its_middle(tmp_path):
    n = 150_000  # ~6 MB decompressed: beyond what is kept whole, so only head, windows and tail are kept
    text = _progress(n) + OOM
    assert len(text) > inflate.KEEP_WHOLE
    (tmp_path / "capture.gz").write_bytes(gzip.compress(text.encode(), 1))  # the name does not say "log"
    bundle = collect(locate(str(tmp_path)))
    log = bundle.logs[0]
    assert log.path == "capture.gz"
    oom = next(ln for ln in log.lines if "OutOfMemoryError" in ln.text)
    assert oom.line == n + 4
    assert len(log.middle) >= 8
    for window in log.middle:  # every sampled line carries its own, exact line number
        for ln in window[:3]:
            assert ln.text == f"step {ln.line - 1} loss={2.5 - (ln.line - 1) * 1e-4:.4f} lr=3.0e-04"


def test_zstd_logs_are_read_when_zstandard_is_installed(tmp_path):
    zstandard = pytest.importorskip("zstandard")
    (tmp_path / "train.log.zst").write_bytes(zstandard.ZstdCompressor().compress((_progress(10) + OOM).encode()))
    bundle = collect(locate(str(tmp_path)))
    assert any("OutOfMemoryError" in ln.text for ln in bundle.logs[0].lines)


def _counting(read, produced):
    def counted(n=-1):
        b = read(n)
        produced.append(len(b))
        return b
    return counted


def _bomb(path, unit: bytes, members: int):
    one = gzip.compress(unit, 1)
    with open(path, "wb") as f:
        for _ in range(members):  # gzip members concatenated: one stream of members * len(unit) bytes
            f.write(one)


@pytest.mark.parametrize("unit", [b"\0" * (16 << 20), b"step 1 loss=2.0\n" * (1 << 20)], ids=["zeros", "text"])
def test_a_gzip_bomb_is_bounded_by_bytes(tmp_path, monkeypatch, unit):
    _bomb(tmp_path / "train.log.gz", unit, (1 << 30) // len(unit))  # 1 GB decompressed, ~1 MB on disk
    produced = []
    real = inflate.open_stream

    def counted(method, raw):
        s = real(method, raw)
        for name in ("read", "read1"):  # every way decompressed bytes come out of the stream
            setattr(s, name, _counting(getattr(s, name), produced))
        return s

    monkeypatch.setattr(inflate, "open_stream", counted)
    tracemalloc.start()
    try:
        bundle = collect(locate(str(tmp_path)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert inflate.INFLATE_LIMIT <= sum(produced) <= inflate.INFLATE_LIMIT + inflate.CHUNK  # not the 1 GB it holds
    assert peak < 12 << 20, f"{peak >> 20} MB"  # what is kept: head, windows, tail (~2 MB), not the stream
    if unit[0]:  # text: read up to the limit, and the user is told the rest was not
        assert any("decompression limit" in n for n in bundle.notes)
        assert bundle.files and bundle.files[0].path == "train.log.gz"
    else:
        assert any("train.log.gz: looks binary" in n for n in bundle.notes)


def test_a_binary_file_is_named_in_the_notes(cli, tmp_path):
    (tmp_path / "blob.dat").write_bytes(os.urandom(4096))
    (tmp_path / "train_log.txt").write_text(_progress(20) + OOM)
    p, rep = _diagnose(cli, tmp_path)
    assert rep["classification"] == "OOM"
    assert any("binary: blob.dat" in n for n in rep["notes"])
    assert "blob.dat" not in {f["path"] for f in rep["evidence_files"]}


def test_a_run_with_only_a_binary_file_has_nothing_to_diagnose(cli, tmp_path):
    (tmp_path / "blob.dat").write_bytes(os.urandom(4096))
    p, _rep = _diagnose(cli, tmp_path)
    assert p.returncode == 2 and "nothing to diagnose" in p.stderr and "binary: blob.dat" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    p, _rep = _diagnose(cli, tmp_path / "blob.dat")  # the same file named by the user
    assert p.returncode == 2 and "binary: blob.dat" in p.stderr
    (tmp_path / "all_results.json").write_text('{"train_loss": 0.41}\n')
    p, rep = _diagnose(cli, tmp_path / "all_results.json")  # text named by the user is read, and not called skipped
    assert p.returncode == 0 and not any("all_results.json" in n for n in rep["notes"])


def test_structured_text_is_read_when_nothing_else_holds_text(cli, tmp_path):
    (tmp_path / "train_results.json").write_text('{\n  "epoch": 3.0,\n  "train_loss": 0.41,\n  "train_runtime": 812.5\n}\n')
    p, rep = _diagnose(cli, tmp_path)
    assert p.returncode == 0, p.stderr  # a run holding text is never "nothing to diagnose"
    assert "train_results.json" in {f["path"] for f in rep["evidence_files"]}
    (tmp_path / "train.log").write_text(_progress(20))
    bundle = collect(locate(str(tmp_path)))  # beside a real log, a JSON document is not read as a log
    assert [log.path for log in bundle.logs] == ["train.log"]


def test_unknown_named_text_keeps_a_place_among_many_named_logs(tmp_path):
    for i in range(100):
        (tmp_path / f"worker_{i:03d}.log").write_text(_progress(5) + "RuntimeError: worker exited\n")
    (tmp_path / "job_report").write_text(SCHEDULER_TEXT["lsf"])
    bundle = collect(locate(str(tmp_path)))
    read = {f.path for f in bundle.files}
    assert len(read) == 64 and "job_report" in read


def _divergent_log(path, onset=7000, size=1 << 20):
    n = i = 0
    with open(path, "w") as f:
        while n < size:
            if i < onset:
                loss, gn = 2.5 - 0.5 * i / onset + 0.01 * math.sin(i), 1.0 + 0.1 * math.sin(0.7 * i)
            else:
                loss, gn = 2.0 + (i - onset) * 0.05 + 0.01 * math.sin(i), 1.0 + (i - onset) * 0.5
            s = f"step {i} loss={loss:.4f} grad_norm={gn:.3f} lr=3.0e-04\n"
            f.write(s)
            n += len(s)
            i += 1
    return i


def test_a_divergence_in_the_middle_of_a_1mb_log_is_dated_near_its_real_step(cli, tmp_path):
    steps = _divergent_log(tmp_path / "train.log")
    bundle = collect(locate(str(tmp_path)))
    loss = bundle.series["loss"][0].points
    first_high = next(p.step for p in loss if p.value > 3.0)  # what the collected points show
    assert 7000 <= first_high <= 7000 + 0.04 * steps
    p, rep = _diagnose(cli, tmp_path)
    assert rep["classification"] == "divergence", rep["headline"]
    assert abs(rep["onset"]["step"] - 7000) <= 0.05 * steps, rep["onset"]


def test_middle_windows_stay_within_the_byte_budget(tmp_path):
    from trainwreck.collect import logtext
    _divergent_log(tmp_path / "train.log", size=8 << 20)
    bundle = collect(locate(str(tmp_path)))
    log = bundle.logs[0]
    shown = sum(len(ln.text) + 1 for w in log.middle for ln in w)
    assert len(log.middle) == logtext.MIDDLE_WINDOWS
    assert shown <= logtext.MIDDLE_WINDOWS * logtext.MIDDLE_WINDOW
    starts = [w[0].byte for w in log.middle]
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) > 0.5 * max(gaps)  # evenly spaced ...
    middle = log.lines[0].byte - log.head[-1].byte
    assert starts[-1] - starts[0] > 0.9 * middle  # ... across the whole middle, not bunched at one end


def test_the_sniff_opens_a_bounded_number_of_files(tmp_path, monkeypatch):
    monkeypatch.setattr(content, "SNIFF_FILES", 10)
    for i in range(30):
        (tmp_path / f"part_{i:02d}.dat").write_text("step 1 loss=2.0\n")
    bundle = collect(locate(str(tmp_path)))
    assert len(bundle.logs) == 10
    assert any("not examined" in n for n in bundle.notes)


@pytest.mark.parametrize("name", ["train.log.1", "train.log.2.gz", "job.o12345", "train_log.txt"])
def test_discovery_finds_a_run_whose_only_log_is_rotated_compressed_or_a_job_output(tmp_path, name):
    run = tmp_path / "runs" / "exp1"
    run.mkdir(parents=True)
    (run / name).write_text(OOM)
    found = locate(None, str(tmp_path))  # what the CLI with no path, and the prompt-router hook, would diagnose
    assert found.root == str(run.resolve())


def test_documentation_is_a_log_only_when_it_shows_a_run(tmp_path):
    (tmp_path / "README.md").write_text("# Training\n\nIf you see `CUDA out of memory`, lower the batch size.\n")
    card = ("---\nlibrary_name: transformers\n---\n\n## Training results\n\n"  # an HF model card's results table
            "| Training Loss | Epoch | Step | Validation Loss |\n|:---:|:---:|:---:|:---:|\n| 2.31 | 1.0 | 500 | 2.20 |\n")
    (tmp_path / "model_card.md").write_text(card)
    (tmp_path / "job_6200494.md").write_text("x" * 9000 + "\n" + SCHEDULER_TEXT["lsf"])  # the report at the end
    bundle = collect(locate(str(tmp_path)))
    assert sorted(log.path for log in bundle.logs) == ["job_6200494.md", "model_card.md"]
    assert any("documentation that shows no run" in n and "README.md" in n for n in bundle.notes)


def test_a_bzip2_bomb_gets_a_smaller_share_for_the_same_time(tmp_path, monkeypatch):
    one = bz2.compress(b"step 1 loss=2.0\n" * (1 << 18), 9)  # 4 MB per stream, concatenated: 128 MB in all
    (tmp_path / "train.log.bz2").write_bytes(one * 32)
    bundle = collect(locate(str(tmp_path)))
    assert bundle.logs and bundle.logs[0].size <= inflate.INFLATE_LIMIT // 4
    assert any("decompression limit" in n for n in bundle.notes)


@pytest.mark.skipif(inflate.available("zstd"), reason="zstandard is installed here")
def test_a_zstd_log_without_zstandard_says_what_to_install(tmp_path):
    (tmp_path / "train.log.zst").write_bytes(b"\x28\xb5\x2f\xfd" + os.urandom(64))
    (tmp_path / "train.log").write_text(OOM)
    bundle = collect(locate(str(tmp_path)))
    assert any("train.log.zst: zstd-compressed; install the `zstandard` package" in n for n in bundle.notes)


def test_secrets_in_a_compressed_log_are_redacted_in_the_read(cli, tmp_path):
    secret = "hf_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"
    (tmp_path / "train.log.gz").write_bytes(gzip.compress(f"export HF_TOKEN={secret}\n{OOM}".encode()))
    bundle = collect(locate(str(tmp_path)))  # redacted inside the read primitive: no line in memory holds it
    assert bundle.logs[0].path == "train.log.gz" and "OutOfMemoryError" in bundle.logs[0].lines[-1].text
    assert not any(secret in ln.text for ln in bundle.all_lines())
    p, rep = _diagnose(cli, tmp_path)
    assert rep["classification"] == "OOM" and secret not in p.stdout + p.stderr


def test_vocabularies_and_hidden_files_are_not_logs(tmp_path):
    ckpt = tmp_path / "checkpoint-500"
    ckpt.mkdir()
    (ckpt / "vocab.txt").write_text("".join(f"tok{i}\n" for i in range(3000)))
    (tmp_path / "class_names").write_text("".join(f"n0{i:07d}\n" for i in range(1000)))  # a word list, any name
    (tmp_path / ".DS_Store").write_bytes(os.urandom(512))
    (tmp_path / "train.log").write_text(_progress(20) + OOM)
    bundle = collect(locate(str(tmp_path)))
    assert [log.path for log in bundle.logs] == ["train.log"]
    assert not any(".DS_Store" in n for n in bundle.notes)
    assert any("vocabularies, word or file lists: class_names, checkpoint-500/vocab.txt" in n for n in bundle.notes)


def test_a_compressed_log_cut_off_mid_stream_gives_what_decompressed(tmp_path):
    data = gzip.compress(_progress(20000).encode())
    (tmp_path / "train.log.gz").write_bytes(data[:len(data) * 2 // 3])  # the writer was killed mid-file
    bundle = collect(locate(str(tmp_path)))
    assert any("train.log.gz: the .gz stream ends in an error" in n for n in bundle.notes)
    last = bundle.logs[0].lines[-1]
    assert last.line > 0.6 * 20000 * 2 / 3 and last.text.startswith(f"step {last.line - 1} ")
