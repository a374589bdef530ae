"""The cross-encoder reranker against its oracle called directly (second review): for every query,
sentence-transformers' ``CrossEncoder.predict`` on the same (query, document) pairs, in the same order
(the query's top depth in the evaluator's order) and with the same batch size, gives the reranker's
scores bit for bit, for every activation; batch sizes differ from each other only by float32 rounding."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers")
torch = pytest.importorskip("torch")

from retrievers.rerank.cross_encoder import CrossEncoderReranker  # noqa: E402
from tests.retrievers.test_rerank_cross_encoder import CORPUS, FIRST, QUERIES, doc_text, tiny_model  # noqa: E402,F401


@pytest.mark.parametrize("batch_size, activation", [(7, "model"), (2, "identity"), (32, "sigmoid")])
def test_scores_are_crossencoder_predict_on_the_same_pairs(tiny_model, batch_size, activation):  # noqa: F811
    from sentence_transformers import CrossEncoder

    reranker = CrossEncoderReranker(str(tiny_model), batch_size=batch_size, device="cpu", activation=activation)
    run = reranker.rerank(FIRST, QUERIES, CORPUS, 4)
    direct = CrossEncoder(str(tiny_model), device="cpu")
    fn = {"model": None, "identity": torch.nn.Identity(), "sigmoid": torch.nn.Sigmoid()}[activation]
    text = QUERIES.as_dict()
    for i, qid in enumerate(FIRST.query_ids.tolist()):
        docs = FIRST.doc_ids(i)[:4]  # FIRST is canonical: its top 4 in the evaluator's order
        expected = direct.predict([(text[qid], doc_text(d)) for d in docs], batch_size=batch_size,
                                  activation_fn=fn, show_progress_bar=False)
        j = list(run.query_ids).index(qid)
        got = dict(zip(run.doc_ids(j), run.scores[run.offsets[j]:run.offsets[j + 1]].tolist()))
        assert [got[d] for d in docs] == np.asarray(expected, dtype=np.float32).astype(np.float64).tolist()
