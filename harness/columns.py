"""Helpers for columnar data."""

from __future__ import annotations

from typing import Iterable

import numpy as np


def object_array(values: Iterable[str]) -> np.ndarray:
    """A 1-d numpy object array of the given strings (never a fixed-width unicode array)."""
    values = list(values)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
