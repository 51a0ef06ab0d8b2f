"""The README is also the PyPI page, where a relative link leads nowhere: every link into the
project is absolute, and names a file (and heading) this checkout has."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME = "https://github.com/termgate/termgate"


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.+)$", markdown, flags=re.M)}


def test_readme_links_are_absolute_and_resolve_in_this_checkout():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert targets
    for target in targets:
        assert re.match(r"https?://|mailto:", target), f"relative link in README.md: {target}"
        if not target.startswith(HOME + "/"):
            continue
        path, _, anchor = re.sub(rf"^{re.escape(HOME)}/(blob|tree)/main/", "", target).partition("#")
        assert (ROOT / path).exists(), f"README.md links to {path}, which is not in the checkout"
        if anchor:
            assert anchor in _anchors((ROOT / path).read_text(encoding="utf-8")), f"no heading #{anchor} in {path}"


def test_the_project_urls_point_at_the_same_home():
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert urls["Homepage"] == HOME and all(u.startswith(HOME) for u in urls.values())
