"""Traceback analysis on real logs (fixtures and their sources: tests/data/tracebacks/SOURCES.md)."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainwreck.analyze import bare_exception, stack
from trainwreck.analyze.tracebacks import detect, infer_stage
from trainwreck.analyze.tracebacks.parse import (
    chain,
    chain_user_frame,
    find_tracebacks,
    innermost_user_frame,
    root_exception,
)
from trainwreck.analyze.tracebacks.summary import summarize
from trainwreck.analyze.tracebacks.torchrun import first_failure, rank_failures
from trainwreck.collect.bundle import Bundle
from trainwreck.collect.ranks import launcher_prefix, line_rank, prefix_rank, split_stream, strip_prefixes
from trainwreck.model import Finding, Line, LogText
from trainwreck.report.traceback import render_text

DATA = Path(__file__).parent / "data" / "tracebacks"
CORPUS = Path(__file__).parent / "corpus"


def load(name: str) -> List[Line]:
    text = (DATA / name).read_text(encoding="utf-8")
    rows = text.split("\n")
    if text.endswith("\n"):
        rows.pop()
    return [Line(name, i, t) for i, t in enumerate(rows, 1)]


def bundle_of(name: str) -> Bundle:
    lines = load(name)
    return Bundle(root=".", target=".", logs=[LogText(name, 0, lines, True)])


def only(tbs, exc_type):
    found = [t for t in tbs if root_exception(t).exc_type == exc_type]
    assert len(found) == 1, [root_exception(t).exc_type for t in tbs]
    return found[0]


# ---------------------------------------------------------------- ranks, de-duplication, interruption

def test_eight_ranks_interrupted_at_once_fold_into_one_traceback():
    tbs = find_tracebacks(load("torchtitan_interrupt_8ranks.log"))
    kb = only(tbs, "KeyboardInterrupt")
    assert sorted(kb.ranks) == list(range(8))
    assert kb.rank == 5  # [rank5] printed first
    assert kb.count == 9  # the 8 prefixed copies and one unprefixed copy interleaved with them
    assert kb.interrupted
    uf = innermost_user_frame(kb)
    assert (uf.file.endswith("pretraining/torchtitan_runner.py"), uf.line, uf.func) == (True, 602,
                                                                                        "launch_qwen3_pretrain")
    assert uf.code == "trainer.train()"
    assert not kb.frames[0].user and kb.frames[0].file == "<frozen runpy>"
    assert [f.code for f in kb.frames if f.func == "batch_generator"] == ["input_dict[k] = v.to(device_type)"]


def test_launcher_signal_chain_root_is_the_first_signal():
    tbs = find_tracebacks(load("torchtitan_interrupt_8ranks.log"))
    sig = only(tbs, "torch.distributed.elastic.multiprocessing.api.SignalException")
    assert sig.chain_kind == "during-handling"
    root = root_exception(sig)
    assert root is sig.chained_from and root.exc_line.line == 204
    assert root.interrupted and chain_user_frame(sig) is None  # torchrun's console script is not user code


def test_interruption_is_reported_as_interruption_not_as_a_crash_cause():
    fs = detect(bundle_of("torchtitan_interrupt_8ranks.log"))
    ids = [f.id for f in fs]
    assert "traceback.root-exception" not in ids
    (f,) = [f for f in fs if f.id == "traceback.interrupted"]
    assert "interrupted" in f.claim and "not a failure of the workload" in f.claim
    assert "KeyboardInterrupt on 8 ranks" in f.claim
    assert f.suggests == "crash" and f.confidence <= 0.35
    assert f.evidence[0].text == "[rank5]: KeyboardInterrupt"
    assert summarize(load("torchtitan_interrupt_8ranks.log"))["interrupted"] is True


def test_same_assertion_on_two_mpirun_ranks_and_no_user_frame():
    tbs = find_tracebacks(load("mpirun_assert_2ranks.log"))
    assert len(tbs) == 1
    t = tbs[0]
    assert (t.count, sorted(t.ranks), t.exc_type) == (2, [0, 1], "AssertionError")
    assert t.headline == "Please set a dp-size > 1. You can use 1 < dp-size <= tp-size"
    assert innermost_user_frame(t) is None
    assert [f.file for f in t.frames if f.file.startswith("<")] == ["<frozen runpy>", "<frozen runpy>", "<string>"]
    (f,) = [f for f in detect(bundle_of("mpirun_assert_2ranks.log")) if f.id == "traceback.root-exception"]
    assert f.claim.startswith("“AssertionError: Please set a dp-size > 1")  # the run's words, quoted
    assert "sglang/srt/server_args.py:460 (__post_init__)" in f.claim
    assert "on rank 0 first; 2 ranks raised the same" in f.claim
    assert f.stage == "startup"


# ---------------------------------------------------------------- first failing rank

def test_root_cause_of_torchrun_summary_names_the_first_failing_rank():
    lines = load("torchtitan_typeerror_failures.log")
    ff = first_failure(lines)
    assert (ff.rank, ff.local_rank, ff.host, ff.exitcode, ff.time) == (2, 2, "gpu01", 1, "2026-01-16_02:37:57")
    assert ff.root_cause and ff.line.line == 197
    sigterm = [r.rank for r in rank_failures(lines) if r.signal == "SIGTERM"]
    assert sigterm == [0, 1, 3, 4, 6, 7]  # the ranks torchrun killed after rank 2 failed
    (f,) = [f for f in detect(bundle_of("torchtitan_typeerror_failures.log"))
            if f.id == "traceback.first-failing-rank"]
    assert f.claim == ("rank 2 (host gpu01) failed first at 2026-01-16_02:37:57 with exitcode 1; "
                       "other ranks' errors are consequences")
    assert f.role == "context" and f.rank == 2 and f.evidence[0].line == 197


def test_sigkill_root_cause():
    ff = first_failure(load("cppo_childfailed_sigkill.log"))
    assert (ff.rank, ff.exitcode, ff.signal, ff.pid) == (0, -9, "SIGKILL", 14750)
    (t,) = find_tracebacks(load("cppo_childfailed_sigkill.log"))
    assert t.headless and t.headline == "src/open_r1/grpo_gsm.py FAILED"
    fs = detect(bundle_of("cppo_childfailed_sigkill.log"))
    launcher = [f for f in fs if f.id == "traceback.root-exception"][0]
    assert launcher.role == "symptom"  # torchrun's wrapper, not the cause
    rank = [f for f in fs if f.id == "traceback.first-failing-rank"][0]
    assert "with exitcode -9 (SIGKILL)" in rank.claim


def test_failures_list_behind_stderr_prefix_without_root_cause():
    lines = load("llamafactory_stderr_failures.log")
    assert [(r.rank, r.exitcode) for r in rank_failures(lines)] == [(1, 1), (2, 1), (3, None)]
    ff = first_failure(lines)
    assert (ff.rank, ff.host, ff.root_cause) == (1, "wph178", False)


def test_garbled_output_of_four_ranks_still_yields_the_error_and_the_root_cause_rank():
    lines = load("pangu_garbled_4ranks_childfailed.log")
    tbs = find_tracebacks(lines)
    fnf = only(tbs, "FileNotFoundError")
    assert fnf.exc_line.line == 52
    uf = innermost_user_frame(fnf)
    assert (uf.file.endswith("utils/YParams.py"), uf.line, uf.func) == (True, 16, "__init__")
    assert first_failure(lines).rank == 0
    assert "First failure: rank 0 host c561-007.stampede3.tacc.utexas.edu" in render_text(summarize(lines))


def test_first_rank_to_print_a_traceback_when_no_summary():
    ff = first_failure(load("ascend_npu_rank7.log"))
    assert (ff.rank, ff.source, ff.line.line) == (7, "traceback", 22)


def _rank_tb(rank: int, exc: str, where: str = "step") -> List[str]:
    p = f"[rank{rank}]: "
    return [p + "Traceback (most recent call last):", p + '  File "/work/train.py", line 88, in <module>',
            p + "    main()", p + f'  File "/work/train.py", line 61, in {where}', p + "    loss.backward()", p + exc]


def _entry(i: int, rank: int, sec: int) -> List[str]:
    """One entry of torchrun's ChildFailedError report."""
    return [f"[{i}]:", f"  time      : 2026-03-02_10:00:0{sec}", "  host      : node7",
            f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : 1 (pid: {4000 + rank})", "  error_file: <N/A>",
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]


def _summary(root: int, others: List[int], t0: int = 2) -> List[str]:
    """torchrun's ChildFailedError report: the other failures first, the root cause last, as torchrun prints."""
    out = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60, "train.py FAILED",
           "-" * 60, "Failures:"]
    for i, r in enumerate(others, 1):
        out += _entry(i, r, t0 + i)
    return out + ["-" * 60, "Root Cause (first observed failure):"] + _entry(0, root, t0) + ["=" * 60]


def _lines(rows: List[str], path: str = "train.log") -> List[Line]:
    return [Line(path, i, t) for i, t in enumerate(rows, 1)]


# ranks 5, 2 and 0 fail in that order: rank 5 with the real error, the other two with its consequence
_THREE_RANKS = (["step 90 loss 2.1", "[rank1]: step 91 loss 2.0"]
                + _rank_tb(5, "RuntimeError: CUDA error: an illegal memory access was encountered")
                + ["[rank3]: step 92 loss 2.0"]
                + _rank_tb(2, "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 2.")
                + _rank_tb(0, "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 0."))


def test_first_failing_rank_is_the_first_of_several_ranks_to_print_a_traceback():
    lines = _lines(_THREE_RANKS)
    ff = first_failure(lines)
    assert (ff.rank, ff.source) == (5, "traceback")
    assert ff.line.text == "[rank5]: RuntimeError: CUDA error: an illegal memory access was encountered"
    assert summarize(lines)["first_failure"]["rank"] == 5
    fs = detect(Bundle(root=".", target=".", logs=[LogText("train.log", 0, lines, True)]))
    (f,) = [f for f in fs if f.id == "traceback.first-failing-rank"]
    assert f.rank == 5 and f.claim.startswith("rank 5 printed its traceback first of 3 ranks")
    (nccl,) = [f for f in fs if f.claim.startswith("“torch.distributed.DistBackendError")]
    assert "on rank 2 first; 2 ranks raised the same" in nccl.claim  # the earlier of the two, not the later


@pytest.mark.parametrize("printed", ["in the order they failed", "rank 5 last"])
def test_torchrun_root_cause_names_the_first_failing_rank(printed):
    if printed == "rank 5 last":  # stderr is buffered differently per rank; torchrun still saw rank 5 die first
        rows = (_rank_tb(2, "ValueError: consequence") + _rank_tb(0, "ValueError: consequence")
                + _rank_tb(5, "RuntimeError: CUDA error: an illegal memory access was encountered"))
    else:
        rows = list(_THREE_RANKS)
    rows += _summary(root=5, others=[2, 0])
    lines = _lines(rows)
    ff = first_failure(lines)
    assert (ff.rank, ff.root_cause, ff.source, ff.time) == (5, True, "elastic-summary", "2026-03-02_10:00:02")
    assert [(r.rank, r.root_cause) for r in rank_failures(lines)] == [(2, False), (0, False), (5, True)]
    assert "First failure: rank 5 host node7" in render_text(summarize(lines))
    (f,) = [f for f in detect(Bundle(root=".", target=".", logs=[LogText("train.log", 0, lines, True)]))
            if f.id == "traceback.first-failing-rank"]
    assert f.claim.startswith("rank 5 (host node7) failed first at 2026-03-02_10:00:02")
    assert f.evidence[0].text == "  rank      : 5 (local_rank: 5)"


def test_the_last_torchrun_summary_of_a_restarted_run_names_the_first_failure():
    rows = (_rank_tb(3, "ValueError: first attempt") + _summary(root=3, others=[1])
            + ["restarting: attempt 2"] + _rank_tb(6, "OSError: [Errno 28] No space left on device")
            + _summary(root=6, others=[4], t0=5))
    lines = _lines(rows)
    ff = first_failure(lines)
    assert (ff.rank, ff.time) == (6, "2026-03-02_10:00:05")
    root_line = rows.index("  rank      : 6 (local_rank: 6)") + 1  # in the second summary's root-cause entry
    assert ff.line.line == root_line
    assert summarize(lines)["first_failure"]["rank"] == 6
    (f,) = [f for f in detect(Bundle(root=".", target=".", logs=[LogText("train.log", 0, lines, True)]))
            if f.id == "traceback.first-failing-rank"]
    assert f.rank == 6 and f.evidence[0].line == root_line


def test_without_any_root_cause_the_first_listed_failure_is_used():
    rows = ["Failures:"] + _entry(1, 4, 3) + _entry(2, 1, 4) + ["=" * 60]
    lines = _lines(rows)
    assert [r.rank for r in rank_failures(lines)] == [4, 1]
    ff = first_failure(lines)
    assert (ff.rank, ff.root_cause) == (4, False)


# ---------------------------------------------------------------- an exception line with no traceback

def _bare(rows: List[str]) -> List[Finding]:
    lines = _lines(rows)
    return bare_exception.detect(Bundle(root=".", target=".", logs=[LogText("train.log", 0, lines, True)]))


def test_the_last_bare_exception_line_of_a_log_is_its_error():
    rows = ["ValueError: could not parse config value 'lr'", "step 1 loss 2.3", "[rank1]: KeyError: 'labels'",
            "step 2 loss 2.2", "[rank3]: RuntimeError: The size of tensor a (4) must match the size of tensor b (3)",
            "shutting down"]
    (f,) = _bare(rows)
    assert f.claim == ("“RuntimeError: The size of tensor a (4) must match the size of tensor b (3)” "
                       "(the log's last exception line; no traceback around it)")
    assert f.evidence[0].line == 5 and f.suggests == "crash"


def test_a_bare_exception_line_the_catalog_knows_is_the_catalogs_finding():
    """One line, one cause: the catalog's entry (its class, role, family) speaks for a message it knows; a second,
    generic "crash" finding on the same line would outvote an entry that calls it a downstream echo."""
    rows = ["step 2 loss 2.2", "[rank3]: RuntimeError: CUDA error: an illegal memory access was encountered"]
    assert _bare(rows) == []
    rows = ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1347, "
            "remote process exited or there was a network error, NCCL version 2.18.5"]  # NVIDIA/nccl#934
    assert _bare(rows) == []


def test_bare_exception_lines_behind_every_launcher_prefix_are_read():
    for prefix in ("", "[rank2]: ", "[default2]:", "[2]<stderr>:", "[1,2]<stderr>: ", "2: ", "stderr: ",
                   "2026-03-02T10:00:00.123Z [rank2]: "):
        (f,) = _bare(["step 1 loss 2.0", prefix + "AssertionError: batch size must be even"])
        assert f.claim.startswith("“AssertionError: batch size must be even”"), prefix
    assert _bare(["step 1", "[INFO] ValueError: x is only a log message"]) == []  # not a launcher prefix
    # a launcher's own summary of a child failure is not the failure
    assert _bare(["subprocess.CalledProcessError: Command '['python', 'train.py']' returned 1"]) == []


# ---------------------------------------------------------------- launcher prefixes (trainwreck.collect.ranks)

@pytest.mark.parametrize("text,key,rank,body", [
    ("[rank3]: loss 2.1", "[rank3]:", 3, "loss 2.1"),
    ("rank3]: loss 2.1", "[rank3]:", 3, "loss 2.1"),  # the line was cut before its "["
    ("[default3]:loss 2.1", "[default3]:", 3, "loss 2.1"),
    ("[3]<stderr>:loss 2.1", "[3]<stderr>:", 3, "loss 2.1"),
    ("[1,3]<stderr>:loss 2.1", "[1,3]<stderr>:", 3, "loss 2.1"),
    ("3: loss 2.1", "3:", 3, "loss 2.1"),
    ("stderr: loss 2.1", "stderr:", None, "loss 2.1"),
    ("stderr: [rank3]: loss 2.1", "stderr:[rank3]:", 3, "loss 2.1"),
    ("11: [rank11]:[E617 15:17:35.5 ProcessGroupNCCL.cpp:681] x", "11:[rank11]:", 11,
     "[E617 15:17:35.5 ProcessGroupNCCL.cpp:681] x"),
    ("2026-03-02T10:00:00.123Z [rank3]: loss 2.1", "[rank3]:", 3, "loss 2.1"),
    ("2026-03-02 10:00:00 rank3]: loss 2.1", "", None, "2026-03-02 10:00:00 rank3]: loss 2.1"),
    ("  [rank3]: loss 2.1", "", None, "  [rank3]: loss 2.1"),  # streams start at column 0
    ("[0]:", "", None, "[0]:"),  # an entry of torchrun's failure summary, not a rank tag
    ("12345: x", "", None, "12345: x"),
])
def test_split_stream(text, key, rank, body):
    assert split_stream(text) == (key, rank, body)


def test_rank_of_a_line_for_every_launcher_and_mention():
    assert prefix_rank("  3: loss 2.1") == 3  # srun pads its labels
    assert prefix_rank("[Rank 3] watchdog") is None and line_rank("[Rank 3] watchdog") == 3
    assert line_rank("[1,3]<stderr>:INFO:tensorflow:loss = 2.1 on rank 0") == 3  # who printed it comes first
    assert line_rank("(PID:1, Device:3, RankID:7) ERR02200") == 7
    assert line_rank("global_rank=5 loss nan") == 5 and line_rank("loss nan") is None


def test_strip_prefixes_leaves_the_message():
    assert strip_prefixes("[1,3]<stderr>:[2026-03-02 10:00:00,123] [INFO] [stage2.py:1628:step] OVERFLOW!") == (
        3, "OVERFLOW!")
    assert strip_prefixes("(RayTrainWorker pid=4242) 2026-03-02T10:00:00Z CUDA out of memory") == (
        None, "CUDA out of memory")
    assert strip_prefixes("I1203 12:00:00.123456 123 nccl.cc:42] [rank2] NCCL WARN x") == (2, "NCCL WARN x")
    assert strip_prefixes("host-1:1234:5678 [3] NCCL INFO Channel 00") == (None, "NCCL INFO Channel 00")
    assert strip_prefixes("loss went NaN [step 3]") == (None, "loss went NaN [step 3]")


def test_world_size_counts_ranks_from_every_launcher_prefix():
    rows = [f"[1,{r}]<stderr>:INFO:tensorflow:cross_entropy = 3.2, step = {s}" for s in range(3) for r in range(4)]
    b = Bundle(root=".", target=".", logs=[LogText("train.log", 0, _lines(rows), True)])
    (f,) = stack.detect(b)
    assert "4 ranks" in f.claim


_TAG_ST = st.one_of(st.integers(0, 99999).map(lambda r: (f"[rank{r}]: ", r)),
                    st.integers(0, 99999).map(lambda r: (f"[default{r}]:", r)),
                    st.integers(0, 99999).map(lambda r: (f"[{r}]<stderr>:", r)),
                    st.tuples(st.integers(0, 9), st.integers(0, 999)).map(lambda t: (f"[{t[0]},{t[1]}]<stdout>:", t[1])),
                    st.integers(0, 9999).map(lambda r: (f"{r}: ", r)),
                    st.just(("stderr: ", None)))
_BODY_ST = st.text(max_size=40).map(lambda s: "x " + s)  # a message: it starts like no tag and no record prefix
_ISO_ST = st.sampled_from(["", "2026-03-02T10:00:00Z ", "2026-03-02 10:00:00,123 ", "2026-03-02T10:00:00.5+01:00 "])


@settings(max_examples=300, deadline=None)
@given(_ISO_ST, st.lists(_TAG_ST, min_size=1, max_size=3), _BODY_ST, st.sampled_from(["", " ", "   ", "\t"]))
def test_launcher_tags_are_split_off_and_the_first_rank_named_wins(iso, tags, body, blanks):
    line = iso + "".join(t for t, _ in tags) + body
    first = next((r for _, r in tags if r is not None), None)
    assert split_stream(line) == ("".join(t.replace(" ", "") for t, _ in tags), first, body)
    assert split_stream(blanks + line) == (("", None, blanks + line) if blanks else split_stream(line))
    assert launcher_prefix(blanks + line) == (first, body)
    assert prefix_rank(blanks + line) == first
    assert strip_prefixes(blanks + line) == (first, body)
    assert line_rank(line + " rank 99999") == (first if first is not None else 99999)


_PIECES_ST = st.lists(st.one_of(st.sampled_from(["[rank3]: ", "rank3]:", "[default3]:", "[3]<stderr>:", "[1,3]<stdout>:",
                                                 "3: ", "stderr: ", "2026-03-02T10:00:00Z ", "[INFO] ", " ", "[",
                                                 "(RayTrainWorker pid=7) ", "I1203 12:00:00.1 12 a.cc:4] ", "rank 5",
                                                 "\n", "\u3000"]),
                                st.text(max_size=6)), max_size=6).map("".join)


@settings(max_examples=500, deadline=None)
@given(_PIECES_ST)
def test_prefix_parsers_only_ever_remove_a_prefix_and_agree(text):
    key, rank, body = split_stream(text)
    assert text.endswith(body)
    if not key:
        assert (rank, body) == (None, text)
    else:
        assert len(body) < len(text) and ("[" + text[:len(text) - len(body)].replace(" ", "")).endswith(key)
    r, rest = launcher_prefix(text)
    assert text.endswith(rest) and r == split_stream(text.lstrip())[1] == prefix_rank(text)
    r2, msg = strip_prefixes(text)
    assert rest.endswith(msg) and (r is None or r2 == r)
    if r is not None:  # who printed the line wins over any rank the message names
        assert line_rank(text) == r


# ---------------------------------------------------------------- chains

def test_during_handling_of_a_stopiteration_roots_at_the_later_exception():
    (t,) = find_tracebacks(load("vietocr_stopiteration.log"))
    assert t.chain_kind == "during-handling" and t.chained_from.exc_type == "StopIteration"
    assert t.chained_from.headless and t.chained_from.exc_line.line == 7
    root = root_exception(t)
    assert root is t  # StopIteration is caught on purpose; the second one says the loader yields nothing
    uf = innermost_user_frame(root)
    assert (uf.file.endswith("vietocr/model/trainer.py"), uf.line, uf.func) == (True, 103, "train")


def test_direct_cause_roots_at_the_cause_even_when_the_rest_is_cut_off():
    lines = load("hydra_omegaconf_direct_cause.log")
    (t,) = find_tracebacks(lines)
    assert t.truncated and t.cut == "end" and t.chain_kind == "direct-cause"
    assert t.last_visible.line == 18 and t.last_visible.text.endswith("site-packag")
    root = root_exception(t)
    assert (root.exc_type, root.message, root.exc_line.line) == ("ValueError", "HydraConfig was not set", 11)
    text = render_text(summarize(lines))
    assert "TRUNCATED: the log ends mid-traceback; last visible line 18: File \"/private/home/" in text
    fs = detect(bundle_of("hydra_omegaconf_direct_cause.log"))
    (rootf,) = [f for f in fs if f.id == "traceback.root-exception"]
    assert rootf.claim.startswith("“ValueError: HydraConfig was not set” raised in library code at "
                                  "hydra/core/hydra_config.py:31 (get)")
    assert rootf.evidence[0].line == 11
    (cut,) = [f for f in fs if f.id == "traceback.truncated"]
    assert cut.claim.startswith("log cut off mid-traceback; last visible line 18: “File \"/private/home/")
    assert (cut.role, cut.label) == ("context", "DIRECT")


def test_dataloader_worker_error_embedded_in_the_message_is_the_root():
    (t,) = find_tracebacks(load("dataloader_worker_keyerror_chain.log"))
    assert t.headline == "Caught KeyError in DataLoader worker process 0."
    assert t.chain_kind == "embedded"
    root = root_exception(t)
    assert (root.exc_type, root.message, root.exc_line.line) == ("KeyError", "13815", 24)
    uf = chain_user_frame(t)  # the pandas lookup has no user frame; the worker traceback after it does
    assert (uf.file.endswith("DatasetGenerator.py"), uf.line, uf.func) == (True, 107, "getBalancedSample")
    (f,) = [f for f in detect(bundle_of("dataloader_worker_keyerror_chain.log"))
            if f.id == "traceback.root-exception"]
    assert f.claim.startswith("“KeyError: 13815” raised in Task_Recognition/DatasetGenerator.py:107 "
                              "(getBalancedSample)")
    assert "re-raised it as “KeyError: Caught KeyError in DataLoader worker process 0.”" in f.claim
    assert [e.line for e in f.evidence] == [24, 37, 16, 45]


def test_jax_pseudo_exception_is_not_a_root():
    (t,) = find_tracebacks(load("jax_simplified_py310.log"))
    assert t.jax_filtered and t.chained_from is None and t.truncated
    assert t.last_visible.line == 9
    (t2,) = find_tracebacks(load("jax_filtered_py311.log"))
    assert t2.jax_filtered and t2.exc_type == "jax.errors.TracerBoolConversionError"
    assert t2.message.splitlines() == [
        "Attempted boolean conversion of traced array with shape float32[]..",
        "See https://jax.readthedocs.io/en/latest/errors.html#jax.errors.TracerBoolConversionError"]
    assert (innermost_user_frame(t2).file, innermost_user_frame(t2).line) == ("file.py", 5)


def test_exception_group_roots_at_its_first_sub_exception():
    (t,) = find_tracebacks(load("hypothesis_exception_group.log"))
    assert t.exc_type == "ExceptionGroup" and len(t.sub_exceptions) == 2
    root = root_exception(t)
    assert root.exc_type == "AssertionError"
    assert root.headline == "Cache key collision: ['a:', 'b'] and ['a', ':b'] produce same key"
    assert root.exc_line.line == 17 and root.exc_line.text.startswith("    | AssertionError")  # verbatim
    uf = innermost_user_frame(root)
    assert (uf.file.endswith("hypo.py"), uf.line) == (True, 20)
    s = summarize(load("hypothesis_exception_group.log"))
    assert [x["headline"][:20] for x in s["tracebacks"][0]["sub_exceptions"]] == ["Cache key collision:"] * 2


# ---------------------------------------------------------------- messages, prefixes, truncation

def test_multiline_message_keeps_all_lines_and_headline_is_the_first():
    (t,) = find_tracebacks(load("eleddnet_multiline_runtimeerror.log"))
    assert t.headline == "CUDA error: an illegal memory access was encountered"
    assert len(t.message.splitlines()) == 3
    assert (innermost_user_frame(t).file, innermost_user_frame(t).line) == ("train.py", 95)


def test_npu_message_with_its_own_traceback_word_is_one_exception():
    (t,) = find_tracebacks(load("ascend_npu_rank7.log"))
    assert t.rank == 7 and t.exc_type == "RuntimeError"
    assert t.headline.startswith("npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:435")
    assert "TraceBack (most recent call last):" in t.message and "EE1002" in t.message
    assert innermost_user_frame(t) is None and len(t.frames) == 10
    (f,) = [f for f in detect(bundle_of("ascend_npu_rank7.log")) if f.id == "traceback.root-exception"]
    assert f.stage == "startup"  # dataset preprocessing barrier, before the first step


def test_cpp_backtrace_is_counted_not_kept_in_the_message():
    (t,) = find_tracebacks(load("zooming_slomo_cublas_cpp.log"))
    assert t.cpp_frames == 1 and "frame #0" not in t.message
    assert t.message.startswith("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
    assert "createCublasHandle at" in t.cpp_origin
    assert (innermost_user_frame(t).func, innermost_user_frame(t).line) == ("backward", 44)


def test_carets_are_not_code():
    (t,) = find_tracebacks(load("cerebrum_unbound_carets.log"))
    uf = innermost_user_frame(t)
    assert (uf.line, uf.func) == (606, "main")
    assert uf.code == "model_path = f'{MODELS_PATH}/epoch-{epoch + 1}-{format(loss)}.pt'"
    assert t.exc_type == "UnboundLocalError" and t.exc_line.line == 25


def test_logging_prefix_on_every_line():
    (t,) = find_tracebacks(load("dolly_logging_prefixed.log"))
    assert (t.exc_type, t.message) == ("OSError", "[Errno 28] No space left on device")
    assert [(f.func, f.line) for f in t.frames] == [("save", 379), ("_save", 604)]
    assert innermost_user_frame(t) is None and infer_stage(t) == "checkpoint"


def test_tqdm_bar_before_the_header_and_cut_off_traceback():
    lines = load("opensora_tqdm_truncated.log")
    (t,) = find_tracebacks(lines)
    assert t.start.line == 1 and t.truncated and t.last_visible.line == 5
    assert (innermost_user_frame(t).line, innermost_user_frame(t).func) == (371, "main")
    (f,) = [f for f in detect(bundle_of("opensora_tqdm_truncated.log")) if f.id == "traceback.truncated"]
    assert f.claim.startswith("log cut off mid-traceback; last visible line 5: “"
                              "booster.backward(loss=loss, optimizer=optimizer)")


def test_rank_traceback_cut_off():
    (t,) = find_tracebacks(load("eomt_rank1_oom_cut.log"))
    assert t.rank == 1 and t.truncated and t.last_visible.line == 17
    assert innermost_user_frame(t).func == "fit"


def test_hydra_overrides_are_kept():
    (t,) = find_tracebacks(load("mujoco_hydra_overrides.log"))
    assert t.hydra_overrides.startswith("['task=dexart_laptop', 'training.debug=False'")
    assert t.truncated and t.last_visible.line == 19


def test_head_and_tail_of_a_big_log_are_not_joined_and_the_head_end_is_not_a_cut():
    lines = load("cerebrum_unbound_carets.log")
    head, tail = lines[:21], lines[23:]  # the head ends inside the traceback; the tail starts inside it
    b = Bundle(root=".", target=".", logs=[LogText("cerebrum_unbound_carets.log", 0, tail, False, head=head)])
    fs = detect(b)
    assert not [f for f in fs if f.id == "traceback.truncated"]
    (t,) = [t for t in find_tracebacks(head + tail) if t.truncated]
    assert t.cut == "gap"


def test_render_text_gives_root_then_user_frame():
    text = render_text(summarize(load("dataloader_worker_keyerror_chain.log")))
    first, second = text.splitlines()[:2]
    assert first.startswith("1. KeyError: 13815")
    assert "in your code: " in second and "DatasetGenerator.py:107 in getBalancedSample" in second


def test_small_format_variants():
    """Prefix styles the fixtures above do not cover (format as printed by the tools, minimal content)."""
    rows = ["[default3]:Traceback (most recent call last):",
            '[default3]:  File "/work/train.py", line 12, in <module>',
            "[default3]:    main()",
            "3: Traceback (most recent call last):",
            '3:   File "/work/eval.py", line 40, in evaluate',
            "3:     out = model(x)",
            "[default3]:ValueError: bad shape",
            "3: RuntimeError: CUDA error: an illegal memory access was encountered",
            "3: Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 "
            "(most recent call first):",
            "3: frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in libc10.so)",
            "3: frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int) + 0x64 (0x7f in lib)"]
    tbs = find_tracebacks([Line("x.log", i, t) for i, t in enumerate(rows, 1)])
    by = {t.exc_type: t for t in tbs}
    assert by["ValueError"].rank == 3 and by["ValueError"].frames[0].line == 12
    rt = by["RuntimeError"]
    assert rt.cpp_frames == 2 and rt.cpp_origin.startswith("Exception raised from c10_cuda_check_implementation")
    assert rt.message == "CUDA error: an illegal memory access was encountered"
    assert infer_stage(rt) == "evaluation"


# ---------------------------------------------------------------- robustness and speed

def test_every_corpus_log_with_a_traceback_yields_one():
    for log in sorted(CORPUS.glob("*/train.log")):
        text = log.read_text(encoding="utf-8", errors="replace")
        lines = [Line(log.parent.name, i, t) for i, t in enumerate(text.split("\n"), 1)]
        tbs = find_tracebacks(lines)
        render_text(summarize(lines))
        if "Traceback (most recent call last):" in text:
            assert tbs, log.parent.name


def test_fifty_thousand_ordinary_lines_are_fast():
    lines = []
    for i in range(50_000):
        if i % 3 == 0:
            t = (f"[titan] 2026-01-16 02:43:35,918 - root - INFO - step: {i}  loss:  2.3367  grad_norm:  0.4648  "
                 f"memory: 69.83GiB(88.19%)  tps: 42,332")
        elif i % 3 == 1:
            t = f"[rank{i % 8}]: {i % 100}%|#####     | {i}/50000 [00:52<17:32,  0.08it/s] File saved"
        else:
            t = f"W0116 02:43:46.167000 846088 torch/distributed/elastic/multiprocessing/api.py:1010] step {i}"
        lines.append(Line("big.log", i + 1, t))
    t0 = time.perf_counter()
    assert find_tracebacks(lines) == []
    s = summarize(lines)
    elapsed = time.perf_counter() - t0
    assert s["tracebacks"] == [] and s["first_failure"] is None
    assert elapsed < 1.5, elapsed


PIECES = ["Traceback (most recent call last):", '  File "/x/train.py", line 3, in main', "    main()",
          "    ^^^^^^", "ValueError: boom", "KeyboardInterrupt", "", "The above exception was the direct "
          "cause of the following exception:", "During handling of the above exception, another exception occurred:",
          "  + Exception Group Traceback (most recent call last):", "  | ValueError: x", "  +-+---------------- 1 ----",
          "    | Traceback (most recent call last):", "    +------------------------------------",
          "Root Cause (first observed failure):", "[0]:", "  rank      : 3 (local_rank: 3)",
          "  exitcode  : -9 (pid: 1)", "Failures:", "frame #0: c10::Error", "Exception raised from x",
          "Original Traceback (most recent call last):", '"""', "jax.errors.SimplifiedTraceback: For simplicity",
          "Error executing job with overrides: []", "[rank1]: ", "[1,0]<stderr>:", "3: ", "stderr: ", "\r", "\n"]


_ROWS = st.lists(st.tuples(
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=20)), max_size=3).map("".join),
    st.one_of(st.none(), st.integers(min_value=-2, max_value=60)),
    st.sampled_from(["a.log", "b.log"])), max_size=40)
_PLANTED = ["[rank9]: Traceback (most recent call last):", '[rank9]:   File "/work/planted.py", line 7, in main',
            "[rank9]:     explode()", "[rank9]: ZeroDivisionError: division by zero"]


def _cited_lines_are_input_lines(lines: List[Line], cited: List[Line]) -> None:
    by_key: dict = {}
    for ln in lines:
        by_key.setdefault((ln.path, ln.line), []).append(ln.text)
    for c in cited:  # a line with several records in it ("\r", "\n") is cited record by record
        assert any(c.text in t for t in by_key.get((c.path, c.line), [])), c


@settings(max_examples=300, deadline=None)
@given(_ROWS, _ROWS)
def test_a_traceback_among_arbitrary_lines_is_found_whole(before, after):
    planted = [Line("planted.log", i, t) for i, t in enumerate(_PLANTED, 1)]
    lines = [Line(p, n, t) for t, n, p in before] + planted + [Line(p, n, t) for t, n, p in after]
    tbs = find_tracebacks(lines)
    (t,) = [t for t in tbs if t.exc_line is planted[3]]
    assert (t.exc_type, t.message, t.rank, t.start, t.truncated) == (
        "ZeroDivisionError", "division by zero", 9, planted[0], False)
    assert [(f.file, f.line, f.func, f.code, f.log_line) for f in t.frames] == [
        ("/work/planted.py", 7, "main", "explode()", planted[1])]
    assert root_exception(t) is t and chain_user_frame(t) is t.frames[0]
    cited = [x for h in tbs for m in chain(h) for x in [m.start, m.exc_line, m.end, m.last_visible]
             + [f.log_line for f in m.frames] if x is not None]
    _cited_lines_are_input_lines(lines, cited)
    s = summarize(lines)
    assert s["lines"] == len(lines) and len(s["tracebacks"]) == len(tbs)
    assert json.loads(json.dumps(s)) == s
    assert "ZeroDivisionError: division by zero  (planted.log:4)" in render_text(s)
    ff = first_failure(lines)
    assert ff is not None  # rank 9 printed a traceback, so some rank failed first
    fs = detect(Bundle(root=".", target=".", logs=[LogText("a.log", 0, lines, True)]))
    (root,) = [f for f in fs if f.id == "traceback.root-exception" and f.evidence[0].path == "planted.log"]
    assert root.claim == "“ZeroDivisionError: division by zero” raised in /work/planted.py:7 (main) on rank 9"
    assert root.rank == 9 and [(e.path, e.line) for e in root.evidence] == [("planted.log", 4), ("planted.log", 2)]
    _cited_lines_are_input_lines(lines, [Line(e.path, e.line, e.text) for f in fs for e in f.evidence])


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.log")))
def test_detector_findings_cite_real_lines(name):
    lines = load(name)
    json.dumps(summarize(lines))  # JSON-ready
    texts = {(ln.path, ln.line): ln.text for ln in lines}
    for f in detect(bundle_of(name)):
        assert f.evidence, f
        for e in f.evidence:
            assert texts[(e.path, e.line)] == e.text
        if f.id == "traceback.root-exception":
            assert f.order == float(f.evidence[0].line - 1)  # index of the exception line in the lines analysed
            assert f.suggests == "crash" and f.label == "DIRECT"


ALL_FIXTURE_LINES = [ln for p in sorted(DATA.glob("*.log")) for ln in load(p.name)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ALL_FIXTURE_LINES), max_size=120))
def test_never_raises_on_shuffled_real_lines(lines):
    for t in find_tracebacks(lines):
        assert root_exception(t) is not None
    render_text(summarize(lines))
