"""Two processes loading the same uncached corpus parse it once (harness/datasets/corpus_cache.py
``load_or_build`` under ``harness.atomic.build_lock``).

Two cold loads of one source side by side each parsed it into the cache (the 1M-document synthetic
corpus: 5.3 s and 5.9 s, both parsing). Now the second waits for the first (a warning says so) and maps
the file it wrote; a cache hit takes no lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.processes import json_result, until

pytest.importorskip("fcntl")

REPO = Path(__file__).resolve().parents[2]

# Loads ``corpus`` with the cache; its parse (when it parses) first writes ``<name>.parsing`` and, with
# ``hold``, waits for the file ``go``; prints the corpus's ids, texts and whether it is memory-mapped.
SCRIPT = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from harness.datasets import corpus_cache
    from harness.datasets.beir import load_corpus

    corpus, name, hold = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "hold"
    stream = corpus_cache.stream_into_cache

    def slow_stream(*args, **kwargs):
        (corpus.parent / f"{name}.parsing").write_text("")
        deadline = time.monotonic() + 60
        while hold and not (corpus.parent / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return stream(*args, **kwargs)

    corpus_cache.stream_into_cache = slow_stream
    loaded = load_corpus(corpus, cache=True)
    corpus_cache.wait()
    print(json.dumps({"ids": list(loaded.ids), "texts": list(loaded.texts)}))
""")


def _start(folder: Path, name: str, hold: bool) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), HARNESS_CACHE_DIR=str(folder / "cache"))
    env.pop("HARNESS_CORPUS_STREAM", None)
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(folder / "corpus.jsonl"), name,
                             "hold" if hold else "no"], env=env, stdout=subprocess.PIPE,
                            stderr=open(folder / f"{name}.err", "w"), text=True)




def test_a_second_load_waits_for_the_first_parse_and_maps_its_file(tmp_path):
    (tmp_path / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": "", "text": f"text {i}"}) + "\n" for i in range(50)), encoding="utf-8")
    first = _start(tmp_path, "first", hold=True)
    until(lambda: (tmp_path / "first.parsing").exists(), "the first parse to start")
    second = _start(tmp_path, "second", hold=False)
    until(lambda: "waiting for it" in (tmp_path / "second.err").read_text(), "the second to wait")
    (tmp_path / "go").write_text("")
    a, b = json_result(first), json_result(second)
    assert not (tmp_path / "second.parsing").exists()  # (it mapped the first's file: no parse)
    assert a == b
    assert a["ids"][:2] == ["d0", "d1"] and a["texts"][49] == "text 49"
    assert len(list((tmp_path / "cache" / "corpora").glob("*.arrow"))) == 1
