"""User-facing errors: one line naming the file, line and id at fault."""

from __future__ import annotations

import json
import os
from typing import Any


class HarnessError(Exception):
    """A user's mistake (bad input, bad option). The CLI prints it on one line and exits 2."""


class HarnessWarning(UserWarning):
    """Something the user of a run should know that is no error (an http retriever's queries that failed and
    were given empty rankings under ``on_failure=empty``). Issued through :mod:`warnings`, never printed by the
    library: a Python caller filters it as any warning (``warnings.simplefilter("error", HarnessWarning)``);
    the CLI prints each one as ``warning: <message>`` on stderr (:func:`harness.cli.show_own_deprecations`)."""


class InputError(HarnessError):
    """Bad content in an input file.

    Rendered as ``path:line: message (id 'x')`` so that the user can jump straight to it.
    """

    def __init__(self, message: str, path: object = None, line: int | None = None, id: str | None = None):
        self.message = message
        self.path = None if path is None else str(path)
        self.line = line
        self.id = None if id is None else str(id)  # numpy str_ ids render as plain strings
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        # str(): a numpy string id (from columnar readers) prints as plain quoted text, not np.str_('x')
        what = f" (id {str(self.id)!r})" if self.id is not None else ""
        return f"{where}{self.message}{what}"


class ConfigError(HarnessError):
    """A mistake in a config file: ``<file>:<line>: <key path>: <message>``; the line is where the key is
    written (or the table lacking it: :func:`harness.toml_lines.line_of`), read from ``source`` when it is
    a TOML file (``<file>: <key path>: <message>`` otherwise, e.g. a config given as a dict)."""

    def __init__(self, source: str, key: str, message: str):
        self.source, self.key, self.message = source, key, message
        self.line = _config_line(source, key)
        where = f"{source}:{self.line}" if self.line is not None else source
        super().__init__(f"{where}: {key}: {message}" if key else f"{where}: {message}")


def _config_line(source: str, key: str) -> int | None:
    """The line of ``key`` in the TOML file ``source`` (under 16 MiB), or None."""
    if not key or not isinstance(source, str) or not source.endswith(".toml"):
        return None
    try:
        if os.path.getsize(source) > 16 * 2**20:
            return None
        with open(source, encoding="utf-8-sig") as handle:  # (a leading byte-order mark dropped, as read_toml drops it)
            text = handle.read()
    except (OSError, ValueError):
        return None
    from harness.toml_lines import line_of

    return line_of(text, key)


def render(value: Any) -> str:
    """A config value as the user would write it (JSON-style: strings in double quotes)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
