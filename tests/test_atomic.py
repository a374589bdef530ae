"""harness.atomic.write_json: exactly the text of ``json.dump(obj, indent=2, ensure_ascii=False)``
(the reference, from Python's json module), written faster by encoding flat dicts and lists in C."""

from __future__ import annotations

import json
import math
import random

import pytest

from harness.atomic import indented_json, write_json


def _reference(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


def _scalar(rng: random.Random):
    return rng.choice([
        lambda: rng.random() * 10 ** rng.randint(-30, 30), lambda: rng.randint(-10**20, 10**20), lambda: True,
        lambda: False, lambda: None, lambda: -0.0, lambda: math.inf, lambda: -math.inf, lambda: math.nan,
        lambda: "".join(rng.choice('ab"\\\n\t\x00é€𝄞/ ') for _ in range(rng.randint(0, 8))), lambda: 1 / 3])()


def _value(rng: random.Random, depth: int):
    roll = rng.random()
    if depth > 4 or roll < 0.4:
        return _scalar(rng)
    n = rng.randint(0, 6)
    if roll < 0.7:
        return {_scalar(rng) if rng.random() < 0.05 else f"k{i}é\"": _value(rng, depth + 1) for i in range(n)}
    return (tuple if rng.random() < 0.2 else list)(_value(rng, depth + 1) for _ in range(n))


@pytest.mark.parametrize("seed", range(200))
def test_randomized_documents_are_json_dumps_text(seed):
    """Nested dicts/lists/tuples, flat and mixed, empty ones, non-str keys (json's own conversion), NaN,
    infinities, -0.0, big ints, escapes and non-ASCII."""
    obj = _value(random.Random(seed), 0)
    assert indented_json(obj) == _reference(obj)


def test_a_result_shaped_document_and_the_written_file(tmp_path):
    per_query = {f"q{i}": {"NDCG@10": i / 7, "P@1": 1.0, "MRR@10": 0.0} for i in range(50)}
    doc = {"schema": "x", "metrics": {"NDCG@10": {"mean": 0.5, "ci": [0.1, 0.9]}}, "per_query": per_query,
           "empty": {}, "none": [], "k_values": [1, 10]}
    assert indented_json(doc) == _reference(doc)
    write_json(tmp_path / "m.json", doc)
    assert (tmp_path / "m.json").read_text(encoding="utf-8") == _reference(doc) + "\n"
    assert indented_json(doc).splitlines()[:4] == ['{', '  "schema": "x",', '  "metrics": {', '    "NDCG@10": {']


def test_unusual_values_get_json_own_text_and_errors():
    class Score(float):
        pass

    for obj in ({"a": Score(0.5)}, {1: {"b": [1, 2]}}, {"deep": [[[[[[[[[[[[1]]]]]]]]]]]] * 2}):
        assert indented_json(obj) == _reference(obj)
    with pytest.raises(TypeError, match="not JSON serializable"):
        indented_json({"a": {"b": object()}})
    loop: list = []
    loop.append([loop])
    with pytest.raises(ValueError, match="Circular reference"):
        indented_json({"x": loop})


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid  # (exited and reaped: no process has it, unless the system reused it at once)


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    """SIGKILL / SIGTERM run no cleanup: a write's temporary file (``.<name>.<pid>.<random>.tmp``) stayed
    forever (a corpus cache's was the whole parsed corpus). remove_abandoned removes those whose process
    is gone, keeps a running process's (this one's) and anything else."""
    import os

    from harness.atomic import atomic_open, remove_abandoned, writer_tag

    dead, alive = _dead_pid(), os.getpid()
    names = [f".run.trec.{dead}.ab12cd34.tmp", f".metrics.json.{alive}.x_y9z8w7.tmp", ".run.trec.ab12cd34.tmp",
             "run.trec", f".{dead}.tmp", f"keep.{dead}.abc.tmp"]
    for name in names:
        (tmp_path / name).write_text("x")
    remove_abandoned(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])
    with atomic_open(tmp_path / "out.txt") as handle:  # its own temporary file: named with this pid
        [temporary] = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.txt.")]
        assert temporary.startswith(f".out.txt.{writer_tag()}.") and temporary.endswith(".tmp")
        handle.write("done")
    assert (tmp_path / "out.txt").read_text() == "done"


def test_the_corpus_cache_removes_a_killed_streams_file(tmp_path, monkeypatch):
    """A load killed while streaming the corpus into its cache left ``corpora/.stream...tmp`` (the parsed
    corpus's size) behind; the next load into that cache folder removes it."""
    import json as _json

    from harness.datasets import corpus_cache
    from harness.datasets.beir import load_corpus

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    corpora = tmp_path / "cache" / "corpora"
    corpora.mkdir(parents=True)
    abandoned = corpora / f".stream.{_dead_pid()}.k1l2m3n4.tmp"
    abandoned.write_bytes(b"\0" * 1000)
    source = tmp_path / "corpus.jsonl"
    source.write_text("".join(_json.dumps({"_id": f"d{i}", "text": "word " * 5}) + "\n" for i in range(50)))
    corpus = load_corpus(source, cache=True)
    corpus_cache.wait()  # (the streamed file is renamed into place in the background)
    assert len(corpus) == 50 and not abandoned.exists()
    assert len(list(corpora.glob("*.arrow"))) == 1


def test_another_hosts_temporaries_are_kept_until_a_week_old(tmp_path):
    """One cache folder shared by containers (CI jobs with a cache volume) or machines: another pid
    namespace's live writer has a pid that is unknown, or someone else's, here, so the pid check
    removed its temporary file while it was being written (its rename then failed). Expected: a
    temporary named with this host's tag and a dead pid is removed; one with another host's tag is
    kept whatever its pid, unless nothing was written in it for a week (FOREIGN_AGE_S); a foreign
    folder counts the files in it as writes."""
    import os
    import time

    from harness.atomic import FOREIGN_AGE_S, remove_abandoned, writer_tag

    dead = _dead_pid()
    host = writer_tag().split("-")[1]
    other = "0badcafe" if host != "0badcafe" else "1badcafe"
    ours = tmp_path / f".corpus.arrow.{dead}-{host}.ab12cd34.tmp"
    live_elsewhere = tmp_path / f".corpus.arrow.{dead}-{other}.ef56gh78.tmp"
    old_elsewhere = tmp_path / f".run.trec.{dead}-{other}.ij90kl12.tmp"
    folder_elsewhere = tmp_path / f".{'k' * 32}.{dead}-{other}.mn34op56.tmp"  # a BM25 staging folder
    for path in (ours, live_elsewhere, old_elsewhere):
        path.write_text("x")
    folder_elsewhere.mkdir()
    (folder_elsewhere / "indices.npy").write_text("x")  # still written: the folder's own mtime is old
    week_ago = time.time() - FOREIGN_AGE_S - 60
    os.utime(old_elsewhere, (week_ago, week_ago))
    os.utime(folder_elsewhere, (week_ago, week_ago))
    remove_abandoned(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live_elsewhere.name, folder_elsewhere.name])
    os.utime(folder_elsewhere / "indices.npy", (week_ago, week_ago))
    remove_abandoned(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [live_elsewhere.name]


@pytest.mark.parametrize("writer", ["atomic_open", "atomic_path", "corpus stream"])
def test_an_interruption_right_after_the_temporary_file_is_created_leaves_nothing(tmp_path, monkeypatch, writer):
    """SIGTERM in a harness command raises SystemExit(143) at the next bytecode: arriving just after the
    temporary file was created, it left the file behind, because ``mkstemp`` created it before the
    writer's ``try`` knew its name (a review saw ``.metrics.json.<tag>.tmp`` left once in 16 SIGTERMs).
    Here the exit is raised right after the ``os.open`` that creates the ``.tmp`` file returns.
    Expected: SystemExit(143) propagates and no file is left in the folder."""
    import os

    from harness.atomic import atomic_open, atomic_path
    from harness.datasets import corpus_cache

    real_open = os.open

    def open_then_terminated(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if str(path).endswith(".tmp"):
            raise SystemExit(143)
        return fd

    monkeypatch.setattr(os, "open", open_then_terminated)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    folder = tmp_path / corpus_cache.KIND if writer == "corpus stream" else tmp_path
    with pytest.raises(SystemExit) as exit_:
        if writer == "atomic_open":
            with atomic_open(tmp_path / "metrics.json") as handle:
                handle.write("{}")
        elif writer == "atomic_path":
            with atomic_path(tmp_path / "corpus.arrow"):
                pass
        else:
            corpus_cache.stream_into_cache(lambda write: True)
    assert exit_.value.code == 143
    assert [p.name for p in folder.iterdir()] == []


def test_a_file_system_that_refuses_locks_writes_unlocked(tmp_path, monkeypatch):
    # Some NFS and FUSE mounts answer flock with ENOLCK / EOPNOTSUPP: every bench cell (written under
    # harness.atomic.file_lock) then failed with that OSError, where the writes went ahead before the lock
    # existed (bench review); another error is still raised.
    import errno
    import fcntl

    from harness.atomic import file_lock

    def refuse(fd, op, code=errno.ENOLCK):
        raise OSError(code, "No locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    ran = []
    with file_lock(tmp_path / "cell" / ".lock"):
        ran.append(True)
    assert ran == [True] and (tmp_path / "cell" / ".lock").exists()
    monkeypatch.setattr(fcntl, "flock", lambda fd, op: refuse(fd, op, errno.EBADF))
    with pytest.raises(OSError):
        with file_lock(tmp_path / "cell" / ".lock"):
            pass
