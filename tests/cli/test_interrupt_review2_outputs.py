"""The temporary file a killed ``-o`` write leaves beside its output is removed by the next command
writing that output (harness.cli.options.check_outputs), instead of piling up one per kill.

Worked example: a child process SIGKILLs itself inside ``atomic_open(out)`` (its temporary
``.fused.trec.<pid>-<host>.<random>.tmp`` stays: no cleanup runs on SIGKILL); ``harness fuse -o
out`` then leaves exactly ``out`` (and its inputs) in the folder; a live writer's temporary file,
and another output's, are kept."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from harness.atomic import temporary_path
from harness.cli.options import check_outputs
from tests.cli.test_cli import harness

KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    from harness.atomic import atomic_open
    with atomic_open(sys.argv[1]) as handle:
        handle.write("q1 Q0 d1 1 1.0 half-written\\n")
        handle.flush()
        os.kill(os.getpid(), signal.SIGKILL)
""")


def kill_a_writer_of(path) -> None:
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(path)], capture_output=True)
    assert proc.returncode == -9


def temporaries(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_fuse_removes_the_temporary_files_of_killed_writes_of_its_output(tmp_path):
    for name, lines in (("a.trec", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n"), ("b.trec", "q1 Q0 d2 1 3.0 b\n")):
        (tmp_path / name).write_text(lines)
    out = tmp_path / "fused.trec"
    for _ in range(2):
        kill_a_writer_of(out)
    assert len(temporaries(tmp_path)) == 2  # what SIGKILL leaves (before the fix, every later fuse kept them)
    proc = harness("fuse", "--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "b.trec"), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert temporaries(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.trec", "b.trec", "fused.trec"]


def test_only_abandoned_temporaries_of_the_outputs_are_removed(tmp_path):
    out, other = tmp_path / "report.html", tmp_path / "other.json"
    kill_a_writer_of(out)
    kill_a_writer_of(other)
    live = temporary_path(out)  # this process's: a write under way
    live.write_text("")
    check_outputs(out, None)
    assert temporaries(tmp_path) == sorted([live.name, *(n for n in temporaries(tmp_path) if n.startswith(".other"))])
    assert any(n.startswith(".other.json.") for n in temporaries(tmp_path))


def test_bench_removes_the_temporary_files_of_a_killed_benchmarks_own_outputs(tmp_path):
    """A benchmark killed while writing leaderboard.json (or report.html, bench.json) left its
    temporary file in results/<name>/ for good: the cells' folders are cleaned by their writer, the
    benchmark's folder by nothing. Expected: the next `harness bench` leaves none there."""
    from tests.bench.bench_helpers import write_tiny

    tiny = write_tiny(tmp_path / "tiny")
    (tmp_path / "mine.trec").write_text("q2 Q0 d4 1 1.0 s\n")
    config = tmp_path / "bench.toml"
    config.write_text(f'name = "t"\nk = [1]\nmetrics = ["P@1"]\noutput_dir = "{tmp_path / "results"}"\n'
                      f'datasets = [{{path = "{tiny}", label = "tiny"}}]\n'
                      f'[[retrievers]]\ntype = "run-file"\nlabel = "mine"\nparams = {{path = "{tmp_path / "mine.trec"}"}}\n')
    folder = tmp_path / "results" / "t"
    folder.mkdir(parents=True)
    kill_a_writer_of(folder / "leaderboard.json")
    kill_a_writer_of(folder / "report.html")
    assert len(temporaries(folder)) == 2
    proc = harness("bench", str(config), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert temporaries(folder) == []
    assert (folder / "leaderboard.json").is_file()


KILLED_AT_JSON = textwrap.dedent("""
    import os, signal, sys
    import harness.atomic as atomic
    real = atomic.write_json
    def write_json(path, obj):
        os.kill(os.getpid(), signal.SIGKILL)
    atomic.write_json = write_json
    from harness.cli import main
    sys.argv = ["harness", *sys.argv[1:]]
    main()
""")


def test_a_fuse_killed_before_its_json_leaves_no_earlier_settings_beside_its_run(tmp_path):
    """`harness fuse --json` writes the fused run, then its settings. Killed (SIGKILL) between the
    two, the new run (RRF k=5) lay beside the earlier fusion's settings (k=60), which describe
    another run. Expected: no settings file then (and a refused --tag keeps the earlier pair)."""
    for name, lines in (("a.trec", "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\n"), ("b.trec", "q1 Q0 d2 1 3.0 b\n")):
        (tmp_path / name).write_text(lines)
    out, settings = tmp_path / "fused.trec", tmp_path / "fused.json"
    runs = ["--run", str(tmp_path / "a.trec"), "--run", str(tmp_path / "b.trec")]
    proc = harness("fuse", *runs, "--k", "60", "-o", str(out), "--json", str(settings))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(settings.read_text())["fusion"]["k"] == 60
    refused = harness("fuse", *runs, "--k", "5", "--tag", "a b", "-o", str(out), "--json", str(settings))
    assert refused.returncode == 2 and json.loads(settings.read_text())["fusion"]["k"] == 60
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_JSON, "fuse", *runs, "--k", "5", "-o", str(out),
                             "--json", str(settings)], capture_output=True, text=True)
    assert killed.returncode == -9
    assert out.read_text().splitlines()[0].split()[2:5] == ["d2", "1", repr(1 / 6 + 1 / 7)]  # RRF k=5: 1/(5+1) + 1/(5+2)
    assert not settings.exists()  # (was the k=60 settings beside the k=5 run)
