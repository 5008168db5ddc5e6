#!/usr/bin/env python3
"""Runs collcheck-lint (or clang-tidy with the collcheck plugin) over the corpus and checks the
diagnostics against the `// expect: rule-id[, rule-id]` comments written beside the code, exactly:
every expected diagnostic is reported on its line, nothing else is reported. `note:rule-id`
expects a finding reported at note level (a guess); clang-tidy's plugin does not report those.

Each snippet is a function named tp_* (a true positive: at least one expectation) or tn_* (a true
negative: none). The run fails when the corpus holds fewer snippets of either kind than asked.
"""
import argparse
import collections
import pathlib
import re
import subprocess
import sys

# A rule id; `note:` before it expects the finding at note level (a guess, docs/lint.md).
RULE = r"(?:note:)?[a-z0-9]+(?:-[a-z0-9]+)+"
EXPECT = re.compile(r"\bexpect:\s*(" + RULE + r"(?:\s*,\s*" + RULE + r")*)")
SNIPPET = re.compile(r"^\S.*?\b((?:tp|tn)_\w+)\s*\(")
DIAGNOSTIC = re.compile(r"^(.*?):(\d+):(\d+): (warning|error|note): (.*) \[([^\]]+)\]$")
NOT_COMPILING = "the code does not compile here"
NOT_ANALYSED = "was not analysed: the analysis failed inside it"


def expectations(path):
    """Expected (line, rule) pairs, and the snippets as (name, first line, last line)."""
    expected = collections.Counter()
    starts = []
    lines = path.read_text().splitlines()
    for number, text in enumerate(lines, start=1):
        match = EXPECT.search(text)
        if match:
            for rule in match.group(1).split(","):
                expected[(number, rule.strip())] += 1
        snippet = SNIPPET.match(text)
        if snippet:
            starts.append((snippet.group(1), number))
    snippets = []
    for i, (name, first) in enumerate(starts):
        last = starts[i + 1][1] - 1 if i + 1 < len(starts) else len(lines)
        snippets.append((name, first, last))
    return expected, snippets


def run(args, path):
    """The (line, rule) pairs reported for `path`, and the problems with the run itself."""
    problems = []
    if args.mode == "lint":
        command = [args.tool, "--quiet", str(path), "--"] + args.flags
    else:
        flags = list(args.flags)
        if path.suffix == ".cu":
            flags = args.cuda_flags.split() + flags
        command = [args.tool, "-load", args.plugin, "-checks=-*,collcheck-*", "--quiet",
                   str(path), "--"] + flags
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if args.mode == "lint" and result.returncode not in (0, 1):
        problems.append(f"exit status {result.returncode}: {result.stderr.strip()}")
    if args.mode == "tidy" and result.returncode < 0:
        problems.append(f"clang-tidy crashed ({result.returncode}): {result.stderr.strip()}")
    reported = collections.Counter()
    for text in (result.stdout + result.stderr).splitlines():
        if NOT_COMPILING in text or "[clang-diagnostic-error]" in text:
            problems.append("corpus file does not compile: " + text)
            continue
        if NOT_ANALYSED in text:
            problems.append("the analysis failed: " + text)
            continue
        match = DIAGNOSTIC.match(text)
        if not match or pathlib.Path(match.group(1)).resolve() != path.resolve():
            continue
        rule = match.group(6)
        if args.mode == "tidy":
            if not rule.startswith("collcheck-"):
                continue
            rule = rule[len("collcheck-"):]
        if match.group(4) == "note":
            rule = "note:" + rule
        reported[(int(match.group(2)), rule)] += 1
    return reported, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mode", choices=["lint", "tidy"], default="lint")
    parser.add_argument("--tool", required=True, help="collcheck-lint, or clang-tidy for --mode tidy")
    parser.add_argument("--plugin", help="libcollcheck-tidy.so for --mode tidy")
    parser.add_argument("--corpus", required=True, type=pathlib.Path)
    parser.add_argument("--cuda-flags", default="", help="extra clang-tidy flags for .cu files")
    parser.add_argument("--min-positives", type=int, default=0)
    parser.add_argument("--min-negatives", type=int, default=0)
    parser.add_argument("flags", nargs=argparse.REMAINDER, help="-- compile flags")
    args = parser.parse_args()
    if args.flags and args.flags[0] == "--":
        args.flags = args.flags[1:]

    files = sorted(p for p in args.corpus.rglob("*") if p.suffix in (".cpp", ".cu"))
    failures = []
    positives = negatives = expected_total = found_total = 0
    for path in files:
        expected, snippets = expectations(path)
        guesses = collections.Counter()
        if args.mode == "tidy":  # the plugin leaves guesses out (no note-level check diagnostic)
            guesses = collections.Counter({k: n for k, n in expected.items()
                                           if k[1].startswith("note:")})
            expected = expected - guesses
        for name, first, last in snippets:
            count = sum(n for (line, _), n in expected.items() if first <= line <= last)
            if any(first <= line <= last for line, _ in guesses) and count == 0:
                continue  # a true positive the plugin does not report: only the reports count
            if name.startswith("tp_"):
                positives += 1
                if count == 0:
                    failures.append(f"{path}:{first}: {name} is a tp_ snippet without expectations")
            else:
                negatives += 1
                if count:
                    failures.append(f"{path}:{first}: {name} is a tn_ snippet with expectations")
        reported, problems = run(args, path)
        failures += [f"{path}: {p}" for p in problems]
        for (line, rule), n in sorted((expected - reported).items()):
            failures.append(f"{path}:{line}: expected {rule} was not reported" +
                            (f" ({n} missing)" if n > 1 else ""))
        for (line, rule), n in sorted((reported - expected).items()):
            failures.append(f"{path}:{line}: unexpected {rule}")
        expected_total += sum(expected.values())
        found_total += sum((expected & reported).values())
    false_positives = sum(1 for f in failures if "unexpected" in f)
    print(f"{args.mode}: {len(files)} files, {positives} true-positive and {negatives} "
          f"true-negative snippets; {found_total}/{expected_total} expected diagnostics found, "
          f"{false_positives} unexpected")
    if positives < args.min_positives:
        failures.append(f"only {positives} tp_ snippets, at least {args.min_positives} required")
    if negatives < args.min_negatives:
        failures.append(f"only {negatives} tn_ snippets, at least {args.min_negatives} required")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
