"""Review of bench cell reuse (harness/bench/cells.py): the checksum memo must not serve a stale
sha256, or a finished cell is reused with the numbers of the old file."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from harness.bench.cells import file_sha256


def test_memo_rehashes_a_same_size_file_given_its_old_mtime(tmp_path):
    """A qrels file replaced by another version of the same size whose mtime is the old one's
    (``cp -p``, ``rsync -a``, ``touch -r``, a zip unpacked with its stored times): the memo, keyed
    by size and mtime only, returned the old sha256, so `harness bench` reused the cell and reported
    the old NDCG@10 (seen: 0.9133 reused where --force gives 0.9137 after 300 grades 1 -> 0).
    Expected: the sha256 of the new bytes (hashlib), as the corpus cache's memo does (ctime)."""
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n")
    memo: dict = {}
    assert file_sha256(qrels, memo) == hashlib.sha256(qrels.read_bytes()).hexdigest()
    before = os.stat(qrels)
    other = tmp_path / "other.tsv"
    other.write_text("query-id\tcorpus-id\tscore\nq1\td1\t0\nq1\td2\t2\n")  # one grade changed: same size
    os.utime(other, ns=(before.st_atime_ns, before.st_mtime_ns))
    shutil.copy2(other, qrels)  # cp -p: new bytes in place, mtime set back to the old one
    after = os.stat(qrels)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert file_sha256(qrels, memo) == hashlib.sha256(other.read_bytes()).hexdigest()


def test_memo_is_reused_for_an_untouched_file(tmp_path):
    """The memo still saves the hash of an unchanged file (the reason it exists)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "text": "a"}\n')
    memo: dict = {}
    digest = file_sha256(corpus, memo)
    memo[str(corpus.resolve())]["sha256"] = "remembered"
    assert file_sha256(corpus, memo) == "remembered" and digest != "remembered"


def test_a_plan_and_a_load_hash_a_large_corpus_once_between_them(tmp_path, monkeypatch):
    """A bench plan's checksum of a corpus (file_sha256) and the load's (the corpus cache's stat memo) are one:
    a plan after a load hashes nothing, and a load after a plan hashes nothing; each gives the load's
    Dataset.content value (the sha256 of the decompressed text). Before, the plan decompressed and hashed a
    .gz the load had already hashed (1M documents: ~0.9 s), and a load after a plan hashed it again."""
    import gzip
    import json

    from harness.checksums import content_sha256
    from harness.datasets import corpus_cache, load_dataset

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)  # (as a corpus of 32 MiB or more: remembered by its stat)
    folders = []
    for name in ("loaded-first", "planned-first"):
        folder = tmp_path / name
        (folder / "qrels").mkdir(parents=True)
        text = "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"{name} {i}"}) + "\n" for i in range(50))
        (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(text.encode(), mtime=0))
        (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "text"}\n')
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        folders.append((folder / "corpus.jsonl.gz", hashlib.sha256(text.encode()).hexdigest()))
    (loaded, loaded_sha), (planned, planned_sha) = folders
    assert load_dataset(str(loaded.parent)).content["corpus.jsonl"] == loaded_sha
    corpus_cache.wait()
    assert file_sha256(planned, {}, content=True) == planned_sha  # (hashed here, remembered by the corpus cache)

    import harness.checksums
    import harness.datasets.beir

    for module, name in ((corpus_cache, "content_sha256"), (corpus_cache, "sha256"), (harness.checksums, "sha256"),
                         (harness.checksums, "content_sha256"), (harness.datasets.beir, "sha256")):
        real = getattr(module, name)

        def once(path, real=real):  # (the queries and qrels files are hashed by the load: not planned here)
            assert Path(path).name != "corpus.jsonl.gz", f"{path} hashed again"
            return real(path)
        monkeypatch.setattr(module, name, once)
    assert file_sha256(loaded, {}, content=True) == loaded_sha == content_sha256(loaded)
    assert load_dataset(str(planned.parent)).content["corpus.jsonl"] == planned_sha
