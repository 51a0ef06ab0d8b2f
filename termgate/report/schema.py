"""Generate the shipped JSON Schema of the report from the pydantic models.

Run `make schema` (or `python -m termgate.report.schema`) after changing models.py;
a test fails while the shipped file is stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..models import Report

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "report.schema.json"


def generate_schema() -> str:
    schema = Report.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://termgate.dev/schema/report.schema.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main() -> None:
    SCHEMA_PATH.write_text(generate_schema(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")


if __name__ == "__main__":
    main()
