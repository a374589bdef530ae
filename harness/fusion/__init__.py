"""Fusion of runs (RRF, CombSUM, CombMNZ, CombMAX, CombMIN, weighted sum) with ranx's score
normalisations, and grid-search optimisation of weights / RRF's k on training or dev qrels.

    from harness.fusion import fuse, FusionSpec
    fused = fuse([bm25_run, dense_run], method="rrf", k=60, depth=1000)
"""

from harness.fusion.fuse import align, fuse, fuse_runs
from harness.fusion.spec import DEFAULT_DEPTH, DEFAULT_K, METHODS, NORMS, FusionSpec

__all__ = ["fuse", "fuse_runs", "align", "FusionSpec", "METHODS", "NORMS", "DEFAULT_K", "DEFAULT_DEPTH"]
