"""A small Elasticsearch-style `_search` server on 127.0.0.1 for tests: the only stand-in
for a team's search engine. It ranks with a Tantivy index built from the test's documents
(id, title, text; Tantivy's default analyser: split on non-alphanumerics, lowercased).

The query DSL it understands, translated to Tantivy queries (BM25 per field):
- body keys `query`, `size` (default 10), `_source` (false, or true for title and text);
- `bool` with `should` (a list or one query; scores add up; an empty bool matches all);
- `multi_match` {query, fields, type: best_fields (the default: the best field's score) or
  most_fields (the fields' scores add up), boost};
- `match` and `match_phrase`: {field: text} or {field: {query, boost}}; match ORs the
  text's tokens, match_phrase needs them in order. A field the index lacks matches nothing.
Anything else is HTTP 400 with an Elasticsearch-like `parsing_exception` body; a path
other than `/_search` or `/INDEX/_search` is 404.

A test may require an Authorization header (`require_auth`, else 401 `security_exception`)
and script failures, consumed one per request from `actions`: ("status", code, body,
headers) answers exactly that; ("sleep", seconds) stalls, then answers normally (the client
has left); ("json", document) answers 200 with that document (a wrong shape); ("echo",
code) answers `code` with the request's headers in the body (as a careless proxy might).
Requests are recorded with their path, body and Authorization header.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import tantivy

FIELDS = ("title", "text")


class DslError(ValueError):
    """A query the server does not understand (answered 400)."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True


def build_index(docs: list[dict]) -> tantivy.Index:
    """An in-memory index: `id` kept whole (raw), title and text analysed and stored."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    for field in FIELDS:
        builder.add_text_field(field, stored=True)
    index = tantivy.Index(builder.build())
    writer = index.writer(num_threads=1)
    for doc in docs:
        writer.add_document(tantivy.Document(id=doc["id"], title=doc.get("title", ""), text=doc.get("text", "")))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


class SearchServer:
    def __init__(self, docs: list[dict], *, require_auth: str | None = None):
        self.index = build_index(docs)
        self.searcher = self.index.searcher()
        self.schema = self.index.schema
        self.analyzer = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
                         .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase()).build())
        self.require_auth = require_auth
        self.actions: list[tuple] = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.delay = 0.0  # seconds every answer waits
        self.in_flight = self.max_in_flight = 0
        self.httpd = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # --- the query DSL -------------------------------------------------------------------

    def search(self, body: dict) -> dict:
        """The Elasticsearch-shaped answer to a `_search` body; DslError for what it lacks."""
        if not isinstance(body, dict):
            raise DslError("the request body is a JSON object")
        unknown = sorted(set(body) - {"query", "size", "_source"})
        if unknown:
            raise DslError(f"Unknown key for a START_OBJECT in [{unknown[0]}].")
        size = body.get("size", 10)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise DslError(f"[size] must be a whole number, not {size!r}")
        query = self.translate(body.get("query", {"bool": {}}))
        hits = self.searcher.search(query, limit=size).hits if size else []
        out = []
        for score, address in hits:
            doc = self.searcher.doc(address)
            hit = {"_index": "docs", "_id": doc["id"][0], "_score": score}
            if body.get("_source", True):
                hit["_source"] = {f: (doc[f] or [""])[0] for f in FIELDS}
            out.append(hit)
        return {"took": 0, "timed_out": False,
                "hits": {"total": {"value": len(out), "relation": "eq"},
                         "max_score": out[0]["_score"] if out else None, "hits": out}}

    def translate(self, node) -> tantivy.Query:
        if not isinstance(node, dict) or len(node) != 1:
            raise DslError("a query is an object with one key, its kind")
        (kind, spec), = node.items()
        translate = {"bool": self._bool, "multi_match": self._multi_match,
                     "match": self._match, "match_phrase": self._match}.get(kind)
        if translate is None:
            raise DslError(f"unknown query [{kind}]")
        return translate(kind, spec)

    def _bool(self, kind: str, spec) -> tantivy.Query:
        if not isinstance(spec, dict) or set(spec) - {"should"}:
            raise DslError("[bool] understands [should] only")
        should = spec.get("should", [])
        should = should if isinstance(should, list) else [should]
        if not should:
            return tantivy.Query.all_query()
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, self.translate(q)) for q in should])

    def _multi_match(self, kind: str, spec) -> tantivy.Query:
        if not isinstance(spec, dict) or set(spec) - {"query", "fields", "type", "boost"} or "query" not in spec:
            raise DslError("[multi_match] understands query, fields, type and boost")
        fields, kind = spec.get("fields", list(FIELDS)), spec.get("type", "best_fields")
        if kind not in ("best_fields", "most_fields"):
            raise DslError(f"[multi_match] type [{kind}] is not understood here")
        per_field = [self._field_query("match", field, spec["query"]) for field in fields]
        query = (tantivy.Query.disjunction_max_query(per_field) if kind == "best_fields" else
                 tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in per_field]))
        return self._boosted(query, spec.get("boost", 1.0))

    def _match(self, kind: str, spec) -> tantivy.Query:
        if not isinstance(spec, dict) or len(spec) != 1:
            raise DslError(f"[{kind}] query doesn't support multiple fields")
        (field, value), = spec.items()
        if isinstance(value, dict):
            if set(value) - {"query", "boost"} or "query" not in value:
                raise DslError(f"[{kind}] understands query and boost")
            return self._boosted(self._field_query(kind, field, value["query"]), value.get("boost", 1.0))
        return self._field_query(kind, field, value)

    def _field_query(self, kind: str, field: str, text) -> tantivy.Query:
        if not isinstance(text, str):
            raise DslError(f"[{kind}] query text must be a string")
        tokens = self.analyzer.analyze(text)
        if field not in FIELDS or not tokens:
            return tantivy.Query.empty_query()
        if kind == "match_phrase" and len(tokens) > 1:
            return tantivy.Query.phrase_query(self.schema, field, tokens)
        terms = [tantivy.Query.term_query(self.schema, field, token) for token in tokens]
        return terms[0] if len(terms) == 1 else tantivy.Query.boolean_query([(tantivy.Occur.Should, t) for t in terms])

    @staticmethod
    def _boosted(query: tantivy.Query, boost) -> tantivy.Query:
        if isinstance(boost, bool) or not isinstance(boost, (int, float)) or boost < 0:
            raise DslError(f"[boost] must be a number from 0, not {boost!r}")
        return query if boost == 1 else tantivy.Query.boost_query(query, float(boost))

    # --- HTTP ----------------------------------------------------------------------------

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                with server.lock:
                    server.requests.append({"path": self.path, "raw": raw,
                                            "authorization": self.headers.get("authorization")})
                    action = server.actions.pop(0) if server.actions else None
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.delay:
                        time.sleep(server.delay)
                    self._answer(raw, action)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, raw: bytes, action):
                if action and action[0] == "sleep":
                    time.sleep(action[1])
                    action = None
                if action and action[0] == "status":
                    body = action[2] if isinstance(action[2], str) else json.dumps(action[2])
                    return self._send(action[1], body, action[3] if len(action) > 3 else {})
                if action and action[0] == "json":
                    return self._send(200, json.dumps(action[1]))
                if action and action[0] == "echo":
                    return self._send(action[1], json.dumps({
                        "error": f"upstream failed for {self.headers.get('authorization')}",
                        "request_headers": dict(self.headers.items())}))
                path = self.path.partition("?")[0]
                if path != "/_search" and not (path.endswith("/_search") and path.count("/") == 2):
                    return self._send(404, json.dumps({"error": f"no handler found for uri [{path}] and method [POST]",
                                                       "status": 404}))
                if server.require_auth and self.headers.get("authorization") != server.require_auth:
                    return self._send(401, json.dumps(_es_error("security_exception", 401,
                                      f"missing authentication credentials for REST request [{path}]")),
                                      {"WWW-Authenticate": 'ApiKey, Basic realm="security"'})
                try:
                    answer = server.search(json.loads(raw or b"{}"))
                except (DslError, ValueError) as exc:
                    return self._send(400, json.dumps(_es_error("parsing_exception", 400, str(exc))))
                self._send(200, json.dumps(answer))

            def _send(self, code: int, body: str, headers: dict | None = None):
                data = body.encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                try:
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

        return Handler


def _es_error(kind: str, status: int, reason: str) -> dict:
    return {"error": {"root_cause": [{"type": kind, "reason": reason}], "type": kind, "reason": reason},
            "status": status}
