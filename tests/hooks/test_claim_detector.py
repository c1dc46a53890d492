"""The claim detector and the quote matcher on their own (imported, no subprocess)."""
import claim_detector
import pytest
import quote_match

CLAIMS = [
    "The root cause is a learning rate that is too high.",
    "## Root cause\nfp16 overflow in the attention softmax.",
    "**Root cause:** the eval loop keeps the autograd graph alive.",
    "fp16 overflow caused the NaN.",
    "The OOM is due to batch 16 x 4096 without gradient checkpointing.",
    "This happens because the dataloader workers each copy the dataset.",
    "The culprit is `torch.compile` recompiling on every step, which stalls training.",
    "The learning rate is too high, so the loss diverges and becomes NaN.",
    "The NCCL timeout is downstream of rank 3's crash.",
    "The loss is flat because the optimizer never steps.",
    "Der NaN-Verlust wird durch eine zu hohe Lernrate verursacht.",
    "La cause du NaN est un taux d'apprentissage trop élevé.",
    "La pérdida se vuelve NaN debido a una tasa de aprendizaje demasiado alta.",
    "损失变成 NaN 的原因是学习率太高。",
    "学习率太高导致 loss 变成 NaN。",
    "損失が NaN になる原因は学習率が高すぎることです。",
]
NOT_CLAIMS = [
    "Hypothesis: the learning rate is too high.",
    "The NaN might be caused by fp16 overflow.",
    "It may be the dataloader.",
    "Possibly the warmup is missing.",
    "One possibility is that the eval loop keeps the graph alive.",
    "I don't yet know why the loss is NaN; next probe: grep the log for the first NaN.",
    "The most likely cause is the learning rate.",
    "It's probably the learning rate, though I haven't checked the log.",
    "Why is the loss NaN?",
    "Let me check whether the OOM is caused by the eval loop.",
    "If the loss is NaN because of fp16, switching to bf16 fixes it.",
    "NaN losses are often caused by a high learning rate.",
    "Potential root cause: fp16 overflow.",
    "## Possible causes\n- lr too high\n- fp16 overflow",
    "Die Ursache ist noch unklar; als Nächstes prüfe ich die Logs.",
    "Je ne sais pas encore pourquoi l'entraînement se bloque.",
    "Podría ser un problema de memoria compartida, pero todavía no lo he comprobado.",
    "目前还不确定 loss 变成 NaN 的原因。",
    "まだ原因はわかりません。",
    "I renamed `train_step` to `training_step` because Lightning calls that name.",
]


@pytest.mark.parametrize("msg", CLAIMS)
def test_claims(msg):
    a = claim_detector.analyse(msg)
    assert a.claims and a.domain


@pytest.mark.parametrize("msg", NOT_CLAIMS)
def test_not_claims(msg):
    assert not claim_detector.analyse(msg).claims


def test_coding_answer_is_not_in_the_domain():
    a = claim_detector.analyse("The 404 is caused by the trailing slash in the Flask route.")
    assert a.claims and not a.domain


def _quotes(msg):
    return [q.text for q in claim_detector.analyse(msg).quotes]


def test_identifiers_proposals_and_formulas_are_not_quotes():
    msg = ("The root cause is `fp16` without `gradient_clip_val`. Set `gradient_clip_val: 1.0`, lower `lr` to "
           "`1e-4`, and note that the head has `3 * (nc + 5)` channels; `clip_grad_norm_(params, 1.0)` is never "
           "called.\n\n## Fix\n```yaml\ntrainer:\n  gradient_clip_val: 1.0\n```\nRun:\n```bash\npython train.py "
           "trainer.max_steps=10\n```")
    assert _quotes(msg) == []


def test_log_lines_numbers_and_key_values_are_quotes():
    msg = ("The root cause is the lr: the log shows `step 1170 loss=nan lr=3.0e-03`, grad_norm reached `8843.2`, "
           "the config has `warmup_steps: 0`, and the error was \"CUDA out of memory. Tried to allocate 2.00 GiB\".\n"
           "```\nstep 1150 loss=inf lr=3.0e-03\n```\n> RuntimeError: CUDA error: device-side assert triggered\n\n"
           "| step | loss |\n|---|---|\n| 1160 | `inf` |\n| 1170 | `nan` |")
    got = _quotes(msg)
    for want in ("step 1170 loss=nan lr=3.0e-03", "8843.2", "warmup_steps: 0",
                 "CUDA out of memory. Tried to allocate 2.00 GiB", "step 1150 loss=inf lr=3.0e-03",
                 "RuntimeError: CUDA error: device-side assert triggered"):
        assert want in got, (want, got)


@pytest.mark.parametrize("quote,kind,ok", [
    ("step 120 loss=nan lr=3.0", "text", True),
    ("3:step 120 loss=nan lr=3.0", "text", True),
    ("train.log:3: step 120 loss=nan lr=3.0", "text", True),
    ("STEP 120   LOSS=NaN", "text", True),
    ("step 100 loss=2.31 ... step 120 loss=nan", "text", True),
    ("step 100 loss=2.31 … loss=nan", "text", True),
    ("step 100 loss=2.3", "text", True),
    ("step 130 loss=nan", "text", False),
    ("step 120 loss=nan lr=0.3", "text", False),
    ("Tried to allocate 2.00 GiB", "text", True),
    ("Tried to allocate 20.00 GiB", "text", False),
    ("7.94", "number", True),
    ("7.9", "number", True),
    ("9", "number", False),
    ("1.2e5", "number", True),
    ("120", "number", True),
    ("121", "number", False),
])
def test_quote_matching(quote, kind, ok):
    src = quote_match.Sources()
    src.add("step 100 loss=2.31 lr=3.0\nstep 110 loss=7.94 lr=3.0\n3:step 120 loss=nan lr=3.0\n"
            "\x1b[31mtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\x1b[0m\n"
            "grad_norm=123456.7")
    assert quote_match.found(quote, kind, src) is ok
