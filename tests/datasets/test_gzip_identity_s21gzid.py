"""One text, several encodings: a corpus read as corpus.jsonl or as corpus.jsonl.gz (gzip at another level, with
another header mtime) is one corpus to the caches and one dataset to compare / check; the file checksums stay
recorded as provenance (docs/datasets.md, docs/cache.md). On the real SciFact test set."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import shared_dataset

ENCODINGS = ("plain", "gzip-n6", "gzip-1-mtime")


def _folder(root: Path, source: Path, encoding: str) -> Path:
    """A BEIR folder of ``source``'s data with its corpus in ``encoding`` (queries plain)."""
    folder = root / f"scifact-{encoding}"
    (folder / "qrels").mkdir(parents=True)
    shutil.copy(source / "qrels" / "test.tsv", folder / "qrels" / "test.tsv")
    (folder / "queries.jsonl").write_bytes(gzip.decompress((source / "queries.jsonl.gz").read_bytes()))
    text = gzip.decompress((source / "corpus.jsonl.gz").read_bytes())
    if encoding == "plain":
        (folder / "corpus.jsonl").write_bytes(text)
    elif encoding == "gzip-n6":  # gzip -n -6: no name, mtime 0
        (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(text, compresslevel=6, mtime=0))
    else:  # gzip -1 with a header mtime
        (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(text, compresslevel=1, mtime=1_700_000_000))
    return folder


@pytest.fixture
def folders(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    source = shared_dataset("scifact")
    return {encoding: _folder(tmp_path, source, encoding) for encoding in ENCODINGS}


@pytest.mark.parametrize("remembered", [False, True], ids=["small", "stat-remembered"])
def test_a_corpus_plain_or_gzipped_is_one_cached_corpus_with_one_fingerprint(folders, tmp_path, monkeypatch,
                                                                             remembered):
    from harness.datasets import corpus_cache
    from harness.datasets.beir import find_file, load_corpus

    if remembered:  # as a corpus of MIN_BYTES or more: hashed on a thread while parsed, checksums remembered
        monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)

    paths = [find_file(folders[e], "corpus.jsonl") for e in ENCODINGS]
    assert len({hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}) == 3  # three files
    text_sha = hashlib.sha256(paths[0].read_bytes()).hexdigest()
    corpora = [load_corpus(p, cache=True) for p in paths]
    corpus_cache.wait()
    assert [len(c) for c in corpora] == [5183] * 3
    # one fingerprint (the BM25 index, the embeddings and the stages are keyed on it), that of the text
    assert {c.fingerprint for c in corpora} == {corpus_cache.fingerprint(text_sha)}
    # one parsed-corpus file, named by the text's checksum: the gzipped loads mapped the plain one's
    arrows = sorted(p.name for p in (tmp_path / "cache" / "corpora").glob("*.arrow"))
    assert arrows == [f"{text_sha}-v{corpus_cache.FORMAT}.arrow"]
    assert corpora[1]._mapping is not None and corpora[2]._mapping is not None
    if not remembered:
        return
    # both checksums are remembered by stat: a warm load decompresses nothing
    memo = json.loads(corpus_cache._memo_path(paths[2]).read_text(encoding="utf-8"))
    assert memo["content_sha256"] == text_sha and memo["sha256"] == hashlib.sha256(paths[2].read_bytes()).hexdigest()


def test_a_dataset_records_its_files_and_their_content(folders):
    from harness.datasets.beir import load_beir_folder

    plain, packed = load_beir_folder(folders["plain"]), load_beir_folder(folders["gzip-1-mtime"])
    text_sha = hashlib.sha256((folders["plain"] / "corpus.jsonl").read_bytes()).hexdigest()
    gz_sha = hashlib.sha256((folders["gzip-1-mtime"] / "corpus.jsonl.gz").read_bytes()).hexdigest()
    # files: exactly which file was read (provenance); content: what it holds, under the name without .gz
    assert plain.files["corpus.jsonl"] == text_sha and packed.files["corpus.jsonl.gz"] == gz_sha
    assert "corpus.jsonl" not in packed.files
    assert plain.content == packed.content == {**plain.files}
    assert packed.identity() == plain.identity() == dict(sorted(plain.files.items()))


def test_compare_and_check_do_not_warn_when_only_the_encoding_differs(folders, tmp_path, harness_cli):
    out = tmp_path / "results"
    for encoding in ("plain", "gzip-1-mtime"):
        assert harness_cli("run", "-d", folders[encoding], "-r", "bm25", "-o", out, "--name", "bm25",
                           "-q").returncode == 0
    plain, packed = out / "scifact-plain" / "bm25", out / "scifact-gzip-1-mtime" / "bm25"
    compared = harness_cli("compare", plain, packed)
    assert compared.returncode == 0 and "different dataset files" not in compared.stdout + compared.stderr
    checked = harness_cli("check", "--baseline", plain, "--current", packed)
    assert checked.returncode == 0 and "different dataset files" not in checked.stdout + checked.stderr
    metrics = json.loads((packed / "metrics.json").read_text(encoding="utf-8"))  # (what they compared)
    assert "corpus.jsonl.gz" in metrics["dataset"]["files"]
    assert metrics["dataset"]["content"]["corpus.jsonl"] == hashlib.sha256(
        (folders["plain"] / "corpus.jsonl").read_bytes()).hexdigest()


def test_compare_warns_when_the_content_differs(folders, tmp_path, harness_cli):
    edited = tmp_path / "scifact-edited"
    shutil.copytree(folders["gzip-n6"], edited)
    text = gzip.decompress((edited / "corpus.jsonl.gz").read_bytes())
    (edited / "corpus.jsonl.gz").write_bytes(gzip.compress(text.replace(b'"text": "', b'"text": "x ', 1), mtime=0))
    out = tmp_path / "results"
    for folder in (folders["plain"], edited):
        assert harness_cli("run", "-d", folder, "-r", "bm25", "-o", out, "--name", "bm25", "-q").returncode == 0
    compared = harness_cli("compare", out / "scifact-plain" / "bm25", out / "scifact-edited" / "bm25")
    assert "were evaluated on different dataset files (sha256 of their content differ)" in compared.stdout


def test_a_pipeline_stage_is_reused_whether_the_corpus_is_read_gzipped_or_not(folders, tmp_path):
    """The stage key names the dataset's content checksums (Dataset.identity), not its files'."""
    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.pipeline import StageCache, parse_pipeline, run_pipeline

    pipeline = parse_pipeline({"name": "p", "stages": [{"name": "bm25", "type": "retrieve", "retriever": "bm25"}]},
                              "p.toml")
    cache = StageCache(tmp_path / "stages")
    outcomes = []
    for encoding in ("plain", "gzip-n6"):
        same_name = tmp_path / encoding / "scifact"  # (the key names the dataset's name too)
        shutil.copytree(folders[encoding], same_name)
        exp, (outcome,) = run_pipeline(load_dataset(str(same_name)), pipeline, Evaluator(["NDCG@10"]), [10],
                                       depth=10, cache=cache)
        outcomes.append((outcome.status, outcome.key, round(exp.document.metrics["NDCG@10"], 4)))
    assert outcomes[0][0] == "miss" and outcomes[1][0] == "hit"
    assert outcomes[0][1] == outcomes[1][1] and outcomes[0][2] == outcomes[1][2] == 0.6789  # (SciFact BM25 NDCG@10)


def test_a_bench_cell_is_reused_when_the_corpus_is_gzipped_in_place_and_run_when_it_changes(folders, tmp_path):
    from harness.bench import load_config, run_bench

    folder = folders["plain"]
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [10]\nmetrics = ["NDCG@10"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{folder}", label = "sf"}}]\n'
                      '[[retrievers]]\ntype = "bm25"\nlabel = "bm25"\n')
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["run"]
    text = (folder / "corpus.jsonl").read_bytes()
    (folder / "corpus.jsonl").unlink()
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(text, compresslevel=9, mtime=1_700_000_000))
    again = run_bench(load_config(config))
    assert [o.status for o in again.outcomes] == ["reused"]
    assert round(again.board["tables"]["NDCG@10"]["rows"]["sf"]["bm25"], 4) == 0.6789
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(text.replace(b'"text": "', b'"text": "x ', 1), mtime=0))
    assert [o.status for o in run_bench(load_config(config)).outcomes] == ["run"]


def test_a_stat_memo_of_an_earlier_release_gives_a_plain_file_its_content_checksum_and_a_gz_none(folders,
                                                                                                  monkeypatch):
    """Memos written before content checksums were remembered hold the file's sha256 only: a plain file's
    content checksum is that (not hashed again); a .gz's is not (it is decompressed and remembered once)."""
    from harness.atomic import write_json
    from harness.datasets import corpus_cache

    monkeypatch.setattr(corpus_cache, "MIN_BYTES", 1)
    plain, packed = folders["plain"] / "corpus.jsonl", folders["gzip-n6"] / "corpus.jsonl.gz"
    text_sha = hashlib.sha256(plain.read_bytes()).hexdigest()
    for path in (plain, packed):  # the memo as the earlier release wrote it
        write_json(corpus_cache._memo_path(path), {"path": str(path.resolve()), "stat": corpus_cache._stat_key(path),
                                                   "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    hashed = []
    real = corpus_cache.content_sha256
    monkeypatch.setattr(corpus_cache, "content_sha256", lambda p: hashed.append(Path(p).name) or real(p))
    assert corpus_cache.content_checksum(plain) == text_sha and hashed == []
    assert corpus_cache.content_checksum(packed) == text_sha and hashed == ["corpus.jsonl.gz"]
    assert corpus_cache.content_checksum(packed) == text_sha and hashed == ["corpus.jsonl.gz"]  # remembered now
    assert corpus_cache.source_checksum(packed) == hashlib.sha256(packed.read_bytes()).hexdigest()
