"""`print(f"Iter {i}: {loss.item()}")` — an iteration counter and one bare decimal — is a loss line (issue 9, "a
run report whose loss is only in `Iter N: value` lines → nothing read"). The form is common in public scripts
(e.g. `print(f"Iter {i}: {loss.item()}")`, `print(f"iter {i}: {loss}")`, `callback=lambda i, loss:
print(f"Iter {i}: {loss:.4f}")`); a comment after the value is allowed, a second named value is not."""
import pytest

from trainwreck.collect.textmetrics import extract
from trainwreck.pipeline import diagnose


@pytest.mark.parametrize("line,want", [
    ("Iter 0: 0.6931471824645996", (0, {"loss": 0.6931471824645996})),
    ("iter 40: 0.2451", (40, {"loss": 0.2451})),
    ("Iter 1600: 0.075390  (slight increase from 0.071)", (1600, {"loss": 0.07539})),
    ("Step 12: 1.5e-02", (12, {"loss": 0.015})),
    ("iter 100: loss 2.3", (100, {"loss": 2.3})),  # a named value is read as before
])
def test_an_iteration_and_one_bare_decimal_is_the_loss(line, want):
    assert extract(line) == want


@pytest.mark.parametrize("line", [
    "Step 5: 12",  # an integer: a count, not a loss
    "Epoch 3: 0.95",  # per-epoch bare values are as often an accuracy
    "Iter 3: {'ner': 12.31}",  # spaCy's losses dict: named, not bare
    "Iter 3: 0.52 T=0.998",  # a second named value on the line
    "Iteration 7: 2023-06-01 10:00:00",
])
def test_other_shapes_are_not_a_bare_loss(line):
    got = extract(line)
    assert got is None or "loss" not in got[1]


def _run(tmp_path, values):
    (tmp_path / "train.log").write_text("".join(f"Iter {i * 100}: {v:.6f}\n" for i, v in enumerate(values)),
                                        encoding="utf-8")
    return diagnose(str(tmp_path), probe=False).diagnosis


def test_a_bare_loss_that_falls_then_climbs_back_is_divergence(tmp_path):
    d = _run(tmp_path, [0.245, 0.115, 0.089, 0.075, 0.073, 0.0712, 0.0754, 0.0818, 0.0861, 0.0989, 0.157, 0.255,
                        0.315, 0.30])
    assert d.classification == "divergence", d.headline


def test_a_bare_loss_that_falls_is_no_divergence(tmp_path):
    d = _run(tmp_path, [0.245, 0.115, 0.089, 0.075, 0.073, 0.0712, 0.0701, 0.0695, 0.0688, 0.0680, 0.0677, 0.0671])
    assert d.classification != "divergence", d.headline
