"""Fusion of runs (RRF, CombSUM, CombMNZ, CombMAX, CombMIN, weighted sum) with ranx's score
normalisations, and grid-search optimisation of weights / RRF's k on training or dev qrels.

    from harness.fusion import fuse, optimize, FusionSpec
    fused = fuse([bm25_run, dense_run], method="rrf", k=60, depth=1000)
    best = optimize([bm25_run, dense_run], dev_qrels, FusionSpec.create("wsum"), "NDCG@10", split="dev")
    best.spec, best.score   # the chosen weights (as a FusionSpec) and their NDCG@10
"""

from harness.fusion.fuse import align, fuse, fuse_runs
from harness.fusion.optimize import Optimization, optimize
from harness.fusion.spec import DEFAULT_DEPTH, DEFAULT_K, METHODS, NORMS, FusionSpec

__all__ = ["fuse", "fuse_runs", "align", "optimize", "Optimization", "FusionSpec", "METHODS", "NORMS", "DEFAULT_K",
           "DEFAULT_DEPTH"]
