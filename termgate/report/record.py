"""A printable, self-contained HTML record of one sign-off decision, with its hashes."""

from __future__ import annotations

from html import escape

__all__ = ["render_record_html"]

# control characters and BiDi overrides as character references: the record stays exact
# when opened in a browser, and printing it on a terminal sends no escape sequence
_CONTROLS = {c: f"&#x{c:x};" for c in [*range(0x20), *range(0x7f, 0xa0), 0x61c, 0x200e, 0x200f,
                                       *range(0x202a, 0x202f), *range(0x2066, 0x206a)]}


def render_record_html(record: dict) -> str:
    e = lambda v: escape("" if v is None else str(v), quote=True).translate(_CONTROLS)  # noqa: E731
    payload = record.get("payload") or {}
    rows = [("Decision", (record.get("decision") or record.get("kind", "")).upper()),
            ("Run", record.get("run_id")), ("Reviewer", record.get("actor")), ("Role", payload.get("role")),
            ("Time (UTC)", record.get("created_at")), ("Comment", record.get("comment")),
            ("Gate at decision", payload.get("gate")), ("Domains", ", ".join(payload.get("domains", []))),
            ("Extends audit head", payload.get("extends")),
            ("Acknowledged items", len(payload.get("acknowledged", []))),
            ("Run content hash", record.get("content_hash")), ("Audit record", record.get("seq")),
            ("Previous record hash", record.get("prev_hash")), ("Record hash", record.get("record_hash"))]
    body = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows)
    items = "".join(f"<li>{e(i)}</li>" for i in payload.get("acknowledged", []))
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>termgate sign-off record "
            f"{e(record.get('seq'))}</title><style>body{{font:14px system-ui,sans-serif;margin:32px}}"
            "table{border-collapse:collapse}th,td{border:1px solid #bbb;padding:6px 10px;text-align:left;"
            "vertical-align:top}th{background:#f3f3f3}td{font-family:ui-monospace,monospace;word-break:break-all}"
            "</style></head><body><h1>Sign-off record</h1>"
            f"<table>{body}</table><h2>Acknowledged flagged items</h2><ul>{items or '<li>none</li>'}</ul>"
            "<p>Verify with <code>termgate audit verify</code>: every record's hash covers its content and the "
            "previous record's hash.</p></body></html>\n")
