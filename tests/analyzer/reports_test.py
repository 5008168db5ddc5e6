#!/usr/bin/env python3
"""The command line and its reports on synthetic jobs: exit statuses, the text report, JSON against
docs/report-schema.json, SARIF against the 2.1.0 structure, the HTML report rendered in headless
Chromium (pixels of the highlighted mismatch), the Perfetto export, the progress bar, rules and
explain."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

FAILURES = []
# The participation rules these tests are about (the objective rules may add notes on windows).
PARTICIPATION = {"missing-participant", "kind-mismatch", "count-mismatch", "datatype-mismatch",
                 "reduce-op-mismatch", "premulsum-scalar-mismatch", "root-mismatch",
                 "collective-reorder", "send-recv-mismatch", "hang", "incomplete-trace"}
PASSED = [0]


def check(name, condition, detail=""):
    if condition:
        PASSED[0] += 1
        print(f"ok   {name}")
    else:
        FAILURES.append(name)
        print(f"FAIL {name} {detail}")


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


# The parts of SARIF 2.1.0 (OASIS, sarif-schema-2.1.0.json) a consumer needs, as a JSON schema.
SARIF_SCHEMA = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {
                    "driver": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"},
                        "version": {"type": "string"},
                        "rules": {"type": "array", "items": {
                            "type": "object", "required": ["id"],
                            "properties": {
                                "id": {"type": "string"},
                                "shortDescription": {"$ref": "#/definitions/message"},
                                "fullDescription": {"$ref": "#/definitions/message"},
                                "defaultConfiguration": {"type": "object", "properties": {
                                    "level": {"enum": ["none", "note", "warning", "error"]}}}}}}}}}},
                "artifacts": {"type": "array", "items": {"type": "object", "properties": {
                    "location": {"type": "object", "properties": {"uri": {"type": "string"}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": 0},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": {"$ref": "#/definitions/message"},
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "required": ["artifactLocation"]},
                            "logicalLocations": {"type": "array", "items": {
                                "type": "object", "properties": {"name": {"type": "string"},
                                                                 "kind": {"type": "string"}}}}}}},
                        "partialFingerprints": {"type": "object",
                                                "additionalProperties": {"type": "string"}},
                        "properties": {"type": "object"}}}}}}}},
    "definitions": {"message": {"type": "object", "required": ["text"],
                                "properties": {"text": {"type": "string"}}}},
}


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "fixture", "schema", "work"):
        p.add_argument("--" + option, required=True)
    args = p.parse_args()
    import jsonschema
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    jobs = {}
    for scenario in ("clean", "mismatch", "hang"):
        jobs[scenario] = os.path.join(args.work, scenario)
        subprocess.run([args.fixture, scenario, jobs[scenario]], check=True)
    cc = args.collcheck

    # Exit statuses and the text report.
    out = run([cc, "analyze", jobs["clean"]])
    check("clean job exits 0", out.returncode == 0, out.stdout + out.stderr)
    check("clean summary line", "no findings" in out.stdout and "\033[" not in out.stdout,
          out.stdout)
    out = run([cc, "analyze", jobs["mismatch"]])
    check("findings exit 1", out.returncode == 1, out.stderr)
    check("text is compiler style",
          "world seq 81 (window 40): error: broadcast" in out.stdout
          and "[missing-participant]" in out.stdout, out.stdout)
    check("repeats grouped", "repeated 100 times, seq 0 to 198, windows 0 to 99" in out.stdout,
          out.stdout)
    check("one-line summary", out.stdout.strip().splitlines()[-1].startswith("collcheck: 4 ranks"),
          out.stdout)
    out = run([cc, "analyze", "--color=always", jobs["mismatch"]])
    check("color when asked", "\033[1;31merror\033[0m" in out.stdout)
    out = run([cc, "analyze", "--fail-on", "never", jobs["mismatch"]])
    check("--fail-on never exits 0", out.returncode == 0)
    out = run([cc, "analyze", "--fail-on", "bogus", jobs["mismatch"]])
    check("bad option exits 2", out.returncode == 2)
    empty = os.path.join(args.work, "empty")
    os.makedirs(empty)
    out = run([cc, "analyze", empty])
    check("folder without traces exits 2 naming it", out.returncode == 2 and empty in out.stderr,
          out.stderr)
    foreign = os.path.join(args.work, "foreign")
    shutil.copytree(jobs["clean"], foreign)
    with open(os.path.join(foreign, "rank2.cctrace"), "r+b") as f:
        f.write(b"JUNKJUNK")
    out = run([cc, "analyze", foreign])
    check("unreadable file exits 2 naming file and reason",
          out.returncode == 2 and "rank2.cctrace: not a collcheck trace (bad magic)" in out.stderr,
          out.stderr)
    check("unreadable file: the others are still analyzed", "no trace file for rank 2" in out.stdout,
          out.stdout)
    # The file is named once: as the location of the report's line, and once on stderr.
    bad = os.path.join(foreign, "rank2.cctrace")
    check("unreadable file named once in the report",
          f"{bad}: warning: not a collcheck trace (bad magic)" in out.stdout
          and out.stdout.count(bad) == 1, out.stdout)
    check("unreadable file named once on stderr", out.stderr.count(bad) == 1, out.stderr)

    # A report that cannot be written (here: a full device) is an error, not a clean run.
    if os.path.exists("/dev/full"):
        for command in (["analyze", jobs["clean"]], ["analyze", "--json", "-", jobs["clean"]],
                        ["rules"]):
            with open("/dev/full", "w") as full:
                failed = subprocess.run([cc] + command, stdout=full, stderr=subprocess.PIPE,
                                        text=True, timeout=120)
            check(f"stdout on a full device: {' '.join(command[:2])} exits 2 and says so",
                  failed.returncode == 2 and "cannot write the output" in failed.stderr,
                  f"exit {failed.returncode}: {failed.stderr}")

    # JSON against the documented schema.
    with open(args.schema) as f:
        schema = json.load(f)
    for scenario, path in jobs.items():
        out = run([cc, "analyze", "--json", "-", "--quiet", path])
        try:
            report = json.loads(out.stdout)
            jsonschema.validate(report, schema)
            check(f"json {scenario} matches the schema", True)
        except (ValueError, jsonschema.ValidationError) as e:
            check(f"json {scenario} matches the schema", False, str(e)[:500])
            continue
        if scenario == "mismatch":
            rules = sorted(f["rule"] for f in report["findings"] if f["rule"] in PARTICIPATION)
            check("json findings", rules == ["collective-reorder", "count-mismatch",
                                             "missing-participant"], rules)
    out = run([cc, "analyze", "--json", jobs["clean"]])
    check("--json DIR reports DIR on stdout",
          out.returncode == 0 and json.loads(out.stdout)["summary"]["findings"] == 0
          and "no findings" in out.stderr, out.stderr)
    invalid = dict(report, findings=[{"rule": "x"}])
    try:
        jsonschema.validate(invalid, schema)
        check("schema rejects a malformed finding", False)
    except jsonschema.ValidationError:
        check("schema rejects a malformed finding", True)

    # SARIF 2.1.0.
    sarif_path = os.path.join(args.work, "mismatch.sarif")
    out = run([cc, "analyze", "--sarif", sarif_path, "--quiet", jobs["mismatch"]])
    with open(sarif_path) as f:
        sarif = json.load(f)
    try:
        jsonschema.validate(sarif, SARIF_SCHEMA)
        check("sarif structure", True)
    except jsonschema.ValidationError as e:
        check("sarif structure", False, str(e)[:500])
    driver = sarif["runs"][0]["tool"]["driver"]
    ids = [r["id"] for r in driver["rules"]]
    results = sarif["runs"][0]["results"]
    check("sarif rule ids are the catalogue's",
          all(ids[r["ruleIndex"]] == r["ruleId"] for r in results) and "missing-participant" in ids)
    check("sarif results", sorted(r["ruleId"] for r in results if r["ruleId"] in PARTICIPATION)
          == ["collective-reorder", "count-mismatch", "missing-participant"])
    check("sarif locations name a trace file",
          all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".cctrace")
              for r in results if r["ruleId"] in PARTICIPATION))

    # HTML in headless Chromium: the mismatch cells are drawn red where the person looks.
    html_path = os.path.join(args.work, "mismatch.html")
    run([cc, "analyze", "--html", html_path, "--quiet", jobs["mismatch"]])
    with open(html_path) as f:
        html = f.read()
    check("html is self-contained", "<script" not in html and "http" not in html.replace(
        "http://www.w3.org/2000/svg", ""))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        check("chromium installed (scripts/setup)", False)
    else:
        from PIL import Image
        for scenario, expect_red in (("mismatch", True), ("clean", False)):
            page = html_path if scenario == "mismatch" else os.path.join(args.work, "clean.html")
            if scenario == "clean":
                run([cc, "analyze", "--html", page, "--quiet", jobs["clean"]])
            shot = os.path.join(args.work, f"{scenario}.png")
            profile = tempfile.mkdtemp(prefix="collcheck-chromium-")
            out = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                       "--disable-background-networking", "--disable-component-update",
                       "--disable-sync", f"--user-data-dir={profile}", f"--screenshot={shot}",
                       "--window-size=1400,1000", "--hide-scrollbars", "file://" + page])
            shutil.rmtree(profile, ignore_errors=True)
            if not os.path.exists(shot):
                check(f"chromium rendered {scenario}", False, out.stderr[-800:])
                continue
            image = Image.open(shot).convert("RGB")
            pixels = image.getdata()
            red = sum(1 for px in pixels if abs(px[0] - 0xd6) < 12 and abs(px[1] - 0x27) < 12
                      and abs(px[2] - 0x28) < 12)
            purple = sum(1 for px in pixels if abs(px[0] - 0x7b) < 12 and abs(px[1] - 0x1f) < 12
                         and abs(px[2] - 0xa2) < 12)
            green = sum(1 for px in pixels if abs(px[0] - 0xb7) < 8 and abs(px[1] - 0xe1) < 8
                        and abs(px[2] - 0xb5) < 8)
            if expect_red:
                check("html: mismatch cells rendered red", red > 200, f"{red} red pixels")
                check("html: missing participant rendered purple", purple > 50,
                      f"{purple} purple pixels")
                check("html: matched cells rendered green", green > 500, f"{green} green pixels")
            else:
                check("html: a clean job shows no red", red < 50, f"{red} red pixels")

    # Perfetto (Chrome trace JSON).
    trace_path = os.path.join(args.work, "hang.perfetto.json")
    out = run([cc, "analyze", "--perfetto", trace_path, "--quiet", jobs["hang"]])
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    check("perfetto: one slice per call", len(slices) == 4 * 10 + 3, len(slices))
    check("perfetto: every slice has ts, dur, pid, tid",
          all(isinstance(e["ts"], (int, float)) and e["dur"] > 0 and "pid" in e and "tid" in e
              for e in slices))
    check("perfetto: stuck calls are marked",
          sum(1 for e in slices if e["name"] == "barrier (did not return)") == 3)
    check("perfetto: findings are instant events",
          any(e["ph"] == "i" and e["name"] == "hang" for e in events))
    check("perfetto: ranks are named processes",
          sum(1 for e in events if e["ph"] == "M" and e["name"] == "process_name") == 4)

    # Progress bar: silent when stderr is not a terminal, drawn when forced.
    out = run([cc, "analyze", jobs["mismatch"]], env={"COLLCHECK_PROGRESS_DELAY_MS": "0"})
    check("progress silent off a terminal", "merging" not in out.stderr, out.stderr)
    out = run([cc, "analyze", "--progress=always", jobs["mismatch"]],
              env={"COLLCHECK_PROGRESS_DELAY_MS": "0"})
    check("progress drawn when forced", "collcheck: merging [" in out.stderr and "records/s"
          in out.stderr, out.stderr)

    # Catalogue.
    out = run([cc, "rules"])
    check("rules lists the catalogue", out.returncode == 0 and "missing-participant" in out.stdout
          and "collective-reorder" in out.stdout)
    out = run([cc, "explain", "hang"])
    check("explain prints the page", out.returncode == 0 and "## Rationale" in out.stdout
          and "## Fix" in out.stdout)
    out = run([cc, "explain", "collcheck-uncompensated-mean"])
    check("explain takes the name clang-tidy prints", out.returncode == 0
          and "## Rationale" in out.stdout, out.stderr)
    out = run([cc, "explain", "no-such-rule"])
    check("explain of an unknown rule exits 2", out.returncode == 2)
    out = run([cc, "--version"])
    check("--version", out.returncode == 0 and out.stdout.startswith("collcheck "))

    print(f"{PASSED[0]} passed, {len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
