"""A throwaway PostgreSQL cluster for tests: ``initdb`` + ``pg_ctl`` in a temporary folder, listening
only on a Unix socket in that folder (no TCP port), stopped and deleted afterwards.

PostgreSQL refuses to run as root, and CI runs as root: then the server runs as the ``postgres``
OS user (``runuser -u postgres --``) in a folder that user owns. The fixture skips, with the
reason, when the server binaries (``/usr/lib/postgresql/*/bin`` or on PATH) or that user are absent.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SERVER_USER = "postgres"


def server_bindir() -> Path | None:
    """The folder holding initdb and pg_ctl: the newest /usr/lib/postgresql/<v>/bin, else PATH."""
    def version(path: str) -> tuple:
        return tuple(int(x) if x.isdigit() else 0 for x in Path(path).parts[-3].split("."))

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def start_cluster():
    """Start a cluster; yields the DSN (database ``postgres``, user ``postgres``, trust auth)."""
    bindir = server_bindir()
    if bindir is None:
        pytest.skip("needs the PostgreSQL server binaries (initdb, pg_ctl; apt-get install postgresql), absent here")
    prefix: list[str] = []
    owner = None
    if os.geteuid() == 0:  # postgres will not run as root: run it as the postgres OS user
        import pwd

        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            pytest.skip(f"running as root needs the OS user {SERVER_USER!r} to run PostgreSQL; it is absent")
        if shutil.which("runuser") is None:
            pytest.skip("running as root needs runuser to start PostgreSQL as another user; it is absent")
        prefix = ["runuser", "-u", SERVER_USER, "--"]
    folder = Path(tempfile.mkdtemp(prefix="harness-pg-"))  # short: a socket path is at most ~107 bytes
    if owner is not None:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    data, log = folder / "data", folder / "server.log"

    def run(*args: str) -> None:
        proc = subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            log_text = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{args[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}\n{log_text}")

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--locale=C", "--no-sync", "--no-instructions")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o",
            f"-c listen_addresses='' -c unix_socket_directories='{folder}' -c fsync=off -c full_page_writes=off",
            "start")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield f"host={folder} port=5432 dbname=postgres user=postgres"
    finally:
        subprocess.run([*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                       capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
