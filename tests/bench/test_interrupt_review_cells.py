"""Review of bench cell reuse (harness/bench/cells.py): the checksum memo must not serve a stale
sha256, or a finished cell is reused with the numbers of the old file."""

from __future__ import annotations

import hashlib
import os
import shutil

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
