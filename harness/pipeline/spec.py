"""A pipeline as data: stages (retrieve, fuse, rerank) parsed once from TOML or a dict, validated up front.

::

    name = "bm25-dense-ce"           # optional in a standalone file (default: the file name)

    [[stages]]
    name = "bm25"                    # unique; later stages name it as their input
    type = "retrieve"
    retriever = "bm25"               # registered name or module:Class
    params = { k1 = 0.9, b = 0.4 }   # constructor parameters (optional)
    depth = 1000                     # documents kept per query (default: the run's depth)

    [[stages]]
    name = "rrf"
    type = "fuse"
    inputs = ["bm25", "dense"]       # two or more earlier stages
    method = "rrf"                   # norm, k, weights, depth as harness fuse takes them
    k = 60
    optimize = { qrels = "dev.tsv", metric = "NDCG@10" }   # optional grid search (split: qrels name)

    [[stages]]
    name = "ce"
    type = "rerank"
    input = "rrf"                    # one earlier stage
    reranker = "cross-encoder"
    params = { model = "cross-encoder/ms-marco-MiniLM-L-6-v2" }
    depth = 100

Relative paths (``optimize.qrels``) are taken from the directory the command runs in, as in bench
configs. Every mistake is one :class:`~harness.errors.ConfigError` naming the file and the key path
(``pipe.toml:14: stages[2].inputs[1]: unknown stage "dnse" (earlier stages: bm25, dense)``) before
anything runs. The last stage's run is the pipeline's result.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bench.config import _join, _Reader
from harness.errors import render
from harness.fusion import FusionSpec

STAGE_TYPES = ("retrieve", "fuse", "rerank")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=-]*$")
NAME_RULE = "letters, digits and . _ + = - (starting with a letter or digit)"
_KEYS = {
    "retrieve": ({"name", "type", "retriever"}, {"params", "depth"}),
    "fuse": ({"name", "type", "inputs"}, {"method", "norm", "k", "weights", "depth", "optimize"}),
    "rerank": ({"name", "type", "input", "reranker"}, {"params", "depth"}),
}
OPTIMIZE_KEYS = ({"qrels"}, {"metric", "split", "allow_test_split", "step", "k_grid"})
DEFAULT_RERANK_DEPTH = 100


@dataclass(frozen=True)
class Stage:
    """One stage. ``component`` is the retriever / reranker name (None for fuse); ``depth`` None
    means the run's depth (retrieve) or the fusion default; ``fusion`` is set for fuse stages."""

    name: str
    type: str
    inputs: tuple[str, ...] = ()
    component: str | None = None
    params: dict = field(default_factory=dict)
    depth: int | None = None
    fusion: FusionSpec | None = None
    optimize: dict | None = None
    # whether a rerank stage's depth was given in its table (not the default): a given depth its input cannot
    # hold is refused, a default one is a cap (see harness.pipeline.run.rerank_depths)
    depth_given: bool = field(default=False, compare=False, repr=False)

    def to_dict(self) -> dict:
        """The stage as a ``[[stages]]`` table (defaults filled in): ``parse_pipeline`` reads it back."""
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.type == "fuse":
            out["inputs"] = list(self.inputs)
            out.update({k: v for k, v in self.fusion.to_dict().items() if v is not None})
            if self.optimize is not None:
                out["optimize"] = dict(self.optimize)
            return out
        if self.type == "rerank":
            out["input"] = self.inputs[0]
        out["retriever" if self.type == "retrieve" else "reranker"] = self.component
        out["params"] = dict(self.params)
        if self.depth is not None:
            out["depth"] = self.depth
        return out


@dataclass(frozen=True)
class Pipeline:
    name: str
    stages: tuple[Stage, ...]
    source: str = field(default="<pipeline>", compare=False)

    @property
    def label(self) -> str:
        """The pipeline's column / folder name in a benchmark."""
        return self.name

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    def to_dict(self, name_key: str = "name") -> dict:
        """The pipeline as TOML-shaped data (``name_key="label"`` for a bench config's ``[[pipelines]]``)."""
        return {name_key: self.name, "stages": [s.to_dict() for s in self.stages]}


class _Checker(_Reader):
    """The bench config reader's typed checks, plus the stage-specific ones; ``base`` resolves paths."""

    def __init__(self, source: str, base: Path | None):
        super().__init__(source)
        self.base = base

    def string(self, value: Any, key: str, pattern: re.Pattern | None = None) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"expected a non-empty string, got {render(value)}")
        if pattern is not None and not pattern.match(value):
            raise self.error(key, f"{render(value)} is not allowed here: use {NAME_RULE}")
        return value

    def depth(self, table: dict, key: str) -> int | None:
        if "depth" not in table:
            return None
        value = table["depth"]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**63 - 1:
            # (ranks and counts are int64: a larger depth failed every cell with an OverflowError)
            raise self.error(_join(key, "depth"), f"expected an integer from 1 to 2^63 - 1, got {render(value)}")
        return value

    def params(self, table: dict, key: str) -> dict:
        value = table.get("params", {})
        if not isinstance(value, dict):
            raise self.error(_join(key, "params"), f"expected a table, got {render(value)}")
        return dict(value)

    def stage_ref(self, value: Any, key: str, earlier: list[str]) -> str:
        name = self.string(value, key)
        if name not in earlier:
            known = ", ".join(earlier) if earlier else "none"
            raise self.error(key, f"unknown stage {render(name)} (earlier stages: {known}); "
                                  "a stage's inputs must come before it")
        return name


def _fuse(c: _Checker, table: dict, key: str, earlier: list[str]) -> tuple[tuple[str, ...], FusionSpec, dict | None]:
    names = table["inputs"]
    if not isinstance(names, list) or len(names) < 2:
        raise c.error(_join(key, "inputs"), f"expected a list of two or more stage names, got {render(names)}")
    inputs = tuple(c.stage_ref(v, _join(_join(key, "inputs"), i), earlier) for i, v in enumerate(names))
    if len(set(inputs)) != len(inputs):
        raise c.error(_join(key, "inputs"), "a stage is named twice")
    settings = {name: table[name] for name in ("method", "norm", "k", "weights", "depth") if name in table}
    try:
        spec = FusionSpec.create(**settings)
        spec.weights_for(len(inputs))
    except (ValueError, TypeError) as exc:
        raise c.error(key, str(exc)) from None
    optimize = None
    if "optimize" in table:
        optimize = _optimize(c, table["optimize"], _join(key, "optimize"), spec)
        from harness.fusion.optimize import tuned_parameter

        tuned = tuned_parameter(spec)  # (_optimize checked that there is one)
        if tuned in table:  # (the value given was replaced by the grid's best, silently)
            raise c.error(_join(key, tuned), f"does not apply with optimize, which tunes {spec.method}'s {tuned} "
                                             f"({'k_grid' if tuned == 'k' else 'step'}); give one or the other")
    return inputs, spec, optimize


def _optimize(c: _Checker, value: Any, key: str, spec: FusionSpec) -> dict:
    from harness.fusion.optimize import check_split, single_metric_evaluator, tuned_parameter, weight_grid
    from harness.errors import HarnessError

    table = c.table(value, key, *OPTIMIZE_KEYS)
    qrels = Path(os.path.expanduser(c.string(table["qrels"], _join(key, "qrels"))))
    if not qrels.is_absolute() and c.base is not None:
        qrels = c.base / qrels
    out = {"qrels": str(qrels), "metric": c.string(table.get("metric", "NDCG@10"), _join(key, "metric")),
           "split": c.string(table.get("split", qrels.stem), _join(key, "split")),
           "allow_test_split": table.get("allow_test_split", False)}
    if not isinstance(out["allow_test_split"], bool):
        raise c.error(_join(key, "allow_test_split"), f"expected true or false, got {render(out['allow_test_split'])}")
    for name, kind in (("step", (int, float)), ("k_grid", list)):
        if name in table:
            if not isinstance(table[name], kind) or isinstance(table[name], bool):
                raise c.error(_join(key, name), f"expected {'a number' if name == 'step' else 'a list'}, "
                                                f"got {render(table[name])}")
            out[name] = table[name]
    grid = out.get("k_grid")
    if grid is not None and (not grid or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0
                                                 for k in grid)):
        raise c.error(_join(key, "k_grid"), f"expected a non-empty list of integers >= 0, got {render(grid)}")
    try:
        if "step" in out:
            weight_grid(1, out["step"])  # the step must divide 1 (checked here, not after the first stages ran)
        tuned_parameter(spec)
        single_metric_evaluator(out["metric"])
        for split in dict.fromkeys([out["split"], qrels.stem]):
            check_split(split, out["allow_test_split"])
    except (ValueError, HarnessError) as exc:
        raise c.error(key, str(exc)) from None
    if not qrels.is_file():
        raise c.error(_join(key, "qrels"), f"no such qrels file: {qrels}")
    return out


def _stage(c: _Checker, value: Any, key: str, earlier: list[str], check_components: bool) -> Stage:
    if not isinstance(value, dict):
        raise c.error(key, f"expected a table, got {render(value)}")
    kind = value.get("type")
    if kind not in STAGE_TYPES:
        raise c.error(_join(key, "type"), ("missing required key" if kind is None else
                                           f"unknown stage type {render(kind)}") +
                      f" (expected one of: {', '.join(STAGE_TYPES)})")
    table = c.table(value, key, *_KEYS[kind])
    name = c.string(table["name"], _join(key, "name"), NAME)
    if name in earlier:
        raise c.error(_join(key, "name"), f"duplicate stage name {render(name)}")
    depth = c.depth(table, key)
    if kind == "fuse":
        inputs, spec, optimize = _fuse(c, table, key, earlier)
        return Stage(name, kind, inputs, depth=spec.depth, fusion=spec, optimize=optimize)
    component_key = "retriever" if kind == "retrieve" else "reranker"
    component = c.string(table[component_key], _join(key, component_key))
    params = c.params(table, key)
    inputs = (c.stage_ref(table["input"], _join(key, "input"), earlier),) if kind == "rerank" else ()
    if check_components:
        _check_component(c, kind, component, params, key)
    given = depth is not None
    if kind == "rerank" and depth is None:
        depth = DEFAULT_RERANK_DEPTH
    return Stage(name, kind, inputs, component, params, depth, depth_given=kind == "rerank" and given)


def _check_component(c: _Checker, kind: str, component: str, params: dict, key: str) -> None:
    """Resolve the retriever / reranker class and check ``params`` against its constructor."""
    from harness.params import check_params
    from harness.errors import HarnessError
    from harness.registry import ENTRY_POINT_GROUP, RERANKER_GROUP, component_class

    group = ENTRY_POINT_GROUP if kind == "retrieve" else RERANKER_GROUP
    name = "retriever" if kind == "retrieve" else "reranker"
    try:
        cls = component_class(component, group)
    except HarnessError as exc:
        raise c.error(_join(key, name), str(exc)) from None
    check_params(cls, params, c.source, key, component, name)


def parse_pipeline(data: Any, source: str = "<pipeline>", key: str = "", default_name: str = "pipeline",
                   base: Path | None = None, check_components: bool = True) -> Pipeline:
    """Validate a parsed pipeline table (``name``, ``[[stages]]``) into a :class:`Pipeline`.

    ``key`` prefixes error paths (``pipelines[0]`` in a bench config); ``base`` resolves relative
    qrels paths; ``check_components`` resolves each retriever / reranker and checks its params.
    """
    c = _Checker(source, base)
    table = c.table(data, key, {"stages"}, {"name", "label"})
    if "label" in table and "name" in table:  # (the label named the folder; the name was ignored, silently)
        raise c.error(_join(key, "name"), "give the pipeline's name or its label, not both (they name the "
                                          "same thing: its result folder, its leaderboard column)")
    name_key = "label" if "label" in table else "name"
    name = c.string(table[name_key], _join(key, name_key), NAME) if name_key in table else default_name
    stages_value = table["stages"]
    stages_key = _join(key, "stages")
    if not isinstance(stages_value, list) or not stages_value:
        raise c.error(stages_key, f"expected a non-empty list of [[stages]] tables, got {render(stages_value)}")
    stages: list[Stage] = []
    most: dict[str, int | None] = {}  # the most documents per query each stage can hold (None: the run's depth)
    for i, value in enumerate(stages_value):
        stage = _stage(c, value, _join(stages_key, i), [s.name for s in stages], check_components)
        held = most.get(stage.inputs[0]) if stage.type == "rerank" else None
        if stage.type == "rerank" and stage.depth_given and held is not None and stage.depth > held:
            # (it reranked the input's documents only, while its record said depth = stage.depth)
            raise c.error(_join(_join(stages_key, i), "depth"),
                          f"{stage.depth} candidates per query, but its input {stage.inputs[0]!r} holds at most "
                          f"{held}; give that stage a larger depth, or this one {held} or less")
        most[stage.name] = _most_held(stage, most)
        stages.append(stage)
    return Pipeline(name=name, stages=tuple(stages), source=source)


def _most_held(stage: Stage, most: dict[str, int | None]) -> int | None:
    """The most documents per query ``stage`` can hold as far as the file says (None: a retrieve stage
    keeping the run's depth): a retrieve stage's ``depth``, a rerank's, a fuse's ``min(depth, the sum of
    its inputs')`` (its depth when an input's is the run's); as :func:`harness.pipeline.run.kept_depth`."""
    if stage.type == "retrieve":
        return stage.depth
    if stage.type == "rerank":
        return stage.depth if most[stage.inputs[0]] is None else min(stage.depth, most[stage.inputs[0]])
    held = [most[name] for name in stage.inputs]
    return stage.fusion.depth if None in held else min(stage.fusion.depth, sum(held))


def load_pipeline(path: str | Path, check_components: bool = True) -> Pipeline:
    """Read and validate a standalone pipeline file (its name defaults to the file's stem; relative
    paths in it are taken from the current directory)."""
    from harness.bench.config import read_toml, safe_label

    path = Path(path)
    return parse_pipeline(read_toml(path), str(path), default_name=safe_label(path.stem),
                          check_components=check_components)
