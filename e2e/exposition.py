"""A Prometheus text exposition served on loopback: what the e2e tier's simulated engines and
stand-ins show Prometheus in place of the real components' /metrics (and, answered with another
status and type, what a stand-in for Prometheus itself answers)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable

TEXT_FORMAT = "text/plain; version=0.0.4"


def serve(
    text: Callable[[], str],
    *,
    status: int = 200,
    content_type: str = TEXT_FORMAT,
    port: int = 0,
) -> http.server.ThreadingHTTPServer:
    """Serves ``text()`` on every GET, answered ``status``, on loopback ``port`` (0: a free one,
    ``server_address[1]``), until the server's ``shutdown``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = text().encode()
            self.send_response(status)
            # Prometheus 3 refuses a scrape without a Content-Type it knows.
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
