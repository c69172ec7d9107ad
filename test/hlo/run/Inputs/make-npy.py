"""Writes a .npy file byte by byte, so tests can make malformed ones.

usage: make-npy.py OUT HEADER-DICT DATA-HEX [MAJOR [MAGIC]]
The header is padded like NumPy pads it; DATA-HEX is the payload in hex.
"""
import struct
import sys

out, header, data = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
major = int(sys.argv[4]) if len(sys.argv) > 4 else 1
magic = sys.argv[5].encode("latin1") if len(sys.argv) > 5 else b"\x93NUMPY"
length_size = 2 if major == 1 else 4
header = header.encode("latin1")
pad = (64 - (len(magic) + 2 + length_size + len(header) + 1) % 64) % 64
header += b" " * pad + b"\n"
length = struct.pack("<H" if length_size == 2 else "<I", len(header))
with open(out, "wb") as f:
    f.write(magic + bytes([major, 0]) + length + header + data)
