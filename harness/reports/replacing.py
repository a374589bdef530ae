"""Whether a result folder about to be written holds the result of another system.

``harness run -p k1=1.2`` and then a plain ``harness run`` (or two ``run_experiment(..., output_dir=...)``
calls) write one folder: the second replaces the first's files, and the folder's numbers are no longer the
ones its owner ran. :func:`replaced_differences` names what differs (the retriever or pipeline, its
parameters, the split); :func:`warn_if_replacing` issues it as a :class:`ReplacedResultWarning` (the
library's way), and ``harness run`` prints it as one line with its own hint (``--name``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from harness.errors import HarnessWarning, InputError

_UNSET = object()


class ReplacedResultWarning(HarnessWarning):
    """A result folder held another system's result, which the run now writing there replaces."""


def replaced_differences(folder: Path, retriever: dict, split: str) -> str | None:
    """What ``folder``'s result differs in from the one about to be written there (``retriever``: its
    metrics.json block, ``{"name", "params"}``; ``split``: the dataset's), e.g. ``parameters k1 0.9 (now 1.2)``;
    None when the folder holds no readable metrics.json, or the result of the same system (a rerun)."""
    from harness.reports import MetricsDocument
    from harness.reports.document import plain_json

    if not (folder / "metrics.json").is_file():
        return None
    try:
        old = MetricsDocument.read(folder / "metrics.json")
    except InputError:
        return None
    name, params = retriever["name"], plain_json(retriever["params"])
    old_name, old_params, old_split = old.retriever.get("name"), old.retriever.get("params"), old.dataset.get("split")
    old_params = old_params if isinstance(old_params, dict) else {}
    differ = []
    if old_name != name:
        differ.append(f"retriever {old_name!r}, not {name!r}")
    changed = sorted(k for k in old_params.keys() | params.keys() if old_params.get(k, _UNSET) != params.get(k, _UNSET))
    if old_name == name and changed:
        shown = [_change(k, old_params.get(k, _UNSET), params.get(k, _UNSET)) for k in changed[:3]]
        differ.append("parameters " + ", ".join(shown) + (f" and {len(changed) - 3} more" if len(changed) > 3 else ""))
    if isinstance(old_split, str) and old_split != split:
        differ.append(f"split {old_split!r}, not {split!r}")
    return "; ".join(differ) or None


def warn_if_replacing(folder: Path, retriever: dict, split: str) -> None:
    """Issue a :class:`ReplacedResultWarning` when ``folder`` holds another system's result (see
    :func:`replaced_differences`), before the run that replaces it starts."""
    differ = replaced_differences(folder, retriever, split)
    if differ:
        warnings.warn(ReplacedResultWarning(f"{folder} holds the result of another run ({differ}), which this run "
                                            "replaces: give another output_dir to keep both"), stacklevel=3)


def _change(key: str, old, new) -> str:
    """One changed parameter as the warning shows it: ``k1 0.9 (now 1.2)``; a structured value (a pipeline's
    stages) only as changed."""
    if isinstance(old, (dict, list)) or isinstance(new, (dict, list)):
        return f"{key} changed"
    old, new = ("unset" if v is _UNSET else json.dumps(v, sort_keys=True) for v in (old, new))
    return f"{key} {old if len(old) <= 40 else old[:37] + '...'} (now {new if len(new) <= 40 else new[:37] + '...'})"
