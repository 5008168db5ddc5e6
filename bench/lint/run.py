#!/usr/bin/env python3
"""Times collcheck-lint against `clang-19 -fsyntax-only` on the same translation units, one process
per file for both (start-up included), with the same flags. Runs alternate between the two tools
so that a busy machine slows both alike; each file's time is the median of its runs.

    bench/lint/run.py --lint build/bin/collcheck-lint [--clang clang-19] [--repeats 7]

Sets: the lint corpus (tests/lint/corpus) and a generated 400-step trainer (generate_trainer.py),
which has more code of its own to analyse than the small corpus files.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def mpi_include_flags():
    try:
        out = subprocess.run(["mpicc", "-showme:compile"], capture_output=True, text=True).stdout
        return [f for f in out.split() if f.startswith("-I")]
    except FileNotFoundError:
        return ["-I/usr/lib/x86_64-linux-gnu/openmpi/include"]


def timed(command):
    """Wall seconds, CPU seconds (user + system of the child) and the result."""
    before = os.times()
    start = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, result


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lint", required=True, type=pathlib.Path)
    parser.add_argument("--clang", default="clang-19")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=400, help="steps of the generated trainer")
    parser.add_argument("--cuda-path", default="/usr/local/cuda")
    args = parser.parse_args()

    flags = ["-std=c++20", f"-I{ROOT / 'tests/lint/include'}", f"-I{args.cuda_path}/include"]
    flags += mpi_include_flags()
    # What collcheck-lint adds to every command, and for .cu files, given to clang as well.
    common = ["-w"]
    cuda = ["--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version",
            f"--cuda-path={args.cuda_path}", "-isystem", str(ROOT / "lint/cuda/compat")]

    with tempfile.TemporaryDirectory() as tmp:
        generated = pathlib.Path(tmp) / "generated_trainer.cpp"
        subprocess.run([sys.executable, str(HERE / "generate_trainer.py"), str(args.steps),
                        str(generated)], check=True)
        corpus = sorted(p for p in (ROOT / "tests/lint/corpus").rglob("*")
                        if p.suffix in (".cpp", ".cu"))
        sets = [("corpus", corpus), (f"generated trainer ({args.steps} steps)", [generated])]

        print(f"{args.repeats} runs per file and tool, median per file, one process per file; "
              "seconds summed over the files\n")
        print("| translation units | files | lines | clang wall | lint wall | ratio "
              "| clang CPU | lint CPU | ratio |")
        print("|---|---|---|---|---|---|---|---|---|")
        worst = 0.0
        for name, files in sets:
            totals = {"clang wall": 0.0, "lint wall": 0.0, "clang cpu": 0.0, "lint cpu": 0.0}
            lines = 0
            for path in files:
                lines += len(path.read_text().splitlines())
                extra = cuda if path.suffix == ".cu" else []
                commands = {
                    "clang": [args.clang, "-fsyntax-only", *common, *extra, *flags, str(path)],
                    "lint": [str(args.lint), "--quiet", str(path), "--", *flags],
                }
                samples = {tool: ([], []) for tool in commands}
                for _ in range(args.repeats):
                    for tool, command in commands.items():
                        wall, cpu, result = timed(command)
                        if result.returncode not in ((0,) if tool == "clang" else (0, 1)):
                            sys.exit(f"{tool} failed on {path}: {result.stderr}")
                        samples[tool][0].append(wall)
                        samples[tool][1].append(cpu)
                for tool in commands:
                    totals[tool + " wall"] += statistics.median(samples[tool][0])
                    totals[tool + " cpu"] += statistics.median(samples[tool][1])
            wall_ratio = totals["lint wall"] / totals["clang wall"]
            cpu_ratio = totals["lint cpu"] / totals["clang cpu"]
            worst = max(worst, wall_ratio, cpu_ratio)
            print(f"| {name} | {len(files)} | {lines} | {totals['clang wall']:.2f} "
                  f"| {totals['lint wall']:.2f} | {wall_ratio:.2f} | {totals['clang cpu']:.2f} "
                  f"| {totals['lint cpu']:.2f} | {cpu_ratio:.2f} |")
        print(f"\nworst ratio {worst:.2f} (limit 1.30)")
        return 0 if worst <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
