"""compare / check's "evaluated on different dataset files" warning compares each result's dataset identity
(docs/datasets.md "One text, any encoding"): its ``dataset.content`` checksums where it records them, else its
``dataset.files``' (a result of a build before content was recorded, or of harness evaluate).

A plain file's sha256 is its content's, so the result of plain files an earlier build wrote (a committed
baseline) and a new result of the same text gzipped are one dataset. Before, a result without ``content`` made
both sides fall back to ``files`` and the pair was warned about although the text was the same; a ``.gz``'s
file checksum is not its content's, so an older result of a ``.gz`` still warns (which text it held is unknown).
"""

from __future__ import annotations

import json

from tests.compare.helpers import write_result

TEXT, QUERIES, QRELS, GZ = "a" * 64, "b" * 64, "c" * 64, "d" * 64  # sha256s: the corpus text, its .gz file


def _result(folder, files: dict, content: dict | None = None):
    write_result(folder, {"q1": {"P@1": 1.0}, "q2": {"P@1": 0.0}}, files=files)
    doc = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    if content is not None:
        doc["dataset"]["content"] = content
    (folder / "metrics.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def _new_gz(folder):  # this build, the corpus gzipped: files name the .gz, content the text
    return _result(folder, {"corpus.jsonl.gz": GZ, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS},
                   {"corpus.jsonl": TEXT, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS})


def test_an_older_result_of_plain_files_and_a_new_one_of_the_same_text_gzipped_are_one_dataset(tmp_path, harness_cli):
    old = _result(tmp_path / "old", {"corpus.jsonl": TEXT, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS})
    new = _new_gz(tmp_path / "new")
    compared = harness_cli("compare", old, new, "-m", "P@1")
    assert compared.returncode == 0, compared.stderr
    assert "different dataset files" not in compared.stdout + compared.stderr
    checked = harness_cli("check", "--baseline", old, "--current", new, "-m", "P@1")
    assert checked.returncode == 0, checked.stderr
    assert "different dataset files" not in checked.stdout + checked.stderr


def test_an_older_result_of_the_same_gz_file_is_the_same_dataset(tmp_path, harness_cli):
    # (the committed baseline's case: recorded from the bundled .gz files before content was recorded)
    old = _result(tmp_path / "old", {"corpus.jsonl.gz": GZ, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS})
    new = _new_gz(tmp_path / "new")
    checked = harness_cli("check", "--baseline", old, "--current", new, "-m", "P@1")
    assert checked.returncode == 0, checked.stderr
    assert "different dataset files" not in checked.stdout + checked.stderr


def test_an_older_result_of_a_gz_still_warns_and_other_text_warns(tmp_path, harness_cli):
    old = _result(tmp_path / "old", {"corpus.jsonl.gz": "e" * 64, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS})
    new = _new_gz(tmp_path / "new")
    compared = harness_cli("compare", old, new, "-m", "P@1")
    assert "new and old were evaluated on different dataset files (sha256 differ)" in compared.stderr
    edited = _result(tmp_path / "edited", {"corpus.jsonl": "f" * 64, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS},
                     {"corpus.jsonl": "f" * 64, "queries.jsonl": QUERIES, "qrels/test.tsv": QRELS})
    compared = harness_cli("compare", edited, new, "-m", "P@1")
    assert "new and edited were evaluated on different dataset files (sha256 of their content differ)" \
        in compared.stderr
