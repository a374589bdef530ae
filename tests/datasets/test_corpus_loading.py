"""The lean corpus loader and the Arrow-backed corpus on small hand-made data."""

from __future__ import annotations

import json
import os
import pickle
import time

import pyarrow as pa
import pytest

from harness.datasets.beir import load_corpus
from harness.datasets.corpus import Corpus
from harness.errors import InputError


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" if r is not None else "\n" for r in rows), encoding="utf-8")


def test_duplicate_id_names_both_lines(tmp_path):
    path = tmp_path / "corpus.jsonl"
    _write(path, [{"_id": "a", "text": "x"}, None, {"_id": "b", "text": "y"}, {"_id": "a", "text": "z"}])
    with pytest.raises(InputError) as err:
        load_corpus(path)
    # line 2 is blank, so the first "a" is line 1 and the duplicate is line 4
    assert str(err.value) == f"{path}:4: duplicate document id (first on line 1) (id 'a')"


def test_numeric_and_missing_fields_become_strings(tmp_path):
    path = tmp_path / "corpus.jsonl"
    _write(path, [{"_id": 7, "title": None, "text": 3.5}, {"_id": "x", "title": "T"}])
    corpus = load_corpus(path)
    assert (corpus.ids, corpus.titles, corpus.texts) == (["7", "x"], ["", "T"], ["3.5", ""])


def test_arrow_corpus_matches_list_corpus():
    ids, titles, texts = ["d1", "d2", "d3"], ["", " Title ", "t"], ["alpha", "beta ", ""]
    lists = Corpus(ids, titles, texts)
    table = pa.table({"_id": ids, "title": titles, "text": texts})
    arrow = Corpus.from_table(table)
    assert len(arrow) == 3 and arrow.ids == ids
    assert list(arrow.titles) == titles and arrow.texts[1] == "beta " and arrow.texts[-1] == ""
    assert arrow.texts[0:2] == ["alpha", "beta "] and arrow.texts[::2] == ["alpha", ""]
    # contents(): (title + " " + text).strip() when the title is non-empty, else text (Corpus's rule)
    assert arrow.contents() == lists.contents() == ["alpha", "Title  beta", "t"]
    assert [c for batch in arrow.iter_contents(batch_size=2) for c in batch] == lists.contents()
    assert [c for batch in lists.iter_contents(batch_size=2) for c in batch] == lists.contents()
    assert arrow.id_array.tolist() == ids


def test_arrow_corpus_casts_integer_ids_and_fills_nulls():
    table = pa.table({"_id": [10, 20], "title": [None, "a"], "text": ["x", None]})
    corpus = Corpus.from_table(table)
    assert corpus.ids == ["10", "20"] and list(corpus.titles) == ["", "a"] and list(corpus.texts) == ["x", ""]
    with pytest.raises(ValueError, match="lacks column"):
        Corpus.from_table(pa.table({"_id": ["a"], "text": ["x"]}))


# --- validation through the columnar reader: every fault still names its file, line and id ---------

@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("lines, expected", [
    (['{"_id": "a", "text": "x"}', '{"_id": "b", "text": "y"', '{"_id": "c"}'],
     "{path}:2: malformed JSON: Expecting ',' delimiter at column 25"),
    (['{"_id": "a", "text": "x"}', '', '["not", "an", "object"]'], "{path}:3: expected a JSON object"),
    (['{"_id": "a", "text": "x"}', '{"title": "t", "text": "y"}'], "{path}:2: missing '_id'"),
    (['{"_id": "a"}', '{"_id": "b"}', '{"_id": "a"}'], "{path}:3: duplicate document id (first on line 1) (id 'a')"),
])
def test_corpus_faults_name_the_line(tmp_path, lines, expected, gz):
    import gzip

    path = tmp_path / ("corpus.jsonl.gz" if gz else "corpus.jsonl")
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    with pytest.raises(InputError) as err:
        load_corpus(path)
    assert str(err.value) == expected.format(path=path)


def test_invalid_utf8_is_refused(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "a", "text": "x"}\n{"_id": "b", "text": "\xff"}\n')
    with pytest.raises(InputError) as err:
        load_corpus(path)
    # the line of the bad byte (docs/datasets.md: "FILE:LINE: ... unreadable bytes")
    assert str(err.value) == f"{path}:2: not valid UTF-8 (byte 0xff at column 23)"


def test_columnar_load_matches_the_line_scan(tmp_path):
    """The fast parse and the line-by-line reader give the same columns (blank lines, CRLF, nulls,
    unknown keys, non-ASCII)."""
    from harness.datasets.beir import _scan_corpus

    path = tmp_path / "corpus.jsonl"
    path.write_bytes('{"_id": "d1", "title": "Müller", "text": "β-catenin \\u00e9", "metadata": {"x": [1]}}\r\n'
                     '\n{"_id": "d2", "title": null, "text": "two"}\n  \n{"_id": "d3", "text": ""}\n'.encode())
    fast, slow = load_corpus(path), _scan_corpus(path)
    assert fast.ids == slow.ids == ["d1", "d2", "d3"]
    assert list(fast.titles) == list(slow.titles) == ["Müller", "", ""]
    assert list(fast.texts) == list(slow.texts) == ["β-catenin é", "two", ""]


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_id_rank_is_the_string_order_of_the_ids(compiled, monkeypatch):
    """Corpus.id_rank (the compiled radix sort of the _id column's bytes, or Arrow's sort_indices
    without it) is the rank that Python's string order gives: worked example with ids whose code
    point order differs from their numeric order and from a byte-per-character order ("é" U+00E9 <
    "€" U+20AC < "𝄞" U+1D11E; UTF-8 bytes agree), and a random one over several record batches,
    repeats kept in their order (stable)."""
    import numpy as np

    monkeypatch.setenv("HARNESS_TREC_COMPILED", compiled)

    from retrievers.topk import string_ranks

    ids = ["10", "9", "€", "𝄞", "é", "Z", "a", "100"]
    corpus = Corpus(ids, [""] * len(ids), [""] * len(ids))
    # string order: "10" < "100" < "9" < "Z" < "a" < "é" < "€" < "𝄞"
    assert corpus.id_rank.tolist() == [0, 2, 6, 7, 5, 3, 4, 1]
    rng = np.random.default_rng(7)
    alphabet = list("ab0Z-é€𝄞 ~")
    many = ["".join(rng.choice(alphabet, rng.integers(0, 5))) for _ in range(5000)]
    table = pa.Table.from_batches([pa.record_batch({"_id": many[i:i + 700], "title": [""] * len(many[i:i + 700]),
                                                    "text": [""] * len(many[i:i + 700])}) for i in range(0, 5000, 700)])
    chunked = Corpus.from_table(table)
    assert chunked.table.column("_id").num_chunks > 1 and len(set(many)) < len(many)
    assert np.array_equal(chunked.id_rank, string_ranks(chunked.id_array))


def test_batches_stream_the_columns():
    corpus = Corpus([f"d{i}" for i in range(5)], ["t"] * 5, [str(i) for i in range(5)])
    batches = list(corpus.batches(2))
    assert [b.num_rows for b in batches] == [2, 2, 1]
    assert batches[0].schema.names == ["_id", "title", "text"]
    assert [x for b in batches for x in b.column(2).to_pylist()] == ["0", "1", "2", "3", "4"]


def test_queries_fast_and_fallback_paths(tmp_path):
    from harness.datasets.beir import load_queries

    path = tmp_path / "queries.jsonl"
    _write(path, [{"_id": "q1", "text": "a"}, {"_id": "q2"}])
    queries = load_queries(path)
    assert (queries.ids, queries.texts) == (["q1", "q2"], ["a", ""])
    _write(path, [{"_id": 1, "text": 2}])  # numbers: the line scan converts them, as before
    assert (load_queries(path).ids, load_queries(path).texts) == (["1"], ["2"])
    _write(path, [{"_id": "q1", "text": "a"}, {"_id": "q1", "text": "b"}])
    with pytest.raises(InputError) as err:
        load_queries(path)
    assert str(err.value) == f"{path}:2: duplicate query id (first on line 1) (id 'q1')"


# --- the Arrow corpus cache ------------------------------------------------------------------------

@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _corpus_file(tmp_path, n=50, suffix=""):
    path = tmp_path / "corpus.jsonl"
    _write(path, [{"_id": f"d{i}", "title": f"title {i}", "text": f"text {i}{suffix}"} for i in range(n)])
    return path


def _arrow_files(root):
    return sorted((root / "corpora").glob("*.arrow"))


def test_cache_hit_maps_the_same_corpus(tmp_path, cache_root, monkeypatch):
    from harness.checksums import sha256
    from harness.datasets import corpus_cache

    path = _corpus_file(tmp_path)
    first = load_corpus(path, cache=True)
    corpus_cache.wait()  # written in the background
    files = _arrow_files(cache_root)
    assert [f.name for f in files] == [f"{sha256(path)}-v{corpus_cache.FORMAT}.arrow"]
    # the second load reads the cache file and never parses the source
    monkeypatch.setattr("harness.datasets.beir._parse_corpus", lambda p: pytest.fail("parsed again"))
    second = load_corpus(path, cache=True)
    assert second.ids == first.ids and list(second.texts) == list(first.texts) == [f"text {i}" for i in range(50)]
    assert _arrow_files(cache_root) == files


def test_damaged_cache_is_rebuilt(tmp_path, cache_root):
    from harness.datasets import corpus_cache

    path = _corpus_file(tmp_path)
    load_corpus(path, cache=True)
    corpus_cache.wait()
    (target,) = _arrow_files(cache_root)
    for damage in (lambda b: b[: len(b) // 2], lambda b: b"garbage" * 10, lambda b: b""):
        target.write_bytes(damage(target.read_bytes()))
        corpus = load_corpus(path, cache=True)
        assert corpus.ids == [f"d{i}" for i in range(50)] and corpus.texts[49] == "text 49"
        corpus_cache.wait()
        assert _arrow_files(cache_root) == [target]


def test_changed_source_is_parsed_again(tmp_path, cache_root):
    from harness.datasets import corpus_cache

    path = _corpus_file(tmp_path)
    assert load_corpus(path, cache=True).texts[0] == "text 0"
    _corpus_file(tmp_path, suffix=" changed")
    assert load_corpus(path, cache=True).texts[0] == "text 0 changed"
    corpus_cache.wait()
    assert len(_arrow_files(cache_root)) == 2  # one file per source checksum


def test_checksum_memo_follows_the_file(tmp_path, cache_root, monkeypatch):
    """The remembered checksum is reused only while the file's stat is unchanged."""
    from harness.checksums import sha256
    from harness.datasets import corpus_cache

    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 0)
    path = _corpus_file(tmp_path)
    digest = corpus_cache.source_checksum(path)
    assert digest == sha256(path)
    calls = []
    monkeypatch.setattr(corpus_cache, "sha256", lambda p: calls.append(p) or sha256(p))
    assert corpus_cache.source_checksum(path) == digest and calls == []
    stat = path.stat()
    _corpus_file(tmp_path, suffix="!")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime; size and ctime still differ
    assert corpus_cache.source_checksum(path) == sha256(path) != digest and calls == [path]


def test_small_corpora_are_not_cached_by_default(tmp_path, cache_root):
    load_corpus(_corpus_file(tmp_path))
    assert not (cache_root / "corpora").exists()


def test_load_dataset_counts_the_cache_hit_in_load_s(tmp_path, cache_root, monkeypatch):
    from harness.datasets import corpus_cache, load_dataset

    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 0)
    folder = tmp_path / "ds"
    (folder / "qrels").mkdir(parents=True)
    _corpus_file(folder)
    _write(folder / "queries.jsonl", [{"_id": "q1", "text": "text"}])
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t1\nq1\tnope\t1\n")
    cold = load_dataset(str(folder))
    corpus_cache.wait()
    assert len(_arrow_files(cache_root)) == 1
    real = corpus_cache.open_cached
    monkeypatch.setattr(corpus_cache, "open_cached", lambda *a: (time.sleep(0.05), real(*a))[1])
    warm = load_dataset(str(folder))
    assert warm.load_s >= 0.05 and cold.load_s > 0
    assert warm.files == cold.files and warm.corpus.ids == cold.corpus.ids
    assert warm.warnings == ["1 judgment(s) name documents missing from the corpus"]


def test_fingerprint_follows_the_source_bytes(tmp_path, cache_root):
    """Same bytes -> same fingerprint, cached or not; other bytes -> another; built by hand -> None."""
    path = _corpus_file(tmp_path)
    cached, parsed = load_corpus(path, cache=True), load_corpus(path, cache=False)
    assert cached.fingerprint == parsed.fingerprint and len(cached.fingerprint) == 64
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(path.read_bytes())
    assert load_corpus(copy).fingerprint == cached.fingerprint
    _corpus_file(tmp_path, suffix="!")
    assert load_corpus(path).fingerprint != cached.fingerprint
    assert Corpus(["a"], [""], ["x"]).fingerprint is None


def test_empty_corpus_is_refused(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n  \n")
    with pytest.raises(InputError) as err:
        load_corpus(path)
    assert str(err.value) == f"{path}: the corpus is empty"


def test_a_parsed_corpus_replaced_by_its_map_is_given_back(tmp_path, cache_root, monkeypatch):
    """Cold: the parsed table is dropped for the memory-mapped cache and Arrow's allocator is told to
    return the freed memory at once (mimalloc otherwise kept ~450 MB of a 1M-document corpus through
    the whole index build); warm: nothing was parsed, nothing to give back. (The path of a corpus
    parsed whole; a streamed one is never in RAM: tests/datasets/test_corpus_stream.py.)"""
    from harness.datasets import corpus_cache

    monkeypatch.setenv("HARNESS_CORPUS_STREAM", "0")
    calls = []
    monkeypatch.setattr(corpus_cache, "_release_freed_memory", lambda: calls.append(1))
    path = _corpus_file(tmp_path)
    cold = load_corpus(path, cache=True)
    corpus_cache.wait()
    assert calls == [1] and cold.texts[0] == "text 0"
    assert load_corpus(path, cache=True).ids == cold.ids and calls == [1]
def _mapped_rss_kib(path) -> int:
    """Resident KiB of this process's mappings of ``path`` (/proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:  # a mapping's header line
                inside = len(head) >= 6 and head[5] == str(path)
            elif inside and head[0] == "Rss:":
                total += int(head[1])
    return total


needs_smaps = pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="needs Linux /proc/self/smaps")


@needs_smaps
def test_release_drops_mapped_pages_and_keeps_the_text(tmp_path, cache_root, monkeypatch):
    """A pass that reads the mapped corpus in chunks (corpus_chunks, iter_contents, ids) and releases
    each chunk leaves little of the file resident (what the kernel maps around the last faults);
    the text reads the same afterwards. (One record batch: where a chunk starts, the kernel maps the
    rest of a large page-cache folio behind it, up to 1 MiB, which a file of 15 MB cut in 2 MiB batches
    adds up to several MB of; at 1M documents, 201 batches, a pass left 21 MiB of 361 resident, 16 MiB
    in 26 batches.)"""
    from harness.datasets import corpus_cache, jsonl
    from retrievers.texts import corpus_chunks

    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 16 << 20)

    path = tmp_path / "corpus.jsonl"
    texts = [f"passage {i} " + "lorem ipsum dolor " * (i % 40) for i in range(40_000)]  # ~15 MB of text
    _write(path, [{"_id": str(i), "title": "", "text": t} for i, t in enumerate(texts)])
    corpus = load_corpus(path, cache=True)
    corpus_cache.wait()  # the parsed corpus is switched to the cache file's map once it is written
    arrow = _arrow_files(cache_root)[0]
    assert corpus._mapping is not None
    full = corpus.table.column("text").to_pylist()  # touches every page, and they stay mapped
    assert full == texts and _mapped_rss_kib(arrow) > 12_000
    corpus.release(corpus.table)
    assert _mapped_rss_kib(arrow) < 1_000
    assert list(corpus.texts) == texts and _mapped_rss_kib(arrow) > 12_000  # read again (page cache)
    corpus.release(corpus.table)
    read = [t for _, _, chunk in corpus_chunks(corpus, 3_000) for t in chunk]
    assert read == texts and _mapped_rss_kib(arrow) < 3_000
    corpus.release(corpus.table)
    assert [c for batch in corpus.iter_contents(3_000) for c in batch] == texts and _mapped_rss_kib(arrow) < 3_000
    corpus.release(corpus.table)
    assert corpus.ids == [str(i) for i in range(40_000)] and _mapped_rss_kib(arrow) < 1_000
    copy = pickle.loads(pickle.dumps(corpus))  # without the map, the text copied
    assert copy._mapping is None and list(copy.texts) == texts and copy.fingerprint == corpus.fingerprint


def test_release_leaves_a_corpus_in_memory_alone(tmp_path):
    """Released pages of an anonymous (in-RAM) table would read back as zeros: release must not
    touch them (a corpus built from lists, a parsed corpus not cached)."""
    texts = ["alpha beta " * 500 + str(i) for i in range(2_000)]  # several pages
    built = Corpus([str(i) for i in range(2_000)], [""] * 2_000, texts)
    built.release(built.table)
    assert list(built.texts) == texts
    path = tmp_path / "corpus.jsonl"
    _write(path, [{"_id": str(i), "text": t} for i, t in enumerate(texts)])
    parsed = load_corpus(path, cache=False)
    assert parsed._mapping is None
    parsed.release(parsed.table)
    assert list(parsed.texts) == texts
