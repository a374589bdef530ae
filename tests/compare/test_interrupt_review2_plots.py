"""A ``harness compare --plots`` killed (SIGKILL) while writing a plot left its temporary
``.<plot>.png.<pid>-<host>.<random>.tmp`` beside the JSON for good (the JSON and Markdown outputs'
are removed by the next command, harness.cli.options.check_outputs; the plots' by nothing).
Expected: the next ``compare --plots`` writing that plot leaves only the plots and the JSON."""

from __future__ import annotations


from tests.cli.test_interrupt_review2_outputs import kill_a_writer_of, temporaries
from tests.cli.test_cli import harness

from .helpers import values, write_result


def test_compare_removes_a_killed_plot_writes_temporary_file(tmp_path):
    a = write_result(tmp_path / "a", values("NDCG@10", [1.0, 0.5, 0.0, 0.25]))
    b = write_result(tmp_path / "b", values("NDCG@10", [0.5, 0.5, 0.25, 0.0]))
    out = tmp_path / "out"
    out.mkdir()
    plot = out / "cmp_diff_NDCG_10_b_vs_a.png"
    kill_a_writer_of(plot)
    assert len(temporaries(out)) == 1
    proc = harness("compare", str(a), str(b), "--metric", "NDCG@10", "--json", str(out / "cmp.json"), "--plots")
    assert proc.returncode == 0, proc.stderr
    assert plot.is_file()
    assert temporaries(out) == []
