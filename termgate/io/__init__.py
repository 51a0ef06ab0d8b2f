"""Load and validate input files, with line-numbered problems (SPEC §1, §5).

Every loader collects problems as `FILE:LINE: FIELD: message` and raises one
`InputError` holding them; nothing is returned half-parsed. The scorer reads what these
loaders vouch for, or their parse handed over as Arrow (`GoldenSet.table`,
`GeneratedSet.table`).
"""


from .generated import GENERATED_SCHEMA, GeneratedSet, load_generated
from .golden import GOLDEN_SCHEMA, GoldenSet, PreparedItem, default_golden_name, golden_line_numbers, golden_set_name, load_golden_set, plain_golden_fields
from .query_ids import query_id_problem
from .reading import BOM, MAX_SCANNED, RepeatedKey, jsonl_lines, loads_line, loads_strict, read_text, toml_error_line, unique_keys
from .records import load_baseline_report, load_thresholds

__all__ = ["PreparedItem", "GoldenSet", "GeneratedSet", "GOLDEN_SCHEMA", "GENERATED_SCHEMA", "load_golden_set",
           "load_generated", "query_id_problem", "golden_line_numbers", "golden_set_name", "default_golden_name", "load_thresholds", "load_baseline_report", "plain_golden_fields", "jsonl_lines",
           "read_text", "toml_error_line", "BOM", "MAX_SCANNED", "RepeatedKey", "loads_strict", "loads_line",
           "unique_keys"]
