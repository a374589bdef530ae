"""The HTML report: one self-contained page with the leaderboard (bootstrap intervals, groups of
systems that are not significantly different), plots, a per-query explorer, efficiency and settings.

    result folders -> :func:`load_inputs` (grouped by dataset; a benchmark's folder by its leaderboard)
        -> :func:`report_of` (:func:`build_report`) -> :func:`write_report`
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from harness.reports.html.model import Report, build_report, dataset_label, result_info
from harness.reports.html.render import render, write_report

__all__ = ["Bench", "Inputs", "Report", "build_report", "load_inputs", "load_results", "read_bench", "render",
           "report_of", "write_bench_report", "write_report"]


LEADERBOARD = "leaderboard.json"  # a benchmark's folder holds it (harness/bench/leaderboard.py)
MANIFEST = "bench.json"
FINISHED = ("run", "reused")  # the statuses of a cell with a result


@dataclass
class Bench:
    """A benchmark's page as its leaderboard describes it: ``board`` is leaderboard.json's object (its rows
    ``datasets``, ``forums``, ``metrics``, and each cell's status and folder), ``sources`` each dataset label's
    source (the config's name or folder: judgments and titles), ``folder`` the benchmark's folder. ``harness
    bench`` makes its report.html from the leaderboard it has just written and ``harness report`` from the
    one it reads (:func:`read_bench`), through :func:`bench_inputs`: the same rows, cells and average (a row
    whose every cell failed, a forum without results: no average), not the folders found below it."""

    folder: Path
    board: dict
    sources: dict[str, str] = field(default_factory=dict)
    unplaced: list[str] = field(default_factory=list)  # labels of relative folders found from no directory

    @property
    def title(self) -> str:
        return f"Benchmark {self.board['bench']}"

    def retrievers(self) -> list[str]:
        """The leaderboard's columns, failed ones too: its ``retrievers`` (and any other retriever label of its
        cells, in their order)."""
        listed = self.board.get("retrievers")
        listed = listed if isinstance(listed, list) and all(isinstance(r, str) for r in listed) else []
        return list(dict.fromkeys([*listed, *(c["retriever"] for c in self.board["cells"])]))

    def labelled(self) -> set[tuple[str, str]]:
        """(dataset label, retriever label) of each cell of the leaderboard, whatever its status."""
        return {(c["dataset"], c["retriever"]) for c in self.board["cells"]}

    def cells(self) -> list[tuple[str, str, Path, str | None]]:
        """(dataset label, retriever label, result folder, fingerprint) of each finished cell, in leaderboard order."""
        return [(c["dataset"], c["retriever"], self.folder / c["folder"], c.get("fingerprint"))
                for c in self.board["cells"] if c["status"] in FINISHED]


@dataclass
class Inputs:
    """What a page is made of: ``groups`` (row label -> its systems, in column order), and from the
    benchmarks among them what their own pages are made with: ``sources`` (row label -> dataset source),
    ``listed_forums`` and ``listed_rows`` (:func:`~harness.reports.html.model.build_report`), ``metrics``
    and ``title`` (a benchmark given alone: its leaderboard's), ``intersection`` (only benchmarks: as
    ``harness bench``); ``listed_systems``: the benchmarks' columns, those whose every cell failed too;
    ``warnings``: what the page shows that its leaderboard.json does not (a cell
    rewritten since), ``notes``: what was left out (folders that are no finished cell); ``files``: the
    benchmarks' leaderboard.json and bench.json (inputs, as the results' files, that no output may replace);
    ``unplaced``: the rows whose dataset folder (relative, of an old bench.json) is found from no directory."""

    groups: dict[str, list] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    listed_forums: list[str] = field(default_factory=list)
    listed_rows: list[str] = field(default_factory=list)
    listed_systems: list[str] = field(default_factory=list)
    metrics: list[str] | None = None
    title: str | None = None
    intersection: bool = False
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    unplaced: dict[str, str] = field(default_factory=dict)  # row label -> warning, unless --dataset gives it


def read_bench(folder: str | Path) -> Bench:
    """The benchmark in ``folder``: its leaderboard.json (checked: an InputError naming the file), and the
    dataset sources of its bench.json's config (when that cannot be read, none: a warning on the page says
    what is missing); a relative folder there is taken from the directory the benchmark ran in
    (:func:`_located`), as the benchmark took it, not from the one ``harness report`` runs in."""
    from harness.errors import InputError

    folder = Path(folder)
    path = folder / LEADERBOARD
    try:
        board = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read leaderboard: {getattr(exc, 'strerror', None) or exc}", path) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg}", path, exc.lineno) from None
    problem = _board_problem(board)
    if problem:
        raise InputError(f"not a leaderboard written by harness bench: {problem}", path)
    sources: dict[str, str] = {}
    unplaced: list[str] = []
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        bases = _run_directories(folder, manifest)
        for entry in manifest["config"]["datasets"]:
            source = entry.get("path", entry.get("name"))
            if isinstance(entry.get("label"), str) and isinstance(source, str):
                sources[entry["label"]] = _located(source, "path" in entry, bases)
                if not bases and "path" in entry and not _found(source):
                    unplaced.append(entry["label"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        sources, unplaced = {}, []  # (judgments and titles only: found from the results' own records instead)
    return Bench(folder, board, sources, unplaced)


def _found(source: str) -> bool:
    """Whether a config's ``path =`` folder is where the report looks for it: absolute, ``~``, remote (found or
    refused as they are) or a folder from the current directory."""
    from harness.datasets.registry import DatasetRef

    return DatasetRef.parse(source).remote is not None or Path(os.path.expanduser(source)).is_absolute() \
        or Path(source).is_dir()


def _run_directories(folder: Path, manifest: dict) -> list[Path]:
    """The directories a benchmark's relative dataset folders were taken from, as its bench.json proves them:
    the one it records (``cwd``), then the one its bench folder was made in (``folder`` is
    ``<that directory>/<output_dir>/<name>`` when the config's ``output_dir`` is relative: a bench.json written
    before ``cwd`` was recorded, or a project moved since as a whole). Empty: the benchmark does not say (an
    absolute ``output_dir`` and no ``cwd``; its relative folders are then taken from the current directory)."""
    out = []
    recorded = manifest.get("cwd")
    if isinstance(recorded, str) and Path(recorded).is_absolute():
        out.append(Path(recorded))
    config = manifest.get("config") or {}
    output_dir, name = config.get("output_dir"), config.get("name")
    if isinstance(output_dir, str) and isinstance(name, str) and not output_dir.startswith("~") \
            and not Path(output_dir).is_absolute():
        tail = (Path(output_dir) / name).parts
        here = Path(os.path.abspath(folder)).parts  # (normalized: a folder given as ../results/name)
        if ".." not in tail and len(here) > len(tail) and here[-len(tail):] == tail:
            made = Path(*here[:-len(tail)])
            if made not in out:
                out.append(made)
    return out


def _located(source: str, path: bool, bases: Sequence[Path]) -> str:
    """A bench config's dataset ``source`` (``path``: given as ``path =``) as the benchmark found it, from any
    directory: a relative folder under the first of ``bases`` (:func:`_run_directories`) that holds it (a name
    such as ``scifact`` too: :func:`harness.datasets.resolve` looks for a folder first), else as it is when
    the current directory holds it (a project moved since, reported from its new place), else, for a ``path``
    that names no registered dataset, under the first base (where the benchmark took it from). Unchanged:
    absolute and ``~`` paths, ``hf:`` / ``irds:`` sources, forums (``cqadupstack/android``: their name says
    which row they are), names found no folder of, and every source when ``bases`` is empty."""
    from harness.datasets.registry import DatasetRef, forum_of

    ref = DatasetRef.parse(source)
    if not bases or ref.remote is not None or forum_of(source) is not None \
            or Path(os.path.expanduser(source)).is_absolute():
        return source
    for base in bases:
        if (base / source).is_dir():
            return str(base / source)
    if Path(source).is_dir():  # (none of them holds it any more, the directory the report runs in does:
        return source  # a project moved, its results elsewhere, reported from its new place)
    return str(bases[0] / source) if path and ref.info is None else source


def _board_problem(board: object) -> str | None:
    """What makes ``board`` no leaderboard.json of :mod:`harness.bench.leaderboard` (None when it is one)."""
    from harness.bench.leaderboard import SCHEMA

    def strings(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)

    if not isinstance(board, dict) or board.get("schema") != SCHEMA:
        schema = board.get("schema") if isinstance(board, dict) else None
        return f"schema is {schema!r}, expected {SCHEMA!r}"
    if not isinstance(board.get("bench"), str):
        return "'bench' is not a string"
    for key in ("metrics", "datasets"):
        if not strings(board.get(key)):
            return f"'{key}' is not a list of strings"
    if not isinstance(board.get("forums", {}), dict):
        return "'forums' is not an object"
    cells = board.get("cells")
    if not isinstance(cells, list):
        return "'cells' is not a list"
    for i, cell in enumerate(cells):
        if not (isinstance(cell, dict) and all(isinstance(cell.get(k), str)
                                               for k in ("dataset", "retriever", "folder", "status"))):
            return f"cells[{i}] lacks a dataset, retriever, folder or status"
    return None


def column_names(benches: Sequence[Bench]) -> list[dict[str, str]]:
    """Each benchmark's columns as the page names them: retriever label -> column. Its labels, unless two of
    ``benches`` have a cell of one dataset label under one retriever label (two configs with a retriever
    ``bm25`` on ``scifact``: two results of one row with one name). Every benchmark's columns are then named
    ``<folder>/<label>``, ``<folder>`` its folder below the folder common to all (``a/bm25``, ``b/bm25`` for
    results/a and results/b), so that each keeps its own columns. Benchmarks whose cells share no row and
    label (one config per dataset) keep their labels: a label is one column across them, with its average."""
    plain = [{label: label for label in bench.retrievers()} for bench in benches]
    seen: set[tuple[str, str]] = set()
    for bench in benches:
        cells = bench.labelled()
        if cells & seen:
            break
        seen |= cells
    else:
        return plain
    folders = [Path(os.path.abspath(bench.folder)) for bench in benches]  # (normalized: '..' named no folder)
    common = Path(os.path.commonpath(folders))
    prefixes = [folder.relative_to(common).as_posix() if folder != common else folder.name for folder in folders]
    return [{label: f"{prefix}/{label}" for label in names} for prefix, names in zip(prefixes, plain)]


def bench_inputs(benches: Sequence[Bench], inputs: Inputs | None = None) -> Inputs:
    """``inputs`` (new ones by default) with the finished cells of ``benches``: each cell in the row of its
    dataset label, named by its retriever label (:func:`column_names`: qualified by its benchmark's folder
    when two benchmarks share one), as the benchmark's leaderboard has them; its columns, those whose every
    cell failed too (a column of '-', as in leaderboard.json); one benchmark's metrics and title (benchmarks
    that all have the same metrics: those); the title of one benchmark, or of several (``Benchmarks a, b``)."""
    from harness.compare.load import load_system

    inputs = inputs or Inputs()
    for bench, names in zip(benches, column_names(benches)):
        for dataset, retriever, folder, recorded in bench.cells():
            system = load_system(str(folder))
            system.name = names[retriever]
            inputs.groups.setdefault(dataset, []).append(system)
            found = (system.document.bench or {}).get("fingerprint")
            if recorded and found != recorded:
                inputs.warnings.append(f"{folder / 'metrics.json'}: not the cell {bench.folder / LEADERBOARD} "
                                       "records (another fingerprint: rewritten since); the page shows this file's "
                                       "values, not the leaderboard's")
        for label, source in bench.sources.items():
            inputs.sources.setdefault(label, source)
        for label in bench.unplaced:
            inputs.unplaced.setdefault(label, f"{bench.folder / MANIFEST}: dataset {label}'s folder "
                                              f"{bench.sources[label]!r} is relative to the directory the benchmark "
                                              "ran in, which this bench.json does not record (an absolute output_dir, "
                                              "no cwd), and is not in the current directory: no judgments or titles "
                                              f"from it; give it with --dataset {label}=FOLDER")
        for group in (bench.board.get("forums") or {}).values():  # (without bench.json: the forum each cell records)
            for label in group.get("forums") or []:
                recorded = result_info(inputs.groups[label][0]).dataset if inputs.groups.get(label) else None
                if label not in inputs.sources and recorded:
                    inputs.sources[label] = recorded
        inputs.listed_forums += [f for f in bench.board.get("forums") or {} if f not in inputs.listed_forums]
        inputs.listed_rows += [r for r in bench.board["datasets"] if r not in inputs.listed_rows]
        inputs.listed_systems += [n for n in names.values() if n not in inputs.listed_systems]
        inputs.files += [bench.folder / LEADERBOARD, bench.folder / MANIFEST]
    inputs.intersection = bool(benches)  # (harness bench compares a row's cells on their common queries)
    if len(benches) == 1:
        inputs.metrics, inputs.title = list(benches[0].board["metrics"]), benches[0].title
    elif benches:  # (their names, each once: two outputs of one config are "Benchmark NAME")
        names = list(dict.fromkeys(b.board["bench"] for b in benches))
        inputs.title = f"Benchmark{'s' if len(names) > 1 else ''} {', '.join(names)}"
        if all(b.board["metrics"] == benches[0].board["metrics"] for b in benches):
            inputs.metrics = list(benches[0].board["metrics"])  # (benchmarks of one list of metrics: theirs)
    return inputs


def load_inputs(arguments: Sequence[str]) -> Inputs:
    """Load ``[NAME=]PATH`` arguments (result folders, metrics.json files, or folders holding them at any
    depth, such as a ``harness bench`` output or a results tree holding some) and group them into rows:
    a benchmark's folder (one holding leaderboard.json) by its leaderboard (:class:`Bench`: its finished
    cells, its dataset labels, its failed cells left without a value), other results by dataset."""
    from harness.compare.load import load_system, split_name
    from harness.errors import HarnessError

    systems, benches, notes = [], [], []
    for argument in arguments:
        name, text = split_name(argument)
        path = Path(text)
        if path.is_dir() and not (path / "metrics.json").is_file():
            files = [p for p in path.rglob("*.json") if p.name in ("metrics.json", LEADERBOARD)]  # (one walk)
            found = sorted(p for p in files if p.name == "metrics.json")
            folders = sorted({p.parent for p in files if p.name == LEADERBOARD},  # (outer first; by name: not in
                             key=lambda p: (len(p.parts), str(p)))  # the set's order, which changes with the hash seed)
            if not found and not folders:
                raise HarnessError(f"{path}: no metrics.json in this folder or below it")
            if name:
                raise HarnessError(f"{path}: NAME=PATH names one result, but this folder holds {len(found)}")
            read = [read_bench(folder) for folder in folders]
            benches += [b for b in read if all(b.folder.resolve() != o.folder.resolve() for o in benches)]  # (once)
            cells = {cell[2] for bench in read for cell in bench.cells()}
            for p in found:
                bench = next((b for b in reversed(read) if b.folder in p.parents), None)
                if bench is None:
                    systems.append(load_system(str(p.parent)))
                elif p.parent not in cells:
                    notes.append(f"{p}: not a finished cell of {bench.folder / LEADERBOARD}: left out")
        else:
            systems.append(load_system(argument))
    systems = _once(systems, benches, notes)
    inputs = bench_inputs(benches, Inputs(notes=list(dict.fromkeys(notes))))
    for s in systems:
        inputs.groups.setdefault(dataset_label(result_info(s)), []).append(s)
    if systems:  # (results beside a benchmark: the defaults of any results)
        inputs.metrics, inputs.title, inputs.intersection = None, None, False
    return inputs


def _once(systems: list, benches: Sequence[Bench], notes: list[str]) -> list:
    """``systems`` with each result once: a metrics.json given twice (a results tree and a folder in it) is read
    once, under the name given with NAME=PATH if either gave one (else the first); one that is a finished cell
    of one of ``benches`` is that benchmark's column, left out here with a note (it was a second column of the
    same values, or two results of one name refused)."""
    cells = {folder.resolve() / "metrics.json": bench for bench in benches for _, _, folder, _ in bench.cells()}
    out: list = []
    first: dict[Path, int] = {}  # (metrics.json -> its place in out)
    for s in systems:
        path = Path(s.source).resolve()
        if path in cells:
            notes.append(f"{s.source}: a finished cell of {cells[path].folder / LEADERBOARD}: shown once, as "
                         "the benchmark's column")
        elif path not in first:
            first[path] = len(out)
            out.append(s)
        elif s.explicit_name and not out[first[path]].explicit_name:
            out[first[path]] = s  # (the name asked for, in the place of the first)
        elif s.explicit_name and s.name != out[first[path]].name:
            out.append(s)  # (one result under two names asked for: both, as asked)
    return out


def load_results(arguments: Sequence[str]) -> dict[str, list]:
    """The results of ``arguments`` grouped into rows (:func:`load_inputs`; a benchmark's page also needs what
    its leaderboard lists, its failed cells and forums: :func:`report_of` of the whole :class:`Inputs`)."""
    return load_inputs(arguments).groups


def report_of(inputs: Inputs, metrics: Sequence[str] | None = None, baseline: str | None = None,
              settings=None, top_k: int = 10, sources: dict[str, str] | None = None, intersection: bool = False,
              title: str | None = None) -> Report:
    """The report of ``inputs``: ``metrics``, ``title`` default to a benchmark's; ``sources`` (``--dataset``)
    take the place of a benchmark's for their rows; benchmarks without a finished cell (and no other results):
    a HarnessError naming their leaderboard.json files."""
    from harness.errors import HarnessError

    boards = [str(f) for f in inputs.files if f.name == LEADERBOARD]
    if boards and not any(inputs.groups.values()):
        raise HarnessError(f"nothing to report: no finished cell in {', '.join(boards)} (every cell failed)")
    report = build_report(inputs.groups, metrics or inputs.metrics, baseline, settings, top_k=top_k,
                          sources={**inputs.sources, **(sources or {})},
                          intersection=intersection or inputs.intersection,
                          title=title or inputs.title or "Retrieval report", listed_forums=inputs.listed_forums,
                          listed_rows=inputs.listed_rows, listed_systems=inputs.listed_systems)
    unplaced = [warning for label, warning in inputs.unplaced.items() if label not in (sources or {})]
    report.warnings = [*inputs.warnings, *unplaced, *report.warnings, *recorded_warnings(inputs.groups)]
    return report


def recorded_warnings(groups: dict[str, list]) -> list[str]:
    """The warnings the results' metrics.json files record (an http retriever's failed requests, counted in
    its ``efficiency`` block; its ``warnings``: a depth below a cutoff, documents not in the corpus, ...), as
    ``harness bench`` prints a reused cell's (:attr:`harness.bench.leaderboard.CellOutcome.warnings`) and its
    leaderboard.md ends with them: one line per distinct warning, ``<row> / <column>: <warning>``, naming its
    results (past three, the first three and a count)."""
    from harness.bench.leaderboard import grouped_warnings, recorded_failures

    named = []
    for label, systems in groups.items():
        for system in systems:
            info = result_info(system)  # (a typed document or its JSON)
            named.append((f"{label} / {system.name}", [*recorded_failures(info.efficiency), *info.warnings]))
    return grouped_warnings(named)


def write_bench_report(path: str | Path, bench: Bench) -> Path:
    """The page of a benchmark (its leaderboard: rows, columns, metrics; see :class:`Bench`), written to ``path``."""
    return write_report(report_of(bench_inputs([bench])), path)
