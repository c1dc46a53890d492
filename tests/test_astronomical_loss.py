"""Finite loss values many orders of magnitude above the run's typical loss, recurring, are a divergence (issue 9,
"finite but implausible values … → No anomaly"), even when the excerpt starts at a spike and the loss falls
back between the spikes. One such value alone, or spikes of ordinary size, are not. Fixture wording:
tests/fixtures/astronomical/README.md."""
import os

from twtest import ROOT

from trainwreck.pipeline import diagnose

FIX = os.path.join(ROOT, "tests", "fixtures", "astronomical")
ID = "metric.loss-astronomical"


def _run(name):
    return diagnose(os.path.join(FIX, name), probe=False)


def test_recurring_astronomical_losses_are_divergence():
    res = _run("tf-slim-spikes")
    d = res.diagnosis.to_json()
    assert d["classification"] == "divergence", d["headline"]
    p = d["primary_cause"]
    assert p["id"] == ID and p["label"] == "DIRECT"
    assert "6.9e15 at step 1300" in p["summary"] and "3.4e15 at step 1303" in p["summary"]
    assert any(e.get("line") == 5 and e.get("step") == 1300 for e in p["evidence"]), "the spike's own line is cited"
    assert d["onset"]["step"] == 1300
    assert d["confidence"] < 0.8, "ten points: the confidence says how few"


def test_one_astronomical_value_alone_is_not_this_finding():
    assert not [f for f in _run("control-one-spike").findings if f.id == ID]


def test_spikes_of_ordinary_size_are_not_astronomical():
    res = _run("control-noisy-spikes")
    assert not [f for f in res.findings if f.id == ID]
    assert res.diagnosis.classification != "divergence"


def test_a_spike_excerpt_starting_at_the_spike_is_still_read(tmp_path):
    """The first logged value is the spike: 'far above the first value' cannot see it; the median can."""
    lines = open(os.path.join(FIX, "tf-slim-spikes", "train.log"), encoding="utf-8").read().splitlines()[4:]
    (tmp_path / "train.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert diagnose(str(tmp_path), probe=False).diagnosis.classification == "divergence"
