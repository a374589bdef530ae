"""How users spell cutoffs and metric names on the command line: every spelling is either read as what
it says or refused with one line (exit 2), never read as something else.

Defects these tests pin (each failed before its fix):
- ``--k "1 3"`` was read as the single cutoff 13 (blanks were deleted before splitting on commas), and
  ``--k "1,3 5"`` as 1 and 35; ``--k 1_0`` was 10 and ``--k ５`` 5 (Python's ``int`` grammar).
- a cutoff of 4,300+ digits (``--k``, ``-m P@111...``) ended in Python's int-conversion message instead
  of the usual "at most 2^63 - 1" line.
- ``NDCG_exp`` without a cutoff in a bench config suggested ``NDCG@10`` (another measure: linear gain).
"""

from __future__ import annotations

import re
import sys

import pytest

from harness.cli.options import parse_k
from harness.errors import HarnessError


@pytest.mark.parametrize("text, expected", [
    ("1,3,5", [1, 3, 5]),
    (" 10 , 1 ", [1, 10]),      # blanks around a value
    ("1,,3,", [1, 3]),          # empty items
    ("3,1,3", [1, 3]),          # duplicates
    ("0010", [10]),             # leading zeros
    (None, [1, 3, 5, 10, 100, 1000]),
])
def test_k_accepted(text, expected):
    assert parse_k(text) == expected


@pytest.mark.parametrize("text, message", [
    ("1 3", "--k takes comma-separated integers"),      # was [13]
    ("1,3 5", "--k takes comma-separated integers"),    # was [1, 35]
    ("1_0", "--k takes comma-separated integers"),      # was [10]
    ("\uff15", "--k takes comma-separated integers"),   # fullwidth 5, was [5]
    ("+5", "--k takes comma-separated integers"),
    ("1.5", "--k takes comma-separated integers"),
    ("1e3", "--k takes comma-separated integers"),
    (" ", "--k takes comma-separated integers"),
    ("", "--k takes comma-separated integers"),         # was the default cutoffs, as if --k were not given
    (",", "--k takes comma-separated integers"),
    ("0", "--k values must be >= 1"),
    ("-1", "--k values must be >= 1"),
    ("1" * 5000, "--k values must be at most 2^63 - 1"),  # was int()'s 4,300-digit message
    ("-" + "1" * 5000, "--k values must be >= 1"),
])
def test_k_refused(text, message):
    with pytest.raises(HarnessError, match=re.escape(message)):
        parse_k(text)


def test_k_long_zero_padding_is_its_value():
    assert parse_k("0" * 5000 + "7") == [7]


@pytest.mark.parametrize("text, message", [
    ("NDCG_exp", "NDCG_exp needs a cutoff k >= 1, e.g. NDCG_exp@10"),  # was "e.g. NDCG@10"
    ("DCG_jarvelin@0", "DCG_jarvelin needs a cutoff k >= 1, e.g. DCG_jarvelin@10"),
    ("P(rel=2)@5", "metric parameters are not supported"),  # ir_measures syntax: refused, names the threshold
    ("P@" + "1" * 5000, "P cutoff 11111111111111111111... is too large"),  # was int()'s message
    ("P@\uff15", "cannot parse metric name"),  # fullwidth 5 (was P@5)
    ("NDCG@1\u0660", "cannot parse metric name"),  # Arabic-Indic 0 (was NDCG@10)
])
def test_metric_names_refused_with_a_clear_message(text, message):
    from harness.evaluation import parse_metric

    with pytest.raises(ValueError, match=re.escape(message)):
        parse_metric(text)


def test_metric_name_with_zero_padded_long_cutoff():
    from harness.evaluation import parse_metric

    assert parse_metric("P@" + "0" * 5000 + "5").name == "P@5"


def test_bench_config_names_the_variant_it_needs():
    import tomllib

    from harness.bench.config import ConfigError, parse_config

    text = 'name = "x"\ndatasets = ["scifact"]\nretrievers = [{type = "bm25"}]\nmetrics = ["NDCG_exp"]\n'
    with pytest.raises(ConfigError, match=re.escape("metrics[0]: NDCG_exp needs a cutoff k >= 1, e.g. NDCG_exp@10")):
        parse_config(tomllib.loads(text))


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    return qrels, run


def _harness(monkeypatch, capsys, *args) -> tuple[int, str]:
    """``harness ARGS`` in this process (main's error handling included): (exit code, stderr)."""
    from harness.cli import main

    monkeypatch.setattr(sys, "argv", ["harness", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    return exit_info.value.code, capsys.readouterr().err


@pytest.mark.parametrize("option, line", [
    (["--k", "1 3"], "error: --k takes comma-separated integers, e.g. 1,3,5,10; got '1 3'"),
    (["-m", "P(rel=2)@5"], "error: --metric: cannot parse metric name 'P(rel=2)@5': metric parameters are not "
                           "supported; binary metrics take their relevance level from the relevance threshold "
                           "(--relevance-threshold; relevance_threshold in a bench config)"),
    (["-m", "P.5,10"], "error: --metric: '10' is not a metric name (trec_eval's P.5,10 is written P@5,P@10 here, "
                       "or -m P with --k 5,10)"),  # trec_eval's cutoff list, split at the comma
    (["-m", "Rprec_mult.0.2,0.4"], "error: --metric: '0.4' is not a metric name (trec_eval's Rprec_mult.0.2,0.4 "
                                   "is written Rprec_mult_0.20,Rprec_mult_0.40 here)"),  # its levels, split alike
    (["--relevance-threshold", "nan"], "error: relevance threshold must be a positive number, got nan"),
    (["--relevance-threshold", "inf"], "error: relevance threshold must be a positive number, got inf"),
    (["--relevance-threshold", "0"], "error: relevance threshold must be a positive number, got 0.0"),
])
def test_evaluate_refuses_with_one_line(files, monkeypatch, capsys, option, line):
    qrels, run = files
    code, err = _harness(monkeypatch, capsys, "evaluate", "--qrels", str(qrels), "--run", str(run), *option)
    assert code == 2
    assert err.strip().splitlines() == [line]
