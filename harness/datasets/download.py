"""Download BEIR dataset zips into the cache: streamed, resumable, checksummed, unpacked atomically.

Layout under the cache root (``$HARNESS_CACHE_DIR``, else the user cache dir)::

    <root>/datasets/<name>/                 an unpacked dataset (corpus.jsonl, queries.jsonl, qrels/)
    <root>/datasets/<name>/DOWNLOAD.json    where it came from: url, checksums, size, date
    <root>/datasets/.downloads/<name>.zip   a verified zip (removed once unpacked unless kept)
    <root>/datasets/.downloads/<name>.zip.part   bytes received so far; the next call resumes from here
    <root>/datasets/.downloads/.<name>.zip.<pid>-<host>.<random>.tmp/   pooch's temporary file while it checks the
                                            checksum (removed by the next download once its process is gone)

pooch does the bookkeeping (checksum check, temp file renamed into place only when the checksum
matches); :class:`ResumableDownloader` does the transfer: an HTTP GET streamed into the ``.part``
file, resumed with a ``Range`` request after an interruption, retried with backoff on connection
errors, truncated bodies and 5xx answers. A dataset folder appears only by renaming a fully unpacked
temp folder, so an interrupted download or unpack never leaves a folder that looks complete.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import logging
import os
import re
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from harness.atomic import file_lock as _lock  # (two processes do not write the same .part)
from harness.atomic import name_output, remove_abandoned, waited_holder, writer_tag
from harness.cache import ENV_VAR as CACHE_ENV  # noqa: F401  (re-exported: tests and docs name it here)
from harness.cache import cache_dir
from harness.checksums import file_digest
from harness.datasets import registry
from harness.datasets.registry import DatasetRef
from harness.errors import HarnessError

MIRROR_ENV = "HARNESS_BEIR_MIRROR"
OFFLINE_ENV = "HARNESS_OFFLINE"
MANIFEST = "DOWNLOAD.json"
# A name the registry does not know becomes the folder <root>/datasets/<name>: one plain path part
# (not "..", "/abs" or ".downloads", which would unpack over a folder outside the cache, or the cache's own).
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=-]*")
SHA256 = re.compile(r"[0-9A-Fa-f]{64}")


# --------------------------------------------------------------------------- locations
def datasets_root() -> Path:
    return cache_dir("datasets")


def downloads_dir() -> Path:
    return datasets_root() / ".downloads"


def dataset_dir(dataset: str | DatasetRef) -> Path:
    """Where the dataset lives once downloaded (a CQADupStack forum is a subfolder)."""
    ref = DatasetRef.parse(dataset)
    folder = datasets_root() / ref.base
    return folder / ref.subset if ref.subset else folder


def is_downloaded(dataset: str | DatasetRef) -> bool:
    """True when the dataset's folder is complete: unpacked by :func:`download` (it has a manifest,
    written before the folder is renamed into place) or placed by hand (it has a corpus file)."""
    ref = DatasetRef.parse(dataset)
    folder = dataset_dir(ref)
    if (datasets_root() / ref.base / MANIFEST).is_file() and folder.is_dir():
        return True
    return _has_corpus(folder)


def _has_corpus(folder: Path) -> bool:
    return any((folder / name).is_file() for name in ("corpus.jsonl", "corpus.jsonl.gz"))


def mirror_url() -> str | None:
    return os.environ.get(MIRROR_ENV) or None


def _offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


# --------------------------------------------------------------------------- transfer
class RetryableError(Exception):
    """A transfer failure worth another try (connection lost, body cut short, server error, 408, 429).

    ``wait``: the seconds the server asked for (``Retry-After``), when it did.
    """

    def __init__(self, message: str, wait: float | None = None):
        super().__init__(message)
        self.wait = wait


#: the longest ``Retry-After`` honoured, in seconds (a server asking for more is waited on this long)
MAX_RETRY_AFTER = 60.0
#: 4xx answers that say "not now" rather than "not this": retried as server errors are
RETRY_STATUSES = {408, 429}


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # (str.isdigit alone takes '²', a latin-1 header byte, that float refuses)
        return float(value)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class ResumableDownloader:
    """A pooch downloader: streamed GET into a stable ``.part`` file, resumed with ``Range``.

    pooch calls it with the temp file name it will checksum and rename into place; the bytes are
    first gathered in ``part_path`` (which survives a killed process) and moved onto pooch's temp
    file only when the transfer is complete.
    """

    part_path: Path
    progressbar: bool = False
    retries: int = 3
    backoff: float = 1.0
    timeout: float = 60.0
    chunk_size: int = 1 << 16
    resumed: bool = False  # set once bytes are appended to a part (a Range request answered)
    unbounded: bool = False  # set when a body came with no length to check it by (no Content-Length, not chunked)

    def __call__(self, url: str, output_file, pooch=None, check_only: bool = False):
        import requests

        if check_only:
            response = requests.head(url, allow_redirects=True, timeout=self.timeout)
            return response.status_code == 200
        last: RetryableError | None = None
        for attempt in range(self.retries + 1):
            if attempt:  # the backoff, or as long as the server asked (Retry-After), within MAX_RETRY_AFTER
                asked = last.wait if last is not None and last.wait is not None else 0.0
                pause = max(self.backoff * 2 ** (attempt - 1), min(asked, MAX_RETRY_AFTER))
                if pause >= 1:  # (a wait of up to a minute per try printed nothing: a download that looked hung)
                    logging.getLogger(__name__).warning("%s: %s; trying again in %.0f s (attempt %d of %d)",
                                                        url.split("?", 1)[0], last, pause, attempt + 1, self.retries + 1)
                time.sleep(pause)
            try:
                self._transfer(url)
                break
            except RetryableError as exc:
                last = exc
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
                # ChunkedEncodingError: the body ended before Content-Length (urllib3 enforces it).
                last = RetryableError(f"{type(exc).__name__}: {exc}")
            except requests.RequestException as exc:
                if isinstance(exc, ValueError):  # a URL that is no URL (InvalidURL, MissingSchema): fetch names it
                    raise
                # a redirect loop (TooManyRedirects), a body that does not decode: not worth a retry, and named
                # with the URL (it was the bare 'error: Exceeded 30 redirects.')
                raise TransferError(url, f"{type(exc).__name__}: {str(exc).rstrip('.')}", attempts=attempt + 1,
                                    retry=False) from None
        else:
            raise TransferError(url, str(last), attempts=self.retries + 1)
        os.replace(self.part_path, output_file)
        return None

    def _transfer(self, url: str) -> None:
        import requests

        have = self.part_path.stat().st_size if self.part_path.exists() else 0
        # identity: the zip's own bytes, which Range offsets and Content-Length count. A server that gzips its
        # answers (Content-Encoding) counts the encoded ones while requests writes the decoded: every
        # download failed 'body cut short: 2095776 of 2094964 bytes'
        headers = {"Accept-Encoding": "identity"}
        if have:
            headers["Range"] = f"bytes={have}-"
        with requests.get(url, headers=headers, stream=True, timeout=self.timeout) as response:
            status = response.status_code
            encoded = response.headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity")
            if have and (status == 416 or status == 206 and (encoded or not _range_starts_at(
                    response.headers.get("Content-Range"), have))):
                # 416: nothing left to send from that offset (the part is stale), resumed at another offset, or
                # encoded all the same (its offsets are not the part's): start over now, in this attempt (a
                # request without Range cannot get here)
                self.part_path.unlink(missing_ok=True)
                response.close()
                return self._transfer(url)
            if status >= 500 or status in RETRY_STATUSES:  # (408 Request Timeout, 429 Too Many Requests)
                raise RetryableError(f"HTTP {status} {response.reason}",
                                     wait=_retry_after(response.headers.get("Retry-After")))
            if status >= 400:
                raise TransferError(url, f"HTTP {status} {response.reason}", attempts=1, retry=False)
            mode = "ab" if have and status == 206 else "wb"
            self.resumed = self.resumed or mode == "ab"
            start = have if mode == "ab" else 0
            length = response.headers.get("Content-Length")  # (of the encoded body, when encoded: not checked)
            expected = start + int(length) if length and length.isdigit() and not encoded else None
            # (a chunked body that is cut is an error of requests; one ended by closing the connection is not)
            chunked = "chunked" in response.headers.get("Transfer-Encoding", "").lower()
            self.unbounded = self.unbounded or (expected is None and not chunked and not encoded)
            try:
                with open(self.part_path, mode) as handle, _progress(self.progressbar, url, expected, start) as advance:
                    for block in response.iter_content(self.chunk_size):
                        handle.write(block)
                        advance(len(block))
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as exc:  # a full disk: named (the write's error names no file); the part is kept to resume
                name_output(exc, self.part_path)
                raise
        size = self.part_path.stat().st_size
        if expected is not None and size != expected:
            raise RetryableError(f"body cut short: {size} of {expected} bytes")


def _range_starts_at(content_range: str | None, offset: int) -> bool:
    # "bytes 100-199/200"
    if not content_range or not content_range.startswith("bytes "):
        return False
    first = content_range[6:].split("-", 1)[0]
    return first.isdigit() and int(first) == offset


@contextlib.contextmanager
def _progress(enabled: bool, url: str, total: int | None, done: int) -> Iterator:
    if not enabled:
        yield lambda n: None
        return
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                               TransferSpeedColumn)

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(url.rsplit("/", 1)[-1], total=total, completed=done)
        yield lambda n: progress.advance(task, n)


class TransferError(HarnessError):
    """A download that failed for good (after retries, or at once for a 4xx answer)."""

    def __init__(self, url: str, reason: str, attempts: int, retry: bool = True):
        self.url = url
        self.reason = reason
        tries = f" after {attempts} attempt(s)" if retry else ""
        super().__init__(f"cannot download {url}{tries}: {reason}")


# --------------------------------------------------------------------------- fetch + verify
def fetch(url: str, dest: Path, known_hash: str | None, progressbar: bool = False, retries: int = 3,
          backoff: float = 1.0, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` unless ``dest`` already holds a file with ``known_hash``.

    ``known_hash`` is pooch's ``"md5:<hex>"`` / ``"sha256:<hex>"``. On a checksum mismatch nothing is
    left behind (not even the ``.part``) and a HarnessError names both checksums; a mismatch after a
    resumed transfer is first retried once, whole (the bytes kept from before may be what differs), and so is
    one after a body that came without a length (no Content-Length, not chunked: a connection closed early
    ends it unseen).
    """
    import pooch
    from pooch.hashes import hash_matches

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.is_file() and hash_matches(str(dest), known_hash):
        return dest
    part = dest.with_name(dest.name + ".part")
    downloader = ResumableDownloader(part, progressbar=progressbar, retries=retries, backoff=backoff,
                                     timeout=timeout)
    # pooch's temporary file (the whole zip while it is hashed) goes into a folder of this process,
    # .<name>.<pid>-<host>.<random>.tmp: one left by a killed process is removed here, as pooch's own
    # tmpXXXXXXXX beside the zip could not be told from another process's live one.
    remove_abandoned(dest.parent, dest.name)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.{writer_tag()}.", suffix=".tmp", dir=dest.parent))
    kept = part.is_file() and part.stat().st_size > 0  # bytes received by an earlier call (resumed from)
    again = False  # fetched once more after a body without a length
    try:
        while True:
            try:
                fetched = pooch.retrieve(url, known_hash=known_hash, fname=dest.name, path=staging,
                                         downloader=downloader)
                break
            except ValueError as exc:  # pooch: hash mismatch (temp file already deleted)
                if isinstance(exc, OSError):  # requests' InvalidURL, MissingSchema...: ValueErrors too, but no download
                    raise HarnessError(f"cannot download {url}: {exc}".replace("\n", " ")) from None
                part.unlink(missing_ok=True)
                if kept and downloader.resumed:  # the part kept from an earlier call may hold another mirror's or
                    kept = False  # an older zip's bytes (the mismatch blamed this URL): once more, whole
                    continue
                if downloader.unbounded and not again:  # a body with no length, ended by the connection closing,
                    again = True  # may have been cut short unseen: once more, whole, before blaming the file
                    downloader.unbounded = downloader.resumed = False
                    continue
                raise HarnessError(f"checksum mismatch for {url}: {exc}".replace("\n", " ")) from None
        os.replace(fetched, dest)
        return dest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# --------------------------------------------------------------------------- unpack
def unpack(zip_path: Path, target: Path, manifest: dict | None = None) -> Path:
    """Unpack ``zip_path`` so that ``target`` holds the dataset, atomically.

    BEIR zips hold one top-level folder (``nfcorpus/...``); its contents become ``target``. Members
    that would land outside the folder are refused.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.unpack-*"):  # left by an interrupted unpack
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.unpack-", dir=target.parent))
    try:
        try:
            with zipfile.ZipFile(zip_path) as archive:
                root = tmp.resolve()
                for member in archive.namelist():
                    if not (root / member).resolve().is_relative_to(root):
                        raise HarnessError(f"{zip_path}: member {member!r} would unpack outside the dataset folder")
                archive.extractall(tmp)
        except zipfile.BadZipFile as exc:
            raise HarnessError(f"{zip_path}: not a valid zip file ({exc})") from None
        except OSError as exc:  # a full disk while unpacking: named as the dataset's folder (the temporary one goes)
            name_output(exc, target)
            raise
        entries = [p for p in tmp.iterdir() if p.name != "__MACOSX"]
        content = entries[0] if len(entries) == 1 and entries[0].is_dir() else tmp
        if not _holds_a_corpus(content):  # (it unpacked, and every load then said "no corpus.jsonl")
            shown = sorted(p.name + ("/" if p.is_dir() else "") for p in content.iterdir() if p.name != "__MACOSX")
            raise HarnessError(f"{zip_path}: no corpus.jsonl (or corpus.jsonl.gz) at its top or in the folders "
                               f"there, as a BEIR zip has one; it holds {', '.join(shown[:8]) or 'nothing'}"
                               f"{', ...' if len(shown) > 8 else ''}: nothing was unpacked")
        if manifest is not None:  # with each unpacked file's size and sha256 (`harness datasets info` checks them)
            files = {p.relative_to(content).as_posix(): {"bytes": p.stat().st_size, "sha256": file_digest(p)}
                     for p in sorted(content.rglob("*")) if p.is_file()}
            (content / MANIFEST).write_text(json.dumps({**manifest, "files": files}, indent=2) + "\n",
                                            encoding="utf-8")
        if target.exists():  # renamed aside, not deleted in place: a kill midway must not leave a partial
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.unpack-", dir=target.parent))  # folder
            os.replace(target, old / target.name)  # (that still has its manifest) where the dataset was
            os.replace(content, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(content, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _holds_a_corpus(folder: Path) -> bool:
    """Whether an unpacked zip is a BEIR dataset: a corpus file at its top, or in its folders (CQADupStack's
    forums, each a dataset of its own)."""
    return _has_corpus(folder) or any(_has_corpus(sub) for sub in folder.iterdir() if sub.is_dir())


# --------------------------------------------------------------------------- the whole job
def offline_help(name: str, url: str, mirrored: bool = True) -> str:
    """What to do without a network; ``mirrored``: the URL is the registry's (a mirror applies; with
    ``--url`` it is a usage error, so it is not suggested)."""
    zip_path = downloads_dir() / f"{name}.zip"
    return (f"fetch {url} on a connected machine and put it at {zip_path} (it is checked and unpacked on the "
            f"next call), or unpack it yourself so that {datasets_root() / name}/corpus.jsonl exists"
            + (f"; or point {MIRROR_ENV} (or --mirror) at a reachable copy" if mirrored else ""))


def download(dataset: str | DatasetRef, *, mirror: str | None = None, url: str | None = None,
             sha256: str | None = None, force: bool = False, keep_zip: bool = False, progressbar: bool = False,
             retries: int = 3, backoff: float = 1.0, timeout: float = 60.0) -> Path:
    """Download and unpack the dataset into the cache; return its folder.

    A registered name is fetched from BEIR (or ``mirror`` / ``$HARNESS_BEIR_MIRROR``) and checked
    against BEIR's published md5. ``url`` + ``sha256`` fetch a zip the registry does not know (or a
    different copy of one it does), checked against that sha256. A CQADupStack forum name downloads
    the whole CQADupStack zip and returns the forum's folder.
    """
    ref = DatasetRef.parse(dataset)
    base = ref.base
    if ref.info is None and url is None and registry.unknown_forum(base):  # (with --url: a new name, as any)
        raise HarnessError(registry.unknown_forum(base))
    if ref.info is None and not NAME.fullmatch(base):
        raise HarnessError(f"{base!r} cannot name a downloaded dataset (its folder is {datasets_root()}/NAME): "
                           "use letters, digits and . _ + = - (starting with a letter or digit)")
    mirrored = url is None
    if url is not None:
        if not sha256:
            raise HarnessError("--url needs --sha256: every download is checked against a checksum")
        if not SHA256.fullmatch(sha256):
            raise HarnessError(f"--sha256 takes 64 hexadecimal digits, got {sha256!r}")
        known_hash = f"sha256:{sha256.lower()}"
    elif ref.info is None:
        raise HarnessError(f"unknown dataset {ref.text!r}: not in the registry ({', '.join(registry.names())}); "
                           "give --url and --sha256 to fetch a zip the registry does not know")
    else:
        url = ref.info.url(mirror or mirror_url())
        known_hash = ref.info.known_hash
        if known_hash is None:
            raise HarnessError(f"no published checksum for {ref.text!r}; give --url and --sha256")
    target = datasets_root() / base
    if not force and is_downloaded(ref):
        _same_zip(ref, known_hash, url)
        return dataset_dir(ref)
    zip_path = downloads_dir() / f"{base}.zip"
    with _lock(downloads_dir() / f"{base}.lock", on_wait=lambda: logging.getLogger(__name__).warning(
            "%s is downloading %s; waiting for it", waited_holder(), base)):
        if not force and is_downloaded(ref):  # another process finished it meanwhile
            _same_zip(ref, known_hash, url)
            return dataset_dir(ref)
        if _offline():  # never touch the network: a zip placed by hand must be the one published
            if not zip_path.exists():
                raise HarnessError(f"offline ({OFFLINE_ENV} is set): cannot download {base}. "
                                   + offline_help(base, url, mirrored))
            algorithm, expected = known_hash.split(":", 1)
            found = file_digest(zip_path, algorithm)
            if found != expected:
                raise HarnessError(f"offline ({OFFLINE_ENV} is set): {zip_path} has {algorithm} {found}, not the "
                                   f"expected {expected}; replace it. " + offline_help(base, url, mirrored))
        try:
            fetch(url, zip_path, known_hash, progressbar=progressbar, retries=retries, backoff=backoff,
                  timeout=timeout)
        except TransferError as exc:
            raise HarnessError(f"{exc}. " + offline_help(base, url, mirrored)) from None
        manifest = {
            "name": base, "url": url, "known_hash": known_hash, "bytes": zip_path.stat().st_size,
            "md5": file_digest(zip_path, "md5"), "sha256": file_digest(zip_path, "sha256"),
            "downloaded_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        try:
            unpack(zip_path, target, manifest)
        except HarnessError as exc:  # (not a zip, or no corpus in it: the checksum matched, so another try fetches
            if not keep_zip:  # the same file again; it stayed in .downloads/, taking the disk for nothing)
                zip_path.unlink(missing_ok=True)
            raise HarnessError(f"{exc} (the file has the {known_hash.split(':', 1)[0]} expected: the URL and checksum "
                               f"name a file that is no BEIR dataset zip{'' if keep_zip else '; it was removed'})") from None
        if not keep_zip:
            zip_path.unlink(missing_ok=True)
    folder = dataset_dir(ref)
    if ref.subset is not None and not folder.is_dir():
        raise HarnessError(f"{target} has no forum folder {ref.subset!r}")
    return folder


def _same_zip(ref: DatasetRef, known_hash: str, url: str) -> None:
    """HarnessError when the dataset in the cache was unpacked from another zip than the one asked for
    (its DOWNLOAD.json records the zip's md5 and sha256): ``download NAME --url B --sha256 Y`` over a NAME
    unpacked from zip X printed the folder, exit 0, and NAME went on holding X's content. A folder placed
    by hand (no DOWNLOAD.json) says nothing of its zip and is taken as it is."""
    recorded = manifest(ref)
    if recorded is None:
        return
    algorithm, expected = known_hash.split(":", 1)
    found = recorded.get(algorithm)
    if isinstance(found, str) and found.lower() != expected.lower():
        raise HarnessError(f"{ref.base} is already downloaded, unpacked from {recorded.get('url')} ({algorithm} "
                           f"{found}), not from the zip asked for ({url}: {algorithm} {expected}); add --force to "
                           f"replace {datasets_root() / ref.base} with it")


def manifest(dataset: str | DatasetRef) -> dict | None:
    """The DOWNLOAD.json of a downloaded dataset, None when absent."""
    path = datasets_root() / DatasetRef.parse(dataset).base / MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HarnessError(f"{path}: not a {MANIFEST} written by `harness datasets download` ({exc}); "
                           "remove it, or download again with --force") from None
    if not isinstance(data, dict) or not all(key in data for key in _MANIFEST_KEYS) \
            or not isinstance(data["bytes"], int) or not isinstance(data.get("files", {}), dict):
        raise HarnessError(f"{path}: not a {MANIFEST} written by `harness datasets download` (it needs "
                           f"{', '.join(_MANIFEST_KEYS)}, and files, if given, as a table); remove it, or "
                           "download again with --force")
    return data


_MANIFEST_KEYS = ("url", "bytes", "sha256", "downloaded_at")


def recorded_files(ref: DatasetRef, folder: Path) -> dict[str, dict]:
    """``{path relative to folder: {"bytes", "sha256"}}`` of the files DOWNLOAD.json lists for the dataset in
    ``folder`` (its paths are the zip's: a CQADupStack forum's under its forum folder); {} without a manifest."""
    recorded = manifest(ref)
    base = datasets_root() / ref.base
    return {(base / rel).relative_to(folder).as_posix(): value
            for rel, value in ((recorded or {}).get("files") or {}).items()
            if isinstance(value, dict) and (base / rel).is_relative_to(folder)}


def check_as_downloaded(ref: DatasetRef, folder: Path, checksums: dict[str, str]) -> None:
    """HarnessError when a file read from a downloaded dataset's folder (``checksums``: its sha256 by path relative
    to the folder, as the loader took them) is not the one unpacked there, which its DOWNLOAD.json records: the
    cache's copy was changed (an edit, a truncation), and a run read it as the dataset, with a warning at most
    (judgments naming missing documents). ``harness datasets info`` names every file that differs."""
    recorded = recorded_files(ref, folder)
    for rel, digest in checksums.items():
        want = recorded.get(rel)
        if want is not None and want.get("sha256") != digest:
            raise HarnessError(f"{folder / rel}: not the file downloaded ({MANIFEST} records sha256 "
                               f"{want.get('sha256')}; it has {digest}): the dataset's folder in the cache was "
                               f"changed; `harness datasets download {ref.base} --force` fetches it again")
