"""``harness cache dir | info | purge``: the cache root's kinds, their sizes, and removing them.

A real run fills the caches (NFCorpus's 3,633 documents: its BM25 index); info counts
what is there; purge removes it and the next run rebuilds it and scores the same (NDCG@10 0.3206, the harness's
BM25 on NFCorpus in docs/bm25.md; pytrec_eval gives 0.3205549311607387 on that run)."""

from __future__ import annotations

import json

import pytest

from harness import cache


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    return tmp_path / "cache"


def _write(path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)


def test_info_counts_each_kind_and_purge_removes_only_the_named(root, harness_cli):
    _write(root / "bm25" / "a" / "index.bin", 1000)
    _write(root / "bm25" / "b" / "index.bin", 24)
    _write(root / "bm25" / ".b.123-host.tmp", 7)  # a temporary file: its bytes count, it is no entry
    _write(root / "pipelines" / "ab" / "run.arrow", 2048)
    _write(root / "mine.txt", 5)  # the user's own file beside the kinds: never touched
    held = cache.usage("bm25")
    assert (held.entries, held.bytes, held.folder) == (2, 1031, root / "bm25")
    assert cache.usage("sparse").entries == cache.usage("sparse").bytes == 0
    done = harness_cli("cache", "info")
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): line.split("│")[2:4] for line in done.stdout.splitlines() if "│" in line}
    assert [c.strip() for c in rows["bm25"]] == ["2", "1.0 KiB"]
    assert [c.strip() for c in rows["pipelines"]] == ["1", "2.0 KiB"]
    assert rows["total"][1].strip() == "3.0 KiB"  # 1,031 + 2,048 = 3,079 bytes
    done = harness_cli("cache", "purge", "bm25")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"bm25: removed {root / 'bm25'} (2 entries, 1.0 KiB)\n"
    assert not (root / "bm25").exists() and (root / "pipelines" / "ab" / "run.arrow").is_file()
    assert sorted(p.name for p in root.iterdir()) == ["mine.txt", "pipelines"]  # no .bm25.purge-* left
    assert harness_cli("cache", "purge", "bm25").stdout == f"bm25: nothing to remove ({root / 'bm25'})\n"
    done = harness_cli("cache", "purge", "--all")
    assert done.returncode == 0 and not (root / "pipelines").exists() and (root / "mine.txt").read_bytes() == b"xxxxx"
    assert harness_cli("cache", "dir").stdout == f"{root}\n"


def test_bad_kinds_are_one_line(root, harness_cli):
    for args, message in ((["purge", "bm2"], "error: unknown cache kind 'bm2'; the kinds are datasets, corpora, bm25, "
                           "sqlite, embeddings, sparse, pipelines"),
                          (["purge"], "error: name the kinds to remove (datasets, corpora, bm25, sqlite, embeddings, "
                           "sparse, pipelines) or give --all"),
                          (["purge", "bm25", "--all"], "error: give kinds or --all, not both")):
        done = harness_cli("cache", *args)
        assert (done.returncode, done.stderr.strip()) == (2, message)


def test_a_killed_purge_is_finished_by_the_next(root):
    _write(root / ".bm25.purge-99999-host" / "a" / "index.bin", 10)  # renamed, then killed before the delete
    cache.purge("bm25")
    assert not root.exists() or list(root.iterdir()) == []


def test_a_real_run_fills_the_caches_and_rebuilds_the_same_after_purge(root, harness_cli, nfcorpus_dir, tmp_path):
    args = ("run", "-d", nfcorpus_dir, "-r", "bm25", "-o", tmp_path / "out", "-q", "-m", "NDCG@10", "--k", "10")
    assert harness_cli(*args, "--name", "first").returncode == 0
    assert cache.usage("bm25").entries == 1  # (a corpus under 32 MiB gets no Arrow copy: corpora stays empty)
    done = harness_cli("cache", "purge", "bm25", "corpora")
    assert done.returncode == 0 and done.stdout.splitlines()[1] == f"corpora: nothing to remove ({root / 'corpora'})"
    assert cache.usage("bm25").entries == 0
    assert harness_cli(*args, "--name", "again").returncode == 0
    assert cache.usage("bm25").entries == 1
    first, again = (json.loads((tmp_path / "out" / "nfcorpus" / n / "metrics.json").read_text()) for n in ("first", "again"))
    assert round(first["metrics"]["NDCG@10"], 4) == round(again["metrics"]["NDCG@10"], 4) == 0.3206
    first, again = ([line for line in (tmp_path / "out" / "nfcorpus" / n / "run.trec").read_text().splitlines()
                     if not line.startswith("#")] for n in ("first", "again"))  # (the metadata names the run)
    assert first and first == again


def test_purge_of_a_kind_kept_on_another_disk_by_a_link_empties_its_folder_and_keeps_the_link(root, harness_cli,
                                                                                                tmp_path):
    # <root>/bm25 -> a folder elsewhere (the indexes kept on a bigger disk). The purge renamed the link aside and
    # rmtree refused it: 'error: Cannot call rmtree on a symbolic link', exit 2, the link gone from <root>/bm25,
    # the 2 entries (1,031 bytes) still on the other disk, and the next purge said 'nothing to remove'.
    disk = tmp_path / "disk" / "bm25"
    _write(disk / "a" / "index.bin", 1000)
    _write(disk / "b" / "index.bin", 24)
    _write(disk / ".b.123-host.tmp", 7)
    root.mkdir()
    (root / "bm25").symlink_to(disk, target_is_directory=True)
    done = harness_cli("cache", "purge", "bm25")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"bm25: removed {root / 'bm25'} (2 entries, 1.0 KiB)\n", "")
    assert (root / "bm25").is_symlink() and (root / "bm25").resolve() == disk.resolve()
    assert list(disk.iterdir()) == [] and [p.name for p in root.iterdir()] == ["bm25"]
    assert cache.usage("bm25").entries == cache.usage("bm25").bytes == 0
    _write(disk / "c" / "index.bin", 5)  # the next run's entry lands on the other disk again
    assert harness_cli("cache", "purge", "bm25").stdout == f"bm25: removed {root / 'bm25'} (1 entries, 5 B)\n"


def test_a_cache_root_that_is_a_file_is_one_line(tmp_path, monkeypatch, harness_cli):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "afile"))
    for args in (["info"], ["purge", "bm25"]):
        done = harness_cli("cache", *args)
        assert (done.returncode, done.stderr.strip()) == (
            2, f"error: cache root {tmp_path / 'afile'} is not a folder ($HARNESS_CACHE_DIR names it)")
