"""The JSON Lines per-line checks in C (harness._trecrun.jsonl_lines) against the numpy ones they replace
(jsonl._ObjectBlocks._check_carriage_returns / _check_lines), read by read on random bytes cut into random
reads: the same refusals, the same state carried between reads, the same line count."""

from __future__ import annotations

import io
import random

import pytest

from harness.datasets import jsonl
from harness.formats import native

pytestmark = pytest.mark.skipif(jsonl._compiled_lines() is None, reason="the compiled module is not built")

PIECES = [b"{", b"}", b'{"_id": "a"}', b" ", b"\t", b"\r", b"\n", b"\r\n", b"x", b'"', b"\xef\xbb\xbf"]


def _states(data: bytes, cuts: list[int], compiled: bool, monkeypatch) -> list:
    monkeypatch.setattr(jsonl, "_compiled_lines", (lambda: native._built.jsonl_lines) if compiled else (lambda: None))
    blocks = jsonl._ObjectBlocks(io.BytesIO(data))
    out = []
    for size in cuts:
        blocks.read(size)
        if blocks.refused:  # (what the state holds then is never read)
            out.append((True,))
            break
        out.append((False, blocks._open, blocks._last if blocks._open else None, blocks._blank, blocks._cr,
                    blocks._line_ends, blocks.lines))
    return out


def test_the_compiled_checks_equal_numpys_read_by_read(monkeypatch):
    rng = random.Random(29)
    refused = 0
    for case in range(3000):
        data = b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))
        if rng.random() < 0.5:  # mostly well-formed lines, a fault now and then
            lines = [b'{"_id": "d%d"}' % i for i in range(rng.randint(0, 6))]
            data = rng.choice([b"\n", b"\r\n"]).join(lines) + rng.choice([b"", b"\n", b"\r\n", b" \n\n", data])
        cuts = [rng.randint(1, 9) for _ in range(len(data) + 1)]
        numpy_states = _states(data, cuts, False, monkeypatch)
        assert _states(data, cuts, True, monkeypatch) == numpy_states, (case, data, cuts)
        refused += numpy_states[-1][0]
    assert 500 < refused < 2900  # both outcomes were exercised
