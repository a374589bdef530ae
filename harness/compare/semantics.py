"""Refuse to compare results evaluated under different trec_eval semantics.

Each result records its semantics in ``settings["semantics"]`` (``trec_eval-9`` or ``trec_eval-10``,
see :mod:`harness.evaluation.semantics`); a run file compared directly is evaluated here under the
default. The two rank float32-only ties differently, so a difference between such results may be
the semantics, not the systems. Results that record no semantics (written before it was recorded)
are not checked.
"""

from __future__ import annotations

from typing import Sequence

from harness.errors import InputError


def recorded_semantics(system) -> str | None:
    """The semantics a system's values were computed under (None when its metrics.json has none)."""
    if system.document is None:  # a run file evaluated here, or an EvaluationResult of this process
        from harness.evaluation.semantics import DEFAULT_SEMANTICS

        value = (system.settings or {}).get("semantics")
        return value if isinstance(value, str) else DEFAULT_SEMANTICS
    value = (system.document.settings or {}).get("semantics")
    return value if isinstance(value, str) else None


def refuse_mixed_semantics(systems: Sequence) -> None:
    """InputError naming the first system whose recorded semantics differ from the first system's."""
    known = [(s, recorded_semantics(s)) for s in systems]
    known = [(s, name) for s, name in known if name is not None]
    for s, name in known[1:]:
        ref, ref_name = known[0]
        if name != ref_name:
            how = f"re-evaluate with --semantics {ref_name}"
            if s.document is None or ref.document is None:  # compare/check evaluate a run file under the default
                how = (f"a run file given here is evaluated under {name if s.document is None else ref_name}: "
                       f"evaluate it with harness evaluate --semantics {name if s.document is not None else ref_name}"
                       " --json and compare that file")
            raise InputError(f"{s.name} was evaluated under {name} semantics but {ref.name} under {ref_name}: "
                             f"values are not comparable ({how})", s.source)
