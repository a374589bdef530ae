"""``harness datasets info|list`` as a user meets them with local folders (third datasets review).

Expected counts come from the folders' PROVENANCE.md (recomputed independently from the gzipped files
with gzip + json during the review) or from the hand-made folder below (worked by hand)."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from typer.testing import CliRunner

from harness.cli.datasets import app
from harness.datasets import BUNDLED
from harness.errors import HarnessError, InputError
from tests.datasets.http_fixture import FlakyServer
from tests.cli.test_datasets_cli import cache  # noqa: F401  (the fixture: a cache of its own, no mirror)
from tests.datasets.test_download import _build_zip

runner = CliRunner()




def _small(folder):
    """5 documents, 3 queries, qrels/test.tsv judging q0-d0 (grade 1), q1-d1 (2), q2-d2 (0), q9-d9 (1):
    by hand, 4 judged queries, 4 judgments, one query (q9) without text, one document (d9) not in the corpus."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"w{i}"}) + "\n"
                                                 for i in range(5)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"w{i}"}) + "\n"
                                                  for i in range(3)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\nq1\td1\t2\nq2\td2\t0\n"
                                               "q9\td9\t1\n")
    return folder


def test_info_on_a_relative_folder_shows_what_it_holds(cache, tmp_path, monkeypatch):
    # (was: `info ./small` said "unknown dataset './small'" though `harness run -d ./small` reads it;
    # an absolute path printed the path and the qrels only)
    _small(tmp_path / "small")
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["info", "./small"])
    assert result.exit_code == 0, result.output
    corpus = (tmp_path / "small" / "corpus.jsonl").read_bytes()
    lines = result.output.splitlines()
    assert f"local (folder): {tmp_path / 'small'} (qrels: test)" in lines
    assert f"file corpus.jsonl: {len(corpus):,} bytes, sha256 {hashlib.sha256(corpus).hexdigest()}" in lines
    assert "documents: 5" in lines and "queries: 3 (all splits)" in lines
    assert "split test: 4 judged queries, 4 judgments (grade 0: 1; grade 1: 2; grade 2: 1)" in lines
    assert "split test: warning: 1 judged query id(s) have no query text; they score 0" in lines
    assert "split test: warning: 1 judgment(s) name documents missing from the corpus" in lines
    result = runner.invoke(app, ["info", "small", "--no-counts"])
    assert result.exit_code == 0 and "documents: 5" not in result.output and "file qrels/test.tsv: " in result.output


def test_info_on_the_bundled_scifact_checks_provenance(cache):
    # (was: "local: not downloaded" for the copy `harness run -d scifact` reads)
    result = runner.invoke(app, ["info", "scifact"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert f"local (bundled with the package): {BUNDLED / 'scifact'} (qrels: test)" in lines
    # PROVENANCE.md: corpus.jsonl.gz 2,748,189 bytes, sha256 e32dde98...; 5,183 documents, 1,109 queries,
    # 300 test queries, 339 judgments all of grade 1
    assert ("file corpus.jsonl.gz: 2,748,189 bytes, sha256 "
            "e32dde985ff2a6c9e9b79fc2ada995a7f3759523e9cd563e4a636a88de5524a0 (matches PROVENANCE.md)") in lines
    assert "checksums: every file PROVENANCE.md lists matches it" in lines
    assert "documents: 5,183" in lines and "queries: 1,109 (all splits)" in lines
    assert "split test: 300 judged queries, 339 judgments (grade 1: 339)" in lines


def test_info_on_the_shared_nfcorpus_counts(cache, nfcorpus_dir):
    result = runner.invoke(app, ["info", str(nfcorpus_dir)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # PROVENANCE.md (and MTEB's statistics): 3,633 documents, 3,237 queries, 323 test queries, 12,334
    # judgments (grade 1: 11,758; grade 2: 576)
    assert "checksums: every file PROVENANCE.md lists matches it" in lines
    assert "documents: 3,633" in lines and "queries: 3,237 (all splits)" in lines
    assert "split test: 323 judged queries, 12,334 judgments (grade 1: 11,758; grade 2: 576)" in lines


def test_info_names_a_file_that_differs_from_provenance_and_exits_1(cache, tmp_path):
    folder = tmp_path / "scifact-copy"
    shutil.copytree(BUNDLED / "scifact", folder)
    with open(folder / "qrels" / "test.tsv", "ab") as handle:
        handle.write(b"1\t4983\t1\r\n")  # one judgment more: 5,389 + 10 bytes
    (folder / "queries.jsonl.gz").unlink()
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "x"}\n')
    result = runner.invoke(app, ["info", str(folder), "--no-counts"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("file qrels/test.tsv: 5,399 bytes, sha256 ") and line.endswith(
        "(MISMATCH: PROVENANCE.md gives 5,389 bytes, sha256 "
        "0864bb985e0ca2367ba217977e72004d549054b2b06666ed9d4825ac7c21284c)") for line in lines)
    assert "file queries.jsonl.gz: MISSING (PROVENANCE.md lists it)" in lines
    assert "checksums: 2 mismatch(es) against PROVENANCE.md" in lines


def test_download_records_each_file_and_info_checks_them(cache, nfcorpus_dir):
    data = _build_zip(str(nfcorpus_dir))
    with FlakyServer({"nfcorpus.zip": data}) as server:
        result = runner.invoke(app, ["download", "nfcorpus", "--url", server.url("ok", "nfcorpus.zip"),
                                     "--sha256", hashlib.sha256(data).hexdigest(), "--no-progress"])
    assert result.exit_code == 0, result.output
    folder = cache / "datasets" / "nfcorpus"
    files = json.loads((folder / "DOWNLOAD.json").read_text())["files"]
    # PROVENANCE.md's "uncompressed content" rows: the unpacked corpus.jsonl and queries.jsonl
    assert files["corpus.jsonl"] == {"bytes": 6219364,
                                     "sha256": "9127e0e7f4f89587540be1f1f350eec2a5bc203253f70517b8f34557a71e24ba"}
    assert files["queries.jsonl"]["sha256"] == "d024e6621b84925d485ae473d316a0c3af31c62c8068a59fb29d22f7613aef2a"
    result = runner.invoke(app, ["info", "nfcorpus", "--no-counts"])
    assert result.exit_code == 0 and "checksums: every file DOWNLOAD.json lists matches it" in result.output
    (folder / "qrels" / "test.tsv").write_bytes((folder / "qrels" / "test.tsv").read_bytes()[:-10])
    result = runner.invoke(app, ["info", "nfcorpus", "--no-counts"])
    assert result.exit_code == 1 and "file qrels/test.tsv: 279,562 bytes" in result.output
    assert "(MISMATCH: DOWNLOAD.json gives 279,572 bytes" in result.output
    # a listed corpus or queries file that is gone is MISSING too, exit 1 (it was the loader's one-line error, exit 2)
    (folder / "queries.jsonl").unlink()
    for counts in ("--no-counts", "--counts"):
        result = runner.invoke(app, ["info", "nfcorpus", counts])
        assert result.exit_code == 1, result.output
        assert "file queries.jsonl: MISSING (DOWNLOAD.json lists it)" in result.output.splitlines()
        assert "checksums: 2 mismatch(es) against DOWNLOAD.json" in result.output


@pytest.mark.parametrize("text", ['{"url": ', '{"url": "x"}', "[1]",
                                  '{"url": "u", "bytes": "9", "sha256": "s", "downloaded_at": "d"}'])
def test_a_damaged_download_manifest_is_one_line_naming_it(cache, text):
    # (was: info printed "error: Expecting value: line 2 column 1 (char 9)", naming no file, or a
    # KeyError / TypeError traceback)
    folder = cache / "datasets" / "nfcorpus"
    _small(folder)
    (folder / "DOWNLOAD.json").write_text(text)
    result = runner.invoke(app, ["info", "nfcorpus"])
    assert isinstance(result.exception, HarnessError), result.output
    assert str(result.exception).startswith(f"{folder / 'DOWNLOAD.json'}: not a DOWNLOAD.json written by ")


def test_info_on_downloaded_cqadupstack_lists_its_forums(cache):
    root = cache / "datasets" / "cqadupstack"
    _small(root / "android")
    (root / "DOWNLOAD.json").write_text(json.dumps({"url": "u", "bytes": 1, "sha256": "s", "downloaded_at": "d"}))
    result = runner.invoke(app, ["info", "cqadupstack"])
    assert result.exit_code == 0, result.output
    assert f"local (downloaded): {root} (forums: android; `harness datasets info cqadupstack/FORUM` " in result.output
    result = runner.invoke(app, ["info", "cqadupstack/android"])
    assert result.exit_code == 0 and "documents: 5" in result.output


def test_list_marks_a_license_that_another_source_restricts(cache):
    # (was: nfcorpus listed as cc-by-sa-4.0 with no caveat; `info` said BEIR lists it as non-commercial)
    result = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    line = next(line for line in result.output.splitlines() if " nfcorpus " in line)
    assert "cc-by-sa-4.0*" in line
    assert "* nfcorpus: BEIR lists NFCorpus as for non-commercial research purposes only" in result.output
    result = runner.invoke(app, ["info", "nfcorpus"])
    assert ("license: cc-by-sa-4.0 (MTEB task metadata); BEIR lists NFCorpus as for non-commercial research "
            "purposes only") in result.output.splitlines()


def test_a_folder_with_plain_and_gzipped_corpus_is_refused(cache, tmp_path):
    # (was: corpus.jsonl read, corpus.jsonl.gz beside it ignored, whatever either held)
    import gzip

    from harness.datasets import load_dataset

    folder = _small(tmp_path / "both")
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(b'{"_id": "other", "text": "x"}\n'))
    with pytest.raises(InputError) as caught:
        load_dataset(str(folder))
    assert str(caught.value) == (f"{folder}: both corpus.jsonl and corpus.jsonl.gz in this dataset folder: "
                                 "remove one (which one is meant is ambiguous)")
    result = runner.invoke(app, ["info", str(folder)])
    assert isinstance(result.exception, InputError) and "both corpus.jsonl and corpus.jsonl.gz" in str(result.exception)


def test_truncated_gzip_is_one_line_naming_it(cache, tmp_path):
    import gzip

    folder = _small(tmp_path / "cut")
    data = gzip.compress((folder / "corpus.jsonl").read_bytes())
    (folder / "corpus.jsonl").unlink()
    (folder / "corpus.jsonl.gz").write_bytes(data[:-12])
    result = runner.invoke(app, ["info", str(folder)])
    assert isinstance(result.exception, InputError)
    assert str(result.exception).startswith(f"{folder / 'corpus.jsonl.gz'}: cannot read file: ")


def test_missing_split_does_not_list_a_folder_named_like_qrels(cache, tmp_path):
    from harness.datasets import load_dataset

    folder = _small(tmp_path / "odd")
    (folder / "qrels" / "test.tsv").unlink()
    (folder / "qrels" / "test.tsv").mkdir()
    with pytest.raises(InputError) as caught:
        load_dataset(str(folder))
    assert "no qrels for split 'test' (available: none)" in str(caught.value)  # (was: "available: test")


@pytest.mark.parametrize("command", [["info"], ["download", "--no-progress"]])
@pytest.mark.parametrize("name", ["cqadupstack/nope", "cqadupstack-nope"])
def test_an_unknown_cqadupstack_forum_is_named_as_such(cache, command, name):
    # (was: download said the name "cannot name a downloaded dataset ... use letters, digits", info
    # "unknown dataset"; `harness run -d` the same)
    from harness.datasets import load_dataset

    result = runner.invoke(app, [command[0], name, *command[1:]])
    assert isinstance(result.exception, HarnessError)
    assert str(result.exception) == (f"{name!r}: cqadupstack has no forum 'nope' (forums: android, english, gaming, "
                                     "gis, mathematica, physics, programmers, stats, tex, unix, webmasters, wordpress)")
    with pytest.raises(HarnessError, match="cqadupstack has no forum 'nope'"):
        load_dataset(name)


def test_list_says_msmarco_counts_its_dev_queries(cache):
    # (was: 6,980 under "test queries"; they are MS MARCO's dev queries, its evaluation split: BEIR Table 1)
    result = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert "eval queries" in result.output
    line = next(line for line in result.output.splitlines() if " msmarco " in line)
    assert "8,841,823" in line and "6,980 (dev)" in line


@pytest.mark.parametrize("stem", ["corpus.jsonl", "queries.jsonl"])
def test_a_gzipped_file_without_gz_in_its_name_says_so(cache, tmp_path, stem):
    # (was: "not valid UTF-8 (byte 0x8b at column 2)" only: 1f 8b is gzip's magic number)
    import gzip

    from harness.datasets import load_dataset

    folder = _small(tmp_path / "named")
    (folder / stem).write_bytes(gzip.compress((folder / stem).read_bytes()))
    with pytest.raises(InputError) as caught:
        load_dataset(str(folder))
    assert str(caught.value) == (f"{folder / stem}:1: not valid UTF-8 (byte 0x8b at column 2); it is gzip-compressed: "
                                 f"name it {stem}.gz")


def _random_folder(seed, root):
    """A random BEIR folder (odd and unicode ids, null titles, blank lines, .gz or not, CRLF or LF, a header
    or none, grades 0, negative and fractional, pairs repeated with their grade) and what a plain reading
    of it gives: the reference the counts of `info` are compared with."""
    import collections
    import gzip
    import random

    r = random.Random(seed)
    alphabet = ["a", "Z", "0", "9", "é", "中", "𝔘", "-", "_", ".", " "]

    def some_id():
        return "".join(r.choice(alphabet) for _ in range(r.randint(1, 4))).strip() or "x"

    folder = root / f"r{seed}"
    (folder / "qrels").mkdir(parents=True)
    docs = list(dict.fromkeys(some_id() for _ in range(r.randint(1, 30))))
    queries = list(dict.fromkeys(some_id() for _ in range(r.randint(0, 10))))
    lines = [json.dumps({"_id": d, "title": r.choice(["", "t", None]), "text": "x " + d},
                        ensure_ascii=r.random() < .5) + "\n" for d in docs]
    if r.random() < .3:
        lines.insert(r.randint(0, len(lines)), "\n")
    data = "".join(lines).encode()
    if r.random() < .5:
        (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(data))
    else:
        (folder / "corpus.jsonl").write_bytes(data)
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": "x"}) + "\n" for q in queries))
    want = [f"documents: {len(docs):,}", f"queries: {len(queries):,} (all splits)"]
    for split in sorted(r.sample(["test", "dev", "train"], r.randint(0, 3))):
        pairs, rows = {}, []
        for _ in range(r.randint(1, 25)):
            q, d = r.choice(queries + [some_id()]), r.choice(docs + [some_id()])
            grade = pairs.setdefault((q, d), r.choice([0, 1, 2, 3, -1, 1.5, 0.25]))
            rows.append(f"{q}\t{d}\t{grade}")
        eol = r.choice(["\n", "\r\n"])
        header = "query-id\tcorpus-id\tscore" + eol if r.random() < .7 else ""
        (folder / "qrels" / f"{split}.tsv").write_bytes((header + "".join(row + eol for row in rows)).encode())
        histogram = "; ".join(f"grade {int(g) if float(g).is_integer() else g}: {n:,}"
                              for g, n in sorted(collections.Counter(pairs.values()).items()))
        judged = {q for q, _ in pairs}
        want.append(f"split {split}: {len(judged):,} judged queries, {len(pairs):,} judgments ({histogram})")
        if judged - set(queries):
            want.append(f"split {split}: warning: {len(judged - set(queries))} judged query id(s) have no query "
                        "text; they score 0")
        missing = sum(1 for _, d in pairs if d not in set(docs))
        if missing:
            want.append(f"split {split}: warning: {missing} judgment(s) name documents missing from the corpus")
    return folder, want


def test_info_counts_match_a_plain_reading_of_random_folders(cache, tmp_path):
    # 40 random folders here; 300 agreed during the review
    for seed in range(40):
        folder, want = _random_folder(seed, tmp_path)
        result = runner.invoke(app, ["info", str(folder)])
        assert result.exit_code == 0, (seed, result.output)
        got = [line for line in result.output.splitlines() if line.startswith(("documents:", "queries:", "split "))]
        assert got == want, seed
