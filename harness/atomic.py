"""Atomic file writes: write to a temporary file beside the target, then rename over it.

An interrupted write never leaves a truncated file behind: readers see the old file or the new one.
Temporary files are named ``.<name>.<pid>-<host>.<random>.tmp`` (:func:`writer_tag`); a failed or
interrupted write removes its own
(Ctrl-C, and SIGTERM in a ``harness`` command, whose entry point turns it into ``SystemExit(143)``:
``harness.cli.sigterm_exits``). One left by a process killed without cleanup (SIGKILL; SIGTERM in a
process that installed no such handler, as the library installs none) is removed by
:func:`remove_abandoned`, which the writers of large files (the corpus cache, result folders) call
once per write.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import os
import secrets
import shutil
import socket
import threading
import time
from pathlib import Path
from typing import IO, Callable, Iterator

FOREIGN_AGE_S = 7 * 86400  # another host's (or pid namespace's) temporary left this long is taken as abandoned


@functools.lru_cache(maxsize=1)
def _host() -> str:
    """8 hex digits naming where this process's pid means something: the host name and the pid
    namespace (``/proc/self/ns/pid``: containers on one kernel each have their own)."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return hashlib.blake2s(f"{socket.gethostname()}\0{namespace}".encode(), digest_size=4).hexdigest()


def writer_tag() -> str:
    """``<pid>-<host>``: the writer of a temporary file or folder, in its name, so that
    :func:`remove_abandoned` can tell a killed writer's from a running one's. The pid alone is not
    enough where one cache folder is shared across containers or machines (CI jobs with a shared
    cache volume): another pid namespace's live writer has a pid that is unknown, or someone else,
    here."""
    return f"{os.getpid()}-{_host()}"


def process_gone(pid: int) -> bool:
    """Whether no process ``pid`` runs (a temporary file or folder named with it was abandoned: its
    writer was killed before it could remove it). A process of another user counts as running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def temporary_path(path: Path) -> Path:
    """A new name beside ``path`` for its temporary file, ``.<name>.<pid>-<host>.<random>.tmp``
    (:func:`writer_tag` lets :func:`remove_abandoned` tell a killed writer's file from a running
    one's), not created yet: the writer creates it (:func:`create_new`) inside the ``try`` that
    removes it on failure, so that an interruption right after its creation (SIGTERM's
    ``SystemExit`` in the CLI, Ctrl-C) still removes it; ``mkstemp`` created the file before the
    writer knew its name, so such an interruption left it behind."""
    return path.parent / f".{path.name}.{writer_tag()}.{secrets.token_hex(6)}.tmp"


def temporary_parts(entry: str) -> tuple[str, str] | None:
    """(the output's name, the writer) of a temporary entry named as :func:`temporary_path` names it
    (``.<name>.<writer>.<random>.tmp``), else None."""
    if not (entry.startswith(".") and entry.endswith(".tmp")):
        return None
    parts = entry[1:-len(".tmp")].rsplit(".", 2)  # name, writer, random
    return (parts[0], parts[1]) if len(parts) == 3 else None


# Large files are written in pieces of this many bytes. Linux (6.x, ext4 with large folios) sizes the page-cache
# folios of a write by its length: one write of 181 MB (np.save of a 1M-document index's postings) took its
# memory in folios of up to 2 MB, which this VM's host backs anew on first touch (free page reporting hands
# high-order free blocks back to it), 0.14-0.47 CPU-s per 180 MB written; in 256 KiB writes, 0.050-0.056 s,
# 512 KiB 0.09-0.12 s, 1 MiB 0.18-0.38 s, 64 KiB 0.063 s (one C process, each size alternated), with no
# slower reads after (the file mapped and read: 0.013-0.014 s against 0.011-0.012 s).
WRITE_PIECE = 1 << 18


def write_pieces(handle: IO[bytes], data) -> None:
    """Write the bytes of ``data`` (bytes, or any C-contiguous buffer such as a numpy array) to the binary
    file ``handle`` in :data:`WRITE_PIECE`-byte writes: the same bytes as ``handle.write(data)``."""
    with memoryview(data) as whole, whole.cast("B") as view:
        for start in range(0, len(view), WRITE_PIECE):
            handle.write(view[start:start + WRITE_PIECE])


def create_new(tmp: Path) -> int:
    """Create ``tmp``, which must not exist (O_EXCL), for writing, mode 0600 as ``mkstemp``; its fd."""
    return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)


def _abandoned(folder: Path, entry: str, is_dir: bool, writer: str) -> bool:
    """Whether the temporary ``entry`` of ``writer`` (``<pid>-<host>``, or a bare ``<pid>`` as named
    before the host was) is abandoned: its process is gone, for this host's; for another host's, whose
    process cannot be looked up here, nothing was written in it (the entry, or a file directly in a
    folder) for :data:`FOREIGN_AGE_S`."""
    pid, _, host = writer.partition("-")
    if not pid.isdigit():
        return False
    if host in ("", _host()):
        return process_gone(int(pid))
    try:
        path = folder / entry
        times = [path.stat(follow_symlinks=False).st_mtime]
        if is_dir:
            times += [item.stat(follow_symlinks=False).st_mtime for item in os.scandir(path)]
    except OSError:
        return False
    return time.time() - max(times) > FOREIGN_AGE_S


def remove_abandoned(folder: Path, name: str | None = None) -> None:
    """Remove the temporary files (:func:`temporary_path`) and folders (``mkdtemp`` named alike,
    ``.<name>.<pid>-<host>.<random>.tmp``) in ``folder`` that are abandoned (:func:`_abandoned`: this
    host's whose process is gone, another host's untouched for a week), only those of ``name`` when
    given: a process killed while writing (SIGKILL; SIGTERM without the CLI's handler) cannot remove
    its own, and a cache's can be as large as a parsed corpus. Called once per write where large
    files are written, not per file."""
    try:
        entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in os.scandir(folder)
                   if entry.name.startswith(".") and entry.name.endswith(".tmp")]
    except OSError:
        return
    for entry, is_dir in entries:
        parts = temporary_parts(entry)
        if parts is not None and name in (None, parts[0]) and _abandoned(folder, entry, is_dir, parts[1]):
            if is_dir:
                shutil.rmtree(folder / entry, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(folder / entry)


_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)  # a file system that refuses flock


LOCK_TIMEOUT_ENV = "HARNESS_LOCK_TIMEOUT"  # seconds a lock is waited for before one line says who holds it
_POLL_S = 0.1


def lock_timeout() -> float | None:
    """``$HARNESS_LOCK_TIMEOUT`` in seconds (> 0), or None (unset or empty: a lock is waited for as long as its
    holder keeps it); anything else is a :class:`~harness.errors.HarnessError` naming the variable."""
    text = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        from harness.errors import HarnessError

        raise HarnessError(f"{LOCK_TIMEOUT_ENV}={text!r}: give the seconds to wait for a lock another process "
                           "holds (a number > 0), or leave it unset to wait as long as it is held")
    return value


def lock_holder(handle: IO) -> str | None:
    """What the holder of the lock on ``handle``'s file wrote there (:func:`build_lock`: its pid, host and since
    when), or None (nothing written, or not readable)."""
    try:
        with open(handle.name, encoding="utf-8", errors="replace") as readable:
            text = readable.read(512).strip()
    except (OSError, TypeError):
        return None
    return text.splitlines()[0] if text else None


_waiting = threading.local()  # (the holder of the lock on_wait is called for: waited_holder)
ANOTHER_PROCESS = "another process"
THIS_PROCESS = "this process's earlier write (under way on another thread)"


def waited_holder() -> str:
    """Who holds the lock an ``on_wait`` callback is called for, as its message names the subject: ``another
    process``, or where the holder recorded in the lock file is this process (a cache entry written on a
    background thread, which a later load of the same entry in this process waits for, a benchmark's next cell)
    ``this process's earlier write (under way on another thread)``; it said "another process" either way."""
    return getattr(_waiting, "holder", ANOTHER_PROCESS)


def _held_here(holder: str | None) -> bool:
    return bool(holder) and holder.startswith(f"process {os.getpid()} on {socket.gethostname()} ")


def _lock_exclusive(handle: IO, on_wait: Callable[[], None] | None = None) -> bool:
    """``flock(LOCK_EX)`` on ``handle``, waiting while another holder has it (``on_wait`` called once first, then
    a warning naming the holder where it recorded itself): True when taken, False where there is no ``fcntl``
    or the file system refuses locks (:data:`_NO_LOCKS`); any other OSError is raised. With
    ``$HARNESS_LOCK_TIMEOUT`` (:func:`lock_timeout`), a lock still held after that many seconds is a
    :class:`~harness.errors.HarnessError` naming the lock file and its holder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        return False
    timeout = lock_timeout()
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = lock_holder(handle)
            if on_wait is not None:
                _waiting.holder = THIS_PROCESS if _held_here(holder) else ANOTHER_PROCESS
                try:
                    on_wait()
                finally:
                    del _waiting.holder
            if holder:
                import logging

                logging.getLogger(__name__).warning("%s is held by %s", handle.name, holder)
            if timeout is None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            else:
                _wait_for(fcntl, handle, time.monotonic() + timeout, timeout)
    except OSError as exc:
        if exc.errno not in _NO_LOCKS:
            raise
        return False
    return True


def _wait_for(fcntl, handle: IO, deadline: float, timeout: float) -> None:
    """Take the lock on ``handle`` by polling until ``deadline``; past it, a HarnessError naming the holder."""
    while True:
        time.sleep(max(0.0, min(_POLL_S, deadline - time.monotonic())))
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                from harness.errors import HarnessError

                holder = lock_holder(handle) or "another process"
                raise HarnessError(f"{handle.name}: still held by {holder} after {timeout:g} s "
                                   f"({LOCK_TIMEOUT_ENV}); stop that process if it hangs, or unset "
                                   f"{LOCK_TIMEOUT_ENV} to wait for it") from None


@contextlib.contextmanager
def file_lock(path: str | os.PathLike, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """An exclusive advisory lock (POSIX ``flock``) on the file ``path`` (created, with its folder, if
    need be) for the ``with`` block: processes that take it write in turn (a no-op where there is no
    ``fcntl``, or where the file system refuses locks: some NFS and FUSE mounts answer ENOLCK or
    EOPNOTSUPP, and the writes, each atomic, then go ahead unlocked as they did before the lock).
    ``on_wait`` is called once before waiting for another holder, to say so. The holder is recorded in the
    file while the block runs, as :func:`build_lock`'s is (a download can take minutes)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:  # (closing it releases the lock)
        locked = _lock_exclusive(handle, on_wait)
        if locked:
            _record_holder(handle)
        try:
            yield
        finally:
            if locked:
                _clear_holder(handle)


def build_lock(path: str | os.PathLike, on_wait: Callable[[], None] | None = None) -> Callable[[], None]:
    """Take an exclusive advisory lock (POSIX ``flock``) on the file ``path`` for building what it guards
    (a cache entry), waiting while another process holds it (``on_wait`` is called once first, to say
    so); returns the function that releases it, which may be called on another thread (the entry's
    background write) and more than once. Processes that build the same entry then build it in turn,
    and the later one finds it cached: the work (and memory) of a build is not duplicated. A process
    killed while holding it releases it (the kernel closes its descriptor). Where the lock cannot be
    taken (a read-only or full cache folder, a file system that refuses locks: see :func:`file_lock`)
    nothing is locked and the builds go ahead side by side, each written atomically, as before. The holder
    writes ``process <pid> on <host> since <UTC time>`` into the file while it holds it, which a waiting
    process names in a warning (and in the error ``$HARNESS_LOCK_TIMEOUT`` gives: :func:`_lock_exclusive`)."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+")
    except OSError:
        return lambda: None
    try:
        locked = _lock_exclusive(handle, on_wait)
    except OSError:  # unlocked, as where the file system refuses locks
        handle.close()
        return lambda: None
    except BaseException:  # (KeyboardInterrupt while waiting, HARNESS_LOCK_TIMEOUT passed)
        handle.close()
        raise
    if locked:
        _record_holder(handle)
    released = threading.Lock()

    def release() -> None:
        with released:
            if not handle.closed:
                if locked:
                    _clear_holder(handle)
                handle.close()  # (closing the descriptor releases the lock)

    return release


def _record_holder(handle: IO) -> None:
    """Write who holds the lock into its file, for a process that waits for it (:func:`lock_holder`): a build
    can take minutes, and a holder that hangs keeps the others waiting. Best effort: nothing on an error."""
    from datetime import datetime, timezone

    since = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()} on {socket.gethostname()} since {since}\n")
        handle.flush()
    except (OSError, ValueError):
        pass


def _clear_holder(handle: IO) -> None:
    """Empty the lock file before the lock is released: its record is never read as a later holder's."""
    with contextlib.suppress(OSError, ValueError):
        handle.truncate(0)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# What a write into an open file fails with (a full disk, a quota, a file too large, a device error): the
# OSError names no file (a write, flush or fsync on a descriptor), so its one line said only "[Errno 28] No
# space left on device", not which of the outputs (or on which disk) it was.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def name_output(exc: BaseException, path: Path) -> None:
    """Give an OSError of writing ``path``'s temporary file that names no file (:data:`_WRITE_ERRNOS`)
    ``path`` as its ``filename``, so that its message names the output: ``out/run.trec: No space left
    on device``."""
    if isinstance(exc, OSError) and exc.filename is None and exc.errno in _WRITE_ERRNOS:
        exc.filename = str(path)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file next to ``path``; on success fsync and rename it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    binary = "b" in mode
    tmp = temporary_path(path)
    try:
        fd = create_new(tmp)
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # created 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        name_output(exc, path)
        raise


def seal(path: str | os.PathLike) -> None:
    """Make a written temporary file ready to be renamed into place: fsync it, and give it the usual
    permissions (:func:`create_new` creates it 0600)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, 0o666 & ~_umask())


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path next to ``path`` for writers that open files themselves (Arrow's native
    writer); on success the file is fsynced and renamed to ``path``, on failure removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        os.close(create_new(tmp))
        yield tmp
        seal(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        name_output(exc, path)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path) as handle:
        handle.write(text)


def write_json(path: str | os.PathLike, obj: object) -> None:
    """``obj`` as ``json.dump(obj, indent=2, ensure_ascii=False)`` writes it, and a newline."""
    text = indented_json(obj)
    with atomic_open(path) as handle:
        handle.write(text)
        handle.write("\n")


class _Unusual(Exception):
    """A value the fast path leaves to json.dumps (a non-str key, a subclass, very deep nesting...)."""


_SCALARS = frozenset({str, int, float, bool, type(None)})
_INDENT = "  "
_encoders: dict[int, json.JSONEncoder] = {}


def indented_json(obj: object) -> str:
    """Exactly ``json.dumps(obj, indent=2, ensure_ascii=False)``, much faster for large documents:
    Python's indenting encoder is pure Python (one generator step per value), while the C encoder,
    used without ``indent``, takes any item separator; so every dict or list whose values are all
    plain scalars is encoded in C with ``",\n" + its indent`` as the separator (the per-query
    metrics of a result are thousands of such dicts), and only the nesting above them is walked
    here. Anything unusual (non-str keys, subclasses of the JSON types, nesting deeper than 64)
    goes to json.dumps itself, so the text, and the errors, are always json's."""
    try:
        out: list[str] = []
        _encode(obj, 0, out)
        return "".join(out)
    except _Unusual:
        return json.dumps(obj, indent=2, ensure_ascii=False)


def _flat_encoder(depth: int) -> json.JSONEncoder:
    encoder = _encoders.get(depth)
    if encoder is None:
        encoder = _encoders[depth] = json.JSONEncoder(ensure_ascii=False, separators=(",\n" + _INDENT * depth, ": "))
    return encoder


def _encode(obj: object, depth: int, out: list[str]) -> None:
    kind = type(obj)
    if kind in _SCALARS:
        out.append(_flat_encoder(0).encode(obj))
        return
    if depth >= 64 or kind not in (dict, list, tuple):
        raise _Unusual
    if not obj:
        out.append("{}" if kind is dict else "[]")
        return
    inner = _INDENT * (depth + 1)
    if kind is dict:
        if any(type(key) is not str for key in obj):
            raise _Unusual
        values = obj.values()
    else:
        values = obj
    close = "\n" + _INDENT * depth + ("}" if kind is dict else "]")
    if all(type(value) in _SCALARS for value in values):  # one C call: "{" + items + "}"
        text = _flat_encoder(depth + 1).encode(obj)
        out.append(text[0] + "\n" + inner + text[1:-1] + close)
        return
    separator = "\n" + inner
    if kind is dict:
        out.append("{")
        for key, value in obj.items():
            out.append(separator)
            out.append(json.encoder.encode_basestring(key) + ": ")
            _encode(value, depth + 1, out)
            separator = ",\n" + inner
    else:
        out.append("[")
        for value in obj:
            out.append(separator)
            _encode(value, depth + 1, out)
            separator = ",\n" + inner
    out.append(close)
