"""The efficiency block of metrics.json, the hardware/software fingerprint and the run.trec header."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.datasets.corpus import Corpus, Dataset, Queries
from harness.evaluation import Evaluator
from harness.experiment import SEARCH_BATCH, run_experiment
from harness.fingerprint import fingerprint, git_commit, hardware
from harness.formats.trec import read_run, write_run
from harness.qrels import Qrels
from harness.reports import MetricsDocument, efficiency
from harness.retriever import Retriever
from harness.run import Run, concat_runs


class CountingRetriever(Retriever):
    """Scores document j for query i as ((i + 1) * (j + 3)) % 7; records the size of each search call."""

    name = "counting"

    def __init__(self):
        self.calls: list[int] = []

    def index(self, corpus) -> None:
        self.doc_ids = list(corpus.ids)

    def search(self, queries, k):
        self.calls.append(len(queries))
        return Run.from_dict({q: {d: float((int(q[1:]) + 1) * (j + 3) % 7) for j, d in enumerate(self.doc_ids)}
                              for q in queries.ids}).truncated(k)


class TimedService(CountingRetriever):
    """A retriever that times its own requests, as the http retriever does."""

    name = "timed"
    measures_latency = True

    def search(self, queries, k):
        self.latencies = {q: 10.0 + i for i, q in enumerate(queries.ids)}
        return super().search(queries, k)

    def stats(self) -> dict:
        return {"query_latency_ms": self.latencies, "index_bytes": 12345}


def toy_dataset(n_queries: int = 70) -> Dataset:
    docs = [f"d{j}" for j in range(9)]
    ids = [f"q{i}" for i in range(n_queries)]
    return Dataset("toy", "test", Corpus(docs, [""] * 9, ["text"] * 9), Queries(ids, ["text"] * n_queries),
                   Qrels.from_dict({q: {"d1": 1} for q in ids}), load_s=0.25)


def test_fingerprint_keys():
    fp = fingerprint()
    assert set(fp) == {"cpu", "ram_bytes", "gpu", "os", "python", "libraries", "git"}
    assert set(fp["cpu"]) == {"model", "cores", "machine"} and fp["cpu"]["cores"] >= 1
    assert fp["ram_bytes"] > 2 ** 28 and fp["python"] == "%d.%d.%d" % sys.version_info[:3]
    assert fp["libraries"]["numpy"] == np.__version__
    assert hardware(fp) == {"cpu": fp["cpu"], "ram_bytes": fp["ram_bytes"], "gpu": fp["gpu"]}
    json.dumps(fp)  # JSON-able


def test_git_commit_outside_git_is_none_and_inside_is_the_head(tmp_path):
    assert git_commit(tmp_path) is None
    repo = Path(__file__).resolve().parents[2]
    head = git_commit(repo)
    if head is None:
        pytest.skip("the checkout is not a git working tree")
    assert len(head["commit"]) == 40 and int(head["commit"], 16) >= 0 and head["dirty"] in (True, False)


def test_gpu_names_come_from_an_already_imported_torch(monkeypatch):
    cuda = SimpleNamespace(is_available=lambda: True, device_count=lambda: 2, get_device_name=lambda i: f"GPU {i}")
    monkeypatch.setitem(sys.modules, "torch", SimpleNamespace(cuda=cuda))
    assert fingerprint()["gpu"] == ["GPU 0", "GPU 1"]
    monkeypatch.delitem(sys.modules, "torch")
    assert fingerprint()["gpu"] is None  # torch not imported: not imported to ask


def test_latency_summary_is_numpys_percentiles():
    values = [12.0, 3.0, 7.5, 1.0, 30.0, 4.25, 9.0, 2.0, 16.0, 5.0, 8.0]
    summary = efficiency.latency_summary(values)
    for p in (50, 90, 95, 99):
        assert summary[f"p{p}"] == np.percentile(values, p)
    # Worked by hand: sorted 1 2 3 4.25 5 7.5 8 9 12 16 30; p50 = 7.5, p90 = 16 (position 9.0), p95 = 16 + 0.5 * 14.
    assert (summary["p50"], summary["p90"], summary["p95"]) == (7.5, 16.0, 23.0)
    assert summary["mean"] == pytest.approx(97.75 / 11) and summary["max"] == 30.0
    assert efficiency.latency_summary([]) == {}


def test_percentiles_are_numpys_value_for_value():
    """efficiency.percentiles (numpy's linear method without np.percentile's numpy.ma import) gives the
    exact float64 of np.percentile: random latencies of 1..300 values, ties, one value, NaN; the
    statistics of the latency gate too."""
    rng = np.random.default_rng(0)
    qs = [0, 1, 5, 25, 33.3, 50, 66.7, 90, 95, 97.5, 99, 99.9, 100]
    for n in list(range(1, 40)) + [99, 100, 101, 257, 300]:
        for values in (rng.lognormal(0, 1.5, n), np.round(rng.random(n) * 5, 1), np.full(n, 0.1)):
            assert np.array_equal(efficiency.percentiles(values, qs), np.percentile(values, qs)), n
            assert efficiency.latency_statistic(values, "p95") == float(np.percentile(values, 95))
    assert np.isnan(efficiency.percentiles([1.0, np.nan, 2.0], [50, 99])).all()
    assert np.isnan(np.percentile([1.0, np.nan, 2.0], [50, 99])).all()


def test_a_warm_run_does_not_import_numpy_ma(tmp_path):
    """numpy.ma costs a whole run ~0.02 s to import: a warm BM25 run (index cached) no longer needs it
    (its latency percentiles were the only user)."""
    import os
    import subprocess

    probe = ("import atexit, sys; atexit.register(lambda: print('numpy.ma' in sys.modules)); "
             "from harness.cli import main; sys.argv = ['harness', 'run', '-d', 'scifact', '-r', 'bm25', '-q', "
             f"'-o', {str(tmp_path / 'out')!r}]; main()")
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):  # the first run builds and caches the index
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_batch_shares_divide_each_batch_fairly():
    shares = efficiency.batch_shares([(["a", "b", "c", "d"], 0.02), (["e"], 0.003)])
    assert shares == {"a": 5.0, "b": 5.0, "c": 5.0, "d": 5.0, "e": 3.0}


def test_in_process_search_is_timed_in_batches(tmp_path):
    dataset = toy_dataset(70)
    retriever = CountingRetriever()
    exp = run_experiment(dataset, retriever, Evaluator(["P@1"]), [1], depth=5, output_dir=tmp_path)
    assert retriever.calls == [SEARCH_BATCH, SEARCH_BATCH, 70 - 2 * SEARCH_BATCH]
    whole = CountingRetriever()
    whole.index(dataset.corpus)
    assert exp.run.to_dict() == whole.search(dataset.queries, 6).without_identical_ids().truncated(5).to_dict()
    block = exp.document.efficiency
    timings = exp.document.timings
    assert block["stages_s"] == {"load": 0.25, "index": timings["index_s"], "search": timings["search_s"],
                                 "evaluate": timings["evaluate_s"]}
    assert block["n_queries"] == 70 and block["queries_per_s"] == 70 / timings["search_s"]
    latencies = exp.document.query_latency_ms
    assert list(latencies) == dataset.queries.ids
    # Every query of a batch has the same share, and the shares add up to (at most) the search stage.
    first = {latencies[q] for q in dataset.queries.ids[:SEARCH_BATCH]}
    assert len(first) == 1
    assert sum(latencies.values()) <= timings["search_s"] * 1000 * (1 + 1e-6) + 1e-3
    assert block["latency_ms"]["basis"] == "per batch share" and block["latency_ms"]["batch_size"] == SEARCH_BATCH
    assert block["latency_ms"]["p95"] == pytest.approx(np.percentile(list(latencies.values()), 95), abs=1e-5)
    assert block["index_bytes"] is None and block["peak_rss_bytes"] > 10 * 2 ** 20
    assert set(block["fingerprint"]) >= {"cpu", "ram_bytes", "gpu", "os", "python", "libraries", "git"}
    written = MetricsDocument.read(tmp_path / "metrics.json")
    assert written.efficiency == block and written.query_latency_ms == latencies


def test_a_retriever_timing_its_requests_gives_per_request_latencies(tmp_path):
    dataset = toy_dataset(40)
    retriever = TimedService()
    exp = run_experiment(dataset, retriever, Evaluator(["P@1"], k_values=[1]), [1])
    assert retriever.calls == [40]  # one call: the service's own concurrency is left alone
    block = exp.document.efficiency
    assert exp.document.query_latency_ms == {f"q{i}": 10.0 + i for i in range(40)}
    assert block["latency_ms"]["basis"] == "per request" and "batch_size" not in block["latency_ms"]
    assert block["latency_ms"]["p50"] == np.percentile(np.arange(40) + 10.0, 50) == 29.5
    assert block["index_bytes"] == 12345


class BrokenTimer(TimedService):
    """A plugin whose own latencies are unusable: one per query given, ``bad`` for q3."""

    def __init__(self, bad):
        super().__init__()
        self.bad = bad

    def search(self, queries, k):
        run = super().search(queries, k)
        self.latencies["q3"] = self.bad
        if self.bad == "missing":
            del self.latencies["q3"]
        return run


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, True, "12", None, "missing"])
def test_unusable_own_latencies_fall_back_to_batch_shares_with_a_warning(tmp_path, bad):
    # Formerly a NaN latency made every percentile NaN and metrics.json held NaN (not JSON); -1 ms or a
    # missing query gave percentiles of nonsense or of other queries.
    exp = run_experiment(toy_dataset(10), BrokenTimer(bad), Evaluator(["P@1"], k_values=[1]), [1],
                         output_dir=tmp_path)
    block = exp.document.efficiency["latency_ms"]
    assert block["basis"] == "per batch share" and block["batch_size"] == 10
    assert len(set(exp.document.query_latency_ms.values())) == 1  # each query: its share of the one call
    assert any("query_latency_ms for query 'q3'" in w for w in exp.document.warnings)
    text = (tmp_path / "metrics.json").read_text()
    json.loads(text, parse_constant=lambda name: pytest.fail(f"metrics.json holds {name}"))


class OddStats(CountingRetriever):
    def stats(self) -> dict:
        return {"index_bytes": np.int64(5), "ratio": np.float32(0.5), "bad": float("nan"), "shape": (2, 3),
                "arr": np.arange(2), 7: "int key", "obj": Path("x")}


def test_retriever_stats_are_written_as_strict_json(tmp_path):
    # Formerly numpy values crashed the write of metrics.json after the whole run (TypeError: Object of
    # type int64 is not JSON serializable) and a NaN was written as NaN (not JSON).
    run_experiment(toy_dataset(3), OddStats(), Evaluator(["P@1"], k_values=[1]), [1], output_dir=tmp_path)
    text = (tmp_path / "metrics.json").read_text()
    stats = json.loads(text, parse_constant=lambda name: pytest.fail(f"metrics.json holds {name}"))["retriever_stats"]
    assert stats == {"index_bytes": 5, "ratio": 0.5, "bad": None, "shape": [2, 3], "arr": [0, 1], "7": "int key",
                     "obj": "x"}


def test_concat_runs_with_different_vocabularies():
    a = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}})
    b = Run.from_dict({"q2": {"d3": 5.0, "d1": 4.0}, "q3": {}})
    both = concat_runs([a, b])
    assert both.to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 5.0, "d1": 4.0}, "q3": {}}
    assert sorted(both.doc_vocab.tolist()) == ["d1", "d2", "d3"]


def test_run_trec_header_round_trips(tmp_path):
    dataset = toy_dataset(5)
    exp = run_experiment(dataset, CountingRetriever(), Evaluator(["P@1"]), [1], depth=3,
                         output_dir=tmp_path)
    lines = (tmp_path / "run.trec").read_text().splitlines()
    header = [line for line in lines if line.startswith("#")]
    assert lines[:len(header)] == header and header[0] == "# ir_metadata.start" and header[-1] == "# ir_metadata.end"
    assert "#   basis: \"per batch share\"" in header
    facts = efficiency.parse_header(lines)
    block = exp.document.efficiency
    assert facts == {"tag": "counting", "data": {"test_collection": "toy", "split": "test"}, **block}
    # The reader skips the header: the run reads back exactly.
    assert read_run(tmp_path / "run.trec").to_dict() == exp.run.to_dict()


def test_reader_skips_leading_comment_lines(tmp_path):
    run = Run.from_dict({"q1": {"d1": 1.5, "d2": 0.5}})
    write_run(run, tmp_path / "r.trec", header=["# a: 1", "#b"])
    assert (tmp_path / "r.trec").read_text().startswith("# a: 1\n#b\nq1 Q0 d1 1 1.5 harness\n")
    assert read_run(tmp_path / "r.trec").to_dict() == run.to_dict()


def test_a_retriever_searching_in_one_call_gets_the_mean(tmp_path):
    retriever = CountingRetriever()
    retriever.search_batch_size = None  # as the dense, engine and run-file retrievers declare
    exp = run_experiment(toy_dataset(70), retriever, Evaluator(["P@1"], k_values=[1]), [1])
    assert retriever.calls == [70]
    latency = exp.document.efficiency["latency_ms"]
    assert latency["basis"] == "per batch share" and latency["batch_size"] == 70
    assert latency["p50"] == latency["p99"] == pytest.approx(latency["mean"])


def test_large_query_sets_are_timed_in_at_most_50_calls(monkeypatch):
    from harness import experiment

    retriever = CountingRetriever()
    retriever.index(toy_dataset(1).corpus)
    monkeypatch.setattr(experiment, "MAX_TIMED_CALLS", 4)
    queries = toy_dataset(130).queries  # 130 > 4 x 32: four batches of ceil(130 / 4) = 33
    searched = experiment.timed_search(retriever, queries, 3)
    assert retriever.calls == [33, 33, 33, 31] and searched.batch_size == 33
    assert searched.run.n_queries == 130


def test_the_fingerprint_is_read_after_the_timed_stages(monkeypatch):
    # It was read on a background thread started with the run (prefetch), which overlapped the index
    # and search stages and slowed them: SciFact's index stage 5 ms -> ~11 ms, search 31 -> up to 47 ms,
    # so two identical runs differed ("FASTER index wall x0.358" in the latency gate; efficiency review).
    # Expected: the facts (git calls, package metadata) are read only once search and evaluation are done.
    import time

    from harness import fingerprint as fp

    events = []
    real = fp._static.__wrapped__
    monkeypatch.setattr(fp, "_static", lambda: events.append(("facts", time.perf_counter())) or real())

    class Timed(CountingRetriever):
        def index(self, corpus):
            super().index(corpus)
            time.sleep(0.05)
            events.append(("indexed", time.perf_counter()))

        def search(self, queries, k):
            out = super().search(queries, k)
            events.append(("searched", time.perf_counter()))
            return out

    dataset = toy_dataset(10)
    run_experiment(dataset, Timed(), Evaluator(["P@1"], [1]), [1])
    assert [name for name, _ in events] == ["indexed", "searched", "facts"]
    assert fingerprint()["python"] == sys.version.split()[0]


def test_each_batch_is_finished_before_the_batches_are_joined(monkeypatch):
    """timed_search(finish=...) applies finish to each batch's run (untimed), then joins them: the
    same run as finishing the joined run once (the experiment's identical-id rule and truncation),
    here with query ids that are document ids, so entries are dropped, and with k past the depth."""
    from harness import experiment

    dataset = toy_dataset(130)
    retriever = CountingRetriever()
    retriever.index(dataset.corpus)
    doc_ids = list(dataset.corpus.ids)
    queries = type(dataset.queries)([doc_ids[i] if i < len(doc_ids) and i % 3 == 0 else f"q{i}" for i in range(130)],
                                    list(dataset.queries.texts))
    retriever.search = lambda qs, k: Run.from_dict(  # query ids both "q<i>" and document ids
        {q: {d: float((i + 1) * (j + 3) % 7) for j, d in enumerate(doc_ids)} for i, q in enumerate(qs.ids)}
    ).truncated(k)
    monkeypatch.setattr(experiment, "MAX_TIMED_CALLS", 4)
    calls = []

    def finish(run):
        calls.append(run.n_queries)
        return experiment._finish(run, 2, True)

    finished = experiment.timed_search(retriever, queries, 3, finish=finish)
    assert calls == [33, 33, 33, 31]
    whole = experiment._finish(experiment.timed_search(retriever, queries, 3).run, 2, True)
    assert finished.run.to_dict() == whole.to_dict() and finished.run.query_ids.tolist() == queries.ids
    dropped = [q for q in queries.ids if q in doc_ids]
    assert dropped and all(q not in finished.run.to_dict()[q] for q in dropped)
    assert all(len(docs) == 2 for docs in finished.run.to_dict().values())
