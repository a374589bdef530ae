"""The compiled run reader (harness/native/trecrun.c) against the line reader, the reference grammar.

The compiled reader must return exactly the run the line reader builds (ids, order, float64 scores,
ties) or None, and never a different run. Every case is read both ways; the randomized files mix what
the fast path must get right: ids that intern by a whole key and ids longer than a key (compared byte
by byte past it), non-ASCII ids, every score spelling the grammar allows (decimal fast path, exponents,
long mantissas, infinities, signed zeros), queries that come back after another one, comment and blank
lines, CRLF ends, files cut into several parts (threads).
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest

from harness.errors import InputError
from harness.formats import native
from harness.formats.trec import read_run, read_run_lines

pytestmark = pytest.mark.skipif(native._built is None, reason="the compiled run reader is not built (no C compiler)")


def read_native(data: bytes, threads: int = 1):
    """The compiled reader's run with ``threads`` parts, or None."""
    return native.read_run_native(data, threads)


def same_run(a, b) -> None:
    """The same queries (in order), documents per query in canonical order, bit-equal scores."""
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert np.array_equal(a.offsets, b.offsets)
    for i in range(a.n_queries):
        assert a.doc_ids(i) == b.doc_ids(i)
    assert a.scores.view(np.int64).tolist() == b.scores.view(np.int64).tolist()  # bit for bit (-0.0, inf)


def test_a_plain_run_is_read_with_its_vocabulary_in_string_order(tmp_path):
    data = b"q1 Q0 d2 1 2.5 t\nq1 Q0 d10 2 1.5 t\nq2 Q0 d2 1 0.5 t\n"
    run = read_native(data)
    assert run.vocab_sorted and run.doc_vocab.tolist() == ["d10", "d2"]  # string order, not numeric
    assert run.to_dict() == {"q1": {"d2": 2.5, "d10": 1.5}, "q2": {"d2": 0.5}}
    path = tmp_path / "run"
    path.write_bytes(data)
    same_run(read_run(path), read_run_lines(data, path))


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 2.5 tag extra columns\nq1 Q0 d2 2 1.5 tag\n",
    "q1\tQ0\td1\t1\t2.5\ttag\nq1  Q0   d2 2 1.5\t tag\n  q2 Q0 d1 1 0.5 tag  \n",
    "# ir_metadata\n  # indented comment\n\nq1 Q0 d1 1 2.5 tag\n\n\nq1 Q0 d2 2 1.5 tag\n# trailing",
    "q1 Q0 d1 1 2.5 tag\r\nq1 Q0 d2 2 1.5 tag\r\n",
    "q1 Q0 d1 1 2.5 tag\r",  # CR at the end of the file, no LF
    "q1 Q0 d1 x 1e3 t\nq1 Q0 d2 y -2.5E-3 t\nq1 Q0 d3 z +.5 t\nq1 Q0 d4 - 7. t\nq1 Q0 d5 - INF t\n"
    "q1 Q0 d6 - -Infinity t\nq1 Q0 d7 - -0.0 t\nq1 Q0 d8 - 0 t\nq1 Q0 d9 - 1234567890123456789012 t\n",
    "q1 Q0 d\u00a01 1 2.5 tag\nq1 Q0 d\u20032 2 1.5 tag\nq1 Q0 \u00e9 1 1 t\nq1 Q0 \U0001f600 1 3 t\n",  # non-ASCII ids
    "q2 Q0 a 1 1 t\nq1 Q0 b 1 1 t\nq2 Q0 c 2 0.5 t\nq1 Q0 a 2 0.5 t\n",  # queries come back: grouped, first-seen order
    "q1 Q0 same 1 1 t\nq2 Q0 same 1 1 t\n",  # one distinct id
])
def test_accepted_files_read_as_the_line_reader_reads_them(tmp_path, text):
    data = text.encode()
    path = tmp_path / "run"
    path.write_bytes(data)
    expected = read_run_lines(data, path)
    for threads in (1, 2, 3):
        same_run(read_native(data, threads), expected)
    same_run(read_run(path), expected)


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1_0 tag\n",  # Python's float would read 10: refused
    "q1 Q0 d1 1 0x10 tag\n",
    "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2\r1.5 tag\n",  # a lone CR
    "q1 Q0 d1 1 2.5\n",  # 5 columns
    "q1 Q0 d1 1 NaN tag\n",
    "q1 Q0 d1 1 nan tag\n",
    "q1 Q0 d1 1 1e tag\n",
    "q1 Q0 d1 1 . tag\n",
    "q1 Q0 d1 1 2 t\nq1 Q0 d2 1 2 t\nq1 Q0 d1 3 1 t\n",  # a document twice for one query
    "q1 Q0 d1 1 2 t\nq2 Q0 d1 1 2 t\nq1 Q0 d1 3 1 t\n",  # ... in two blocks of the query
    "",  # (blank and '#' lines only are left to it too, which reads an empty run: test_trec_empty_run.py)
])
def test_what_the_line_reader_refuses_is_left_to_it(tmp_path, text):
    data = text.encode()
    for threads in (1, 2):
        assert read_native(data, threads) is None
    path = tmp_path / "run"
    path.write_bytes(data)
    with pytest.raises(InputError):
        read_run(path)


@pytest.mark.parametrize("data", [b"q1 Q0 d\xff 1 2 t\n", b"q\xc0\x80 Q0 d 1 2 t\n", b"q1 Q0 \xed\xa0\x80 1 2 t\n",
                                  b"q1 Q0 d\x00 1 2 t\n"])
def test_ids_that_are_not_utf8_or_hold_nul_are_left_to_the_line_reader(tmp_path, data):
    # (invalid byte, overlong form, a surrogate: refused by the line reader; NUL: it decides)
    assert read_native(data) is None


def _score_text(rng: random.Random) -> tuple[str, float]:
    kind = rng.randrange(8)
    value = rng.choice([rng.uniform(-50, 50), rng.gauss(0, 1e-3), rng.uniform(0, 1e6), float(rng.randrange(-9, 9))])
    if kind == 0:
        text = f"{value:.4f}"
    elif kind == 1:
        text = repr(value)  # up to 17 significant digits: the slow path
    elif kind == 2:
        text = f"{value:.6e}"
    elif kind == 3:
        text = str(rng.randrange(-10**20, 10**20))  # long integers
    elif kind == 4:
        text = rng.choice(["inf", "-inf", "+Infinity", "-0.0", "0", "+0", ".5", "5.", "-.25e+2", "1E-400", "1e400"])
    elif kind == 5:
        text = f"{rng.randrange(10**15)}.{rng.randrange(10**6):06d}"  # 21 digits: beyond the fast path
    else:
        text = f"{round(value, rng.randrange(0, 9))}"
    return text, float(text)


def _random_run(rng: random.Random, n_queries: int, depth: int, ids: list[str]) -> tuple[bytes, dict]:
    lines, expected = [], {}
    for _ in range(rng.randrange(3)):
        lines.append("# comment " + str(rng.random()))
    blocks = []
    for q in range(n_queries):
        qid = f"q{rng.randrange(10**6)}-{q}" if rng.random() < 0.9 else f"\u00fcq{q}"
        docs = rng.sample(ids, min(depth, len(ids)))
        entries = []
        for doc in docs:
            text, value = _score_text(rng)
            expected.setdefault(qid, {})[doc] = value
            sep = rng.choice([" ", " ", " ", "\t", "  "])
            entries.append(f"{qid}{sep}Q0 {doc} {rng.randrange(1000)} {text} run{sep}")
        cut = rng.randrange(len(entries) + 1)  # some queries come back after others
        blocks.append(entries[:cut])
        blocks.append(entries[cut:])
    rng.shuffle(blocks)
    for block in blocks:
        lines.extend(block)
        if rng.random() < 0.1:
            lines.append("")
    end = "\r\n" if rng.random() < 0.2 else "\n"
    return (end.join(lines) + (end if rng.random() < 0.8 else "")).encode(), expected


@pytest.mark.parametrize("seed", range(12))
def test_randomized_runs_match_the_line_reader(tmp_path, seed):
    rng = random.Random(seed)
    family = seed % 4
    if family == 0:  # short ids of digits: whole keys
        ids = [str(rng.randrange(10**7)) for _ in range(400)]
    elif family == 1:  # long ids, shared prefix, few distinct bytes: past the key, compared byte by byte
        ids = ["doc-" + "".join(rng.choice("ab") for _ in range(rng.randrange(1, 90))) for _ in range(400)]
    elif family == 2:  # any printable ASCII and some non-ASCII
        alphabet = [chr(c) for c in range(33, 127)] + ["\u00e9", "\u00a0", "\u4e2d", "\U0001f600"]
        ids = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 12))) for _ in range(400)]
    else:  # ids that are prefixes of one another
        base = "".join(rng.choice("xyz") for _ in range(30))
        ids = [base[:k] for k in range(1, 31)] + [base[:k] + "0" for k in range(1, 31)]
    ids = [i for i in dict.fromkeys(ids) if not i.startswith("#")]
    data, expected = _random_run(rng, n_queries=rng.randrange(1, 30), depth=rng.randrange(1, 60), ids=ids)
    path = tmp_path / "run"
    path.write_bytes(data)
    reference = read_run_lines(data, path)
    assert reference.to_dict() == expected
    for threads in (1, 2, 5):
        run = read_native(data, threads)
        assert run is not None
        same_run(run, reference)
        assert run.doc_vocab.tolist() == sorted(set(run.doc_vocab.tolist()))


def test_scores_are_the_floats_python_reads(tmp_path):
    # Every score bit-equal to float(token), through the fast path (<= 15 digits) and Python's own.
    rng = random.Random(7)
    tokens = []
    for _ in range(3000):
        value = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if value != value:
            continue
        tokens += [repr(value), f"{value:.3g}", f"{abs(value) % 1000:.{rng.randrange(0, 16)}f}"]
    tokens += ["0.1", "0.3", "123456789012345", "1234567890123456", "9007199254740993", "2.2250738585072011e-308",
               "4.9e-324", "1.7976931348623157e308", "0.000000000000000000001"]
    data = "".join(f"q Q0 d{i} 0 {t} r\n" for i, t in enumerate(tokens)).encode()
    run = read_native(data, threads=1)
    by_id = dict(zip(run.doc_vocab[run.doc_codes].tolist(), run.scores.tolist()))
    assert all(struct.pack("d", by_id[f"d{i}"]) == struct.pack("d", float(t)) for i, t in enumerate(tokens))


def test_switched_off_it_leaves_the_file_to_the_pyarrow_reader(tmp_path, monkeypatch):
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2 2.5 t\n")
    calls = []
    monkeypatch.setattr(native, "read_run_native", lambda data: calls.append(1))
    monkeypatch.setenv(native.SWITCH, "0")
    assert not native.available()
    assert read_run(path).to_dict() == {"q1": {"d1": 2.5, "d2": 2.5}} and not calls
