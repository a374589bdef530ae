"""The cross-encoder reranker with a tiny random BERT built at test time (no download, CPU).

The oracle is the same model called directly through transformers, one (query, document) pair at
a time: ``sigmoid(logits)`` of ``tokenizer(query, document, truncation=True, max_length=...)``,
which is what ``CrossEncoder.predict`` computes for a one-label model without a configured
activation. Batching changes scores only in the last float32 bits (torch rounds differently for
different batch shapes; measured: at most one float32 ulp, 6e-8, on these scores), so results for
batch size 7 are compared with the oracle within 1e-6 and must give the same ranking; batch size 1
(one pair per forward pass, like the oracle) must match it exactly.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import entry_points

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from harness.datasets.corpus import Corpus, Queries  # noqa: E402
from harness.errors import HarnessError, InputError  # noqa: E402
from harness.formats.trec import read_run  # noqa: E402
from harness.run import Run  # noqa: E402
from retrievers.rerank.cross_encoder import CrossEncoderReranker  # noqa: E402
from harness.registry import RERANKER_GROUP as ENTRY_POINT_GROUP, available, create_reranker  # noqa: E402

WORDS = ("the a of and in to is cell cells protein gene genes risk cancer dna blood study effect increase "
         "reduce patients mice brain heart diet vitamin sleep").split()

CORPUS = Corpus(
    ids=["d1", "d2", "d3", "d4", "d5", "d6", "d7"],
    titles=["gene study", "", "blood", "diet and heart", "", "sleep", "brain cells"],
    texts=["dna of the cell increase cancer risk", "protein in blood cells", "blood vitamin study of patients",
           "diet reduce heart risk in patients", "mice brain protein gene", "sleep and the brain",
           "cells of the brain and the heart in mice " * 4],
)
QUERIES = Queries(["q1", "q2", "q3"], ["gene cancer risk", "blood vitamin", "brain sleep mice"])
# First stage: q1 and q2 share documents; q3 has a tie (d5, d6) that the run's tie rule orders.
FIRST = Run.from_dict({
    "q1": {"d1": 9.0, "d2": 8.0, "d3": 7.0, "d4": 6.0, "d5": 5.0},
    "q2": {"d3": 3.0, "d2": 2.5, "d1": 2.0, "d7": 1.0},
    "q3": {"d6": 1.0, "d5": 1.0, "d7": 0.5},
})


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 2-layer BERT (hidden 32, 2 heads) with random weights and a 31-token vocabulary, saved as
    sentence-transformers' CrossEncoder loads a one-label model."""
    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = transformers.BertTokenizer(str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(16)
    config = transformers.BertConfig(vocab_size=5 + len(WORDS), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                     num_labels=1, initializer_range=0.5)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@lru_cache(maxsize=None)
def direct_model(folder):
    return (transformers.AutoTokenizer.from_pretrained(folder),
            transformers.AutoModelForSequenceClassification.from_pretrained(folder).eval())


def direct_scores(folder, pairs, max_length=None):
    """The oracle: the model through transformers, one pair per call, sigmoid of the logit."""
    tokenizer, model = direct_model(folder)
    out = []
    with torch.no_grad():
        for query, doc in pairs:
            features = tokenizer(query, doc, truncation=True, max_length=max_length or 64, return_tensors="pt")
            out.append(torch.sigmoid(model(**features).logits)[0, 0].item())
    return np.array(out, dtype=np.float32)


def doc_text(doc_id):
    i = CORPUS.ids.index(doc_id)
    return f"{CORPUS.titles[i]} {CORPUS.texts[i]}".strip()


def expected_run(folder, depth, max_length=None):
    """{qid: [(doc, score)] in canonical order} from the oracle, over each query's own top ``depth``."""
    text = QUERIES.as_dict()
    out = {}
    for i, qid in enumerate(FIRST.query_ids.tolist()):
        docs = FIRST.doc_ids(i)[:depth]
        scores = direct_scores(folder, [(text[qid], doc_text(d)) for d in docs], max_length)
        out[qid] = sorted(zip(docs, scores.astype(np.float64).tolist()), key=lambda p: (p[1], p[0]), reverse=True)
    return out


def as_lists(run):
    return {qid: list(zip(run.doc_ids(i), run.scores[run.offsets[i]:run.offsets[i + 1]].tolist()))
            for i, qid in enumerate(run.query_ids.tolist())}


def test_registered_under_its_entry_point_name(tiny_model):
    declared = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}  # pyproject.toml
    assert declared == {"bi-encoder": "retrievers.rerank.bi_encoder:BiEncoderReranker",
                        "cross-encoder": "retrievers.rerank.cross_encoder:CrossEncoderReranker"}
    assert available(ENTRY_POINT_GROUP) == ["bi-encoder", "cross-encoder"]
    reranker = create_reranker("cross-encoder", model=str(tiny_model), device="cpu")
    assert isinstance(reranker, CrossEncoderReranker)
    assert reranker.load().num_labels == 1
    assert reranker.params()["model"] == str(tiny_model)
    with pytest.raises(HarnessError, match="unknown reranker 'nope'"):
        create_reranker("nope")


def test_batch_size_one_equals_the_model_called_directly(tiny_model):
    run = CrossEncoderReranker(str(tiny_model), batch_size=1, device="cpu").rerank(FIRST, QUERIES, CORPUS, 4)
    expected = expected_run(tiny_model, 4)
    assert as_lists(run) == expected
    assert run.is_canonical()
    # The oracle's scores are spread out (so the rankings below test something): q1's top 4 span > 0.05.
    assert max(s for _, s in expected["q1"]) - min(s for _, s in expected["q1"]) > 0.05


def test_batch_size_seven_gives_the_same_ranking_and_scores_to_float32_rounding(tiny_model):
    one = CrossEncoderReranker(str(tiny_model), batch_size=1, device="cpu").rerank(FIRST, QUERIES, CORPUS, 4)
    seven = CrossEncoderReranker(str(tiny_model), batch_size=7, device="cpu").rerank(FIRST, QUERIES, CORPUS, 4)
    assert [seven.doc_ids(i) for i in range(3)] == [one.doc_ids(i) for i in range(3)]
    np.testing.assert_allclose(seven.scores, one.scores, rtol=0, atol=1e-6)


def test_each_query_scores_only_its_own_top_depth_and_the_rest_is_dropped(tiny_model):
    run = CrossEncoderReranker(str(tiny_model), batch_size=7, device="cpu").rerank(FIRST, QUERIES, CORPUS, 2)
    assert run.query_ids.tolist() == ["q1", "q2", "q3"]
    assert [sorted(run.doc_ids(i)) for i in range(3)] == [["d1", "d2"], ["d2", "d3"], ["d5", "d6"]]
    # A query's scores do not depend on the other queries of the run (one predict call per query).
    alone = CrossEncoderReranker(str(tiny_model), batch_size=7, device="cpu").rerank(
        Run.from_dict({"q2": FIRST.to_dict()["q2"]}), QUERIES, CORPUS, 2)
    assert as_lists(alone)["q2"] == as_lists(run)["q2"]
    # Shared documents get each query's own score: d2 under q1 and q2 differ.
    assert dict(as_lists(run)["q1"])["d2"] != dict(as_lists(run)["q2"])["d2"]


def test_max_length_truncates_the_pair(tiny_model):
    run = CrossEncoderReranker(str(tiny_model), batch_size=1, max_length=8, device="cpu").rerank(
        FIRST, QUERIES, CORPUS, 3)
    assert as_lists(run) == expected_run(tiny_model, 3, max_length=8)
    assert as_lists(run) != expected_run(tiny_model, 3)


def test_identity_activation_gives_the_logit(tiny_model):
    probabilities = CrossEncoderReranker(str(tiny_model), batch_size=1, device="cpu").rerank(FIRST, QUERIES, CORPUS, 3)
    logits = CrossEncoderReranker(str(tiny_model), batch_size=1, device="cpu", activation="identity").rerank(
        FIRST, QUERIES, CORPUS, 3)
    assert [logits.doc_ids(i) for i in range(3)] == [probabilities.doc_ids(i) for i in range(3)]
    np.testing.assert_allclose(1 / (1 + np.exp(-logits.scores)), probabilities.scores, rtol=0, atol=1e-6)


def test_unknown_ids_and_bad_parameters_are_one_line_errors(tiny_model, tmp_path):
    path = tmp_path / "first.trec"
    path.write_text("q1 Q0 d1 1 2.0 bm25\nq1 Q0 zz9 2 1.0 bm25\n")
    reranker = CrossEncoderReranker(str(tiny_model), device="cpu")
    with pytest.raises(InputError) as error:
        reranker.rerank(read_run(path), QUERIES, CORPUS, 10, source=path)
    assert str(error.value) == f"{path}:2: document is not in the dataset's corpus (id 'zz9')"
    path.write_text("q1 Q0 d1 1 2.0 bm25\nq9 Q0 d1 1 1.0 bm25\n")
    with pytest.raises(InputError, match=r"first.trec:2: query is not among the split's queries \(those its qrels judge\) \(id 'q9'\)"):
        reranker.rerank(read_run(path), QUERIES, CORPUS, 10, source=path)
    with pytest.raises(ValueError, match="needs model="):
        CrossEncoderReranker()
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        CrossEncoderReranker(str(tiny_model), batch_size=0)
    with pytest.raises(ValueError, match="cross-encoder model folder '.*no-such-model' does not exist"):
        CrossEncoderReranker(str(tmp_path / "no-such-model"), device="cpu").load()
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="cannot load cross-encoder"):
        CrossEncoderReranker(str(tmp_path / "empty"), device="cpu").load()
    with pytest.raises(ValueError, match="depth must be an integer >= 1"):
        reranker.rerank(FIRST, QUERIES, CORPUS, 0)


def test_a_max_length_past_the_models_positions_is_refused(tiny_model):
    # the tiny BERT has 64 positions: max_length 100 crashed on the first pair longer than 64 tokens
    # ("RuntimeError: The size of tensor a (100) must match the size of tensor b (64)"), a traceback
    from retrievers.rerank.cross_encoder import position_limit

    with pytest.raises(ValueError, match=r"^max_length 100 is more than cross-encoder '.*' has positions for \(64\): "
                                         r"give at most 64$"):
        CrossEncoderReranker(model=str(tiny_model), max_length=100).load()
    assert CrossEncoderReranker(model=str(tiny_model), max_length=64).load() is not None
    roberta = transformers.RobertaConfig(max_position_embeddings=514, pad_token_id=1)
    assert position_limit(roberta) == 512  # roberta-base: 514 positions, ids start after padding index 1
    assert position_limit(transformers.BertConfig()) == 512
    assert position_limit(transformers.DebertaV2Config()) is None  # relative positions: no such limit
