"""The sparse retriever with a tiny SPLADE SparseEncoder built at test time (a random 1-layer
BertForMaskedLM + SpladePooling, saved to a temporary folder): loading, encoding, the document
weight cache (hit, resume, corrupt entry rebuilt) and search == a brute-force dot product.

Oracle: sentence-transformers' own ``encode_document`` / ``encode_query`` outputs, and the
scipy.sparse dot product of them (float64 sum over ascending term ids, rounded to float32; ties by
document id descending)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers.sparse_encoder")

import scipy.sparse as sp  # noqa: E402

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from retrievers.sparse.retriever import SparseRetriever  # noqa: E402
from tests.retrievers.sparse_data import run_pairs  # noqa: E402

WORDS = ("the a of and to in is on for with cancer diet fat vitamin heart risk study blood health protein cell "
         "milk meat fish sugar salt egg breast colon liver brain kidney bone skin trial dose acid iron zinc").split()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import torch
    from sentence_transformers import SparseEncoder
    try:
        from sentence_transformers.sentence_transformer.modules import Transformer
    except ImportError:  # sentence-transformers < 6
        from sentence_transformers.models import Transformer
    from sentence_transformers.sparse_encoder.modules import SpladePooling
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny-splade")
    mlm = root / "mlm"
    mlm.mkdir()
    (mlm / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=5 + len(WORDS), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertForMaskedLM(config).save_pretrained(mlm)
    # (the vocabulary given as a dict: transformers 5 ignores ``vocab_file=``, and every word was [UNK])
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)}).save_pretrained(mlm)
    encoder = SparseEncoder(modules=[Transformer(str(mlm), transformer_task="fill-mask"), SpladePooling("max")],
                            device="cpu")
    encoder.save(str(root / "encoder"))
    return root / "encoder"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    n = 40
    texts = [" ".join(rng.choice(WORDS[9:], size=int(rng.integers(3, 12)))) for _ in range(n)]
    corpus = Corpus(ids=[f"d{i:02d}" for i in range(n)], titles=[""] * n, texts=texts)
    qtexts = [" ".join(rng.choice(WORDS[9:], size=int(rng.integers(1, 4)))) for _ in range(8)]
    return corpus, Queries(ids=[f"q{i}" for i in range(8)], texts=qtexts)


def _brute_force(folder, corpus, queries, k, max_active_dims=None) -> dict:
    from sentence_transformers import SparseEncoder

    model = SparseEncoder(str(folder), device="cpu")
    docs = model.encode_document([t.strip() for t in corpus.texts], max_active_dims=max_active_dims).to_dense()
    qs = model.encode_query(list(queries.texts), max_active_dims=max_active_dims).to_dense()
    D = sp.csr_matrix(docs.numpy().astype(np.float32).astype(np.float64))
    D.sort_indices()
    out = {}
    for qid, q in zip(queries.ids, qs.numpy().astype(np.float32).astype(np.float64)):
        scores = (D @ q).astype(np.float32)
        hits = sorted(((corpus.ids[i], scores[i]) for i in np.flatnonzero(scores > 0)),
                      key=lambda h: (h[1], h[0]), reverse=True)
        out[qid] = hits[:k]
    return out, docs


@pytest.mark.parametrize("compiled", ["1", "0"])
def test_search_equals_brute_force_dot_product(tiny_model, data, tmp_path, monkeypatch, compiled):
    monkeypatch.setenv("HARNESS_BM25_COMPILED", compiled)
    corpus, queries = data
    r = SparseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path), n_threads=2)
    r.index(corpus)
    got = run_pairs(r.search(queries, 10))
    want, docs = _brute_force(tiny_model, corpus, queries, 10)
    assert got == want
    assert all(len(v) == 10 for v in got.values())
    assert r.stats()["postings"] == int((docs != 0).sum())  # every non-zero weight is a posting
    assert r.params()["model_sha256"] and r.params()["quantize"] is None


def test_max_active_dims_limits_terms(tiny_model, data, tmp_path):
    corpus, queries = data
    r = SparseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path), max_active_dims=4)
    r.index(corpus)
    assert r.stats()["postings"] <= 4 * len(corpus)
    assert run_pairs(r.search(queries, 5)) == _brute_force(tiny_model, corpus, queries, 5, max_active_dims=4)[0]
    assert r.params()["max_active_dims"] == 4


def test_cache_hit_resume_and_corrupt_entry_rebuilt(tiny_model, data, tmp_path, caplog):
    corpus, queries = data
    make = lambda: SparseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path),  # noqa: E731
                                   cache_chunk_size=16)
    first = make()
    first.index(corpus)
    assert first.cache_status == "built"
    expected = run_pairs(first.search(queries, 10))
    (entry,) = [p for p in tmp_path.iterdir() if p.name.startswith("doc-")]
    assert sorted(p.name for p in entry.iterdir()) == ["complete.json", "meta.json", "versions.json", "weights.npz"]

    second = make()
    calls = []
    second.model.encode = lambda texts, role: calls.append(role) or type(first.model).encode(first.model, texts, role)
    second.index(corpus)
    assert second.cache_status == "hit" and calls == []  # no document encoded
    assert run_pairs(second.search(queries, 10)) == expected

    blob = bytearray((entry / "weights.npz").read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (entry / "weights.npz").write_bytes(bytes(blob))
    third = make()
    with caplog.at_level("WARNING"):
        third.index(corpus)
    assert third.cache_status == "rebuilt" and "damaged" in caplog.text
    assert run_pairs(third.search(queries, 10)) == expected

    # an encode interrupted after the first part resumes from it
    for p in entry.iterdir():
        p.unlink()
    entry.rmdir()
    fourth = make()
    real = fourth.model.encode
    done = []

    def failing(texts, role):
        if done:
            raise KeyboardInterrupt
        done.append(len(texts))
        return real(texts, role)

    fourth.model.encode = failing
    with pytest.raises(KeyboardInterrupt):
        fourth.index(corpus)
    assert (entry / "part-16-000000.npz").is_file() and not (entry / "weights.npz").exists()
    fifth = make()
    fifth.index(corpus)
    assert fifth.cache_status == "resumed" and fifth.stats()["documents_from_parts"] == 16
    assert run_pairs(fifth.search(queries, 10)) == expected
    fifth.index(corpus)  # the same retriever again (a benchmark reuses one across datasets): a hit, whose
    assert fifth.cache_status == "hit" and "documents_from_parts" not in fifth.stats()  # stats are its own


def test_quantize_is_recorded_and_scores_are_integers(tiny_model, data, tmp_path):
    corpus, queries = data
    r = SparseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path), quantize=100)
    r.index(corpus)
    scores = r.search(queries, 10).scores
    assert r.params()["quantize"] == 100
    assert len(scores) and np.array_equal(scores, np.round(scores))


def test_model_is_required():
    from harness.errors import HarnessError

    with pytest.raises(HarnessError, match="needs --param model"):
        SparseRetriever()


def test_cli_run_end_to_end(tiny_model, data, tmp_path):
    """``harness run --retriever sparse`` on a small BEIR folder: exit 0, the run equals the
    in-process retriever's (served from the cache the CLI wrote), params recorded."""
    import json

    from harness.formats.trec import read_run
    from tests.cli.test_cli import harness

    corpus, queries = data
    folder = tmp_path / "tiny"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n"
                                                 for i, t in zip(corpus.ids, corpus.texts)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n"
                                                  for q, t in zip(queries.ids, queries.texts)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{corpus.ids[3 * n]}\t1\n" for n, q in enumerate(queries.ids)))
    args = ("run", "-d", str(folder), "-r", "sparse", "-p", f"model={tiny_model}", "-p", "device=cpu",
            "-p", f"cache_dir={tmp_path / 'cache'}", "--k", "1,10", "-o", str(tmp_path / "out"))
    proc = harness(*args)
    assert proc.returncode == 0, proc.stderr
    (metrics_path,) = (tmp_path / "out").rglob("metrics.json")
    metrics = json.loads(metrics_path.read_text())
    assert metrics["retriever"]["params"]["model"] == str(tiny_model)
    r = SparseRetriever(model=str(tiny_model), device="cpu", cache_dir=str(tmp_path / "cache"))
    r.index(corpus)
    assert r.cache_status == "hit"
    want = r.search(queries, 10).to_dict()
    got = read_run(metrics_path.parent / "run.trec").to_dict()
    assert got.keys() == want.keys()
    for q in want:
        assert list(got[q]) == list(want[q]) and all(abs(got[q][d] - want[q][d]) < 1e-6 for d in want[q])


def test_the_tiny_model_tokenizes_its_words(tiny_model):
    """The fixture's tokenizer knows its words (transformers 5 ignored ``vocab_file=``: every word was [UNK],
    and these tests compared vectors that differed by position alone)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model.parent / "mlm"))
    assert tokenizer.tokenize(" ".join(WORDS[9:12])) == WORDS[9:12]
