"""A PNG of loss / grad-norm / lr with the onset marked (needs matplotlib; skipped with a note without it).

A view of the diagnosis: the onset and the rollback step are the ones decide stored, never recomputed here."""
from __future__ import annotations

import math
from typing import Any, BinaryIO, Dict, Optional, Union

from trainwreck.collect.bundle import Bundle


def plot(bundle: Bundle, report: Dict[str, Any], path: Union[str, BinaryIO]) -> Optional[Union[str, BinaryIO]]:
    """The PNG into `path`: a file name, or a binary file (--out renders it to bytes and writes them through the
    stage folder's descriptor, report/artifacts.py); `path` back when a plot was made, None when not."""
    names = [n for n in ("loss", "grad_norm", "lr", "loss_scale") if bundle.best_series(n)]
    if not names:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        report.setdefault("notes", []).append("no plot: matplotlib is not installed (pip install matplotlib)")
        return None
    onset = (report.get("onset") or {}).get("step")  # decided once, in the diagnosis
    before = (report.get("rollback") or {}).get("before_step")
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 2.2 * len(names)), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        s = bundle.best_series(name)
        xs = [p.step if p.step is not None else i for i, p in enumerate(s.points)]
        ys = [p.value if math.isfinite(p.value) else float("nan") for p in s.points]
        ax.plot(xs, ys, lw=1)
        bad = [x for x, p in zip(xs, s.points) if not math.isfinite(p.value)]
        if bad:
            ax.axvline(bad[0], color="red", ls="--", lw=1, label=f"first non-finite: {bad[0]}")
            ax.legend(loc="best", fontsize=8)
        if onset is not None:
            ax.axvline(onset, color="orange", ls=":", lw=1)
        if before is not None and before != onset:
            ax.axvline(before, color="grey", ls=":", lw=1)  # where the instability began: roll back before it
        finite = [y for y in ys if y == y]
        if name in ("grad_norm", "loss_scale") and finite and all(y > 0 for y in finite):
            ax.set_yscale("log")  # only with a positive value to scale: all-NaN data cannot be log-scaled
        ax.set_ylabel(name)
        ax.set_title(f"{name} — {s.path}", fontsize=8, loc="left")
    axes[-1, 0].set_xlabel("step")
    fig.suptitle(f"trainwreck: {report.get('headline', report.get('classification'))}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90, format="png")
    plt.close(fig)
    return path
