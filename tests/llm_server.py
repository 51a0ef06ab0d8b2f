"""A small OpenAI-compatible server on 127.0.0.1 for tests: the only stand-in allowed.

Each test scripts its replies: a queue of actions consumed one per request to
/v1/chat/completions — ("json", obj) / ("text", str) answer 200 with that content,
("status", code, headers) answers an error, ("sleep", seconds) stalls that long and then
answers 500 (the client has timed out by then), ("raw", code, content_type, body) answers
exactly those bytes (an HTML page from a proxy, a truncated JSON body), ("callable", f)
answers whichever of those f(body) returns. Requests are
recorded for assertions, with their Authorization header.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True


class LoopbackLLM:
    def __init__(self):
        self.actions: list[tuple] = []
        self.default: tuple | None = None
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.delay = 0.0  # seconds every answer waits (a slow model)
        self.in_flight = self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, "body": body,
                                            "authorization": self.headers.get("authorization")})
                    action = server.actions.pop(0) if server.actions else server.default
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(body, action)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, body, action):
                if server.delay:
                    time.sleep(server.delay)
                if action is None:
                    action = ("status", 500, {})
                if action[0] == "callable":  # it may answer any action, an error status too
                    action = action[1](body)
                if action[0] == "sleep":  # stall past the client's timeout, then give up
                    time.sleep(action[1])
                    action = ("status", 500, {})
                if action[0] == "status":
                    self._send(action[1], {"error": {"message": "scripted", "type": "test"}}, action[2])
                    return
                if action[0] == "raw":
                    self._send_bytes(action[1], action[2], action[3].encode() if isinstance(action[3], str)
                                     else action[3])
                    return
                content = json.dumps(action[1]) if action[0] == "json" else action[1]
                self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": content}}],
                                 "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

            def _send(self, code, payload, headers=None):
                self._send_bytes(code, "application/json", json.dumps(payload).encode(), headers)

            def _send_bytes(self, code, content_type, data, headers=None):
                self.send_response(code)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def chat_calls(self) -> int:
        return sum(1 for r in self.requests if r["path"].partition("?")[0].endswith("/chat/completions"))
