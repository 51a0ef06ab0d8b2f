"""Load and validate input files into models, with line-numbered problems (SPEC §1, §5).

Every loader collects problems as `FILE:LINE: FIELD: message` and raises one
`InputError` holding them; nothing is returned half-parsed.
"""


from .generated import GeneratedSet, load_generated
from .golden import GoldenSet, PreparedItem, load_golden_set
from .reading import BOM, MAX_SCANNED, _read_text, jsonl_lines, toml_error_line  # noqa: F401 (shared reader)
from .records import load_baseline_report, load_thresholds

__all__ = ["PreparedItem", "GoldenSet", "GeneratedSet", "load_golden_set", "load_generated", "load_thresholds",
           "load_baseline_report", "jsonl_lines", "toml_error_line", "BOM", "MAX_SCANNED"]
