#!/usr/bin/env python3
"""The action's Comment step: create, or update, the one pull-request comment of this
golden set and run name, found by its hidden marker (the first line of termgate's
--pr-comment file, `<!-- termgate: GOLDEN/NAME -->`), with `gh api`.

Environment: COMMENT_FILE (the Evaluate step's comment_file output), INPUT_COMMENT
("true" to comment), INPUT_COMMENT_AUTHOR (whose comment is updated: the login the token
posts as, `github-actions[bot]` for GITHUB_TOKEN), GH_TOKEN, and GitHub's own
GITHUB_EVENT_PATH, GITHUB_EVENT_NAME, GITHUB_REPOSITORY, GITHUB_SERVER_URL.

Never fails the job: the exit code is termgate's (the action's last step). A pull request
from a fork under `pull_request` gets a read-only token, so it is skipped with a
`::notice::` before any call; so is any call GitHub answers with 403. Other failures are a
`::warning::`. The body goes to gh on standard input (`--input -`), never on a command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

MARKER_START = "<!-- termgate: "
LEGACY_MARKER_START = "<!-- evalcore: "
"""The marker evalcore wrote (one release of overlap): an open pull request's comment from
before the rename is found and updated, not joined by a second one."""


def same_marker(line: str, marker: str) -> bool:
    """Whether a comment's first line is `marker`, in the new form or the evalcore form."""
    legacy = LEGACY_MARKER_START + marker[len(MARKER_START):]
    return line == marker or line == legacy


def workflow_data(text: str) -> str:
    """Text as a workflow command's message: `%`, CR and LF encoded, so nothing in it can
    end the command or start another."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


class Skip(Exception):
    """No comment this time, and why (a ::notice:: when `notice`, else a plain line)."""

    def __init__(self, message: str, notice: bool = True):
        super().__init__(message)
        self.notice = notice


class GhFailed(Exception):
    def __init__(self, what: str, stderr: str):
        super().__init__(f"{what}: {' '.join(stderr.split()) or 'gh failed'}")
        self.forbidden = "HTTP 403" in stderr


def gh(args: list[str], what: str, body: dict | None = None) -> str:
    env = dict(os.environ)
    host = urlparse(os.environ.get("GITHUB_SERVER_URL", "")).hostname
    if host and host != "github.com":  # GitHub Enterprise Server
        env.setdefault("GH_HOST", host)
    try:
        done = subprocess.run([os.environ.get("GH_BIN") or "gh", "api", *args], env=env, capture_output=True,
                              text=True, input=json.dumps(body) if body is not None else None)
    except OSError as exc:
        raise GhFailed(what, f"cannot run gh: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise GhFailed(what, done.stderr)
    return done.stdout


def json_values(text: str) -> list:
    """Every JSON value in `text`: `gh api --paginate` prints one array per page, back to back."""
    decoder, values, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return values
        item, at = decoder.raw_decode(text, at)
        values.append(item)


def pull_request() -> tuple[dict, dict]:
    """(the event, its pull_request) or Skip."""
    try:
        data = json.loads(Path(os.environ["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    except (KeyError, OSError, ValueError):
        raise Skip("no event file (GITHUB_EVENT_PATH): no pull-request comment", notice=False) from None
    pr = data.get("pull_request")
    if not isinstance(pr, dict) or not pr.get("number"):
        raise Skip(f"{os.environ.get('GITHUB_EVENT_NAME', 'this')} event is not a pull request: no comment",
                   notice=False)
    return data, pr


def check_not_fork(pr: dict, repository: str) -> None:
    head = ((pr.get("head") or {}).get("repo") or {}).get("full_name")
    base = ((pr.get("base") or {}).get("repo") or {}).get("full_name") or repository
    if head != base and os.environ.get("GITHUB_EVENT_NAME") != "pull_request_target":
        raise Skip(f"pull request from {head or 'a deleted fork'}: its token cannot write to {base}, so the "
                   "termgate comment is skipped (the job summary and the reports have everything)")


def body_and_marker() -> tuple[str, str]:
    path = os.environ.get("COMMENT_FILE", "")
    if not path or not Path(path).is_file():
        raise Skip("termgate wrote no comment body (it stopped before the report; see its output above)")
    body = Path(path).read_text(encoding="utf-8")
    marker = body.split("\n", 1)[0]
    if not marker.startswith(MARKER_START):
        raise Skip(f"{path}: its first line is not a termgate marker, so no comment is updated")
    return body, marker


def existing(repository: str, number: int, marker: str, author: str) -> dict | None:
    """The first comment whose first line is the marker, new form or evalcore's, by `author`
    (any author when the input is empty)."""
    pages = json_values(gh(["--paginate", f"repos/{repository}/issues/{number}/comments?per_page=100"],
                           "listing the pull request's comments"))
    for page in pages:
        for comment in page if isinstance(page, list) else []:
            login = (comment.get("user") or {}).get("login")
            first = (comment.get("body") or "").split("\n", 1)[0].rstrip("\r")
            if same_marker(first, marker) and (not author or login == author):
                return comment
    return None


def publish() -> str:
    """Create or update the comment; a line saying which."""
    if os.environ.get("INPUT_COMMENT", "true").strip().lower() not in ("true", "1", "yes"):
        raise Skip("comment input is not true: no pull-request comment", notice=False)
    repository = os.environ.get("GITHUB_REPOSITORY", "")
    _, pr = pull_request()
    check_not_fork(pr, repository)
    body, marker = body_and_marker()
    number = int(pr["number"])
    found = existing(repository, number, marker, os.environ.get("INPUT_COMMENT_AUTHOR", "").strip())
    if found:
        reply = gh(["--method", "PATCH", f"repos/{repository}/issues/comments/{int(found['id'])}", "--input", "-"],
                   "updating the termgate comment", {"body": body})
        verb = "updated"
    else:
        reply = gh(["--method", "POST", f"repos/{repository}/issues/{number}/comments", "--input", "-"],
                   "creating the termgate comment", {"body": body})
        verb = "created"
    try:
        url = json.loads(reply).get("html_url") or ""
    except (ValueError, AttributeError):
        url = ""
    return f"termgate comment {verb} on pull request #{number}{': ' + url if url else ''}"


def main() -> int:
    try:
        print(publish(), flush=True)
    except Skip as skip:
        print(f"::notice title=termgate comment::{workflow_data(skip)}" if skip.notice else str(skip), flush=True)
    except GhFailed as failed:
        if failed.forbidden:
            print("::notice title=termgate comment::" + workflow_data(
                f"no permission to comment ({failed}); skipped — a pull request from a fork, or a token without "
                "pull-requests: write"), flush=True)
        else:
            print(f"::warning title=termgate comment::{workflow_data(failed)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
