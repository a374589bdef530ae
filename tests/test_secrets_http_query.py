"""harness/secrets.py, ``without_secrets`` (what a pipeline's and a bench's results record of a config): an
http retriever's literal query-string secrets (``url=...?api_key=...``, ``params={"token": ...}``) were
written whole into a pipeline's metrics.json and its stage cache, and into a bench's records, where the
retriever's own params() record ``<redacted>`` (docs/http.md, "Secrets")."""

from __future__ import annotations

import json

from harness.datasets import load_dataset
from harness.evaluation import Evaluator
from harness.pipeline import StageCache, parse_pipeline, run_pipeline
from harness.secrets import without_secrets
from tests.retrievers.http_fakes import FakeEngine
from tests.retrievers.test_http_review_s16 import _dataset

SECRET = "lit-5ecret-3c4d"


def test_an_http_stage_s_query_string_secrets_are_recorded_redacted():
    stage = {"name": "svc", "type": "retrieve", "retriever": "http",
             "params": {"url": f"https://u:pw@h/s?api_key={SECRET}&index=v2&token=${{KEY}}&key={{query}}#f",
                        "params": {"access_token": SECRET, "q": "{query}", "auth": "${KEY}", "lang": "en"}}}
    assert without_secrets(stage) == {"name": "svc", "type": "retrieve", "retriever": "http", "params": {
        "url": "https://u:***@h/s?api_key=<redacted>&index=v2&token=${KEY}&key={query}#f",
        "params": {"access_token": "<redacted>", "q": "{query}", "auth": "${KEY}", "lang": "en"}}}
    # another retriever's parameter whose name looks secret (a tokenizer) is no query-string parameter
    other = {"type": "bm25", "params": {"tokenizer": "lucene", "url": "https://h/x?page=2"}}
    assert without_secrets(other) == other


def test_no_file_of_a_pipeline_with_an_http_stage_holds_its_query_string_secret(tmp_path):
    ds = load_dataset(str(_dataset(tmp_path)), "test")
    with FakeEngine(lambda request, n: (200, {"hits": [{"id": "d1", "score": 1.0}]})) as engine:
        pipeline = parse_pipeline({"name": "p", "stages": [
            {"name": "svc", "type": "retrieve", "retriever": "http",
             "params": {"url": f"{engine.url}?api_key={SECRET}", "preset": "harness", "backoff": 0.01,
                        "params": {"q": "{query}", "k": "{k}", "token": SECRET}}}]}, "p.toml")
        run_pipeline(ds, pipeline, Evaluator(["NDCG@10"]), [10], output_dir=tmp_path / "out",
                     cache=StageCache(tmp_path / "cache"))
    assert engine.received[0].query["api_key"] == SECRET == engine.received[0].query["token"]  # sent
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()] + [
        p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert any(p.name == "metrics.json" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    doc = json.loads(next((tmp_path / "out").rglob("metrics.json")).read_text())
    assert "api_key=<redacted>" in json.dumps(doc)


def test_an_http_stage_s_literal_body_secrets_are_recorded_redacted():
    """The JSON body of an http stage (a service that takes its key in the body) is recorded as the
    retriever's own params() record it: a literal value under a secret-looking key, at any depth, as
    ``<redacted>``; a ``${VAR}`` reference, placeholders and other values kept."""
    stage = {"name": "svc", "type": "retrieve", "retriever": "http",
             "params": {"url": "https://h/s", "method": "POST",
                        "body": {"api_key": SECRET, "auth": {"token": "${KEY}", "session": SECRET},
                                 "q": "{query}", "filters": [{"password": SECRET, "lang": "en"}], "size": 10}}}
    assert without_secrets(stage)["params"]["body"] == {
        "api_key": "<redacted>", "auth": {"token": "${KEY}", "session": "<redacted>"}, "q": "{query}",
        "filters": [{"password": "***", "lang": "en"}], "size": 10}  # ("password": every config's rule, ***)
    assert SECRET not in json.dumps(without_secrets(stage))
