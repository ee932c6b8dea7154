"""A tiny serving engine for the runner's tests: a real HTTP server on 127.0.0.1 whose speed a flag sets.

GET /health answers 200 once started; GET /generate?tokens=N answers after N / speed seconds.
--crash exits at once with status 3; --never-ready answers /health with 503 for ever and never
prints its ready line; --leak prints its secrets (as an engine printing its arguments does). It
prints its own environment size and argument lengths first (bench.itself): what the runner gave it.

It binds port 0 (unless given one): the kernel's free port, never a port chosen earlier and
released, which another process may take in between. The port it got is written to --port-file
(whole, by a rename) before the ready line `engine: serving on port N` is printed, so whoever
waits for that line (the runner's `ready.log`) finds the file current.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from bench import itself


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=int(os.environ.get("ENGINE_PORT", "0")))
    ap.add_argument("--speed", type=float, default=1000.0, help="tokens per second")
    ap.add_argument("--crash", action="store_true")
    ap.add_argument("--never-ready", action="store_true")
    ap.add_argument("--leak", action="store_true")
    ap.add_argument("--port-file", default=os.environ.get("ENGINE_PORT_FILE", ""))
    ap.add_argument("--say", default="", help="a line to print first (what a ready pattern reads)")
    args = ap.parse_args()
    if args.say:
        print(args.say, flush=True)
    if args.leak:
        from bench import leak

        leak()
    if args.crash:
        print("engine: crashing on purpose", flush=True)
        sys.exit(3)
    speed = args.speed * float(os.environ.get("ENGINE_BOOST", "1"))
    print(f"engine: itself {json.dumps(itself())}", flush=True)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlparse(self.path)
            if url.path == "/health":
                self._send(503 if args.never_ready else 200, {"ok": not args.never_ready})
            elif url.path == "/generate":
                tokens = int(parse_qs(url.query).get("tokens", ["16"])[0])
                time.sleep(tokens / speed)
                self._send(200, {"tokens": tokens})
            else:
                self._send(404, {})

        def _send(self, code: int, body: dict[str, object]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    port = server.server_address[1]
    if args.port_file:
        tmp = f"{args.port_file}.{os.getpid()}"
        with open(tmp, "w") as fh:
            fh.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    if args.never_ready:
        print(f"engine: listening on port {port}, never ready", flush=True)
    else:
        print(f"engine: serving on port {port} at {speed:g} tokens/s", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
