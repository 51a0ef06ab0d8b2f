"""Report writers: JSON (the contract), self-contained HTML and JUnit XML; for pipelines,
the Markdown job summary and pull-request comment, annotations and Code Quality."""

from .annotations import codequality_report, github_annotations
from .findings import Findings
from .html_report import render_html
from .json_report import build_report, iter_report_json, query_rows, report_json
from .junit_report import render_junit
from .files import PendingFile, write_atomically
from .markdown import render_pr_comment, render_summary
from .paths import STDOUT, check_outputs

__all__ = ["build_report", "report_json", "iter_report_json", "query_rows", "PendingFile", "render_html", "render_junit", "write_atomically",
           "STDOUT", "check_outputs", "Findings", "render_summary", "render_pr_comment", "github_annotations",
           "codequality_report"]
