#!/usr/bin/env python3
"""Draw the plugin icon (stdlib only): a loss curve that falls, then derails, on a dark tile.

usage: python3 scripts/make_icon.py [OUT.png] [SIZE]   (default .claude-plugin/icon.png, 512)
The PNG is palette-based (4 colours) so it stays a few KB.
"""
import math
import os
import struct
import sys
import zlib

PALETTE = [(24, 28, 38), (52, 60, 78), (236, 120, 44), (240, 64, 64)]  # bg, grid, curve, wreck


def curve(x):
    """y in [0, 1] (1 = top) of the loss curve at x in [0, 1]: decays, then spikes off the chart."""
    y = 0.80 * math.exp(-4.2 * x) + 0.12
    if x > 0.68:
        y += 3.5 * (x - 0.68) ** 1.6 + 0.06 * math.sin(60 * x)
    return y


def pixels(size):
    grid = [[0] * size for _ in range(size)]
    margin, width = size // 8, max(2, size // 28)
    for i in range(1, 4):  # faint grid lines
        pos = margin + i * (size - 2 * margin) // 4
        for t in range(margin, size - margin):
            grid[pos][t] = grid[t][pos] = 1
    steps = size * 4
    for k in range(steps + 1):
        x = k / steps
        y = curve(x)
        if y > 1.05:
            break
        px = margin + x * (size - 2 * margin)
        py = size - margin - y * (size - 2 * margin)
        colour = 3 if x > 0.68 else 2
        for dy in range(-width, width + 1):
            for dx in range(-width, width + 1):
                if dx * dx + dy * dy <= width * width:
                    r, c = int(py) + dy, int(px) + dx
                    if 0 <= r < size and 0 <= c < size:
                        grid[r][c] = colour
    return grid


def png(path, size=512):
    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(row) for row in pixels(size))
    data = (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 3, 0, 0, 0))
            + chunk(b"PLTE", b"".join(bytes(c) for c in PALETTE))
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))
    with open(path, "wb") as fh:
        fh.write(data)
    return len(data)


if __name__ == "__main__":
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".claude-plugin", "icon.png")
    print(f"{out}: {png(out, int(sys.argv[2]) if len(sys.argv) > 2 else 512)} bytes")
