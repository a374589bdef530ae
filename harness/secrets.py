"""What results never record: connection secrets and secret-looking request headers, one rule for the
harness (recorded configs: :func:`without_secrets`) and the retrievers that hold such settings (the
postgres retriever's ``dsn``, the http retriever's headers)."""

from __future__ import annotations

import re

SECRET_PARAMETERS = ("password", "sslpassword")  # libpq's connection parameters that are secrets
SECRET_HEADER = re.compile(r"auth|key|token|secret|passw|cookie|session", re.IGNORECASE)  # a header name
ENV_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # ``${VAR}``: a reference to a secret, not the secret
REDACTED = "<redacted>"

# libpq's secret connection parameters in a connection string (``password=...``, not a path's part nor
# the end of a longer name; its value quoted, or up to whitespace a backslash does not escape, as
# libpq reads it), in a URI's query (``?password=...&``, up to the next parameter) or a URI's user info
# (``postgresql://user:secret@host``); a parameter named so; the literal value of a request header whose
# name looks secret (:data:`SECRET_HEADER`): never written into a result (docs/engines.md, docs/http.md)
_SECRET_PARAMETER = re.compile(r"(?<![\w/\\?&])((?:ssl)?password)\s*=\s*('(?:[^'\\]|\\.)*'|(?:\\[\s\S]|\S)+)")
_SECRET_QUERY = re.compile(r"([?&](?:ssl)?password)=[^&#\s]*")
_SECRET_USERINFO = re.compile(r"(://[^/@:\s]*):[^@/\s]*@")
# A PostgreSQL URI whose password holds a raw '@' or '/' (``postgresql://u:p@ss@h/db``): libpq ends the
# user info at the first '@' (or reads no user info at all past a '/'), which left the rest of the
# password ("ss") in view; here the password runs to the last '@' before the query ('?')
_SECRET_PG_USERINFO = re.compile(r"((?:postgresql|postgres)://[^/:\s?]*):[^\s?]*@")


_QUERY_PARAMETER = re.compile(r"([?&])([^=&#\s]*)=([^&#\s]*)")
_TEMPLATED = re.compile(r"(?:\{\w+\})*")  # a value that is only placeholders ({query}): no literal secret


def literal_secret(name: str, value: str) -> bool:
    """A query-string parameter's literal value under a secret-looking name (the header rule), not a
    ``${VAR}`` reference nor placeholders: what the http retriever records as ``<redacted>``."""
    return bool(SECRET_HEADER.search(name)) and not ENV_VAR.search(value) and not _TEMPLATED.fullmatch(value)


def json_without_secrets(value):
    """An http request's query-string ``params`` or JSON body as results record them: the literal string value
    of each key whose name looks secret (``"api_key": "..."``, at any depth; :func:`literal_secret`) as
    ``<redacted>``; a ``${VAR}`` reference or placeholders kept."""
    if isinstance(value, dict):
        return {key: REDACTED if isinstance(item, str) and literal_secret(str(key), item) else json_without_secrets(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [json_without_secrets(item) for item in value]
    return value


def _url_without_secrets(url: str) -> str:
    """An http retriever's ``url``: the literal value of each secret-looking query-string parameter
    (``?api_key=...``) as ``<redacted>``, as the retriever's own params() record it."""
    base, mark, query = url.partition("?")
    return base + mark + _QUERY_PARAMETER.sub(
        lambda m: f"{m[1]}{m[2]}={REDACTED}" if literal_secret(m[2], m[3]) else m[0], "?" + query)[1:]


def without_secrets(value, name: object = None):
    """``value`` (a config as recorded in results: dicts, lists, str) with connection secrets masked
    (``password=***``; ``user:***@host``; a parameter ``password`` / ``sslpassword``: ``***``; a
    ``headers`` entry, a secret-looking query-string parameter of its ``url`` or ``params`` (``api_key``,
    ``token``) or key of its JSON ``body``, as the http retriever records it: ``<redacted>``): a bench config's postgres
    ``dsn`` was written whole into every cell's metrics.json and bench.json, and a pipeline stage's
    into metrics.json, where a retriever's own params() leave them out. ``name``: the key holding it."""
    if isinstance(value, str):
        if name in SECRET_PARAMETERS:
            return "***"
        if name == "url":
            value = _url_without_secrets(value)
        value = _SECRET_PARAMETER.sub(r"\1=***", _SECRET_QUERY.sub(r"\1=***", value))
        return _SECRET_USERINFO.sub(r"\1:***@", _SECRET_PG_USERINFO.sub(r"\1:***@", value))
    if isinstance(value, dict):
        if name == "headers":
            return {key: REDACTED if isinstance(item, str) and SECRET_HEADER.search(str(key))
                    and not ENV_VAR.search(item) else without_secrets(item) for key, item in value.items()}
        if name == "params" and "url" in value:  # an http retriever's: its query string and its JSON body
            value = {**value, **{part: json_without_secrets(value[part]) for part in ("params", "body")
                                 if isinstance(value.get(part), (dict, list))}}
        return {key: without_secrets(item, key) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_secrets(item) for item in value]
    return value
