"""``harness serve``: any retriever as an HTTP search service (Starlette + uvicorn)."""

from harness.serving.app import create_app
from harness.serving.server import bind, serve_forever, serve_in_thread, serve_process, url_of

__all__ = ["create_app", "bind", "serve_forever", "serve_in_thread", "serve_process", "url_of"]
