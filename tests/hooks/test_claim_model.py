"""The claim model of issue 11, rule by rule, in-process: an explaining answer is a claim in any phrasing; a
report of what happened, a hedged reply, an answer to a general question are not; the quotes it checks (indented
code, message lines, table cells holding pipes, approximate readings) and those it does not (notation, flags)."""
import claim_detector
import evidence_guard
import pytest
import transcript_tail
from transcripts import Transcript, stop_payload

PROMPT = "why did my run die? it's in runs/exp1"


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    return tmp_path


def _no_tool(data, msg, prompt=PROMPT, sid="s"):
    t = Transcript(seed="m-" + sid)
    t.prompt(prompt)
    t.say(msg)
    return evidence_guard.decide(stop_payload(sid, t.write(str(data / (sid + ".jsonl"))), str(data), msg))


@pytest.mark.parametrize("msg", [
    "It's the NFS mount. The checkpoint write stalled and rank 0 blocks forever. Move checkpoints to local NVMe.",
    "yeah thats the grad accumulation thing — you divide the loss by 8 twice, so the effective lr is 8x smaller.",
    "Your beta is too low: with β=0.01 the policy drifts away from the reference model. Set β to 0.1.",
    "That one was a hardware fault: the GPU behind rank 12 hit an uncorrectable ECC error.",
    "The stalls are torch.compile recompiling for every new sequence length. Pad to a few fixed buckets.",
    "O motivo é simples: o warmup é curto demais para batch 1024 e os gradientes explodem.",
    "Found it: an InfiniBand link error on rank 3's node dropped the allreduce, and the watchdog killed the job.",
])
def test_an_unhedged_explaining_answer_with_no_tool_is_blocked(data, msg):
    reason = _no_tool(data, msg, sid="x%d" % (hash(msg) % 1000))
    assert reason and msg.split(".")[0].split(":")[0] in reason        # the claim, as written


@pytest.mark.parametrize("msg,prompt", [
    ("The run went NaN at step 400; the loss was 2.31 at step 390.", PROMPT),                       # what happened
    ("It might be the warmup: with no warmup the first updates are large. Check the lr schedule.", PROMPT),
    ("One possibility is the LR schedule restarted. Another is that the optimizer state wasn't loaded, so "
     "Adam's moments start from zero.", PROMPT),                                                    # alternatives
    ("fp16 has 5 exponent bits, so its max is 65504; that's why AMP scales the loss.",
     "why do people use loss scaling with fp16 but not with bf16?"),                                # general
    ("It died at step 1200. Restart from the last checkpoint and keep an eye on it.", PROMPT),      # no setting
    ("Epoch 2 finished normally, then partway into epoch 3 the loss is NaN. The excerpt doesn't say what made it "
     "NaN; point me at the full log and I can look.", PROMPT),                                      # cause unknown
])
def test_reports_hedges_alternatives_and_general_answers_pass(data, msg, prompt):
    assert _no_tool(data, msg, prompt, sid="y%d" % (hash(msg) % 1000)) is None


def test_a_general_question_about_a_failure_of_the_users_is_not_general():
    assert claim_detector.general_question("in general, is bf16 safer than fp16?")
    assert not claim_detector.general_question("in general, why did my run go NaN?")
    assert not claim_detector.general_question("what's the root cause?")
    assert not claim_detector.general_question("deepspeed says Current loss scale already at minimum. what's up")


def test_an_indented_code_block_is_quoted_evidence_but_a_list_continuation_is_not():
    a = claim_detector.analyse("It's the network. Right before the watchdog there's\n\n"
                               "    NCCL WARN NET/IB : Got completion with error 12, opcode 0\n\n"
                               "which is an InfiniBand error.")
    assert [q.text for q in a.quotes] == ["NCCL WARN NET/IB : Got completion with error 12, opcode 0"]
    b = claim_detector.analyse("- the run\n\n    step 12 loss=nan continues the item\n")
    assert b.quotes == []


def test_message_lines_table_cells_and_readings_are_quotes_notation_and_flags_are_not():
    a = claim_detector.analyse("The Trainer warned `UserWarning: Detected call of lr_scheduler.step() before "
                               "optimizer.step()`, so the schedule is shifted.")
    assert [q.kind for q in a.quotes] == ["text"]
    t = claim_detector.analyse("| step | log |\n|---|---|\n| 2100 | `step 2100 | loss 3.04 | grad_norm 18432.0` |\n")
    assert [q.text for q in t.quotes] == ["step 2100 | loss 3.04 | grad_norm 18432.0"]
    n = claim_detector.analyse("The target is outside `[0, n_classes)` and `log(0) = -inf`; common fixes: "
                               "`--clip-norm 0.1`. It crashed because of it.")
    assert n.quotes == []
    r = claim_detector.analyse("It's overfitting: val_loss bottoms out at ~0.348, then climbs to 0.3817.")
    assert [(q.text, q.kind) for q in r.readings] == [("0.348", "approx"), ("0.3817", "number")]


def test_a_follow_up_citing_earlier_readings_in_prose_is_backed(data):
    t = Transcript(seed="readings")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "tail -n 3 runs/exp1/metrics.csv"},
           "epoch,val_loss\n12,0.3481726\n13,0.3817\n14,0.4295")
    t.say("Here are the last epochs.")
    t.end_turn()
    t.prompt("so why is val f1 tanking?")
    msg = ("It's overfitting: val_loss bottoms out at ~0.348 in epoch 12, then climbs to 0.3817 and 0.4295, so the "
           "model is memorising the training set.")
    t.say(msg)
    path = t.write(str(data / "r.jsonl"))
    assert evidence_guard.decide(stop_payload("r", path, str(data), msg)) is None
    wrong = msg.replace("0.3817", "0.3917")
    t.say(wrong)
    t.write(path)
    assert evidence_guard.decide(stop_payload("r2", path, str(data), wrong))          # one reading never printed


def test_a_probe_that_could_not_run_backs_nothing(data):
    t = Transcript(seed="probe")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "cat runs/exp1/train.log"}, "Exit code 1\ncat: runs/exp1/train.log: No such file or "
           "directory", is_error=True)
    msg = "It's the learning rate: 3.0 is far too high for this model. Set it to 3e-4."
    t.say(msg)
    path = t.write(str(data / "p.jsonl"))
    assert evidence_guard.decide(stop_payload("p", path, str(data), msg))
    assert not transcript_tail._has_output("Exit code 1\ncat: x: No such file or directory")
    assert transcript_tail._has_output("Exit code 1\nTraceback (most recent call last):\n  File \"train.py\"")


def test_a_number_at_a_quotes_end_is_a_whole_number_of_the_source():
    import quote_match
    src = quote_match.Sources()
    src.add("warmup_steps: 200000\nmax_steps: 50000\nTried to allocate 13.12 GiB")
    assert not quote_match.found("warmup_steps: 20000", "text", src)          # a digit dropped: another reading
    assert quote_match.found("warmup_steps: 200000", "text", src)
    assert not quote_match.found("3.12 GiB", "text", src)
    assert quote_match.found("max_steps: 50000", "text", src)


def test_status_codes_frames_and_shown_readings_are_quotes():
    a = claim_detector.analyse("It's a cuBLAS failure: `CUBLAS_STATUS_EXECUTION_FAILED` inside the GEMM, so the "
                               "process dies.")
    assert [q.text for q in a.quotes] == ["CUBLAS_STATUS_EXECUTION_FAILED"]
    b = claim_detector.analyse("It's attention. The traceback bottoms out in `flash_attn_varlen_func`, so the "
                               "allocation is the attention workspace.")
    assert [q.text for q in b.quotes] == ["flash_attn_varlen_func"]
    c = claim_detector.analyse("The resume log shows `global_step=0` after loading, so the scheduler restarted.")
    assert [q.text for q in c.quotes] == ["global_step=0"]
    d = claim_detector.analyse("The dump says `len(tokenizer)=32005`, so the embedding is too small.")
    assert [q.text for q in d.quotes] == ["len(tokenizer)=32005"]
    e = claim_detector.analyse("Set `NCCL_DEBUG` to `INFO` and resume from `last.ckpt`; the hang is the network.")
    assert e.quotes == []                                                       # settings and names, not quotes


# ---------------------------------------------------------------- from the review of the issue-11 diff

def _decide_t(data, t, msg, sid):
    return evidence_guard.decide(stop_payload(sid, t.write(str(data / (sid + ".jsonl"))), str(data), msg))


def _follow_up(data, outputs, question, msg, sid):
    """A turn that ran `outputs` (one Bash call each), then a no-tool follow-up answering `question` with `msg`."""
    t = Transcript(seed=sid)
    t.prompt(PROMPT)
    for i, out in enumerate(outputs):
        t.tool("Bash", {"command": "sed -n %dp train.log" % (i + 1)}, out)
    t.say("Here is what it printed.")
    t.end_turn()
    t.prompt(question)
    t.say(msg)
    return _decide_t(data, t, msg, sid)


def test_an_ellipsis_quote_whose_parts_sit_in_two_earlier_outputs_is_found(data):
    msg = "The root cause is the batch size: `RuntimeError: CUDA out of memory ... Tried to allocate 2.00 GiB`."
    assert _follow_up(data, ["RuntimeError: CUDA out of memory on device cuda:0", "Tried to allocate 2.00 GiB"],
                      "so what is the root cause?", msg, "ell") is None


def test_an_earlier_output_with_colour_codes_inside_a_word_still_backs_a_quote(data):
    msg = "It ran out of memory: `torch.cuda.OutOfMemoryError: CUDA out of memory`, so the batch is too big."
    assert _follow_up(data, ["\x1b[31mtorch.cuda\x1b[0m.OutOfMemoryError: CUDA out of memory"],
                      "so why did it die?", msg, "ansi") is None


def test_what_an_edit_shows_of_the_assistants_own_text_is_not_evidence(data):
    t = Transcript(seed="edit")
    t.prompt(PROMPT)
    t.tool("Edit", {"file_path": "/p/notes.md", "old_string": "x", "new_string": "step 48 loss=nan grad_norm=inf"},
           "The file /p/notes.md has been updated. Here's the result of running `cat -n` on a snippet of the edited "
           "file:\n     1\u2192step 48 loss=nan grad_norm=inf")
    rec = [r for r in t.records if r.get("type") == "user" and isinstance(r["message"]["content"], list)][-1]
    rec["toolUseResult"] = {"filePath": "/p/notes.md", "oldString": "x", "newString": "step 48 loss=nan grad_norm=inf",
                            "structuredPatch": []}
    t.tool("Bash", {"command": "ls"}, "notes.md\nruns")
    msg = "The log shows `step 48 loss=nan grad_norm=inf`, so the root cause is the lr."
    t.say(msg)
    assert "step 48 loss=nan grad_norm=inf" in (_decide_t(data, t, msg, "edit") or "")


@pytest.mark.parametrize("prompt", ["what's going on with exp3? logs are in runs/exp3/train.log",
                                    "what do the logs in runs/exp3 say"])
def test_a_question_about_a_named_run_is_not_general_and_its_fabricated_quote_is_blocked(data, prompt):
    assert not claim_detector.general_question(prompt)
    t = Transcript(seed="gen")
    t.prompt(prompt)
    t.tool("Bash", {"command": "ls runs/exp3"}, "train.log\nconfig.yaml")
    msg = "The root cause is a learning rate that is too high: the log shows `step 48 loss=nan grad_norm=inf`."
    t.say(msg)
    assert _decide_t(data, t, msg, "gen%d" % len(prompt))


def test_near_misses_of_a_number_are_tried_a_bounded_number_of_times():
    import quote_match
    few = "12.5 " * 10 + "2.5"
    assert quote_match._find(few, "2.5") == len(few) - 3              # the whole number, past ten near misses
    many = "12.5 " * (quote_match.FIND_TRIES + 10) + "2.5"
    assert quote_match._find(many, "2.5") == 1                         # past the bound: the plain match (no block)


# ---------------------------------------------------------------- b5's dev part (issue 11, next session)

def test_a_status_code_message_with_words_is_a_quote_to_find():
    a = claim_detector.analyse("The first forward dies with `CUBLAS_STATUS_ALLOC_FAILED when calling "
                               "cublasCreate(handle)`, so cuBLAS could not get its workspace.")
    assert [q.text for q in a.quotes] == ["CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)"]
    b = claim_detector.analyse("It's the clipping: `clip_grad_norm_(p, 1.0)` runs after the step, so it does "
                               "nothing.")
    assert b.quotes == []                                                       # still a code snippet


def test_a_word_changed_in_a_status_message_is_blocked(data):
    t = Transcript(seed="cublas")
    t.prompt(PROMPT)
    t.tool("Bash", {"command": "tail -n 2 runs/exp1/err.log"},
           "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
    ok = "It dies with `CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)`, so cuBLAS ran out of memory."
    t.say(ok)
    path = t.write(str(data / "cb.jsonl"))
    assert evidence_guard.decide(stop_payload("cb", path, str(data), ok)) is None
    wrong = ok.replace("ALLOC_FAILED", "EXECUTION_FAILED").replace("ran out of memory", "hit a bad kernel")
    t.say(wrong)
    t.write(path)
    assert evidence_guard.decide(stop_payload("cb2", path, str(data), wrong))


@pytest.mark.parametrize("msg", [
    "- It crashed in epoch 4 with `CUDA error: an illegal memory access was encountered`.\n"
    "- Root cause not investigated yet; next step is a rerun with CUDA_LAUNCH_BLOCKING=1.",
    "The run stopped at step 900 with an illegal memory access. We haven't identified the root cause yet.",
    "Diagnosis: cause still unknown. The log ends at step 900 with an illegal memory access.",
])
def test_a_reply_saying_the_cause_is_not_known_states_none(data, msg):
    assert _no_tool(data, msg, "ok so to recap for my standup: the bert job died at epoch 4. anything missing?",
                    sid="u%d" % (hash(msg) % 1000)) is None


def test_worked_differences_are_not_readings_and_about_is_a_rounded_one():
    a = claim_detector.analyse("From 0.9104 at epoch 95 to 0.9512 at epoch 98: about +0.04 in three epochs, "
                               "roughly 0.913 on average.")
    assert [(q.text, q.kind) for q in a.readings] == [("0.9104", "number"), ("0.9512", "number"),
                                                      ("0.913", "approx")]


def test_a_follow_up_with_its_own_arithmetic_rests_on_the_earlier_readings(data):
    msg = ("From 0.9104 at epoch 95 to 0.9512 at epoch 98 — about +0.04 (≈4.5%) in three epochs, while train cls "
           "loss went 0.6120 → 0.6052. That widening gap is the overfitting signal.")
    out = "epoch,train/cls_loss,val/cls_loss\n95,0.6120,0.9104\n96,0.6101,0.9281\n98,0.6052,0.9512"
    assert _follow_up(data, [out], "so how much has val cls loss gone up?", msg, "ar") is None
    assert _follow_up(data, [out], "so how much has val cls loss gone up?", msg.replace("0.9512", "0.9612"), "ar2")


def test_a_conditional_fix_does_not_hedge_the_diagnosis_above_it(data):
    msg = ("## Why\nThis is fp16 overflow in the attention softmax: the activations exceed 65504 and the logits "
           "become inf.\n\n## Fix\nIf your GPU has no bf16, keep attention in fp32; otherwise train with bf16.")
    a = claim_detector.analyse(msg)
    assert not a.hedged and a.claims and a.claims[0].startswith("This is fp16 overflow")
    assert _no_tool(data, msg, "my qwen SFT shows loss 0.0 and grad_norm nan, what's going on?", sid="cf")
    hedged = msg.replace("## Why\nThis is", "## Why\nThis might be")
    assert _no_tool(data, hedged, "my qwen SFT shows loss 0.0 and grad_norm nan, what's going on?", sid="cf2") is None


@pytest.mark.parametrize("text", [
    "my xgboost valid-logloss:0.41880 is worse than train-logloss:0.24412",
    "Ray Train worker killed: ray.exceptions.OutOfMemoryError on the node",
    "the lightgbm model overfits after 400 rounds",
])
def test_tabular_ml_and_other_trainers_are_the_domain(text):
    assert claim_detector.analyse_domain(text)


# ---------------------------------------------------------------- from the review of the b5 changes

@pytest.mark.parametrize("msg", [
    "The cause was not clear at first, but the log shows it: fp16 overflow at step 400 caused the NaN, see "
    "`loss=nan at step 400`.",
    "The cause is not clear-cut: the NaN is caused by fp16 overflow at step 400, as `loss=nan at step 400` shows.",
])
def test_an_unknown_cause_phrase_does_not_hide_the_claim_after_it(data, msg):
    assert _no_tool(data, msg, sid="k%d" % (hash(msg) % 1000))


def test_a_hedge_under_a_fix_heading_still_hedges(data):
    msg = ("The loss went NaN at step 900 and the run stopped there.\n\n## Fix\nIt might be the fp16 loss scaler "
           "underflowing; if so, switch to bf16.")
    assert _no_tool(data, msg, sid="fh") is None


def test_only_a_why_heading_of_its_own_introduces_a_claim(data):
    msg = "## What to check next and why\nThe training log would show the first NaN step.\n\n1. Rerun with anomaly detection."
    assert _no_tool(data, msg, sid="wh") is None


def test_a_difference_with_a_minus_sign_is_not_a_reading():
    a = claim_detector.analyse("It fell from 0.9512 to 0.9104, a change of −0.0408, and then by - 0.0121 more.")
    assert [q.text for q in a.readings] == ["0.9512", "0.9104"]


# ---------------------------------------------------------------- b6's dev part

def test_a_hyphenated_adverb_describes_it_does_not_hedge():
    a = claim_detector.analyse("That's the Adam epsilon interaction in bf16: the update blows up for rarely-seen "
                               "tokens and the embedding norm explodes.")
    assert not a.hedged and a.claims
    b = claim_detector.analyse("That's rarely the Adam epsilon: the update blows up and the embedding norm explodes.")
    assert b.hedged and not b.claims


def test_a_code_span_that_ends_a_sentence_ends_it(data):
    t = Transcript(seed="ncclq")
    t.prompt("why did the deepspeed job in runs/pt-7b die?")
    t.tool("Bash", {"command": "grep -n Watchdog runs/pt-7b/rank5.log"},
           "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1092611, OpType=ALLREDUCE, "
           "Timeout(ms)=1800000) ran for 1800094 milliseconds before timing out.")
    msg = ("NCCL watchdog killed it. The all-reduce hit the timeout: `WorkNCCL(SeqNum=1092611, OpType=ALLREDUCE, "
           "Timeout(ms)=600000) ran for 600094 milliseconds before timing out.` One rank stopped, most likely in "
           "data loading.")
    t.say(msg)
    reason = _decide_t(data, t, msg, "nq")
    assert reason and "600094" in reason                                  # the altered reading is named
    assert [s for s, *_ in claim_detector._Walker(claim_detector.Analysis()).walk(msg.splitlines())][2].startswith(
        "One rank stopped")                                               # the hedged sentence is its own


def test_an_agent_that_killed_the_run_is_a_cause_and_a_passive_kill_is_what_happened(data):
    assert _no_tool(data, "The OOM killer killed it at step 4100.", sid="ka")
    assert _no_tool(data, "The run was killed at step 4100; the log ends there.", sid="kb") is None


def test_flash_attention_and_cuda_fault_words_are_the_domain():
    assert claim_detector.analyse_domain("flash-attn 2.6 reads past the end of cu_seqlens in backward")
    assert claim_detector.analyse_domain("an illegal memory access was encountered")


def test_a_hyphenated_proposal_verb_is_still_a_proposal():
    a = claim_detector.analyse("The lr is too high for this batch size, so re-run with `lr=1e-4`.")
    assert a.quotes == []                                                       # a setting to try, not evidence
    b = claim_detector.analyse("The all-reduce hit the timeout: `ran for 600094 milliseconds`, so the job died.")
    assert [q.text for q in b.quotes] == ["ran for 600094 milliseconds"]
