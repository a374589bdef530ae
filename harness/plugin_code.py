"""The code a plugin's numbers come from, as a digest: ``{package: sha256}``.

A plugin component (a ``module:Class`` on the import path, or a class another distribution's entry
point registers) computes a run with its own code, which its ``params()`` do not name. Its digest is
taken over the *code files* of the top-level package that holds the class (every ``.py`` file, every
``.pyc`` of a sourceless package (one shipped as bytecode alone) and every compiled extension module,
``.so`` / ``.pyd``, under the package's folders, ``__pycache__`` skipped: its bytecode is the ``.py``'s;
for a single-module plugin, that module's file; under a namespace package, such as ``company.search``,
the first regular package, ``company.search``, not every distribution's folders of ``company``)::

    sha256( for each file, by relative path:  "<relative path>\\0<sha256 of its bytes>\\n" )

so an edit anywhere in the plugin's package (a helper module the class imports included) changes
it, and a benchmark cell or a cached pipeline stage of that plugin is computed again, as an upgrade
of the harness (its version) or of an installed plugin (its release) does. The class's bases are
code it runs too: the package of each class in its method resolution order is hashed the same way
(a shared base in a package of its own, ``lab_common.BaseRanker``, gives a second entry; an edit
there was not seen, and its subclasses' cells were reused with the old base's numbers), except the
standard library's, the built-ins' and an installed library's (a base imported from
``site-packages``: its version is recorded, not keyed, as numpy's or torch's are). Data files in the package
(stopword lists, weights) are not code and not hashed: a setting that reads one should name it in
``params()``. The built-ins (the ``harness`` and ``retrievers`` packages) have no digest: their code
is the harness's version and ``NUMBERS_VERSION``. A class defined in the script a process runs
(``__main__``: ``python exp.py``) has its script's digest, as a single module's, under ``"__main__"``; run as
``python -m lab.exp``, its package's, ``lab`` (it had none, and a pipeline stage of it was a cache "hit" with
the numbers of the script before its edit). A class of ``__main__`` with no source file (an interactive
session, a notebook, ``python -c``) has none, and :func:`unkeyed_code` says so: its pipeline stages are
computed every time, never stored, and its benchmark cells never reused. A class of a namespace without
folders has none either. A package
or module imported from a zip archive (a ``.zip`` on ``sys.path``, a zipped egg) is hashed from the
archive's members as its folder would be (the same code, unzipped or not, has the same digest).

The digest is taken once per package per process (the code a process runs is what it imported first;
a file edited after the import does not change what it computes). A package of more than
:data:`MAX_FILES` code files or :data:`MAX_BYTES` bytes is not hashed whole (a class placed in a large
library): then only the class's own module file is, and the key names it (``package.module``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import zipfile
from pathlib import Path

BUILT_IN = frozenset({"harness", "retrievers"})
CODE_SUFFIXES = (".py", ".pyc", ".so", ".pyd")  # (.pyc in __pycache__ skipped: see _code_files)
MAX_FILES = 5000
MAX_BYTES = 256 * 2**20

_DIGESTS: dict[str, dict[str, str]] = {}


def plugin_code(cls: type) -> dict[str, str]:
    """``{package (or package.module): sha256}`` of the code of the plugin package holding ``cls`` and of
    the packages holding its bases (its method resolution order; the standard library and installed
    libraries left out: :func:`_installed_library`); ``{}`` for a built-in or a class with no file."""
    out: dict[str, str] = {}
    own = (getattr(cls, "__module__", None) or "").partition(".")[0]
    for klass in getattr(cls, "__mro__", None) or (cls,):
        module_name = getattr(klass, "__module__", None)
        if not isinstance(module_name, str):
            continue
        top = module_name.partition(".")[0]
        if module_name == "__main__":  # (a script's class: its file; an interactive session's: none, see unkeyed_code)
            if "__main__" not in _DIGESTS:
                _DIGESTS["__main__"] = _main_digest()
            out.update(_DIGESTS["__main__"])
            continue
        if not top or top in BUILT_IN or top in _STANDARD:
            continue
        if top != own and _installed_library(module_name):
            continue
        if module_name not in _DIGESTS:
            _DIGESTS[module_name] = _digest(module_name, _top_package(module_name))
        out.update(_DIGESTS[module_name])
    return dict(sorted(out.items()))


def entry_code(cls: type, cache: bool = True) -> tuple[dict, bool]:
    """What keys the entries a built-in retriever's cache (a BM25 index, embeddings, a SQLite database) holds
    when ``cls``, a plugin's subclass of it, computes them, and whether to cache them: ``({"code":
    plugin_code(cls)}, cache)``, the fields to add to the entries' key. A built-in's are none (its keys stay as
    they were: the harness's version stands for its code). A
    subclass changes what an entry holds through methods no parameter names (the analyzer, the encoding), and
    was served the built-in's entries; its code digest now keys its own. Where that code cannot be keyed
    (:func:`unkeyed_code`: a class of a notebook) its entries are neither read nor written: ``({}, False)``, said
    once in a warning."""
    reason = unkeyed_code(cls) if cache else None
    if reason is not None:
        import logging

        logging.getLogger(__name__).warning("%s: its cache entries are neither read nor written", reason)
        return {}, False
    code = plugin_code(cls)
    return ({"code": code} if code else {}), cache


def unkeyed_code(cls: type) -> str | None:
    """Why the code of ``cls`` cannot be keyed, or None: a class (or a base) defined in ``__main__`` of a
    process with no source file for it (an interactive session, a notebook, ``python -c``). Nothing then tells
    its code apart from an edited one's, so a pipeline stage of it is computed every time and never stored,
    and a benchmark cell of it is never reused (a stage of a class redefined in a notebook was a cache "hit"
    with the first definition's numbers)."""
    for klass in getattr(cls, "__mro__", None) or (cls,):
        if getattr(klass, "__module__", None) == "__main__" and _main_file() is None:
            return (f"{klass.__qualname__} is defined in __main__ with no source file, as in a notebook or an "
                    f"interactive session: its code cannot be keyed")
    return None


def _main_file() -> str | None:
    """The source file ``__main__`` was run from (``python exp.py``, ``python -m lab.exp``, a zip app's
    ``__main__.py``), or None: an interactive session, a notebook, ``python -c``, a script read from stdin, or a
    ``__main__`` that is not the script the class is in (a standard library's runner, ``python -m cProfile
    exp.py``; an installed library's launcher, such as a notebook kernel's; the harness's own)."""
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    if not isinstance(file, str) or not file:
        return None
    name = getattr(getattr(main, "__spec__", None), "name", None)
    top = name.partition(".")[0] if isinstance(name, str) else ""
    parts = Path(file).parts
    if top in _STANDARD or top in BUILT_IN or "site-packages" in parts or "dist-packages" in parts:
        return None
    return file if os.path.isfile(file) or _archive_of(file) is not None else None


def _main_digest() -> dict[str, str]:
    """The digest of the code ``__main__`` was run from: a script's file (``{"__main__": ...}``); under
    ``python -m lab.exp``, the package ``lab`` as a plugin's (its helper modules included); ``{}`` when it has no
    such file (:func:`unkeyed_code`)."""
    file = _main_file()
    if file is None:
        return {}
    name = getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None)
    if isinstance(name, str) and name and name != "__main__":  # (python -m name)
        return _digest(name, _top_package(name), file)
    return _digest("__main__", "__main__", file)


def _installed_library(module_name: str) -> bool:
    """Whether ``module_name`` was imported from an installed distribution's folder (``site-packages``,
    ``dist-packages``: ``torch.nn.Module``, ``sklearn.base.BaseEstimator``): a library, whose upgrade keys
    nothing (docs/cache.md, "Library versions: recorded, not keyed"); a base class in a local folder or an
    editable install is the plugin's own code."""
    file = getattr(sys.modules.get(module_name), "__file__", None)
    parts = Path(file).parts if isinstance(file, str) else ()
    return "site-packages" in parts or "dist-packages" in parts


# the standard library's top-level modules (``builtins`` for ``object``, ``abc``, ``typing``): not a plugin's
_STANDARD = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins", "__future__"}


def recorded_versions(classes) -> dict:
    """What metrics.json's ``versions`` records of the plugins among ``classes`` (components' classes): each
    installed plugin's release (``{distribution: version}``, :func:`harness.registry.plugin_versions`) and,
    under ``"plugin_code"``, each package's digest; ``{}`` for built-ins alone."""
    from harness.registry import plugin_versions

    releases: dict = {}
    code: dict = {}
    for cls in classes:
        releases.update(plugin_versions(cls))
        code.update(plugin_code(cls))
    return {**releases, **({"plugin_code": dict(sorted(code.items()))} if code else {})}


def _top_package(module_name: str) -> str:
    """The first prefix of ``module_name`` that is a regular module or package: a namespace package
    (``google``, ``company``: no ``__init__.py``, folders shared by many distributions) is not the plugin's."""
    parts = module_name.split(".")
    for n in range(1, len(parts) + 1):
        name = ".".join(parts[:n])
        if getattr(sys.modules.get(name), "__file__", None) is not None:
            return name
    return module_name


def _digest(module_name: str, top: str, file: str | None = None) -> dict[str, str]:
    """``{top: digest}`` of package ``top``'s code files; past the limits (or no package), of the module's own
    file alone (``file``, else ``module_name``'s in sys.modules), ``{module_name: ...}`` under a package."""
    package = sys.modules.get(top) if top != "__main__" else None
    paths = [p for p in getattr(package, "__path__", None) or [] if isinstance(p, str)]
    roots = [Path(p) for p in paths if os.path.isdir(p)]
    if roots:
        files = _code_files(roots)
        if files is not None:
            return {top: _hash(files)}
    elif paths:  # a package in a zip archive: its members (it had no digest, and an edited one's cell was reused)
        digest = _zipped(paths, folder=True)
        if digest is not None:
            return {top: digest}
    own = file if file is not None else getattr(sys.modules.get(module_name), "__file__", None)
    if not isinstance(own, str):
        return {}
    digest = _hash([(Path(own).name, Path(own))]) if os.path.isfile(own) else _zipped([own], folder=False)
    return {} if digest is None else {module_name if paths else top: digest}


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


def _zipped(locations: list[str], folder: bool) -> str | None:
    """The digest of the code under ``locations`` inside a zip archive (``/x/plug.zip/pkg``: a package's
    folder, ``folder``; else one module's file), as :func:`_hash` takes it of the files unzipped; None when
    the location is in no readable archive, or past the limits."""
    digests: list[tuple[str, str]] = []
    total = 0
    for location in locations:
        found = _archive_of(location)
        if found is None:
            return None
        archive, inner = found
        try:
            with zipfile.ZipFile(archive) as opened:
                if not folder:
                    return _combine([(inner.rpartition("/")[2], hashlib.sha256(opened.read(inner)).hexdigest())])
                prefix = inner.rstrip("/") + "/" if inner else ""
                for info in opened.infolist():
                    relative = info.filename[len(prefix):]
                    if (not info.filename.startswith(prefix) or not relative.endswith(CODE_SUFFIXES)
                            or "__pycache__" in relative.split("/")[:-1]):
                        continue
                    total += info.file_size
                    if len(digests) >= MAX_FILES or total > MAX_BYTES:
                        return None
                    digests.append((relative, hashlib.sha256(opened.read(info)).hexdigest()))
        except (OSError, KeyError, zipfile.BadZipFile):
            return None
    return _combine(digests)


def _archive_of(location: str) -> tuple[Path, str] | None:
    """(zip archive, path inside it, ``/``-separated) of a location an archive on ``sys.path`` gave."""
    path = Path(location)
    for archive in path.parents:
        if archive.is_file():
            return (archive, path.relative_to(archive).as_posix()) if zipfile.is_zipfile(archive) else None
    return None


def _hash(files: list[tuple[str, Path]]) -> str:
    digests = []
    for relative, path in files:
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            content = "unreadable"
        digests.append((relative, content))
    return _combine(digests)


def _combine(digests: list[tuple[str, str]]) -> str:
    """sha256 of ``"<relative path>\\0<sha256 of its bytes>\\n"`` for each file, in sorted order."""
    lines = sorted(f"{relative}\0{content}\n" for relative, content in digests)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()
