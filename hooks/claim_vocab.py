"""Vocabularies of the evidence guard, and the small helpers that match them.

The vocabularies are plain strings.  A string starting with a CJK character is matched
as a substring; an ASCII one is matched on word boundaries against a normalised
sentence (" word word word "), and a trailing "*" makes it a prefix ("caus*").
Nothing here compiles a large regular expression: this is imported on every Stop.
"""
import re

# Phrases that name a cause outright.
CAUSAL = [
    # English
    "root cause*", "root-cause*", "underlying cause", "actual cause", "real cause", "main cause",
    "primary cause", "proximate cause", "the cause", "cause of", "caused", "causes the", "causing",
    "is causing", "culprit*", "to blame", "is responsible for", "are responsible for",
    "was responsible for", "were responsible for", "the reason", "reason is", "reason was",
    "is what",
    "explains the", "explains why", "which explains", "that explains", "this explains",
    "explained by", "what broke", "what killed", "what kills", "what breaks", "what caused",
    "what causes", "what's causing", "what is causing", "what triggered", "what's killing",
    "what is killing", "killed it", "killed the job", "killed the run", "killed the process", "killed the training",
    "took it down", "took down the",
    "comes down to", "boils down to", "source of the", "the problem is", "the problem was",
    "the issue is", "the issue was", "the bug is", "the bug was", "attributable to",
    "a symptom of", "downstream of", "a consequence of", "consequence of the", "is the result of",
    "this happens because", "this happened because", "it happens because", "it happened because",
    "that happens because", "this is because", "that's because", "that is because", "it's because",
    "it is because", "it was because",
    # German
    "ursache*", "verursacht*", "liegt an", "lag an", "liegt daran", "grund ist", "grund dafür",
    "zurückzuführen", "schuld",
    # French
    "la cause", "cause racine", "causé*", "causée*", "provoqué*", "provoquée*", "l'origine",
    "responsable", "coupable",
    # Spanish / Portuguese / Italian
    "la causa", "causa raíz", "causado*", "causada*", "provocado*", "provocada*", "el origen",
    "culpable", "causato*", "per colpa",
    # Russian
    "причина", "вызван*",
    # Chinese
    "原因是", "原因在于", "原因为", "根本原因", "根因", "罪魁祸首", "归因", "问题在于", "问题出在",
    # Japanese
    "原因は", "原因です", "が原因", "の原因", "に起因", "起因し",
    # Korean
    "원인은", "원인이",
]


# Connectives that make a causal claim only when the sentence also names a failure:
# "the NaN comes from fp16 overflow" is one, "data comes from a streaming dataset" is not.
CAUSAL_WEAK = [
    "because", "due to", "owing to", "results from", "resulted from", "resulting from",
    "as a result of", "stems from", "stemmed from", "stemming from", "comes from", "came from",
    "coming from", "come from", "originates", "originated", "triggered by", "triggers the",
    "triggered the", "driven by", "leads to", "led to",
    "leading to", "produces the", "produced the", "killed by", "blew up", "blows up",
    "makes the loss", "made the loss", "thanks to", "that's why", "that is why", "which is why",
    "this is why", "is why", "kommen von", "kam von", "kamen von", "stammt", "stammen", "vient d'*",
    "viennent d'*", "is from", "are from", "was from", "were from",
    "daher", "deshalb", "dadurch", "donc", "ce qui", "por lo que", "así que", "所以", "因此", "从而",
    "于是", "そのため", "なので", "ので", "c'est la faute", "la faute",
    "weil", "wegen", "aufgrund", "auf grund", "kommt von", "kommt daher", "rührt", "ausgelöst",
    "à cause", "parce que", "parce qu'*", "est dû", "est due", "sont dus", "sont dues", "en raison",
    "vient de", "vient du", "viennent de", "s'explique", "déclench*", "debido a", "se debe",
    "porque", "origina*", "a causa", "devido a", "dovuto a", "perché", "из-за", "потому что",
    "导致", "引起", "造成", "由于", "因为", "源于", "所致", "引き起こ", "せいで", "せいです",
    "によるもの", "のためです", "ためです", "ため、", "によって", "때문", "로 인해", "으로 인해",
]


# Words for something going wrong; a weak connective needs one of them in its sentence.
SYMPTOM = [
    "nan", "nans", "inf", "infs", "oom", "ooms", "out of memory", "crash*", "hang", "hangs", "hung",
    "hanging", "stall*", "stuck", "freez*", "froze", "deadlock*", "diverg*", "explod*", "blew up",
    "blow up", "blows up", "spike*", "plateau*", "flat", "fail*", "error*", "exception*", "timeout*",
    "timed out", "time out", "killed", "kill*", "assert*", "abort*", "overflow*", "underflow*",
    "mismatch*", "slow*", "leak*", "problem*", "issue*", "bug*", "wrong", "instabilit*", "unstable",
    "died", "dies", "collapse*", "corrupt*", "not decreasing", "not learning", "not converging",
    "doesn't converge", "rises", "rose", "jump*", "degrad*", "worse", "skipp*", "happens",
    "happened", "too high", "too low", "too large", "too small", "too big", "too much", "too many",
    "non-finite", "infinite", "oom-*", "full", "vanish*", "zero", "slower", "stops", "stopped", "404", "undefined", "broke*", "breaks", "loss", "losses",
    "grad_norm", "grad norm", "accuracy", "chance", "never", "ran out", "runs out", "run out",
    "no space", "out of disk", "out of space", "no longer fits", "doesn't fit", "does not fit",
    "don't fit", "do not fit",
    "fehler*", "absturz", "abgestürzt", "hängt", "divergiert", "überlauf", "zu hoch", "zu groß",
    "erreur*", "plant*", "bloqu*", "échoue*", "échec", "diverge", "trop élevé", "trop grand",
    "falla*", "fallo", "cuelga", "explot*", "demasiado", "错误", "报错", "崩溃", "卡住", "超时",
    "失败", "溢出", "爆炸", "不足", "发散", "太高", "太大", "エラー", "失敗", "クラッシュ", "止ま",
    "発散", "不足", "高すぎ", "大きすぎ", "오류", "너무",
]


HEDGE = [
    # English
    "might", "may", "could be", "could have", "could also", "could cause", "could come",
    "could explain", "could lead", "could trigger", "possibly", "possible", "possibility",
    "perhaps", "maybe", "probably", "likely", "unlikely", "suspect*", "i think", "i believe",
    "i guess", "guess", "seems", "seem", "appears to", "appear to", "looks like", "look like",
    "hypothes*", "candidate*", "speculat*", "hunch", "theory", "not sure", "not certain",
    "not yet", "unconfirmed", "not confirmed", "unverified", "not verified", "haven't verified",
    "have not verified", "haven't confirmed", "have not confirmed", "unclear", "unknown",
    "uncertain", "don't know", "do not know", "don't yet know", "do not yet know",
    "can't tell", "cannot tell", "can't say", "cannot say", "can't determine",
    "cannot determine", "can't confirm", "cannot confirm", "hard to say", "to be confirmed",
    "to be determined", "to confirm", "to verify", "need to confirm", "needs confirmation",
    "would need", "assuming", "suppose", "supposing", "whether", "in general",
    "generally", "often", "usually", "typically", "commonly", "common cause*", "frequently",
    "sometimes", "tend to", "tends to", "can cause", "can be caused", "can lead", "can happen",
    "can result", "can trigger", "can come", "can produce", "next probe", "not enough evidence",
    "no evidence yet", "without evidence", "without the log*", "without seeing", "one option",
    "i can't find", "i cannot find", "i couldn't find", "i could not find", "no idea", "not obvious",
    "best guess", "rarely", "seldom", "not always", "typical", "haven't looked", "have not looked",
    "haven't checked", "have not checked", "suggests", "suggest", "would explain",
    "would be consistent", "consistent with", "potential*", "plausibl*", "presumabl*",
    "conceivabl*", "hard to tell", "difficult to say", "difficult to tell", "impossible to say",
    "impossible to tell", "before saying", "before claiming", "before concluding", "before i claim",
    "before i say", "before naming", "before i name", "i'd want", "i would want", "tbd",
    "doesn't tell", "does not tell", "don't tell", "haven't found", "have not found",
    "haven't identified", "have not identified", "haven't pinned", "enough evidence",
    "enough information", "enough info", "need more", "need the log*", "need to see", "yet to",
    # German
    "vielleicht", "möglicherweise", "möglich", "eventuell", "vermutlich", "wahrscheinlich",
    "könnte", "könnten", "dürfte", "hypothese*", "vermute*", "scheint", "unklar", "nicht sicher",
    "noch nicht", "weiß nicht", "weiß noch nicht", "häufig", "oft",
    "typischerweise", "meistens", "unbestätigt", "verdacht", "keine ahnung",
    # French
    "peut-être", "peut être", "pourrait", "pourraient", "probablement", "possiblement",
    "hypothèse*", "je pense", "je crois", "semble", "il se peut", "pas encore", "pas sûr",
    "incertain", "inconnu*", "souvent", "généralement", "typiquement", "soupçonne",
    "suppose", "vraisemblablement",
    # Spanish / Portuguese / Italian
    "quizás", "quizá", "tal vez", "podría", "podrían", "posiblemente", "probablemente",
    "hipótesis", "sospecho", "parece", "no estoy seguro", "no estoy segura", "todavía no",
    "aún no", "desconocid*", "a menudo", "normalmente", "suele", "talvez", "pode ser",
    "forse", "potrebbe", "probabilmente", "ipotesi",
    # Russian
    "возможно", "вероятно", "может быть", "гипотез*",
    # Chinese
    "可能", "也许", "或许", "大概", "假设", "猜测", "推测", "怀疑", "似乎", "好像", "不确定",
    "尚未", "还不", "不清楚", "未知", "待确认", "需要确认", "有待", "如果", "假如", "若是",
    "通常", "一般", "往往", "常见", "不一定", "不知道",
    # Japanese
    "かもしれ", "可能性", "仮説", "考えられ", "断定でき", "わかりません", "分かりません", "特定でき", "おそらく", "恐らく", "たぶん", "多分", "思われ", "と思い",
    "と思う", "推測", "ようです", "ような", "みたい", "不明", "まだ", "確認が必要", "もし",
    "一般的", "通常", "疑い", "らしい", "わかりません", "分かりません",
    # Korean
    "아마", "가능성", "가설", "것 같",
]


# A sentence that opens like this is a plan or an announcement, not a finding.
PLAN_START = [
    "let me", "let's", "lets", "i'll", "i will", "i'm going to", "i am going to", "we'll",
    "we will", "i need to", "we need to", "i want to", "i'd like to", "i would like to",
    "next i", "next, i", "first i", "first, i", "to find", "to determine", "to confirm",
    "to verify", "to check", "to narrow", "to pin down", "plan", "next step", "next steps",
    "step 1", "checking", "looking", "i'm checking", "i'm looking", "i'm going",
    "ich werde", "lass mich", "ich prüfe", "ich schaue", "als nächstes", "zuerst",
    "je vais", "vérifions", "regardons", "d'abord", "voy a", "vamos a", "primero",
    "让我", "我先", "我会", "我将", "我来", "下一步", "接下来", "首先",
    "確認します", "調べます", "次に", "まず",
]


# A sentence that opens like this is conditional or general.
HEDGE_START = ["if", "when", "in case", "wenn", "falls", "si", "s'il", "cuando", "如果",
               "假如", "要是", "もし", "만약"]


# "I renamed X because Y": a report of the assistant's own edit, not a diagnosis.
ACTION_VERBS = {"changed", "renamed", "added", "updated", "moved", "removed", "replaced", "edited", "wrote",
                "created", "refactored", "kept", "used", "switched", "set", "made", "implemented", "bumped",
                "pinned", "deleted", "fixed", "wrapped", "split", "extracted", "simplified", "reverted", "left",
                "chose", "went", "put", "dropped", "rewrote", "converted", "marked", "skipped", "disabled",
                "enabled", "installed", "upgraded", "downgraded", "modified", "adjusted", "restructured"}


_ACTION_SUBJ = ("i ", "i've ", "i have ", "i also ", "i just ", "we ", "we've ", "i then ", "then i ")


# A message that says outright it does not know the cause yet: its "because ..." sentences are
# background, not a diagnosis (explicit "root cause is X" sentences still count).
UNCERTAIN = [
    "don't yet know", "do not yet know", "don't know yet", "do not know yet", "don't know why",
    "don't know what", "do not know why", "do not know what", "can't tell yet", "cannot tell yet",
    "can't tell what", "can't tell why", "cannot tell what", "not sure yet", "not sure what",
    "not sure why", "unclear what", "unclear why", "is still unclear", "is unclear", "is unknown",
    "is not yet known", "can't say what", "can't say why", "cannot say what", "haven't verified",
    "have not verified", "haven't confirmed", "have not confirmed", "no idea", "i can't say",
    "i cannot say", "i can only guess", "haven't found", "have not found", "don't have enough",
    "do not have enough", "weiß noch nicht", "weiß nicht", "noch unklar",
    "ne sais pas encore", "ne sais pas", "pas encore clair", "todavía no sé", "aún no sé", "no sé",
    "还不确定", "不确定", "还不清楚", "不知道", "わかりません", "分かりません", "不明",
]

# Section headings / line labels.
CLAIM_LABELS = [
    "root cause*", "cause", "the cause", "diagnosis", "reason", "culprit",
    "why it failed", "why it crashed", "why it diverged", "why it hangs", "why it hung",
    "why the loss", "verdict", "conclusion", "what went wrong", "why it happened", "why this happens",
    "why this happened",
    "ursache*", "diagnose", "grund", "cause racine", "cause", "diagnostic", "causa*",
    "diagnóstico", "razón", "根本原因", "原因", "根因", "原因分析", "诊断", "結論", "结论",
    "診断", "原因", "причина", "원인",
]


HEDGE_LABELS = [
    "hypothesis", "hypotheses", "hypothesis*", "possible cause*", "possible reason*",
    "potential cause*", "candidate*", "suspect*", "guess", "theory", "theories", "next probe",
    "open question*", "unknown*", "h1", "h2", "h3", "what i don't know", "not yet known",
    "hypothese*", "vermutung", "mögliche ursache*", "hypothèse*", "causes possibles",
    "cause possible", "hipótesis", "posibles causas", "posible causa", "假设", "猜测",
    "可能的原因", "可能原因", "仮説", "考えられる原因", "推測", "гипотеза",
]


FIX_LABELS = [
    "fix", "fixes", "fix*", "suggested fix*", "proposed fix*", "solution*", "remedy",
    "remediation", "workaround*", "mitigation*", "next step*", "recommendation*", "recommended*",
    "to verify", "verify", "verification", "how to fix", "how to verify", "try", "try this",
    "what to try", "what to change", "change", "changes", "action*", "todo", "to do",
    "lösung*", "behebung", "empfehlung*", "nächste schritte", "correctif*", "correction*",
    "prochaines étapes", "recommandation*", "solución", "soluciones", "arreglo", "próximos pasos",
    "recomendación*", "修复", "解决", "解决方案", "建议", "对策", "修复方法", "下一步",
    "対策", "修正", "解決策", "対処", "次のステップ", "исправление", "해결",
]


# The message is about a failed or misbehaving training run.
# The vocabulary of training runs.  One strong word puts a text in the domain; weak words
# (NaN, OOM, checkpoint, rank: also at home in JavaScript, Kubernetes or databases) need a
# second, different one.
DOMAIN = [
    "cuda", "cudnn", "cublas", "nccl", "hccl", "gloo", "rccl", "gpu", "gpus", "vram", "hbm",
    "gradient*", "grad", "grads", "grad_norm", "grad norm", "loss", "losses", "loss_scale",
    "learning rate", "learning_rate", "lr", "lr_scheduler", "warmup", "adam", "adamw", "sgd",
    "fp16", "bf16", "fp8", "mixed precision", "autocast", "gradscaler", "loss scale", "epochs",
    "training", "trainer", "train run", "fine-tun*", "finetun*", "pretrain*", "dataloader*",
    "data loader", "num_workers", "micro-batch*", "microbatch*", "exploding", "vanishing",
    "deepspeed", "zero-3", "zero3", "fsdp", "ddp", "megatron", "torch", "pytorch", "pytorch_lightning",
    "lightning_logs", "tensorflow", "keras", "jax", "xla", "tpu", "npu", "transformers", "allreduce",
    "all_reduce", "all-reduce", "allgather", "logits", "softmax", "activations", "seq_len",
    "sequence length", "autograd", "wandb", "tensorboard", "backward pass", "forward pass",
    "cuda kernel", "optimizer step", "optimizer.step", "sft", "dpo", "rlhf", "ppo", "grpo", "lora", "qlora",
    "peft", "embedding", "embeddings", "vocab", "vocab_size", "tokenizer", "special tokens", "reward model",
    "reference model", "policy model", "val_loss", "val_ppl", "perplexity", "dataloader", "nvlink", "infiniband",
    "ecc", "xid", "модел", "трейн", "валидац", "датасет", "diagnoser", "trainwreck", "orbax", "flash_attn",
    "flashattention", "attention", "ray train", "raytrainworker", "xgboost", "lightgbm", "catboost", "logloss",
    "overfit*", "scikit-learn", "sklearn", "ultralytics", "yolov*", "mmdet*", "detectron*", "diffusers", "fairseq",
    "flash-attn", "flash attention", "illegal memory access", "cu_seqlens", "varlen",
    "verlust", "lernrate", "gradienten", "trainings", "entraînement", "apprentissage",
    "d'apprentissage", "pérdida",
    "entrenamiento", "aprendizaje", "gradientes", "обучени", "训练", "损失", "学习率", "显存", "梯度",
    "学習", "損失", "学習率", "勾配", "학습", "손실",
]
DOMAIN_WEAK = [
    "nan", "nans", "inf", "infs", "not a number", "oom", "ooms", "out of memory", "outofmemory*",
    "out-of-memory", "oom-killer", "oom killer", "oom-*", "oomkilled", "checkpoint*", "batch size",
    "batch_size", "rank", "ranks", "collective*", "converge", "convergence", "plateau*", "accuracy",
    "diverg*", "overflow*", "optimizer*", "epoch", "crash*", "deadlock*", "hang", "hangs", "hung",
    "segmentation fault", "segfault*", "sigsegv", "core dumped", "dataset", "datasets", "shard", "shards", "s/it",
    "it/s", "gib", "mib", "aborted",
    "perte", "plantage", "speicher", "mémoire", "memoria", "内存", "发散",
    "溢出", "卡住", "崩溃", "批大小", "メモリ", "発散", "オーバーフロー", "クラッシュ", "バッチ", "메모리",
]
# Phrases that use a domain word in another sense.
DOMAIN_STOP = [" data loss ", " packet loss ", " unix epoch ", " the epoch ", " since epoch ",
               " query optimizer ", " stack overflow ", " integer overflow ", " buffer overflow "]


# Words before a quote that make it a proposal (a fix, a command to run), not evidence.
PROPOSAL = [
    "set", "setting", "use", "try", "switch*", "change", "changing", "lower", "lowering",
    "reduce", "reducing", "raise", "raising", "increase", "increasing", "decrease",
    "decreasing", "add", "adding", "enable", "disable", "replace", "pass", "rerun",
    "re-run", "reran", "re-ran", "relaunch*", "install", "upgrade", "downgrade", "pin", "apply", "fix", "fixes", "recommend*",
    "suggest*", "should", "would", "could", "consider", "instead", "e.g", "eg", "example",
    "want", "need", "put", "wrap", "call", "clip", "halve", "double", "cap", "export",
    "launch", "restart", "resume", "edit", "patch", "modify", "update", "bump", "revert",
    "remove", "drop", "turn", "keep", "leave", "make sure", "ensure", "go with", "prefer", "cut", "shrink", "limit", "enforce",
    "if", "when", "whether", "like",
    "setze*", "verwende*", "nutze*", "ändere*", "reduziere*", "senke*", "erhöhe*", "füge",
    "hinzufügen", "aktiviere*", "deaktiviere*", "ersetze*", "versuche", "probiere",
    "sollte*", "empfehle", "stattdessen", "starte",
    "mettre", "mets", "mettez", "utiliser", "utilisez", "réduire", "réduisez", "baisser",
    "baissez", "augmenter", "augmentez", "ajouter", "ajoutez", "activer", "activez",
    "désactiver", "remplacer", "remplacez", "essayer", "essayez", "relancer", "relancez",
    "devrait", "devriez", "recommande", "conseille", "plutôt", "passer", "passez", "usa", "usar", "reducir", "baja", "bajar", "aumenta", "aumentar",
    "añade", "añadir", "agrega", "activa", "desactiva", "reemplaza", "cambia", "cambiar",
    "prueba", "probar", "debería", "deberías", "recomiendo", "sugiero", "pon", "poner",
    "establece",
    "设置", "设为", "设成", "改为", "改成", "换成", "使用", "降低", "调低", "减小", "减少",
    "增大", "提高", "加上", "添加", "加入", "启用", "开启", "关闭", "禁用", "替换", "尝试",
    "试试", "建议", "应该", "重新运行", "重跑",
    "設定", "変更", "使用", "使う", "使って", "下げ", "減らし", "減らす", "上げ", "増や",
    "追加", "有効", "無効", "置き換え", "試して", "推奨", "べき", "再実行", "にして",
]


# Right before a quote, these say the text is absent, not quoted: "never calls `x`".
NEGATION = ["never", "not", "no", "without", "missing", "lacks", "lack", "absent", "isn't", "doesn't",
            "don't", "didn't", "wasn't", "aren't", "nowhere", "instead of", "rather than", "nicht",
            "kein*", "ohne", "pas", "sans", "jamais", "sin", "nunca", "没有", "缺少", "ない", "なし"]


# Words that present a quote as something a tool printed.
EVIDENCE_CUE = ["evidence", "excerpt", "has", "have", "currently", "current", "log", "logs", "shows", "showed", "says", "said", "reads", "printed", "prints",
                "output", "reports", "reported", "line", "lines", "traceback", "contains", "from the log",
                "zeigt", "steht", "montre", "indique", "muestra", "dice", "显示", "日志", "ログ"]


# Words that make a bare number general knowledge, not a reading from this run.
GENERAL_NUMBER = [
    "max", "maximum", "minimum", "min", "limit", "range", "default", "defaults", "typical",
    "typically", "usually", "common", "recommended", "around", "about", "approximately",
    "roughly", "~", "≈", "such as", "e.g", "like", "only", "up to", "than", "ln", "above", "below",
    "exceed*", "beyond", "threshold", "overflows", "range", "at most", "at least",
]


# Words in a quote that make it look like a log line or an error message.
LOG_STRONG = [
    "error", "errors", "exception", "traceback", "warning", "warn", "fatal", "failed", "failure",
    "killed", "abort", "aborted", "aborting", "segmentation", "core dumped", "sigkill", "sigsegv",
    "sigabrt", "sigterm", "signal", "oom", "out of memory", "outofmemoryerror", "cuda", "cudnn",
    "cublas", "nccl", "hccl", "gloo", "nan", "inf", "overflow", "underflow", "timeout",
    "timed out", "watchdog", "deadlock", "exitcode", "exit code", "returned non-zero", "assert",
    "assertion", "illegal", "invalid", "cannot", "could not", "unable", "not found",
    "no such file", "errno", "tried to allocate", "runtimeerror", "valueerror", "keyerror",
    "indexerror", "typeerror", "importerror", "modulenotfounderror", "oserror", "memoryerror",
    "resource_exhausted", "resource exhausted", "skipping step", "loss scale", "gradient overflow",
]


LOG_WEAK = ["loss", "step", "epoch", "iter", "grad", "norm", "grad_norm", "lr", "rank",
            "gpu", "allocated", "reserved", "memory", "free", "total", "capacity", "gib", "mib"]


CODE_LANGS = {"python", "py", "python3", "yaml", "yml", "bash", "sh", "shell", "zsh", "diff",
              "patch", "json", "toml", "ini", "cfg", "conf", "dockerfile", "js", "ts", "cpp", "c",
              "cuda", "ipython", "jsonc"}


SHELL_STARTS = ("python ", "python3 ", "torchrun ", "accelerate ", "deepspeed ", "pip ", "cd ",
                "export ", "git ", "conda ", "srun ", "sbatch ", "CUDA_VISIBLE_DEVICES=",
                "NCCL_", "TORCH_", "PYTORCH_", "bash ", "sh ", "uv ", "mpirun ", "make ", "grep ",
                "egrep ", "rg ", "tail ", "head ", "cat ", "less ", "ls ", "awk ", "sed ", "find ",
                "wc ", "jq ", "du ", "df ", "free ", "dmesg", "journalctl", "nvidia-smi", "npu-smi",
                "trainwreck ", "pytest ", "env ", "sudo ", "tensorboard ", "wandb ", "kill ",
                "ps ", "top", "py-spy ", "gdb ", "strace ", "/trainwreck:")


_WORD = re.compile(r"[\w'’.\-~≈]+")


def _is_cjk(s):
    return bool(s) and ord(s[0]) >= 0x2E80


def _prep(words):
    """Split a vocabulary into (padded ascii phrases, ascii prefixes, cjk substrings)."""
    exact, prefix, cjk = [], [], []
    for w in words:
        if _is_cjk(w):
            cjk.append(w)
        elif w.endswith("*"):
            prefix.append(" " + w[:-1])
        else:
            exact.append(" " + w + " ")
    return exact, prefix, cjk


_CJK_EDGE = re.compile(r"(?<=[A-Za-z0-9_])(?=[\u2e80-\uffff])|(?<=[\u2e80-\uffff])(?=[A-Za-z0-9_])")


def norm_words(text):
    """' lowercased words separated by single spaces ', with ASCII words cut out of CJK runs
    ("OOMの原因" -> "oom の原因"); hyphenated words appear a second time split ("fp16-overflow")."""
    text = text.lower().replace("\u2019", "'")
    if not text.isascii():
        text = _CJK_EDGE.sub(" ", text)
    words = " ".join(w.strip(".'-") or w for w in _WORD.findall(text))
    if "-" in words:
        words += " " + words.replace("-", " ")
    return " " + words + " "


def _has(norm, raw, vocab):
    exact, prefix, cjk = vocab
    for p in exact:
        if p in norm:
            return True
    for p in prefix:
        if p in norm:
            return True
    for p in cjk:
        if p in raw:
            return True
    return False


V_CAUSAL, V_HEDGE, V_PLAN = _prep(CAUSAL), _prep(HEDGE), _prep(PLAN_START)


V_WEAK, V_SYMPTOM = _prep(CAUSAL_WEAK), _prep(SYMPTOM)


V_HEDGE_START, V_UNCERTAIN = _prep(HEDGE_START), _prep(UNCERTAIN)


V_CLAIM_L, V_HEDGE_L, V_FIX_L = _prep(CLAIM_LABELS), _prep(HEDGE_LABELS), _prep(FIX_LABELS)


V_DOMAIN, V_PROPOSAL, V_GENNUM = _prep(DOMAIN), _prep(PROPOSAL), _prep(GENERAL_NUMBER)
V_DOMAIN_WEAK = _prep(DOMAIN_WEAK)


V_NEGATION, V_EVIDENCE = _prep(NEGATION), _prep(EVIDENCE_CUE)


V_LOG_STRONG, V_LOG_WEAK = _prep(LOG_STRONG), _prep(LOG_WEAK)


# a heading that is the one word "Why" introduces the explanation (only the whole heading: "What to check and why"
# is a plan)
WHY_LABELS = {"why", "warum", "pourquoi", "por qué", "perché", "为什么", "なぜ", "왜"}


def _label_kind(label):
    """'claim' | 'hedge' | 'fix' | None for a heading or a 'Label:' prefix."""
    n = norm_words(label)
    raw = label.lower()
    if len(n.split()) > 7:
        return None
    if raw.strip(" #*_:?¿？") in WHY_LABELS:
        return "claim"
    if _has(n, raw, V_FIX_L):
        return "fix"
    if _has(n, raw, V_HEDGE_L) or _has(n, raw, V_HEDGE):
        return "hedge"
    if _has(n, raw, V_CLAIM_L):
        return "claim"
    return None


def _starts_with(norm, raw, vocab):
    exact, prefix, cjk = vocab
    head = norm[:40]
    for p in exact + prefix:
        if head.startswith(p):
            return True
    r = raw.lstrip(" -*>#0123456789.)")
    return any(r.startswith(p) for p in cjk)



def in_domain(text):
    """True when text talks about a training run: one strong domain word or two weak ones."""
    if not isinstance(text, str) or not text.strip():
        return False
    text = text[:200000]
    raw = text.lower()
    n = norm_words(text)
    for stop in DOMAIN_STOP:
        n = n.replace(stop, " ")
    if _has(n, raw, V_DOMAIN):
        return True
    exact, prefix, cjk = V_DOMAIN_WEAK
    hits = sum(1 for p in exact + prefix if p in n) + sum(1 for p in cjk if p in raw)
    return hits >= 2
