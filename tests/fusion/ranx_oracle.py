"""Run ranx (the test oracle) on a JSON job from stdin; print its answers as JSON on stdout.

Started by the parity tests in a subprocess with ``NUMBA_DISABLE_JIT=1``: ranx's numba kernels
then run as plain Python, which answers these small jobs in well under a second instead of spending
minutes compiling them (and leaves the test process free of numba). The only numeric difference of
that mode: ``np.mean`` / ``np.std`` (zmuv) sum pairwise in numpy and sequentially in numba.

Job: ``{"fuse": [{"id", "runs", "norm", "method", "params"}],
        "optimize": [{"id", "runs", "qrels", "norm", "method", "metric", "grid", "trec_ties"}]}``
(``runs``: BEIR-style dicts; ``grid``: the parameter dicts to score one by one; ``trec_ties``: score
each grid run after ordering its equal scores by document id descending, the evaluator's rule, instead
of ranx's sort order).
Answer: ``{"fuse": {id: run dict}, "optimize": {id: {"best": params, "scores": [score per grid entry]}}}``.
"""

from __future__ import annotations

import json
import sys

from ranx import Qrels, Run, evaluate, fuse, optimize_fusion


def main() -> None:
    job = json.load(sys.stdin)
    answer: dict = {"fuse": {}, "optimize": {}}
    for item in job.get("fuse", []):
        runs = [Run(run) for run in item["runs"]]
        fused = fuse(runs, norm=item["norm"], method=item["method"], params=item.get("params") or {})
        answer["fuse"][item["id"]] = {q: dict(docs) for q, docs in fused.to_dict().items()}
    for item in job.get("optimize", []):
        runs = [Run(run) for run in item["runs"]]
        qrels = Qrels(item["qrels"])
        best = optimize_fusion(qrels, runs, norm=item["norm"], method=item["method"], metric=item["metric"],
                               show_progress=False)
        fused = [fuse(runs, norm=item["norm"], method=item["method"], params=params) for params in item["grid"]]
        if item.get("trec_ties"):  # re-rank equal fused scores by document id descending (trec_eval's rule)
            fused = [Run({q: {d: float(len(docs) - i) for i, (d, _) in enumerate(
                sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True))} for q, docs in run.to_dict().items()})
                for run in fused]
        scores = [float(evaluate(qrels, run, item["metric"])) for run in fused]
        best = {key: list(value) if isinstance(value, tuple) else value for key, value in best.items()}
        answer["optimize"][item["id"]] = {"best": best, "scores": scores}
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
