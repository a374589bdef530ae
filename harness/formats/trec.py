"""TREC file formats: runs, qrels and topics, read and written.

    run     ``qid Q0 docid rank score tag [more...]``   (at least 6 columns; extra columns ignored)
    qrels   ``qid iter docid grade``                    (4 columns; ``iter`` is ignored, written as 0;
            or BEIR's ``query-id<TAB>corpus-id<TAB>score`` with an optional header; a grade is finite)
    topics  ``qid <TAB> text`` (TSV), or the classic SGML-ish ``<top> <num> <title> <desc> <narr> </top>``

Runs and qrels are read as trec_eval reads them: columns are separated by runs of ASCII whitespace
(space, tab, vertical tab, form feed; U+00A0 and other Unicode spaces stay inside ids), blank lines
and ``#`` comment lines (ir_metadata headers; trec_eval 10) are skipped, the rank column is ignored
(it need not be an integer) and the ranking is by score. Gzipped files (``.gz``) are read too, and a
leading UTF-8 byte-order mark is dropped (trec_eval would read it as part of the first query id).
The path ``-`` is standard input (``zcat run.gz | harness evaluate --run - ...``), read once, whole,
and named ``<stdin>`` in errors (``<stdin>:LINE: ...``); a file named ``-`` is given by another path to
it (``$PWD/-``: ``./-`` is ``-`` once it is a path).
Stricter than trec_eval, so that nothing is silently misread: a score or grade must be a whole
number token (``1_0`` is refused where Python's float reads 10 and C's atof 1; NaN is refused), a
carriage return inside a line (not part of a CRLF line end) is refused, as are ids that are not
UTF-8, a NUL byte (trec_eval stops reading at it) and a (query, document) pair given twice. Every
refusal names the file, the line and the id.

Runs are read in one compiled pass (:mod:`harness.formats.native`; column-wise by pyarrow.csv,
:mod:`harness.formats.columnar`, where it is not built); a file that reader does not take exactly is
read line by line here, which accepts it or names the bad line.

BEIR qrels have one reader, :func:`read_beir_qrels` (``harness evaluate`` and the BEIR folder loader,
``harness.datasets.beir.load_qrels_tsv``, both call it): plain files (tab-separated, LF or CRLF ends)
are read column-wise, anything else line by line, which accepts it or names the bad line.

Runs are written in canonical order with real ranks (1-based) and scores at round-trip precision
(``repr`` of the float), so reading a written run back gives exactly the same floats and ties; what
would not read back the same is refused (ValueError): an id that is empty or holds ASCII whitespace
or a NUL (trec_eval reads ids as C strings, cut at the NUL), a query id starting with ``#`` (a comment
line). :func:`check_writable_ids` is that one rule, also applied before indexing when a run file will
be written (``harness.experiment.run_experiment``).
"""

from __future__ import annotations

import codecs
import gzip
import mmap
import re
import zlib
from array import array
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import IO, Iterator

import numpy as np

from harness.atomic import atomic_open
from harness.columns import IdColumn, arrow_int64, arrow_strings, is_utf8_text, object_array
from harness.errors import InputError
from harness.qrels import Qrels
from harness.run import Run


def _open_text(path: Path, what: str) -> IO[str]:
    try:
        if path.suffix == ".gz":
            return gzip.open(path, "rt", encoding="utf-8")
        return open(path, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {what} file: {exc.strerror}", path) from None


def _lines(path: Path, what: str) -> Iterator[tuple[int, str]]:
    handle = _open_text(path, what)
    try:
        with handle:
            yield from enumerate(handle, 1)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:  # (zlib.error: a corrupt .gz)
        raise InputError(f"cannot read {what} file: {exc}", path) from None


STDIN = "-"  # the input path that is standard input (--run -, --qrels -)
STDIN_NAME = Path("<stdin>")  # how errors name it


def is_stdin(path) -> bool:
    """Whether an input path is ``-``, standard input."""
    return isinstance(path, (str, Path)) and str(path) == STDIN


def _stdin_bytes(what: str) -> bytes:
    """Standard input's bytes, read whole (once: a second reading finds it at its end)."""
    import sys

    stream = getattr(sys.stdin, "buffer", sys.stdin)
    if stream is None:
        raise InputError(f"cannot read {what} file: there is no standard input", STDIN_NAME)
    try:
        data = stream.read()
    except OSError as exc:
        raise InputError(f"cannot read {what} file: {exc.strerror or exc}", STDIN_NAME) from None
    return data.encode("utf-8") if isinstance(data, str) else data  # (a text-only stream: an embedding's)


def _source(path: str | Path, raw: bytes | None, what: str) -> tuple[Path, bytes | None]:
    """(the path that errors name, the bytes as stored when already read): for ``-``, ``<stdin>`` and
    standard input's bytes (``raw`` when the caller read them: :func:`read_once`); else ``path`` and ``raw``."""
    if is_stdin(path):
        return STDIN_NAME, raw if raw is not None else _stdin_bytes(what)
    return Path(path), raw


def _read_bytes(path: Path, what: str, raw: bytes | None = None) -> bytes:
    """The whole file (decompressed when ``.gz``); from ``raw``, its bytes as stored, when already
    read (:func:`read_once`)."""
    try:
        if path.suffix == ".gz":
            if raw is not None:
                return gzip.decompress(raw)
            with gzip.open(path, "rb") as handle:
                return handle.read()
        return path.read_bytes() if raw is None else raw
    except (OSError, EOFError, zlib.error) as exc:  # (zlib.error: a corrupt .gz)
        raise InputError(f"cannot read {what} file: {getattr(exc, 'strerror', None) or exc}", path) from None


def read_once(path: str | Path, what: str) -> bytes | None:
    """The bytes, as stored, of an input that can be read only once (a pipe: ``--run <(zcat r.gz)``),
    read now so that one reading both hashes and parses them (pass them to :func:`read_run` or
    :func:`read_qrels` as ``raw``: a second reader of a pipe, such as a checksum taken beside the
    parse, would take part of its bytes and leave the parse the rest); None for a regular file or a
    folder (read where it lies) and for a path that cannot be looked at (the reader names it). ``-`` is
    standard input, read here."""
    import stat

    if is_stdin(path):
        return _stdin_bytes(what)
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what} file: {exc.strerror}", path) from None


def line_of(path: str | Path, column: int, value: str, raw: bytes | None = None) -> int | None:
    """The number of the first line of a run or qrels file whose ``column`` is ``value``, the line an
    error about an id names (``harness rerank``: a document missing from the corpus). Lines are read as
    :func:`read_run` reads them (columns split on ASCII whitespace, ``#`` lines skipped, a ``.gz`` file
    decompressed, a byte-order mark dropped), streamed; ``raw``: the bytes as stored when already read
    (standard input, a pipe: :func:`read_once`). None when no line has it, or when the file is no
    regular file and ``raw`` is not given: a pipe is never opened again (a named pipe would wait for
    a writer for good; standard input and ``<(command)`` are at their end)."""
    import io
    import stat

    path, target = Path(path), value.encode("utf-8")
    try:
        if raw is not None:
            handle = io.BytesIO(gzip.decompress(raw) if path.suffix == ".gz" else raw)
        elif is_stdin(path) or not stat.S_ISREG(path.stat().st_mode):
            return None
        else:
            handle = gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")
        with handle:
            for number, line in enumerate(handle, 1):
                if number == 1 and line.startswith(codecs.BOM_UTF8):
                    line = line[len(codecs.BOM_UTF8):]
                parts = line.split()
                if len(parts) > column and parts[column] == target and not parts[0].startswith(b"#"):
                    return number
    except (OSError, EOFError, zlib.error):
        return None
    return None


def _bodies(data: bytes, path: Path, first: int = 1) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its LF or CRLF end) of every line, numbered from ``first``; a lone CR
    is refused."""
    for number, line in enumerate(data.split(b"\n"), first):
        body = line[:-1] if line.endswith(b"\r") else line
        if b"\r" in body:
            raise InputError("carriage return inside a line (a lone CR; trec_eval reads it as a space, "
                             "Python as a line break): fix the line ends", path, number)
        yield number, body


def _fields(data: bytes, path: Path, first: int = 1) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, counted from ``first``, and columns) of every line that is neither blank nor a
    ``#`` comment.

    Columns are split on ASCII whitespace only (``bytes.split``), as C's isspace in trec_eval.
    """
    for number, body in _bodies(data, path, first):
        parts = body.split()
        if parts and not parts[0].startswith(b"#"):
            yield number, parts


def _refuse_nul(data: bytes, path: Path) -> None:
    """Refuse a NUL byte anywhere in a TREC run or qrels file, naming its line and column. trec_eval
    reads the file as C text, which a NUL ends: 9.x and 10.x stop reading the file at a NUL that starts
    a line (the lines after it are lost) and crash on one inside a line, and an id holding one would be
    read cut there (the writer refuses such ids). A NUL in a text file is damage (a block of zero bytes
    left by an interrupted write), never an id."""
    _refuse_gzip(data, path)
    at = data.find(b"\x00")
    if at >= 0:
        column = len(data[data.rfind(b"\n", 0, at) + 1:at].decode("utf-8", "replace")) + 1
        raise InputError(f"NUL byte at column {column}: not text (trec_eval stops reading at a NUL; "
                         "a damaged file?)", path, _count_lf(data, at) + 1)


GZIP_MAGIC = b"\x1f\x8b"


def _refuse_gzip(data: bytes, path: Path) -> None:
    """Refuse gzip data under a name without ``.gz`` (a renamed .gz, or one read through a pipe), on line 1.
    Its magic bytes 1f 8b are never UTF-8 text (8b is a continuation byte), so no text file is refused;
    without this the BEIR qrels reader named what it met first ("carriage return inside a line")."""
    if data[:2] == GZIP_MAGIC:
        raise InputError("gzip-compressed data, not text: only a file named .gz is decompressed (through a "
                         "pipe, decompress it: <(zcat FILE.gz))", path, 1)


def _text(token: bytes, path: Path, number: int) -> str:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{token!r} is not UTF-8 text", path, number) from None


# A whole number token, as the columnar reader (Arrow) accepts it; never Python's ``1_0`` or `` 1``.
_NUMBER = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.IGNORECASE)


def _number(token: bytes, what: str, path: Path, number: int, id: str) -> float:
    if not _NUMBER.fullmatch(token):
        raise InputError(f"{what} {token.decode('utf-8', 'replace')!r} is not a number", path, number, id)
    value = float(token)
    if value != value:
        raise InputError(f"{what} is NaN", path, number, id)
    return value


def _grade(token: bytes, path: Path, number: int, query_id: str, doc_id: str) -> float:
    """A qrels grade: a number token (the grammar of run scores), not NaN, finite (an infinite gain
    makes nDCG inf / inf = NaN). Every refusal is ``FILE:LINE: grade 'x' for document 'd' is ... (id 'q')``,
    the form of a conflicting grade's (:func:`_add_judgment`), in TREC and BEIR qrels alike."""
    what = f"grade {token.decode('utf-8', 'replace')!r} for document {doc_id!r}"
    if not _NUMBER.fullmatch(token):
        raise InputError(f"{what} is not a number", path, number, query_id)
    value = float(token)
    if value != value:
        raise InputError(f"{what} is NaN", path, number, query_id)
    if value in (float("inf"), float("-inf")):
        raise InputError(f"{what} is not finite", path, number, query_id)
    return value


# --------------------------------------------------------------------------- runs
def _check_token(value: str, what: str) -> None:
    """A topics TSV id (:func:`write_topics_tsv`): non-empty, without whitespace (its reader strips
    Unicode whitespace from an id's ends)."""
    if not value or any(c.isspace() for c in value):
        raise ValueError(f"{what} {value!r} cannot be written to a TREC file (empty or contains whitespace)")


@contextmanager
def _atomic_text(path: str | Path) -> Iterator[IO[str]]:
    """``atomic_open(path)`` (UTF-8 text), gzip-compressed when the name ends in ``.gz``: the readers
    decompress such a file, so a run or qrels written as ``out.trec.gz`` reads back (it was plain text
    under a ``.gz`` name, which every reader, this project's included, refuses as not gzipped)."""
    if Path(path).suffix != ".gz":
        with atomic_open(path) as handle:
            yield handle
        return
    import io

    with atomic_open(path, "wb", encoding=None) as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as zipped:
            with io.TextIOWrapper(zipped, encoding="utf-8") as handle:
                yield handle


# What a run without a single entry is written as when no header line precedes it: a file of comment
# lines (which reads back as a run retrieving nothing) rather than an empty one (refused by the reader,
# as trec_eval 9 and 10 refuse it).
EMPTY_RUN_LINE = "# empty run: no query retrieved any document"


def write_run(run: Run, path: str | Path, tag: str = "harness", header: list[str] | None = None) -> None:
    """Write ``run`` as a 6-column TREC run (canonical order, real ranks, repr scores), atomically,
    after the ``#`` comment lines of ``header`` (e.g. the ir_metadata header of the result); gzipped
    when ``path`` ends in ``.gz``. A run with no entry at all (every query retrieved nothing) is written
    as its header, or as :data:`EMPTY_RUN_LINE` when there is none, so that the file is never empty:
    :func:`read_run` reads it back as a run retrieving nothing (every judged query scores 0), and so
    does ``trec_eval -c`` (10.x; 9.x refuses ``#`` lines)."""
    run = run.canonical()
    with _atomic_text(path) as handle:
        lines = list(header or ()) or ([EMPTY_RUN_LINE] if not len(run) else [])
        handle.writelines(line + "\n" for line in lines)
        write_run_to(run, handle, tag)


_BREAKS = " \t\n\x0b\x0c\r"  # ASCII whitespace: what splits a line's columns when it is read back
_UNWRITABLE = _BREAKS + "\x00"  # and NUL: trec_eval reads ids as C strings, which end at a NUL
_UNWRITABLE_BYTES = np.zeros(256, dtype=bool)
_UNWRITABLE_BYTES[list(_UNWRITABLE.encode())] = True


def unwritable_ids(ids, first_column: bool = False) -> np.ndarray:
    """Positions (int64, ascending) of the ids a TREC file cannot hold as they are: an id that is empty,
    holds a lone surrogate (a str that is no Unicode text: no UTF-8 file holds it), or holds ASCII whitespace (``q Q0 d 1 1 5.0 t`` is read as the id ``d`` scored 1, its rank) or a
    NUL (trec_eval reads ids as C strings, cut at the NUL); in the line's ``first_column`` (query ids)
    also one starting with ``#`` (the line is read as a comment). Unicode spaces (U+00A0) are no
    break: the readers keep them inside an id.

    ``ids``: an :class:`~harness.columns.IdColumn`, a null-free Arrow string (or chunked) array, or
    str values. Arrow ids are scanned in their UTF-8 buffers at once (1M ids: a few ms); str values
    by C-speed substring tests, looked at one by one only when one of them is bad."""
    if isinstance(ids, IdColumn):
        return _unwritable_in_buffers(*ids.buffers(), first_column)
    if type(ids).__module__.startswith("pyarrow"):
        import pyarrow as pa

        from harness.columns import string_buffers

        if isinstance(ids, pa.ChunkedArray):
            found, start = [np.zeros(0, dtype=np.int64)], 0
            for chunk in ids.chunks:
                found.append(unwritable_ids(chunk, first_column) + start)
                start += len(chunk)
            return np.concatenate(found)
        return _unwritable_in_buffers(*string_buffers(ids), first_column)
    values = ids.tolist() if isinstance(ids, np.ndarray) else list(ids)
    text = "".join(values)
    if all(values) and is_utf8_text(text) and not any(c in text for c in _UNWRITABLE) and not (
            first_column and "\n#" in "\n" + "\n".join(values)):  # (no id holds a LF here)
        return np.zeros(0, dtype=np.int64)
    return np.array([i for i, v in enumerate(values) if _why_unwritable(v, first_column)], dtype=np.int64)


def _unwritable_in_buffers(offsets: np.ndarray, data, first_column: bool) -> np.ndarray:
    """:func:`unwritable_ids` of a string array given as (offsets, UTF-8 data)."""
    start, end = int(offsets[0]), int(offsets[-1])
    text = memoryview(data)[start:end].tobytes() if end > start else b""
    lengths = np.diff(offsets)
    hashes = first_column and b"#" in text
    if lengths.all() and not hashes and not any(c in text for c in _UNWRITABLE.encode()):
        return np.zeros(0, dtype=np.int64)  # (the usual case: one C scan per byte value)
    breaks = np.flatnonzero(_UNWRITABLE_BYTES[np.frombuffer(text, dtype=np.uint8)]) + start
    bad = np.union1d(np.searchsorted(offsets, breaks, side="right") - 1, np.flatnonzero(lengths == 0))
    if hashes:
        firsts = np.flatnonzero(lengths > 0)
        leading = np.frombuffer(text, dtype=np.uint8)[offsets[firsts] - start] == ord("#")
        bad = np.union1d(bad, firsts[leading])
    return bad.astype(np.int64, copy=False)


def _why_unwritable(value: str, first_column: bool = False) -> str | None:
    """Why ``value`` cannot be a TREC file's id (the rule of :func:`unwritable_ids`), or None."""
    if not value:
        return "empty"
    if not is_utf8_text(value):
        return "holds a lone surrogate: not valid Unicode text, which a UTF-8 file cannot hold"
    if "\x00" in value:
        return "contains NUL: trec_eval would cut the id there"
    if any(c in value for c in _BREAKS):
        return "contains whitespace"
    if first_column and value.startswith("#"):
        return "a line starting with '#' is read as a comment"
    return None


def unwritable_message(value: str, what: str, first_column: bool = False) -> str:
    """The one-line refusal of an id :func:`unwritable_ids` found: ``document id 'a b' cannot be
    written to a TREC file (contains whitespace)``."""
    return f"{what} {value!r} cannot be written to a TREC file ({_why_unwritable(value, first_column)})"


def check_writable_ids(ids, what: str, first_column: bool = False) -> None:
    """ValueError naming the first of ``ids`` that a TREC file cannot hold (:func:`unwritable_ids`);
    the writers' check, and the one run before indexing when a run file will be written."""
    bad = unwritable_ids(ids, first_column)
    if len(bad):
        raise ValueError(unwritable_message(_id_at(ids, int(bad[0])), what, first_column))


def _id_at(ids, index: int) -> str:
    if isinstance(ids, IdColumn):
        return ids.array[index].as_py()
    value = ids[index]
    return value.as_py() if hasattr(value, "as_py") else str(value)


def _check_doc_ids(run: Run) -> None:
    """Refuse a document id of the run that would not be read back whole (:func:`unwritable_ids`).
    The vocabulary is scanned at once (a corpus's ids in their Arrow buffers); only when some id is
    bad are the run's entries looked at, so that a bad id the run does not retrieve is no error."""
    bad = unwritable_ids(run.vocab_source)
    if len(bad):
        used = np.flatnonzero(np.isin(run.doc_codes, bad))
        if len(used):
            raise ValueError(unwritable_message(run.doc_vocab[run.doc_codes[used[0]]], "document id"))


_WRITE_BLOCK = 1 << 17  # run entries formatted per block (whole queries): ~6 MB of text, ~60 MB of Arrow columns


def write_run_to(run: Run, handle: IO[str], tag: str = "harness") -> None:
    """Write ``run`` (taken in its present order; pass a canonical run) to an open text handle:
    ``qid Q0 docid rank repr(score) tag`` per entry, formatted column-wise in blocks of whole queries."""
    check_writable_ids([tag], "run tag")
    check_writable_ids(run.query_ids, "query id", first_column=True)
    _check_doc_ids(run)
    raw = getattr(handle, "buffer", None) if (getattr(handle, "encoding", "") or "").lower() in ("utf-8", "utf8") else None
    from harness.formats import native

    run_lines = native.run_lines_function(run) if native.available() else _run_lines
    offsets = run.offsets
    first = 0
    while first < run.n_queries:
        last = max(int(np.searchsorted(offsets, offsets[first] + _WRITE_BLOCK, side="right")) - 1, first + 1)
        last = min(last, run.n_queries)
        if offsets[last] > offsets[first]:
            lines = run_lines(run, first, last, tag)
            if raw is None:
                handle.write(bytes(lines).decode("utf-8"))
            else:  # a UTF-8 text file: its bytes go straight to the file's buffer
                handle.flush()
                raw.write(lines)
        first = last


def _run_lines(run: Run, first: int, last: int, tag: str) -> memoryview:
    """The TREC lines of queries ``first:last`` as UTF-8 (the Python path; the compiled one is
    :func:`harness.formats.native.run_lines_function`, the same bytes): the columns are Arrow strings
    joined in C; each distinct score (by bit pattern, so -0.0 stays apart from 0.0) is ``repr``-ed once."""
    import pyarrow as pa
    import pyarrow.compute as pc

    start, end = int(run.offsets[first]), int(run.offsets[last])
    lengths = np.diff(run.offsets[first:last + 1])
    query_col = arrow_strings(run.query_ids[first:last]).take(arrow_int64(np.repeat(np.arange(last - first), lengths)))
    doc_col = arrow_strings(run.doc_vocab[run.doc_codes[start:end]])
    ranks = np.arange(1, end - start + 1) - np.repeat(run.offsets[first:last] - start, lengths)
    bits, at = np.unique(np.ascontiguousarray(run.scores[start:end]).view(np.int64), return_inverse=True)
    score_text = arrow_strings(list(map(repr, bits.view(np.float64).tolist())))  # repr round-trips
    q0, space, end_tag, joiner = arrow_strings([" Q0 ", " ", f" {tag}\n", ""])  # scalars (no pa.scalar: pandas)
    lines = pc.binary_join_element_wise(query_col, q0, doc_col, space, arrow_int64(ranks).cast(pa.string()), space,
                                        score_text.take(arrow_int64(at.ravel())), end_tag, joiner)
    width = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    bounds = np.frombuffer(lines.buffers()[1], width)[lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[bounds[0]:bounds[-1]]


def read_run(path: str | Path, raw: bytes | None = None) -> Run:
    """Read a TREC run into a canonical :class:`Run`; errors name the file and line (see the module doc).
    ``raw``: the file's bytes as stored, when already read (a pipe: :func:`read_once`).

    The one place that picks the reader: the compiled one-pass reader when it is built
    (:mod:`harness.formats.native`), else pyarrow.csv (:mod:`harness.formats.columnar`); a file the
    fast reader does not take exactly is read line by line, which accepts it or names the bad line
    (where the compiled reader says which line or repeated pair it gave up on, only that line is read
    again: :func:`_refuse_at`).

    A file of only blank and ``#`` lines (what :func:`write_run` writes for a run in which no query
    retrieved anything) is a run retrieving nothing: every judged query scores 0, as ``trec_eval -c``
    (10.x) scores it. A file without a single byte is refused (InputError), as trec_eval 9 and 10
    refuse it: no harness writer makes one (see :func:`_empty_run`).
    """
    from harness.formats import native

    from harness.formats.columnar import read_run_columns

    path, raw = _source(path, raw, "run")
    compiled = native.available()
    with _mapped(path, "run") if raw is None else nullcontext(_read_bytes(path, "run", raw)) as data:
        data = _without_bom(data)
        if compiled:
            run = native.read_run_native(data, locate=True)
            if isinstance(run, native.Refused):
                _refuse_at(data, path, run)  # (raises, unless the compiled reader was stricter)
                run = None
        else:  # (a .gz run's buffer as it is: bytes() of it would be a second copy; an mmap as bytes)
            run = read_run_columns(lambda: data if isinstance(data, (bytes, bytearray)) else bytes(data))
        return run if run is not None else read_run_lines(bytes(data), path)


def _line_at(data, at: int) -> tuple[int, bytes]:
    """(line number, bytes) of the line holding byte ``at`` (without its LF)."""
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    return _count_lf(data, start) + 1, bytes(data[start:len(data) if end < 0 else end])


def _count_lf(data, end: int) -> int:
    """The LF bytes before ``end`` in bytes or an mmap (which has no ``count``), 16 MB at a time."""
    step = 1 << 24
    return sum(data[at:min(at + step, end)].count(b"\n") for at in range(0, end, step))


def _refuse_at(data, path: Path, refused) -> None:
    """The line reader's refusal of the file, found where the compiled reader gave up
    (:class:`harness.formats.native.Refused`) instead of by reading every line in Python (a bad line
    at line 9,999,999 of a 10M-line run took 87 s and 2 GB that way): the same error, since every line
    the compiled reader took is one the line reader takes. A NUL anywhere comes first, as there; then
    the refused line, read by the line reader's rules; or the repeated pair, as
    :func:`_refuse_duplicates` names it. Returns when the line reader would take that line (the file
    is then read line by line)."""
    _refuse_nul(data, path)
    number, line = _line_at(data, refused.at)
    if refused.first < 0:
        for number, parts in _fields(line, path, number):
            _run_entry(parts, path, number)
        return
    first, _ = _line_at(data, refused.first)
    (_, parts), = _fields(line, path, number)
    qid, doc_id, _ = _run_entry(parts, path, number)
    raise _twice(qid, doc_id, first, number, path)


def _without_bom(data) -> bytes:
    """The bytes after a leading UTF-8 byte-order mark (an editor's; trec_eval would read it as part of
    the first query id, whose first line would then be filed under another query), which is dropped
    as the JSONL and BEIR qrels readers drop it. Line numbers are unchanged (it is on line 1)."""
    return bytes(data[len(codecs.BOM_UTF8):]) if data[:len(codecs.BOM_UTF8)] == codecs.BOM_UTF8 else data


_GZIP_CHUNK = 1 << 20  # bytes decompressed at a time by _decompressed


def _decompressed(path: Path, what: str) -> bytearray:
    """A ``.gz`` file's bytes, decompressed 1 MB at a time into one growing buffer (grown in place: a
    large block is remapped, not copied), so that the peak is about the decompressed size; ``GzipFile.read()``
    joins its chunks into a copy, twice that (a 10M-line run of 862 MB: 1.72 GB peak RSS for
    ``harness evaluate`` where the plain file took 1.36 GB). Errors as :func:`_read_bytes` words them."""
    data = bytearray()
    try:
        with gzip.open(path, "rb") as handle:
            while chunk := handle.read(_GZIP_CHUNK):
                data += chunk
    except (OSError, EOFError, zlib.error) as exc:  # (zlib.error: a corrupt .gz)
        raise InputError(f"cannot read {what} file: {getattr(exc, 'strerror', None) or exc}", path) from None
    return data


@contextmanager
def _mapped(path: Path, what: str) -> Iterator:
    """The file's bytes without a copy (a read-only memory map; an empty file is read); a ``.gz`` file
    decompressed into one buffer (:func:`_decompressed`), which the compiled reader and the pyarrow
    reader (:func:`harness.formats.columnar.read_run_columns`) both read in place."""
    if path.suffix == ".gz":
        yield _decompressed(path, what)
        return
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read {what} file: {exc.strerror}", path) from None
    with handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # empty file, or a pipe
            yield _read_bytes(path, what)
            return
        try:
            yield mapped
        finally:
            mapped.close()


def read_run_lines(data: bytes, path: Path) -> Run:
    """The line-by-line reader: the reference grammar, and the one that names every bad line."""
    query_index: dict[str, int] = {}
    vocab: dict[str, int] = {}
    entry_query = array("q")
    codes = array("q")
    line_numbers = array("q")
    scores = array("d")
    _refuse_nul(data, path)
    for number, parts in _fields(data, path):
        qid, doc_id, score = _run_entry(parts, path, number)
        scores.append(score)
        entry_query.append(query_index.setdefault(qid, len(query_index)))
        codes.append(vocab.setdefault(doc_id, len(vocab)))
        line_numbers.append(number)
    if not codes:
        return _empty_run(data, path)
    entry_q = np.frombuffer(entry_query, dtype=np.int64)
    code_arr = np.frombuffer(codes, dtype=np.int64)
    _refuse_duplicates(entry_q, code_arr, np.frombuffer(line_numbers, dtype=np.int64), query_index, vocab, path)
    order = np.argsort(entry_q, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(entry_q, minlength=len(query_index)))])
    run = Run.from_arrays(list(query_index), offsets, code_arr[order],
                          np.frombuffer(scores, dtype=np.float64)[order], list(vocab), vocab)
    return run.canonical()


def _run_entry(parts: list[bytes], path: Path, number: int) -> tuple[str, str, float]:
    """(query id, document id, score) of a run line's columns, or the line's refusal."""
    if len(parts) < 6:
        raise InputError(f"expected 6 columns (qid Q0 docid rank score tag), got {len(parts)}", path, number)
    qid, doc_id = _text(parts[0], path, number), _text(parts[2], path, number)
    return qid, doc_id, _number(parts[4], "score", path, number, doc_id)


def _twice(qid: str, doc_id: str, first: int, second: int, path: Path) -> InputError:
    return InputError(f"document retrieved twice for query {qid!r} (first on line {first})", path, second, doc_id)


def _empty_run(data: bytes, path: Path) -> Run:
    """The run of a file without one entry: a run retrieving nothing, in which every judged query
    scores 0 (``trec_eval -c``, which scores a file of blank and ``#`` lines so: 10.x; 9.x refuses
    ``#`` lines and stops on an all-blank file with "No queries with both results and relevance info");
    the harness writes such a run as a ``#`` line (:data:`EMPTY_RUN_LINE`) or its ir_metadata header.
    A file without a single byte (after a byte-order mark) is refused as trec_eval 9 and 10 refuse it
    ("Cannot read results file"): no writer makes one, a failed ``> run.trec`` redirection does."""
    if not data:
        raise InputError("the run file is empty, which trec_eval refuses too (a run that retrieved "
                         "nothing is written as a '#' comment line)", path)
    return Run.from_arrays([], np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0), [],
                           {}, vocab_sorted=True)


def _refuse_duplicates(entry_q: np.ndarray, codes: np.ndarray, lines: np.ndarray, query_index: dict,
                       vocab: dict, path: Path) -> None:
    """A (query, document) pair twice is an error naming the first repeated line (vectorized check)."""
    keys = entry_q * max(len(vocab), 1) + codes
    order = np.argsort(keys, kind="stable")  # equal keys keep file order
    repeats = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if not repeats.size:
        return
    later = order[repeats + 1]
    pick = int(np.argmin(lines[later]))
    # With the smallest repeated line picked, its predecessor in the stable order is the first occurrence.
    second, first = int(later[pick]), int(order[repeats[pick]])
    qid = next(q for q, i in query_index.items() if i == entry_q[second])
    doc_id = next(d for d, i in vocab.items() if i == codes[second])
    raise _twice(qid, doc_id, int(lines[first]), int(lines[second]), path)


# --------------------------------------------------------------------------- qrels
def read_qrels(path: str | Path, raw: bytes | None = None) -> Qrels:
    """Read TREC (``qid iter docid grade``) or BEIR tsv (``query-id corpus-id score``) qrels; ``raw``:
    the file's bytes as stored, when already read (a pipe: :func:`read_once`)."""
    path, raw = _source(path, raw, "qrels")
    data = _without_bom(_read_bytes(path, "qrels", raw))
    _refuse_gzip(data, path)
    first = next((parts for _, parts in _fields(data, path)), [])
    if len(first) == 3:
        return read_beir_qrels(path, data)
    return read_trec_qrels(path, data)


def read_beir_qrels(path: str | Path, data: bytes | None = None) -> Qrels:
    """Read BEIR tsv qrels (``query-id<TAB>corpus-id<TAB>score``, a header line optional): the one
    reader of them (``harness evaluate``; ``harness.datasets.beir.load_qrels_tsv`` for a BEIR folder).

    From the file's bytes (``.gz`` decompressed; a pipe read once; ``data`` when already read), by
    the grammar of the TREC qrels reader: a leading UTF-8 byte-order mark dropped; LF or CRLF line
    ends (a lone CR refused); blank lines and ``#`` comment lines skipped; a line not UTF-8 refused,
    naming its first bad byte; columns split on tabs (each stripped of ASCII whitespace), or on ASCII
    whitespace where the tabs do not give 3 non-empty ones (Unicode spaces stay inside ids); the first
    other line is the header when its score is no number and holds no digit (:func:`_is_beir_header`);
    a grade a number token, not NaN, finite (:func:`_grade`); a pair judged twice with different
    grades refused (:func:`_add_judgment`); at least one judgment. Every refusal names the file and
    line, and the query and document where the line has them.

    A plain file (nothing but tab-separated non-empty columns, LF or CRLF ends) of at least
    :data:`COLUMNS_MIN_BYTES` is read column-wise (:func:`_beir_qrels_columns`; 1M rows ~1 s, the line
    reader ~5 s), anything else, smaller, or refused there line by line (:func:`_beir_qrels_lines`),
    which accepts it or names the bad line. (The same judgments either way; the column path pays
    ~0.06 s once to import pyarrow.compute, more than the line reader takes on a small file.)
    """
    path, data = _source(path, data, "qrels")
    data = _without_bom(_read_bytes(path, "qrels") if data is None else data)
    _refuse_gzip(data, path)
    qrels = _beir_qrels_columns(data) if len(data) >= COLUMNS_MIN_BYTES else None
    return qrels if qrels is not None else _beir_qrels_lines(data, path)


def _is_beir_header(score: bytes) -> bool:
    """Whether the first line is BEIR's header (``query-id corpus-id score``): its score is no number
    token and holds no digit (Unicode digits too), so a mistyped first grade (``1_0``, ``１``) is
    refused rather than skipped as a header."""
    return not _NUMBER.fullmatch(score) and not any(c.isdigit() for c in score.decode("utf-8", "replace"))


def _utf8_line(body: bytes, path: Path, number: int) -> None:
    """Refuse a line that is not UTF-8, naming its first bad byte and that byte's column (in characters)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(body[:exc.start].decode("utf-8")) + 1
        raise InputError(f"not valid UTF-8 (byte 0x{body[exc.start]:02x} at column {column})", path, number) from None


def _beir_qrels_lines(data: bytes, path: Path) -> Qrels:
    """The line-by-line reader of :func:`read_beir_qrels`: the reference grammar, naming every bad line."""
    rows: dict[tuple[str, str], float] = {}
    lines: dict[tuple[str, str], int] = {}
    header = True  # the first line may be the header ("query-id corpus-id score")
    for number, body in _bodies(data, path):
        parts = body.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        if not body.isascii():
            _utf8_line(body, path, number)
        tabbed = [part.strip() for part in body.split(b"\t")]
        if len(tabbed) == 3 and all(tabbed):
            parts = tabbed
        if len(parts) != 3:
            raise InputError(f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(parts)}",
                             path, number)
        first, header = header, False
        if first and _is_beir_header(parts[2]):
            continue
        qid, doc_id = parts[0].decode("utf-8"), parts[1].decode("utf-8")
        _add_judgment(rows, lines, qid, doc_id, _grade(parts[2], path, number, qid, doc_id), path, number)
    if not rows:
        raise InputError("no judgments in qrels file", path)
    return Qrels.from_rows((q, d, g) for (q, d), g in rows.items())


COLUMNS_MIN_BYTES = 1 << 18  # BEIR qrels files this large (~10k rows) or larger are read column-wise

# Bytes that send a BEIR qrels file to the line reader: whitespace other than tab and LF, a blank or
# comment line, an empty column (the CRLF ends are made LF first).
_NOT_PLAIN = (b" ", b"\x0b", b"\x0c", b"\r", b"\n\n", b"\n#", b"\t\t", b"\t\n", b"\n\t")


def _beir_qrels_columns(data: bytes) -> Qrels | None:
    """:func:`read_beir_qrels` of a plain file, column-wise (pyarrow.csv, numpy); None when the file
    is not plain or anything in it is refused (the line reader then names the line).

    Plain: LF or CRLF ends, every line 3 non-empty tab-separated columns and nothing but tabs as
    whitespace, no blank or ``#`` line. So each column is exactly what the line reader's tab split
    gives; the header is decided by the same rule (:func:`_is_beir_header`), each distinct grade token
    is checked and read by the same function (:func:`_grade`), and a pair given twice is kept once
    (first line's place) when its grades are the same bits, else left to the line reader; the
    judgments come out in the line reader's order (first occurrence) with the same values."""
    if b"\r" in data:
        if data.count(b"\r") != data.count(b"\r\n"):
            return None
        data = data.replace(b"\r\n", b"\n")
    if data[:1] in (b"", b"\t", b"\n", b"#") or data.endswith(b"\t") or any(c in data for c in _NOT_PLAIN):
        return None
    first = data[:data.find(b"\n")] if b"\n" in data else data
    columns = first.split(b"\t")
    if len(columns) != 3:
        return None
    if _is_beir_header(columns[2]):
        try:
            first.decode("utf-8")
        except UnicodeDecodeError:
            return None
        data = data[len(first) + 1:]
    if not data or data.startswith(codecs.BOM_UTF8):  # (pyarrow.csv would drop a byte-order mark)
        return None
    table = _tsv_columns(data)
    if table is None:
        return None
    grades = _distinct_grades(table.column("g"))
    if grades is None:
        return None
    values, grade_codes = grades
    queries, query_codes = _dictionary(table.column("q"))
    docs, doc_codes = _dictionary(table.column("d"))
    keep = _first_of_repeated_pairs(query_codes, doc_codes, len(docs), values.view(np.int64)[grade_codes])
    if keep is None:
        return None
    if keep is not True:
        query_codes, doc_codes, grade_codes = query_codes[keep], doc_codes[keep], grade_codes[keep]
    # (str ids of an Arrow string column, grades read by _grade, each pair once: built without checking again)
    return Qrels._checked(object_array(queries)[query_codes], object_array(docs)[doc_codes], values[grade_codes])


def _tsv_columns(data: bytes):
    """The three tab-separated string columns ``q``, ``d``, ``g`` of ``data`` (no header), or None
    when pyarrow.csv refuses it (uneven columns, bytes that are not UTF-8)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    string = pa.string()
    try:
        return pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(column_names=["q", "d", "g"], block_size=1 << 22),
            parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False, double_quote=False, escape_char=False,
                                            newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types={"q": string, "d": string, "g": string}, null_values=[],
                                                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except pa.ArrowInvalid:
        return None


def _dictionary(column) -> tuple[list[str], np.ndarray]:
    """(distinct values in first-seen order, int64 code of each row) of an Arrow string column."""
    encoded = column.combine_chunks().dictionary_encode()
    indices = encoded.indices
    codes = np.frombuffer(indices.buffers()[1], dtype=np.dtype(f"int{indices.type.bit_width}"))[indices.offset:indices.offset + len(indices)]
    return encoded.dictionary.to_pylist(), codes.astype(np.int64)


def _distinct_grades(column) -> tuple[np.ndarray, np.ndarray] | None:
    """(float64 value of each distinct grade token, code of each row), each token read by :func:`_grade`
    (a qrels file holds few distinct grades); None when one is refused."""
    tokens, codes = _dictionary(column)
    try:
        values = [_grade(token.encode("utf-8"), Path(), 0, "", "") for token in tokens]
    except InputError:
        return None
    return np.array(values, dtype=np.float64), codes


def _first_of_repeated_pairs(query_codes: np.ndarray, doc_codes: np.ndarray, n_docs: int, grade_bits: np.ndarray):
    """True when every (query, document) pair is given once; else the rows to keep (the first of each
    pair) when the repeats have the same grade bits, None when they differ (the line reader names the
    conflict, or keeps the last of two equal grades such as 0 and -0, as it does)."""
    keys = query_codes * max(n_docs, 1) + doc_codes
    order = np.argsort(keys, kind="stable")  # equal keys keep file order
    sorted_keys = keys[order]
    repeats = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if not repeats.size:
        return True
    if np.any(grade_bits[order[repeats]] != grade_bits[order[repeats + 1]]):
        return None
    keep = np.ones(len(keys), dtype=bool)
    keep[order[repeats + 1]] = False
    return keep


def read_trec_qrels(path: str | Path, data: bytes | None = None) -> Qrels:
    """Read 4-column TREC qrels; a pair judged twice with different grades is an error."""
    path, data = _source(path, data, "qrels")
    data = _without_bom(_read_bytes(path, "qrels") if data is None else data)
    rows: dict[tuple[str, str], float] = {}
    lines: dict[tuple[str, str], int] = {}
    _refuse_nul(data, path)
    for number, parts in _fields(data, path):
        if len(parts) != 4:
            raise InputError(f"expected 4 columns (qid iter docid grade), got {len(parts)}", path, number)
        qid, doc_id = _text(parts[0], path, number), _text(parts[2], path, number)
        _add_judgment(rows, lines, qid, doc_id, _grade(parts[3], path, number, qid, doc_id), path, number)
    if not rows:
        raise InputError("no judgments in qrels file", path)
    return Qrels.from_rows((q, d, g) for (q, d), g in rows.items())


def _add_judgment(rows: dict, lines: dict, query_id: str, doc_id: str, grade: float, path: Path, number: int) -> None:
    """Record one judgment; the same pair again with another grade is refused, naming both lines."""
    key = (query_id, doc_id)
    if key in rows and rows[key] != grade:
        raise InputError(f"conflicting grade for document {doc_id!r} (line {lines[key]} says {rows[key]:g})",
                         path, number, query_id)
    rows[key] = grade
    lines.setdefault(key, number)


def _grade_text(grade: float) -> str:
    return str(int(grade)) if float(grade).is_integer() else repr(float(grade))


def write_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write 4-column TREC qrels (``qid 0 docid grade``; integral grades as integers), atomically;
    gzipped when ``path`` ends in ``.gz``."""
    check_writable_ids(qrels.query_ids, "query id", first_column=True)
    check_writable_ids(qrels.doc_ids, "document id")
    with _atomic_text(path) as handle:
        for q, d, g in zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.grades.tolist()):
            if g != g or g in (float("inf"), float("-inf")):  # (read back, refused: see _grade)
                raise ValueError(f"grade {g!r} of document {d!r} cannot be written to a TREC file (not finite)")
            handle.write(f"{q} 0 {d} {_grade_text(g)}\n")


# --------------------------------------------------------------------------- topics
TOPIC_FIELDS = ("title", "desc", "narr")
_TAG = re.compile(r"<(/?)(top|num|title|desc|narr)>", re.IGNORECASE)
_PREFIXES = {"num": "Number:", "title": "Topic:", "desc": "Description:", "narr": "Narrative:"}


def read_topics(path: str | Path, field: str = "title"):
    """Read topics as :class:`~harness.datasets.corpus.Queries`: classic ``<top>`` files or ``qid<TAB>text``."""
    path = Path(path)
    head = "".join(line for _, line in zip(range(50), (line for _, line in _lines(path, "topics"))))
    if _TAG.search(head):
        return read_topics_trec(path, field)
    return read_topics_tsv(path)


def read_topics_tsv(path: str | Path):
    """``qid<TAB>text`` per line (Anserini's topics TSV); blank lines skipped, ids unique."""
    from harness.datasets.corpus import Queries

    path = Path(path)
    ids: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    for number, line in _lines(path, "topics"):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        qid, tab, text = line.partition("\t")
        qid, text = qid.strip(), text.strip()
        if not tab or not qid:
            raise InputError("expected 'query-id<TAB>text'", path, number)
        if not text:
            raise InputError("empty query text", path, number, qid)
        if qid in seen:
            raise InputError(f"duplicate query id (first on line {seen[qid]})", path, number, qid)
        seen[qid] = number
        ids.append(qid)
        texts.append(text)
    if not ids:
        raise InputError("no topics in file", path)
    return Queries(ids, texts)


def read_topics_trec(path: str | Path, field: str = "title"):
    """Classic TREC topics: ``<top> <num> Number: 301 <title> ... <desc> Description: ... </top>``.

    ``field`` picks the query text: ``title`` (default), ``desc`` or ``narr``. Closing tags such as
    ``</title>`` are optional; the ``Number:``/``Topic:``/``Description:``/``Narrative:`` labels are
    dropped and whitespace is collapsed.
    """
    from harness.datasets.corpus import Queries

    if field not in TOPIC_FIELDS:
        raise ValueError(f"topic field must be one of {', '.join(TOPIC_FIELDS)}, got {field!r}")
    path = Path(path)
    ids: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    current: dict[str, list[str]] | None = None
    active: str | None = None
    top_line = 0
    for number, line in _lines(path, "topics"):
        pos = 0
        for match in _TAG.finditer(line):
            if current is not None and active is not None:
                current[active].append(line[pos:match.start()])
            closing, tag = match.group(1), match.group(2).lower()
            pos = match.end()
            if tag == "top":
                if closing:
                    if current is None:
                        raise InputError("</top> without <top>", path, number)
                    _finish_topic(current, field, path, top_line, ids, texts, seen)
                    current, active = None, None
                else:
                    if current is not None:
                        raise InputError("<top> inside an unclosed <top>", path, number)
                    current, active, top_line = {f: [] for f in ("num", *TOPIC_FIELDS)}, None, number
            elif current is None:
                raise InputError(f"<{tag}> outside <top>", path, number)
            else:
                active = None if closing else tag
        if current is not None and active is not None:
            current[active].append(line[pos:])
    if current is not None:
        raise InputError("<top> never closed", path, top_line)
    if not ids:
        raise InputError("no <top> topics in file", path)
    return Queries(ids, texts)


def _finish_topic(parts: dict[str, list[str]], field: str, path: Path, line: int, ids: list[str],
                  texts: list[str], seen: dict[str, int]) -> None:
    def clean(name: str) -> str:
        text = " ".join(" ".join(parts[name]).split())
        prefix = _PREFIXES[name]
        if text.lower().startswith(prefix.lower()):
            text = text[len(prefix):].strip()
        return text

    qid = clean("num")
    if not qid:
        raise InputError("topic without <num>", path, line)
    text = clean(field)
    if not text:
        raise InputError(f"topic has no <{field}> text", path, line, qid)
    if qid in seen:
        raise InputError(f"duplicate topic number (first at line {seen[qid]})", path, line, qid)
    seen[qid] = line
    ids.append(qid)
    texts.append(text)


def write_topics_tsv(queries, path: str | Path) -> None:
    """Write ``qid<TAB>text`` lines (tabs and newlines inside a text become spaces), atomically."""
    with atomic_open(path) as handle:
        for qid, text in zip(queries.ids, queries.texts):
            _check_token(qid, "query id")
            handle.write(f"{qid}\t{' '.join(text.split())}\n")
