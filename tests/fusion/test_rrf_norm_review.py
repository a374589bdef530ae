"""``harness fuse --method rrf --norm ...`` and a pipeline rrf stage with ``norm`` said nothing while the
normalisation changed nothing: RRF reads each run's ranks only (``w_r / (k + rank_r(d))``), and every
normalisation keeps a run's order. ranx's ``fuse(runs, norm="min-max", method="rrf")`` takes the norm the
same way (it normalises, then RRF reads the order; ``norm="min-max"`` is even its default), so the
harness warns (one line on stderr) rather than refuses, and the fused run is RRF's without it.

Worked example: run a ranks d1, d2, d3; run b ranks d2, d3. With k = 60 the fused scores are
d2 = 1/62 + 1/61, d3 = 1/63 + 1/62, d1 = 1/61, for every ``--norm``.
"""

from __future__ import annotations

import pytest

from harness.formats.trec import read_run, write_run
from harness.fusion import FusionSpec
from harness.fusion.spec import NORMS
from harness.run import Run

A = Run.from_dict({"q": {"d1": 3.0, "d2": 2.0, "d3": -1.0}})
B = Run.from_dict({"q": {"d2": 10.0, "d3": 10.0 - 1e-6}})
EXPECTED = {"q": {"d2": 1 / 62 + 1 / 61, "d3": 1 / 63 + 1 / 62, "d1": 1 / 61}}


def test_ignored_norm_names_rrf_with_a_normalisation_only():
    from harness.fusion.spec import ignored_norm

    assert ignored_norm(FusionSpec.create("rrf")) is None  # default: none
    assert ignored_norm(FusionSpec.create("rrf", norm="none")) is None
    for norm in NORMS[1:]:
        assert "has no effect with rrf" in ignored_norm(FusionSpec.create("rrf", norm=norm))
        assert ignored_norm(FusionSpec.create("combsum", norm=norm)) is None
        assert ignored_norm(FusionSpec.create("wsum", norm=norm)) is None


@pytest.fixture()
def runs(tmp_path):
    paths = [tmp_path / "a.trec", tmp_path / "b.trec"]
    for run, path in zip((A, B), paths):
        write_run(run, path)
    return paths


@pytest.mark.parametrize("norm", ["min-max", "zmuv", "rank"])
def test_cli_rrf_with_norm_warns_and_fuses_as_without(tmp_path, runs, harness_cli, norm):
    out = tmp_path / f"{norm}.trec"
    result = harness_cli("fuse", "--method", "rrf", "--norm", norm, "--run", runs[0], "--run", runs[1], "-o", out)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"warning: --norm {norm} has no effect with rrf, which uses each run's ranks only (every "
                     "normalisation keeps a run's order); the fused run is rrf's without it"]  # before: nothing
    assert read_run(out).to_dict() == EXPECTED


def test_cli_rrf_without_norm_and_combsum_with_norm_do_not_warn(tmp_path, runs, harness_cli):
    for extra in (["--method", "rrf"], ["--method", "rrf", "--norm", "none"],
                  ["--method", "combsum", "--norm", "zmuv"]):
        result = harness_cli("fuse", *extra, "--run", runs[0], "--run", runs[1], "-o", tmp_path / "f.trec")
        assert result.returncode == 0 and "warning" not in result.stderr, (extra, result.stderr)
    assert read_run(tmp_path / "f.trec").n_queries == 1
