"""Run one fuzz target: coverage-guided with atheris when installed, else a built-in mutation loop."""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from targets import SEEDS, TARGETS  # noqa: E402


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(6)
        pos = rng.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] = rng.randrange(256)
        elif op == 1:
            b[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == 2 and b:
            del b[pos:pos + rng.randint(1, 16)]
        elif op == 3:
            b[pos:pos] = rng.choice([b"\n", b"\r", b"\x00", b"\x1b[31m", b"nan", b"Infinity", b": ", b"=", b"{",
                                     b"Traceback (most recent call last):\n", b"  File \"x\", line 9, in f\n",
                                     b"- ", b"  ", b"\"", b"'", b"\xff\xfe"])
        elif op == 4 and b:
            a = rng.randrange(len(b))
            b[pos:pos] = b[a:a + rng.randint(1, 64)]
        else:
            b[pos:pos] = rng.choice(SEEDS)[: rng.randint(0, 80)]
    return bytes(b[: 1 << 16])


def loop(name: str, iterations: int, seed: int = 0, seconds: float = 0, seen: set = None) -> int:
    """Feed `iterations` mutated inputs to the target; returns how many ran. A target raises on a crash or on a
    broken contract, and the exception propagates. `seen` (optional) collects the distinct inputs fed."""
    fn = TARGETS[name]
    rng = random.Random(seed)
    corpus = list(SEEDS)
    end = time.monotonic() + seconds if seconds else None
    for i in range(iterations):
        data = mutate(rng, rng.choice(corpus))
        if seen is not None:
            seen.add(data)
        fn(data)
        if i % 50 == 0 and len(corpus) < 200:
            corpus.append(data)
        if end and time.monotonic() > end:
            return i + 1
    return iterations


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("target", choices=sorted(TARGETS))
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--seconds", type=float, default=0)
    args, rest = ap.parse_known_args()
    try:
        import atheris
    except ImportError:
        n = loop(args.target, args.iterations, seconds=args.seconds)
        print(f"{args.target}: {n} inputs, no failure (built-in mutator; pip install atheris for coverage guidance)")
        return 0
    atheris.Setup([sys.argv[0]] + rest, TARGETS[args.target])
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
