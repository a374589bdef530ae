"""Run a pipeline on a loaded dataset: each stage in order, cached, evaluated; the last stage is the result.

For each stage: compute its cache key (see :mod:`harness.pipeline.cache`); on a hit load its run,
otherwise compute it (retrieve: index + search; fuse: optionally optimise, then fuse; rerank:
rescore the input's top ``depth``) under a progress bar and store it at once. Every stage's run is
evaluated with the experiment's evaluator. A stage that raises stops the pipeline with a
:class:`StageError` naming it; the stages finished before it are already cached, so a rerun
resumes from them.

The result folder is the one ``harness run`` writes (run.trec = the last stage's run, under an
ir_metadata header of the stages: :func:`harness.reports.efficiency.pipeline_header_facts`), and
metrics.json's ``stages`` holds one record per stage: name, type, inputs, component and params,
depth, fusion settings (with the optimisation's chosen values), cache status (``hit``/``miss``; ``miss, not cached (why)`` on a read-only or full cache disk)
and key, timings and metric means.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from harness import progress
from harness import versions as library_versions
from harness.datasets import Dataset
from harness.errors import HarnessError
from harness.evaluation import EvaluationResult, Evaluator, default_depth, depth_warning
from harness.experiment import Experiment, check_cutoffs_and_depth, check_run_file_ids, dataset_info, search_run
from harness.pipeline.cache import StageCache, stage_key
from harness.reports.document import plain_json
from harness.pipeline.spec import Pipeline, Stage
from harness.reports import MetricsDocument, write_result_folder
from harness.run import Run
from harness.secrets import without_secrets


class StageError(HarnessError):
    """A stage failed; the stages before it are cached."""

    def __init__(self, stage: Stage, exc: BaseException, finished: list[str]):
        self.stage, self.finished = stage, finished
        lines = str(exc).strip().splitlines()  # one line: the first of a multi-line message (a model's, a plugin's)
        reason = lines[0] if lines else ""
        reason = reason if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {reason}"
        cached = ", ".join(finished) if finished else "none"
        super().__init__(f"pipeline stage {stage.name!r} ({stage.type}) failed: {reason} "
                         f"(finished stages cached: {cached})")


@dataclass
class StageOutcome:
    stage: Stage
    key: str
    status: str  # "hit", "miss", or "miss, not cached (why)" when the stage cache could not be written
    run: Run
    result: EvaluationResult
    timings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)  # resolved params, stats, optimisation
    depth: int | None = None  # a retrieve stage's depth: its own, else the run's (its table then has none)

    @property
    def spent_s(self) -> float:
        """Seconds this run spent on the stage before evaluating it: its cache key (``key_s``: hashing a
        model folder or a run file that ``params()`` names) and, for a cache hit, the load only (its other
        timings are those of the run that computed it, kept in its record)."""
        return sum(v for k, v in self.timings.items()
                   if k != "evaluate_s" and (self.status != "hit" or k in ("cache_load_s", "key_s")))

    def record(self) -> dict:
        """The stage's entry in metrics.json ``stages``."""
        # (a retrieve stage without a depth of its own kept the run's: recorded, as its key holds it)
        depth = {"depth": self.depth} if self.depth is not None and self.stage.depth is None else {}
        return {**without_secrets(self.stage.to_dict()), **depth, "inputs": list(self.stage.inputs), **self.info,
                "cache": self.status, "key": self.key,
                "timings": {k: round(v, 6) for k, v in self.timings.items()}, "n_queries": self.result.n_queries,
                "metrics": self.result.means}


def _dataset_identity(dataset: Dataset) -> dict:
    # (Dataset.identity: the content's checksums, so a stage is reused whether the corpus is read gzipped or not;
    # a plain file's content checksum is its file's: the keys of plain datasets are unchanged; a dataset built in
    # Python has no files: the digest of its data; a loaded one whose corpus or queries were replaced: theirs too)
    return {"name": dataset.name, "split": dataset.split, "files": dataset.current_identity()}


class PipelineRunner:
    def __init__(self, pipeline: Pipeline, dataset: Dataset, evaluator: Evaluator, depth: int,
                 cache: StageCache | None = None, components: dict | None = None):
        self.pipeline, self.dataset, self.evaluator, self.depth = pipeline, dataset, evaluator, depth
        self.cache = cache or StageCache()
        check_given_components(pipeline, components)
        self.components = dict(components) if components is not None else None  # {stage name: retriever / reranker}
        self.made: list = []  # the components of the stages not given, made by run() before any stage runs
        self._classes: dict[str, str | None] = {}  # {stage name: given_class()}
        self._dataset: dict | None = None  # (_dataset_identity, once)
        self.outcomes: dict[str, StageOutcome] = {}
        self.uncached: set[str] = set()  # stages whose run could not be stored (a read-only or full cache disk)

    def component(self, stage: Stage):
        if self.components is not None and stage.name in self.components:
            return self.components[stage.name]
        system = _create(stage)  # (run_stage called without run(): made as run() would have)
        self.made.append(system)
        return system

    def given_class(self, stage: Stage, system) -> str | None:
        """:func:`given_class`, once per stage (a registry lookup)."""
        if stage.name not in self._classes:
            self._classes[stage.name] = given_class(stage, system)
        return self._classes[stage.name]

    def key_blob(self, stage: Stage, system) -> dict:
        if self._dataset is None:  # (once: a dataset built in Python is hashed whole)
            self._dataset = _dataset_identity(self.dataset)
        blob = {"type": stage.type, "inputs": [self.outcomes[name].key for name in stage.inputs],
                "dataset": self._dataset,
                "ignore_identical_ids": self.evaluator.ignore_identical_ids,
                "semantics": self.evaluator.semantics.name}  # (the order a depth cut keeps: see top_depth)
        if system is not None:
            blob.update(component=stage.component, params=stage.params, resolved=system.params(),
                        depth=stage.depth or self.depth)
            from harness.plugin_code import plugin_code
            from harness.registry import plugin_versions

            # a plugin's release and code (not in its params): an upgraded or edited plugin's stage is computed
            # again (a built-in's key has neither: the harness's version and RUNS_VERSION stand for its code)
            plugin = {"release": plugin_versions(type(system)), "code": plugin_code(type(system))}
            if any(plugin.values()):
                blob["plugin"] = plugin
            given = self.given_class(stage, system)
            if given is not None:  # (another class than the stage names, given to run_pipeline: its own runs)
                blob["class"] = given
        if stage.fusion is not None:
            blob["fusion"] = stage.fusion.to_dict()
        if stage.optimize is not None:
            from harness.checksums import sha256

            from harness.fusion.optimize import TIE_RULE

            blob["optimize"] = {**stage.optimize, "qrels_sha256": sha256(stage.optimize["qrels"]),
                                "relevance_threshold": self.evaluator.relevance_threshold, "ties": TIE_RULE}
        return blob

    def compute(self, stage: Stage, system) -> tuple[Run, dict, dict]:
        """(run, timings, info) of a stage computed now."""
        timings: dict[str, float] = {}
        info: dict = {}
        started = time.perf_counter()
        if stage.type == "retrieve":
            system.index(self.dataset.corpus)
            timings["index_s"] = time.perf_counter() - started
            started = time.perf_counter()
            run = search_run(system, self.dataset, stage.depth or self.depth, self.evaluator.ignore_identical_ids,
                             self.evaluator.semantics)
            timings["search_s"] = time.perf_counter() - started
        elif stage.type == "rerank":
            run = system.rerank(self.outcomes[stage.inputs[0]].run, self.dataset.queries, self.dataset.corpus,
                                stage.depth, ignore_identical_ids=self.evaluator.ignore_identical_ids,
                                semantics=self.evaluator.semantics)
            timings["rerank_s"] = time.perf_counter() - started
        else:
            run, info = self.fuse(stage)
            timings["fuse_s"] = time.perf_counter() - started
        stats = getattr(system, "stats", None)
        stats = plain_json(stats()) if callable(stats) else None  # (a plugin's: may hold NaN, numpy values)
        if stats:
            info["stats"] = stats
        # the versions of the process that computed the run (stored with it: a hit reports the computing one's; the
        # libraries that computed the numbers are named by the stats' *_versions, e.g. a cross-encoder's
        # scores_versions)
        info["computed_with"] = library_versions.versions()
        return run, timings, info

    def fuse(self, stage: Stage) -> tuple[Run, dict]:
        from harness.formats.trec import read_qrels
        from harness.fusion import fuse_runs
        from harness.fusion.optimize import RRF_K_GRID, WEIGHT_STEP, optimize

        runs = [self.outcomes[name].run for name in stage.inputs]
        spec, info = stage.fusion, {}
        if stage.optimize is not None:
            o = stage.optimize
            result = optimize(runs, read_qrels(o["qrels"]), spec, o["metric"], split=o["split"],
                              allow_test_split=o["allow_test_split"], step=o.get("step", WEIGHT_STEP),
                              k_values=o.get("k_grid", RRF_K_GRID),
                              relevance_threshold=self.evaluator.relevance_threshold,
                              ignore_identical_ids=self.evaluator.ignore_identical_ids,
                              semantics=self.evaluator.semantics)
            spec = result.spec
            info["optimization"] = {**result.to_dict(), "qrels": o["qrels"]}
        info["fusion_used"] = spec.to_dict()
        return fuse_runs(runs, spec, self.evaluator.semantics), info

    def run_stage(self, number: int, stage: Stage) -> StageOutcome:
        system = self.component(stage) if stage.type != "fuse" else None
        started = time.perf_counter()  # (the key hashes what params() name: a model folder, a run file, qrels)
        key = stage_key(self.key_blob(stage, system))
        key_s = time.perf_counter() - started
        label = f"stage {number}/{len(self.pipeline.stages)} {stage.name} ({stage.type})"
        from harness.plugin_code import unkeyed_code

        unkeyed = unkeyed_code(type(system)) if system is not None else None  # (its key cannot tell an edit apart)
        started = time.perf_counter()
        cached = self.cache.load(key) if unkeyed is None else None
        if cached is not None:
            run, meta = cached
            status, timings, info = "hit", dict(meta.get("timings", {})), dict(meta.get("info", {}))
            info.setdefault("computed_with", None)  # (an entry stored before it was recorded)
            timings["cache_load_s"] = time.perf_counter() - started
        else:
            with progress.task(label):
                run, timings, info = self.compute(stage, system)
            if system is not None:  # keyed by what the run was computed from: params() now describe what was read
                started = time.perf_counter()
                key = stage_key(self.key_blob(stage, system))  # (a run file rewritten since the lookup: its new sha256)
                key_s += time.perf_counter() - started
            # the run its file holds, as a cache hit (or the manual CLI chain) reads it: an empty query kept in
            # memory went ahead of queries a later input adds in a fusion's first-seen order (run.trec's query
            # order depended on the cache)
            run = run.without_empty_queries()
            if system is not None:
                info = {"resolved_params": plain_json(system.params()), **info}  # (a plugin's: numpy values, sets)
                if self.given_class(stage, system) is not None:
                    info = {"component_class": self.given_class(stage, system), **info}
            status, why = "miss", None
            if unkeyed is not None:  # a class redefined in a notebook: an entry would be read back for the next one
                self.uncached.add(stage.name)
                status = f"miss, not cached ({unkeyed})"
            elif getattr(system, "cache_runs", True):
                why = self.cache.store(key, run, {"stage": without_secrets(stage.to_dict()), "timings": timings,
                                                  "info": info})
            else:  # a live service's run: keyed by its answers, which no lookup knows (it is queried every run)
                self.uncached.add(stage.name)
            if why is not None:  # (metrics.json's stages[].cache says so: the warning is logged only, -q hides it)
                self.uncached.add(stage.name)
                status = f"miss, not cached ({why})"
        timings["key_s"] = key_s  # (this run's, hit or miss: not stored with the run)
        started = time.perf_counter()
        with progress.task(f"evaluating {stage.name}"):
            result = self.evaluator.evaluate(run, self.dataset.qrels)
        timings["evaluate_s"] = time.perf_counter() - started
        return StageOutcome(stage, key, status, run, result, timings, info,
                            depth=stage.depth or self.depth if stage.type == "retrieve" else None)

    def run(self) -> list[StageOutcome]:
        # every stage's component, before the first stage runs (a refused value is no late failure): those not given
        made = create_components(self.pipeline, skip=set(self.components or ()))
        self.made = list(made.values())
        self.components = {**(self.components or {}), **made}
        for number, stage in enumerate(self.pipeline.stages, 1):
            try:
                self.outcomes[stage.name] = self.run_stage(number, stage)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # noqa: BLE001 - reported with the stage's name, finished stages kept
                raise StageError(stage, exc, [name for name in self.outcomes if name not in self.uncached]) from exc
        return list(self.outcomes.values())


def check_given_components(pipeline: Pipeline, components: dict | None) -> None:
    """Refuse, before any stage runs, ``components`` (:func:`run_pipeline`'s) naming no retrieve or rerank stage
    of ``pipeline`` (a misspelt name was ignored: the stage ran the component its spec names, and the result was
    taken for the given one's), or giving a stage something that is no retriever (``index`` and ``search``) or
    no reranker (``rerank``): a ValueError (a TypeError) naming the stage."""
    if components is None:
        return
    if not isinstance(components, dict):
        raise TypeError(f"components must be a dict {{stage name: retriever or reranker}}, "
                        f"got {type(components).__name__}")
    stages = {stage.name: stage for stage in pipeline.stages if stage.type != "fuse"}
    for name, system in components.items():
        stage = stages.get(name)
        if stage is None:
            known = ", ".join(repr(n) for n in stages) or "none"
            raise ValueError(f"components: {name!r} is no retrieve or rerank stage of pipeline {pipeline.name!r} "
                             f"(its stages with a component: {known})")
        needs = ("index", "search") if stage.type == "retrieve" else ("rerank",)
        if not all(callable(getattr(system, method, None)) for method in needs):
            what = "retriever" if stage.type == "retrieve" else "reranker"
            raise TypeError(f"components[{name!r}]: a {stage.type} stage needs a {what} "
                            f"({', '.join(m + '()' for m in needs)}), got {type(system).__name__}")


def given_class(stage: Stage, system) -> str | None:
    """``"module:Class"`` of ``system`` when it is not the class ``stage``'s spec names (a component given to
    :func:`run_pipeline`), else None. Such a stage's key and record name it: two classes of equal ``params()``
    given to a stage named ``bm25`` had one key, and the second was served the first one's run ("hit")."""
    from harness.registry import ENTRY_POINT_GROUP, RERANKER_GROUP, component_class

    try:
        named = component_class(stage.component, ENTRY_POINT_GROUP if stage.type == "retrieve" else RERANKER_GROUP)
    except Exception:  # noqa: BLE001 - a spec naming nothing loadable: the given class is all there is
        named = None
    cls = type(system)
    return None if cls is named else f"{cls.__module__}:{cls.__qualname__}"


def recorded_system(pipeline: Pipeline) -> dict:
    """metrics.json's ``retriever`` block of a pipeline's result: its name, and its spec (secrets left out)."""
    return {"name": pipeline.name, "params": {"pipeline": without_secrets(pipeline.to_dict())}}


def _create(stage: Stage):
    from harness.registry import create, create_reranker

    make = create if stage.type == "retrieve" else create_reranker
    return make(stage.component, **stage.params)


def create_components(pipeline: Pipeline, skip: set[str] = frozenset()) -> dict:
    """{stage name: its retriever / reranker} for every retrieve and rerank stage (but those named in ``skip``:
    the ones given to :func:`run_pipeline`), constructed now (cheap:
    models, indexes and run files are loaded on first use), as ``harness run`` and ``harness rerank`` create
    theirs before reading anything. A value the constructor refuses (``backend = "nope"``, a cross-encoder
    without ``model``, a run file that does not exist) is one :class:`ConfigError` naming the file and the
    stage, before the dataset is loaded or any stage runs: it failed the stage itself, after every earlier
    stage had run (a dense encoding of the corpus, minutes)."""
    from harness.errors import ConfigError

    out = {}
    for i, stage in enumerate(pipeline.stages):
        if stage.type == "fuse" or stage.name in skip:
            continue
        try:
            out[stage.name] = _create(stage)
        except Exception as exc:  # noqa: BLE001 - a plugin's constructor may raise anything: one line
            lines = str(exc).strip().splitlines()
            reason = lines[0] if lines else type(exc).__name__
            reason = reason if isinstance(exc, (HarnessError, ValueError)) else f"{type(exc).__name__}: {reason}"
            what = "retriever" if stage.type == "retrieve" else "reranker"
            raise ConfigError(pipeline.source, f"stages[{i}].params",
                              f"{what} {stage.component!r} of stage {stage.name!r}: {reason}") from None
    return out


def kept_depth(pipeline: Pipeline, depth: int) -> int:
    """The most documents per query the last stage's run can hold, ``depth`` being the run's: a retrieve
    stage keeps its ``depth`` (or the run's), a rerank stage ``min(its depth, its input's)``, a fuse stage
    ``min(its depth, the sum of its inputs')`` (the union of their lists). The result records it as its
    depth and warns when it is below a cutoff, as ``harness run --depth`` does (a pipeline ending in a
    rerank of the top 100 reported Recall@1000 of 100 documents as depth 1000, with no warning)."""
    return _kept(pipeline, depth)[pipeline.stages[-1].name]


# where the run's depth comes from, and how to give a larger one: harness run's options, a bench config's keys
_RUN_DEPTH = {"run": ("--depth, else the largest cutoff of --k and -m", "--depth {}"),
              "bench": ("the config's depth, else the largest cutoff of its k and metrics", "depth = {} in the config")}


def rerank_depths(pipeline: Pipeline, depth: int, key: str = "", origin: str = "run") -> list[str]:
    """Refuse a rerank stage whose given ``depth`` is more than its input holds with the run's ``depth``
    (a retrieve stage without one keeps the run's: ``--depth``, else the largest cutoff of ``--k`` and
    ``-m``), with a :class:`ConfigError` naming the file and the stage's depth; return a warning per rerank
    stage whose default depth is (it reranks fewer candidates than its record's depth). With ``--k 10``, a
    rerank of ``depth = 100`` over a retrieve stage of the run's depth scored BM25's top 10 only, recorded
    as depth 100: the figure of another pipeline than the file's. ``key`` prefixes the error's key path
    (``pipelines[0]`` in a bench config); ``origin`` names where the run's depth comes from: ``"run"``
    (harness run's options) or ``"bench"`` (a bench config's ``depth``, ``k`` and ``metrics``)."""
    from harness.errors import ConfigError

    source, option = _RUN_DEPTH[origin]
    kept, warnings = _kept(pipeline, depth), []
    for i, stage in enumerate(pipeline.stages):
        if stage.type != "rerank" or stage.depth <= kept[stage.inputs[0]]:
            continue
        held = f"its input {stage.inputs[0]!r} holds at most {kept[stage.inputs[0]]} with the run's depth {depth}"
        if stage.depth_given:
            path = f"{key}.stages[{i}].depth" if key else f"stages[{i}].depth"
            raise ConfigError(pipeline.source, path,
                              f"{stage.depth} candidates per query, but {held} ({source}); give "
                              f"{option.format(stage.depth)} or a depth to the stages before it, "
                              f"or this one a smaller depth")
        warnings.append(f"stage {stage.name!r}: reranks at most {kept[stage.inputs[0]]} candidates per query, not "
                        f"its default depth {stage.depth}: {held}")
    return warnings


def _kept(pipeline: Pipeline, depth: int) -> dict[str, int]:
    kept: dict[str, int] = {}
    for stage in pipeline.stages:
        if stage.type == "retrieve":
            kept[stage.name] = stage.depth or depth
        elif stage.type == "rerank":
            kept[stage.name] = min(stage.depth, kept[stage.inputs[0]])
        else:
            kept[stage.name] = min(stage.fusion.depth, sum(kept[name] for name in stage.inputs))
    return kept


def _tie_warnings(outcomes) -> list[str]:
    """A warning per optimised fuse stage whose best score several trials share (as ``harness fuse
    --optimize`` prints it): its chosen value is only the last of them in grid order."""
    from harness.fusion.optimize import tie_warning

    out = []
    for outcome in outcomes:
        optimization = outcome.info.get("optimization")
        warning = tie_warning(optimization) if isinstance(optimization, dict) else None
        if warning:
            out.append(f"stage {outcome.stage.name!r}: {warning}")
    return out


def _versions_warnings(outcomes) -> list[str]:
    """A warning per stage whose run, or the cached work it reused, was computed under other versions of the
    libraries that computed it (its stats' ``*_versions``: :func:`harness.versions.reused_versions_warning`)."""
    hint = ("use a fresh cache root (HARNESS_CACHE_DIR; and a fresh cache_dir where the stage names one) to "
            "compute it again")
    found = (library_versions.reused_versions_warning(o.info.get("stats"), f"stage {o.stage.name!r}", hint)
             for o in outcomes)
    return [w for w in found if w]


def _norm_warnings(pipeline: Pipeline) -> list[str]:
    """A warning per fuse stage whose ``norm`` changes nothing (rrf uses ranks only; as ``harness fuse``
    warns of ``--norm`` with rrf)."""
    from harness.fusion.spec import ignored_norm

    return [f"stage {stage.name!r}: norm = {stage.fusion.norm!r} {ignored_norm(stage.fusion)}"
            for stage in pipeline.stages if stage.fusion is not None and ignored_norm(stage.fusion)]


def run_pipeline(dataset: Dataset, pipeline: Pipeline, evaluator: Evaluator, k_values: list[int],
                 depth: int | None = None, output_dir: str | Path | None = None,
                 cache: StageCache | None = None, components: dict | None = None) -> tuple[Experiment, list[StageOutcome]]:
    """Run every stage (see the module docstring) and report the last one like :func:`run_experiment`
    (with ``output_dir``, the ids run.trec could not hold are refused before any stage runs; ``components``:
    :func:`create_components`' result, made before the dataset was loaded, else made here before any stage, and
    closed here after the last (:meth:`Retriever.close <harness.retriever.Retriever.close>`): given ones are the
    caller's to close). ``components`` may give some stages instances of the caller's (``{"bm25": my_retriever}``):
    a name that is no retrieve or rerank stage, or an object of the wrong kind, is refused before any stage runs
    (:func:`check_given_components`); one of another class than its stage's spec names has that class in its stage
    key and record (``component_class``: :func:`given_class`); the stages it leaves out are made here."""
    k_values = check_cutoffs_and_depth(k_values, depth, evaluator)  # (as run_experiment: depth=0 was the default depth)
    if output_dir is not None:
        check_run_file_ids(dataset)
        from harness.reports.replacing import warn_if_replacing

        warn_if_replacing(Path(output_dir), recorded_system(pipeline), dataset.split)
    evaluator.refuse_no_relevant(dataset.qrels)  # (before any stage runs)
    depth = int(depth) if depth is not None else default_depth(k_values, evaluator.metrics)
    capped = rerank_depths(pipeline, depth)  # (before any stage runs)
    runner = PipelineRunner(pipeline, dataset, evaluator, depth, cache, components)
    try:
        outcomes = runner.run()
    finally:
        from harness.closing import close_components

        # made here (by runner.run(): every stage's, or those the given components leave out): this run's to close,
        # its stages all run or one failed; given ones are the caller's
        close_components(runner.made)
    final = outcomes[-1]
    kept = kept_depth(pipeline, depth)
    timings = {"load_s": dataset.load_s,
               "stages_s": sum(o.spent_s for o in outcomes),  # the time this run took, cache hits' loads only
               "evaluate_s": sum(o.timings.get("evaluate_s", 0.0) for o in outcomes)}
    document = MetricsDocument.build(
        final.result, dataset=dataset_info(dataset),
        retriever=recorded_system(pipeline),
        k_values=k_values, depth=kept, timings=timings,
        warnings=[*dataset.warnings, *_norm_warnings(pipeline), *_tie_warnings(outcomes),
                  *capped, *filter(None, [depth_warning(kept, k_values, evaluator.metrics)]),
                  *_versions_warnings(outcomes)] or None,
        stages=[o.record() for o in outcomes])
    from harness.plugin_code import recorded_versions

    # the stages' plugins' releases and code digests, as harness run records its retriever's (the stage keys hold them)
    document.versions = {**document.versions,
                         **recorded_versions(type(system) for system in (runner.components or {}).values())}
    folder = None
    if output_dir is not None:
        folder = write_result_folder(Path(output_dir), document, dataset.queries.as_dict(), final.run,
                                     tag=pipeline.name)
    return Experiment(dataset, final.run, final.result, document, folder), outcomes
