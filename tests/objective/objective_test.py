#!/usr/bin/env python3
"""The objective checks end to end: the example trainer's right and wrong variants run as real
mpirun jobs under the collcheck tracer (over MPI, or over the NCCL test double), then
`collcheck analyze --json`. Each wrong variant must yield its finding with the seed's numbers,
each right one no objective finding. --suite picks the cases: mpi, nccl, reference, demo."""
import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

OBJECTIVE_RULES = {"uncompensated-mean", "double-normalization", "partial-window",
                   "zero-count-skip", "zero-count-division", "count-on-active-ranks",
                   "unverified-reduction", "reference-mismatch"}


class Job:
    def __init__(self, args):
        self.args = args

    def kill_leftovers(self, trace_dir):
        # Ranks of a job ended by the watchdog can outlive mpirun: stop those of our traces.
        for name in os.listdir(trace_dir) if os.path.isdir(trace_dir) else []:
            try:
                with open(os.path.join(trace_dir, name), "rb") as f:
                    pid = struct.unpack_from("<i", f.read(28), 24)[0]
                if pid > 1:
                    os.kill(pid, signal.SIGKILL)
            except (OSError, struct.error):
                pass

    def run(self, name, ranks, trainer_args, env_extra=None, timeout=60):
        trace_dir = os.path.join(self.args.work, name)
        shutil.rmtree(trace_dir, ignore_errors=True)
        os.makedirs(trace_dir)
        env = dict(os.environ, COLLCHECK_OUTPUT=trace_dir, LD_PRELOAD=self.args.preload)
        env.update(env_extra or {})
        command = [self.args.trainer] + trainer_args
        if ranks:
            command = self.args.mpirun.split() + ["-np", str(ranks)] + command
        job = subprocess.Popen(command, env=env, start_new_session=True, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            out, err = job.communicate()
        self.kill_leftovers(trace_dir)
        time.sleep(0.1)
        updates = [line for line in out.splitlines() if line.startswith("update ")]
        return trace_dir, updates, job.returncode, err

    def analyze(self, trace_dir, extra=()):
        out = subprocess.run([self.args.collcheck, "analyze", "--json", "-", "--quiet", *extra,
                              trace_dir], capture_output=True, text=True, timeout=60)
        if out.returncode == 2:
            raise AssertionError(f"analyze refused {trace_dir}: {out.stderr}")
        return out.returncode, json.loads(out.stdout)

    def text(self, trace_dir, extra=()):
        out = subprocess.run([self.args.collcheck, "analyze", "--color=never", *extra, trace_dir],
                             capture_output=True, text=True, timeout=60)
        return out.returncode, out.stdout + out.stderr


def of(report, rule):
    return [f for f in report["findings"] if f["rule"] == rule]


def objective(report):
    return [f for f in report["findings"] if f["rule"] in OBJECTIVE_RULES]


def messages(report):
    return [f"{f['severity']} {f['rule']}: {f['message']}" for f in report["findings"]]


def one(report, rule, severity="error"):
    found = of(report, rule)
    assert len(found) == 1, f"expected one {rule}, got {messages(report)}"
    assert found[0]["severity"] == severity, found[0]
    others = [f for f in objective(report) if f["rule"] != rule]
    assert not others, f"only {rule} expected among the objective findings: {messages(report)}"
    return found[0]


def ranks(finding, role):
    return sorted(r for g in finding["groups"] if g["role"] == role for r in g["ranks"])


def detail(finding, rank):
    for g in finding["groups"]:
        if rank in g["ranks"]:
            return g["detail"]
    raise AssertionError(f"rank {rank} is in no group of {finding}")


def clean(report):
    assert not objective(report), messages(report)


def cases_mpi(backend):
    """(name, ranks, trainer args, expected update lines or None, check(report, text))."""
    b = ["--backend", backend]
    nccl = backend == "nccl"

    def seed_weights(report):
        f = one(report, "uncompensated-mean")
        assert "1/4 (rank 0) and 1/12 (rank 1)" in f["message"], f["message"]
        assert "1/N = 1/8" in f["message"], f["message"]
        assert "n = 2" in detail(f, 0) and "= 1/4 per item" in detail(f, 0), detail(f, 0)
        assert "n = 6" in detail(f, 1) and "= 1/12 per item" in detail(f, 1), detail(f, 1)
        assert "scale by 0.5" in detail(f, 0) and "scale by 1.5" in detail(f, 1), f["groups"]
        notes = " ".join(f["notes"])
        assert "N = 8 valid items on P = 2 ranks" in notes, notes
        assert "rank 0 x0.5, rank 1 x1.5" in notes, notes
        assert f["window"] == {"first": 0, "last": 0}, f["window"]

    def double_normalized(report):
        f = one(report, "double-normalization")
        assert "N = 8 over P = 2" in f["message"] and "1/16 instead of 1/N = 1/8" in f["message"], f

    def partial(report):
        f = one(report, "partial-window")
        assert "N = 4 instead of the window's 8 (2 micro-batches)" in f["message"], f["message"]
        assert "reduced 1, the window has 2 over 2" in detail(f, 0), f["groups"]
        assert "reduced 3, the window has 6 over 2" in detail(f, 1), f["groups"]

    def masked(report):
        # Six items on both ranks, 2 and 6 of them valid: the counts, not the lengths, decide.
        f = one(report, "uncompensated-mean")
        assert "n = 2" in detail(f, 0) and "n = 6" in detail(f, 1), f["groups"]

    def zero_rank_nan(report):
        f = of(report, "zero-count-division")
        assert len(f) == 1, messages(report)
        assert f[0]["groups"][0]["ranks"] == [2], f[0]
        if nccl:  # ncclAvg's results are not captured: not proven
            assert f[0]["severity"] == "warning", f[0]
        else:
            assert f[0]["severity"] == "error" and "NaN" in f[0]["message"], f[0]
        assert of(report, "uncompensated-mean"), messages(report)  # ranks 0, 1 are unequal too

    def empty_window_divided(report):
        f = of(report, "zero-count-division")
        assert len(f) == 1, messages(report)
        assert "window 1 has no valid item on any rank (N = 0)" in f[0]["message"], f[0]
        assert f[0]["window"]["first"] == 1

    def zero_skip(report):
        f = one(report, "zero-count-skip")
        assert ranks(f, "no valid item, did not issue") == [2], f
        assert ranks(f, "issued") == [0, 1], f
        assert "rank 2 had no valid item in window 0" in f["message"], f["message"]

    def exhausted_skip(report):
        f = one(report, "count-on-active-ranks")
        assert ranks(f, "issued") == [0, 1] and ranks(f, "did not issue") == [2], f
        assert "window 1" in f["message"], f["message"]
        assert "counts 1, 3" in detail(f, 0), f["groups"]

    def exhausted_skip_windows_inferred(report):
        # Without annotations the normalization is not declared either: what that leaves
        # unverified is said beside it.
        f = of(report, "count-on-active-ranks")
        assert len(f) == 1, messages(report)
        f = f[0]
        assert ranks(f, "issued") == [0, 1] and ranks(f, "did not issue") == [2], f
        assert "window 1" in f["message"], f["message"]
        assert any("windows are inferred" in n for n in f["notes"]), f["notes"]

    def unequal(report):
        one(report, "uncompensated-mean")

    def uniform_sum(report):
        f = one(report, "uncompensated-mean")
        assert "weighs every item 1 instead of 1/N = 1/8" in f["message"], f["message"]

    def premulsum_clean(report):
        clean(report)  # the per-rank scalars nᵣ/N are the compensation

    def possible(report):
        f = one(report, "uncompensated-mean", "warning")
        assert "normalization is not declared" in f["message"], f["message"]

    def nothing_to_go_by(report):
        # ncclAvg over local means, no annotation, no count reduction: said, as a note.
        f = one(report, "unverified-reduction", "note")
        assert "no valid counts" in f["message"], f["message"]

    cases = [
        ("seed.local_means_averaged", 2, [], ["update 1 w 9.8"], seed_weights),
        ("seed.compensated", 2, ["--compensate"], ["update 1 w 9.75"], clean),
        ("seed.sum_then_divide", 2, ["--reducer", "sum-then-divide"], ["update 1 w 9.8"],
         seed_weights),
        ("seed.local_means_summed", 2, ["--reducer", "sum"], None, unequal),
        ("seed.global_count_summed", 2, ["--normalization", "global-count", "--reducer", "sum"],
         ["update 1 w 9.75"], clean),
        ("seed.global_count_averaged", 2, ["--normalization", "global-count"],
         ["update 1 w 9.875"], double_normalized),
        ("seed.global_count_compensated", 2, ["--normalization", "global-count", "--compensate"],
         ["update 1 w 9.75"], clean),
        ("seed.sums_summed", 2, ["--normalization", "sum", "--reducer", "sum"], ["update 1 w 8"],
         uniform_sum),
        ("seed.sums_compensated", 2, ["--normalization", "sum", "--compensate"],
         ["update 1 w 9.75"], clean),
        ("seed.count_of_last_micro_batch", 2,
         ["--micro-batches", "2", "--count-window", "last", "--normalization", "global-count",
          "--reducer", "sum"], ["update 1 w 9.5"], partial),
        ("seed.compensated_count_of_last_micro_batch", 2,
         ["--micro-batches", "2", "--count-window", "last", "--compensate"], ["update 1 w 9.5"],
         partial),
        ("seed.count_of_whole_window", 2,
         ["--micro-batches", "2", "--normalization", "global-count", "--reducer", "sum"],
         ["update 1 w 9.75"], clean),
        ("masked.equal_lengths_unequal_counts", 2, ["--data", "masked"], ["update 1 w 9.8"],
         masked),
        ("masked.compensated", 2, ["--data", "masked", "--compensate"], ["update 1 w 9.75"], clean),
        ("zero_rank.local_mean_of_nothing", 3, ["--data", "zero-rank"], ["update 1 w nan"],
         zero_rank_nan),
        ("zero_rank.skips_its_reduction", 3,
         ["--data", "zero-rank", "--compensate", "--zero-skip", "--watchdog", "3"], None,
         zero_skip),
        ("zero_window.local_means_divide_by_zero", 3, ["--data", "zero-window", "--steps", "2"],
         None, empty_window_divided),
        ("zero_window.every_rank_skips", 3,
         ["--data", "zero-window", "--steps", "2", "--normalization", "global-count", "--reducer",
          "sum"], ["update 1 w 9.755555556", "update 2 w 9.755555556 skipped"], clean),
        ("exhausted.coordinated", 3, ["--data", "exhausted", "--steps", "3", "--compensate"],
         None, clean),
        ("exhausted.count_on_active_ranks", 3,
         ["--data", "exhausted", "--exhausted-skip", "--steps", "3", "--compensate",
          "--watchdog", "3"], ["update 1 w 9.755555556"], exhausted_skip),
        ("no_annotations.count_on_active_ranks", 3,
         ["--data", "exhausted", "--exhausted-skip", "--steps", "3", "--compensate",
          "--watchdog", "3", "--no-annotations"], ["update 1 w 9.755555556"],
         exhausted_skip_windows_inferred),
        ("uneven.compensated_micro_batches", 3,
         ["--data", "uneven", "--steps", "3", "--micro-batches", "2", "--compensate"], None, clean),
        # Small integer sums beside the count (a training log's) do not replace it: the gradient
        # is weighed with the count reduction that carries the declared counts.
        ("logged.active_ranks_after_the_count", 2,
         ["--normalization", "global-count", "--reducer", "sum", "--log-active-ranks"],
         ["update 1 w 9.75"], clean),
        ("logged.micro_batch_counts_before_the_window_count", 2,
         ["--micro-batches", "2", "--normalization", "global-count", "--reducer", "sum",
          "--log-micro-batch-counts"], ["update 1 w 9.75"], clean),
        ("logged.micro_batch_counts_and_the_last_one_as_count", 2,
         ["--micro-batches", "2", "--count-window", "last", "--normalization", "global-count",
          "--reducer", "sum", "--log-micro-batch-counts"], ["update 1 w 9.5"], partial),
        ("logged.local_means_averaged_beside_logged_counts", 2,
         ["--micro-batches", "2", "--log-micro-batch-counts", "--log-active-ranks", "--compensate",
          "--float-counts"], ["update 1 w 9.75"], clean),
    ]
    if nccl:
        cases = [c for c in cases if c[0] not in ("seed.sum_then_divide",)]
        cases.remove(next(c for c in cases if c[0] == "zero_rank.local_mean_of_nothing"))
        cases += [
            ("zero_rank.local_mean_of_nothing", 3, ["--data", "zero-rank"], ["update 1 w nan"],
             zero_rank_nan),
            ("seed.premulsum_one_over_p", 2, ["--reducer", "premulsum"], ["update 1 w 9.8"],
             seed_weights),
            ("seed.premulsum_compensating", 2, ["--reducer", "premulsum", "--compensate"],
             ["update 1 w 9.75"], premulsum_clean),
            ("seed.global_count_premulsum", 2, ["--normalization", "global-count", "--reducer",
                                                "premulsum"], ["update 1 w 9.875"],
             double_normalized),
            ("zero_rank.premulsum_compensated", 3,
             ["--data", "zero-rank", "--reducer", "premulsum", "--compensate"], None, clean),
            ("no_annotations.counts_reduced", 2, ["--no-annotations", "--normalization",
                                                  "global-count"], ["update 1 w 9.875"], possible),
            ("no_annotations.nothing_to_go_by", 2, ["--no-annotations"], ["update 1 w 9.8"],
             nothing_to_go_by),
            ("no_annotations.premulsum_compensating", 2,
             ["--no-annotations", "--reducer", "premulsum", "--compensate"], ["update 1 w 9.75"],
             premulsum_clean),
            # A float count reduction is a count reduction too: the mean reducer over unequal
            # counts is weighed, not left unsaid.
            ("no_annotations.float_counts_reduced", 2,
             ["--no-annotations", "--float-counts", "--normalization", "global-count"],
             ["update 1 w 9.875"], possible),
            # A summed has-data flag after the count is not the count.
            ("no_annotations.counts_reduced_active_ranks_logged", 2,
             ["--no-annotations", "--normalization", "global-count", "--log-active-ranks"],
             ["update 1 w 9.875"], possible),
        ]
    else:
        # An MPI SUM reducer and a count, without annotations: nothing says this is training (a
        # molecular-dynamics code sums an atom count and energies alike), so no note.
        cases += [
            ("no_annotations.counts_reduced", 2, ["--no-annotations", "--normalization",
                                                  "global-count"], ["update 1 w 9.875"], clean),
        ]
    return [(name, r, b + a, u, c) for name, r, a, u, c in cases]


def run_cases(job, cases):
    failures = []
    for name, ranks_, trainer_args, expected, check in cases:
        trace_dir, updates, _, err = job.run(name, ranks_, trainer_args)
        try:
            if expected is not None:
                assert updates == expected, f"trainer printed {updates}, expected {expected}"
            _, report = job.analyze(trace_dir)
            check(report)
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL {name}: {e}\n     {' '.join(trainer_args)}\n{err[-2000:]}")
            print(job.text(trace_dir)[1])
    return failures


def suite_reference(job):
    failures = []
    capture = {"COLLCHECK_CAPTURE_RESULTS": "4"}

    def reference(name, args):
        trace_dir, updates, status, err = job.run(name, None,
                                                  ["--reference", "--reference-allreduce"] + args,
                                                  capture)
        assert status == 0, err
        return trace_dir, updates

    def case(name, check):
        try:
            check()
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL {name}: {e}")

    seed_ref, seed_updates = reference("reference.seed", [])

    def single_process():
        assert seed_updates == ["update 1 w 9.75"], seed_updates
        _, report = job.analyze(seed_ref)
        assert not report["findings"], messages(report)

    case("reference.single_process_gives_9.75", single_process)

    def differs(run_args, backend, window, got, want, ranks_=2):
        trace_dir, _, _, _ = job.run("reference.run." + backend, ranks_,
                                     ["--backend", backend] + run_args, capture)
        _, report = job.analyze(trace_dir, ["--reference", ref_dir])
        f = of(report, "reference-mismatch")
        assert len(f) == 1, messages(report)
        assert f[0]["window"]["first"] == window, f[0]
        assert f" gives {got}, the reference {want} " in f[0]["message"], f[0]["message"]

    def agrees(run_args, backend, ranks_=2):
        trace_dir, _, _, _ = job.run("reference.run." + backend, ranks_,
                                     ["--backend", backend] + run_args, capture)
        _, report = job.analyze(trace_dir, ["--reference", ref_dir])
        assert not of(report, "reference-mismatch"), messages(report)
        assert not objective(report), messages(report)

    def nothing_to_compare():
        # A run traced with capture off has no values to compare: the job cannot be judged as
        # asked, exit 2 with the reason, never "no findings".
        trace_dir, _, _, _ = job.run("reference.run.uncaptured", 2, ["--backend", "mpi"],
                                     {"COLLCHECK_CAPTURE": "0"})
        status, output = job.text(trace_dir, ["--reference", seed_ref])
        assert status == 2, (status, output)
        assert "--reference " + seed_ref + ": no captured reduction results" in output, output

    case("reference.nothing_to_compare_is_exit_2", nothing_to_compare)

    ref_dir = seed_ref
    backends = ["mpi"] + (["nccl"] if job.args.nccl else [])
    for backend in backends:
        case(f"reference.local_means_averaged.{backend}",
             lambda b=backend: differs([], b, 0, "2", "2.5"))
        case(f"reference.compensated.{backend}", lambda b=backend: agrees(["--compensate"], b))
    if job.args.nccl:
        case("reference.premulsum_compensating.nccl",
             lambda: agrees(["--reducer", "premulsum", "--compensate"], "nccl"))
    case("reference.count_of_last_micro_batch.mpi",
         lambda: differs(["--micro-batches", "2", "--count-window", "last", "--normalization",
                          "global-count", "--reducer", "sum"], "mpi", 0, "5", "2.5"))

    # Three updates of uneven data over three ranks: the first window where a wrong run goes off.
    ref_dir, _ = reference("reference.uneven", ["--data", "uneven", "--ranks", "3", "--steps", "3"])
    case("reference.uneven_compensated.mpi",
         lambda: agrees(["--data", "uneven", "--steps", "3", "--micro-batches", "2",
                         "--compensate"], "mpi", 3))

    # Several components: every captured element is compared.
    ref_dir, _ = reference("reference.dim3", ["--dim", "3", "--steps", "2"])
    case("reference.three_components_compensated.mpi",
         lambda: agrees(["--dim", "3", "--steps", "2", "--compensate"], "mpi"))
    case("reference.three_components_averaged.mpi",
         lambda: differs(["--dim", "3", "--steps", "2"], "mpi", 0, "2", "2.5"))

    def no_results():
        # Eight components: more than a count reduction's four, so nothing is captured.
        trace_dir, _, _, _ = job.run("reference.uncaptured", 2, ["--compensate", "--dim", "8"])
        out = subprocess.run([job.args.collcheck, "analyze", "--reference", seed_ref, trace_dir],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2, out
        assert "COLLCHECK_CAPTURE_RESULTS" in out.stderr, out.stderr

    case("reference.needs_captured_results", no_results)
    return failures


def suite_demo(job):
    """The README's command: the uncompensated mean readable in the default text report."""
    failures = []
    base = ["--data", "uneven", "--normalization", "local-mean", "--reducer", "avg", "--steps", "3"]
    for name, extra in (("demo.wrong", []), ("demo.right", ["--compensate"])):
        trace_dir, updates, _, _ = job.run(name, 4, base + extra)
        status, text = job.text(trace_dir)
        try:
            if extra:
                assert status == 0 and "no findings" in text, text
            else:
                assert status == 1, text
                for line in ("error: the gradient all-reduce weighs the items of different ranks "
                             "differently: 1/4 (rank 0), 1/12 (rank 1), 1/20 (rank 2) and 1/28 "
                             "(rank 3) per item instead of 1/N = 1/16 [uncompensated-mean]",
                             "weight: rank 0: n = 1, 1 (local mean) x 1/4 (reducer) = 1/4 per item",
                             "rank 0 x0.25, rank 1 x0.75, rank 2 x1.25, rank 3 x1.75",
                             "repeated 3 times"):
                    assert line in text, f"missing {line!r} in\n{text}"
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL {name}: {e}")
    return failures


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "preload", "trainer", "mpirun", "work", "suite"):
        p.add_argument("--" + option, required=True)
    p.add_argument("--nccl", action="store_true", help="the trainer has the NCCL test double")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    job = Job(args)
    if args.suite in ("mpi", "nccl"):
        failures = run_cases(job, cases_mpi(args.suite))
    elif args.suite == "reference":
        failures = suite_reference(job)
    else:
        failures = suite_demo(job)
    print(f"{len(failures)} failed" + (": " + ", ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
