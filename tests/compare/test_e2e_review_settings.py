"""`harness compare` of a result against a TREC run evaluated on the spot (end-to-end review).

A run file given to ``harness compare`` with ``--qrels`` is scored by the default evaluator
(relevance threshold 1, identical ids dropped). When the other result was evaluated with other
settings (``harness evaluate --keep-identical-ids``), its values differ for that reason alone, and the
compare must say so, as it does for two metrics files (docs/compare.md: different evaluation settings
produce a warning).
"""

from __future__ import annotations

QRELS = "q1\tq1\t1\nq1\td1\t1\nq2\td1\t1\n"
# q1 retrieves the document "q1" (its own id) first: kept under --keep-identical-ids, dropped by default.
RUN = "q1 Q0 q1 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d2 3 1.0 t\nq2 Q0 d2 1 2.0 t\nq2 Q0 d1 2 1.0 t\n"


def _result(harness_cli, tmp_path, name, *options):
    (tmp_path / "qrels.tsv").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    (tmp_path / name).mkdir()
    done = harness_cli("evaluate", "--qrels", tmp_path / "qrels.tsv", "--run", tmp_path / "run.trec", "--k", "1",
                       *options, "--json", tmp_path / name / "metrics.json")
    assert done.returncode == 0, done.stderr
    return tmp_path / name


def test_run_file_against_metrics_with_other_settings_warns(harness_cli, tmp_path):
    kept = _result(harness_cli, tmp_path, "kept", "--keep-identical-ids")
    compared = harness_cli("compare", kept, tmp_path / "run.trec", "--qrels", tmp_path / "qrels.tsv", "-m", "Recall@1")
    assert compared.returncode == 0, compared.stderr
    # Recall@1 of q1: 1/2 with its own id kept at rank 1 (q1 judged relevant), 1/2 with d1 first: the means
    # agree here, the settings do not; before the fix no warning was printed (only metrics files were checked).
    assert "warning: run and kept differ in evaluation settings: ignore_identical_ids False vs True" \
        in compared.stderr.splitlines()


def test_run_file_against_metrics_with_same_settings_is_quiet(harness_cli, tmp_path):
    default = _result(harness_cli, tmp_path, "default")
    compared = harness_cli("compare", default, tmp_path / "run.trec", "--qrels", tmp_path / "qrels.tsv",
                           "-m", "Recall@1")
    assert compared.returncode == 0, compared.stderr
    assert "differ in evaluation settings" not in compared.stderr
