#!/usr/bin/env python3
"""Python call sites end to end (collcheck.call_sites, collcheck.torch.record_call_sites and the
DDP comm hook's bucket names): a real two-rank mpirun job (python_sites_job.py) whose collectives
disagree in op or datatype, made from Python lines that differ by rank; every finding must
name each rank's own line, in the JSON report and in SARIF. With --torch the job goes through real
torch.distributed (exit 77 where torch cannot be imported)."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "python_sites_job.py")


def marked_lines(path):
    """Line numbers of the job's `# site: <name>` comments, and of `class Net`."""
    lines = {}
    with open(path) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"# site: (.+)$", text)
            if m:
                lines[m.group(1).strip()] = number
            if text.startswith("class Net"):
                lines["Net"] = number
    return lines


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "preload", "module", "mpirun", "work"):
        p.add_argument("--" + option, required=True)
    p.add_argument("--torch", action="store_true")
    args = p.parse_args()
    if args.torch:
        try:
            import torch.distributed  # noqa: F401
        except ImportError as e:
            print(f"skipped: torch cannot be imported by {sys.executable}: {e}")
            return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    traces = os.path.join(args.work, "traces")
    env = dict(os.environ, PYTHONPATH=args.module + os.pathsep + HERE, LD_PRELOAD=args.preload,
               COLLCHECK_OUTPUT=traces)
    command = args.mpirun.split() + ["-np", "2", sys.executable, JOB]
    if args.torch:
        command += ["--torch", "--store", args.work]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180,
                         stdin=subprocess.DEVNULL)
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    check(run.returncode == 0 and run.stdout.count("done") == 2,
          f"the job ran: exit {run.returncode}\n{run.stdout}\n{run.stderr[-2000:]}")
    if args.torch:
        check(run.stdout.count("replaced True") == 2, "torch.distributed's functions replaced")
    analyzed = subprocess.run([args.collcheck, "analyze", "--json", "-", "--quiet",
                               "--sarif", os.path.join(args.work, "report.sarif"), traces],
                              capture_output=True, text=True, cwd=HERE)
    check(analyzed.returncode == 1, f"analyze exits 1 with findings: {analyzed.returncode} "
          f"{analyzed.stderr}")
    report = json.loads(analyzed.stdout)
    lines = marked_lines(JOB)

    def finding(rule, text):
        found = [f for f in report["findings"] if f["rule"] == rule and text in f["message"]]
        check(len(found) == 1, f"one {rule} finding saying {text!r}: "
              f"{[(f['rule'], f['message']) for f in report['findings']]}")
        return {tuple(s["ranks"]): s for s in found[0]["call_sites"]} if found else {}

    def at(sites, ranks, line, function, name):
        site = sites.get(ranks, {})
        check(site.get("resolved") is True and site.get("file") == JOB and
              site.get("line") == line and site.get("function") == function,
              f"{name}: ranks {list(ranks)} at {os.path.basename(JOB)}:{line} in {function}: "
              f"{list(sites.values())}")

    # The program's wrapper: each rank's own line, not the wrapper's.
    sites = finding("reduce-op-mismatch", "op max on rank 1")
    check(len(sites) == 2, f"wrapper: a site per rank: {list(sites.values())}")
    for rank in (0, 1):
        at(sites, (rank,), lines[f"wrapper rank {rank}"], "main", "wrapper")
    if args.torch:
        # torch.distributed.all_reduce: the line that called it, not a line of torch.
        sites = finding("reduce-op-mismatch", "op min on rank 1")
        check(len(sites) == 2, f"torch: a site per rank: {list(sites.values())}")
        for rank in (0, 1):
            at(sites, (rank,), lines[f"torch rank {rank}"], "torch_part", "torch")
        # A DDP bucket's all-reduce: named as DDP's, at the model's class, on both ranks.
        sites = finding("datatype-mismatch", "float64 on rank 1")
        check(len(sites) == 1, f"ddp: one site for both ranks: {list(sites.values())}")
        at(sites, (0, 1), lines["Net"], "DistributedDataParallel bucket 0 (Net)", "ddp")
    # collcheck dump shows the source sites as lines of a source module.
    dumped = []
    for name in sorted(os.listdir(traces)):
        out = subprocess.run([args.collcheck, "dump", os.path.join(traces, name)],
                             capture_output=True, text=True, check=True).stdout
        dumped += [json.loads(line) for line in out.splitlines()[1:]]
    source_lines = {r["line"] for r in dumped if r["kind"] == "call_site" and "line" in r}
    check({lines["wrapper rank 0"], lines["wrapper rank 1"]} <= source_lines,
          f"dump: the wrapper's callers among the source lines {sorted(source_lines)}")
    check(any(r["kind"] == "module" and r.get("source") for r in dumped),
          "dump: a source module")
    # SARIF places the analyzer's findings on those lines, the path relative to the folder
    # analyze ran in.
    with open(os.path.join(args.work, "report.sarif")) as f:
        sarif = json.load(f)
    placed = {(loc["physicalLocation"]["artifactLocation"]["uri"],
               loc["physicalLocation"]["region"]["startLine"])
              for result in sarif["runs"][0]["results"]
              for loc in result.get("locations", []) if "physicalLocation" in loc}
    want = (os.path.basename(JOB), lines["wrapper rank 0"])
    check(want in placed, f"SARIF places a finding at {want}: {sorted(placed)}")
    print(f"{len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
