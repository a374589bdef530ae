"""FusionSpec: one fusion stage as data (method, normalisation, k, weights, depth), parsed once.

The spec is what a pipeline stores and replays: ``FusionSpec.from_dict(spec.to_dict()) == spec``.
Names follow the issue (``rrf``, ``combsum``, ...); ranx's names (``sum``, ``mnz``, ``min-max``,
``zmuv`` ...) are accepted as aliases and stored under the canonical name.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

METHODS = ("rrf", "combsum", "combmnz", "combmax", "combmin", "wsum")
NORMS = ("none", "min-max", "max", "sum", "zmuv", "rank")

INT64_MAX = 2**63 - 1  # ranks, counts and depths are int64

# Methods whose value is a weighted combination (``weights`` meaningful); the others refuse weights.
WEIGHTED = ("rrf", "wsum")

_METHOD_ALIASES = {"sum": "combsum", "mnz": "combmnz", "max": "combmax", "min": "combmin",
                   "comb_sum": "combsum", "comb_mnz": "combmnz", "comb_max": "combmax", "comb_min": "combmin",
                   "weighted_sum": "wsum"}
_NORM_ALIASES = {"minmax": "min-max", "min_max": "min-max", "z-score": "zmuv", "zscore": "zmuv", "z_score": "zmuv"}

DEFAULT_K = 60
DEFAULT_DEPTH = 1000


def method_name(name: str) -> str:
    """The canonical method name of ``name`` (or one of its aliases); ValueError when unknown."""
    key = str(name).strip().lower()
    key = _METHOD_ALIASES.get(key, key)
    if key not in METHODS:
        raise ValueError(f"unknown fusion method {name!r}; choose one of {', '.join(METHODS)}")
    return key


def norm_name(name: str | None) -> str:
    """The canonical normalisation name (``None`` means ``none``); ValueError when unknown."""
    key = "none" if name is None else str(name).strip().lower()
    key = _NORM_ALIASES.get(key, key)
    if key not in NORMS:
        raise ValueError(f"unknown score normalisation {name!r}; choose one of {', '.join(NORMS)}")
    return key


def default_norm(method: str) -> str:
    """RRF uses ranks only (``none``); score-based methods default to ``min-max``, as ranx's ``fuse``."""
    return "none" if method_name(method) == "rrf" else "min-max"


def ignored_norm(spec: FusionSpec) -> str | None:
    """Why ``spec``'s normalisation changes nothing (to follow its name, e.g. ``--norm min-max``), or None
    when it is used: RRF reads each run's ranks only (``1 / (k + rank)``), and every normalisation keeps a
    run's order. ranx's ``fuse`` takes a norm with RRF the same way (it normalises, then RRF reads the
    order), so this is a warning, not an error; the fused run is RRF's without it."""
    if spec.method != "rrf" or spec.norm == "none":
        return None
    return ("has no effect with rrf, which uses each run's ranks only (every normalisation keeps a run's "
            "order); the fused run is rrf's without it")


@dataclass(frozen=True)
class FusionSpec:
    """A fusion stage. Build with :meth:`create` (validates and fills defaults) or :meth:`from_dict`.

    * ``method``: one of :data:`METHODS`.
    * ``norm``: one of :data:`NORMS`, applied to each input run per query before combining.
    * ``k``: RRF's rank constant (integer >= 0; only RRF uses it, stored as ``None`` otherwise).
    * ``weights``: one weight per input run for ``rrf`` and ``wsum`` (``None``: all 1 for rrf,
      all ``1/n`` for wsum); refused for the other methods.
    * ``depth``: documents kept per query in the fused run.
    """

    method: str = "rrf"
    norm: str = "none"
    k: int | None = DEFAULT_K
    weights: tuple[float, ...] | None = None
    depth: int = DEFAULT_DEPTH

    @classmethod
    def create(cls, method: str = "rrf", norm: str | None = None, k: int | None = None,
               weights: Sequence[float] | None = None, depth: int = DEFAULT_DEPTH) -> "FusionSpec":
        method = method_name(method)
        norm = default_norm(method) if norm is None else norm_name(norm)
        if method == "rrf":
            k = DEFAULT_K if k is None else k
            if (isinstance(k, bool) or not isinstance(k, numbers.Real) or not math.isfinite(k)  # (numpy's too)
                    or not float(k).is_integer() or not 0 <= k <= INT64_MAX):
                raise ValueError(f"RRF k must be an integer >= 0 (at most 2^63 - 1), got {k!r}")
            k = int(k)
        elif k is not None:
            raise ValueError(f"k applies to rrf only, not to {method}")
        else:
            k = None
        if weights is not None:
            if method not in WEIGHTED:
                raise ValueError(f"weights apply to {' and '.join(WEIGHTED)} only, not to {method}")
            if isinstance(weights, (str, bytes)) or not isinstance(weights, Iterable):
                # (a str is iterable: "37" was read as the weights 3 and 7, "0.5,0.5" failed on "." in float())
                raise ValueError(f"weights must be a list of numbers, one per run, got {weights!r}")
            weights = tuple(w if isinstance(w, (str, bytes)) else float(w) for w in weights)
            if any(isinstance(w, (str, bytes)) for w in weights):
                raise ValueError(f"weights must be numbers, got {list(weights)}")
            if not weights or not all(math.isfinite(w) and w >= 0 for w in weights):
                raise ValueError(f"weights must be finite numbers >= 0, got {list(weights)}")
            if not any(weights):  # every fused score 0: the ranking would be the document ids' order
                raise ValueError(f"weights must not all be 0, got {list(weights)}")
        if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or not 1 <= depth <= INT64_MAX:
            raise ValueError(f"depth must be an integer >= 1 (at most 2^63 - 1), got {depth!r}")
        depth = int(depth)  # (numpy's integers, as the evaluator and run_experiment take them: an int in to_dict)
        return cls(method=method, norm=norm, k=k, weights=weights, depth=depth)

    def weights_for(self, n_runs: int) -> tuple[float, ...]:
        """The weight of each of ``n_runs`` runs (the defaults filled in); ValueError on a count mismatch."""
        if self.weights is None:
            return (1.0 / n_runs if self.method == "wsum" else 1.0,) * n_runs
        if len(self.weights) != n_runs:
            raise ValueError(f"{len(self.weights)} weights given for {n_runs} runs; give one weight per run")
        return self.weights

    def replace(self, **changes) -> "FusionSpec":
        """A validated copy with some fields changed (e.g. the k or weights an optimisation chose)."""
        return FusionSpec.create(**{**self.to_dict(), **changes})

    def to_dict(self) -> dict:
        return {"method": self.method, "norm": self.norm, "k": self.k,
                "weights": None if self.weights is None else list(self.weights), "depth": self.depth}

    @classmethod
    def from_dict(cls, data: Mapping) -> "FusionSpec":
        unknown = set(data) - {"method", "norm", "k", "weights", "depth"}
        if unknown:
            raise ValueError(f"unknown fusion setting(s): {', '.join(sorted(unknown))}")
        return cls.create(**dict(data))
