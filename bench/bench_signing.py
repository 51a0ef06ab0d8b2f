"""bench_signing: what signed records cost (issue 33, "Measured").

(a) Signing one decision (store.records.linked under a personal signer: the canonical text,
    the Ed25519 signature, the record's hash) and verifying it (signing_message and the
    Ed25519 check), mean over `--n` records.
(b) `audit verify` of a chain of `--records` records (a signed store: an admin's trust root,
    two approvers with sealed keys, the CI's key, one run evaluated under it, then signed
    decisions on it appended by the store's own append_on in one transaction), its parts
    timed apart in one process: reading the chain, the links and hashes, the signature replay
    (governance.signatures.authority_of, its cache emptied first) and the run-row digests
    (verify_chain with runs="all" against runs=None); then `termgate audit verify` as a
    process. Goal: the signatures ≤ 5 s on each backend. `--postgres` also measures a
    PostgreSQL copy of the same store (`termgate store copy`, a private server as the tests
    start it).
(c) `termgate attest verify` of that run's attestation (which carries every record): in
    process (the replay's cache emptied) and as a process.

Each in-process figure is the median of `--repeat` runs, wall and CPU (the CPU time is the
steadier one on a shared machine); processes are timed once after a warm-up. The store is
built once (about two minutes for 10,000 records) and kept under `--cache`. Figures only:
nothing is asserted.

Usage: python bench/bench_signing.py [--records 10000] [--n 2000] [--repeat 3] [--cache DIR] [--postgres]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
PASSWORD = "bench-password-1"
GOAL = 5.0


class Timing:
    """Medians of wall and CPU (this process's user and system) seconds."""

    def __init__(self, walls: list[float], cpus: list[float]):
        self.wall, self.cpu = statistics.median(walls), statistics.median(cpus)

    def __str__(self) -> str:
        return f"{self.wall:5.2f} s (CPU {self.cpu:5.2f} s)"


def median_time(fn, repeat: int, before=None) -> Timing:
    walls, cpus = [], []
    for _ in range(repeat):
        if before is not None:
            before()
        start, cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return Timing(walls, cpus)


def bench_one_decision(n: int) -> None:
    from termgate.signing import PrivateKey, Signer, verify_signature
    from termgate.store.records import linked, signing_message

    key = PrivateKey.generate()
    signer = Signer(key, holder="carol")
    prev = "0" * 64
    record = {"created_at": "2026-12-03T12:00:00.000Z", "kind": "decision", "actor": "carol", "run_id": "r1",
              "content_hash": "ab" * 32, "decision": "approve", "comment": "reviewed every flagged item",
              "payload": {"role": "approver", "gate": "review", "domains": ["medical"], "acknowledged": ["a", "b"]}}
    start = time.perf_counter()
    signed = [linked(dict(record, signer=signer), i + 1, prev) for i in range(n)]
    sign = (time.perf_counter() - start) / n
    start = time.perf_counter()
    ok = sum(verify_signature(key.public, signing_message(r), r["payload"]["signature"]["sig"]) for r in signed)
    check = (time.perf_counter() - start) / n
    print(f"bench_signing one decision      sign {sign * 1e6:7.1f} µs   verify {check * 1e6:7.1f} µs   "
          f"(means over {n:,}; {ok:,} verified)")


def build_store(db: str, folder: Path, records: int) -> str:
    """The signed store (see the module); returns the run id."""
    os.environ["TERMGATE_CONFIG"] = str(folder / "none.toml")
    (folder / "none.toml").write_text("")
    from click.testing import CliRunner

    from conftest import golden_row, write_jsonl
    from termgate import store
    from termgate.cli import main
    from termgate.governance import signoff as so
    from termgate.governance import trust
    from termgate.signing import PrivateKey, signing_as, write_key_file
    from termgate.store.connection import connect
    from termgate.store.records import append_on, head_on

    ada = so.add_user(db, "ada", "admin", PASSWORD)
    trust.init_trust(db, ada, PASSWORD)
    admin = trust.personal_signer(db, "ada", PASSWORD)
    ci = PrivateKey.generate()
    with signing_as(admin):
        for name in ("carol", "dave"):
            so.add_user(db, name, "approver", PASSWORD, domains="medical")
        trust.register_key(db, admin, "service:ci", ci.public)
    write_key_file(folder / "ci.key", ci)
    golden = write_jsonl(folder / "golden.jsonl", [golden_row("m1", "heart attack", ["mi", "myocardial infarction"],
                                                              domain="medical")])
    generated = write_jsonl(folder / "gen.jsonl", [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]}])
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", db,
                                       "--drift-judge", "none", "--author", "erin", "--prompt-version", "v1", "-q"],
                                env={"TERMGATE_CI_KEY": str(folder / "ci.key")})
    if result.exit_code != 3:
        sys.exit(f"bench_signing: evaluate exited {result.exit_code}: {result.output}")
    run = store.get_run(db, store.list_runs(db)["run_id"].tolist()[0])
    signers = [trust.personal_signer(db, name, PASSWORD) for name in ("carol", "dave")]
    with connect(db, write=True) as con:
        con.execute("BEGIN TRANSACTION")
        seq = head_on(con)[0]
        for i in range(seq, records):
            signer = signers[i % 2]
            with signing_as(signer):
                append_on(con, {"created_at": "2026-12-03T12:00:00.000Z", "kind": "decision", "actor": signer.holder,
                                "run_id": run["run_id"], "content_hash": run["content_hash"],
                                # each reviewer's last decision approves: the run is releasable
                                "decision": "reject" if i % 3 == 0 and i < records - 2 else "approve",
                                "comment": f"decision {i}",
                                "payload": {"role": "approver", "gate": "review", "domains": ["medical"],
                                            "acknowledged": []}})
        con.execute("COMMIT")
    return run["run_id"]


def process(*args: str, env: dict | None = None) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "termgate", *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))
    wall = time.perf_counter() - start
    if "Traceback" in proc.stderr:
        sys.exit(f"bench_signing: termgate {' '.join(args[:2])}: {proc.stderr[-2000:]}")
    return wall, proc.returncode


def bench_chain(db: str, backend: str, run_id: str, folder: Path, repeat: int) -> None:
    from termgate.governance import attest, signatures
    from termgate.governance.audit_chain import _links, verify_chain
    from termgate.signing import verify_signature
    from termgate.store.chain import chain_snapshot
    from termgate.store.records import signing_message

    clear = signatures._CACHE.clear
    records = chain_snapshot(db, None).records
    n = len(records)
    authority = signatures.authority_of(records)
    signed = [r for r in records if authority.checks[r["seq"]].status == "signed" and r["kind"] != "trust_root"]
    public = {fp: info["public"] for fp, info in authority.keys.items()}
    read = median_time(lambda: chain_snapshot(db, None), repeat)
    links = median_time(lambda: _links(records), repeat)
    sigs = median_time(lambda: signatures.authority_of(records), repeat, clear)
    messages = median_time(lambda: [signing_message(r) for r in signed], repeat)
    pairs = [(public[r["payload"]["signature"]["key"]], signing_message(r), r["payload"]["signature"]["sig"])
             for r in signed]
    ed25519 = median_time(lambda: [verify_signature(*p) for p in pairs], repeat)
    no_rows = median_time(lambda: verify_chain(db, runs=None), repeat, clear)
    full = median_time(lambda: verify_chain(db, runs="all"), repeat, clear)
    print(f"bench_signing {backend:<10} audit verify, {n:,} records ({authority.signed:,} signed), in process, "
          f"medians of {repeat}:")
    print(f"bench_signing {backend:<10}   read the chain {read}   links and hashes {links}")
    print(f"bench_signing {backend:<10}   signatures (authority_of, cache emptied) {sigs}  [goal ≤ {GOAL:.0f} s]; "
          f"of which signing messages {messages}, Ed25519 checks {ed25519}")
    print(f"bench_signing {backend:<10}   verify_chain(runs=None) {no_rows}   verify_chain(runs='all') {full}   "
          f"run-row digests ≈ {full.wall - no_rows.wall:.2f} s (CPU {full.cpu - no_rows.cpu:.2f} s)")
    process("audit", "verify", "--db", db)
    wall, code = process("audit", "verify", "--db", db)
    print(f"bench_signing {backend:<10}   `termgate audit verify` as a process {wall:5.2f} s (exit {code})")
    out = folder / f"release-{backend}.intoto.json"
    out.unlink(missing_ok=True)
    envelope, summary, _ = attest.create_attestation(db, run_id)
    attest.write_attestation(out, envelope)
    root = summary["chain"]["trust_root"]
    inproc = median_time(lambda: attest.verify_attestation(out, root, ["medical"]), repeat, clear)
    process("attest", "verify", str(out), "--trust-root", root, "--require", "medical")
    wall, code = process("attest", "verify", str(out), "--trust-root", root, "--require", "medical")
    print(f"bench_signing {backend:<10} attest verify, {n:,} records, {out.stat().st_size / 1e6:.1f} MB file: "
          f"in process {inproc}, as a process {wall:5.2f} s (exit {code}; no store opened)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "termgate-bench-signing",
                        help="where the signed store is kept between runs (building it takes minutes)")
    parser.add_argument("--postgres", action="store_true", help="also on a PostgreSQL store (a private server)")
    args = parser.parse_args()
    bench_one_decision(args.n)
    folder = args.cache / f"signed-{args.records}"
    db = str(folder / "signed.duckdb")
    if not Path(db).exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        start = time.perf_counter()
        build_store(db, folder, args.records)
        print(f"bench_signing (the store of {args.records:,} records built in {time.perf_counter() - start:.0f} s, "
              f"kept in {folder})")
    os.environ["TERMGATE_CONFIG"] = str(folder / "none.toml")
    from termgate import store

    run_id = store.list_runs(db)["run_id"].tolist()[0]
    work = Path(tempfile.mkdtemp(prefix="bench_signing-"))
    try:
        copy = str(work / "signed.duckdb")
        shutil.copyfile(db, copy)
        bench_chain(copy, "DuckDB", run_id, work, args.repeat)
        if args.postgres:
            bench_postgres(copy, run_id, work, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def bench_postgres(source: str, run_id: str, work: Path, repeat: int) -> None:
    from pg_server import PostgresServer, binaries

    if binaries() is None:
        print("bench_signing PostgreSQL: skipped, the binaries are not installed (apt-get install postgresql)")
        return
    server = PostgresServer().start()
    try:
        url = server.url(server.create_database())
        wall, code = process("store", "copy", "--from", source, "--to", url)
        if code != 0:
            sys.exit(f"bench_signing: store copy to PostgreSQL exited {code}")
        bench_chain(url, "PostgreSQL", run_id, work, repeat)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
