#!/usr/bin/env python3
"""Run collcheck-lint over every translation unit of a real project and measure it.

For each entry of a compile_commands.json (or only the files listed with --files) it runs
`collcheck-lint -p DIR FILE` with the project's own compile command, then `clang-19 -fsyntax-only`
with the same flags (translated as the lint translates them), and records per TU: exit status,
the signal that killed the lint if any, parse errors, findings per rule, both wall times and
their ratio. It prints a text table and writes the records and a summary as JSON.

  real_code.py -p /path/build --lint build/bin/collcheck-lint --json out.json [--files list.txt]

Each TU runs alone (one process at a time, under `nice`) with a time limit, so the machine stays
usable and one hanging TU does not stop the run.
"""

import argparse
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time

FINDING = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): "
                     r"(?P<level>warning|error): (?P<msg>.*) \[(?P<rule>[\w.-]+)\]$")
# The lint reports the places where the code does not compile either as a note or, with a
# clang-tidy-like gate, as an error tagged clang-diagnostic-error.
LINT_PARSE_ERROR = re.compile(r"(does not compile here|\[clang-diagnostic-error\])")
CLANG_ERROR = re.compile(r"^[^:\n]+:\d+:\d+: (fatal )?error: ", re.M)
HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_COMPAT = os.path.join(HERE, "..", "..", "lint", "cuda", "compat")


def command_args(entry):
    if "arguments" in entry:
        return list(entry["arguments"])
    return shlex.split(entry["command"])


def is_cuda(args, path):
    return path.endswith((".cu", ".cuh")) or any(
        a == "-x" and b == "cuda" for a, b in zip(args, args[1:]))


# nvcc's own spellings, as CMake writes them (clang would read `-isystem=DIR` as a path "=DIR").
NVCC_SPELLINGS = (("-isystem=", "-isystem"), ("--system-include=", "-isystem"), ("-I=", "-I"),
                  ("--include-path=", "-I"), ("-D=", "-D"), ("--define-macro=", "-D"))


def nvcc_spelling(a):
    for nv, flag in NVCC_SPELLINGS:
        if a.startswith(nv):
            return [flag, a[len(nv):]] if flag == "-isystem" else [flag + a[len(nv):]]
    return None


def from_nvcc(args, path):
    """Keep what matters to parse host code, as lint/tool/CompileCommands.cpp does."""
    out, i = [], 1
    with_value = {"-I", "-isystem", "-D", "-U", "-include"}
    skipped = {"-o", "-x", "-ccbin", "-Xcompiler", "--compiler-options", "-arch", "-gencode",
               "-MF", "-MT"}
    while i < len(args):
        a = args[i]
        spelled = nvcc_spelling(a)
        if spelled:
            out += spelled
        elif a in with_value and i + 1 < len(args):
            out += [a, args[i + 1]]
            i += 1
        elif a.startswith(("-I", "-D", "-U", "-isystem", "-std=")):
            out.append(a)
        elif a in ("-std", "--std") and i + 1 < len(args):
            out.append("-std=" + args[i + 1])
            i += 1
        elif a.startswith("--std="):
            out.append(a[1:])
        elif a in skipped:
            i += 1
        elif a == path or os.path.basename(a) == os.path.basename(path):
            out.append(a)
        i += 1
    return out


def syntax_only_args(entry, cuda_path):
    """The entry's compile command as a clang-19 -fsyntax-only run of the same translation unit."""
    args = command_args(entry)
    path = entry["file"]
    if "nvcc" in os.path.basename(args[0]):
        rest = from_nvcc(args, path)
    else:
        rest, i = [], 1
        while i < len(args):
            a = args[i]
            if a in ("-o", "-MF", "-MT", "-MQ"):
                i += 2
                continue
            if a not in ("-c", "-MD", "-MMD") and not a.startswith(("-o", "-MF")):
                rest.append(a)
            i += 1
    front = ["clang-19" if not args[0].endswith("++") and path.endswith(".c") else "clang++-19"]
    if is_cuda(args, path):
        front += ["--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version",
                  "--cuda-path=" + cuda_path]
        cccl = os.path.join(cuda_path, "include", "cccl")
        if os.path.isdir(cccl):
            front += ["-isystem", cccl]
        front += ["-isystem", CUDA_COMPAT]
        compat_h = os.path.join(CUDA_COMPAT, "collcheck_cuda_compat.h")
        if os.path.exists(compat_h):  # the lint's CUDA compatibility pre-include, where it has one
            front += ["-include", compat_h]
    return front + rest + ["-fsyntax-only", "-ferror-limit=0", "-w", "-fno-caret-diagnostics"]


def run(cmd, cwd, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(["nice", "-n", "10"] + cmd, cwd=cwd, capture_output=True, text=True,
                           errors="replace", timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start, False
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, "", time.monotonic() - start, True


def lint_tu(entry, build_dir, lint, timeout, extra):
    rc, out, err, wall, timed_out = run([lint, "-p", build_dir, "--quiet"] + extra +
                                        [entry["file"]], entry["directory"], timeout)
    # nice exits with the child's status; a child killed by a signal shows as 128+N there.
    sig = None
    if rc is not None and rc < 0:
        sig = -rc
    elif rc is not None and rc > 128:
        sig = rc - 128
    findings = []
    for line in out.splitlines():
        m = FINDING.match(line)
        if m and m["rule"] != "clang-diagnostic-error":
            findings.append({k: m[k] for k in ("file", "line", "col", "level", "rule", "msg")})
    return {
        "rc": rc, "signal": signal.Signals(sig).name if sig else None, "timed_out": timed_out,
        "lint_parse_errors": len(LINT_PARSE_ERROR.findall(out + err)),
        "findings": findings, "lint_s": round(wall, 3),
        "stderr_tail": err[-2000:] if (sig or timed_out) else "",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-p", dest="build", required=True, help="directory of compile_commands.json")
    ap.add_argument("--lint", required=True, help="collcheck-lint binary")
    ap.add_argument("--files", help="file listing the TUs to run (one path a line); default all")
    ap.add_argument("--json", help="write the records and the summary here")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per TU and per tool")
    ap.add_argument("--cuda-path", default="/usr/local/cuda")
    ap.add_argument("--no-syntax", action="store_true", help="skip the clang-19 -fsyntax-only run")
    ap.add_argument("--extra", action="append", default=[], help="extra option for the lint")
    opt = ap.parse_args()

    build = os.path.abspath(opt.build)
    with open(os.path.join(build, "compile_commands.json")) as f:
        db = json.load(f)
    for e in db:
        e["file"] = os.path.normpath(os.path.join(e["directory"], e["file"]))
    if opt.files:
        with open(opt.files) as f:
            wanted = {os.path.abspath(l.strip()) for l in f if l.strip()}
        db = [e for e in db if e["file"] in wanted]
    seen, tus = set(), []
    for e in db:  # a file compiled twice (two targets) is linted once, with its first command
        if e["file"] not in seen:
            seen.add(e["file"])
            tus.append(e)
    if not tus:
        sys.exit("real_code.py: no translation unit to run")

    lint = os.path.abspath(opt.lint)
    records = []
    for n, e in enumerate(tus, 1):
        r = {"file": e["file"]}
        r.update(lint_tu(e, build, lint, opt.timeout, opt.extra))
        if not opt.no_syntax:
            rc, out, err, wall, timed_out = run(syntax_only_args(e, opt.cuda_path), e["directory"],
                                                opt.timeout)
            r["syntax_s"] = round(wall, 3)
            r["syntax_errors"] = len(CLANG_ERROR.findall(out + err))
            r["syntax_timed_out"] = timed_out
            r["ratio"] = round(r["lint_s"] / wall, 3) if wall > 0 and not timed_out else None
        records.append(r)
        state = r["signal"] or ("TIMEOUT" if r["timed_out"] else f"rc={r['rc']}")
        print(f"[{n}/{len(tus)}] {state:8} findings={len(r['findings']):3} "
              f"parse_err={r.get('syntax_errors', r['lint_parse_errors']):4} "
              f"lint={r['lint_s']:.2f}s ratio={r.get('ratio')} {e['file']}", flush=True)

    summary = summarise(records)
    print(json.dumps(summary, indent=1) if opt.json is None else format_summary(summary))
    if opt.json:
        with open(opt.json, "w") as f:
            json.dump({"build": build, "lint": lint, "summary": summary, "tus": records}, f,
                      indent=1)


def summarise(records):
    rules = {}
    for r in records:
        for f in r["findings"]:
            key = f"{f['rule']} ({f['level']})"
            rules[key] = rules.get(key, 0) + 1
    ratios = [r["ratio"] for r in records if r.get("ratio")]
    return {
        "tus": len(records),
        "crashes": sum(1 for r in records if r["signal"]),
        "timeouts": sum(1 for r in records if r["timed_out"]),
        "tus_with_parse_errors": sum(1 for r in records
                                     if r.get("syntax_errors", r["lint_parse_errors"])),
        "parse_errors": sum(r.get("syntax_errors", r["lint_parse_errors"]) for r in records),
        "lint_parse_errors": sum(r["lint_parse_errors"] for r in records),
        "exit_2": sum(1 for r in records if r["rc"] == 2),
        "findings": sum(len(r["findings"]) for r in records),
        "findings_per_rule": rules,
        "lint_total_s": round(sum(r["lint_s"] for r in records), 1),
        "syntax_total_s": round(sum(r.get("syntax_s", 0) for r in records), 1),
        "ratio_mean": round(statistics.mean(ratios), 2) if ratios else None,
        "ratio_max": round(max(ratios), 2) if ratios else None,
    }


def format_summary(s):
    lines = [f"{k:24} {v}" for k, v in s.items() if k != "findings_per_rule"]
    lines += [f"  {rule:56} {n}" for rule, n in sorted(s["findings_per_rule"].items())]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
