"""A dsn libpq refuses: the error line quoted libpq's message, which names the fragment it could not
read, and that fragment is (part of) the password: ``postgresql://u:p%zzsecret@h/d`` (a ``%`` not
followed by two hex digits, common in passwords) gave ``bad dsn: invalid percent-encoded token:
"p%zzsecret"``, the whole secret in the line (stderr, a bench's leaderboard.json). docs/engines.md: the
dsn is "recorded and shown without its secrets". No server needed (libpq parses the dsn locally)."""

from __future__ import annotations

import pytest

from retrievers import create

pytest.importorskip("psycopg", reason="the postgres retriever needs psycopg 3 (the 'postgres' extra)")


@pytest.mark.parametrize("dsn, shown", [
    ("postgresql://u:p%zzsecret@h/d", 'bad dsn: invalid percent-encoded token: "***"'),
    ("postgresql://u:my secret@h/d",
     'bad dsn: unexpected spaces found in "***", use percent-encoded spaces (%20) instead'),
    ("postgresql://h/d?password=p%zzsecret", 'bad dsn: invalid percent-encoded token: "***"'),
    ("host=h password=my secret", 'bad dsn: missing "=" after "***" in connection info string'),
])
def test_a_refused_dsn_shows_no_part_of_its_password(dsn, shown):
    with pytest.raises(ValueError) as caught:
        create("postgres", dsn=dsn)
    assert str(caught.value) == shown


def test_a_refused_dsn_without_a_secret_names_the_fragment():
    with pytest.raises(ValueError, match=r'^bad dsn: missing "=" after "oops" in connection info string$'):
        create("postgres", dsn="host=h oops")
