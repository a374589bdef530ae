"""The on-disk index cache: a second run loads it; a damaged entry is detected and rebuilt."""

from __future__ import annotations

import json
import threading
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.atomic import writer_tag
from harness.checksums import crc32
from harness.datasets.corpus import Corpus, Queries
from retrievers.bm25 import BM25Retriever
from retrievers.bm25 import cache as index_cache
from retrievers.bm25 import loader
from retrievers.topk import string_ranks

CORPUS = Corpus([f"d{i}" for i in range(50)], [f"title {i % 7}" for i in range(50)],
                [f"doc {i} about topic{i % 5} and item{i % 11} and item{i % 3}" for i in range(50)])
QUERIES = Queries(["q1", "q2", "q3"], ["topic1 item2", "title 3", "item0 topic4 doc"])


def run_once(cache_dir, **kw):
    r = BM25Retriever(cache_dir=cache_dir, **kw)
    r.index(CORPUS)
    return r.backend.cache_status, r.search(QUERIES, 10).to_dict()


def entry(cache_dir):
    index_cache.wait()  # the entry is written in the background
    (folder,) = (cache_dir / "bm25").iterdir()
    return folder


def rematch_checksums(path: Path) -> None:
    """Record a rewritten entry file's size and checksums in its manifest (damage a load must find
    by checking content, not checksums)."""
    manifest_path = path.parent / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"][path.name] = {"bytes": path.stat().st_size, "crc32": crc32(path),
                                    "ends_sha256": index_cache.ends_sha256(path, path.stat().st_size)}
    manifest_path.write_text(json.dumps(manifest))


def test_second_run_loads_the_cache(tmp_path):
    status, first = run_once(tmp_path)
    assert status == "built"
    status, second = run_once(tmp_path)
    assert status == "hit" and second == first
    manifest = json.loads((entry(tmp_path) / "manifest.json").read_text())
    pruning = {"bounds.npy"} if loader.extension() is not None else set()  # the compiled search's bounds
    assert set(manifest["files"]) == {"terms.txt", "indptr.npy", "indices.npy", "data.npy", "doc_lengths.npy",
                                      "id_rank.npy", "id_order.npy"} | pruning
    rank = string_ranks(CORPUS.id_array)
    np.testing.assert_array_equal(np.load(entry(tmp_path) / "id_rank.npy"), rank)
    np.testing.assert_array_equal(np.load(entry(tmp_path) / "id_order.npy"), np.argsort(rank))
    assert not [p for p in (tmp_path / "bm25").iterdir() if p.name.endswith(".tmp")]  # no temp folder left


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "delete a file", "bad manifest", "extra file",
                                    "document out of range", "documents out of order", "indptr not ascending",
                                    "id_rank not a permutation",
                                    "id_order not its inverse"])
def test_damaged_cache_is_rebuilt_with_identical_results(tmp_path, damage):
    _, first = run_once(tmp_path)
    folder = entry(tmp_path)
    data = folder / "data.npy"
    if damage == "flip a byte":
        raw = bytearray(data.read_bytes())
        raw[-3] ^= 0xFF
        data.write_bytes(bytes(raw))
    elif damage == "truncate":
        data.write_bytes(data.read_bytes()[:40])
    elif damage == "delete a file":
        (folder / "terms.txt").unlink()
    elif damage == "bad manifest":
        (folder / "manifest.json").write_text("{not json")
    elif damage == "extra file":
        (folder / "stray.npy").write_bytes(b"x")
    else:  # arrays that do not fit together, with checksums that match: SparseIndex.validate on load
        name = {"document out of range": "indices", "documents out of order": "indices", "indptr not ascending": "indptr",
                "id_order not its inverse": "id_order"}.get(damage, "id_rank")
        array = np.load(folder / f"{name}.npy")
        if damage == "document out of range":
            array[0] = len(CORPUS)
        elif name == "indices":  # two documents of one term swapped: each in range, out of order
            indptr = np.load(folder / "indptr.npy")
            t = int(np.flatnonzero(np.diff(indptr) >= 2)[0])
            p = int(indptr[t])
            array[p], array[p + 1] = array[p + 1], array[p]
        elif name == "id_rank":
            array[0] = array[1]  # in range, but a rank twice (and one never)
        elif name == "id_order":
            array[0], array[1] = array[1], array[0]  # still a permutation, no longer id_rank's inverse
        else:
            array[1], array[2] = array[2], array[1]
        np.save(folder / f"{name}.npy", array)
        rematch_checksums(folder / f"{name}.npy")
        with pytest.raises(index_cache.CacheCorrupt, match="inconsistent arrays"):
            index_cache.load(tmp_path, folder.name)
    status, again = run_once(tmp_path)
    assert status == "rebuilt" and again == first
    status, third = run_once(tmp_path)
    assert status == "hit" and third == first


def test_an_entry_without_id_order_is_read_and_the_ranks_inverted(tmp_path):
    """An entry written before id_order.npy existed (its manifest without it) loads as a hit, the
    inverse of id_rank computed; the run is the same."""
    _, first = run_once(tmp_path)
    folder = entry(tmp_path)
    (folder / "id_order.npy").unlink()
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["files"]["id_order.npy"]
    manifest_path.write_text(json.dumps(manifest))
    loaded = index_cache.load(tmp_path, folder.name)
    assert loaded.id_order is None and loaded.id_rank is not None
    status, again = run_once(tmp_path)
    assert status == "hit" and again == first


@pytest.mark.parametrize("damage", ["a term too many", "not UTF-8"])
def test_damaged_terms_are_detected_and_rebuilt(tmp_path, damage):
    """terms.txt holding another number of terms than the manifest's n_terms, or bytes that are not
    UTF-8, with checksums that match: CacheCorrupt on load, then a rebuild with the same results.
    A sound entry loads its terms as a TermList equal to the built index's, made on first read."""
    from retrievers.bm25.sparse_index import TermList

    _, first = run_once(tmp_path)
    folder = entry(tmp_path)
    built = BM25Retriever(cache=False)
    built.index(CORPUS)
    loaded = index_cache.load(tmp_path, folder.name)
    assert isinstance(loaded.terms, TermList) and loaded.terms._terms is None
    assert loaded.terms == list(built.backend._index.terms) and len(loaded.terms) == loaded.n_terms
    path = folder / "terms.txt"
    path.write_bytes(path.read_bytes() + (b"\nextra" if damage == "a term too many" else b"\xff"))
    rematch_checksums(path)
    with pytest.raises(index_cache.CacheCorrupt, match="terms.txt does not hold n_terms terms"):
        index_cache.load(tmp_path, folder.name)
    status, again = run_once(tmp_path)
    assert status == "rebuilt" and again == first


def test_loaded_arrays_are_memory_mapped(tmp_path):
    run_once(tmp_path)
    index = index_cache.load(tmp_path, entry(tmp_path).name)
    assert isinstance(index.indices.base, np.memmap) and isinstance(index.data.base, np.memmap)
    assert not index.data.flags.writeable


def test_middle_of_a_large_file_is_checked_by_full_verification_only(tmp_path, monkeypatch):
    """Quick verification hashes the first and last END_BYTES of each file (here 64 bytes, so that
    data.npy's middle is unchecked); a score flipped there passes it and fails ``verify="full"``
    (and ``HARNESS_BM25_VERIFY=full``), after which the entry is rebuilt."""
    monkeypatch.setattr(index_cache, "END_BYTES", 64)
    _, first = run_once(tmp_path)
    folder = entry(tmp_path)
    data = folder / "data.npy"
    raw = bytearray(data.read_bytes())
    assert len(raw) > 4 * 64
    middle = len(raw) // 2 // 4 * 4  # a float32 score's first byte (the 128-byte header is 4-aligned)
    raw[middle + 3] ^= 0x01  # exponent bit: the score changes, stays finite
    data.write_bytes(bytes(raw))
    assert index_cache.load(tmp_path, folder.name, verify="quick") is not None
    with pytest.raises(index_cache.CacheCorrupt, match="data.npy does not match its full checksum"):
        index_cache.load(tmp_path, folder.name, verify="full")
    monkeypatch.setenv("HARNESS_BM25_VERIFY", "full")
    status, again = run_once(tmp_path)
    assert status == "rebuilt" and again == first


def test_every_file_is_fsynced_before_the_manifest_vouches_for_it(tmp_path, monkeypatch):
    """A quick load checks sizes and the ends of each array, so an array whose middle never reached
    the disk (power loss after the manifest was written and the folder renamed) would load as zeros
    and score silently. Expected: every file of the entry but the manifest is fsynced (sealed), each
    before manifest.json exists; only manifest.json was fsynced before."""
    sealed, real_seal = [], index_cache.seal
    index_cache.wait()  # (an earlier test's background write would seal its own files here)

    def record(path):
        if Path(path).is_relative_to(tmp_path):
            sealed.append((Path(path).name, (Path(path).parent / "manifest.json").exists()))
        real_seal(path)

    monkeypatch.setattr(index_cache, "seal", record, raising=False)
    run_once(tmp_path)
    files = sorted(p.name for p in entry(tmp_path).iterdir() if p.name != "manifest.json")
    assert sorted(name for name, _ in sealed) == files and "data.npy" in files
    assert not any(manifest_there for _, manifest_there in sealed)


def test_crc32_is_zlibs_and_the_manifest_records_it(tmp_path):
    """The full checksum is the standard CRC-32 (zlib's; known value of b"123456789": cbf43926,
    the CRC-32 check value), whatever the block size it is read in; the manifest records it."""
    import zlib

    (tmp_path / "check").write_bytes(b"123456789")
    assert crc32(tmp_path / "check") == "cbf43926"
    blob = np.random.default_rng(3).integers(0, 256, (1 << 22) + 12345, dtype=np.uint8).tobytes()
    (tmp_path / "big").write_bytes(blob)  # more than one block
    assert crc32(tmp_path / "big") == f"{zlib.crc32(blob):08x}"
    run_once(tmp_path / "cache")
    folder = entry(tmp_path / "cache")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["format"] == 4
    assert {name: meta["crc32"] for name, meta in manifest["files"].items()} == {
        p.name: f"{zlib.crc32(p.read_bytes()):08x}" for p in folder.iterdir() if p.name != "manifest.json"}


def test_corpus_with_a_fingerprint_is_not_hashed(tmp_path, monkeypatch):
    """A loaded corpus names its cache entry by its fingerprint (the source file's sha256): the
    documents are not hashed again; the same content without a fingerprint is another entry."""
    from retrievers.bm25 import engines

    corpus = Corpus.from_table(CORPUS.table)
    corpus.fingerprint = "f" * 64
    first = BM25Retriever(cache_dir=tmp_path)
    first.index(corpus)

    def no_digest(*args, **kw):
        raise AssertionError("corpus hashed despite its fingerprint")

    monkeypatch.setattr(engines, "corpus_digest", no_digest)
    second = BM25Retriever(cache_dir=tmp_path)
    second.index(corpus)
    assert (first.backend.cache_status, second.backend.cache_status) == ("built", "hit")
    assert second.search(QUERIES, 10).to_dict() == first.search(QUERIES, 10).to_dict()
    monkeypatch.undo()
    status, _ = run_once(tmp_path)  # CORPUS: no fingerprint, hashed
    index_cache.wait()
    assert status == "built" and len(list((tmp_path / "bm25").iterdir())) == 2


def test_key_depends_on_corpus_analyzer_and_parameters(tmp_path):
    run_once(tmp_path)
    run_once(tmp_path, k1=1.2)
    run_once(tmp_path, stemmer=None)
    r = BM25Retriever(cache_dir=tmp_path)
    r.index(Corpus(CORPUS.ids, CORPUS.titles, CORPUS.texts[:-1] + ["changed text"]))
    assert r.backend.cache_status == "built"
    index_cache.wait()
    assert len(list((tmp_path / "bm25").iterdir())) == 4


def test_key_depends_on_the_analysis_version(tmp_path, monkeypatch):
    """A change of the analysis (ANALYSIS_VERSION bumped) must not read an index whose terms the old
    analysis made: the entry is rebuilt under a new key, the old one left as it was."""
    from retrievers.bm25 import lucene_backend

    assert run_once(tmp_path)[0] == "built"
    assert run_once(tmp_path)[0] == "hit"
    monkeypatch.setattr(lucene_backend, "ANALYSIS_VERSION", lucene_backend.ANALYSIS_VERSION + 1)
    assert run_once(tmp_path)[0] == "built"
    index_cache.wait()
    assert len(list((tmp_path / "bm25").iterdir())) == 2


def test_cache_dir_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "env"))
    assert index_cache.cache_root() == tmp_path / "env"
    assert index_cache.cache_root(tmp_path / "explicit") == tmp_path / "explicit"
    status, _ = run_once(None)
    index_cache.wait()
    assert status == "built" and (tmp_path / "env" / "bm25").is_dir()


def test_cache_off_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    status, _ = run_once(None, cache=False)
    index_cache.wait()
    assert status == "off" and not (tmp_path / "bm25").exists()


def test_cached_bounds_are_the_computed_ones(tmp_path):
    """The compiled search's pruning bounds (each term's largest posting score) are stored with the
    index and taken back on a hit, not computed again; the runs are the same."""
    if loader.extension() is None:
        pytest.skip("the pruning bounds belong to the compiled search (extension not built)")
    built = BM25Retriever(cache_dir=tmp_path)
    built.index(CORPUS)
    computed = built.backend.sparse_index.bounds.copy()
    index = built.backend.sparse_index
    expected = [index.data[s:e].max() if e > s else 0 for s, e in zip(index.indptr[:-1], index.indptr[1:])]
    np.testing.assert_array_equal(computed, np.array(expected, np.float32))
    np.testing.assert_array_equal(np.load(entry(tmp_path) / "bounds.npy"), computed)
    hit = BM25Retriever(cache_dir=tmp_path)
    hit.index(CORPUS)
    assert hit.backend.cache_status == "hit"
    np.testing.assert_array_equal(hit.backend.sparse_index.bounds, computed)
    assert hit.search(QUERIES, 10).to_dict() == built.search(QUERIES, 10).to_dict()


def _mapped_file(array: np.ndarray):
    """The file a (view of a) memory-mapped array is mapped on, else None."""
    while array is not None:
        if isinstance(array, np.memmap):
            return Path(array.filename)
        array = array.base if isinstance(array.base, np.ndarray) else None
    return None


def _maps_of(folder: Path) -> dict[str, set[str]]:
    """File name -> the permissions ("r--s", "rw-s", ...) of this process's mappings of files under ``folder``."""
    out: dict[str, set[str]] = {}
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith(str(folder)):
            out.setdefault(Path(fields[5]).name, set()).add(fields[1])
    return out


@pytest.mark.parametrize("method", ["lucene", "bm25l"])
def test_cached_build_keeps_its_postings_in_ram_and_saves_an_entry_like_any_other(tmp_path, method):
    """A cached build holds its postings in RAM, as an uncached one does, and maps none of its cache
    entry's files while the writer writes and fsyncs them (the postings were once scattered into the
    entry's mapped files: at 8.8M passages, writeback cleaned those pages while the scatter still wrote
    them, docs/bm25.md "Index cache"). The entry holds the same bytes as one saved from an index built
    in RAM, its runs are the same, and the next run is a hit."""
    if not Path("/proc/self/maps").exists():
        pytest.skip("needs /proc/self/maps (Linux)")
    mapped_while_saved = []
    seal = index_cache.seal

    def seal_and_record(path):  # this process's maps of the cache's files as the writer fsyncs each one
        mapped_while_saved.append(_maps_of(tmp_path))
        seal(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_cache, "seal", seal_and_record)
        built = BM25Retriever(cache_dir=tmp_path / "cached", method=method)
        built.index(CORPUS)
        index = built.backend.sparse_index
        for name in ("indices", "data"):
            assert _mapped_file(getattr(index, name)) is None, name
        folder = entry(tmp_path / "cached")
    assert len(mapped_while_saved) == len(json.loads((folder / "manifest.json").read_text())["files"])
    assert mapped_while_saved == [{}] * len(mapped_while_saved)
    ram = BM25Retriever(cache=False, method=method)
    ram.index(CORPUS)
    index_cache.save(ram.backend.sparse_index, tmp_path / "ram", folder.name, {"same": "settings"})
    manifest = json.loads((folder / "manifest.json").read_text())
    for name in manifest["files"]:
        assert (folder / name).read_bytes() == (tmp_path / "ram" / "bm25" / folder.name / name).read_bytes(), name
    assert built.search(QUERIES, 10).to_dict() == ram.search(QUERIES, 10).to_dict()
    assert run_once(tmp_path / "cached", method=method) == ("hit", ram.search(QUERIES, 10).to_dict())


def test_full_disk_leaves_the_run_whole_and_no_entry(tmp_path, monkeypatch):
    """A full disk while the entry is written (its files' writes raise ENOSPC): the run's results are those
    of a cached run, the cache status says why nothing was cached, no temporary folder stays, and the next
    run with room builds and caches the entry."""
    _, want = run_once(tmp_path / "reference", cache=True)
    save = index_cache.write_pieces  # (every file's bytes: the arrays after their .npy header, terms.txt)

    def full(handle, array, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_cache, "write_pieces", full)
    r = BM25Retriever(cache_dir=tmp_path / "full")
    r.index(CORPUS)
    assert r.search(QUERIES, 10).to_dict() == want
    index_cache.wait()
    assert r.backend.cache_status == "built, not cached (No space left on device)"
    assert [p.name for p in (tmp_path / "full" / "bm25").iterdir()] == []
    monkeypatch.setattr(index_cache, "write_pieces", save)
    assert run_once(tmp_path / "full") == ("built", want)
    assert run_once(tmp_path / "full") == ("hit", want)


def test_failed_build_leaves_no_staging_folder(tmp_path, monkeypatch):
    r = BM25Retriever(cache_dir=tmp_path)

    def broken(corpus, allocate=None):
        raise RuntimeError("the build failed")

    monkeypatch.setattr(r.backend.engine, "build", broken)
    with pytest.raises(RuntimeError, match="the build failed"):
        r.index(CORPUS)
    assert [p.name for p in (tmp_path / "bm25").iterdir()] == []


def test_staging_folders_of_dead_processes_are_removed(tmp_path):
    """A build killed midway leaves ``.<key>.<pid>.<random>.tmp``; the next build of that key removes
    it once its process is gone, and leaves a live process's and save's own (pid-less) folders."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    key = "k" * 32
    parent = tmp_path / "bm25"
    parent.mkdir()
    abandoned = parent / f".{key}.{dead.pid}.abcd1234.tmp"
    live = parent / f".{key}.{os.getpid()}.efgh5678.tmp"
    saving = parent / f".{key}.ijkl9012.tmp"
    other_key = parent / f".{'j' * 32}.{dead.pid}.mnop3456.tmp"
    for folder in (abandoned, live, saving, other_key):
        folder.mkdir()
        (folder / "indices.npy").write_bytes(b"partial")
    staging = index_cache.Staging(tmp_path, key)
    assert not abandoned.exists() and live.exists() and saving.exists() and other_key.exists()
    assert staging.folder.parent == parent and staging.folder.name.startswith(f".{key}.{writer_tag()}.")
    staging.discard()
    assert not staging.folder.exists()


def test_unwritable_cache_root_still_builds_and_searches(tmp_path, caplog):
    """A cache root that cannot hold an entry (here under a file; as root, permissions would not
    stop it): the build keeps its arrays in RAM, the run is the same, one warning says the cache
    was not written."""
    _, want = run_once(tmp_path / "reference")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    r = BM25Retriever(cache_dir=blocker / "cache")
    r.index(CORPUS)
    got = r.search(QUERIES, 10).to_dict()
    index_cache.wait()  # (the write fails on its thread; the status says so once it is over)
    assert r.backend.cache_status == "built, not cached (Not a directory)" and got == want
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "could not write the BM25 index cache" in warnings[0].getMessage()


def test_a_cache_hit_gives_the_corpus_its_cached_ranks_so_that_nothing_sorts_its_ids_again(tmp_path, monkeypatch):
    """A warm run's ranks come from the cache entry (keyed by the corpus); experiment.checked_run compares a
    run's claimed ranks with the corpus's own, and computed those by sorting the ids (0.04-0.10 s at 1M
    documents) unless the corpus holds the same arrays. Expected: the hit hands its ranks to a fresh corpus
    (equal to the ids' string ranks) and no sort of the ids runs, to the end of a checked experiment."""
    from harness.datasets.corpus import Dataset
    from harness.evaluation import Evaluator
    from harness.experiment import run_experiment
    from harness.formats import native
    from harness.qrels import Qrels

    first = Corpus.from_table(CORPUS.table)
    first.fingerprint = "e" * 64
    BM25Retriever(cache_dir=tmp_path).index(first)
    index_cache.wait()
    corpus = Corpus.from_table(CORPUS.table)
    corpus.fingerprint = "e" * 64

    def no_sort(*args, **kw):
        raise AssertionError("the corpus's ids were sorted again")

    monkeypatch.setattr(native, "string_order", no_sort)
    monkeypatch.setattr(Corpus, "id_order", property(lambda self: self.__dict__["id_order"]))  # (no sort either)
    retriever = BM25Retriever(cache_dir=tmp_path)
    dataset = Dataset("tiny", "test", corpus, QUERIES, Qrels.from_rows([("q1", "d1", 1)]))
    exp = run_experiment(dataset, retriever, Evaluator(["NDCG@10"], [10]), [10])
    assert retriever.backend.cache_status == "hit"
    np.testing.assert_array_equal(corpus.__dict__["id_rank"], string_ranks(CORPUS.id_array))
    assert exp.result.n_queries == 1  # (q1, the one judged query)


def test_the_entrys_files_are_written_two_at_a_time_largest_first(tmp_path, monkeypatch):
    """save() writes and fsyncs the entry's files on two threads, the largest first (the run waits for the
    entry once it has searched: the second core is then idle). The two postings arrays (indices, data) are
    sealed at once: each seal waits for the other at a barrier, which times out where they are sealed one
    after the other. A failed write still leaves no folder."""
    r = BM25Retriever(cache=False)
    r.index(CORPUS)
    index = r.backend.sparse_index
    both = threading.Barrier(2, timeout=10)
    order, seal = [], index_cache.seal

    def seal_in_pairs(path):
        order.append(path.name)
        if path.name in ("indices.npy", "data.npy"):
            both.wait()
        seal(path)
    monkeypatch.setattr(index_cache, "seal", seal_in_pairs)
    folder = index_cache.save(index, tmp_path, "k" * 32, {"s": 1})
    assert sorted(order[:2]) == ["data.npy", "indices.npy"]
    assert set(order) == set(json.loads((folder / "manifest.json").read_text())["files"])
    assert index_cache.load(tmp_path, "k" * 32) is not None

    def failing(path):
        if path.name == "doc_lengths.npy":
            raise OSError(28, "No space left on device")
        seal(path)
    monkeypatch.setattr(index_cache, "seal", failing)
    with pytest.raises(OSError, match="No space left"):
        index_cache.save(index, tmp_path / "full", "k" * 32, {"s": 1})
    assert [p.name for p in (tmp_path / "full" / "bm25").iterdir()] == []


def test_a_script_that_ends_right_after_indexing_leaves_a_whole_entry(tmp_path):
    """A script that indexes and ends at once: the interpreter shuts down while the background writer
    saves the entry (two files at a time). The entry is whole (the next run is a hit) and nothing is
    printed: a ``concurrent.futures`` pool in the writer refused its work at shutdown ("cannot schedule new
    futures after interpreter shutdown"), and the entry was never written."""
    script = (
        "import sys\n"
        "from harness.datasets.corpus import Corpus\n"
        "from retrievers.bm25 import BM25Retriever\n"
        "corpus = Corpus([f'd{i}' for i in range(3000)], [''] * 3000,\n"
        "                [f'doc {i} topic{i % 50} item{i % 7} word{i % 311}' for i in range(3000)])\n"
        "BM25Retriever(cache_dir=sys.argv[1]).index(corpus)\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0 and done.stderr == "", done.stderr
    (folder,) = (tmp_path / "bm25").iterdir()
    assert index_cache.load(tmp_path, folder.name) is not None
