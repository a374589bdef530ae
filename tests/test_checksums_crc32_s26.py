"""harness.checksums.crc32 reads a file through a map, 16 MiB at a time (no 4 MiB buffer allocated
and copied into per block, as ``read()`` did): the same value as zlib's CRC-32 of the bytes, whatever
the size (an empty file, which cannot be mapped, included), and the same as before for a file that
cannot be mapped at all (a FIFO)."""

from __future__ import annotations

import os
import random
import threading
import zlib

import pytest

from harness.checksums import crc32

BLOCK = 1 << 24


@pytest.mark.parametrize("size", [0, 1, 4095, BLOCK - 1, BLOCK, BLOCK + 7, 2 * BLOCK + 4096 + 3])
def test_crc32_is_zlibs_at_every_size(tmp_path, size):
    data = random.Random(size).randbytes(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    assert crc32(path) == f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"


def test_crc32_of_a_file_that_cannot_be_mapped(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    data = b"run line\n" * 1000

    def feed():
        with open(path, "wb") as handle:
            handle.write(data)
    writer = threading.Thread(target=feed)
    writer.start()
    assert crc32(path) == f"{zlib.crc32(data):08x}" == "%08x" % zlib.crc32(data)
    writer.join()
