#!/usr/bin/env python3
"""Builds the fuzz seed corpus from real trace folders.

Usage: make_corpus.py OUT_DIR TRACE_DIR...
Each trace file is trimmed of its all-zero tail (the reader treats a shorter file the same way), then
written as a seed of trace_reader_fuzzer; each folder becomes one seed of trace_folder_fuzzer
(files as 4-byte little-endian length + bytes).
"""
import os
import struct
import sys

HEADER = 4096
RECORD = 64


def trimmed(path):
    data = open(path, "rb").read()
    end = len(data)
    while end > HEADER and data[end - RECORD:end] == bytes(RECORD):
        end -= RECORD
    return data[:end]


def main():
    out, folders = sys.argv[1], sys.argv[2:]
    reader_dir = os.path.join(out, "trace_reader_fuzzer")
    folder_dir = os.path.join(out, "trace_folder_fuzzer")
    os.makedirs(reader_dir, exist_ok=True)
    os.makedirs(folder_dir, exist_ok=True)
    for n, folder in enumerate(folders):
        files = sorted(f for f in os.listdir(folder) if f.endswith(".cctrace"))
        blob = b""
        for m, name in enumerate(files):
            data = trimmed(os.path.join(folder, name))
            with open(os.path.join(reader_dir, "seed-%d-%d" % (n, m)), "wb") as f:
                f.write(data)
            blob += struct.pack("<I", len(data)) + data
        with open(os.path.join(folder_dir, "seed-%d" % n), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
