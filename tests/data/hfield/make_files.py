#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the small height-field files of tests/test_hfield_png.c (made for grit, no outside source):
PNG images in several colour types and MuJoCo's binary format, and damaged PNGs. Deterministic; run
from this directory with /usr/bin/python3 to regenerate."""
import math
import struct
import zlib


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png(width, height, depth, ctype, rows, plte=None):
    """rows: a list of bytes objects, each one raw scanline without the filter byte."""
    raw = b"".join(b"\x00" + r for r in rows)
    out = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, 0))
    if plte:
        out += chunk(b"PLTE", plte)
    return out + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def level(r, c):
    """A smooth hill with a ridge: 0..1."""
    return 0.5 + 0.35 * math.sin(0.9 * c) * math.cos(0.7 * r) + 0.1 * (r / 6.0)


W, H = 9, 7
grey = [bytes(int(round(255 * level(r, c))) & 255 for c in range(W)) for r in range(H)]
with open("hill_grey8.png", "wb") as f:  # 8-bit grey
    f.write(png(W, H, 8, 0, grey))
with open("hill_grey16.png", "wb") as f:  # 16-bit grey: the high byte is MuJoCo's level
    f.write(png(W, H, 16, 0, [b"".join(struct.pack(">H", int(65535 * level(r, c))) for c in range(W)) for r in range(H)]))
with open("hill_rgb.png", "wb") as f:  # colour: red, green and blue levels differ
    f.write(png(W, H, 8, 2, [bytes(v for c in range(W) for v in (grey[r][c], 255 - grey[r][c], (3 * c) & 255))
                             for r in range(H)]))
with open("hill_rgba.png", "wb") as f:  # colour with alpha
    f.write(png(W, H, 8, 6, [bytes(v for c in range(W) for v in (grey[r][c], 7, 9, 40 * c & 255)) for r in range(H)]))
pal = bytes(v for i in range(16) for v in (17 * i, 255 - 17 * i, 3 * i))
with open("hill_palette4.png", "wb") as f:  # 4-bit palette
    f.write(png(W, H, 4, 3, [bytes(((grey[r][c] >> 4) << 4) | (grey[r][min(c + 1, W - 1)] >> 4) for c in range(0, W, 2))
                             for r in range(H)], plte=pal))
with open("hill.bin", "wb") as f:  # MuJoCo's binary format: int32 nrow, ncol, then float32 row by row
    f.write(struct.pack("<ii", H, W) + b"".join(struct.pack("<f", 3.0 * level(r, c) - 1.0) for r in range(H)
                                                for c in range(W)))
# A 16 x 16 flat-topped plateau for the resting box: a 6 x 6 square at level 255 on 0.
flat = [bytes(255 if 5 <= r <= 10 and 5 <= c <= 10 else 0 for c in range(16)) for r in range(16)]
with open("plateau.png", "wb") as f:
    f.write(png(16, 16, 8, 0, flat))

# Damaged files: each must be an error with the file's name, never a crash.
good = open("hill_grey8.png", "rb").read()
with open("bad_truncated.png", "wb") as f:  # cut inside the image data
    f.write(good[: len(good) // 2])
crc = bytearray(good)
crc[60] ^= 0x5A  # a byte inside IDAT: the chunk's checksum no longer holds
with open("bad_crc.png", "wb") as f:
    f.write(bytes(crc))
with open("bad_header.png", "wb") as f:  # a 2^31-1 x 2^31-1 image that ends after its header
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 0x7FFFFFFF, 0x7FFFFFFF, 8, 0, 0, 0, 0)))
with open("bad_inflate.png", "wb") as f:  # valid chunks, garbage compressed data
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", bytes(range(7, 200, 3))) + chunk(b"IEND", b""))
with open("bad_signature.png", "wb") as f:
    f.write(b"GIF89a not a png at all")
with open("bad_size.bin", "wb") as f:  # the header promises more floats than follow
    f.write(struct.pack("<ii", 4, 5) + b"\x00" * 12)
