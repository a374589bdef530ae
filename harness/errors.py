"""User-facing errors: one line naming the file, line and id at fault."""

from __future__ import annotations

import json
from typing import Any


class HarnessError(Exception):
    """A user's mistake (bad input, bad option). The CLI prints it on one line and exits 2."""


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
    """A mistake in a config file: ``<file>: <key path>: <message>``."""

    def __init__(self, source: str, key: str, message: str):
        self.source, self.key, self.message = source, key, message
        super().__init__(f"{source}: {key}: {message}" if key else f"{source}: {message}")


def render(value: Any) -> str:
    """A config value as the user would write it (JSON-style: strings in double quotes)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)
