"""``rnea-fleet analyse MANIFEST --out DIR``: ``main(argv) -> int``.

Exit status: 0 when every bag was analysed (``partial`` ones included), 2 when some
failed (listed on stderr and in the report), 1 for a usage error (bad manifest or
option) or an I/O error (``--out`` or its cache not writable, a full disk): one line.
The tables, ``summary.json`` and the report are stamped with the version and the
command line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rnea_ros import __version__
from rnea_ros.core.errors import RneaError
from rnea_ros.tools.fleet.cache import (
    FORMAT,
    Cache,
    bag_bytes,
    bag_identity,
    result_key,
    writable,
    write_atomic,
)
from rnea_ros.tools.fleet.drift import THRESHOLD, drift
from rnea_ros.tools.fleet.engines import default_workers, join_pools, run_dask, run_local
from rnea_ros.tools.fleet.manifest import FleetError, Manifest, load_manifest
from rnea_ros.tools.fleet.recordings import duplicates
from rnea_ros.tools.fleet.report import write_report
from rnea_ros.tools.fleet.tables import bag_rows, write_bags, write_drift
from rnea_ros.tools.fleet.task import Job
from rnea_ros.tools.provenance import command_line
from rnea_ros.tools.provenance import parser as cli_parser

PROG = "rnea-fleet"


def parser() -> argparse.ArgumentParser:
    p = cli_parser(PROG, "rnea-bag over a fleet's bags: tables, drift and a report "
                   "(docs/fleet.md)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND",
                           help="analyse: the only command")
    a = sub.add_parser("analyse", help="analyse the manifest's bags (new or changed ones)",
                       description="Analyse the manifest's new or changed bags; write the "
                       "tables, drift and report under --out.")
    a.add_argument("manifest", type=Path, help="YAML: robots: {NAME: {urdf: F, bags: GLOB}}; "
                   "paths relative to it")
    a.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="output directory (required; nothing is written outside it)")
    a.add_argument("--workers", type=int, metavar="N",
                   help=f"local worker processes (default: all cores, {default_workers()} "
                   "here)")
    a.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="a running Dask scheduler (default: none, the local pool)")
    a.add_argument("--since", metavar="DATE", help="tables, drift and report only for bags "
                   "starting on or after this UTC date, YYYY-MM-DD or ISO time (default: "
                   "all bags)")
    a.add_argument("--drift-threshold", type=float, default=THRESHOLD, metavar="RATE",
                   help="flag a joint whose residual RMS or fitted friction rises faster "
                   "than this, relative to its residual RMS, per day (default: %(default)s)")
    a.add_argument("--reports", action="store_true",
                   help="also write rnea-bag's report.md and plots per bag in "
                   "DIR/reports/ROBOT/ (default: off)")
    a.add_argument("--quiet", action="store_true",
                   help="no progress bar (default: a bar on a terminal)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; 0, 2 (some bags failed) or 1 (usage, or an I/O error: one line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    command = command_line(PROG, argv)
    try:
        since = _since(args.since)
        if args.workers is not None and args.workers < 1:
            raise FleetError(f"--workers {args.workers}: must be >= 1")
        if not args.drift_threshold > 0 or not math.isfinite(args.drift_threshold):
            raise FleetError(f"--drift-threshold {args.drift_threshold}: must be finite, > 0")
        manifest = load_manifest(args.manifest)
        for warning in manifest.warnings:
            print(f"{PROG}: warning: {warning}", file=sys.stderr)
        return analyse(manifest, args.out, workers=args.workers, scheduler=args.scheduler,
                       since=since, threshold=args.drift_threshold, reports=args.reports,
                       progress=not args.quiet, command=command)
    except RneaError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a read-only or full disk, a vanished folder, ...
        where = f"'{exc.filename}': " if exc.filename else ""
        print(f"{PROG}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1


def jobs_of(manifest: Manifest, out: Path, reports: bool) -> list[Job]:
    """One job per bag, keyed by content (see :mod:`~rnea_ros.tools.fleet.cache`), with
    its size in bytes."""
    jobs = []
    for robot in manifest.robots:
        loops = robot.options.get("loops")  # absolute: the manifest resolved it
        loop_file = (Path(loops) if loops and loops != "none" else
                     robot.urdf.with_name(f"{robot.urdf.stem}.loops.yaml"))
        files = {"urdf": robot.urdf, "drives": robot.drives, "loops": loop_file}
        for bag in robot.bags:
            identity = bag_identity(bag)
            key = result_key(robot.name, identity, files, robot.options)
            jobs.append(Job(robot.name, str(bag), str(robot.urdf), key,
                            str(robot.drives) if robot.drives else None, dict(robot.options),
                            str(out / "reports" / robot.name / key[:16]) if reports else None,
                            bag_bytes(identity)))
    return jobs


def analyse(manifest: Manifest, out: Path, *, workers: int | None = None,
            scheduler: str | None = None, since: float | None = None,
            threshold: float = THRESHOLD, reports: bool = False,
            progress: bool = True, command: str = PROG) -> int:
    """The whole run: cached results, the rest on the engine, tables, drift, report.

    ``command`` (the command line) and the version stamp the tables and the report. The
    local pool's workers exit while the tables are written; joined before returning."""
    try:
        return _analyse(manifest, out, workers=workers, scheduler=scheduler, since=since,
                        threshold=threshold, reports=reports, progress=progress,
                        command=command)
    finally:
        join_pools()


def _analyse(manifest: Manifest, out: Path, *, workers: int | None, scheduler: str | None,
             since: float | None, threshold: float, reports: bool, progress: bool,
             command: str) -> int:
    began = time.perf_counter()
    writable(out)
    cache = Cache(out)
    jobs = jobs_of(manifest, out, reports)
    results: dict[str, dict[str, Any]] = {}
    todo = []
    first: dict[str, Job] = {}
    for job in jobs:
        first.setdefault(job.key, job)
    for job in first.values():  # one task per content key (byte-identical copies)
        hit = cache.get(job.key)
        if hit is not None and (hit.get("report") is not None or not reports):
            results[job.key] = hit
        else:
            todo.append(job)
    # the largest bags first (stable: equal sizes in the manifest's order), so that no
    # long bag starts last while the other workers run out of work (the LPT rule)
    todo.sort(key=lambda job: -job.size)
    for warning in cache.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    cached = len(results)
    digest = _digest(jobs, since, threshold, reports)
    if not todo and _unchanged(out, digest):  # nothing new: the tables and report stand
        previous = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        previous.update(analysed=0, cached=cached, engine_seconds=0.0,
                        seconds=round(time.perf_counter() - began, 3))
        write_atomic(out / "summary.json", json.dumps(previous, indent=1).encode())
        _print(previous, out)
        return 2 if previous["failed"] else 0
    engine_began = time.perf_counter()
    engine = (run_dask(todo, scheduler) if scheduler else run_local(todo, workers))
    try:
        for result in _progress(engine, len(todo), progress):
            if not result.get("transient"):
                cache.put(result)  # at once: a killed run keeps what finished
            results[result["key"]] = result
    except (OSError, TimeoutError) as exc:  # the Dask scheduler cannot be reached
        if scheduler is None:
            raise
        print(f"{PROG}: error: --scheduler {scheduler}: {' '.join(str(exc).split())}",
              file=sys.stderr)
        return 1
    engine_seconds = time.perf_counter() - engine_began
    # a result per manifest entry, under the entry's own path: byte-identical copies of a
    # bag (one key, one task) are two entries, the copy listed as a duplicate
    ordered = [{**results[j.key], "bag": j.bag} for j in jobs]
    rows = duplicates(bag_rows(ordered))
    if since is not None:
        rows = [r for r in rows if not math.isfinite(r["start"]) or r["start"] >= since]
    trends = drift(rows, threshold)
    stamp = {"version": __version__, "command": command}
    write_bags(out / "bags.parquet", rows, stamp)
    write_drift(out / "drift.parquet", trends, stamp)
    bags = {(r["robot"], r["bag"]): r for r in rows}  # a bag may serve two robots
    failed = [r for r in bags.values() if r["status"] == "error"]
    summary = {
        "manifest": str(manifest.path.resolve()), **stamp,
        "bags": len(bags), "robots": len(manifest.robots), "analysed": len(todo),
        "cached": cached, "failed": len(failed),
        "partial": sum(r["status"] == "partial" for r in bags.values()),
        "flagged": sorted({f"{t['robot']}/{t['joint']}" for t in trends if t["flagged"]}),
        "failed_bags": [{"robot": r["robot"], "bag": r["bag"], "message": r["message"]}
                        for r in failed],
        "duplicates": [{"robot": r["robot"], "bag": r["bag"], "copy_of": r["duplicate_of"]}
                       for r in bags.values() if r["duplicate_of"]],
        "silent": [r.name for r in manifest.robots if not r.bags],
        "engine": scheduler or f"local:{workers or default_workers()}",
        "engine_seconds": round(engine_seconds, 3), "drift_threshold": threshold,
        "digest": digest if not any(r.get("transient") for r in ordered) else "",
    }
    write_report(out, rows, trends, summary, [r.name for r in manifest.robots])
    summary["seconds"] = round(time.perf_counter() - began, 3)
    write_atomic(out / "summary.json", json.dumps(summary, indent=1).encode())
    _print(summary, out)
    return 2 if failed else 0


def _print(summary: dict[str, Any], out: Path) -> None:
    for r in summary["failed_bags"]:
        print(f"{PROG}: failed: {r['robot']}: {r['bag']}: {r['message']}", file=sys.stderr)
    for r in summary.get("duplicates", []):
        print(f"{PROG}: duplicate: {r['robot']}: {r['bag']}: a copy of {r['copy_of']}",
              file=sys.stderr)
    print(f"{PROG}: {summary['bags']} bags: {summary['analysed']} analysed, "
          f"{summary['cached']} cached, {summary['failed']} failed, "
          f"{len(summary.get('duplicates', []))} duplicates; flagged: "
          f"{', '.join(summary['flagged']) or 'none'}; {out / 'report.html'}")


def _digest(jobs: Sequence[Job], since: float | None, threshold: float,
            reports: bool) -> str:
    """What the tables and the report were made of: the results' keys and the options."""
    text = json.dumps([sorted(j.key for j in jobs), since, threshold, reports, FORMAT,
                       __version__])
    return hashlib.sha256(text.encode()).hexdigest()


def _unchanged(out: Path, digest: str) -> bool:
    """The last run wrote its tables and report from the same results and options."""
    try:
        previous = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return previous.get("digest") == digest and all(
        (out / name).is_file() for name in ("bags.parquet", "drift.parquet", "report.html"))


def _progress(results: Iterator[dict[str, Any]], total: int, enabled: bool
              ) -> Iterator[dict[str, Any]]:
    """Pass the results through a tqdm bar (done/total, elapsed, :func:`eta`) on a
    terminal."""
    if not enabled or total == 0:
        yield from results
        return
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: the local pool forks this process
    first: float | None = None
    with tqdm(total=total, unit="bag", file=sys.stderr, disable=None, mininterval=0.5,
              bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {postfix}]",
              postfix="ETA after 2 bags") as bar:
        for result in results:
            now = time.perf_counter()
            first = now if first is None else first
            left = eta(bar.n + 1, total, first, now)
            bar.set_postfix_str("ETA " + ("?" if left is None else
                                          tqdm.format_interval(left)), refresh=False)
            bar.update(1)
            yield result


def eta(done: int, total: int, first: float, now: float) -> float | None:
    """Seconds left when ``done`` of ``total`` bags have finished, the first at time
    ``first`` [s], now ``now``: the rate of the bags finished *since the first*, so
    the engine's start-up (workers importing the package, loading the kernels), which
    delays the first bag, does not inflate it. ``None`` before a second bag."""
    if done < 2 or now <= first:
        return None
    return (total - done) * (now - first) / (done - 1)


def _since(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise FleetError(f"--since '{text}': expected a date YYYY-MM-DD or an ISO time"
                         ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.timestamp()


if __name__ == "__main__":
    raise SystemExit(main())
