"""Two processes encoding the same documents with the same model encode them once
(retrievers/dense/retriever.py ``encode`` under ``harness.atomic.build_lock``).

Two cold dense runs on one embedding cache (two benchmark cells on one machine, a CI matrix) each encoded
the whole corpus side by side: on a GPU, hours twice. Now the second waits for the first (a warning says
so) and loads the complete entry: ``documents_cache: hit``, the same run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.processes import json_result, until

pytest.importorskip("fcntl")
pytest.importorskip("sentence_transformers")

REPO = Path(__file__).resolve().parents[2]

# Indexes a small corpus with the dense retriever; its encoding of the documents (when it encodes them) first
# writes ``<name>.encoding`` and, with ``hold``, waits for the file ``go``; prints its stats and run.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from harness.datasets.corpus import Corpus, Queries
    from retrievers.dense.cache import EmbeddingCache
    from retrievers.dense.retriever import DenseRetriever

    model, cache, name, hold = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "hold"
    build = EmbeddingCache.build

    def slow_build(self, *args, **kwargs):
        if self.folder.name.startswith("documents-"):
            (cache.parent / f"{name}.encoding").write_text("")
            deadline = time.monotonic() + 60
            while hold and not (cache.parent / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        return build(self, *args, **kwargs)

    EmbeddingCache.build = slow_build
    corpus = Corpus([f"d{i}" for i in range(12)], [""] * 12, [f"doc {i} topic{i % 5} item{i % 3}" for i in range(12)])
    r = DenseRetriever(model=model, device="cpu", cache_dir=str(cache), progress=False)
    r.index(corpus)
    run = r.search(Queries(["q1", "q2"], ["topic1 item2", "item0 doc"]), 5).to_dict()
    print(json.dumps({"cache": r.stats()["documents_cache"], "run": run}))
""")


def _start(tmp_path: Path, model: Path, name: str, hold: bool) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(model), str(tmp_path / "cache"), name,
                             "hold" if hold else "no"], env=env, stdout=subprocess.PIPE,
                            stderr=open(tmp_path / f"{name}.err", "w"), text=True)


def test_a_second_process_waits_for_the_first_encoding_and_loads_it(tmp_path):
    from tests.retrievers.tiny_models import sentence_transformer

    (tmp_path / "model").mkdir()
    model = sentence_transformer(tmp_path / "model")
    first = _start(tmp_path, model, "first", hold=True)
    until(lambda: (tmp_path / "first.encoding").exists(), "the first encoding to start", timeout=120)
    second = _start(tmp_path, model, "second", hold=False)
    until(lambda: "waiting for it" in (tmp_path / "second.err").read_text(), "the second to wait", timeout=120)
    (tmp_path / "go").write_text("")
    a, b = json_result(first), json_result(second)
    assert (a["cache"], b["cache"]) == ("miss", "hit")
    assert not (tmp_path / "second.encoding").exists()  # (it encoded no document)
    assert b["run"] == a["run"]
    assert all(p.is_dir() for p in (tmp_path / "cache").glob("documents-*"))  # (the locks are in .locks/, not
    assert list((tmp_path / "cache" / ".locks").glob("documents-*.lock"))  # among the entries a user globs)
