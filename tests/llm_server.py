"""A small OpenAI-compatible server on 127.0.0.1 for tests: the only stand-in allowed.

Each test scripts its replies: a queue of actions consumed one per request to
/v1/chat/completions — ("json", obj) / ("text", str) answer 200 with that content (a third
element, a dict, may set `finish_reason` and `completion_tokens`: ("text", "a\nb", {"finish_reason":
"length"})), ("status", code, headers) answers an error (("status", code, headers, message)
with that error message), ("sleep", seconds) stalls that long and then answers 500 (the
client has timed out by then), ("raw", code, content_type, body) answers exactly those bytes
(an HTML page from a proxy, a truncated JSON body), ("slow", pieces, seconds) streams that
many pieces of text one every `seconds` (a model generating: it stops at the first piece the
client is no longer there to read, and `disconnects` counts that), ("callable", f) answers
whichever of those f(body) returns.

A request with `"stream": true` is answered as server-sent events, as OpenAI and llama.cpp
do (one delta per word, the finish reason, the usage when `stream_options.include_usage`),
unless `sse` is False: a server that ignores `stream` and answers one JSON body. Requests are
recorded for assertions, with their Authorization header.
"""

from __future__ import annotations

import json
import re
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
        self.sse = True  # answer `stream: true` with server-sent events
        self.disconnects = 0  # slow streams the client left before their end
        self.pieces_sent = 0  # pieces of slow streams written, over all requests
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
                    message = action[3] if len(action) > 3 else "scripted"
                    self._send(action[1], {"error": {"message": message, "type": "test"}}, action[2])
                    return
                if action[0] == "slow":
                    self._slow(body, action[1], action[2])
                    return
                if action[0] == "raw":
                    self._send_bytes(action[1], action[2], action[3].encode() if isinstance(action[3], str)
                                     else action[3])
                    return
                content = json.dumps(action[1]) if action[0] == "json" else action[1]
                extra = action[2] if len(action) > 2 else {}
                finish, tokens = extra.get("finish_reason", "stop"), extra.get("completion_tokens", 5)
                usage = {"prompt_tokens": 10, "completion_tokens": tokens, "total_tokens": 10 + tokens}
                if body.get("stream") and server.sse:
                    self._stream(body, re.findall(r"\S*\s*", content)[:-1] or [""], finish, usage)
                    return
                self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                                 "choices": [{"index": 0, "finish_reason": finish,
                                              "message": {"role": "assistant", "content": content}}],
                                 "usage": usage})

            def _chunk(self, body, delta, finish=None, usage=None):
                return ("data: " + json.dumps({"id": "x", "object": "chat.completion.chunk", "created": 0,
                                               "model": body.get("model", "m"), "usage": usage,
                                               "choices": [] if usage else [{"index": 0, "delta": delta,
                                                                             "finish_reason": finish}]})
                        + "\n\n").encode()

            def _stream(self, body, pieces, finish, usage):
                events = [self._chunk(body, {"role": "assistant", "content": ""})]
                events += [self._chunk(body, {"content": piece}) for piece in pieces]
                events.append(self._chunk(body, {}, finish))
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append(self._chunk(body, {}, usage=usage))
                self._send_bytes(200, "text/event-stream", b"".join(events) + b"data: [DONE]\n\n")

            def _slow(self, body, pieces, seconds):
                """A stream written one piece at a time; stops when the client has gone."""
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.close_connection = True
                try:
                    self.end_headers()
                    for _ in range(pieces):
                        self.wfile.write(self._chunk(body, {"content": "word "}))
                        self.wfile.flush()
                        with server.lock:
                            server.pieces_sent += 1
                        time.sleep(seconds)
                    self.wfile.write(self._chunk(body, {}, "stop") + b"data: [DONE]\n\n")
                except (BrokenPipeError, ConnectionResetError):
                    with server.lock:
                        server.disconnects += 1

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
