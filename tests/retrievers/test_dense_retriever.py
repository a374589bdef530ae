"""The dense retriever end to end with a fake model (no torch): cache hits, resume, prompts, params.

The fake encodes a text as counts of its words hashed into 16 buckets, so a query shares
dimensions with documents containing its words and every expected ranking can be checked by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import retrievers
from harness.datasets.corpus import Corpus, Queries
from harness.errors import HarnessError
from retrievers.dense import DenseRetriever
from retrievers.dense.model import ModelHandle, folder_digest

REPO = Path(__file__).resolve().parents[2]


class FakeModel(ModelHandle):
    def __init__(self, folder: Path, fail_after_calls: int | None = None):
        super().__init__("fake", folder)
        self.calls: list[tuple[list[str], str | None]] = []
        self.fail_after_calls = fail_after_calls

    def load(self):
        self.device = "cpu"
        return self

    def encode(self, texts, *, prompt, batch_size, normalize, max_seq_length):
        if self.fail_after_calls is not None and len(self.calls) >= self.fail_after_calls:
            raise KeyboardInterrupt("simulated interruption")
        self.calls.append((list(texts), prompt))
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in ((prompt or "") + text).lower().split():
                out[row, zlib.crc32(word.encode()) % 16] += 1.0
        return out


@pytest.fixture
def model_dir(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))
    (folder / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "query: ", "passage": "passage: "}}))
    (folder / "model.safetensors").write_bytes(b"fake weights")
    return folder


CORPUS = Corpus(
    ids=["d1", "d2", "d3", "d4", "d5"],
    titles=["Apples", "", "Bananas", "", "Cherries"],
    texts=["red apples grow on trees", "bananas are yellow", "yellow fruit from the tropics",
           "nothing relevant here", "cherries are red"],
)
QUERIES = Queries(["q1", "q2"], ["apples", "cherries"])


def make(model_dir, tmp_path, **kwargs):
    model = kwargs.pop("model", None) or FakeModel(model_dir)
    return DenseRetriever(model=model, cache_dir=str(tmp_path / "cache"), cache_chunk_size=2, progress=False,
                          **kwargs)


def test_known_query_finds_its_document(model_dir, tmp_path):
    r = make(model_dir, tmp_path)
    r.index(CORPUS)
    run = r.search(QUERIES, 3)
    # "apples" occurs only in d1 (title "Apples" + text "red apples ..."), "cherries" in d5.
    assert run.doc_ids(0)[0] == "d1"
    assert run.doc_ids(1)[0] == "d5"
    assert run.is_canonical()
    # its ids are looked up by binary search over the corpus's id order (no id -> position dict)
    assert run._vocab_index is None and run._rank_view is not None
    assert run._codes_by_rank(["d5", "x", "d1"]).tolist() == [4, -1, 0]


def test_second_run_skips_encoding_and_gives_the_identical_run(model_dir, tmp_path):
    first = make(model_dir, tmp_path)
    first.index(CORPUS)
    run1 = first.search(QUERIES, 5)
    s1 = first.stats()
    assert (s1["documents_cache"], s1["documents_encoded"], s1["queries_cache"]) == ("miss", 5, "miss")

    again = make(model_dir, tmp_path)
    again.index(CORPUS)
    run2 = again.search(QUERIES, 5)
    s2 = again.stats()
    assert again.model.calls == []
    assert (s2["documents_cache"], s2["documents_from_cache"], s2["documents_encoded"]) == ("hit", 5, 0)
    assert s2["queries_cache"] == "hit" and s2["device"] == "not loaded"

    uncached = make(model_dir, tmp_path, cache=False)
    uncached.index(CORPUS)
    run3 = uncached.search(QUERIES, 5)
    assert uncached.stats()["documents_cache"] == "off"
    for other in (run2, run3):
        assert other.to_dict() == run1.to_dict()
        np.testing.assert_array_equal(other.scores, run1.scores)


def test_interrupted_index_resumes_where_it_stopped(model_dir, tmp_path):
    r = make(model_dir, tmp_path, model=FakeModel(model_dir, fail_after_calls=2))
    with pytest.raises(KeyboardInterrupt):
        r.index(CORPUS)  # chunks of 2 documents: 2 chunks written, the third interrupted
    resumed = make(model_dir, tmp_path)
    resumed.index(CORPUS)
    s = resumed.stats()
    assert (s["documents_cache"], s["documents_from_cache"], s["documents_encoded"]) == ("resumed", 4, 1)
    assert len(resumed.model.calls) == 1
    fresh = make(model_dir, tmp_path / "other", cache=False)
    fresh.index(CORPUS)
    assert resumed.search(QUERIES, 5).to_dict() == fresh.search(QUERIES, 5).to_dict()


def test_changed_corpus_or_settings_miss_the_cache(model_dir, tmp_path):
    make(model_dir, tmp_path).index(CORPUS)
    changed = Corpus(CORPUS.ids, CORPUS.titles, CORPUS.texts[:-1] + ["cherries are dark red"])
    r = make(model_dir, tmp_path)
    r.index(changed)
    assert r.stats()["documents_cache"] == "miss"
    r = make(model_dir, tmp_path, max_seq_length=64)
    r.index(CORPUS)
    assert r.stats()["documents_cache"] == "miss"
    r = make(model_dir, tmp_path, document_prompt="passage: ")
    r.index(CORPUS)
    assert r.stats()["documents_cache"] == "miss"


def test_prompts_literal_and_by_name(model_dir, tmp_path):
    r = make(model_dir, tmp_path, query_prompt_name="query", document_prompt="passage: ")
    assert (r.query_prompt, r.document_prompt) == ("query: ", "passage: ")
    r.index(CORPUS)
    r.search(QUERIES, 1)
    assert {prompt for _, prompt in r.model.calls} == {"passage: ", "query: "}
    assert r.params()["query_prompt"] == "query: "
    with pytest.raises(HarnessError, match="no prompt named 'nope'.*passage, query"):
        make(model_dir, tmp_path, query_prompt_name="nope")
    with pytest.raises(ValueError, match="not both"):
        make(model_dir, tmp_path, query_prompt="q: ", query_prompt_name="query")


def test_dot_score_and_depth(model_dir, tmp_path):
    r = make(model_dir, tmp_path, score="dot", doc_block=2)
    r.index(CORPUS)
    run = r.search(QUERIES, 10)
    assert np.diff(run.offsets).tolist() == [5, 5]  # k larger than the corpus: every document once
    assert run.is_canonical()


def test_faiss_index_gives_the_exact_run(model_dir, tmp_path):
    pytest.importorskip("faiss", reason="faiss-cpu not installed")
    exact = make(model_dir, tmp_path)
    exact.index(CORPUS)
    flat = make(model_dir, tmp_path, index="faiss")
    flat.index(CORPUS)
    assert flat.search(QUERIES, 5).doc_ids(0) == exact.search(QUERIES, 5).doc_ids(0)
    assert flat.params()["index"] == "faiss:Flat"


@pytest.mark.parametrize("factory,knobs,built", [
    ("IVF2,Flat", {"faiss_nprobe": 2}, {"nlist": 2, "nprobe": 2}),
    ("HNSW4", {"faiss_ef_search": 64}, {"M": 4, "efSearch": 64, "efConstruction": 40}),
])
def test_faiss_ivf_and_hnsw_are_cached_and_record_their_parameters(model_dir, tmp_path, factory, knobs, built):
    pytest.importorskip("faiss", reason="faiss-cpu not installed")
    exact = make(model_dir, tmp_path)
    exact.index(CORPUS)
    want = exact.search(QUERIES, 5)
    first = make(model_dir, tmp_path, index="faiss", faiss_factory=factory, **knobs)
    first.index(CORPUS)
    # nprobe = nlist visits every list; efSearch 64 > 5 documents: both exact on this corpus.
    run = first.search(QUERIES, 5)
    assert [run.doc_ids(i) for i in range(2)] == [want.doc_ids(i) for i in range(2)]
    info = first.stats()["faiss_index"]
    assert info["cache"] == "miss" and info["ntotal"] == 5
    assert {key: info[key] for key in built} == built
    files = list((tmp_path / "cache").glob("documents-*/faiss-*.index"))
    assert len(files) == 1
    second = make(model_dir, tmp_path, index="faiss", faiss_factory=factory, **knobs)
    second.index(CORPUS)
    again = second.search(QUERIES, 5)
    assert second.stats()["faiss_index"]["cache"] == "hit"
    assert [again.doc_ids(i) for i in range(2)] == [want.doc_ids(i) for i in range(2)]
    params = second.params()
    assert params["index"] == f"faiss:{factory}"
    assert params["faiss_nprobe"] == knobs.get("faiss_nprobe")
    assert params["faiss_ef_search"] == knobs.get("faiss_ef_search")
    assert "faiss_nprobe" not in exact.params()  # exact runs keep their parameters (and run keys)
    other = make(model_dir, tmp_path, index="faiss", faiss_factory="Flat")
    other.index(CORPUS)
    other.search(QUERIES, 5)
    assert other.stats()["faiss_index"]["cache"] == "miss"  # another factory, another cached index
    with pytest.raises(ValueError, match="faiss_nprobe"):
        make(model_dir, tmp_path, index="faiss", faiss_nprobe=0)


def test_params_and_validation(model_dir, tmp_path):
    r = make(model_dir, tmp_path)
    p = r.params()
    assert p["model"] == "fake" and p["max_seq_length"] == 128 and p["score"] == "cos"
    assert p["model_sha256"] == folder_digest(model_dir)
    for bad in ({"score": "l2"}, {"index": "annoy"}, {"batch_size": 0}, {"max_seq_length": 0}):
        with pytest.raises(ValueError):
            make(model_dir, tmp_path, **bad)
    with pytest.raises(RuntimeError, match="index"):
        make(model_dir, tmp_path).search(QUERIES, 1)


def test_model_digest_changes_with_content_and_uses_memo(model_dir, tmp_path):
    memo = tmp_path / "memo.json"
    d1 = folder_digest(model_dir, memo)
    assert folder_digest(model_dir, memo) == d1 and memo.is_file()
    (model_dir / "model.safetensors").write_bytes(b"other weights!")
    assert folder_digest(model_dir, memo) != d1
    (model_dir / "README.md").write_text("docs do not count")
    assert folder_digest(model_dir) == folder_digest(model_dir, memo)


def test_registry_builds_dense_without_importing_torch(model_dir):
    code = ("import sys, retrievers; r = retrievers.create('dense', model=sys.argv[1], progress=False); "
            "print(r.params()['model'], 'torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(model_dir)], capture_output=True, text=True, cwd=REPO,
                         env={"PYTHONPATH": str(REPO), "HARNESS_CACHE_DIR": str(model_dir.parent / "c"),
                              "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(model_dir), "False", "False"]
    assert "dense" in retrievers.available()


def test_unreachable_hub_model_is_a_one_line_harness_error(monkeypatch):
    import huggingface_hub

    def offline(*args, **kwargs):
        raise OSError("offline")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(HarnessError, match=r"cannot get model 'intfloat/e5-small-v2' .*OSError: offline"):
        ModelHandle.resolve("intfloat/e5-small-v2")


@pytest.mark.parametrize("device, message", [
    ("gpu", "error: device 'gpu' is not a torch device (cpu, cuda, cuda:N, mps, or auto)"),
    ("cuda", "error: device 'cuda': torch sees no CUDA GPU here (torch.cuda.is_available() is False); "
             "use device=cpu or auto"),
])
def test_a_device_torch_cannot_use_is_one_line(tmp_path, device, message):
    # `-p device=gpu` crashed with torch's RuntimeError traceback (exit 1), `device=cuda` on a machine
    # without a GPU with "AssertionError: Torch not compiled with CUDA enabled" (the cross-encoder and
    # bi-encoder rerankers and the sparse encoder share this loader).
    torch = pytest.importorskip("torch")
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has a GPU: device=cuda is valid here")
    from tests.bench.bench_helpers import write_tiny

    proc = subprocess.run([sys.executable, "-m", "harness", "run", "-d", str(write_tiny(tmp_path / "tiny")), "-r",
                           "dense", "-p", f"device={device}", "-p", f"cache_dir={tmp_path / 'cache'}", "-q"],
                          capture_output=True, text=True, cwd=REPO)
    assert (proc.returncode, proc.stderr.strip().splitlines()[-1:]) == (2, [message]), proc.stderr
