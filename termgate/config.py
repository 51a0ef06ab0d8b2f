"""Settings other than thresholds (SPEC §1.4).

Read from `$TERMGATE_CONFIG`, else `./termgate.toml` (for one release, evalcore's
`$EVALCORE_CONFIG` and `./evalcore.toml` too, with a warning); environment variables override the
file; command-line flags override both. Read at call time, never at import time.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .environment import ignored_notice, legacy_notice, setting, setting_source
from .errors import InputError, Problem

__all__ = ["Settings", "Endpoint", "load_settings", "settings_files", "default_db_path"]

DEFAULT_DB = "data/termgate.duckdb"
LEGACY_DEFAULT_DB = "data/evalcore.duckdb"
"""evalcore's default store: used for one release when DEFAULT_DB is not there (with a warning)."""
CONFIG_FILE = "termgate.toml"
LEGACY_CONFIG_FILE = "evalcore.toml"
"""evalcore's config file: read for one release when CONFIG_FILE is not there (with a warning)."""
KNOWN_KEYS = {"high_risk_domains", "approvals_required", "dashboard_url", "drift", "llm", "drift_kappa_min", "trust",
              "retrieval"}


STRUCTURED_OUTPUT_FORMS = ("json_schema", "json_object")
"""How `--response-format json` is asked for at an endpoint: OpenAI's `json_schema`, or
`{"type": "json_object", "schema": ...}` (llama.cpp and other local servers)."""
GENERATION_KEYS = {"max_tokens", "concurrency", "structured_output"}
"""Keys of `[llm]` that a `[llm.endpoints.NAME]` table may set for itself (how that endpoint is called)."""
ENDPOINT_KEYS = {"base_url", "model", "key_env"} | GENERATION_KEYS
_ENDPOINT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Endpoint:
    """One `[llm.endpoints.NAME]` table: an endpoint the dashboard may call, by name."""

    name: str
    """How the dashboard and `harness --endpoint` refer to it."""
    base_url: str
    """The OpenAI-compatible base URL (http or https, no key inside)."""
    model: str
    """The model asked for at that endpoint."""
    key_env: str | None = None
    """The environment variable holding this endpoint's key (none: the endpoint needs no key)."""
    max_tokens: int | None = None
    """Completion tokens per call at this endpoint (None: `[llm] max_tokens`)."""
    concurrency: int | None = None
    """Calls in flight at once at this endpoint (None: `[llm] concurrency`); 1 for a server that
    answers one request at a time."""
    structured_output: str | None = None
    """"json_schema" or "json_object": how `--response-format json` is asked for here (None: `[llm]`'s)."""

    @property
    def generation(self) -> dict:
        """The generation keys this table sets, to merge over `[llm]` (termgate.llm.LLMConfig.from_settings)."""
        return {key: getattr(self, key) for key in sorted(GENERATION_KEYS) if getattr(self, key) is not None}


@dataclass(frozen=True)
class Settings:
    """Everything configurable outside thresholds."""

    high_risk_domains: tuple[str, ...] = ("legal", "medical")
    approvals_required: dict[str, int] = field(default_factory=dict)
    dashboard_url: str = "http://localhost:8501"
    drift: dict = field(default_factory=dict)
    llm: dict = field(default_factory=dict)
    endpoints: dict[str, Endpoint] = field(default_factory=dict)
    """`[llm.endpoints.NAME]`: the only endpoints the dashboard calls, by name (SPEC §1.4, §5)."""
    drift_kappa_min: float | None = None
    """A high-risk run's drift judge needs at least this kappa against reviewers' verdicts in
    its domain, else a flagged item (termgate.governance.agreement); None (the default): off."""
    source: str | None = None
    policy_overrides: dict = field(default_factory=dict)
    """The policy keys (high_risk_domains, approvals_required, drift_kappa_min) this file or
    the environment states explicitly: they may tighten the store's policy for this process,
    never loosen it (termgate.governance.policy.effective_policy)."""

    retrieval: dict = field(default_factory=dict)
    """`[retrieval]`: the search engine and query template of the retrieval effect
    (termgate.retrieval.configure; docs/retrieval.md)."""

    trust_root: str | None = None
    """`[trust] root`: the fingerprint of the store's trust root, which `gate`, `audit verify`
    and the dashboard hold the store to (SPEC §4; docs/signoff.md)."""

    def approvals_for(self, domain: str) -> int:
        return int(self.approvals_required.get(domain, 1))


def _config_path() -> Path | None:
    explicit = setting("CONFIG")
    if explicit:
        return Path(explicit)
    local, legacy = Path(CONFIG_FILE), Path(LEGACY_CONFIG_FILE)
    if local.exists():
        if legacy.exists():
            ignored_notice(LEGACY_CONFIG_FILE, CONFIG_FILE)
        return local
    if legacy.exists():
        legacy_notice(LEGACY_CONFIG_FILE, CONFIG_FILE)
        return legacy
    return None


def settings_files(settings: Settings) -> dict[str, str | None]:
    """The files the settings come from or name, which no output may replace (SPEC §5: an
    output is never an input): the config file and `[drift] coefficients`."""
    coefficients = settings.drift.get("coefficients")
    return {"the config file": settings.source,
            "[drift] coefficients": coefficients if isinstance(coefficients, str) else None}


def load_settings() -> Settings:
    """Settings from the config file and environment; bad files are InputErrors."""

    path = _config_path()
    data: dict = {}
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise InputError([Problem(str(path), 0, "config", f"file not found ({setting_source('CONFIG')})")]) from None
        except IsADirectoryError:
            raise InputError([Problem(str(path), 0, "config", "a folder, not a TOML file")]) from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            from .io import toml_error_line
            raise InputError([Problem(str(path), toml_error_line(exc), "toml", str(exc))]) from None
    text = path.read_text(encoding="utf-8-sig") if path is not None else ""

    def problem(key: str, message: str, after: str | None = None) -> InputError:
        """The line of `key`; with `after` (a table's header), of its last part after that header."""
        index = text.find(key)
        if after is not None and (start := text.find(after)) >= 0:
            sub = text.find(key.rsplit(".", 1)[-1], start + len(after)) if key.count(".") > 2 else -1
            index = sub if sub >= 0 else start
        line = text.count("\n", 0, index) + 1 if index >= 0 else 1
        return InputError([Problem(str(path), line, key, message)])

    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise problem(unknown[0], f"unknown setting (known: {', '.join(sorted(KNOWN_KEYS))})")
    domains = data.get("high_risk_domains", ["legal", "medical"])
    env_domains = setting("HIGH_RISK_DOMAINS")
    if env_domains is not None:
        domains = [d for d in env_domains.split(",") if d.strip()]
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        raise problem("high_risk_domains", "must be a list of strings")
    from .errors import UsageError
    from .identity import canonical_domain

    try:
        domains = [canonical_domain(d, "HIGH_RISK_DOMAINS" if env_domains is not None else "high_risk_domains")
                   for d in domains]
    except UsageError as exc:
        if env_domains is not None:
            raise UsageError(f"{setting_source('HIGH_RISK_DOMAINS')}: {exc}") from None
        raise problem("high_risk_domains", str(exc)) from None
    approvals = data.get("approvals_required", {})
    if type(approvals) is int:
        approvals = {d: approvals for d in domains}
    if not isinstance(approvals, dict) or not all(type(v) is int and v >= 1 for v in approvals.values()):
        raise problem("approvals_required", "must be a whole number ≥ 1, or a table of domain = whole number ≥ 1")
    try:
        approvals = {canonical_domain(k, "approvals_required"): v for k, v in approvals.items()}
    except UsageError as exc:
        raise problem("approvals_required", str(exc)) from None
    for table in ("drift", "llm", "retrieval"):
        if not isinstance(data.get(table, {}), dict):
            raise problem(table, f"must be a table: [{table}]")
    url = setting("DASHBOARD_URL", data.get("dashboard_url", Settings.dashboard_url))
    if not isinstance(url, str):
        raise problem("dashboard_url", "must be a string such as http://localhost:8501")
    drift = dict(data.get("drift", {}))
    if judge := setting("DRIFT_JUDGE"):
        drift["judge"] = judge
    kappa_min = data.get("drift_kappa_min")
    if kappa_min is not None and (type(kappa_min) not in (int, float) or not -1 <= kappa_min <= 1):
        raise problem("drift_kappa_min", "must be a number in [-1, 1] (a Cohen's kappa), such as 0.6")
    trust = data.get("trust", {})
    if not isinstance(trust, dict) or set(trust) - {"root"}:
        raise problem("trust", "must be a table [trust] holding root = \"ed25519:...\" only")
    trust_root = None
    if trust.get("root") is not None:
        from .signing import parse_fingerprint
        try:
            trust_root = parse_fingerprint(trust["root"] if isinstance(trust["root"], str) else repr(trust["root"]))
        except UsageError as exc:
            start = text.find("[trust]")
            index = text.find("root", start) if start >= 0 else -1
            line = text.count("\n", 0, index) + 1 if index >= 0 else 1
            raise InputError([Problem(str(path), line, "trust.root", str(exc).split(": ", 1)[1])]) from None
    llm = dict(data.get("llm", {}))
    endpoints = _endpoints(llm.pop("endpoints", {}), problem, text)
    for key in sorted(GENERATION_KEYS & set(llm)):
        if (why := generation_problem(key, llm[key])) is not None:
            raise InputError([Problem(str(path), _key_line(text, "[llm]", key), f"llm.{key}", why)])
    overrides = {key: value for key, value, given in (
        ("high_risk_domains", tuple(domains), "high_risk_domains" in data or env_domains is not None),
        ("approvals_required", approvals, "approvals_required" in data),
        ("drift_kappa_min", kappa_min, kappa_min is not None)) if given}
    return Settings(
        high_risk_domains=tuple(domains), approvals_required=approvals, policy_overrides=overrides,
        dashboard_url=url, drift=drift, llm=llm, endpoints=endpoints,
        drift_kappa_min=None if kappa_min is None else float(kappa_min), source=str(path) if path else None,
        trust_root=trust_root, retrieval=dict(data.get("retrieval", {})),
    )


def _endpoints(tables, problem, text: str) -> dict[str, Endpoint]:
    """`[llm.endpoints.NAME]` tables -> Endpoints; anything unknown or mistyped is an InputError."""
    if not isinstance(tables, dict):
        raise problem("llm.endpoints", "must be tables: [llm.endpoints.NAME] with base_url, model, key_env")
    out = {}
    for name, table in tables.items():
        where = f"llm.endpoints.{name}"
        header = f"[{where}]" if f"[{where}]" in text else name
        if not _ENDPOINT_NAME.fullmatch(name):
            raise problem(where, "endpoint names are letters, digits, '.', '_' and '-' (at most 64)", header)
        if not isinstance(table, dict):
            raise problem(where, f"must be a table: [{where}] with base_url, model, key_env", header)
        unknown = sorted(set(table) - ENDPOINT_KEYS)
        if unknown:
            raise problem(f"{where}.{unknown[0]}", f"unknown key (known: {', '.join(sorted(ENDPOINT_KEYS))})", header)
        for key in ("base_url", "model"):
            if key not in table:
                raise problem(f"{where}.{key}", "required", header)
        for key in sorted(ENDPOINT_KEYS & set(table)):
            why = (generation_problem(key, table[key]) if key in GENERATION_KEYS
                   else None if isinstance(table[key], str) and table[key].strip() else "must be a non-empty string")
            if why is not None:
                raise problem(f"{where}.{key}", why, header)
        url = table["base_url"].strip()
        if not re.match(r"https?://[^/@?#\s]+", url) or "@" in url.split("/", 3)[2] or re.search(r"[?#]", url):
            raise problem(f"{where}.base_url", "must be an http(s) URL without user, password, query or fragment "
                                                "(the key comes from key_env)", header)
        key_env = table.get("key_env")
        if key_env is not None and not _ENV_NAME.fullmatch(key_env):
            raise problem(f"{where}.key_env", "must name an environment variable, such as VLLM_API_KEY", header)
        out[name] = Endpoint(name, url, table["model"].strip(), key_env, **{k: table[k] for k in GENERATION_KEYS & set(table)})
    return out


def generation_problem(key: str, value) -> str | None:
    """Why `value` will not do for the generation setting `key` (None: it will)."""
    if key == "structured_output":
        return None if value in STRUCTURED_OUTPUT_FORMS else \
            f"must be one of {', '.join(repr(f) for f in STRUCTURED_OUTPUT_FORMS)} (got {value!r})"
    top = {"max_tokens": 1_000_000, "concurrency": 512}[key]
    if type(value) is not int or not 1 <= value <= top:
        return f"must be a whole number from 1 to {top} (got {value!r})"
    return None


def _key_line(text: str, header: str, key: str) -> int:
    """The line of `key = ` in the table `header` (else of a dotted `llm.key`, else 1)."""
    start = text.find(header)
    found = re.compile(rf"(?m)^[ \t]*{re.escape(key)}[ \t]*=").search(text, start + len(header)) if start >= 0 else None
    index = found.start() if found else text.find(f"llm.{key}")
    return text.count("\n", 0, index) + 1 if index >= 0 else 1


def default_db_path() -> str:
    """`$TERMGATE_DB`, else data/termgate.duckdb (relative to the current directory); for one
    release, evalcore's data/evalcore.duckdb when only that one is there."""
    chosen = setting("DB")
    if chosen:
        return chosen
    if os.path.lexists(LEGACY_DEFAULT_DB):
        if not os.path.lexists(DEFAULT_DB):
            legacy_notice(LEGACY_DEFAULT_DB, DEFAULT_DB)
            return LEGACY_DEFAULT_DB
        ignored_notice(LEGACY_DEFAULT_DB, DEFAULT_DB)
    return DEFAULT_DB
