"""A store whose every field the dashboard shows holds markup: Markdown images and links to
a recording stub, HTML, LaTeX and emphasis. Built through the CLI, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AUTHOR = "_eve_@127.0.0.1"  # canonical names allow _ @ . : emphasis and an e-mail autolink if rendered


def markup(port: int) -> str:
    return (f"![px](http://127.0.0.1:{port}/pixel.png) [link](http://127.0.0.1:{port}/x) <b>bold</b> "
            f"<img src=http://127.0.0.1:{port}/i.png> $x^2$ **strong**")


def fragments(port: int) -> list[str]:
    """Each piece that must appear literally on the page."""
    return [f"![px](http://127.0.0.1:{port}/pixel.png)", f"[link](http://127.0.0.1:{port}/x)", "<b>bold</b>",
            f"<img src=http://127.0.0.1:{port}/i.png>", "$x^2$", "**strong**"]


def _cli(*args: str, env: dict | None = None) -> str:
    proc = subprocess.run([sys.executable, "-m", "termgate", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert proc.returncode in (0, 1, 3), proc.stderr
    return proc.stdout


def build_store(db: Path, folder: Path, port: int) -> dict:
    """Two runs (a baseline and a candidate that regresses, with drift), a rejection with a
    marked-up comment, and two prompt versions; returns their ids."""
    from termgate import store

    m = markup(port)
    config = folder / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    env = {"TERMGATE_CONFIG": str(config), "TERMGATE_DB": str(db)}
    rows, base, cand = [], [], []
    for i in range(6):
        qid = f"qid{i} {m}"
        rows.append({"query_id": qid, "query": f"query{i} {m}",
                     "context": {"domain": "medical" if i < 3 else "<b>dom</b> $y$"},
                     "expected_expansions": [{"term": f"term{i} {m}"}, {"term": f"plain{i}"}],
                     "forbidden_terms": [f"forbidden{i} {m}"]})
        base.append({"query_id": qid, "terms": [f"term{i} {m}", f"plain{i}"]})
        cand.append({"query_id": qid, "terms": [f"plain{i}", f"forbidden{i} {m}"] if i < 3 else base[-1]["terms"]})
    golden = folder / "golden $x^2$ <b>g<.b> **s**.jsonl"  # no slash in a file name
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for name, lines in (("base.jsonl", base), ("cand.jsonl", cand)):
        (folder / name).write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    common = ["--golden", str(golden), "--drift-judge", "none", "--db", str(db), "--author", AUTHOR, "-q",
              "--json"]
    _cli("evaluate", *common, str(folder / "b.json"), "--generated", str(folder / "base.jsonl"),
         "--name", f"name-base {m}", "--prompt-version", f"v1 {m}", env=env)
    base_id = json.loads((folder / "b.json").read_text())["evaluation_id"]
    _cli("evaluate", *common, str(folder / "c.json"), "--generated", str(folder / "cand.jsonl"),
         "--name", f"name-cand {m}", "--prompt-version", f"v2 {m}", "--baseline", base_id, env=env)
    cand_id = json.loads((folder / "c.json").read_text())["evaluation_id"]
    _cli("users", "add", "carol", "--role", "approver", env={**env, "TERMGATE_PASSWORD": "carol-password-1"})
    _cli("signoff", cand_id, "--reject", "--reviewer", "carol", "--comment", f"comment {m}", "--ack-all",
         env={**env, "TERMGATE_PASSWORD": "carol-password-1"})
    for n, version in enumerate(("pv1", "pv2")):
        eval_id = f"pe{n}"
        store.save_prompt_eval(db, {"eval_id": eval_id, "created_at": f"2026-01-0{n + 1}T00:00:00Z",
                                    "name": f"pename {m}", "dataset_path": f"dataset {m}", "dataset_hash": "d" * 64,
                                    "prompt_version": f"{version} {m}", "model": f"model {m}",
                                    "judge_model": f"judge {m}", "pass_threshold": 7.0, "total_cases": 2,
                                    "scored_cases": 2, "average_score": 6.0 + n, "stdev_score": 1.0,
                                    "pass_rate": 0.5},
                               [{"eval_id": eval_id, "case_index": c, "scenario": f"scenario{c} {m}",
                                 "output": f"output {m}", "score": 5.0 + c + n, "passed": c == 1,
                                 "reasoning": f"reasoning {m}"} for c in range(2)])
    return {"base": base_id, "cand": cand_id, "qid": rows[0]["query_id"], "config": config, "env": env}
