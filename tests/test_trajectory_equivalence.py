"""The linear-time trajectory statistics give exactly what their plain definitions give.

The detectors carry running state instead of re-scanning everything before each point (the lr-jump test
was quadratic); these tests compare them with the definitions, written the obvious slow way, on random
series with ties, zeros, signed zeros, negative values and jumps.
"""
import random

import pytest

from trainwreck.analyze import trajectory_schedule as sched
from trainwreck.analyze import trajectory_stats as st
from trainwreck.model import Point, Source


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def _jump_reference(vals):
    """(k, rising, earlier peak) of the first lr jump, by the definition: all points before k judged anew."""
    for k in range(1, len(vals)):
        a, b = vals[k - 1], vals[k]
        if a <= 0 or b <= a:
            continue
        prior = vals[:k]
        rising = all(y >= x for x, y in zip(prior, prior[1:]))
        if rising:
            steps = [y / x for x, y in zip(prior, prior[1:]) if x > 0]
            ok = k >= 3 and b >= sched.JUMP_IN_WARMUP * a and (not steps or max(steps) <= 3.0)
        else:
            ok = b >= sched.JUMP_AFTER_PEAK * a and b > 1.5 * max(prior)
        if ok:
            return k, rising, max(prior)
    return None


def _lr_series(rnd, n):
    v, out = rnd.choice([0.0, 1e-4, 1.0]), []
    for _ in range(n):
        r = rnd.random()
        if r < 0.1:
            v = 0.0
        elif r < 0.15:
            v = -v
        elif r < 0.3:
            v = v * rnd.choice([2, 3, 3.5, 10, 11, 30])
        elif r < 0.8:
            v = v * (1 + rnd.random() * 0.5) + (1e-5 if v == 0 else 0)
        elif r < 0.9:
            v = v * rnd.random()
        out.append(v)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_lr_jump_is_the_first_point_the_definition_finds(seed):
    rnd = random.Random(seed)
    found = 0
    for _ in range(1500):
        vals = _lr_series(rnd, rnd.randint(0, 25))
        fp = [(i, Point(i, v, Source("metrics.jsonl", line=i + 1))) for i, v in enumerate(vals)]
        got = sched._jump(fp)
        want = _jump_reference(vals)
        if want is None:
            assert got is None, vals
            continue
        found += 1
        k, rising, peak = want
        assert got is not None and got.evidence[0].line == k + 1, vals
        assert ("during a smooth warmup" in got.claim) == rising, (vals, got.claim)
        if not rising:
            assert f"above its earlier peak {st.fmt(peak)}" in got.claim
    assert found > 100  # the generator does produce jumps of both kinds


@pytest.mark.parametrize("seed", range(3))
def test_rolling_median_mad_and_noise_equal_their_definitions(seed):
    rnd = random.Random(seed)
    for _ in range(300):
        n = rnd.randint(0, 90)
        xs = [rnd.choice([0.0, -0.0, 1.0, 2.0, -3.0]) if rnd.random() < 0.3 else rnd.random() * 10 for _ in range(n)]
        for w in (1, 2, 3, 4, 5, 25):
            h = w // 2
            want = list(xs) if w <= 1 else [_median(xs[max(0, i - h):min(n, i + h + 1)]) for i in range(n)]
            assert [repr(v) for v in st.rolling_median(xs, w)] == [repr(v) for v in want]
        if xs:
            c = _median(xs)
            assert repr(st.mad(xs)) == repr(_median([abs(x - c) for x in xs]))
        if n >= 3:
            d = [abs(xs[i] - xs[i - 1]) for i in range(1, n)]
            assert st.diff_noise(xs) == st.MAD_SCALE * _median(d) / 2.0 ** 0.5
