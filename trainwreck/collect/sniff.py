"""What a file is, from its content: the first bytes decide text vs binary vs compressed, and what kind of text.

Names decide only where they are certain (a reader claims `trainer_state.json`; a `.png` is an image). Every other
regular file is sniffed: its first SNIFF_BYTES (decompressed, for a compressed file) are looked at, and
- binary content is skipped with a note that names the file;
- compressed content is read as a log, through the same bounded primitive, on its decompressed stream;
- text that is JSON lines is a metrics file, CSV with a metric column a metrics table, a JSON/YAML/TOML/XML document
  structured data (no reader: not a log), source code (by its suffix) not evidence;
- documentation (*.md, *.rst) is a log when its content shows a run (a scheduler's report, a traceback, metric
  lines, a model card's training-results table), else it is skipped;
- all other text, whatever its name (train_log.txt, nohup.out, rotated train.log.1, a file with no extension), is a
  log.
Scheduler outputs (Slurm, LSF, PBS, SGE, a Kubernetes pod description or event list) are recognised by their own
words (`scheduler_of`), wherever they sit in the file.
"""
from __future__ import annotations

from typing import Optional

from trainwreck import lazy_re

SNIFF_BYTES = 8192
# not evidence, by name alone (opening thousands of images to learn they are images costs more than it tells)
MEDIA_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp", ".ico", ".svg", ".pdf",
                  ".mp4", ".avi", ".mov", ".mkv", ".webm", ".wav", ".mp3", ".flac", ".ogg", ".npy", ".h5", ".hdf5",
                  ".parquet", ".arrow", ".feather", ".tfrecord", ".lmdb", ".mdb", ".onnx", ".engine", ".tflite",
                  ".pb", ".so", ".pyc", ".zip", ".tar", ".tgz", ".7z", ".rar", ".whl", ".db", ".sqlite", ".ttf",
                  ".woff", ".woff2", ".idx", ".wandb", ".pack")
SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb", ".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".js", ".ts", ".java",
                   ".go", ".rs", ".jl", ".r", ".lua", ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmake", ".mk",
                   ".sbatch", ".slurm", ".pbs", ".lsf", ".html", ".htm", ".css")
# documentation: a log only when its content shows a run (a scheduler's report, a traceback, metric lines, a
# training-results table of a model card), never for prose that mentions errors ("if you see CUDA out of memory…")
DOC_SUFFIXES = (".md", ".markdown", ".rst")
STRUCTURED_SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml", ".proto", ".lock",
                       ".tsv", ".csv")
SOURCE_NAMES = {"Makefile", "Dockerfile", "LICENSE", "CMakeLists.txt", "setup.cfg", "pyproject.toml"}
# a model's or dataset's own text: tokenizer vocabularies and merges, label lists (every HF checkpoint-*/ has some)
DATA_NAMES = {"vocab.txt", "merges.txt", "vocab.json", "labels.txt", "classes.txt", "dict.txt", "spiece.model",
              "tokenizer.model", "sentencepiece.bpe.model", "added_tokens.json"}
WORD_LIST_LINES = 64  # ... and any text whose first lines (at least this many) are single words

_METRIC_HEADER = lazy_re(r"(?i)(^|[,\t/ _])(loss|acc|accuracy|lr|learning_rate|grad_norm|epoch|step|perplexity|"
                         r"ppl|reward|map|f1|bleu|val|train)")
# a scheduler's own words, each unmistakable: the first that matches names the scheduler
_SCHEDULERS = (
    ("lsf", lazy_re(r"Sender: LSF System|# LSBATCH: User input|The output \(if any\) (?:is above this job summary"
                    r"|follows)|TERM_[A-Z]+: job killed after|^Job <[^>]+> was submitted from host", 8)),
    ("slurm", lazy_re(r"slurmstepd(?:-[\w.-]+)?: error|^srun: (?:error|Job step aborted)|\*\*\* (?:JOB|STEP) \d[\d.]* "
                      r"(?:ON \S+ )?CANCELLED AT|SLURM_JOB_ID|^sbatch: error|^salloc: ", 8)),
    ("pbs", lazy_re(r"=>> PBS: |^PBS Job Id: |PBS_JOBID|^Exec host: ", 8)),
    ("sge", lazy_re(r"(?im)\bSGE_TASK_ID\b|Grid Engine|exceeded hard wallclock time|^\$JOB_ID|qmaster")),
    ("kubernetes", lazy_re(r"^Namespace:\s|^\s*(?:Last )?State:\s+(?:Terminated|Waiting|Running)|^Events:\s*$|"
                           r"Back-off restarting failed container|Successfully assigned \S+ to |"
                           r"^LAST SEEN\s+TYPE\s+REASON\s+OBJECT", 8)),
)


_RUN_SHOWN = lazy_re(r"(?im)Traceback \(most recent call last\)|^\|.*\b(?:loss|epoch|step)\b.*\|\s*$")
DOC_METRIC_LINES = 3


def doc_shows_a_run(text: str) -> bool:
    """A documentation file (README.md, a job's .md capture) that holds a run's own output."""
    if scheduler_of(text) or _RUN_SHOWN.search(text):
        return True
    from trainwreck.collect.textmetrics import extract
    found = 0
    for line in text.splitlines()[:400]:
        if extract(line[-2000:]):
            found += 1
            if found >= DOC_METRIC_LINES:
                return True
    return False


_LIST_KEY = lazy_re(rb'"([^"\\]{1,60})"\s*:\s*\[\s*(?:-?\d|NaN\b|-?Infinity\b)')


_NOT_HISTORY = {None, "lr", "epoch", "throughput", "memory", "loss_scale"}


def json_document_kind(head: bytes) -> Optional[str]:
    """'trainer_state' (an HF Trainer state: `log_history`) or 'history' (a Keras-style dict of per-epoch metric
    lists) for the first bytes of a JSON document, whatever the file is called; None for any other document."""
    start = head.lstrip()[:1]
    if start not in (b"{", b"["):
        return None
    if b'"log_history"' in head:
        return "trainer_state"
    from trainwreck.collect.metricnames import canonical
    if start == b"{" and any(canonical(m.group(1).decode("utf-8", "replace")) not in _NOT_HISTORY
                             for m in _LIST_KEY.finditer(head)):
        return "history"  # (a list of learning rates or epochs alone is a config's schedule, not a history)
    return None


# A run's settings, whatever the file is called (argparse's `vars(args)`, a trainer's params, a DeepSpeed config,
# d3rlpy's params.json, a sweep's config.json): a JSON object or a YAML mapping whose keys name at least
# SETTINGS_MIN training settings. A model's architecture config (hidden_size, vocab_size …) names none of them.
SETTING_KEYS = frozenset({
    "lr", "learning_rate", "base_lr", "max_lr", "min_lr", "actor_learning_rate", "critic_learning_rate",
    "batch_size", "train_batch_size", "per_device_train_batch_size", "micro_batch_size", "global_batch_size",
    "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "epochs", "num_epochs", "n_epochs",
    "max_epochs", "num_train_epochs", "max_steps", "max_iters", "max_iter", "max_iterations", "train_iters",
    "total_steps", "n_steps", "training_steps", "warmup_steps", "warmup_iters", "warmup_ratio", "weight_decay",
    "optimizer", "optim", "momentum", "grad_clip", "max_grad_norm", "gradient_clip_val", "clip_grad_norm",
    "lr_scheduler_type", "lr_scheduler", "fp16", "bf16", "precision", "mixed_precision", "label_smoothing"})
SETTINGS_MIN = 2
_JSON_KEY = lazy_re(rb'"([A-Za-z_][\w.\-]{0,60})"\s*:')
_YAML_KEY = lazy_re(rb'(?m)^[ \t]{0,8}([A-Za-z_][\w.\-]{0,60})[ \t]*:(?:\s|$)')


def settings_document(head: bytes) -> bool:
    """The first bytes of a JSON object or YAML mapping that holds a run's training settings."""
    start = head.lstrip()[:1]
    if start == b"[" or start == b"<":
        return False
    keys = (_JSON_KEY if start == b"{" else _YAML_KEY).findall(head)
    names = {k.decode("ascii", "replace").lower().rsplit(".", 1)[-1] for k in keys}
    return len(names & SETTING_KEYS) >= SETTINGS_MIN


def suffix_kind(name: str) -> Optional[str]:
    """'media', 'source', 'structured' or 'doc' when the suffix says what to expect, else None (sniff the
    content)."""
    low = name.lower()
    if low.endswith(MEDIA_SUFFIXES):
        return "media"
    if name in SOURCE_NAMES or low.endswith(SOURCE_SUFFIXES):
        return "source"
    if low.endswith(STRUCTURED_SUFFIXES):
        return "structured"
    if low.endswith(DOC_SUFFIXES):
        return "doc"
    return None


def text_kind(name: str, head: bytes) -> str:
    """What a text file is, from its name's suffix and its first bytes: 'jsonl', 'csv', 'structured', 'source',
    'data' (vocabularies, word and file lists), 'doc' (documentation: a log only if `doc_shows_a_run`) or 'log'. `head` is the file's first bytes
    (decompressed); the last line of it may be cut."""
    by_name = suffix_kind(name)
    if by_name == "source":
        return "source"
    if name in DATA_NAMES:
        return "data"
    lines = [ln.strip() for ln in head.split(b"\n")[:-1] or head.split(b"\n")]
    lines = [ln for ln in lines if ln]
    if not lines:
        return "structured" if by_name else "log"
    if _is_csv(lines):
        return "csv"  # before the word-list test: a CSV row has no spaces, one "word" per line
    if len(lines) >= WORD_LIST_LINES and sum(1 for ln in lines if len(ln.split()) <= 1) >= 0.95 * len(lines):
        return "data"  # a word, token or file list, not a program's output
    objects = sum(1 for ln in lines if ln.startswith(b"{") and ln.endswith(b"}"))
    if len(lines) >= 2 and objects >= 0.8 * len(lines):
        return "jsonl"
    if by_name in ("structured", "doc"):
        return by_name
    first = lines[0][:1]
    if first in (b"{", b"[") and objects < 2 and len(lines) > 1 and lines[-1][:1] in (b"}", b"]", b'"', b" "):
        return "structured"  # a JSON document without a telling name
    if first == b"<" and lines[0].startswith((b"<?xml", b"<!DOCTYPE", b"<html")):
        return "structured"
    return "log"


def _is_csv(lines) -> bool:
    """A header with a metric column, then rows with as many cells, mostly numbers."""
    if len(lines) < 2:
        return False
    header = lines[0].decode("utf-8", "replace")
    n = header.count(",")
    if n < 1 or not _METRIC_HEADER.search(header):
        return False
    rows = lines[1:21]
    if not all(r.count(b",") == n for r in rows[:-1]):
        return False
    cells = [c.strip() for r in rows for c in r.split(b",")]
    numeric = sum(1 for c in cells if c and (c.replace(b".", b"", 1).replace(b"-", b"", 1).replace(b"e", b"", 1)
                                            .replace(b"+", b"", 1).isdigit() or c.lower() in (b"nan", b"inf")))
    return numeric >= 0.5 * max(1, len(cells))


def scheduler_of(text: str) -> Optional[str]:
    """'lsf', 'slurm', 'pbs', 'sge' or 'kubernetes' when `text` shows that scheduler's own output, else None."""
    for name, pattern in _SCHEDULERS:
        if pattern.search(text):
            return name
    return None
