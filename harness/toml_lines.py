"""The line of a TOML file where a key path is written, for error messages (``b.toml:7: ...``).

Config errors name a key path as the readers build it (``pipelines[0].stages[1].depth``,
``datasets[2].path``, ``retrievers[0].params.k1``): tables by ``.``, array elements by ``[i]``.
:func:`key_lines` maps each path written in a TOML text to the (1-based) line it starts on: a
key/value line, a ``[table]`` or ``[[array of tables]]`` header (the path of the table or of the
array's element it opens), an element of an array value and a key of an inline table (on their own
lines when the value spans several). :func:`line_of` gives the line of a path, or of its longest
written prefix when the path itself is not written (a missing required key: the line of the table
that lacks it). The text is only scanned, never validated: ``tomllib`` read it already; anything the
scanner does not follow gives fewer lines, never an error.
"""

from __future__ import annotations

import re

_BARE = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_END = re.compile(r"[,\]}\n#]")


class _Scanner:
    def __init__(self, text: str):
        self.text, self.i, self.lines = text, 0, {}
        self.arrays: dict[str, int] = {}  # array-of-tables path -> elements so far
        self._counted, self._newlines = 0, 0  # newlines before self._counted

    # -------------------------------------------------------------- characters
    def line(self) -> int:
        """The line at i, counting on from the last call's position (the scan moves forward: counting from
        the start each time took a minute for a 1.5 MB config of 20,000 tables)."""
        if self.i < self._counted:
            self._counted, self._newlines = 0, 0
        self._newlines += self.text.count("\n", self._counted, self.i)
        self._counted = self.i
        return self._newlines + 1

    def skip_blank(self, newlines: bool) -> None:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in " \t\r" or (newlines and c == "\n"):
                self.i += 1
            elif c == "#":
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            else:
                return

    def string(self) -> str:
        """The string at i (basic, literal, or either multi-line), i moved past it; escapes left as written."""
        text = self.text
        for quote in ('"""', "'''"):
            if text.startswith(quote, self.i):
                end = self.i + 3
                while True:
                    end = text.find(quote, end)
                    if end < 0:
                        self.i = len(text)
                        return ""
                    if quote == '"""' and _escaped(text, end):
                        end += 1
                        continue
                    while text.startswith(quote[0], end + 3):  # up to two quotes just before the closing three
                        end += 1
                    value, self.i = text[self.i + 3:end], end + 3
                    return value
        quote, start = text[self.i], self.i + 1
        end = start
        while end < len(text) and text[end] != quote and text[end] != "\n":
            end += 2 if quote == '"' and text[end] == "\\" else 1
        self.i = end + 1
        return text[start:end]

    def key(self) -> list[str]:
        """A (dotted) key at i: its parts, i moved past it."""
        parts = []
        while self.i < len(self.text):
            self.skip_blank(False)
            if self.text[self.i:self.i + 1] in ('"', "'"):
                parts.append(self.string())
            else:
                match = _BARE.match(self.text, self.i)
                if not match:
                    break
                parts.append(match.group())
                self.i = match.end()
            self.skip_blank(False)
            if self.text[self.i:self.i + 1] != ".":
                break
            self.i += 1
        return parts

    # -------------------------------------------------------------- values
    def value(self, path: str) -> None:
        self.skip_blank(False)
        c = self.text[self.i:self.i + 1]
        if c in ('"', "'"):
            self.string()
        elif c == "[":
            self.i += 1
            index = 0
            while True:
                self.skip_blank(True)
                if self.i >= len(self.text) or self.text[self.i] == "]":
                    self.i += 1
                    return
                element = f"{path}[{index}]"
                self.lines.setdefault(element, self.line())
                self.value(element)
                index += 1
                self.skip_blank(True)
                if self.text[self.i:self.i + 1] == ",":
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self.skip_blank(True)
                if self.i >= len(self.text) or self.text[self.i] == "}":
                    self.i += 1
                    return
                line, parts = self.line(), self.key()
                if not parts:
                    return
                inner = _join(path, parts)
                self.lines.setdefault(inner, line)
                self.skip_blank(False)
                if self.text[self.i:self.i + 1] == "=":
                    self.i += 1
                self.value(inner)
                self.skip_blank(True)
                if self.text[self.i:self.i + 1] == ",":
                    self.i += 1
        else:  # a number, a boolean, a date: up to the next delimiter
            match = _SCALAR_END.search(self.text, self.i)
            self.i = len(self.text) if match is None else max(match.start(), self.i + 1)

    # -------------------------------------------------------------- statements
    def table_path(self, parts: list[str], array: bool, line: int) -> str:
        """The path a header opens: each earlier array of tables named on the way is its last element
        (the tables and the array it names are written on ``line`` unless written earlier)."""
        path = ""
        for n, part in enumerate(parts):
            path = _join(path, [part])
            self.lines.setdefault(path, line)
            if n == len(parts) - 1 and array:
                count = self.arrays.get(path, 0)
                self.arrays[path] = count + 1
                return f"{path}[{count}]"
            if path in self.arrays:
                path = f"{path}[{self.arrays[path] - 1}]"
        return path

    def scan(self) -> dict[str, int]:
        table = ""
        while True:
            self.skip_blank(True)
            if self.i >= len(self.text):
                return self.lines
            line = self.line()
            if self.text[self.i] == "[":
                array = self.text.startswith("[[", self.i)
                self.i += 2 if array else 1
                table = self.table_path(self.key(), array, line)
                self.lines.setdefault(table, line)
                end = self.text.find("\n", self.i)
                self.i = len(self.text) if end < 0 else end
                continue
            parts = self.key()
            if not parts:  # (not a statement this scanner follows: go to the next line)
                end = self.text.find("\n", self.i + 1)
                self.i = len(self.text) if end < 0 else end
                continue
            path = _join(table, parts)
            for n in range(1, len(parts)):  # (a dotted key also writes its tables)
                self.lines.setdefault(_join(table, parts[:n]), line)
            self.lines.setdefault(path, line)
            self.skip_blank(False)
            if self.text[self.i:self.i + 1] == "=":
                self.i += 1
            self.value(path)


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd run of backslashes."""
    n = 0
    while at - n - 1 >= 0 and text[at - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _join(prefix: str, parts: list[str]) -> str:
    for part in parts:
        prefix = f"{prefix}.{part}" if prefix else part
    return prefix


def key_lines(text: str) -> dict[str, int]:
    """{key path: line} of every key, table and array element written in ``text``."""
    try:
        return _Scanner(text).scan()
    except (IndexError, ValueError, RecursionError):  # (a text the scanner does not follow: fewer lines)
        return {}


_STEP = re.compile(r"(?:\.[^.\[]*|\[\d+\])$")


def line_of(text: str, path: str) -> int | None:
    """The line ``path`` is written on, else that of its longest written prefix; None when none is."""
    lines = key_lines(text)
    while path:
        if path in lines:
            return lines[path]
        shorter = _STEP.sub("", path)
        if shorter == path:
            return None
        path = shorter
    return None
