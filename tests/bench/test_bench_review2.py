"""Second review of harness bench: findings reproduced as tests."""

from __future__ import annotations

import pytest

from harness.bench import ConfigError, load_config, run_bench
from harness.bench.config import parse_config

from .bench_helpers import HangingRetriever, set_when_waiting, write_tiny


@pytest.mark.parametrize("entry, key, line", [  # (line: where the file below writes the key)
    ('[[datasets]]\npath = "data"\nlabel = "leaderboard.md"\n', "datasets[0].label", 6),
    ('[[datasets]]\nname = "scifact"\nlabel = "bench.json"\n', "datasets[0].label", 6),
    ('datasets = ["runs/report.html"]\n', "datasets[0]", 2),
    ('datasets = ["scifact", "out/Leaderboard.json"]\n', "datasets[1]", 2),
])
def test_a_dataset_label_naming_a_file_of_the_bench_folder_is_a_config_error(tmp_path, entry, key, line):
    # A cell folder is <output_dir>/<name>/<dataset label>/...: a dataset labelled "leaderboard.md" made a
    # folder where the leaderboard goes, so every cell ran and then the benchmark ended with
    # "error: out/e/leaderboard.md: Is a directory" (exit 2, no leaderboard; "bench.json": no manifest).
    # Expected (docs/bench.md: config mistakes exit 2 before anything runs): one line naming file and key.
    path = tmp_path / "x.toml"
    top, tables = (entry, "") if entry.startswith("datasets") else ("", entry)
    path.write_text(f'name = "b"\n{top}[[retrievers]]\ntype = "bm25"\n{tables}')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: {key}: dataset label ") and "\n" not in message
    assert "name of a file the benchmark writes" in message


def test_other_dataset_labels_with_dots_stay_allowed(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text('name = "b"\n[[retrievers]]\ntype = "bm25"\n[[datasets]]\nname = "scifact"\nlabel = "leaderboard.md.v2"\n')
    assert load_config(path).datasets[0].label == "leaderboard.md.v2"


def test_report_html_of_an_earlier_run_is_removed_when_this_run_has_none(tmp_path, caplog):
    # report.html needs two queries (paired tests); with one judged query its page cannot be made and
    # the runner only warned, leaving the previous run's page (two queries, the old qrels' numbers)
    # beside a leaderboard that no longer has them. Expected: no report.html rather than a stale one.
    tiny = write_tiny(tmp_path / "tiny")
    data = {"name": "r", "output_dir": str(tmp_path / "out"), "k": [3], "datasets": [{"path": str(tiny)}],
            "retrievers": [{"type": f"{HangingRetriever.__module__}:HangingRetriever", "label": "h"}]}
    page = tmp_path / "out" / "r" / "report.html"
    run_bench(parse_config(data))
    assert page.is_file()
    (tiny / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t2\n")
    result = run_bench(parse_config(data))
    assert [o.status for o in result.outcomes] == ["run"]
    # (logged: bench -q hides it; the command line prints it as "warning: report.html not written: ...", and
    # a library user's own logging format shows it once, with no "warning:" of its own inside)
    assert [r.levelname for r in caplog.records if r.getMessage().startswith("report.html not written: ")] == ["WARNING"]
    assert "warning: report.html" not in caplog.text
    assert not page.exists()
    # and when no cell is finished at all (here the corpus no longer parses): no page from before either
    write_tiny(tiny)
    run_bench(parse_config(data))
    assert page.is_file()
    (tiny / "corpus.jsonl").write_text("not json\n")
    result = run_bench(parse_config(data))
    assert [o.status for o in result.outcomes] == ["failed"]
    assert not page.exists()


def test_a_cell_finished_by_another_release_runs_again(tmp_path, monkeypatch):
    # A cell's fingerprint held no version: after an upgrade (another evaluator, another tokenizer) with the
    # same params, the old cell's numbers were reused as this release's. Expected: the same config reuses
    # its cell under the same version, and runs it again under another one.
    import harness

    tiny = write_tiny(tmp_path / "tiny")
    data = {"name": "v", "output_dir": str(tmp_path / "out"), "k": [3], "datasets": [{"path": str(tiny)}],
            "retrievers": [{"type": f"{HangingRetriever.__module__}:HangingRetriever", "label": "h"}]}
    assert [o.status for o in run_bench(parse_config(data)).outcomes] == ["run"]
    assert [o.status for o in run_bench(parse_config(data)).outcomes] == ["reused"]
    monkeypatch.setattr(harness, "__version__", harness.__version__ + ".post1")
    assert [o.status for o in run_bench(parse_config(data)).outcomes] == ["run"]


def test_a_bench_stopped_while_writing_its_outputs_leaves_no_earlier_bench_json(tmp_path, monkeypatch):
    """bench.json (the manifest: config, cells, counts) is written last and an earlier run's removed first:
    a run stopped between its leaderboard and its manifest (killed, a full disk) left the earlier run's
    bench.json beside the new leaderboard.json, with the earlier config (here a dataset labelled "old")
    for ``harness report`` to read. Worked here: run 1 labels the dataset "old"; run 2, labelled "new",
    fails writing leaderboard.md; then bench.json must not say "old"."""
    import json

    from harness.bench import runner

    tiny = write_tiny(tmp_path / "tiny")
    data = {"name": "r", "output_dir": str(tmp_path / "out"), "k": [3],
            "datasets": [{"path": str(tiny), "label": "old"}],
            "retrievers": [{"type": f"{HangingRetriever.__module__}:HangingRetriever", "label": "h"}]}
    folder = tmp_path / "out" / "r"
    run_bench(parse_config(data))
    assert json.loads((folder / "bench.json").read_text())["config"]["datasets"][0]["label"] == "old"
    data["datasets"][0]["label"] = "new"
    real = runner.write_text

    def full_disk(path, text):
        if str(path).endswith("leaderboard.md"):
            raise OSError(28, "No space left on device")
        return real(path, text)
    monkeypatch.setattr(runner, "write_text", full_disk)
    with pytest.raises(OSError):
        run_bench(parse_config(data))
    assert '"new"' in (folder / "leaderboard.json").read_text()  # (written before the failure)
    assert not (folder / "bench.json").exists()  # before: the earlier run's, labelled "old"
    monkeypatch.setattr(runner, "write_text", real)
    run_bench(parse_config(data))
    assert json.loads((folder / "bench.json").read_text())["config"]["datasets"][0]["label"] == "new"


def test_two_benchmarks_writing_one_folder_leave_one_benchmarks_outputs(tmp_path, monkeypatch):
    """Two benchmarks writing the outputs of one folder at once (two `harness bench` of configs with the same
    output_dir and name, e.g. a CI matrix) write them in turn, under the folder's lock: the folder keeps one
    benchmark's bench.json beside that benchmark's leaderboard, never A's manifest beside B's leaderboard.
    Worked here: A labels its dataset "a", B "b"; A is held between its leaderboard.md and its bench.json while
    B writes (with the lock B waits; without it, B wrote all four files, then A's bench.json said "a" beside
    B's leaderboard.json saying "b")."""
    import json
    import threading

    from harness.bench import runner

    tiny = write_tiny(tmp_path / "tiny")

    def config(label):
        return parse_config({"name": "r", "output_dir": str(tmp_path / "out"), "k": [3],
                             "datasets": [{"path": str(tiny), "label": label}],
                             "retrievers": [{"type": f"{HangingRetriever.__module__}:HangingRetriever", "label": "h"}]})
    a, b = config("a"), config("b")
    result_a, result_b = run_bench(a), run_bench(b)  # (their cells: a/h and b/h; then the outputs are written again)
    folder = result_a.folder
    a_wrote_board, b_moved = threading.Event(), threading.Event()
    real_text = runner.write_text

    def write_text(path, text):
        real_text(path, text)
        if threading.current_thread().name == "A" and str(path).endswith("leaderboard.md"):
            a_wrote_board.set()
            assert b_moved.wait(timeout=60), "B neither finished nor waited for the folder's lock"

    monkeypatch.setattr(runner, "write_text", write_text)
    set_when_waiting(monkeypatch, "B", b_moved)

    def write(cfg, result, done=None):
        try:
            runner.BenchRunner(cfg).write(result)
        finally:
            if done is not None:
                done.set()
    first = threading.Thread(target=write, args=(a, result_a), name="A")
    first.start()
    assert a_wrote_board.wait(timeout=30)
    second = threading.Thread(target=write, args=(b, result_b, b_moved), name="B")
    second.start()
    first.join(timeout=120)
    second.join(timeout=120)
    assert not first.is_alive() and not second.is_alive()
    manifest = json.loads((folder / "bench.json").read_text())["config"]["datasets"][0]["label"]
    board = json.loads((folder / "leaderboard.json").read_text())
    assert manifest in ("a", "b") and board["datasets"] == [manifest]  # one benchmark's outputs (before: "a", ["b"])
