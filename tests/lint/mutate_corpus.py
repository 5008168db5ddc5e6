#!/usr/bin/env python3
"""Mutation run of collcheck-lint over its corpus: every mutant (a line deleted, duplicated or
swapped, the file cut short, a brace or parenthesis dropped, an identifier replaced, a macro, a
template, a preprocessor block or a CUDA qualifier put in, a deeply nested expression) must end in
exit status 0, 1 or 2 within the time limit, with no crash and no Clang crash report. Most mutants
do not compile: the lint must say so and go on.

Deterministic for a given --seed. The suite runs a bounded count; docs/reliability.md records the
full run and its command.
"""
import argparse
import concurrent.futures
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time

IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
INSERTIONS = [
    "#define CC_TWICE(x) (x) + (x)\n",
    "#define CC_PASTE(a, b) a##b\n#define ncclAllReduce CC_PASTE(nccl, AllReduce)\n",
    "#define MPI_Allreduce(...) 0\n",
    "template <typename T> T cc_identity(T t) { return t; }\n",
    "template <typename T, int N> struct cc_array { T v[N]; };\n",
    "#if 0\n",
    "#endif\n",
    "#ifdef CC_UNDEFINED\n#error never\n#endif\n",
    "__global__ void cc_kernel(float *p) { p[0] = 1; }\n",
    "__device__ __host__ inline float cc_half(float x) { return x / 2; }\n",
    "{\n",
    "}\n",
    "@@ ?? $$\n",
    '#include "cc_does_not_exist.h"\n',
    "static_assert(sizeof(int) == 0, \"never\");\n",
    "auto cc_lambda = [](auto x) { return x / x; };\n",
    "int cc_nested = " + "(" * 300 + "1" + ")" * 300 + ";\n",
    "#pragma once\n#pragma GCC diagnostic ignored \"-Wall\"\n",
    "// NOLINTBEGIN(collcheck-mean-into-mean-reducer)\n",
    "goto cc_label; cc_label:;\n",
]


def mutate(text, rng):
    """One mutant of `text` and the name of what was done to it."""
    lines = text.splitlines(keepends=True)
    kind = rng.choice(["delete", "duplicate", "swap", "truncate", "drop-char", "identifier",
                       "insert", "insert", "combine"])
    if kind == "combine":  # two mutations in a row
        first, a = mutate(text, rng)
        second, b = mutate(first, rng)
        return second, f"{a}+{b}"
    if not lines:
        return text, "empty"
    i = rng.randrange(len(lines))
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "truncate":
        return text[: rng.randrange(len(text) + 1)], kind
    elif kind == "drop-char":
        positions = [p for p, c in enumerate(text) if c in "{}();,<>"]
        if positions:
            p = rng.choice(positions)
            return text[:p] + text[p + 1:], kind
    elif kind == "identifier":
        names = IDENTIFIER.findall(text)
        matches = list(IDENTIFIER.finditer(text))
        if matches:
            m = rng.choice(matches)
            return text[: m.start()] + rng.choice(names) + text[m.end():], kind
    elif kind == "insert":
        lines.insert(i, rng.choice(INSERTIONS))
    return "".join(lines), kind


def run_one(tool, flags, path, timeout):
    start = time.monotonic()
    try:
        result = subprocess.run([tool, "--quiet", str(path), "--"] + flags, capture_output=True,
                                text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"no result after {timeout} s", time.monotonic() - start, None
    elapsed = time.monotonic() - start
    output = result.stdout + result.stderr
    if result.returncode < 0:
        return f"killed by signal {-result.returncode}", elapsed, result.returncode
    if result.returncode not in (0, 1, 2):
        return f"exit status {result.returncode}", elapsed, result.returncode
    if "PLEASE submit a bug report" in output or "Stack dump" in output:
        return "a Clang crash report", elapsed, result.returncode
    return None, elapsed, result.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--corpus", required=True, type=pathlib.Path)
    parser.add_argument("--mutants", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=pathlib.Path, help="copy failing mutants here")
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    flags = args.flags[1:] if args.flags[:1] == ["--"] else args.flags
    sources = sorted(p for p in args.corpus.iterdir() if p.suffix in (".cpp", ".cu"))
    if not sources:
        sys.exit(f"no corpus sources in {args.corpus}")
    rng = random.Random(args.seed)
    failures, statuses, kinds, slowest = [], {}, {}, 0.0
    with tempfile.TemporaryDirectory(prefix="collcheck-lint-mutants-") as work:
        jobs = []
        for n in range(args.mutants):
            source = rng.choice(sources)
            text, kind = mutate(source.read_text(), rng)
            # Every tenth C++ mutant is also parsed as CUDA host code.
            suffix = ".cu" if source.suffix == ".cu" or n % 10 == 9 else ".cpp"
            path = pathlib.Path(work) / f"mutant{n:05d}-{source.stem}{suffix}"
            path.write_text(text)
            jobs.append((path, source.name, kind))
            kinds[kind.split("+")[0]] = kinds.get(kind.split("+")[0], 0) + 1
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(lambda j: run_one(args.tool, flags, j[0], args.timeout), jobs)
            for (path, source, kind), (problem, elapsed, status) in zip(jobs, results):
                slowest = max(slowest, elapsed)
                statuses[status] = statuses.get(status, 0) + 1
                if problem:
                    failures.append(f"{path.name} (from {source}, {kind}): {problem}")
                    if args.keep:
                        args.keep.mkdir(parents=True, exist_ok=True)
                        (args.keep / path.name).write_text(path.read_text())
    print(f"{args.mutants} mutants of {len(sources)} corpus files (seed {args.seed}); "
          f"mutations: {dict(sorted(kinds.items()))}")
    print(f"exit statuses: {dict(sorted((str(k), v) for k, v in statuses.items()))}; "
          f"slowest {slowest:.2f} s")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
