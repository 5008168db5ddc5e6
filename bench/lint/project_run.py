#!/usr/bin/env python3
"""Whole-project runs of collcheck-lint: summaries of every translation unit, then the checks.

For a compilation database it times, on the files given (default: every source file it lists):

  syntax   clang-19 -fsyntax-only of each file, one after the other (the reference; each twice,
           the faster kept, so that headers are read from the page cache as in the runs below)
  alone    collcheck-lint --no-summaries FILES    (each file on its own, no summaries)
  cold     collcheck-lint FILES with an empty summary cache
  warm     the same again: every summary comes from the cache
  review   collcheck-lint ONE_FILE with a warm cache (a review run over one changed file),
           beside clang-19 -fsyntax-only of that file

and records the findings of `alone` and `cold` (what the summaries add or remove).

  project_run.py -p BUILD --lint build/bin/collcheck-lint [--files list.txt] [--json out.json]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_code  # noqa: E402  (its database reading and syntax-only command)


def timed(cmd, cwd, timeout):
    start = time.monotonic()
    p = subprocess.run(["nice", "-n", "10"] + cmd, cwd=cwd, capture_output=True, text=True,
                       errors="replace", timeout=timeout)
    return p, time.monotonic() - start


def findings_of(out):
    found = []
    for line in out.splitlines():
        m = real_code.FINDING.match(line)
        if m and m["rule"] != "clang-diagnostic-error":
            found.append(f'{os.path.basename(m["file"])}:{m["line"]} {m["level"]} {m["rule"]}')
    return sorted(set(found))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-p", dest="build", required=True)
    ap.add_argument("--lint", required=True)
    ap.add_argument("--files", help="file listing the TUs to check (one path a line)")
    ap.add_argument("--review-file", help="the file of the review run (default: the first)")
    ap.add_argument("--json")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--cuda-path", default="/usr/local/cuda")
    ap.add_argument("--extra", action="append", default=[], help="extra option for the lint")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = {}
        for e in json.load(f):
            path = os.path.normpath(os.path.join(e["directory"], e["file"]))
            entries.setdefault(path, e)
    files = list(entries)
    if args.files:
        with open(args.files) as f:
            wanted = [os.path.normpath(l.strip()) for l in f if l.strip()]
        files = [p for p in wanted if p in entries]
    review = os.path.normpath(args.review_file) if args.review_file else files[0]
    lint = [os.path.abspath(args.lint), "-p", build, "--allow-compile-errors"] + args.extra

    # Twice, the faster kept: the first pass also reads the headers into the page cache.
    syntax = 0.0
    review_syntax = 0.0
    for path in files:
        cmd = real_code.syntax_only_args(entries[path], args.cuda_path) + [path]
        s = min(timed(cmd, entries[path]["directory"], args.timeout)[1] for _ in range(2))
        syntax += s
        if path == review:
            review_syntax = s

    cache = tempfile.mkdtemp(prefix="collcheck-lint-cache-")
    try:
        alone, t_alone = timed(lint + ["--no-summaries"] + files, build, args.timeout)
        cold, t_cold = timed(lint + ["--summary-cache", cache] + files, build, args.timeout)
        warm, t_warm = timed(lint + ["--summary-cache", cache] + files, build, args.timeout)
        one, t_review = timed(lint + ["--summary-cache", cache, review], build, args.timeout)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    before, after = findings_of(alone.stdout), findings_of(cold.stdout)
    result = {
        "build": build, "files": len(files), "review_file": review,
        "seconds": {"syntax": round(syntax, 1), "alone": round(t_alone, 1),
                    "cold": round(t_cold, 1), "warm": round(t_warm, 1),
                    "review": round(t_review, 2), "review_syntax": round(review_syntax, 2)},
        "ratios": {"cold/syntax": round(t_cold / syntax, 2), "warm/syntax": round(t_warm / syntax, 2),
                   "review/syntax": round(t_review / review_syntax, 2) if review_syntax else None},
        "summary_line": [l for l in cold.stderr.splitlines() if "summarised" in l],
        "warm_line": [l for l in warm.stderr.splitlines() if "summarised" in l],
        "findings_alone": before, "findings_with_summaries": after,
        "added": sorted(set(after) - set(before)), "removed": sorted(set(before) - set(after)),
        "exit": {"alone": alone.returncode, "cold": cold.returncode},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
