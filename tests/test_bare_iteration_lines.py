"""`print(f"Iter {i}: {loss.item()}")` — an iteration counter and one bare decimal — is read as the loss when the
text names a loss (issue 9, "a run report whose loss is only in `Iter N: value` lines → nothing read"; one
reader for it, collect/texttables.counter_rows, whose line-level rules tests/test_batch6_shapes.py checks). Here:
the trajectory those values make is judged like any loss."""
from trainwreck.pipeline import diagnose


def _run(tmp_path, values):
    (tmp_path / "train.log").write_text("training loss per iteration\n" + "".join(f"Iter {i * 100}: {v:.6f}\n" for i, v in enumerate(values)),
                                        encoding="utf-8")
    return diagnose(str(tmp_path), probe=False).diagnosis


def test_a_bare_loss_that_falls_then_climbs_back_is_divergence(tmp_path):
    d = _run(tmp_path, [0.245, 0.115, 0.089, 0.075, 0.073, 0.0712, 0.0754, 0.0818, 0.0861, 0.0989, 0.157, 0.255,
                        0.315, 0.30])
    assert d.classification == "divergence", d.headline


def test_a_bare_loss_that_falls_is_no_divergence(tmp_path):
    d = _run(tmp_path, [0.245, 0.115, 0.089, 0.075, 0.073, 0.0712, 0.0701, 0.0695, 0.0688, 0.0680, 0.0677, 0.0671])
    assert d.classification != "divergence", d.headline
