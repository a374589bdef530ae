"""JSONL files read column-wise: pyarrow.json over the (decompressed) byte stream, and a corpus stream
(:func:`stream_string_columns`) by the compiled parse of harness/native/jsonrows.c where it is built.

Chosen by measurement (one process per option on benchmarks/load_scale.py's 1M synthetic documents,
448 MB, 2 heavily shared cores; table in docs/datasets.md): pyarrow.json on the plain file 9.3 s; on a ``.gz`` decompressed by ``isal`` (igzip) 9.9 s,
zlib-ng 11.2 s, pyarrow's own CompressedInputStream 12.9 s, Python's gzip 14.6 s; orjson per line
28.4 s and 2.4x the peak memory. Decompression alone: isal 1.3 s, zlib-ng 1.4 s, gzip 5.0 s.

The fast parse accepts a file only when every ``fields`` value is a JSON string or null (other
keys are ignored unparsed into columns); anything else (a malformed line, a number where a string
belongs, an invalid UTF-8 byte) makes :func:`read_string_columns` return None, and the caller
falls back to its line-by-line scan, which either names the bad line or converts the values as it
always did. Error paths may be slow; the common path is not.

pyarrow.json (26.0) dereferences a null pointer (SIGSEGV: the process dies) when a block it parses
starts with a top-level ``null`` (a file whose first line is ``null``, or such a line right after a
block boundary; arrow issue 47409). The stream it reads is therefore wrapped
(:class:`_ObjectBlocks`): every line's first byte other than blanks must be ``{`` (one object per
line), else the fast parse is refused before that line reaches the parser, and the line scan names it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Iterator

from harness.errors import InputError

# pyarrow.json's block: 2 MiB parsed per task. Each block is one read of the decompressed stream, a new bytes
# object of that size, and larger reads land on fresh memory every time: 1M-document .gz corpus, whole cold
# loads, 5 alternated pairs: 16 MiB 1.83-2.58 s wall (system time 0.69-1.45 s), 2 MiB 1.71-1.80 s (0.27-0.35 s)
BLOCK_BYTES = 2 << 20
# A block must hold a whole line but for the part that runs on into the next block, so a file with a longer
# line (a document of several MiB) is parsed again with this block before it is left to the line scan
LARGE_BLOCK_BYTES = 64 << 20


def open_binary(path: Path) -> IO[bytes]:
    """The file's bytes, gunzipped (by isal's igzip when installed: ~4x Python's gzip) for ``.gz``."""
    if path.suffix != ".gz":
        return open(path, "rb")
    try:
        from isal import igzip
    except ImportError:  # pragma: no cover - isal is a dependency; plain gzip gives the same bytes
        return gzip.open(path, "rb")
    return igzip.open(path, "rb")


def read_errors() -> tuple[type[BaseException], ...]:
    """What reading a file raises when it cannot be read (a damaged ``.gz`` included: a truncated one's
    EOFError, a CRC's BadGzipFile, a corrupt deflate stream's zlib.error from Python's gzip, or isal's own
    error from igzip), each said as ``<file>: cannot read file: ...``, not a traceback."""
    import zlib

    try:
        from isal.isal_zlib import error as isal_error
    except ImportError:  # pragma: no cover - isal is a dependency
        return OSError, EOFError, zlib.error
    return OSError, EOFError, zlib.error, isal_error


def unreadable(path: Path, exc: BaseException) -> InputError:
    """The InputError of a file that could not be read (``exc``: one of :func:`read_errors`), ``<file>: cannot read
    file: ...``. A ``.gz`` whose gzip data is followed by bytes that are no gzip data (text appended to it) is said
    so: igzip calls it "Compressed file ended before the end-of-stream marker was reached", as it calls a truncated
    file, whose data is incomplete; Python's gzip, which tells them apart, reads it again here (only on this path)."""
    import zlib

    message = str(exc)
    if isinstance(exc, EOFError) and path.suffix == ".gz":
        try:
            with gzip.open(path, "rb") as handle:
                while handle.read(1 << 24):
                    pass
        except gzip.BadGzipFile as trailing:
            message = f"the gzip data is followed by bytes that are not gzip data ({trailing})"
        except (OSError, EOFError, zlib.error):
            pass
    return InputError(f"cannot read file: {message}", path)


class ContentDigest:
    """The sha256 of a file's content (:func:`harness.checksums.content_sha256`'s value) taken from the bytes
    the fast parse reads anyway: within ``with ContentDigest(path) as parsed:``, each read of ``path`` by
    :func:`read_string_columns` or :func:`stream_string_columns` on this thread (a context variable) is hashed
    as :class:`_ObjectBlocks` hands it to pyarrow, so a cold load of a ``.gz`` corpus decompresses it once
    (1M documents, 161 MiB of gzip: a second decompression cost ~0.86 s CPU).

    :attr:`hexdigest` is that of the last read begun, and only once it reached the end of the file
    without a refusal or an error; else None (a read refused, damaged, stopped early, or none at all:
    the caller hashes the file itself). The line scan's reads are not hashed."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.hexdigest: str | None = None

    def __enter__(self) -> ContentDigest:
        self._token = _parsing.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _parsing.reset(self._token)

    def reading(self):
        """A new sha256 for one read of the file (the last read's result is dropped)."""
        self.hexdigest = None
        return hashlib.sha256()


_parsing: ContextVar[ContentDigest | None] = ContextVar("harness_content_digest", default=None)


def _content_digest(path: Path) -> ContentDigest | None:
    """The :class:`ContentDigest` of ``path`` this thread is in, if any."""
    digest = _parsing.get()
    return digest if digest is not None and digest.path == Path(path) else None


class _NotAnObject(Exception):
    """A pyarrow.json block would start with something other than a JSON object (see :class:`_ObjectBlocks`)."""


class _ObjectBlocks:
    """The byte stream handed to pyarrow.json, checked read by read before pyarrow gets the bytes.

    The files are JSON Lines, one object per line, as the line scan (and BEIR's loader, ``json.loads``
    per line) reads them; pyarrow.json parses a block as a stream of values, so an object printed
    over several lines, two objects on one line, or an object broken by a lone CR (a line end to the
    line scan, blank to pyarrow) were rows to it, and whether such a file loaded hung on where its
    blocks were cut. So each line is checked (:meth:`_check_lines`, or the same checks in C):
    a line that is not blank (blanks: space, tab, CR) starts with ``{`` and ends with ``}``, no blank
    line comes before it, and every CR is followed by an LF. A JSON string holds no raw line end, so
    every line end then lies between two top-level values: each line holds one object or more, and a
    table of as many rows as :attr:`lines` holds exactly one per line (else the line scan decides: it
    names the faulty line, or reads a file with blank lines between its objects as it always did).

    The same checks keep pyarrow.json (26.0) from a null pointer (SIGSEGV: the process dies) where a
    block it parses starts with a top-level ``null`` (arrow issue 47409): pyarrow cuts each block after
    the last line end of a read, and every line's first byte other than blanks is a ``{``, checked
    in the read that holds it, before pyarrow gets that read.

    A refusal is never raised to pyarrow: an exception from ``read`` on one of its reader threads
    (any read after the first) aborted the process now and then ("terminate called without an
    active exception", SIGABRT; or it hung). The read that finds the fault and every later one return
    ``b""`` (the end of the file) instead; the callers check :attr:`refused` once pyarrow is done.

    ``digest``: a :class:`ContentDigest` of this file, or None: each read's bytes, as decompressed (a
    byte-order mark included), are hashed; once the raw stream gives its end (``b""``, no refusal before)
    their sha256 is recorded in ``digest.hexdigest``."""

    def __init__(self, raw, digest: ContentDigest | None = None):
        self._raw = raw
        self._digest, self._hasher = digest, digest.reading() if digest is not None else None
        self.refused = False  # a fault was found: the fast parse must not be used (see read)
        self._stopped = False  # the parse is abandoned: reads give the end of the file (see stop)
        self._first = True
        self._line_ends = 0  # LF bytes read
        self._after_last = 0  # LF bytes after the last byte that is not blank
        self._any = False  # a byte that is not blank was read
        self._open = False  # the current line holds a byte that is not blank (its last: _last)
        self._last = 0
        self._blank = False  # a blank line was read (no line that is not blank may follow)
        self._cr = False  # the last read ended with a CR (the next must start with its LF)

    @property
    def lines(self) -> int:
        """The lines read, up to and including the last that is not blank (blank lines among them counted);
        -1 when the last line that is not blank does not end with ``}`` (no table has -1 rows)."""
        if self._open and self._last != 0x7D:
            return -1
        return self._line_ends - self._after_last + self._any

    def stop(self) -> None:
        """Every later read gives the end of the file (``b""``): the parse is being abandoned (see
        :func:`_drain`); nothing is refused."""
        self._stopped = True
        self._hasher = None  # (not the whole file)

    def read(self, size: int = -1) -> bytes:
        if self.refused or self._stopped:
            return b""
        data = self._raw.read(size)
        if self._hasher is not None:
            if data:
                self._hasher.update(data)  # (hashlib releases the GIL over a large read)
            elif size:  # the end of the file: every byte was hashed, none refused
                self._digest.hexdigest = self._hasher.hexdigest()
                self._hasher = None
        try:
            self._check(data)
        except _NotAnObject:
            self.refused = True
            self._hasher = None  # (not the whole file)
            return b""
        return data

    def _check(self, data: bytes) -> None:
        """The checks of ``data``, the next bytes read (:class:`_NotAnObject` when one fails)."""
        start = 0
        if self._first and data:
            self._first = False
            if data.startswith(b"\xef\xbb\xbf"):
                start = 3
        compiled = _compiled_lines()
        if compiled is not None:  # the same checks in C (harness/native/trecrun.c jsonl_lines), one pass
            state = compiled(memoryview(data)[start:], self._open, self._last, self._blank, self._cr)
            if state is None:
                raise _NotAnObject
            open_, self._last, blank, cr, ends = state
            self._open, self._blank, self._cr = bool(open_), bool(blank), bool(cr)
        else:
            self._check_carriage_returns(data)
            ends = self._check_lines(data, start)
        self._line_ends += ends
        body = len(data)
        while body and data[body - 1] in b" \t\r\n":  # (one byte or two as a rule; rstrip copied the read)
            body -= 1
        if body:
            self._any, self._after_last = True, data.count(b"\n", body)
        else:
            self._after_last += ends

    def _check_carriage_returns(self, data: bytes) -> None:
        """Every CR in ``data`` is followed by an LF (in the next read for a CR that ends this one; the
        file's last byte may be a CR), else :class:`_NotAnObject` (see the class docstring)."""
        if self._cr and data and data[0] != 0x0A:
            raise _NotAnObject
        self._cr = data.endswith(b"\r")
        if data.find(b"\r", 0, len(data) - 1) >= 0:
            import numpy as np

            array = np.frombuffer(data, dtype=np.uint8)
            if not (array[np.flatnonzero(array[:-1] == 13) + 1] == 10).all():
                raise _NotAnObject

    def _check_lines(self, data: bytes, start: int) -> int:
        """Check the lines of ``data[start:]`` (the first continues the line the last read ended in),
        as the class docstring says; returns the LF bytes in ``data``."""
        import numpy as np

        array = np.frombuffer(data, dtype=np.uint8)
        ends = np.flatnonzero(array == 10)
        if not len(ends):
            self._line_piece(data[start:])
            return 0
        self._line_piece(data[start:int(ends[0])])
        self._end_line()
        begin, end = ends[:-1] + 1, ends[1:]  # the whole lines between two LFs
        if len(begin):
            last = end - 1
            last -= array[last] == 13  # (a CR before the LF)
            plain = (array[begin] == 0x7B) & (array[last] == 0x7D)  # (the others looked at one by one)
            blank = [] if plain.all() else [i for i in np.flatnonzero(~plain).tolist()
                                            if not self._span(data[begin[i]:end[i]])]
            if (self._blank and len(blank) < len(begin)) or (blank and len(blank) != len(begin) - blank[0]):
                raise _NotAnObject  # a line that is not blank after a blank one
            self._blank = self._blank or bool(blank)
        self._line_piece(data[int(ends[-1]) + 1:])
        return len(ends)

    @staticmethod
    def _span(line: bytes) -> bool:
        """Whether ``line`` (no LF) holds anything but blanks; raises :class:`_NotAnObject` when it does
        and its first byte other than blanks is not ``{`` or its last not ``}``."""
        body = line.strip(b" \t\r")
        if body and (body[0] != 0x7B or body[-1] != 0x7D):
            raise _NotAnObject
        return bool(body)

    def _line_piece(self, piece: bytes) -> None:
        """More of the current line (no LF)."""
        body = piece.strip(b" \t\r")
        if body:
            if not self._open:
                if self._blank or body[0] != 0x7B:  # a line after a blank one, or not an object's start
                    raise _NotAnObject
                self._open = True
            self._last = body[-1]

    def _end_line(self) -> None:
        """The current line ends (an LF)."""
        if self._open:
            if self._last != 0x7D:
                raise _NotAnObject
            self._open = False
        else:
            self._blank = True

    def close(self) -> None:
        self._raw.close()

    @property
    def closed(self) -> bool:
        return self._raw.closed


def _compiled_lines():
    """The compiled per-line checks (``harness._trecrun.jsonl_lines``: ~1 ms per 16 MiB read, where the
    numpy ones take ~6 ms), or None where the module is not built or is turned off
    (``HARNESS_TREC_COMPILED=0``): :class:`_ObjectBlocks` then makes them with numpy."""
    from harness.formats import native

    return getattr(native._built, "jsonl_lines", None) if native.available() else None


def _parse_options(fields: tuple[str, ...]):
    """pyarrow.json's options for ``fields`` as strings (null where absent), other keys skipped."""
    import pyarrow as pa
    import pyarrow.json as pj

    schema = pa.schema([(name, pa.string()) for name in fields])
    return pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")


def read_string_columns(path: Path, fields: tuple[str, ...]):
    """A ``pyarrow.Table`` of ``fields`` (strings; null where absent), one row per JSON line, or None
    when the fast parse refuses the file (the caller then scans it line by line). A file refused for a
    line too long for :data:`BLOCK_BYTES` is parsed again in blocks of :data:`LARGE_BLOCK_BYTES`."""
    import pyarrow as pa
    import pyarrow.json as pj

    parse = _parse_options(fields)
    for block in (BLOCK_BYTES, max(BLOCK_BYTES, LARGE_BLOCK_BYTES)):
        try:
            with open_binary(path) as stream:
                blocks = _ObjectBlocks(stream, _content_digest(path))
                table = pj.read_json(blocks, read_options=pj.ReadOptions(block_size=block), parse_options=parse)
            break
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
            if block >= LARGE_BLOCK_BYTES or blocks.refused or not _line_past_block(exc):
                return None
        except read_errors() as exc:
            raise unreadable(path, exc) from None
    if blocks.refused or table.num_rows != blocks.lines:  # not one object per line (see _ObjectBlocks)
        return None
    chunks = [chunk for column in table.columns for chunk in column.chunks]
    try:  # pyarrow.json does not check UTF-8 (the line scan names the line); checked on threads (GIL released)
        with ThreadPoolExecutor(max(1, min(pa.cpu_count(), len(chunks)))) as pool:
            for _ in pool.map(_validate_full, chunks):
                pass
    except pa.ArrowInvalid:
        return None
    return table


def _line_past_block(exc: Exception) -> bool:
    """Whether pyarrow.json refused a file because a line ran past the block after its own (its message:
    "straddling object straddles two block boundaries (try to increase block size?)")."""
    return "straddl" in str(exc)


def stream_string_columns(path: Path, fields: tuple[str, ...], take) -> bool:
    """:func:`read_string_columns` batch by batch: each ``pyarrow.RecordBatch`` of ``fields`` (UTF-8
    checked) is handed to ``take(batch)`` as soon as it is parsed, and not kept. True when the whole file
    was read, False when the fast parse refuses it (the caller then parses it whole, :func:`read_string_columns`,
    which tries a larger block for a line longer than :data:`BLOCK_BYTES`, or scans it line by line; what
    ``take`` got so far is to be dropped).

    The parse is the compiled one (``harness._trecrun.string_rows``, harness/native/jsonrows.c) where the
    module is built: each read's whole lines parsed in C while the next read is decompressed, hashed and
    checked on a thread (a 1M-document ``.gz`` corpus: the load's CPU ~2.7 -> ~1.9 s). It accepts only
    plain JSON objects, one a line, whose ``fields`` are strings or null, and refuses anything else,
    which pyarrow.json and the line scan then read as before: the same columns either way. Elsewhere,
    pyarrow.json's streaming reader (its blocks parsed ahead on its threads)."""
    rows_of = _compiled_rows()
    if rows_of is not None:
        return _stream_compiled(path, fields, take, rows_of)
    return _stream_pyarrow(path, fields, take)


def _open_source(path: Path) -> IO[bytes]:
    """:func:`open_binary`, a file that cannot be opened said as ``<file>: cannot read file: ...``."""
    try:
        return open_binary(path)
    except OSError as exc:
        raise InputError(f"cannot read file: {exc}", path) from None


def _compiled_rows():
    """``harness._trecrun.string_rows``, or None where the module is not built or is turned off
    (``HARNESS_TREC_COMPILED=0``)."""
    from harness.formats import native

    return getattr(native._built, "string_rows", None) if native.available() else None


def _stream_compiled(path: Path, fields: tuple[str, ...], take, rows_of) -> bool:
    """:func:`stream_string_columns` by ``rows_of`` (``string_rows``): a batch per read of
    :data:`BLOCK_BYTES` (its whole lines; a line that runs on is finished by the next read). Three stages
    on three threads, each read handed on in order: reading (decompressed, its lines checked), hashing for
    the :class:`ContentDigest`, and on this thread parsing it and ``take`` (igzip, sha256 and the parse
    release the GIL). 1M-document ``.gz``: decompression ~0.55 s, sha256 ~0.24 s, the parse ~0.35 s, the cache
    file's writes ~0.1-0.4 s: in two stages (the hash with the parse) the stream took 1.02-1.19 s, in three 0.88-0.94 s."""
    import pyarrow as pa

    stream = _open_source(path)
    fields, string = tuple(fields), pa.string()
    digest = _content_digest(path)
    hasher = digest.reading() if digest is not None else None
    with stream, ThreadPoolExecutor(1, thread_name_prefix="jsonl-read") as pool, \
            ThreadPoolExecutor(1, thread_name_prefix="jsonl-hash") as hashing:
        blocks, head, rows, first, hashed = _ObjectBlocks(stream), b"", 0, True, None
        ahead = pool.submit(blocks.read, BLOCK_BYTES)
        try:
            while True:
                try:
                    data = ahead.result()
                except read_errors() as exc:
                    raise unreadable(path, exc) from None
                if blocks.refused:  # (its reads give the end of the file from the fault on)
                    return False
                if not data and hasher is not None:  # the end: every byte hashed, none refused
                    if hashed is not None:
                        hashed.result()
                    digest.hexdigest = hasher.hexdigest()
                if data:
                    ahead = pool.submit(blocks.read, BLOCK_BYTES)
                    if hasher is not None:  # (as decompressed: a byte-order mark included; one at a time, in order)
                        hashed = hashing.submit(hasher.update, data)
                    if first and data.startswith(b"\xef\xbb\xbf"):  # a byte-order mark, skipped as pyarrow.json does
                        data = data[3:]
                    first = False
                    if data.rfind(b"\n") < 0:  # no line ends here: all of it continues the unfinished line, kept
                        if not isinstance(head, bytearray):  # in a bytearray that grows in place (a line of 1 GB:
                            head = bytearray(head)  # no quadratic copies)
                        head += data
                        continue
                parsed = rows_of(fields, head, data, not data)
                if parsed is None:
                    return False
                count, columns, head = parsed
                if count:
                    arrays = [pa.Array.from_buffers(string, count, [None if valid is None else pa.py_buffer(valid),
                                                                     pa.py_buffer(offsets), pa.py_buffer(text)],
                                                    null_count=nulls) for offsets, text, valid, nulls in columns]
                    rows += count
                    take(pa.RecordBatch.from_arrays(arrays, names=list(fields)))
                if not data:
                    return rows == blocks.lines  # (see _ObjectBlocks: one object per line)
        except BaseException:  # (Ctrl-C, take's own error): the read under way is the last
            blocks.stop()
            raise


def _stream_pyarrow(path: Path, fields: tuple[str, ...], take) -> bool:
    """:func:`stream_string_columns` by pyarrow.json's streaming reader."""
    import pyarrow as pa
    import pyarrow.json as pj

    parse = _parse_options(fields)
    refused = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError)
    stream = _open_source(path)
    with stream:  # reading and parsing fail as the source's faults; take's own errors propagate
        blocks, rows = _ObjectBlocks(stream, _content_digest(path)), 0
        try:
            reader = pj.open_json(blocks, read_options=pj.ReadOptions(block_size=BLOCK_BYTES), parse_options=parse)
        except refused:
            return False
        except read_errors() as exc:
            raise unreadable(path, exc) from None
        try:
            while True:
                try:
                    batch = reader.read_next_batch()
                    for column in batch.columns:
                        column.validate(full=True)  # pyarrow.json does not check UTF-8
                except StopIteration:
                    return not blocks.refused and rows == blocks.lines  # else not one object per line (see _ObjectBlocks)
                except refused:
                    return False
                except read_errors() as exc:
                    raise unreadable(path, exc) from None
                rows += batch.num_rows
                take(batch)
        except BaseException:  # (Ctrl-C, SIGTERM's SystemExit, take's own error)
            blocks.stop()
            _drain(reader)
            raise


def _drain(reader) -> None:
    """Read a pyarrow.json streaming reader to its end once its source reads give none (``stop``), so
    that none of those reads (Python code, run on pyarrow's threads ahead of the batches asked for) is
    still under way when an exception leaves the parse: an interruption (Ctrl-C) that ended the process
    meanwhile aborted it ("Fatal Python error: PyGILState_Release", exit 134 instead of 130) in about
    one try in three at 1M documents. An error here ends the draining (a second Ctrl-C goes on)."""
    while True:
        try:
            reader.read_next_batch()
        except StopIteration:
            return
        except Exception:  # (pyarrow's error on a block cut short: nothing more is read)
            return


def _validate_full(array) -> None:
    array.validate(full=True)


def _open_text(path: Path):
    # surrogateescape: a byte that is not UTF-8 reaches its line as a lone surrogate, so that the
    # line is named (decoding raises per 8 KiB chunk, ahead of the line being read); utf-8-sig: a
    # byte-order mark is skipped, as pyarrow.json skips it (else a file's fate hung on its other faults)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="surrogateescape", newline="")
    return open(path, encoding="utf-8-sig", errors="surrogateescape", newline="")


def object_line(path: Path, position: int) -> int | None:
    """The line number of the ``position``-th object (from 0) of a JSON Lines file, counted as
    :func:`iter_jsonl` counts them (blank lines skipped), the lines not parsed: where a check made after
    loading (a document id run.trec cannot hold) names the line. None past the end, or unreadable."""
    seen = -1
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    seen += 1
                    if seen == position:
                        return number
    except read_errors():
        return None
    return None


def _lone_surrogate(obj: dict) -> str | None:
    """The first top-level key whose string value holds a lone surrogate (``"\\ud800"`` is legal JSON
    but no UTF-8 text: Arrow columns, run files and reports cannot hold it), else None."""
    for key, value in obj.items():
        if type(value) is str and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return key
    return None


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; a malformed line (not JSON, not an object,
    bytes that are not UTF-8, a string holding a lone surrogate escape) is an InputError."""
    try:
        with _open_text(path) as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                if not line.isascii():
                    try:
                        line.encode("utf-8")
                    except UnicodeEncodeError as exc:
                        byte = ord(line[exc.start]) - 0xDC00  # the undecodable byte, surrogate-escaped
                        gzipped = number == 1 and line.startswith("\x1f\udc8b") and path.suffix != ".gz"
                        raise InputError(f"not valid UTF-8 (byte 0x{byte:02x} at column {exc.start + 1})"
                                         + ("; it is gzip-compressed: name it " + path.name + ".gz" if gzipped else ""),
                                         path, number) from None
                try:
                    obj = json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as exc:
                    raise InputError(f"malformed JSON: {exc.msg} at column {exc.colno}", path, number) from None
                if not isinstance(obj, dict):
                    raise InputError("expected a JSON object", path, number)
                if "\\u" in line:
                    key = _lone_surrogate(obj)
                    if key is not None:
                        raise InputError(f"{key!r} holds a lone surrogate escape (\\ud800-\\udfff): not valid Unicode "
                                         "text", path, number, obj.get("_id"))
                yield number, obj
    except read_errors() as exc:
        raise unreadable(path, exc) from None
