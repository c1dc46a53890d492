#!/usr/bin/env python3
"""The deliberate one-line breakages an outside review made (issue 8), each applied to the tree for a moment:
the named tests must go red, then the file is restored byte for byte.

    python3 tests/mutation/breakages.py            # all of them (a few minutes)
    python3 tests/mutation/breakages.py rollback   # those whose name contains 'rollback'

Exit status 0 when every breakage is caught. Not part of CI (it rewrites engine files while it runs); the
table in tests/README.md is its output.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (what the breakage does, file, text that is there, text that breaks it, tests that must catch it)
BREAKAGES = [
    ("first failing rank taken from the last rank to print, not the first",
     "trainwreck/analyze/tracebacks/torchrun.py", "tb = ranked[0]", "tb = ranked[-1]",
     ["tests/test_tracebacks.py"]),
    ("the first torchrun failure summary used instead of the last",
     "trainwreck/analyze/tracebacks/torchrun.py", "return roots[-1]", "return roots[0]",
     ["tests/test_tracebacks.py"]),
    ("the hf_ token shape dropped from redaction",
     "trainwreck/collect/redact.py", '("hf-token", lazy_re(r"\\bhf_[A-Za-z0-9]{20,}"), _whole("hf-token")),', "",
     ["tests/test_redact_bundle.py", "tests/test_redact.py"]),
    ("the 'log ends without a newline' note removed",
     "trainwreck/collect/readers/logs.py",
     'bundle.note(f"{log.path}: ends without a newline (the writer may have been killed mid-line)")', "pass",
     ["tests/test_collect_bounded.py"]),
    ("a verb creates and deletes a file in the run directory",
     "trainwreck/verbs/curve.py", "def run(args) -> int:\n",
     "def run(args) -> int:\n    import os as _o\n    _p = _o.path.join(args.path or '.', '.tw-scratch')\n"
     "    if _o.path.isdir(args.path or '.'):\n        open(_p, 'w').close()\n        _o.remove(_p)\n",
     ["tests/test_readonly.py"]),
    ("the chance-level tolerance ×5 (a loss flat at 2.12 with 10 classes becomes chance level)",
     "trainwreck/analyze/chance_level.py", "CHANCE_REL = 0.02", "CHANCE_REL = 0.10",
     ["tests/test_decide_contract.py"]),
    ("rollback < becomes <= (the checkpoint saved at the NaN step is recommended)",
     "trainwreck/decide/next_steps.py", 'c["step"] < before', 'c["step"] <= before',
     ["tests/test_decide_contract.py"]),
    ("the log-vs-trajectory NaN cross-check switched off",
     "trainwreck/decide/score.py", "NAN_MESSAGE_WITH_FINITE_LOSS = 0.6", "NAN_MESSAGE_WITH_FINITE_LOSS = 1.0",
     ["tests/test_decide_contract.py"]),
    ("a bare exception's first line taken instead of its last",
     "trainwreck/analyze/bare_exception.py", "last = (line, m) if since_tb > 300 else None",
     "last = last or ((line, m) if since_tb > 300 else None)", ["tests/test_tracebacks.py"]),
    ("the 64-file cap keeps the oldest logs",
     "trainwreck/collect/__init__.py", "c[0].mtime if c[0].rel in marked else -c[0].mtime", "c[0].mtime",
     ["tests/test_collect_bounded.py"]),
    ("launcher-wrapper demotion removed",
     "trainwreck/decide/fold.py", "def demote_wrappers(findings: List[Finding]) -> List[Finding]:\n",
     "def demote_wrappers(findings: List[Finding]) -> List[Finding]:\n    return findings\n",
     ["tests/test_decide_contract.py"]),
    ("a timeout no longer folds the crash it caused",
     "trainwreck/decide/fold.py",
     "def fold_timeouts(findings: List[Finding], strength: Callable[[Finding], float]) -> List[Finding]:\n",
     "def fold_timeouts(findings: List[Finding], strength: Callable[[Finding], float]) -> List[Finding]:\n"
     "    return findings\n", ["tests/test_decide_contract.py"]),
    ("files no reader claims by name are never classified by content (issue 9: every file is evidence)",
     "trainwreck/collect/content.py", "    out: List[Tuple[Entry, object]] = []\n    opened = peeks = 0\n",
     "    out: List[Tuple[Entry, object]] = []\n    opened = peeks = 0\n    return out\n", ["tests/test_every_file.py"]),
    ("compressed files read as raw bytes, not as their decompressed stream",
     "trainwreck/collect/inflate.py", "    if method is None:\n        return f\n", "    if True:\n        return f\n",
     ["tests/test_every_file.py"]),
    ("the decompression limit lifted (a gzip bomb is decompressed whole)",
     "trainwreck/collect/inflate.py", "        limit = (INFLATE_LIMIT if", "        limit = ((1 << 40) if",
     ["tests/test_every_file.py"]),
    ("no windows sampled across the middle of a large log",
     "trainwreck/collect/logtext.py", "MIDDLE_WINDOWS = 32", "MIDDLE_WINDOWS = 0", ["tests/test_every_file.py"]),
    ("logs found by content lose their own quota under the 64-file cap",
     "trainwreck/collect/__init__.py", '"text": 12}', '"text": 0}', ["tests/test_every_file.py"]),
    ("tool inputs count as quote sources in the Stop hook again (issue 11: only tool output is evidence)",
     "hooks/transcript_tail.py", '                    turn.tool_names[b["id"]] = b.get("name") or ""\n',
     '                    turn.tool_names[b["id"]] = b.get("name") or ""\n'
     '                    [sources.add(v) for v in (b.get("input") or {}).values() if isinstance(v, str)]\n',
     ["tests/hooks/test_guard_contract.py"]),
    ("the Stop hook no longer reads sub-agent transcripts or persisted outputs",
     "hooks/transcript_tail.py", "    seen = set()\n    for kind, ref in turn.side:\n",
     "    seen = set()\n    return\n    for kind, ref in turn.side:\n", ["tests/hooks/test_guard_contract.py"]),
    ("a no-tool follow-up quoting earlier tool output is blocked again",
     "hooks/evidence_guard.py", "if not missing and (evidence or quotes):", "if not missing and evidence:",
     ["tests/hooks/test_guard_contract.py"]),
    ("outcome: a completed run with a message it survived keeps that message's class",
     "trainwreck/decide/__init__.py", '    if no_failure:\n        cls = "unclear"', '    if False:\n        cls = "unclear"',
     ["tests/test_outcome.py"]),
    ("outcome: the interruption's own lines (Slurm's time limit, KeyboardInterrupt) weigh as failures",
     "trainwreck/decide/__init__.py", "ended = outcome.end_of_run(findings, outcome.markers(findings))", "ended = []",
     ["tests/test_outcome.py"]),
    ("outcome: no confidence cap for a run with no failure",
     "trainwreck/decide/outcome.py", "return min(conf, NO_FAILURE_MAX_CONFIDENCE)", "return conf",
     ["tests/test_outcome.py"]),
    ("outcome: HF's final summary entry read as the last step's loss",
     "trainwreck/collect/readers/trainer_state.py", "step=step, byte=line.byte)\n            continue",
     "step=step, byte=line.byte)", ["tests/test_outcome.py"]),
    ("outcome: the live probe ignores whether a descriptor is open for writing",
     "trainwreck/probes/live.py", "or not _writes(pid, fd):", ":", ["tests/test_outcome.py"]),
    # issue 9, trajectories at any length (tests/test_trajectory_any_length.py)
    ("short-series confidence no longer grows with the number of points",
     "trainwreck/analyze/trajectory_stats.py", "    if n >= 30:\n        return full\n    scale",
     "    if True:\n        return full\n    scale", ["tests/test_trajectory_any_length.py::test_confidence_grows_with_the_number_of_points"]),
    ("a single astronomical grad norm needs two points again",
     "trainwreck/analyze/blowup.py", "    if not out and gp:", "    if not out and len(gp) >= 2:",
     ["tests/test_trajectory_any_length.py::test_one_line_with_an_astronomical_grad_norm_is_divergence"]),
    ("an inf grad norm after a finite loss blow-up is the NaN again",
     "trainwreck/analyze/trajectory.py", "        if blew is not None:", "        if False:",
     ["tests/test_trajectory_any_length.py::test_finite_blowup_before_an_inf_grad_norm_is_divergence_not_nan"]),
    ("only the best loss series is checked (a diverging rank hides behind a healthy one)",
     "trainwreck/analyze/blowup.py", "        for s in sorted(bundle.series[name],",
     "        for s in [bundle.best_series(name)] or sorted(bundle.series[name],",
     ["tests/test_trajectory_any_length.py::test_a_diverging_rank_behind_a_healthy_one_is_found"]),
    ("a rising component counts even while the total loss falls",
     "trainwreck/analyze/trajectory.py", "            if total_falls:\n", "            if False:\n",
     ["tests/test_trajectory_any_length.py::test_a_rising_component_while_the_total_falls_is_not_the_failure"]),
    ("a loss repeating by rounding alone is called constant",
     "trainwreck/analyze/not_learning.py", "        if _digits(v) < need:", "        if False:",
     ["tests/test_trajectory_any_length.py::test_a_loss_repeating_only_by_rounding_is_not_constant"]),
    ("a task metric at its floor is pinned even while the loss falls fast",
     "trainwreck/analyze/not_learning.py", "    moving = _loss_barely_moves(bundle) if pinned else None",
     "    moving = 'x' if pinned else None", ["tests/test_trajectory_any_length.py::test_a_metric_at_its_floor_while_the_loss_falls_fast_is_not_pinned"]),
    ("a plateau is dated where the analysed window starts, not where the loss became flat",
     "trainwreck/analyze/trajectory_shape.py",
     "    seg = fp[flat_from([p.value for _, p in fp], level, band):] if not late_few else seg", "    pass",
     ["tests/test_trajectory_any_length.py::test_chance_plateau_is_dated_where_the_loss_became_flat"]),
    ("init-loss ignores the last logged loss (OK on a loss still at ln K)",
     "trainwreck/analyze/chance_level.py", "and n >= STILL_AT_CHANCE_POINTS and at_chance(last, k):", "and False:",
     ["tests/test_trajectory_any_length.py::test_init_loss_is_not_ok_when_the_loss_is_still_at_chance_at_its_last_step"]),
    ("a recovered single-batch spike decides the run again",
     "trainwreck/analyze/trajectory_shape.py", '                           kind="trajectory" if benign else "",',
     '                           kind="",', ["tests/test_trajectory_any_length.py::test_single_batch_spikes_that_recover_are_healthy"]),
]


def run_one(name, path, old, new, tests) -> str:
    full = os.path.join(ROOT, path)
    orig = open(full, encoding="utf-8").read()
    if old is None:
        return "SKIP (no single-line site named here; see tests/README.md)"
    if orig.count(old) != 1:
        return f"STALE (the text to break is not in {path} exactly once: update this script)"
    try:
        with open(full, "w", encoding="utf-8") as f:
            f.write(orig.replace(old, new, 1))
        env = dict(os.environ, PYTHONPATH=ROOT, PYTHONDONTWRITEBYTECODE="1")
        p = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        failed = [ln.split(" ")[1] for ln in p.stdout.splitlines() if ln.startswith("FAILED ")]
        return f"caught by {failed[0].split(' - ')[0]}" if p.returncode != 0 and failed else (
            "caught (pytest exit %d)" % p.returncode if p.returncode != 0 else "MISSED")
    finally:
        with open(full, "w", encoding="utf-8") as f:
            f.write(orig)


def main(argv) -> int:
    missed = 0
    for name, path, old, new, tests in BREAKAGES:
        if argv and not any(a in name for a in argv):
            continue
        verdict = run_one(name, path, old, new, tests)
        missed += verdict.startswith(("MISSED", "STALE"))
        print(f"| {name} | `{path}` | {verdict} |", flush=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
