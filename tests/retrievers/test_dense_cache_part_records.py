"""Dense embedding-cache parts are checked against a size + CRC-32 record (retrievers/dense/cache.py).

Before, a part was checked by its shape only: a part damaged while an encode was interrupted (one flipped
bit, same size) was joined into the complete matrix, whose CRC-32 then vouched for the damage: a wrong
embedding served on every later run. Expected values: row i of the matrix is [i, 2i, 3i] (rows_encoder)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from retrievers.dense.cache import EmbeddingCache
from tests.retrievers.test_dense_cache import expected, make, rows_encoder


def interrupted(folder) -> EmbeddingCache:
    """An entry whose encode was interrupted after two of its three chunks (parts 0 and 1 written)."""
    with pytest.raises(KeyboardInterrupt):
        make(folder).build(rows_encoder([], fail_on_call=3))
    return make(folder)


def flip_last_byte(path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # (the last float's top byte, little-endian: 6.0 -> 24.0; the file's size is the same)
    path.write_bytes(bytes(data))


def test_each_part_has_its_size_and_crc_recorded(tmp_path):
    from harness.checksums import crc32

    entry = interrupted(tmp_path / "e")
    for i in (0, 1):
        record = json.loads(entry.part_record_path(i).read_text())
        assert record == {"bytes": entry.part_path(i).stat().st_size, "crc32": crc32(entry.part_path(i))}
    assert not entry.part_record_path(2).exists() and not entry.part_path(2).exists()


def test_a_part_damaged_in_place_is_encoded_again_not_joined(tmp_path):
    entry = interrupted(tmp_path / "e")
    flip_last_byte(entry.part_path(1))  # chunk 1: rows 5, 4, 3, 2
    assert not entry.has_part(1) and entry.saved_part(1) is None and entry.has_part(0)
    calls = []
    out, reused = make(tmp_path / "e").build(rows_encoder(calls))
    assert calls == [[5, 4, 3, 2], [1, 0]] and reused == 4
    np.testing.assert_array_equal(out, expected())  # (shape-only checks joined the damaged part: row 2 read [2, 4, 24])


def test_parts_and_their_records_are_removed_once_joined(tmp_path):
    interrupted(tmp_path / "e")
    make(tmp_path / "e").build(rows_encoder([]))
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["embeddings.npy", "meta.json"]


def test_records_left_beside_a_complete_matrix_are_removed_when_it_is_loaded(tmp_path):
    entry = interrupted(tmp_path / "e")
    saved = {i: (entry.part_path(i).read_bytes(), entry.part_record_path(i).read_text()) for i in (0, 1)}
    make(tmp_path / "e").build(rows_encoder([]))
    for i, (part, record) in saved.items():  # put back as a builder killed before removing them left them
        entry.part_path(i).write_bytes(part)
        entry.part_record_path(i).write_text(record)
    np.testing.assert_array_equal(make(tmp_path / "e").load_complete(), expected())
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["embeddings.npy", "meta.json"]


def test_a_part_without_a_record_is_taken_by_its_shape(tmp_path):
    # a part an earlier release wrote (no record), resumed now: reused as before, not encoded again
    entry = interrupted(tmp_path / "e")
    entry.part_record_path(0).unlink()
    calls = []
    out, reused = make(tmp_path / "e").build(rows_encoder(calls))
    assert calls == [[1, 0]] and reused == 8
    np.testing.assert_array_equal(out, expected())


def test_a_record_written_before_a_killed_rename_leaves_no_part_in_place(tmp_path, monkeypatch):
    # the record is written first: a kill before the part's rename leaves the record alone, and the
    # next build encodes that chunk (and writes both again)
    import os

    entry = make(tmp_path / "e")
    entry.prepare()
    real = os.replace

    def killed(src, dst, *args, **kwargs):
        if str(dst).endswith("part-4-000000.npy"):
            raise KeyboardInterrupt("killed before the rename")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        entry.write_part(0, np.outer(entry.chunk_rows(0), [1.0, 2.0, 3.0]).astype(np.float32))
    monkeypatch.setattr(os, "replace", real)
    assert entry.part_record_path(0).is_file() and not entry.part_path(0).exists()
    calls = []
    out, reused = make(tmp_path / "e").build(rows_encoder(calls))
    assert calls == [[9, 8, 7, 6], [5, 4, 3, 2], [1, 0]] and reused == 0
    np.testing.assert_array_equal(out, expected())
