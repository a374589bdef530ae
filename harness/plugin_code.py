"""The code a plugin's numbers come from, as a digest: ``{package: sha256}``.

A plugin component (a ``module:Class`` on the import path, or a class another distribution's entry
point registers) computes a run with its own code, which its ``params()`` do not name. Its digest is
taken over the *code files* of the top-level package that holds the class (every ``.py`` file and
compiled extension module, ``.so`` / ``.pyd``, under the package's folders, ``__pycache__`` skipped;
for a single-module plugin, that module's file; under a namespace package, such as ``company.search``,
the first regular package, ``company.search``, not every distribution's folders of ``company``)::

    sha256( for each file, by relative path:  "<relative path>\\0<sha256 of its bytes>\\n" )

so an edit anywhere in the plugin's package (a helper module the class imports included) changes
it, and a benchmark cell or a cached pipeline stage of that plugin is computed again, as an upgrade
of the harness (its version) or of an installed plugin (its release) does. Data files in the package
(stopword lists, weights) are not code and not hashed: a setting that reads one should name it in
``params()``. The built-ins (the ``harness`` and ``retrievers`` packages) have no digest: their code
is the harness's version and ``NUMBERS_VERSION``. A class with no file (defined in ``__main__`` or a
notebook, or a namespace without folders) has none either: nothing can tell its code apart.

The digest is taken once per package per process (the code a process runs is what it imported first;
a file edited after the import does not change what it computes). A package of more than
:data:`MAX_FILES` code files or :data:`MAX_BYTES` bytes is not hashed whole (a class placed in a large
library): then only the class's own module file is, and the key names it (``package.module``).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

BUILT_IN = frozenset({"harness", "retrievers"})
CODE_SUFFIXES = (".py", ".so", ".pyd")
MAX_FILES = 5000
MAX_BYTES = 256 * 2**20

_DIGESTS: dict[str, dict[str, str]] = {}


def plugin_code(cls: type) -> dict[str, str]:
    """``{package (or package.module): sha256}`` of the code of the plugin package holding ``cls``;
    ``{}`` for a built-in or a class with no file."""
    module_name = getattr(cls, "__module__", None) or ""
    top = module_name.partition(".")[0]
    if not top or top in BUILT_IN or top == "__main__":
        return {}
    if module_name not in _DIGESTS:
        _DIGESTS[module_name] = _digest(module_name, _top_package(module_name))
    return dict(_DIGESTS[module_name])


def _top_package(module_name: str) -> str:
    """The first prefix of ``module_name`` that is a regular module or package: a namespace package
    (``google``, ``company``: no ``__init__.py``, folders shared by many distributions) is not the plugin's."""
    parts = module_name.split(".")
    for n in range(1, len(parts) + 1):
        name = ".".join(parts[:n])
        if getattr(sys.modules.get(name), "__file__", None) is not None:
            return name
    return module_name


def _digest(module_name: str, top: str) -> dict[str, str]:
    package = sys.modules.get(top)
    roots = [Path(p) for p in getattr(package, "__path__", None) or [] if isinstance(p, str) and os.path.isdir(p)]
    if roots:
        files = _code_files(roots)
        if files is not None:
            return {top: _hash(files)}
    own = getattr(sys.modules.get(module_name), "__file__", None)
    if not isinstance(own, str) or not os.path.isfile(own):
        return {}
    return {module_name if roots else top: _hash([(Path(own).name, Path(own))])}


def _code_files(roots: list[Path]) -> list[tuple[str, Path]] | None:
    """(relative path, path) of each code file under ``roots``; None past the limits."""
    found: list[tuple[str, Path]] = []
    total = 0
    for root in roots:
        for folder, dirs, names in os.walk(root):  # (links to folders not followed: no loops)
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in names:
                if not name.endswith(CODE_SUFFIXES):
                    continue
                path = Path(folder) / name
                try:
                    total += path.stat().st_size
                except OSError:
                    continue
                found.append((path.relative_to(root).as_posix(), path))
                if len(found) > MAX_FILES or total > MAX_BYTES:
                    return None
    return found


def _hash(files: list[tuple[str, Path]]) -> str:
    lines = []
    for relative, path in files:
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            content = "unreadable"
        lines.append(f"{relative}\0{content}\n")
    return hashlib.sha256("".join(sorted(lines)).encode("utf-8")).hexdigest()
