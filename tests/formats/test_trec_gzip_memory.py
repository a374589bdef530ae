"""A ``.gz`` run is decompressed into one growing buffer (harness/formats/trec.py ``_decompressed``), not
by ``GzipFile.read()``, which joins its chunks into a copy: twice the decompressed size at the peak.

Measured (``/usr/bin/time -v harness evaluate``, peak RSS, 10M-line runs of benchmarks/eval_speed.py's
synthetic shape): 381 MB run, plain 890 MB, .gz 890 MB before and after (the parse dominates); the
same run with a 60-byte tag, 862 MB: plain 1.36 GB, .gz 1.72 GB before, 1.36 GB after. Here the
allocations are counted by tracemalloc (no timing): the old path's peak is at least twice the
decompressed size, the new one's the buffer (its growth slack, 1/8) and one chunk. The run read and
every refusal are those of the plain file (the oracle: the same bytes uncompressed)."""

from __future__ import annotations

import gzip
import tracemalloc

import pytest

from harness.errors import InputError
from harness.formats import trec


def _run_bytes(lines: int) -> bytes:
    return b"".join(b"q%d Q0 d%07d %d %d.25 tag\n" % (i // 1000, i, i % 1000 + 1, 1000 - i % 1000)
                    for i in range(lines))


def test_a_gz_run_peaks_at_about_its_decompressed_size(tmp_path, monkeypatch):
    data = _run_bytes(200_000)  # ~8 MB
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(data, 1))
    monkeypatch.setattr(trec, "_GZIP_CHUNK", 1 << 16, raising=False)
    tracemalloc.start()
    try:
        with trec._mapped(path, "run") as read:
            _, peak = tracemalloc.get_traced_memory()
            assert read == data
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * len(data), (peak, len(data))  # (GzipFile.read(): >= 2x)


@pytest.mark.parametrize("tail, message", [
    (b"q9 Q0 dx 1 x tag\n", "score 'x' is not a number (id 'dx')"),
    (b"q0 Q0 d0000000 9 1.0 tag\n", "document retrieved twice for query 'q0' (first on line 1) (id 'd0000000')"),
    (b"q9 Q0 d\x00 1 1.0 tag\n", "NUL byte at column 8: not text (trec_eval stops reading at a NUL; a damaged file?)"),
])
def test_a_gz_run_reads_and_refuses_as_the_plain_file(tmp_path, monkeypatch, tail, message):
    monkeypatch.setattr(trec, "_GZIP_CHUNK", 1 << 12, raising=False)  # (lines across chunk edges)
    data = _run_bytes(3000)
    (tmp_path / "run.trec").write_bytes(data)
    (tmp_path / "run.trec.gz").write_bytes(gzip.compress(data))
    assert trec.read_run(tmp_path / "run.trec.gz").to_dict() == trec.read_run(tmp_path / "run.trec").to_dict()
    (tmp_path / "bad.trec").write_bytes(data + tail)
    (tmp_path / "bad.trec.gz").write_bytes(gzip.compress(data + tail))
    for name in ("bad.trec", "bad.trec.gz"):
        with pytest.raises(InputError) as caught:
            trec.read_run(tmp_path / name)
        assert str(caught.value) == f"{tmp_path / name}:3001: {message}"


def test_a_damaged_gz_run_is_named(tmp_path):
    packed = gzip.compress(_run_bytes(3000))
    (tmp_path / "cut.trec.gz").write_bytes(packed[:len(packed) // 2])
    with pytest.raises(InputError) as caught:
        trec.read_run(tmp_path / "cut.trec.gz")
    assert str(caught.value).startswith(f"{tmp_path / 'cut.trec.gz'}: cannot read run file: Compressed file ended")
    (tmp_path / "empty.trec.gz").write_bytes(gzip.compress(b""))
    with pytest.raises(InputError, match="the run file is empty"):
        trec.read_run(tmp_path / "empty.trec.gz")
