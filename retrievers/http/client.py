"""The asynchronous client: every query's request, sent with bounded concurrency, retried, timed.

``concurrency`` workers (asyncio tasks over one httpx.AsyncClient) take queries in order. Each
attempt is bounded by ``timeout`` seconds in total (connect, send, wait, read). An attempt that
meets a connection error, an HTTP 429 / 5xx answer or a partial answer (the template's
``partial_field``: Elasticsearch's ``timed_out``, a failed shard) is retried up to ``retries`` times after an
exponential backoff with jitter: before retry n (0-based) the client sleeps a uniform random time
in ``[c/2, c]``, ``c = min(max_backoff, backoff * 2**n)`` ("equal jitter"), or the server's
``Retry-After`` seconds when longer (capped at ``max_backoff``). A timeout is not retried (a service
that hangs would hang again; elasticsearch-py's default too), nor is any other answer: a 4xx, a
redirect (3xx, not followed), a body that is not JSON or does not fit the response mapping. ``qps``
(optional) spaces the starts of all attempts at least ``1/qps`` seconds apart.

A query's latency is the time from its first attempt to its parsed answer (retries and their
backoff included; waiting for a free worker, or for the QPS cap before any attempt, excluded).

A failed query (after its retries) raises :class:`QueryFailed` under ``on_failure="fail"``: the
other workers are cancelled at once. Under ``"empty"`` it is recorded with its cause and its
ranking stays empty. Ctrl-C cancels every worker; the caller writes nothing.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from harness.errors import HarnessError
from harness.secrets import REDACTED, SECRET_HEADER
from retrievers.http.template import Hits, RequestTemplate, ResponseError, redact_url

ON_FAILURE = ("fail", "empty")
RETRY_STATUS = frozenset({429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class ClientSettings:
    concurrency: int = 8
    timeout: float = 30.0
    retries: int = 3
    backoff: float = 0.1
    max_backoff: float = 5.0
    qps: float | None = None
    on_failure: str = "fail"

    def __post_init__(self) -> None:
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise HarnessError(f"concurrency must be an integer >= 1; got {self.concurrency!r}")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise HarnessError(f"retries must be an integer >= 0; got {self.retries!r}")
        for name in ("timeout", "backoff", "max_backoff", "qps"):
            value = getattr(self, name)
            if name == "qps" and value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
                raise HarnessError(f"{name} must be a number > 0; got {value!r}")
        if self.on_failure not in ON_FAILURE:
            raise HarnessError(f"on_failure must be 'fail' or 'empty'; got {self.on_failure!r}")

    def as_dict(self) -> dict:
        return {"concurrency": self.concurrency, "timeout": self.timeout, "retries": self.retries,
                "backoff": self.backoff, "max_backoff": self.max_backoff, "qps": self.qps,
                "on_failure": self.on_failure}


@dataclass
class Outcome:
    """One query's result: its hits (empty when it failed), latency, attempts and failure cause."""

    hits: Hits
    latency_s: float | None
    attempts: int
    error: str | None = None


class QueryFailed(HarnessError):
    def __init__(self, query_id: str, cause: str):
        self.query_id, self.cause = query_id, cause
        super().__init__(f"http retriever: query {query_id!r} failed: {cause}")


class _Retryable(Exception):
    def __init__(self, cause: str, retry_after: float | None = None):
        super().__init__(cause)
        self.retry_after = retry_after


class _Pacer:
    """Spaces attempt starts ``1/qps`` seconds apart (no-op without a cap)."""

    def __init__(self, qps: float | None):
        self.interval = 1.0 / qps if qps else 0.0
        self.next_start = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        start = max(now, self.next_start)
        self.next_start = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


def backoff_delay(retry: int, settings: ClientSettings, retry_after: float | None, rng: random.Random) -> float:
    """Seconds to sleep before retry ``retry`` (0-based): equal jitter, or Retry-After when longer."""
    cap = settings.max_backoff if retry >= 1024 else min(settings.max_backoff, settings.backoff * 2 ** retry)
    delay = rng.uniform(cap / 2, cap)
    if retry_after is not None:
        delay = max(delay, min(retry_after, settings.max_backoff))
    return delay


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers.get("retry-after", "")))
    except ValueError:
        return None


def _snippet(data: bytes, limit: int = 120, secrets: tuple[str, ...] = ()) -> str:
    """The start of an answer's body for an error line, with each of ``secrets`` in it as ``<redacted>``: a
    service's error page that echoes the request (``invalid api key: s3cr3t``) printed the key."""
    text = data[:limit + max(map(len, secrets), default=0)].decode("utf-8", "replace")
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return repr(text[:limit]) + ("..." if len(data) > limit else "")


def _secrets(headers, env: dict[str, str] | None) -> tuple[str, ...]:
    """What an error line must not show: the values of headers whose name looks secret (and each word of
    one, ``Bearer <token>``'s token) and of the environment variables the template reads, longest first
    (words under 6 characters, ``Bearer``, are left: they are no secret and would blot out text)."""
    found = set(value for value in (env or {}).values() if len(value) >= 4)
    for name, value in headers.items():
        if SECRET_HEADER.search(name):
            found.update(word for word in [value, *value.split()] if len(word) >= 6)
    return tuple(sorted(found, key=len, reverse=True))


async def _attempt(client: httpx.AsyncClient, template: RequestTemplate, query_id: str, query: str, k: int,
                   timeout: float, env: dict[str, str] | None = None) -> Hits:
    request = template.render(query_id, query, k, env)
    url, params = with_query(request.url, request.params)
    try:
        response = await asyncio.wait_for(client.request(request.method, url, params=params, json=request.body),
                                          timeout)
    except (asyncio.TimeoutError, httpx.TimeoutException) as exc:
        if isinstance(exc, httpx.ConnectTimeout):
            raise _Retryable(f"could not connect within {timeout:g} s ({request.method} {_where(request.url)})") \
                from None
        raise ResponseError(f"timed out after {timeout:g} s ({request.method} {_where(request.url)})") from None
    except httpx.LocalProtocolError as exc:  # this request cannot be sent (the same again); its text may quote a header
        raise ResponseError(f"the request could not be sent ({type(exc).__name__}) "
                            f"({request.method} {_where(request.url)})") from None
    except httpx.TransportError as exc:  # connection refused / reset / closed early: worth another try
        raise _Retryable(f"connection error: {type(exc).__name__}: {exc} ({request.method} {_where(request.url)})") \
            from None
    except httpx.HTTPError as exc:  # a body its Content-Encoding does not decode (DecodingError): same answer again
        raise ResponseError(f"the response could not be read ({type(exc).__name__}: {exc}) "
                            f"({request.method} {_where(request.url)})") from None
    secrets = _secrets(client.headers, env)
    if response.status_code in RETRY_STATUS:
        raise _Retryable(f"HTTP {response.status_code} from {request.method} {_where(request.url)}: "
                         f"{_snippet(response.content, secrets=secrets)}", _retry_after(response))
    if response.status_code >= 400:
        raise ResponseError(f"HTTP {response.status_code} from {request.method} {_where(request.url)}: "
                            f"{_snippet(response.content, secrets=secrets)}")
    if 300 <= response.status_code < 400:  # not followed: its body is no answer to the query
        location = response.headers.get("location")
        raise ResponseError(f"HTTP {response.status_code} from {request.method} {_where(request.url)}: a redirect"
                            + (f" to {_where(location)}" if location else "") + " (not followed: use that URL)")
    try:
        payload = json.loads(response.content)
    except (ValueError, RecursionError) as exc:  # RecursionError: arrays or objects nested too deep
        raise ResponseError(f"the response of {request.method} {_where(request.url)} is not valid JSON ({exc}); it "
                            f"starts {_snippet(response.content, secrets=secrets)}") from None
    signal = template.partial_signal(payload)
    if signal is not None:  # the engine answered from part of its index (a shard failed, its time ran out): retried
        raise _Retryable(f"a partial answer from {request.method} {_where(request.url)}: {signal}")
    return template.read(payload)


def with_query(url: str, params: dict | None) -> tuple[str, dict | None]:
    """``(url, params)`` to send, the URL's own query string kept: httpx replaces it by ``params`` (0.28:
    ``URL(url, params=...)``), and ``url=.../search?index=v2`` with the preset's params was sent without
    ``index=v2`` (nor ``api_key=${KEY}``). Then the params are appended to it as httpx encodes them."""
    if not params or not urlsplit(url).query:
        return url, params or None
    url, mark, fragment = url.partition("#")  # (a fragment, never sent, stays after the query string)
    return f"{url}&{httpx.QueryParams(params)}{mark}{fragment}", None


def _where(url: str) -> str:
    """``url`` without its query string (which holds the query text) or a password."""
    return redact_url(url.split("?", 1)[0])


async def _one(client, template, settings, pacer, rng, query_id, query, k, env=None) -> Outcome:
    """One query, retried; its latency is the sum of its attempts and the backoff sleeps between them:
    the QPS cap's wait before each attempt, a retry's too, is not the service's time (it was timed before
    a retry: at qps=2 a retried query's latency held up to 0.5 s of waiting for its turn)."""
    elapsed = 0.0
    for attempt in range(settings.retries + 1):
        await pacer.wait()
        started = time.perf_counter()
        try:
            hits = await _attempt(client, template, query_id, query, k, settings.timeout, env)
            return Outcome(hits, elapsed + (time.perf_counter() - started), attempt + 1)
        except ResponseError as exc:  # (not retried; after retried attempts, said as those are)
            return Outcome(Hits([], []), None, attempt + 1, f"{exc}{_after(attempt)}")
        except _Retryable as exc:
            if attempt == settings.retries:
                return Outcome(Hits([], []), None, attempt + 1, f"{exc}{_after(attempt)}")
            await asyncio.sleep(backoff_delay(attempt, settings, exc.retry_after, rng))
            elapsed += time.perf_counter() - started  # this attempt and its backoff
    raise AssertionError("unreachable")


def _after(attempt: int) -> str:
    """`` (after N attempts)`` when attempt ``attempt`` (from 0) was not the first."""
    return f" (after {attempt + 1} attempts)" if attempt else ""


def _preload_transport() -> None:
    """Import what httpx's transport imports on its first request: anyio's asyncio backend (~20 ms, most
    of a first request's 25 ms against 1.5 ms for the next) would otherwise be timed as the latency of the
    first query of every worker -- the 8 slowest of 300 queries at concurrency 8, the whole p99."""
    try:
        import anyio._backends._asyncio  # noqa: F401
    except ImportError:  # (another transport: nothing to preload)
        pass


async def fetch_all_async(template: RequestTemplate, ids: list[str], texts: list[str], k: int,
                          settings: ClientSettings, headers: dict[str, str],
                          env: dict[str, str] | None = None) -> list[Outcome]:
    _preload_transport()
    env = template.env_values() if env is None else env
    outcomes: list[Outcome | None] = [None] * len(ids)
    pacer, rng = _Pacer(settings.qps), random.Random()
    next_query = iter(range(len(ids)))
    limits = httpx.Limits(max_connections=settings.concurrency, max_keepalive_connections=settings.concurrency)
    timeout = httpx.Timeout(settings.timeout)

    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=timeout) as client:
        async def worker() -> None:
            for i in next_query:
                outcome = await _one(client, template, settings, pacer, rng, ids[i], texts[i], k, env)
                if outcome.error is not None and settings.on_failure == "fail":
                    raise QueryFailed(ids[i], outcome.error)
                outcomes[i] = outcome

        workers = [asyncio.ensure_future(worker()) for _ in range(min(settings.concurrency, len(ids)) or 1)]
        try:
            await asyncio.gather(*workers)
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
    return outcomes  # type: ignore[return-value]


def fetch_all(template: RequestTemplate, ids: list[str], texts: list[str], k: int, settings: ClientSettings,
              headers: dict[str, str], env: dict[str, str] | None = None) -> list[Outcome]:
    """Every query's :class:`Outcome`, in query order (QueryFailed on the first failure under ``fail``).
    ``headers`` and ``env`` (:meth:`RequestTemplate.env_values`): expanded secrets, sent, never recorded.

    Runs its own event loop; called from code that already runs one (a notebook), in a helper thread.
    """
    def run() -> list[Outcome]:
        return asyncio.run(fetch_all_async(template, ids, texts, k, settings, headers, env))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()
