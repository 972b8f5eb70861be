"""Draws a bar chart PNG with the standard library only, and prints an MCP result."""

import base64
import json
import struct
import sys
import zlib

WIDTH, HEIGHT, MARGIN = 240, 120, 8
BAR, BACKGROUND = (52, 101, 164), (255, 255, 255)


def png(pixels):
    """Encodes rows of RGB tuples as a PNG file."""
    raw = b"".join(b"\x00" + bytes(channel for pixel in row for channel in pixel) for row in pixels)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", len(pixels[0]), len(pixels), 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


values = json.load(sys.stdin)["values"]
if any(value < 0 for value in values):
    print(json.dumps({"content": [{"type": "text", "text": "values must not be negative"}], "isError": True}))
    sys.exit(0)
top = max(values) or 1
slot = (WIDTH - 2 * MARGIN) / len(values)
pixels = [[BACKGROUND] * WIDTH for _ in range(HEIGHT)]
for index, value in enumerate(values):
    height = int((HEIGHT - 2 * MARGIN) * value / top)
    left = int(MARGIN + index * slot + slot * 0.15)
    right = int(MARGIN + (index + 1) * slot - slot * 0.15)
    for y in range(HEIGHT - MARGIN - height, HEIGHT - MARGIN):
        for x in range(left, max(right, left + 1)):
            pixels[y][x] = BAR
image = base64.b64encode(png(pixels)).decode("ascii")
summary = f"Bar chart of {len(values)} bars, largest {max(values)}."
print(json.dumps({
    "content": [
        {"type": "image", "data": image, "mimeType": "image/png"},
        {"type": "text", "text": summary},
    ],
}))
