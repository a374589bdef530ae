"""The digest of the code that computes runs and numbers, recorded beside the versions it was checked under.

``NUMBERS_VERSION`` and ``RUNS_VERSION`` (harness/versions.py) are bumped by hand, in the change that
moves a run or a metric's value; nothing told a change that forgot the bump from one that needed none,
and a forgotten bump lets compare, check, bench and the stage cache take old numbers for new ones. This
records one digest per source file that computes them (:data:`SCOPE`) in ``numbers_digest.json``, with
the two versions; ``tests/test_numbers_digest.py`` fails when a file's code differs from its record, so
whoever changes it decides, and says in the commit, whether numbers move:

* they can: bump ``NUMBERS_VERSION`` (and ``RUNS_VERSION`` when runs move; the committed baseline with it,
  docs/compare.md), then record;
* they cannot (a refactor, a message, a new check): record without a bump.

Recording: ``python tests/numbers_digest.py --write``. A file's digest is of its code only: Python's
syntax tree without docstrings (a version-independent dump: fields left empty are omitted), C's text
without comments and with runs of whitespace as one space, JSON's data (keys sorted, no layout).
Comments, docstrings and layout change no digest; anything else does.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = Path(__file__).resolve().with_name("numbers_digest.json")

# What decides a run (datasets read and their registry, retrievers and their parameters, fusion,
# reranking, pipeline stages, the depth cut, the CLI's and bench cells' defaults) or a metric (runs and
# qrels read, the evaluator): glob patterns relative to the repository root.
SCOPE = (
    "harness/evaluation/**/*.py", "harness/run.py", "harness/qrels.py", "harness/columns.py",
    "harness/formats/*.py", "harness/native/*.c", "harness/native/*.cpp",
    "harness/fusion/*.py", "harness/pipeline/run.py", "harness/pipeline/spec.py", "harness/reranker.py",
    "harness/retriever.py", "harness/experiment.py", "harness/params.py", "harness/cli/options.py",
    "harness/bench/cells.py", "harness/datasets/*.py", "harness/datasets/*.json",
    "retrievers/**/*.py", "retrievers/**/*.c", "retrievers/**/*.h",
)

_C_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)


def files() -> list[Path]:
    """The files of :data:`SCOPE`, sorted, relative to the root (generated ones excluded: none is tracked)."""
    found = {p for pattern in SCOPE for p in ROOT.glob(pattern) if p.is_file()}
    return sorted(p.relative_to(ROOT) for p in found)


def _dump(node) -> str:
    """A syntax tree as text, stable across Python versions: node type, then its non-empty fields."""
    if isinstance(node, ast.AST):
        fields = []
        for name, value in ast.iter_fields(node):
            if value is None or value == []:
                continue
            fields.append(f"{name}={_dump(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return f"[{', '.join(map(_dump, node))}]"
    return repr(node)


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def code_text(path: Path) -> str:
    """The code of ``path`` (relative to the root) without comments, docstrings or layout."""
    source = (ROOT / path).read_text(encoding="utf-8")
    if path.suffix == ".py":
        return _dump(_without_docstrings(ast.parse(source)))
    if path.suffix == ".json":
        return json.dumps(json.loads(source), sort_keys=True, separators=(",", ":"))
    stripped = _C_TOKENS.sub(lambda m: " " if m.group().startswith("/") else m.group(), source)
    return " ".join(stripped.split())


def digests() -> dict[str, str]:
    """Path (POSIX) -> sha256 of :func:`code_text`, for every file of :data:`SCOPE`."""
    return {p.as_posix(): hashlib.sha256(code_text(p).encode("utf-8")).hexdigest() for p in files()}


def current() -> dict:
    from harness.versions import NUMBERS_VERSION, RUNS_VERSION

    return {"numbers_version": NUMBERS_VERSION, "runs_version": RUNS_VERSION, "files": digests()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"record the current digests in {RECORD.name}")
    args = parser.parse_args()
    now = current()
    if args.write:
        tmp = RECORD.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        tmp.replace(RECORD)
        print(f"recorded {len(now['files'])} files under NUMBERS_VERSION {now['numbers_version']}, "
              f"RUNS_VERSION {now['runs_version']} in {RECORD.relative_to(ROOT)}")
    else:
        print(json.dumps(now, indent=1, sort_keys=True))


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    main()
