"""A Prometheus text exposition served on loopback: what the e2e tier's simulated engines and
stand-ins show Prometheus in place of the real components' /metrics."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable


def serve(text: Callable[[], str]) -> http.server.ThreadingHTTPServer:
    """Serves ``text()`` on every GET, on a loopback port (``server_address[1]``), until the
    server's ``shutdown``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = text().encode()
            self.send_response(200)
            # Prometheus 3 refuses a scrape without a Content-Type it knows.
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
