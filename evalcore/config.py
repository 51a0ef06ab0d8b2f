"""Settings other than thresholds (SPEC §1.4).

Read from `$EVALCORE_CONFIG`, else `./evalcore.toml`; environment variables override the
file; command-line flags override both. Read at call time, never at import time.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError, Problem

__all__ = ["Settings", "load_settings", "default_db_path"]

DEFAULT_DB = "data/evalcore.duckdb"
KNOWN_KEYS = {"high_risk_domains", "approvals_required", "dashboard_url", "drift", "llm"}


@dataclass(frozen=True)
class Settings:
    """Everything configurable outside thresholds."""

    high_risk_domains: tuple[str, ...] = ("legal", "medical")
    approvals_required: dict[str, int] = field(default_factory=dict)
    dashboard_url: str = "http://localhost:8501"
    drift: dict = field(default_factory=dict)
    llm: dict = field(default_factory=dict)
    source: str | None = None

    def approvals_for(self, domain: str) -> int:
        return int(self.approvals_required.get(domain, 1))


def _config_path() -> Path | None:
    explicit = os.environ.get("EVALCORE_CONFIG")
    if explicit:
        return Path(explicit)
    local = Path("evalcore.toml")
    return local if local.exists() else None


def load_settings() -> Settings:
    """Settings from the config file and environment; bad files are InputErrors."""
    from .metrics import normalize_term

    path = _config_path()
    data: dict = {}
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise InputError([Problem(str(path), 0, "config", "file not found (EVALCORE_CONFIG)")]) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            from .io import toml_error_line
            raise InputError([Problem(str(path), toml_error_line(exc), "toml", str(exc))]) from None
    text = path.read_text(encoding="utf-8-sig") if path is not None else ""

    def problem(key: str, message: str) -> InputError:
        index = text.find(key)
        line = text.count("\n", 0, index) + 1 if index >= 0 else 1
        return InputError([Problem(str(path), line, key, message)])

    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise problem(unknown[0], f"unknown setting (known: {', '.join(sorted(KNOWN_KEYS))})")
    domains = data.get("high_risk_domains", ["legal", "medical"])
    env_domains = os.environ.get("EVALCORE_HIGH_RISK_DOMAINS")
    if env_domains is not None:
        domains = [d for d in env_domains.split(",") if d.strip()]
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        raise problem("high_risk_domains", "must be a list of strings")
    approvals = data.get("approvals_required", {})
    if type(approvals) is int:
        approvals = {normalize_term(d): approvals for d in domains}
    if not isinstance(approvals, dict) or not all(type(v) is int and v >= 1 for v in approvals.values()):
        raise problem("approvals_required", "must be a whole number ≥ 1, or a table of domain = whole number ≥ 1")
    for table in ("drift", "llm"):
        if not isinstance(data.get(table, {}), dict):
            raise problem(table, f"must be a table: [{table}]")
    url = os.environ.get("EVALCORE_DASHBOARD_URL", data.get("dashboard_url", Settings.dashboard_url))
    if not isinstance(url, str):
        raise problem("dashboard_url", "must be a string such as http://localhost:8501")
    drift = dict(data.get("drift", {}))
    if os.environ.get("EVALCORE_DRIFT_JUDGE"):
        drift["judge"] = os.environ["EVALCORE_DRIFT_JUDGE"]
    return Settings(
        high_risk_domains=tuple(normalize_term(d) for d in domains),
        approvals_required={normalize_term(k): v for k, v in approvals.items()},
        dashboard_url=url, drift=drift, llm=dict(data.get("llm", {})),
        source=str(path) if path else None,
    )


def default_db_path() -> str:
    """`$EVALCORE_DB`, else data/evalcore.duckdb (relative to the current directory)."""
    return os.environ.get("EVALCORE_DB") or DEFAULT_DB
