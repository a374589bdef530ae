"""Option parsing shared by commands: k lists, metric lists, ``key=value`` parameters."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer

from harness.errors import HarnessError
from harness.evaluation import DEFAULT_K


def parse_k(text: str | None) -> list[int]:
    """Comma-separated ASCII integers (blanks around each ignored): ``"1 3"`` is refused, not read as 13,
    and so are ``1_0``, ``+5`` and non-ASCII digits that Python's ``int`` would take."""
    if text is None:
        return list(DEFAULT_K)
    parts = [part.strip() for part in text.split(",")]
    if not all(re.fullmatch(r"(-?[0-9]+)?", part) for part in parts) or not any(parts):
        raise HarnessError(f"--k takes comma-separated integers, e.g. 1,3,5,10; got {text!r}")
    ks = sorted({_bounded_int(part) for part in parts if part})
    if ks[0] < 1:
        raise HarnessError(f"--k values must be >= 1; got {text!r}")
    if ks[-1] > 2**63 - 1:  # (ranks and counts are int64)
        raise HarnessError(f"--k values must be at most 2^63 - 1; got {text!r}")
    return ks


def _bounded_int(digits: str) -> int:
    """``int(digits)``, with +-2^63 for a value past 20 digits (``int`` refuses 4,300+ digits)."""
    sign = -1 if digits.startswith("-") else 1
    magnitude = digits.lstrip("-").lstrip("0") or "0"
    return sign * (int(magnitude) if len(magnitude) <= 20 else 2**63)


def refuse_outputs_over_inputs(outputs: list[tuple[str, Path | None]], inputs: list[Path]) -> None:
    """Refuse, before any work, an output (``(option, path)``) that is one of the input files
    (``--json run.trec`` given for ``--run run.trec``): writing it would replace the user's run or
    qrels, whose recorded sha256 would then name a file that is gone; and two outputs naming one file
    (``--json m.json --markdown m.json``: the Markdown replaced the JSON, exit 0)."""
    import os

    named = [(option, out) for option, out in outputs if out is not None]
    for i, (option, out) in enumerate(named):  # (the second write would replace the first)
        for other, path in named[:i]:
            if path.resolve() == out.resolve():
                raise HarnessError(f"{other} {path} and {option} {out} name the same file; one would replace the other")
    for option, out in outputs:
        if out is None or not out.exists():
            continue
        for source in inputs:
            try:
                same = os.path.samefile(out, source)
            except (OSError, ValueError):  # (an input that cannot be looked at is named by its reader; NUL: no path)
                continue
            if same:
                raise HarnessError(f"{option} {out}: is the input file {source}; writing there would replace it")


def write_stdout_json(text: str) -> None:
    """JSON text (``--json -``) on stdout as UTF-8, as ``--json FILE`` writes it (RFC 8259), whatever
    stdout's encoding: under a non-UTF-8 locale (``PYTHONIOENCODING=latin-1``, a Windows pipe's code
    page) a text write turned ``qé`` into byte 0xe9, a file that ``harness compare`` cannot read back,
    or failed on a character the encoding lacks, after the work was done."""
    import sys

    sys.stdout.flush()  # (what was written as text goes first)
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:  # (a text-only stream: it takes str)
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    raw.write(text.encode("utf-8"))
    raw.flush()


def given(ctx: typer.Context, name: str) -> bool:
    """Whether the option ``name`` (its parameter's name) was given, not left at its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def result_files(systems) -> list[Path]:
    """The files loaded results (:class:`harness.compare.load.SystemResult`) were read from: each one's
    metrics.json or run file, per_query.jsonl and run.trec (inputs that no output may replace)."""
    return [path for s in systems for path in (s.source, s.per_query_path, s.run_path) if path is not None]


def read_pipes(inputs: list[tuple[Path, str]]) -> dict[Path, bytes]:
    """The bytes of the inputs (``(path, "run" or "qrels")``) that can be read only once (pipes:
    ``--run <(zcat r.gz)``), read now, so that one reading is both parsed and hashed
    (:func:`harness.formats.trec.read_once`); regular files are not in it."""
    from harness.formats.trec import read_once

    once: dict[Path, bytes] = {}
    for path, what in inputs:
        if path not in once and (data := read_once(path, what)) is not None:
            once[path] = data
    return once


def refuse_stdin_twice(inputs: list[tuple[str, Path | None]]) -> None:
    """Refuse, before anything is read, ``-`` (standard input) given to two input options (``(option,
    path)``): it can be read once (``--qrels - --run -`` parsed the run's lines as qrels, or found
    standard input at its end)."""
    from harness.formats.trec import is_stdin

    named = [option for option, path in inputs if path is not None and is_stdin(path)]
    if len(named) > 1:
        raise HarnessError(f"{named[0]} - and {named[1]} -: standard input can be read once; give the other "
                           "as a file (or <(command))")


def refuse_missing_beside_stdin(inputs: list[tuple[Path | None, str]]) -> None:
    """Where ``-`` (standard input) is one of the inputs (``(path, "run" or "qrels")``), refuse an input
    file that does not exist before standard input is read, in its reader's words (``--qrels - --run
    missing.trec`` read standard input first, waiting on a terminal, and named the missing run after)."""
    import os

    from harness.errors import InputError
    from harness.formats.trec import is_stdin

    if not any(path is not None and is_stdin(path) for path, _ in inputs):
        return
    for path, what in inputs:
        if path is not None and not is_stdin(path):
            try:
                os.stat(path)
            except FileNotFoundError as exc:
                raise InputError(f"cannot read {what} file: {exc.strerror}", Path(path)) from None


def input_name(path: Path) -> str:
    """An input path as results record and tables show it: ``<stdin>`` for ``-``."""
    from harness.formats.trec import STDIN_NAME, is_stdin

    return str(STDIN_NAME) if is_stdin(path) else str(path)


def check_outputs(*paths) -> None:
    """Refuse, before any work, an output path that cannot be written: an existing folder, or a path
    under a file (so that a command writing several outputs fails before the first, not after it).
    The temporary files of these outputs left by earlier writes that were killed (SIGKILL: see
    harness.atomic) are removed, so that they do not pile up beside the output one per kill."""
    from harness.atomic import remove_abandoned

    for path in paths:
        if path is None:
            continue
        path = Path(path)
        if path == Path("-"):  # (--markdown -, fuse -o -: a file named "-" was written, where --json - is stdout)
            raise HarnessError("an output named - would be a file named '-': only --json of evaluate, check and "
                               "compare writes to stdout; give a file name")
        if path.is_dir():
            raise HarnessError(f"{path}: Is a directory")
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise HarnessError(f"{parent}: Not a directory")
                _refuse_unwritable(path, parent)
                break
        remove_abandoned(path.parent, path.name)


def _refuse_unwritable(path: Path, folder: Path) -> None:
    """Refuse ``path`` when no file can be created in ``folder``, the nearest folder of it that exists (the
    output's own, or the one its missing folders would be made in): a read-only mount, another user's folder,
    /proc. A file is created there and removed at once, which tells it where permission bits do not (root
    passes ``os.access`` on /proc and on a read-only mount)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise HarnessError(f"{path}: cannot write in {folder}: {exc.strerror or exc}") from None


def check_output_folder(path: Path, option: str, writable: bool = False) -> None:
    """Refuse, before any work, an output folder that is a file or lies under one (``-o results.txt``:
    the results were computed, then could not be written); with ``writable``, also one whose nearest
    existing folder this process cannot write in (a read-only mount, another user's folder: the run
    was computed in full, an hour of encoding, and only then refused by its first write)."""
    import os

    for folder in (path, *path.parents):
        if folder.exists():
            if not folder.is_dir():
                raise HarnessError(f"{option} {path}: {folder} is not a folder")
            if writable and not os.access(folder, os.W_OK | os.X_OK):
                try:
                    read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
                except (OSError, AttributeError):
                    read_only = False
                reason = "read-only file system" if read_only else "permission denied"
                raise HarnessError(f"{option} {path}: cannot write in {folder} ({reason})")
            return


METRIC_HELP = ("Metric to add to BEIR's six (repeatable or comma-separated), e.g. bpref, R-Prec, AP, "
               "Success, Judged, DCG, NDCG_exp, DCG_jarvelin@10; a family without @k is computed at every --k.")


def metric_items(items: list[str] | None) -> list[str]:
    """The names of ``--metric`` options, each repeatable or comma-separated (``-m NDCG@10,Recall@100``),
    blanks around each ignored: the one reading of every command's ``-m`` (run, evaluate, compare, check,
    report). A bare number is refused: trec_eval's ``-m P.5,10`` (a cutoff list) split at the comma; so is an
    option with no name in it (``-m ""``, ``-m ,``: an empty ``-m "$METRICS"`` gated the default metric)."""
    names = [part.strip() for item in items or [] for part in item.split(",") if part.strip()]
    empty = next((item for item in items or [] if not item.replace(",", "").strip()), None)
    if empty is not None:
        raise HarnessError(f"--metric: {empty!r} names no metric (e.g. -m NDCG@10,Recall@100)")
    for name in names:
        if name.isascii() and name.isdigit():
            raise HarnessError(f"--metric: {name!r} is not a metric name (trec_eval's P.5,10 is written "
                               f"P@5,P@10 here, or -m P with --k 5,10)")
        if name.isascii() and name.replace(".", "", 1).isdigit():  # Rprec_mult.0.2,0.4: levels split at the comma
            raise HarnessError(f"--metric: {name!r} is not a metric name (trec_eval's Rprec_mult.0.2,0.4 is "
                               f"written Rprec_mult_0.20,Rprec_mult_0.40 here)")
    return names


def parse_metrics(items: list[str] | None, k_values: list[int]) -> list:
    """BEIR's six families at every k, then the ``--metric`` names (:func:`metric_items`; families expand
    over k)."""
    from harness.evaluation import DEFAULT_FAMILIES, metrics_for

    extra = metric_items(items)
    try:
        return metrics_for([*DEFAULT_FAMILIES, *extra], k_values)
    except ValueError as exc:
        raise HarnessError(f"--metric: {exc}") from None


def _same_value(a, b) -> bool:
    """Whether two ``--param`` values are one setting: the same JSON once parsed (``0.5`` and ``0.50``;
    not ``1`` and ``1.0``, nor ``1`` and ``true``, nor ``{"a": 1}`` and ``{"a": 1.0}``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def parse_params(items: list[str] | None, component: str | None = None, reranker: bool = False) -> dict:
    """``--param key=value`` items as a dict, each value read as JSON where it is JSON (``0.9``,
    ``true``, ``null``, ``[1, 2]``), else kept as its text; with ``component`` (a retriever's, or with
    ``reranker`` a reranker's, name or ``module:Class``), checked against its constructor's
    annotations (:func:`harness.params.command_line_params`: ``lossy_lengths=False`` is refused,
    not read as a true string). A key given twice with different values is refused (the last value
    silently won: ``-p k1=0.9 ... -p k1=1.2`` ran k1 1.2, a typo for another key ran its default); the
    same value twice (``k1=0.5`` and ``k1=0.50``) is one setting."""
    params, texts = {}, {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise HarnessError(f"--param takes key=value; got {item!r}")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        if key in texts and texts[key] != value and not _same_value(params[key], parsed):
            raise HarnessError(f"--param {key} is given twice ({key}={texts[key]} and {key}={value}): give it once")
        texts[key], params[key] = value, parsed
    if component is None:
        return params
    from harness.params import command_line_params
    from harness.registry import ENTRY_POINT_GROUP, RERANKER_GROUP, component_class

    cls = component_class(component, RERANKER_GROUP if reranker else ENTRY_POINT_GROUP)
    return command_line_params(cls, params, texts, component, "reranker" if reranker else "retriever")


# ----------------------------------------------------------------------------- evaluation options
# Shared by every command that evaluates (run, evaluate): one declaration, one behaviour.
K_OPTION = typer.Option(None, "--k", help="Cutoffs, comma-separated (default 1,3,5,10,100,1000).")
METRIC_OPTION = typer.Option(None, "--metric", "-m", help=METRIC_HELP)
KEEP_IDENTICAL_IDS_OPTION = typer.Option(False, "--keep-identical-ids",
                                         help="Keep hits whose document id equals the query id.")
RELEVANCE_THRESHOLD_OPTION = typer.Option(1.0, "--relevance-threshold",
                                          help="Grade at or above which a document is relevant "
                                               "(binary metrics; any positive number, for float grades).")

SEMANTICS_OPTION = typer.Option("trec_eval-9", "--semantics",
                                help="trec_eval-9 (default: scores compared as float32, as trec_eval 9 and "
                                     "pytrec_eval) or trec_eval-10 (scores as doubles; negative grades unjudged).")


def build_evaluator(k: str | None, metric: list[str] | None, relevance_threshold: float, keep_identical_ids: bool,
                    semantics: str | None = None):
    """(Evaluator, k list) from the shared evaluation options."""
    from harness.evaluation import Evaluator

    k_values = parse_k(k)
    evaluator = Evaluator(parse_metrics(metric, k_values), k_values=k_values,
                          relevance_threshold=relevance_threshold, ignore_identical_ids=not keep_identical_ids,
                          semantics=semantics)
    return evaluator, k_values


# ----------------------------------------------------------------------------- significance options
# Shared by the commands that test systems against each other (compare, report).
TEST_OPTION = typer.Option("randomization", "--test", help="Test that decides significance: randomization or t.")
ALPHA_OPTION = typer.Option(0.05, "--alpha", help="Significance level (after Holm's correction).")
PERMUTATIONS_OPTION = typer.Option(10_000, "--permutations", help="Sign permutations of the randomization test.")
RESAMPLES_OPTION = typer.Option(10_000, "--resamples", help="Bootstrap resamples of the confidence intervals.")
SEED_OPTION = typer.Option(0, "--seed", help="Seed of the randomization test and the bootstrap.")
INTERSECTION_OPTION = typer.Option(False, "--intersection", help="Use only the queries common to all results (per "
                                   "dataset) instead of refusing different query sets.")


def close_when_done(ctx: typer.Context, *components) -> None:
    """Close ``components`` (:func:`harness.closing.close_components`) when the command of ``ctx`` ends, its work
    done or failed: after its last output, before the process exits."""
    import functools

    from harness.closing import close_components

    ctx.call_on_close(functools.partial(close_components, components))
