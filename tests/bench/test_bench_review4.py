"""Fourth review of harness bench (the group-by-group runner, equal-number fingerprints): each test
fails without its fix."""

from __future__ import annotations

import json

from harness.bench import run_bench
from harness.bench.cells import is_finished
from harness.bench.config import parse_config
from harness.bench.runner import metric_names

from .bench_helpers import write_tiny

RUN_X = "q1 Q0 d2 1 3 x\nq1 Q0 d1 2 2 x\nq2 Q0 d4 1 1 x\n"


def test_a_metrics_json_without_fingerprint_is_no_finished_cell(tmp_path):
    # is_finished(folder, fingerprint, metrics) -- as_written left out -- compared the recorded fingerprint
    # with (fingerprint, None): a result folder whose metrics.json records none (harness run's, or a bench
    # cell whose "bench" block is gone) counted as a finished cell of every fingerprint (True; the previous
    # release and the docstring: False, "a readable metrics.json recording the same fingerprint").
    write_tiny(tmp_path / "tiny")
    (tmp_path / "x.trec").write_text(RUN_X)
    config = parse_config({"name": "b", "output_dir": str(tmp_path / "out"), "k": [1], "depth": 1,
                           "datasets": [str(tmp_path / "tiny")],
                           "retrievers": [{"type": "run-file", "label": "rf",
                                           "params": {"path": str(tmp_path / "x.trec")}}]})
    assert run_bench(config).outcomes[0].status == "run"
    folder, names = tmp_path / "out" / "b" / "tiny" / "rf", metric_names(config)
    data = json.loads((folder / "metrics.json").read_text())
    recorded = data["bench"]["fingerprint"]
    assert is_finished(folder, recorded, names) and is_finished(folder, "0" * 64, names, recorded)
    assert not is_finished(folder, "0" * 64, names)
    for bench in ({}, None):  # no fingerprint recorded: finished for no fingerprint
        data["bench"] = bench
        (folder / "metrics.json").write_text(json.dumps(data))
        assert not is_finished(folder, recorded, names)
        assert not is_finished(folder, recorded, names, "1" * 64)
