"""Dataset loading, second review: crashes and divergences between the sources and parse paths,
each case against the line scan (``json.loads`` per line, docs/datasets.md) as the reference."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# pyarrow.json (26.0) dies with SIGSEGV when a parse block starts with a top-level ``null`` (arrow
# issue 47409): run in a child process, so that the old behaviour fails the test instead of the run.
_NULL_BLOCKS = textwrap.dedent("""
    import gzip, json, os, sys
    from pathlib import Path
    os.environ["HARNESS_CACHE_DIR"] = sys.argv[2]
    from harness.datasets import corpus_cache, jsonl
    from harness.datasets.beir import load_corpus, load_queries
    from harness.errors import InputError

    folder = Path(sys.argv[1])
    rows = "".join(json.dumps({"_id": f"d{i}", "text": "x"}) + "\\n" for i in range(40))
    cases = {
        "first line": (b"null\\n" + rows.encode(), 1 << 24),
        "after blanks and a BOM": (b"\\xef\\xbb\\xbf\\n \\t\\r\\nnull\\n" + rows.encode(), 1 << 24),
        "at a block start": (rows.encode() + b"null\\n" + rows.encode(), len(rows)),
        "at a block start after blanks": (rows.encode() + b"\\n\\n  null\\n" + rows.encode(), len(rows) + 1),
        "at a block start after a lone CR": (rows.encode()[:-1] + b"\\rnull\\n", len(rows)),
    }
    out = {}
    for name, (data, block) in cases.items():
        jsonl.BLOCK_BYTES = block
        for gz in (False, True):
            path = folder / f"{len(out)}" / ("corpus.jsonl.gz" if gz else "corpus.jsonl")
            path.parent.mkdir(parents=True)
            path.write_bytes(gzip.compress(data) if gz else data)
            for how, load in (("parse", lambda: load_corpus(path, cache=False)),
                              ("stream", lambda: load_corpus(path, cache=True)),
                              ("queries", lambda: load_queries(path))):
                try:
                    load()
                    out[f"{name} {gz} {how}"] = "loaded"
                except InputError as exc:
                    out[f"{name} {gz} {how}"] = str(exc).replace(str(path), "FILE")
                corpus_cache.wait()
    print(json.dumps(out))
""")


def test_a_block_starting_with_null_is_a_named_line_not_a_crash(tmp_path):
    """A line ``null`` (not a JSON object) is the line scan's ``FILE:LINE: expected a JSON object``
    wherever it is: the first line (after a BOM and blank lines), or the first line of one of
    pyarrow.json's blocks (here made small, as at a 16 MiB boundary of a large corpus), in plain
    and gzipped corpora and queries, parsed whole or streamed into the cache. Before: SIGSEGV."""
    done = subprocess.run([sys.executable, "-c", _NULL_BLOCKS, str(tmp_path / "data"), str(tmp_path / "cache")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    found = json.loads(done.stdout)
    assert len(found) == 5 * 2 * 3
    lines = {"first line": 1, "after blanks and a BOM": 3, "at a block start": 41, "at a block start after blanks": 43,
             "at a block start after a lone CR": 41}
    for key, message in found.items():
        name = key.rsplit(" ", 2)[0]
        assert message == f"FILE:{lines[name]}: expected a JSON object", key
