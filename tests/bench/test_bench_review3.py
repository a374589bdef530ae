"""Third review of harness bench: the reported leftovers reproduced as tests (each fails without its fix)."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest

import harness
import harness.datasets
import harness.reports.writer as writer
from harness.bench import ConfigError, load_config, run_bench
from harness.bench.cells import fingerprint
from harness.bench.config import RetrieverSpec, parse_config

from .bench_helpers import HangingRetriever, set_when_waiting, write_tiny

RUN_X = "q1 Q0 d2 1 3 x\nq1 Q0 d1 2 2 x\nq2 Q0 d4 1 1 x\n"  # NDCG@1 1.0 (d2 grade 2, d4 grade 1)
RUN_Y = "q1 Q0 d1 1 3 y\nq2 Q0 d3 1 1 y\n"  # NDCG@1 0.0 (neither judged)


def _config(tmp_path, retrievers=(), pipelines=(), datasets=None, **top):
    tiny = tmp_path / "tiny"
    if not tiny.is_dir():
        write_tiny(tiny)
    data = {"name": "b", "output_dir": str(tmp_path / "out"), "k": [1], "depth": 1,
            "datasets": datasets or [str(tiny)], **top}
    data = {key: value for key, value in data.items() if value is not None}
    if retrievers:
        data["retrievers"] = list(retrievers)
    if pipelines:
        data["pipelines"] = list(pipelines)
    return parse_config(data)


def _body(path) -> list[str]:
    return [line for line in path.read_text().splitlines() if not line.startswith("#")]


# ------------------------------------------------------------------ 1. a cell's own run.trec as its input
def test_a_run_file_that_is_the_cells_own_run_trec_is_refused_not_replaced(tmp_path):
    # path = "<output_dir>/<name>/<dataset>/<label>/run.trec" (evaluate a run again with other cutoffs): the
    # cell wrote its top `depth` hits over the user's run (294,089 lines -> 348). `harness run` refuses
    # this (harness/cli/run.py); expected here: the cell fails with one line naming the key, file untouched.
    own = tmp_path / "out" / "b" / "tiny" / "rf" / "run.trec"
    own.parent.mkdir(parents=True)
    own.write_text(RUN_X)
    config = _config(tmp_path, [{"type": "run-file", "label": "rf", "params": {"path": str(own)}}])
    dry = run_bench(config, dry_run=True)
    assert [o.status for o in dry.outcomes] == ["failed"]
    result = run_bench(config)
    assert [o.status for o in result.outcomes] == ["failed"]
    error = result.outcomes[0].error
    assert error.startswith(f"retriever 'rf': params.path {own}: is this cell's own run.trec") and "\n" not in error
    assert own.read_text() == RUN_X  # (was cut to depth 1: "q1 Q0 d2 1 3.0 rf", "q2 Q0 d4 1 1.0 rf")
    assert not (own.parent / "metrics.json").exists()


def test_a_pipelines_run_file_stage_reading_the_cells_own_run_trec_is_refused(tmp_path):
    own = tmp_path / "out" / "b" / "tiny" / "p" / "run.trec"
    own.parent.mkdir(parents=True)
    own.write_text(RUN_X)
    other = tmp_path / "y.trec"
    other.write_text(RUN_Y)
    stages = [{"name": "a", "type": "retrieve", "retriever": "run-file", "params": {"path": str(other)}},
              {"name": "c", "type": "retrieve", "retriever": "run-file", "params": {"path": str(own)}},
              {"name": "f", "type": "fuse", "inputs": ["a", "c"], "method": "rrf"}]
    result = run_bench(_config(tmp_path, pipelines=[{"label": "p", "stages": stages}]))
    assert [o.status for o in result.outcomes] == ["failed"]
    assert result.outcomes[0].error.startswith(f"pipeline 'p', stage 'c': params.path {own}: is this cell's own")
    assert own.read_text() == RUN_X


def test_a_string_param_that_names_no_file_is_no_reason_to_refuse_a_cell(tmp_path):
    # (the check compares each string param with the cell's files: one holding a NUL raised ValueError)
    spec = {"type": f"{HangingRetriever.__module__}:HangingRetriever", "label": "h", "params": {"tag": "a\0b"}}
    config = _config(tmp_path, [spec])
    assert [run_bench(config, force=True).outcomes[0].status for _ in range(2)] == ["run", "run"]


# ------------------------------------------------------------------ 2. numbers in the config
@pytest.mark.parametrize("line, key, message", [
    # Ray refused 1e-5 ("precision ... cannot go beyond 0.0001": neither file nor key) after the check passed
    ("[executor]\nkind = \"ray\"\nnum_cpus = 1e-5", "executor.num_cpus", "expected a multiple of 0.0001"),
    ("[executor]\nkind = \"ray\"\nnum_cpus = 0.00015", "executor.num_cpus", "expected a multiple of 0.0001"),
    ("[executor]\nnum_cpus = 1e400", "executor.num_cpus", "expected a finite number, got Infinity"),
    ("[executor]\nnum_cpus = inf", "executor.num_cpus", "expected a finite number, got Infinity"),
    ("[executor]\nnum_cpus = 100000000000000000000000", "executor.num_cpus", "expected a multiple of 0.0001"),
    # an integer past TOML's 64 bits: every cell failed with "OverflowError: Python int too large ..." (depth)
    # or the evaluator's ValueError naming no file (k)
    ("depth = 100000000000000000000000", "depth", "expected an integer <= 9223372036854775807"),
    ("k = [10, 100000000000000000000000]", "k[1]", "expected an integer <= 9223372036854775807"),
    # a traceback (OverflowError: int too large to convert to float)
    ("relevance_threshold = 1" + "0" * 400, "relevance_threshold", "expected a finite number"),
])
def test_numbers_the_config_cannot_use_are_one_line_naming_file_and_key(tmp_path, line, key, message):
    path = tmp_path / "x.toml"
    top, table = (line, "") if not line.startswith("[") else ("", line)
    path.write_text(f'name = "b"\n{top}\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n{table}\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    text = str(info.value)
    written = next(n for n, row in enumerate(path.read_text().splitlines(), 1)  # the line that sets the key
                   if row.startswith(key.split(".")[-1].split("[")[0] + " ="))
    assert text.startswith(f"{path}:{written}: {key}: {message}") and "\n" not in text


def test_an_integer_of_thousands_of_digits_is_invalid_toml_not_a_traceback(tmp_path):
    # tomllib raises ValueError (Python's 4,300-digit int() limit), not TOMLDecodeError: "error: Exceeds the
    # limit ..." without the file's name
    path = tmp_path / "x.toml"
    path.write_text('name = "b"\ndepth = 1' + "0" * 5000 + '\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: invalid TOML: ")


@pytest.mark.parametrize("value", ["0.0001", "0.3", "1.1", "2", "64"])
def test_num_cpus_in_steps_of_a_ten_thousandth_stay_allowed(tmp_path, value):
    path = tmp_path / "x.toml"
    path.write_text(f'name = "b"\ndatasets = ["scifact"]\n[[retrievers]]\ntype = "bm25"\n'
                    f'[executor]\nnum_cpus = {value}\n')
    assert load_config(path).executor.num_cpus == float(value)


# ------------------------------------------------------------------ 3. a remote dataset loaded once
def test_a_dataset_loaded_to_plan_is_not_loaded_again_to_run_its_cells(tmp_path, monkeypatch):
    # irds:/hf: datasets have no local files to hash: the plan loads them for their checksums; the cells then
    # loaded each again (another _Datasets): ["irds:a", "irds:b", "irds:a", "irds:b", tiny] before the fix.
    tiny = write_tiny(tmp_path / "tiny")
    real, loads = harness.datasets.load_dataset, []

    def counted(source, split="test", download=None):
        loads.append(str(source))
        return real(str(tiny) if str(source).startswith("irds:") else source, split, download)

    monkeypatch.setattr(harness.datasets, "load_dataset", counted)
    (tmp_path / "x.trec").write_text(RUN_X)
    retrievers = [{"type": "run-file", "label": "rf", "params": {"path": str(tmp_path / "x.trec")}},
                  {"type": "run-file", "label": "rf2", "params": {"path": str(tmp_path / "x.trec")}}]
    config = _config(tmp_path, retrievers, datasets=["irds:a", "irds:b", str(tiny)])
    result = run_bench(config)
    assert [o.status for o in result.outcomes] == ["run"] * 6
    assert loads == ["irds:a", "irds:b", str(tiny)]
    assert [o.document.metrics["NDCG@1"] for o in result.outcomes] == [1.0] * 6


def test_a_dataset_that_fails_to_load_is_loaded_once_not_once_per_cell(tmp_path, monkeypatch):
    # A corpus broken on its last line was parsed again for each retriever (3 loads here, each failing
    # alike); expected: one load, its error on each of the dataset's cells.
    broken = write_tiny(tmp_path / "broken")
    with (broken / "corpus.jsonl").open("a") as handle:
        handle.write("not json\n")
    real, loads = harness.datasets.load_dataset, []

    def counted(source, split="test", download=None):
        loads.append(str(source))
        return real(source, split, download)

    monkeypatch.setattr(harness.datasets, "load_dataset", counted)
    (tmp_path / "x.trec").write_text(RUN_X)
    retrievers = [{"type": "run-file", "label": f"rf{i}", "params": {"path": str(tmp_path / "x.trec")}}
                  for i in range(3)]
    result = run_bench(_config(tmp_path, retrievers, datasets=[str(broken), "irds:a"]))
    assert [o.status for o in result.outcomes] == ["failed"] * 6
    errors = [o.error for o in result.outcomes]
    assert len(set(errors[:3])) == 1 and len(set(errors[3:])) == 1 and errors[0] != errors[3]
    assert loads == [str(broken), "irds:a"]


# ------------------------------------------------------------------ 4. two benches writing one cell
def test_two_benches_writing_one_cell_leave_one_benchs_files(tmp_path, monkeypatch):
    # Two configs sharing output_dir, name and labels, run at the same time: bench X wrote run.trec, bench Y
    # then wrote the whole cell, and X wrote its per_query.jsonl and metrics.json beside Y's run.trec
    # (metrics.json: NDCG@1 1.0 of x.trec; run.trec: y.trec's d1, d3). Expected: one bench's files.
    (tmp_path / "x.trec").write_text(RUN_X)
    (tmp_path / "y.trec").write_text(RUN_Y)
    x, y = (_config(tmp_path, [{"type": "run-file", "label": "rf", "params": {"path": str(tmp_path / f"{n}.trec")}}])
            for n in "xy")
    real, other, y_moved = writer.write_run, [], threading.Event()  # y_moved: Y has finished, or waits for a lock

    def bench_y():
        try:
            run_bench(y)
        finally:
            y_moved.set()

    def write_run_then_let_y_write(run, path, **kwargs):
        real(run, path, **kwargs)
        if not other:  # X has written run.trec: Y runs now (with the lock it waits until X is done)
            other.append(threading.Thread(target=bench_y, name="Y"))
            other[0].start()
            assert y_moved.wait(60), "Y neither finished nor waited for the cell's lock"  # (no sleep decides)

    monkeypatch.setattr(writer, "write_run", write_run_then_let_y_write)
    set_when_waiting(monkeypatch, "Y", y_moved)
    run_bench(x)
    other[0].join(120)
    assert not other[0].is_alive()
    cell = tmp_path / "out" / "b" / "tiny" / "rf"
    metrics = json.loads((cell / "metrics.json").read_text())
    served = metrics["bench"]["retriever"]["params"]["path"]
    expected = {str(tmp_path / "x.trec"): (["q1 Q0 d2 1 3.0 rf", "q2 Q0 d4 1 1.0 rf"], 1.0),
                str(tmp_path / "y.trec"): (["q1 Q0 d1 1 3.0 rf", "q2 Q0 d3 1 1.0 rf"], 0.0)}[served]
    assert (_body(cell / "run.trec"), metrics["metrics"]["NDCG@1"]) == expected
    per_query = [json.loads(line) for line in (cell / "per_query.jsonl").read_text().splitlines()]
    assert sum(row["NDCG@1"] for row in per_query) / len(per_query) == expected[1]


# ------------------------------------------------------------------ 5. equal numbers, one fingerprint
def test_k1_1_and_k1_1_0_are_one_cell(tmp_path):
    # JSON writes 1 and 1.0 apart: changing k1 = 1 to k1 = 1.0 (the same BM25) ran the cell again
    statuses = []
    for k1 in (1, 1.0, 1, 0.9):
        config = _config(tmp_path, [{"type": "bm25", "label": "bm", "params": {"k1": k1, "b": 0.5}}])
        statuses.append(run_bench(config).outcomes[0].status)
    assert statuses == ["run", "reused", "reused", "run"]


def test_a_cell_recorded_with_the_fingerprint_as_written_is_still_reused(tmp_path):
    # Cells finished before numbers were made equal record the fingerprint of the numbers as written (the
    # formula below, as harness/bench/cells.py had it): an unchanged config must not run them again.
    (tmp_path / "x.trec").write_text(RUN_X)
    config = _config(tmp_path, [{"type": "run-file", "label": "rf", "params": {"path": str(tmp_path / "x.trec")}}],
                     relevance_threshold=1.0)
    assert run_bench(config).outcomes[0].status == "run"
    path = tmp_path / "out" / "b" / "tiny" / "rf" / "metrics.json"
    data = json.loads(path.read_text())
    files, spec = data["dataset"]["files"], config.retrievers[0]
    resolved = data["retriever"]["params"]
    evaluation = data["bench"]["evaluation"]
    blob = {"dataset": {"split": "test", "files": dict(sorted(files.items()))},
            "retriever": {"type": spec.type, "params": spec.params, "resolved": resolved},
            "evaluation": evaluation, "harness": harness.__version__}
    old = hashlib.sha256(json.dumps(blob, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
    assert old == fingerprint(files, "test", spec, resolved, evaluation, as_written=True)
    assert old != data["bench"]["fingerprint"]  # (relevance_threshold 1.0 is written 1 now)
    data["bench"]["fingerprint"] = old
    path.write_text(json.dumps(data))
    assert run_bench(config).outcomes[0].status == "reused"


def test_equal_numbers_changes_only_integral_floats():
    from harness.bench.cells import equal_numbers

    value = {"a": 1.0, "b": [2.0, -0.0, 0.5, True, 3], "c": (float("inf"), "1.0"), "d": 2**53 + 1}
    assert equal_numbers(value) == {"a": 1, "b": [2, 0, 0.5, True, 3], "c": [float("inf"), "1.0"], "d": 2**53 + 1}
    assert type(equal_numbers(1.0)) is int and equal_numbers(True) is True
    one, one_0 = RetrieverSpec("bm25", "bm", {"k1": 1}), RetrieverSpec("bm25", "bm", {"k1": 1.0})
    assert fingerprint({}, "test", one, {"k1": 1.0}, {}) == fingerprint({}, "test", one_0, {"k1": 1}, {})


def test_the_leaderboard_metrics_reordered_are_one_cell(tmp_path):
    # metrics beyond k are computed too, in the config's order: ["NDCG@10", "MAP@1000", "P@1000"] reversed
    # (the same numbers) ran every cell again. A metric removed or added still does (depth, metrics computed).
    (tmp_path / "x.trec").write_text(RUN_X)
    statuses = []
    for metrics in (["NDCG@10", "MAP@1000", "P@1000"], ["P@1000", "MAP@1000", "NDCG@10"], ["NDCG@10", "MAP@1000"]):
        config = _config(tmp_path, [{"type": "run-file", "label": "rf", "params": {"path": str(tmp_path / "x.trec")}}],
                         k=[10], depth=None, metrics=metrics)
        statuses.append(run_bench(config).outcomes[0].status)
    assert statuses == ["run", "reused", "run"]
