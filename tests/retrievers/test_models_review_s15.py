"""Review (session 15, model-based stages): a model of the wrong kind, and a model folder that does not exist.

Tiny random models built at test time (tests/retrievers/tiny_models.py). Source of the expectations:
sentence-transformers 6 itself. ``CrossEncoder(folder)`` loads any folder as
``AutoModelForSequenceClassification``; for a checkpoint saved as ``BertModel`` (a bi-encoder) or
``BertForMaskedLM`` (SPLADE) the classifier is not in the file and transformers initializes it at random
(its load report lists ``classifier.weight | MISSING``). ``SparseEncoder(folder)`` of anything that is
neither a saved SparseEncoder nor a masked-LM checkpoint appends a ``SparseAutoEncoder`` with random
weights (``SparseEncoder._load_default_modules`` / ``_load_converted_modules``). The tests show the
randomness (two loads, two different heads), then that the harness refuses such a model with one line
instead of writing a run of noise.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers.sparse_encoder")
torch = pytest.importorskip("torch")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.errors import HarnessError  # noqa: E402
from harness.run import Run  # noqa: E402
from retrievers.dense.model import ModelHandle  # noqa: E402
from retrievers.rerank.cross_encoder import CrossEncoderReranker  # noqa: E402
from retrievers.sparse.retriever import SparseRetriever  # noqa: E402
from tests.retrievers import tiny_models  # noqa: E402

CORPUS = Corpus(ids=["d1", "d2", "d3"], titles=["", "b", ""], texts=["a b c", "c d e f", "g h"])
QUERIES = Queries(["q1"], ["a c"])
FIRST = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A plain BertModel checkpoint, the same saved as a sentence-transformers bi-encoder, a SPLADE
    SparseEncoder, and a one-label BertForSequenceClassification (a real cross-encoder's layout)."""
    import transformers

    root = tmp_path_factory.mktemp("wrong-kind")
    torch.manual_seed(1)
    bi_encoder = tiny_models.sentence_transformer(root)  # root/hf (BertModel) and root/st
    splade = tiny_models.sparse_encoder(root / "splade", ["a", "b", "c", "d", "e", "f", "g", "h"])
    cross = root / "cross"
    config = transformers.BertConfig(vocab_size=len(tiny_models.VOCAB), hidden_size=8, num_hidden_layers=1,
                                     num_attention_heads=1, intermediate_size=16, max_position_embeddings=40,
                                     num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(cross)
    transformers.BertTokenizer(str(root / "hf" / "vocab.txt")).save_pretrained(cross)
    return {"hf": root / "hf", "st": bi_encoder, "splade": splade, "cross": cross}


def _classifier(folder) -> np.ndarray:
    from sentence_transformers import CrossEncoder

    return CrossEncoder(str(folder), device="cpu").model.classifier.weight.detach().numpy().copy()


@pytest.mark.parametrize("kind", ["hf", "st", "splade"])
def test_cross_encoder_refuses_a_checkpoint_without_its_classifier(folders, kind):
    # the reason: sentence-transformers gives such a folder a new random classifier on every load
    assert not np.array_equal(_classifier(folders[kind]), _classifier(folders[kind]))
    with pytest.raises(ValueError, match=r"^'.*' is not a cross-encoder: its weights were saved for "
                                         r"(BertModel|BertForMaskedLM), and sentence-transformers would score the "
                                         r"pairs with a BertForSequenceClassification head of random weights$"):
        CrossEncoderReranker(model=str(folders[kind]), device="cpu").rerank(FIRST, QUERIES, CORPUS, 3)


def test_cross_encoder_with_its_classifier_in_the_checkpoint_loads(folders):
    assert np.array_equal(_classifier(folders["cross"]), _classifier(folders["cross"]))
    run = CrossEncoderReranker(model=str(folders["cross"]), device="cpu").rerank(FIRST, QUERIES, CORPUS, 3)
    assert sorted(run.doc_ids(0)) == ["d1", "d2", "d3"]


def _sparse_layer(folder) -> list[np.ndarray]:
    from sentence_transformers import SparseEncoder

    model = SparseEncoder(str(folder), device="cpu")
    return [p.detach().numpy().copy() for m in model if type(m).__name__ == "SparseAutoEncoder"
            for p in m.parameters()]


@pytest.mark.parametrize("kind", ["st", "cross"])
def test_sparse_refuses_a_model_that_would_get_a_random_sparse_layer(folders, kind, tmp_path):
    first, second = _sparse_layer(folders[kind]), _sparse_layer(folders[kind])
    assert first and not all(np.array_equal(a, b) for a, b in zip(first, second))  # random on every load
    retriever = SparseRetriever(model=str(folders[kind]), device="cpu", cache_dir=str(tmp_path))
    with pytest.raises(HarnessError, match=r"^model '.*' is not a sparse encoder \(a saved SparseEncoder or a "
                                           r"masked-LM checkpoint for SPLADE\): sentence-transformers would add a "
                                           r"SparseAutoEncoder of random weights to it$"):
        retriever.index(CORPUS)
    assert not list(tmp_path.glob("doc-*/part-*"))  # nothing cached


def test_sparse_takes_a_saved_sparse_encoder_and_a_masked_lm_checkpoint(folders, tmp_path):
    for folder in (folders["splade"], folders["splade"].parent / "mlm"):  # (mlm: BertForMaskedLM, no modules.json)
        assert _sparse_layer(folder) == []
        retriever = SparseRetriever(model=str(folder), device="cpu", cache=False)
        retriever.index(CORPUS)
        assert retriever.search(QUERIES, 3).n_queries == 1


@pytest.mark.parametrize("name", ["/no/such/model-folder", "./no-such-folder", "~/no-such-folder-s15"])
def test_a_model_path_that_is_not_there_is_named(name, tmp_path):
    # was: "cannot get model '/no/such/model-folder' (not a folder; hub download failed: HFValidationError:
    # Repo id must be in the form 'repo_name' or 'namespace/repo_name': ...)"
    with pytest.raises(HarnessError, match=rf"^model folder '{name}' does not exist$"):
        ModelHandle.resolve(name)
    with pytest.raises(HarnessError, match=rf"^model folder '{name}' does not exist$"):
        SparseRetriever(model=name)
    file = tmp_path / "weights.bin"
    file.write_bytes(b"x")
    with pytest.raises(HarnessError, match=r"^model folder '.*weights.bin' is not a folder$"):
        ModelHandle.resolve(str(file))


def _cross_encoder(folder, seed: int):
    """A one-label BertForSequenceClassification over tiny_models.VOCAB saved in ``folder`` (replaced)."""
    import shutil

    import transformers

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "vocab.txt").write_text("\n".join(tiny_models.VOCAB) + "\n")
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=len(tiny_models.VOCAB), hidden_size=8, num_hidden_layers=1,
                                     num_attention_heads=1, intermediate_size=16, max_position_embeddings=40,
                                     num_labels=1, initializer_range=0.5)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    transformers.BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def test_a_rerank_stage_is_computed_again_when_the_cross_encoder_folder_changes(tmp_path):
    """A pipeline's rerank stage is cached under its reranker's params() (harness/pipeline/run.py key_blob), as
    a benchmark cell is fingerprinted by them. The cross-encoder's held only the folder's name, so a model
    retrained into the same folder was served the first model's reranked run (cache: hit). Expected: the
    second run equals the reranker called directly with the new model, and the stage is a miss."""
    import json

    from harness.datasets import load_dataset
    from harness.evaluation import Evaluator
    from harness.pipeline import StageCache, parse_pipeline, run_pipeline

    data = tmp_path / "ds"
    (data / "qrels").mkdir(parents=True)
    words = ["a b c", "b c d", "c d e", "d e f", "e f g", "a c e", "b d f", "a b d e", "c f g", "a g"]
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n"
                                               for i, t in enumerate(words)))
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": t}) + "\n"
                                                for i, t in enumerate(["a b", "c d", "e f"])))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\nq1\td2\t1\nq2\td4\t1\n")
    ds = load_dataset(str(data))
    model = tmp_path / "ce"
    pipeline = parse_pipeline({"name": "p", "stages": [
        {"name": "bm25", "type": "retrieve", "retriever": "bm25", "params": {"cache": False}},
        {"name": "ce", "type": "rerank", "input": "bm25", "reranker": "cross-encoder", "depth": 5,
         "params": {"model": str(model), "device": "cpu", "batch_size": 1}}]}, "p.toml", base=tmp_path)
    cache = StageCache(tmp_path / "cache")
    runs = []
    for seed in (1, 2):
        _cross_encoder(model, seed)
        _, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], depth=10, cache=cache)
        direct = CrossEncoderReranker(model=str(model), device="cpu", batch_size=1).rerank(
            outcomes[0].run, ds.queries, ds.corpus, 5)
        assert outcomes[1].status == "miss"
        assert outcomes[1].run.to_dict() == direct.to_dict()
        runs.append(outcomes[1].run.to_dict())
    assert runs[0] != runs[1]  # (the two models score differently: the test tells the runs apart)
    _, outcomes = run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], depth=10, cache=cache)
    assert outcomes[1].status == "hit" and outcomes[1].run.to_dict() == runs[1]  # unchanged folder: still a hit
