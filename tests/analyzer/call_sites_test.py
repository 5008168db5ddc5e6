#!/usr/bin/env python3
"""Call sites end to end: a real MPI job run through `collcheck run`, whose findings must name the
source line where each rank made the call, in the text, JSON, HTML and SARIF reports; then a
stripped copy of the program, whose sites are shown as module+offset with the command that
resolves them (and that command, run, must name the same line), and resolve again with
--debug-dir pointing at the separate debug file."""
import argparse
import json
import os
import shutil
import subprocess
import sys

RANKS = 3
SKIP = 77


def marker_lines(source):
    lines = {}
    with open(source) as f:
        for number, text in enumerate(f, 1):
            if "/* SITE:" in text:
                lines[text.split("/* SITE:")[1].split()[0]] = number
    return lines


def run_job(args, program, trace_dir):
    shutil.rmtree(trace_dir, ignore_errors=True)
    command = [args.collcheck, "run", "-o", trace_dir, "--preload", args.preload, "--"]
    command += args.mpirun.split() + ["-np", str(RANKS), program]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise AssertionError(f"the job failed ({out.returncode}): {out.stderr}")


def analyze(args, trace_dir, *extra, cwd=None):
    out = subprocess.run([args.collcheck, "analyze", *extra, trace_dir], capture_output=True,
                         text=True, timeout=120, cwd=cwd)
    if out.returncode not in (0, 1):
        raise AssertionError(f"analyze failed ({out.returncode}): {out.stderr}")
    return out.stdout


def finding(report, rule):
    found = [f for f in report["findings"] if f["rule"] == rule]
    if len(found) != 1:
        raise AssertionError(f"expected one {rule} finding, got {[f['rule'] for f in report['findings']]}")
    return found[0]


def sites_of(f):
    return {tuple(s["ranks"]): s for s in f["call_sites"]}


def resolves_to(site, program, where):
    """Runs the hint's addr2line command on `program` and says whether it names `where`."""
    command = site["hint"].split("`")[1].split()
    command[command.index("-e") + 1] = program
    return where in subprocess.run(command, capture_output=True, text=True).stdout


def check_without_libdw(args, report, lines, source_name):
    """An analyzer built without libdw: every site is module+offset, and the hint resolves it."""
    failures = []
    for f in report["findings"]:
        for site in f["call_sites"]:
            if site["resolved"] or not site["text"].startswith(args.program + "+0x"):
                failures.append(f"unresolved, as module+offset: {site}")
            elif "without libdw" not in (site["hint"] or ""):
                failures.append(f"the hint says why: {site}")
    site = finding(report, "reduce-op-mismatch")["call_sites"][0]
    if shutil.which("addr2line") and not resolves_to(site, args.program,
                                                     f"{source_name}:{lines['wrapper']}"):
        failures.append(f"the hint's command names the wrapper's line: {site['hint']}")
    for failure in failures:
        print("FAIL:", failure, file=sys.stderr)
    print("call sites (built without libdw):", "FAILED" if failures else "ok")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "preload", "program", "source", "source-root", "mpirun", "work"):
        p.add_argument("--" + option, required=True)
    args = p.parse_args()
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)
            print("FAIL:", what, file=sys.stderr)

    lines = marker_lines(args.source)
    source_name = os.path.basename(args.source)
    relative = os.path.relpath(args.source, args.source_root)
    os.makedirs(args.work, exist_ok=True)

    # 1. The program as built, with its debug information.
    traces = os.path.join(args.work, "debug")
    run_job(args, args.program, traces)
    report = json.loads(analyze(args, traces, "--json", "-", "--quiet"))
    if any("without libdw" in n for n in report["summary"]["call_site_notes"]):
        return check_without_libdw(args, report, lines, source_name)
    op = finding(report, "reduce-op-mismatch")
    sites = sites_of(op)
    everyone = tuple(range(RANKS))
    check(list(sites) == [everyone], f"reduce-op-mismatch: one site for every rank, got {list(sites)}")
    wrapper = sites.get(everyone, {})
    check(wrapper.get("resolved") is True, f"the wrapper's site is resolved: {wrapper}")
    recorded = str(wrapper.get("file", ""))
    check(recorded.endswith("/" + relative) and wrapper.get("line") == lines["wrapper"],
          f"reduce-op-mismatch names {relative}:{lines['wrapper']}: {wrapper}")
    # The source as the debug information names it: this tree's, or that of another checkout
    # whose object a shared compiler cache handed to this build (the same file, another folder).
    recorded_root = recorded[:-len(relative)].rstrip("/") or args.source_root
    check(wrapper.get("function") == "reduce_flags", f"in reduce_flags: {wrapper}")
    # Built with frame pointers: the wrapper's caller is named too.
    caller = wrapper.get("from") or {}
    check(caller.get("line") == lines["caller"] and caller.get("function") == "agree_on_rank",
          f"reduce-op-mismatch: called from agree_on_rank at line {lines['caller']}: {wrapper}")

    # One wrapper line, reached from a line of its own on each side: the report tells them apart.
    dtype = finding(report, "datatype-mismatch")
    sites = sites_of(dtype)
    for ranks, line in (((0,), lines["first"]), (tuple(range(1, RANKS)), lines["others"])):
        site = sites.get(ranks, {})
        check(site.get("line") == lines["typed"] and (site.get("from") or {}).get("line") == line,
              f"datatype-mismatch: ranks {ranks} in sum_one at line {lines['typed']}, from line "
              f"{line}: {dtype['call_sites']}")

    text = analyze(args, traces, "--color", "never")
    # Two ranks are named one by one, three or more as a run ("ranks 1, 2", "ranks 1-3").
    expected = (f"called at: ranks 1, 2: {recorded}:{lines['typed']} (sum_one), from "
                f"{recorded}:{lines['others']} (main)")
    check(expected in text, f"the text report says `{expected}`:\n{text}")

    html = analyze(args, traces, "--html", "-", "--quiet")
    check(f"{source_name}:{lines['wrapper']} (reduce_flags)" in html, "the HTML report names the line")

    # SARIF from the source root: the location is repository-relative.
    sarif = json.loads(analyze(args, traces, "--sarif", "-", "--quiet", cwd=recorded_root))
    results = {r["ruleId"]: r for r in sarif["runs"][0]["results"]}
    located = results["datatype-mismatch"]["locations"][0]["physicalLocation"]
    check(located["artifactLocation"] == {"uri": relative, "uriBaseId": "%SRCROOT%"} and
          located["region"]["startLine"] == lines["typed"],
          f"SARIF physicalLocation {relative}:{lines['typed']}: {located}")
    # Each group's call, then the line that called the wrapper.
    related = results["datatype-mismatch"].get("relatedLocations", [])
    check([r["physicalLocation"]["region"]["startLine"] for r in related] ==
          [lines["typed"], lines["first"], lines["typed"], lines["others"]],
          f"SARIF relatedLocations: {related}")

    # From a folder the source is not under: an absolute file URI.
    sarif = json.loads(analyze(args, os.path.abspath(traces), "--sarif", "-", "--quiet",
                               cwd=args.work))
    located = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    check(located["artifactLocation"].get("uri", "").startswith("file:///") and
          "uriBaseId" not in located["artifactLocation"],
          f"SARIF from outside the source: an absolute URI: {located}")

    # The table as collcheck dump shows it: every call names a site the file's table holds.
    trace = sorted(os.listdir(traces))[0]
    dump = [json.loads(line) for line in subprocess.run(
        [args.collcheck, "dump", os.path.join(traces, trace)], capture_output=True, text=True,
        check=True).stdout.splitlines()[1:]]
    table = {r["site"] for r in dump if r["kind"] == "call_site"}
    calls = [r for r in dump if r["kind"] == "allreduce"]
    check(calls and all(r.get("site") in table for r in calls),
          f"dump: every call's site is in the table {table}: {[r.get('site') for r in calls]}")
    check(any(r["kind"] == "module" for r in dump), "dump: the module map is there")

    # The same traces as a version 2 writer would have left them: no call sites, and the report
    # says why.
    old = os.path.join(args.work, "version2")
    shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(traces, old)
    for name in os.listdir(old):
        with open(os.path.join(old, name), "r+b") as f:
            f.seek(8)
            f.write((2).to_bytes(4, "little"))
    report = json.loads(analyze(args, old, "--json", "-", "--quiet"))
    check(all(f["call_sites"] == [] for f in report["findings"]), "version 2: no call sites")
    check(any("before call sites were recorded" in n
              for n in report["summary"]["call_site_notes"]),
          f"version 2: the report says so: {report['summary']['call_site_notes']}")

    # 2. A stripped copy: module+offset and the hint, and the hint's command names the line.
    strip = shutil.which("strip")
    objcopy = shutil.which("objcopy")
    addr2line = shutil.which("addr2line")
    if not (strip and objcopy and addr2line):
        print("strip, objcopy or addr2line missing: the stripped case is not checked")
        return SKIP if not failures else 1
    stripped = os.path.join(args.work, "wrapper_bug_stripped")
    shutil.copy(args.program, stripped)
    subprocess.run([strip, "--strip-all", stripped], check=True)
    traces = os.path.join(args.work, "stripped")
    run_job(args, stripped, traces)
    report = json.loads(analyze(args, traces, "--json", "-", "--quiet"))
    site = finding(report, "reduce-op-mismatch")["call_sites"][0]
    check(site["resolved"] is False and site["module"] == stripped,
          f"the stripped binary's site is not resolved, named by module: {site}")
    check(site["text"].startswith(stripped + "+0x"), f"shown as module+offset: {site['text']}")
    check("addr2line" in (site["hint"] or "") and "--debug-dir" in (site["hint"] or ""),
          f"the hint names addr2line and --debug-dir: {site['hint']}")
    text = analyze(args, traces, "--color", "never")
    check(f"{stripped}+0x" in text and "hint: " in text, f"the text report gives the hint:\n{text}")
    # The hint's command, on the program with its debug information, names the wrapper's line.
    check(resolves_to(site, args.program, f"{source_name}:{lines['wrapper']}"),
          f"the hint's command names line {lines['wrapper']}: {site['hint']}")

    # 3. --debug-dir with the separate debug file, found by build id.
    debug_dir = os.path.join(args.work, "debug-files")
    shutil.rmtree(debug_dir, ignore_errors=True)
    build_id = subprocess.run(["readelf", "-n", args.program], capture_output=True,
                              text=True).stdout.split("Build ID:")[1].split()[0]
    target = os.path.join(debug_dir, ".build-id", build_id[:2], build_id[2:] + ".debug")
    os.makedirs(os.path.dirname(target))
    subprocess.run([objcopy, "--only-keep-debug", args.program, target], check=True)
    report = json.loads(analyze(args, traces, "--json", "-", "--quiet", "--debug-dir", debug_dir))
    site = finding(report, "reduce-op-mismatch")["call_sites"][0]
    check(site["resolved"] is True and site["line"] == lines["wrapper"],
          f"with --debug-dir the stripped binary's site resolves: {site}")

    print("call sites:", "FAILED" if failures else "ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
