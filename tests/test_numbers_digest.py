"""A change of the code that computes runs or numbers is recorded with the versions it was checked under.

``NUMBERS_VERSION`` / ``RUNS_VERSION`` are bumped by hand (harness/versions.py); see tests/numbers_digest.py.
"""

from __future__ import annotations

import json

from tests import numbers_digest
from tests.numbers_digest import RECORD, code_text


def test_the_code_that_computes_numbers_is_recorded_with_its_versions():
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    now = numbers_digest.current()
    old, new = recorded["files"], now["files"]
    changed = sorted(p for p in old.keys() & new.keys() if old[p] != new[p])
    added, removed = sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())
    versions = {k: (recorded[k], now[k]) for k in ("numbers_version", "runs_version") if recorded[k] != now[k]}
    problems = [f"{what}: {', '.join(paths)}" for what, paths in
                (("changed", changed), ("added", added), ("removed", removed)) if paths]
    problems += [f"{k} recorded {a}, now {b}" for k, (a, b) in versions.items()]
    assert not problems, (
        "the code that computes runs or numbers differs from tests/numbers_digest.json ("
        + "; ".join(problems) + "). If this change can move a run or any metric's value, bump NUMBERS_VERSION "
        "(and RUNS_VERSION when runs move) in harness/versions.py and commit a baseline of the new version "
        "(docs/compare.md); if it cannot, say so in the commit. Then record: python tests/numbers_digest.py --write")


def test_the_digest_is_of_the_code_alone(tmp_path):
    """Comments, docstrings and layout change no digest; a changed operator or constant does."""
    base = tmp_path / "m.py"
    base.write_text('"""Doc."""\n\ndef f(x):\n    """Gain."""\n    return 2 ** x - 1  # exp2\n')
    same = tmp_path / "same.py"
    same.write_text('"""Other doc."""\n# a comment\n\n\ndef f(x):\n    return 2**x-1\n')
    moved = tmp_path / "moved.py"
    moved.write_text('"""Doc."""\n\ndef f(x):\n    """Gain."""\n    return 2 ** x - 2  # exp2\n')
    assert code_text(base) == code_text(same) != code_text(moved)
    c = tmp_path / "a.c"
    c.write_text('/* sum */\nint f(int x) {\n    return x + 1; // one\n}\nconst char *s = "/* kept */";\n')
    c2 = tmp_path / "b.c"
    c2.write_text('int f(int x) { return x + 1; }\n/* doc */ const char *s = "/* kept */";\n')
    c3 = tmp_path / "d.c"
    c3.write_text('int f(int x) { return x + 2; }\nconst char *s = "/* kept */";\n')
    assert code_text(c) == code_text(c2) != code_text(c3)
    assert "/* kept */" in code_text(c)  # (a comment marker inside a string is code)
    j = tmp_path / "r.json"
    j.write_text('{"b": {"split": "test"},\n "a": 1}\n')
    j2 = tmp_path / "s.json"
    j2.write_text('{"a":1,"b":{"split":"test"}}')
    j3 = tmp_path / "t.json"
    j3.write_text('{"a": 1, "b": {"split": "dev"}}')
    assert code_text(j) == code_text(j2) != code_text(j3)


def test_the_scope_holds_the_evaluator_the_readers_and_the_retrievers():
    paths = {p.as_posix() for p in numbers_digest.files()}
    for expected in ("harness/evaluation/metrics/ndcg.py", "harness/evaluation/evaluator.py", "harness/formats/trec.py",
                     "harness/native/trecrun.c", "retrievers/bm25/native/scoring.c", "harness/fusion/methods.py",
                     "harness/datasets/jsonl.py", "harness/experiment.py",
                     # the defaults a run is made with: retriever params, CLI options, bench cells, the
                     # dataset registry (splits, files), pipeline stages
                     "harness/params.py", "harness/cli/options.py", "harness/bench/cells.py",
                     "harness/datasets/registry.json", "harness/pipeline/spec.py"):
        assert expected in paths
    assert not any(p.startswith(("harness/reports/", "harness/compare/", "tests/")) for p in paths)
    assert not any(p.startswith("harness/cli/") and p != "harness/cli/options.py" for p in paths)
