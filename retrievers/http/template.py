"""The request template: what the ``http`` retriever sends for one query and how it reads the answer.

Parsed and validated once, when the retriever is built; rendering a query is then a walk over
pre-split strings. Placeholders (in the URL, the query-string parameters and the JSON body)::

    {query}      the query text
    {query_id}   the query id
    {k}          the number of hits wanted (an integer)

A JSON string that is exactly one placeholder takes the value's own type (``"size": "{k}"`` sends
``"size": 10``); inside a longer string the value is inserted as text; in the URL it is
percent-encoded as one component (``quote(value, safe="")``: "a#b" is sent as ``a%23b``, ".." as
``%2E%2E``, never a fragment, a parameter, a path separator or a dot-segment). ``{{`` and ``}}`` are
literal braces. Any other ``{name}`` is refused up front.

Header values, ``params`` values, the URL's query string and the body's strings may name environment
variables, ``${SEARCH_API_KEY}``; they are expanded only when requests are sent, and
:meth:`RequestTemplate.describe` (what results record) keeps the reference, never the value. A literal
value of a header, a query-string parameter or a body key whose name looks secret (authorization, key,
token, secret, password, cookie) is recorded as ``<redacted>``, as is a password in the URL.

``partial_field`` (:class:`PartialCheck`) names where an answer says it is partial (Elasticsearch's
``timed_out``): such an answer is a failed attempt (retrievers/http/client.py).

The response mapping names, as dotted paths, the list of hits in the JSON answer (``hits.hits``),
and the id and score of a hit (``_id``, ``_score``, ``fields.id``); a path segment that is an
integer indexes a list.
"""

from __future__ import annotations

import json
import math
import os
import re
import string
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping
from urllib.parse import quote, unquote_plus, urlsplit, urlunsplit

from harness.columns import is_utf8_text
from harness.errors import HarnessError
from harness.formats.trec import unwritable_ids, unwritable_message
from harness.secrets import ENV_VAR, REDACTED, SECRET_HEADER, json_without_secrets, literal_secret

PLACEHOLDERS = ("query", "query_id", "k")
METHODS = ("GET", "POST")


class ResponseError(Exception):
    """A response the mapping cannot read (never retried: the same request would get the same answer)."""


# ----------------------------------------------------------------------------- placeholder strings
@dataclass(frozen=True)
class TemplateString:
    """A string with ``{query}``, ``{query_id}``, ``{k}`` placeholders, split once into parts."""

    source: str
    parts: tuple[tuple[str, str | None], ...]  # (literal text, placeholder name or None)

    @classmethod
    def parse(cls, text: str, where: str, env: bool = False) -> "TemplateString":
        """``env``: ``${NAME}`` names an environment variable (a part named ``$NAME``), read when requests
        are sent (:meth:`RequestTemplate.env_values`); without it ``${NAME}`` is an unknown placeholder."""
        parts: list[tuple[str, str | None]] = []
        start = 0
        for match in (ENV_VAR.finditer(text) if env else ()):
            parts.extend(cls._parse_chunk(text[start:match.start()], text, where))
            parts.append(("", "$" + match.group(1)))
            start = match.end()
        parts.extend(cls._parse_chunk(text[start:], text, where))
        return cls(text, tuple(parts))

    @staticmethod
    def _parse_chunk(chunk: str, text: str, where: str) -> list[tuple[str, str | None]]:
        try:
            pieces = list(string.Formatter().parse(chunk))
        except ValueError as exc:
            raise HarnessError(f"{where}: bad template {text!r}: {exc} (write {{{{ and }}}} for literal braces)") from None
        parts = []
        for literal, name, spec, conversion in pieces:
            if name is not None and (name not in PLACEHOLDERS or spec or conversion):
                raise HarnessError(f"{where}: unknown placeholder {{{name}}} in {text!r}; use "
                                   f"{', '.join('{' + p + '}' for p in PLACEHOLDERS)}, or {{{{ }}}} for literal braces")
            parts.append((literal, name))
        return parts

    @property
    def env_vars(self) -> list[str]:
        """The environment variables this string names (``${NAME}``), in order."""
        return [name[1:] for _, name in self.parts if name is not None and name.startswith("$")]

    @property
    def whole(self) -> str | None:
        """The placeholder name when the string is exactly one placeholder."""
        if len(self.parts) == 1 and not self.parts[0][0] and self.parts[0][1]:
            return self.parts[0][1]
        return None

    def render(self, values: Mapping[str, Any], escape: Callable[[str], str] = str) -> str:
        """The string with each placeholder replaced by ``escape(str(value))`` (in a URL: percent-encoded)."""
        return "".join(literal + ("" if name is None else escape(str(values[name]))) for literal, name in self.parts)


def _compile_json(value: Any, where: str) -> Any:
    """A JSON template with every string parsed into a :class:`TemplateString` (``${NAME}``: an environment
    variable, read when requests are sent)."""
    if isinstance(value, str):
        return TemplateString.parse(value, where, env=True)
    if isinstance(value, dict):
        return {str(key): _compile_json(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [_compile_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):  # (--param reads NaN, Infinity; JSON has no such number)
        raise HarnessError(f"{where}: {value} is not a JSON number (JSON has no NaN or Infinity)")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise HarnessError(f"{where}: a JSON template takes objects, lists, strings, numbers, booleans and null; "
                       f"got {type(value).__name__}")


def _param_text(value: Any, where: str) -> str:
    """A query-string value as the service reads it: a string as is, a number or boolean as JSON writes it
    (``true``, not Python's ``True``, which Elasticsearch refuses); null, a list or an object has no one
    query-string form (``str()`` sent ``rows=None``, ``fq=['a', 'b']``) and is refused."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and math.isfinite(value):
        return json.dumps(value)
    raise HarnessError(f"{where}: a query-string value is a string, a number or true/false; got "
                       f"{json.dumps(value, default=repr)}")


def _render_json(template: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(template, TemplateString):
        whole = template.whole
        return values[whole] if whole else template.render(values)
    if isinstance(template, dict):
        return {key: _render_json(item, values) for key, item in template.items()}
    if isinstance(template, list):
        return [_render_json(item, values) for item in template]
    return template


def _json_strings(template: Any, where: str) -> Iterator[tuple[str, TemplateString]]:
    """(where, string) of each string of a compiled JSON template (``body.auth.key``, ``body.q[0]``)."""
    if isinstance(template, TemplateString):
        yield where, template
    elif isinstance(template, dict):
        for key, item in template.items():
            yield from _json_strings(item, f"{where}.{key}")
    elif isinstance(template, list):
        for i, item in enumerate(template):
            yield from _json_strings(item, f"{where}[{i}]")


def _source_json(template: Any) -> Any:
    """The template as the user wrote it (for the record)."""
    if isinstance(template, TemplateString):
        return template.source
    if isinstance(template, dict):
        return {key: _source_json(item) for key, item in template.items()}
    if isinstance(template, list):
        return [_source_json(item) for item in template]
    return template


# ----------------------------------------------------------------------------- response paths
@dataclass(frozen=True)
class FieldPath:
    """A dotted path into a JSON value: ``hits.hits``, ``fields.id``, ``response.docs``, ``a.0.b``."""

    source: str
    keys: tuple[str, ...]

    @classmethod
    def parse(cls, text: Any, where: str) -> "FieldPath":
        if not isinstance(text, str) or not text or any(not key for key in text.split(".")):
            raise HarnessError(f"{where} takes a dotted path such as hits.hits or _id; got {text!r}")
        return cls(text, tuple(text.split(".")))

    def get(self, value: Any) -> Any:
        """The value at this path; raises KeyError naming the first missing segment."""
        for depth, key in enumerate(self.keys):
            if isinstance(value, dict) and key in value:
                value = value[key]
            elif isinstance(value, list) and key.lstrip("-").isdigit() and -len(value) <= int(key) < len(value):
                value = value[int(key)]
            else:
                raise KeyError(".".join(self.keys[:depth + 1]))
        return value


# ----------------------------------------------------------------------------- headers
HEADER_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")  # RFC 9110 token (h11's field-name)
_BAD_HEADER_CHAR = re.compile(r"[\x00\n\r\x0b\x0c]")  # never in a field value (h11: NUL and \s but space, tab)
_CHAR_NAMES = {"\n": "a line break (\\n)", "\r": "a carriage return (\\r)", "\x00": "a NUL character"}


@dataclass(frozen=True)
class HeaderValue:
    """A header value; ``${NAME}`` names an environment variable, read when requests are sent."""

    name: str
    source: str

    @property
    def env_vars(self) -> list[str]:
        return ENV_VAR.findall(self.source)

    def expand(self, environ: Mapping[str, str] = os.environ) -> str:
        def value(match: re.Match) -> str:
            var = match.group(1)
            if var not in environ:
                raise HarnessError(f"header {self.name!r} names the environment variable {var}, which is not set")
            return environ[var]

        return self.check(ENV_VAR.sub(value, self.source))

    def check(self, value: str) -> str:
        """``value`` if HTTP can send it (HarnessError naming the header, never the value, otherwise).

        The HTTP library refuses a value with a line break, a NUL or a space at either end (h11's
        ``field-value``), or with a non-ASCII character, and its error quotes the whole value: a key
        read from a file with its trailing newline (``${SEARCH_API_KEY}``) was printed in the error
        line, after every query had been retried as if the service had failed."""
        problem, bad = None, _BAD_HEADER_CHAR.search(value)
        if not value.isascii():
            problem = "a non-ASCII character"
        elif bad:
            problem = _CHAR_NAMES.get(bad.group(), "a control character")
            problem += " at its end" if bad.end() == len(value) else ""
        elif value != value.strip(" \t"):
            problem = "a space or tab at its start or end"
        if problem is None:
            return value
        where = f" (from {', '.join('${' + var + '}' for var in self.env_vars)})" if self.env_vars else ""
        raise HarnessError(f"header {self.name!r}: its value{where} holds {problem}, which HTTP cannot send; "
                           f"a header value is ASCII text without line breaks (the value is not shown)")

    def describe(self) -> str:
        """What results may record: the template with its ``${VAR}`` references, or ``<redacted>``."""
        if self.env_vars or not SECRET_HEADER.search(self.name):
            return self.source
        return REDACTED


def redact_url(url: str) -> str:
    """``url`` with any password in it replaced by ``<redacted>``, and the literal value of each query-string
    parameter whose name looks secret (``?api_key=...``, :func:`redact_param`): ``?api_key=<redacted>``."""
    parts = urlsplit(url)
    if parts.query:
        pairs = [pair.partition("=") for pair in parts.query.split("&")]
        query = "&".join(name + eq + redact_param(unquote_plus(name), value) for name, eq, value in pairs)
        parts = parts._replace(query=query)
    if parts.password is not None:
        netloc = f"{parts.username}:{REDACTED}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts)


def redact_param(name: str, value: str) -> str:
    """What results record of a query-string parameter: ``<redacted>`` for the literal value of a parameter
    whose name looks secret (the header rule: api_key, key, token, secret, password, auth, ...); a value that
    names an environment variable (``${SEARCH_API_KEY}``) or is only placeholders (``{query}``) is kept
    (:func:`harness.secrets.literal_secret`, the rule bench and pipeline records follow too)."""
    return REDACTED if literal_secret(name, value) else value


# ----------------------------------------------------------------------------- partial answers
_BELOW = re.compile(r"(.+?)\s*<\s*(-?[0-9]+(?:\.[0-9]+)?)")


@dataclass(frozen=True)
class PartialCheck:
    """One sign, in an answer, that the service answered from part of its index (``partial_field``):

    ``path``        partial when the value there is set: true, a number other than 0, a non-empty string or
                    list, an object holding such a value (``timed_out``, ``_shards.failed``, ``root.errors``,
                    ``root.coverage.degraded``)
    ``!path``       partial when the value there is false (``!root.coverage.full``)
    ``path<N``      partial when the value there is a number below N (``root.coverage.coverage<100``)

    An answer without the path is not partial by this check."""

    source: str
    path: FieldPath
    kind: str  # "set", "false" or "below"
    limit: float = 0.0

    @classmethod
    def parse(cls, text: Any) -> "PartialCheck":
        refusal = HarnessError(f"partial_field takes dotted paths such as timed_out, !root.coverage.full or "
                               f"root.coverage.coverage<100; got {text!r}")
        if not isinstance(text, str) or not text.strip():
            raise refusal
        text = text.strip()
        try:
            if text.startswith("!"):
                return cls(text, FieldPath.parse(text[1:], "partial_field"), "false")
            below = _BELOW.fullmatch(text)
            if below:
                return cls(text, FieldPath.parse(below.group(1), "partial_field"), "below", float(below.group(2)))
            return cls(text, FieldPath.parse(text, "partial_field"), "set")
        except HarnessError:
            raise refusal from None

    def signal(self, payload: Any) -> str | None:
        """What makes ``payload`` partial by this check (``_shards.failed is 2``), or None."""
        try:
            value = self.path.get(payload)
        except KeyError:
            return None
        if self.kind == "false":
            hit = value is False
        elif self.kind == "below":
            hit = isinstance(value, (int, float)) and not isinstance(value, bool) and value < self.limit
        else:
            hit = _is_set(value)
        if not hit:
            return None
        shown = json.dumps(value, ensure_ascii=False, default=repr)
        return f"{self.path.source} is {shown[:200] + '...' if len(shown) > 200 else shown}"


def _is_set(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_is_set(item) for item in value.values())
    if isinstance(value, bool) or value is None:
        return bool(value)
    if isinstance(value, (int, float)):
        return value != 0
    return isinstance(value, (str, list)) and len(value) > 0


def parse_partial(value: Any) -> tuple[PartialCheck, ...]:
    """``partial_field``: one check or a list of them (an empty list: none)."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise HarnessError(f"partial_field takes a dotted path or a JSON list of them; got {value!r}")
    return tuple(PartialCheck.parse(item) for item in value)


# ----------------------------------------------------------------------------- the template
@dataclass(frozen=True)
class Request:
    """One rendered request."""

    method: str
    url: str
    params: dict[str, str]
    body: Any  # JSON value, or None for no body


@dataclass(frozen=True)
class Hits:
    """The hits of one response, in the order the service gave them."""

    ids: list[str]
    scores: list[float]


@dataclass(frozen=True)
class RequestTemplate:
    method: str
    url: TemplateString
    params: tuple[tuple[str, TemplateString], ...]
    body: Any  # compiled JSON template, or None
    headers: tuple[HeaderValue, ...]
    hits: FieldPath
    id_field: FieldPath
    score_field: FieldPath
    hits_optional: bool = False  # a missing hit list means no hits (Vespa leaves out root.children)
    partial: tuple[PartialCheck, ...] = ()  # signs of a partial answer (partial_field)

    @classmethod
    def build(cls, url: str, method: str = "GET", params: Mapping | None = None, body: Any = None,
              headers: Mapping | None = None, hits: str | None = None, id_field: str | None = None,
              score_field: str | None = None, hits_optional: bool = False,
              partial_field: Any = None) -> "RequestTemplate":
        """Validate every part once; raises HarnessError naming the part at fault."""
        if not isinstance(url, str) or not url:
            raise HarnessError("the http retriever needs --param url=http://host:port/...")
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise HarnessError(f"url must be an http:// or https:// URL with a host; got {redact_url(url)!r}")
        method = str(method).upper()
        if method not in METHODS:
            raise HarnessError(f"method must be GET or POST; got {method!r}")
        if params is not None and not isinstance(params, Mapping):
            raise HarnessError(f"params takes a JSON object of query-string parameters; got {params!r}")
        if headers is not None and not isinstance(headers, Mapping):
            raise HarnessError("headers takes a JSON object, e.g. {\"Authorization\": \"ApiKey ${SEARCH_API_KEY}\"}")
        if body is not None and method == "GET":
            raise HarnessError("a GET request has no body; use method=POST with body=")
        missing = [name for name, value in (("hits", hits), ("id_field", id_field), ("score_field", score_field))
                   if value is None]
        if missing:
            raise HarnessError(f"without a preset, the http retriever needs {', '.join(missing)} (the response "
                               f"mapping), e.g. --param hits=hits.hits --param id_field=_id --param score_field=_score")
        header_values = []
        for name, value in (headers or {}).items():
            if not isinstance(value, str):
                raise HarnessError(f"header {name!r} must be a string; got {value!r}")
            if not HEADER_NAME.fullmatch(str(name)):
                raise HarnessError(f"header name {name!r} is not an HTTP header name (letters, digits and "
                                   f"!#$%&'*+-.^_`|~, no spaces or colons)")
            header = HeaderValue(str(name), value)
            if not header.env_vars:  # a literal value: refused now, not after every query has been tried
                header.check(value)
            header_values.append(header)
        parts = urlsplit(url)
        if ENV_VAR.search(url.split("?", 1)[0]):  # error lines show the path: a secret there would be printed
            raise HarnessError(f"url: ${{NAME}} (an environment variable) is read only in the query string, after "
                               f"'?'; got {redact_url(url)!r}")
        if (parts.username or parts.password) and any(h.name.lower() == "authorization" for h in header_values):
            # httpx sends the URL's user and password as Basic authorization, in place of the header: the
            # configured Authorization (a Bearer token) was silently never sent
            raise HarnessError(f"url holds a user name and password ({redact_url(url)}) and headers set "
                               f"Authorization: the HTTP client would send the URL's, as Basic authorization, "
                               f"instead of the header; keep one of them")
        return cls(
            method=method,
            url=TemplateString.parse(url, "url", env=True),
            params=tuple((str(name), TemplateString.parse(_param_text(value, f"params.{name}"), f"params.{name}",
                                                          env=True))
                         for name, value in (params or {}).items()),
            body=None if body is None else _compile_json(body, "body"),
            headers=tuple(header_values),
            hits=FieldPath.parse(hits, "hits"),
            id_field=FieldPath.parse(id_field, "id_field"),
            score_field=FieldPath.parse(score_field, "score_field"),
            hits_optional=bool(hits_optional),
            partial=parse_partial(partial_field),
        )

    def _env_strings(self) -> list[tuple[str, TemplateString]]:
        """(where, string) of every part that may name environment variables but the headers: the URL, the
        params and the body's strings."""
        return [("url", self.url), *((f"params.{name}", value) for name, value in self.params),
                *_json_strings(self.body, "body")]

    def env_values(self, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
        """The environment variables the URL's query string, the params and the body name, as ``{"$NAME":
        value}`` (render's values; send them, never record them); HarnessError naming the part when one is unset."""
        out: dict[str, str] = {}
        for where, template in self._env_strings():
            for var in template.env_vars:
                if var not in environ:
                    raise HarnessError(f"{where} names the environment variable {var}, which is not set")
                out["$" + var] = environ[var]
        return out

    def partial_signal(self, payload: Any) -> str | None:
        """Why a decoded answer is partial by ``partial_field`` (``timed_out is true``), or None."""
        for check in self.partial:
            signal = check.signal(payload)
            if signal is not None:
                return signal
        return None

    def render(self, query_id: str, query: str, k: int, env: Mapping[str, str] | None = None) -> Request:
        """``env``: :meth:`env_values` (read once per search; read here when not given)."""
        if env is None:
            env = self.env_values() if any(t.env_vars for _, t in self._env_strings()) else {}
        values = {"query": query, "query_id": query_id, "k": k, **env}
        # In the URL a value is one percent-encoded component: "a#b" or "x?y=1&z" stays the query text
        # (a path segment or a query-string value), never a fragment, a parameter or a path separator.
        url = self.url.render(values, escape=_url_component)
        return Request(self.method, url, {name: value.render(values) for name, value in self.params},
                       None if self.body is None else _render_json(self.body, values))

    def header_values(self, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
        """The headers with environment variables expanded (send them; never record them)."""
        return {header.name: header.expand(environ) for header in self.headers}

    def read(self, payload: Any) -> Hits:
        """The hits of a decoded JSON response; raises ResponseError saying what is wrong."""
        try:
            hits = self.hits.get(payload)
        except KeyError as exc:
            # Only the list itself may be left out of an object that holds it (Vespa's root without children):
            # an answer without that object ({}, an error object) is no empty ranking.
            if self.hits_optional and exc.args[0] == self.hits.source and isinstance(
                    FieldPath(self.hits.source, self.hits.keys[:-1]).get(payload), dict):
                return Hits([], [])
            raise ResponseError(f"the response has no {exc.args[0]!r} (the hits path is {self.hits.source!r}; "
                                f"top-level keys: {_keys(payload)})") from None
        if not isinstance(hits, list):
            raise ResponseError(f"{self.hits.source!r} in the response is {type(hits).__name__}, not a list of hits")
        ids: list[str] = []
        scores: list[float] = []
        seen: set[str] = set()
        for position, hit in enumerate(hits):
            doc_id = _field(self.id_field, hit, position, "id")
            score = _field(self.score_field, hit, position, "score")
            if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
                raise ResponseError(f"hit {position}: id {doc_id!r} is not a string or integer")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or score != score:
                raise ResponseError(f"hit {position}: score {score!r} is not a number")
            try:
                score = float(score)
            except OverflowError:  # an integer beyond a double's range
                raise ResponseError(f"hit {position}: score (an integer of {len(str(abs(score)))} digits) is beyond "
                                    f"the range of a double") from None
            if score in (float("inf"), float("-inf")):  # JSON numbers are finite: Infinity, or 1e400 read as inf
                raise ResponseError(f"hit {position}: score {score!r} is not a finite number (Infinity, or a number "
                                    f"beyond the range of a double)")
            doc_id = str(doc_id)
            if not is_utf8_text(doc_id):  # JSON's "\ud800" escape: no run file, Arrow column or UTF-8 reader takes it
                raise ResponseError(f"hit {position}: id {doc_id!r} holds a lone surrogate escape (\\ud800-\\udfff): "
                                    f"not valid Unicode text")
            if doc_id in seen:
                raise ResponseError(f"hit {position}: document {doc_id!r} appears twice in the response")
            seen.add(doc_id)
            ids.append(doc_id)
            scores.append(score)
        bad = unwritable_ids(ids)  # whitespace, NUL or empty: the run file could not hold it (refused here, where
        if len(bad):  # the query is known, not at the write, which named no query and left a locked, empty folder)
            raise ResponseError(f"hit {int(bad[0])}: {unwritable_message(ids[int(bad[0])], 'document id')}")
        return Hits(ids, scores)

    def describe(self) -> dict:
        """The request and mapping as results record them (environment references kept, secrets never)."""
        out = {"method": self.method, "url": redact_url(self.url.source)}
        if self.params:
            out["params"] = {name: redact_param(name, value.source) for name, value in self.params}
        if self.headers:
            out["headers"] = {header.name: header.describe() for header in self.headers}
        if self.body is not None:
            out["body"] = json_without_secrets(_source_json(self.body))
        out["response"] = {"hits": self.hits.source, "id_field": self.id_field.source,
                           "score_field": self.score_field.source}
        if self.partial:
            out["partial_field"] = [check.source for check in self.partial]
        return out


def _url_component(text: str) -> str:
    """``text`` percent-encoded as one URL component, ``quote(text, safe="")``; a dot-segment (``.``, ``..``)
    as ``%2E``: the URL's path resolution removes it (``..``: with the segment before it), and the query
    text ".." in ``/x/{query}/search`` was sent to ``/search``."""
    encoded = quote(text, safe="")
    return encoded.replace(".", "%2E") if encoded in (".", "..") else encoded


def _field(path: FieldPath, hit: Any, position: int, what: str) -> Any:
    try:
        return path.get(hit)
    except KeyError:
        raise ResponseError(f"hit {position} has no {what} at {path.source!r} (its keys: {_keys(hit)})") from None


def _keys(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(sorted(map(str, value))[:10]) or "none"
    return f"none (a {type(value).__name__})"
