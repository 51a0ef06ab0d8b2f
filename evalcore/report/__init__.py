"""Report writers: JSON (the contract), self-contained HTML and JUnit XML."""

from .html_report import render_html
from .json_report import build_report, iter_report_json, query_rows, report_json
from .junit_report import render_junit
from .files import PendingFile, write_atomically
from .paths import STDOUT, check_outputs

__all__ = ["build_report", "report_json", "iter_report_json", "query_rows", "PendingFile", "render_html", "render_junit", "write_atomically",
           "STDOUT", "check_outputs"]
