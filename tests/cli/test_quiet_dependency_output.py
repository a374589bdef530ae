"""``harness run -q`` prints only ``results written to FOLDER`` (its help: "No progress bars, warnings or
table"), also when a dependency prints (harness/cli/display.py ``dependency_output_hidden``).

Seen on this machine: ``harness run -r dense -q`` (and ``-r sparse``) printed transformers' model-load bar
``Loading weights: 100%|...| 103/103`` on stderr (tqdm draws it on a pipe too), and a dependency's
warning at import (a FutureWarning or a DeprecationWarning of another package, here a stand-in module)
was printed by Python's default filters. Now ``-q`` turns the Hugging Face bars off and hides other
packages' warnings while the command runs; the project's own DeprecationWarning (a former name the user
typed) and errors are still printed. Expected output: the one line the help names, stderr empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

DEPENDENCY = textwrap.dedent('''
    import warnings
    warnings.warn("fakedep.old_api is deprecated", FutureWarning)  # (shown by Python's default filters)
    warnings.filterwarnings("always", category=DeprecationWarning, module="fakedep")  # (a package showing its own)
    warnings.warn("fakedep.other is deprecated", DeprecationWarning)
''')
PLUGIN = textwrap.dedent('''
    import fakedep  # noqa: F401
    from retrievers.bm25 import BM25Retriever


    class Plugged(BM25Retriever):
        name = "plugged"
''')

QUIET_LINE = f"results written to {os.path.join('out', 'ds', 'quiet')}\n"


def write_folder(tmp_path, plugin: str = PLUGIN):
    """A dataset folder ``ds`` (four documents, one judged query), the dependency ``fakedep.py`` and the
    plugin module ``plugged.py`` (``plugin``'s text) in ``tmp_path``; returns ``tmp_path``."""
    ds = tmp_path / "ds"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"word{i} shared"}) + "\n"
                                             for i in range(4)))
    (ds / "queries.jsonl").write_text('{"_id": "q1", "text": "word1"}\n')
    (ds / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "fakedep.py").write_text(DEPENDENCY)
    (tmp_path / "plugged.py").write_text(plugin)
    return tmp_path


@pytest.fixture
def folder(tmp_path):
    return write_folder(tmp_path)


def _run(folder, *args):
    path = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "HARNESS_CACHE_DIR": str(folder / "cache"), "PYTHONPATH": path}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    return subprocess.run([sys.executable, "-m", "harness", "run", "-d", "ds", "--k", "1", "-o", "out", *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def test_quiet_hides_a_dependency_warning(folder):
    proc = _run(folder, "-r", "plugged:Plugged")
    assert "FutureWarning: fakedep.old_api is deprecated" in proc.stderr  # (what -q hides)
    assert "DeprecationWarning: fakedep.other is deprecated" in proc.stderr
    proc = _run(folder, "-r", "plugged:Plugged", "-q", "--name", "quiet")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, QUIET_LINE, "")


def test_quiet_still_prints_errors_and_the_own_deprecation(folder):
    proc = _run(folder, "-r", "plugged:Plugged", "-q", "-p", "backend=bm25s")
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == ["warning: BM25 backend 'bm25s' is now called 'lucene' (deprecated)"]
    proc = _run(folder, "-r", "plugged:Plugged", "-q", "-p", "k1=x")
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) == 1


def test_quiet_hides_the_model_load_bar_of_a_dense_run(folder):
    pytest.importorskip("sentence_transformers")
    from tests.retrievers.tiny_models import sentence_transformer

    (folder / "model").mkdir()
    model = sentence_transformer(folder / "model")
    args = ("-r", "dense", "-p", f"model={model}", "-p", "device=cpu")
    proc = _run(folder, *args, "-q", "--name", "quiet", "-p", "cache=false")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, QUIET_LINE, "")


def test_a_dense_run_without_a_terminal_draws_no_model_load_bar(folder):
    """Without -q, on a stderr that is no terminal (CI logs, a pipe), the harness draws no bar, and now
    neither does transformers: its ``Loading weights: 100%|...| 103/103`` was drawn on a pipe too."""
    pytest.importorskip("sentence_transformers")
    from tests.retrievers.tiny_models import sentence_transformer

    (folder / "model").mkdir()
    model = sentence_transformer(folder / "model")
    proc = _run(folder, "-r", "dense", "-p", f"model={model}", "-p", "device=cpu", "--name", "loud")
    assert proc.returncode == 0
    assert "Loading weights" not in proc.stderr and "%|" not in proc.stderr
    assert "┃ metric ┃" in proc.stdout and "results written to out/ds/loud" in proc.stdout  # (the table: not quiet)


def test_the_switches_are_put_back_after_the_command(monkeypatch):
    """(In one process: the Hugging Face bars as they were before, on or off, and the warning display.)"""
    import warnings

    hub = pytest.importorskip("huggingface_hub.utils")
    from harness.cli.display import dependency_output_hidden

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    hub.enable_progress_bars()
    show = warnings.showwarning
    with dependency_output_hidden():
        assert hub.are_progress_bars_disabled() and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
        with warnings.catch_warnings(record=True) as caught:  # (recording replaces the display: not hidden)
            warnings.simplefilter("always")
            warnings.warn("x", FutureWarning)
        assert len(caught) == 1
    assert not hub.are_progress_bars_disabled() and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    assert warnings.showwarning is show
    hub.disable_progress_bars()
    with dependency_output_hidden():
        pass
    assert hub.are_progress_bars_disabled()  # (off before: left off)
    hub.enable_progress_bars()
