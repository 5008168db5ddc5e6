#!/usr/bin/env python3
"""Mutation run of collcheck-lint over its corpus and the seeds of real-code shapes
(tests/lint/fuzz): every mutant (a line deleted, duplicated or swapped, the file cut short, a brace
or parenthesis dropped, an identifier replaced, a macro, a template, a preprocessor block or a CUDA
qualifier put in, a deeply nested expression, a shape of real code: function templates written by
macros, CRTP, fold expressions, generic lambdas, dependent constructions, kernel templates) must
end in exit status 0, 1 or 2 within the time limit, with no crash, no Clang crash report and no
function whose analysis failed (a failure the lint contained is still a defect). Most mutants do
not compile: they are linted with --allow-compile-errors, so the analysis runs on what parsed.

Deterministic for a given --seed (printed; `--seed random` draws one). The suite runs a bounded
count; docs/reliability.md records the full run and its command.
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
    # Shapes of real code.
    "#define CC_CREATOR(type) template <typename T> T *cc_create_##type(int p) "
    "{ return new type<T>(p); }\ntemplate <typename T> struct cc_box { cc_box(int) {} };\n"
    "CC_CREATOR(cc_box)\n",
    "template <typename T> T cc_paren_init(T a, int n) { T x(a, n); T y{a, n}; return T(a, n) + x; }\n",
    "template <typename D> struct cc_crtp { void run() { static_cast<D *>(this)->impl(); } };\n",
    "template <typename... Ts> auto cc_fold(Ts... xs) { return (xs + ... + 0); }\n",
    "template <typename M> void cc_dependent(M &m) { for (auto &p : m.parameters()) "
    "p.grad().div_(m.size()); typename M::Opt o{m, 1}; M::make(m)->step(o); }\n",
    "auto cc_generic = [](auto &c, auto n) { for (auto &x : c) x /= n; return c.size(); };\n",
    "template <typename T> requires (sizeof(T) > 1) T cc_constrained(T t) { return t; }\n",
    "template <typename T> __global__ void cc_tkernel(T *x, int n) { if (threadIdx.x < n) "
    "x[threadIdx.x] *= 2; }\n",
    "#define CC_CHECK(e) do { if ((e) != 0) { fprintf(stderr, \"%d\", (int)(e)); exit(1); } } "
    "while (0)\n",
    "[[noreturn]] void cc_die(const char *m);\n",
    "template <typename T> decltype(auto) cc_fwd(T &&t) { return static_cast<T &&>(t); }\n",
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
        result = subprocess.run([tool, "--quiet", "--allow-compile-errors", str(path), "--"] + flags,
                                capture_output=True, text=True, errors="replace", timeout=timeout)
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
    if "was not analysed: the analysis failed inside it" in output:
        failed = [l for l in output.splitlines() if "was not analysed" in l]
        return "the analysis failed in a function: " + failed[0], elapsed, result.returncode
    return None, elapsed, result.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--corpus", required=True, type=pathlib.Path, action="append",
                        help="a directory of seeds (.cpp, .cu); may be given several times")
    parser.add_argument("--mutants", type=int, default=200)
    parser.add_argument("--seed", default="1", help="an integer, or 'random'")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--time-budget", type=float, default=0,
                        help="start no mutant after this many seconds (0: no budget)")
    parser.add_argument("--keep", type=pathlib.Path, help="copy failing mutants here")
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    flags = args.flags[1:] if args.flags[:1] == ["--"] else args.flags
    # Each directory is drawn as often as the others, whatever its number of files.
    groups = [sorted(p for p in d.iterdir() if p.suffix in (".cpp", ".cu")) for d in args.corpus]
    groups = [g for g in groups if g]
    sources = [p for g in groups for p in g]
    if not sources:
        sys.exit(f"no corpus sources in {args.corpus}")
    seed = random.SystemRandom().randrange(1 << 31) if args.seed == "random" else int(args.seed)
    print(f"seed {seed} (rerun: --seed {seed})", flush=True)
    rng = random.Random(seed)
    failures, statuses, kinds, slowest = [], {}, {}, 0.0
    with tempfile.TemporaryDirectory(prefix="collcheck-lint-mutants-") as work:
        jobs = []
        for n in range(args.mutants):
            source = rng.choice(rng.choice(groups))
            text, kind = mutate(source.read_text(), rng)
            # Every tenth C++ mutant is also parsed as CUDA host code.
            suffix = ".cu" if source.suffix == ".cu" or n % 10 == 9 else ".cpp"
            path = pathlib.Path(work) / f"mutant{n:05d}-{source.stem}{suffix}"
            path.write_text(text)
            jobs.append((path, source.name, kind))
        started = time.monotonic()
        results = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            # In rounds of --jobs mutants, none started once the time budget is spent: a loaded
            # machine runs fewer mutants, not a longer test.
            for first in range(0, len(jobs), args.jobs):
                if args.time_budget and time.monotonic() - started > args.time_budget:
                    break
                batch = jobs[first:first + args.jobs]
                results += pool.map(lambda j: run_one(args.tool, flags, j[0], args.timeout), batch)
            ran = len(results)
            for (path, source, kind), (problem, elapsed, status) in zip(jobs, results):
                kinds[kind.split("+")[0]] = kinds.get(kind.split("+")[0], 0) + 1
                slowest = max(slowest, elapsed)
                statuses[status] = statuses.get(status, 0) + 1
                if problem:
                    failures.append(f"{path.name} (from {source}, {kind}): {problem}")
                    if args.keep:
                        args.keep.mkdir(parents=True, exist_ok=True)
                        (args.keep / path.name).write_text(path.read_text())
    if ran < len(jobs):
        print(f"time budget of {args.time_budget:g} s spent: {ran} of {len(jobs)} mutants run")
    print(f"{ran} mutants of {len(sources)} seed files (seed {seed}); "
          f"mutations: {dict(sorted(kinds.items()))}")
    print(f"exit statuses: {dict(sorted((str(k), v) for k, v in statuses.items()))}; "
          f"slowest {slowest:.2f} s")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
