#!/usr/bin/env python3
"""Real MPI programs under the tracer, then `collcheck analyze --json`: each bug program yields
its finding class (a hung job is killed after a timeout, as a person would), and the correct
programs yield no finding at all."""
import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time

RANKS = 4
# The participation rules these tests are about (the objective rules may add notes on windows).
PARTICIPATION = {"missing-participant", "kind-mismatch", "count-mismatch", "datatype-mismatch",
                 "reduce-op-mismatch", "premulsum-scalar-mismatch", "root-mismatch",
                 "collective-reorder", "send-recv-mismatch", "hang", "incomplete-trace",
                 "rank-ended-unfinished", "invalid-communicator", "negative-count", "invalid-root",
                 "invalid-datatype"}


def kill_leftovers(trace_dir):
    """Ranks of a killed job can outlive mpirun: stop the processes named in our own traces."""
    for name in os.listdir(trace_dir) if os.path.isdir(trace_dir) else []:
        try:
            with open(os.path.join(trace_dir, name), "rb") as f:
                header = f.read(28)
            pid = struct.unpack_from("<i", header, 24)[0]
            if pid > 1:
                os.kill(pid, signal.SIGKILL)
        except (OSError, struct.error):
            pass


# FileHeader::worldRank (format/record.h): -1 until the rank's MPI_Init returned.
WORLD_RANK_OFFSET = 496
# How long every trace must stay unchanged, all ranks initialized, for a job to count as stuck.
QUIET_SECONDS = 2.0


def job_state(trace_dir):
    """The contents of the job's traces, or None while some rank has not finished MPI_Init."""
    names = sorted(os.listdir(trace_dir))
    if len(names) < RANKS:
        return None
    contents = []
    for name in names:
        try:
            with open(os.path.join(trace_dir, name), "rb") as f:
                data = f.read()
        except OSError:
            return None
        if len(data) < WORLD_RANK_OFFSET + 4 or struct.unpack_from(
                "<i", data, WORLD_RANK_OFFSET)[0] < 0:
            return None
        contents.append(data)
    return contents


def run_job(args, program, program_args, trace_dir, timeout, stuck_is_end=False):
    """Runs the job; kills it after `timeout` s, or with `stuck_is_end`, as soon as it is seen
    stuck: every rank past MPI_Init and no trace changed for QUIET_SECONDS (a sign that it reached
    its hang, rather than a fixed wait that a slow start outlasts). Returns whether it was killed."""
    shutil.rmtree(trace_dir, ignore_errors=True)
    os.makedirs(trace_dir)
    env = dict(os.environ, COLLCHECK_OUTPUT=trace_dir, LD_PRELOAD=args.preload)
    command = (f"{args.mpirun} -np {RANKS} {os.path.join(args.programs, program)} "
               + " ".join(program_args))
    # The job's own error output, beside the folder, for the cases about what MPI reported.
    with open(trace_dir + ".stderr", "w") as err:
        job = subprocess.Popen(command, shell=True, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + timeout
    last, quiet_since = None, None
    killed = False
    while job.poll() is None:
        now = time.monotonic()
        if now >= deadline:
            killed = True
            break
        if stuck_is_end:
            state = job_state(trace_dir)
            if state is None or state != last:
                last, quiet_since = state, now
            elif now - quiet_since >= QUIET_SECONDS:
                killed = True
                break
        time.sleep(0.1)
    if killed:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
    kill_leftovers(trace_dir)
    time.sleep(0.2)
    return killed


def analyze(args, trace_dir):
    out = subprocess.run([args.collcheck, "analyze", "--json", "-", "--quiet", trace_dir],
                         capture_output=True, text=True, timeout=60)
    if out.returncode == 2:
        raise AssertionError(f"analyze refused {trace_dir}: {out.stderr}")
    return out.returncode, json.loads(out.stdout)


def ranks(finding, role):
    return sorted(r for g in finding["groups"] if g["role"] == role for r in g["ranks"])


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "preload", "programs", "mpirun", "work"):
        p.add_argument("--" + option, required=True)
    p.add_argument("--nccl", action="store_true", help="also the NCCL programs (test double)")
    p.add_argument("--fortran", help="folder of the Fortran programs (MPI's Fortran bindings)")
    p.add_argument("--neighbors", help="the tracer tests' program of neighborhood collectives")
    p.add_argument("--sanitized", action="store_true",
                   help="a sanitizer build: its runtime owns SIGSEGV, so no signal is recorded")
    args = p.parse_args()
    failures = []
    passed = 0

    def case(name, program, program_args, timeout, expect_killed, check):
        nonlocal passed
        trace_dir = os.path.join(args.work, name)
        # A job that may hang (expect_killed not False) ends when it is seen stuck; `timeout`
        # only bounds it.
        killed = run_job(args, program, program_args, trace_dir, timeout,
                         stuck_is_end=expect_killed is not False)
        try:
            if expect_killed is not None and killed != expect_killed:
                raise AssertionError("the job was killed" if killed else "the job finished")
            status, report = analyze(args, trace_dir)
            check(status, report)
            passed += 1
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL {name}: {e}")
            out = subprocess.run([args.collcheck, "analyze", "--color=never", trace_dir],
                                 capture_output=True, text=True)
            print(out.stdout + out.stderr)

    def of(report, rule):
        return [f for f in report["findings"] if f["rule"] == rule]

    def expect_clean(status, report):
        assert report["findings"] == [], [f["message"] for f in report["findings"]]
        assert status == 0, status
        assert report["summary"]["collectives_checked"] > 0

    case("correct_uniform", "correct_uniform", [], 60, False, expect_clean)
    case("correct_derived_counts", "correct_derived_counts", [], 60, False, expect_clean)
    # MPI matches type signatures: the same data through different types is no mismatch.
    case("type_signatures_equal", "type_signatures", ["equal"], 60, False, expect_clean)

    # A real signature mismatch is reported, each side described as the rank passed it.
    for mode, rule, sides in (
            ("float", "datatype-mismatch",
             ("datatype float32 on ranks 0, 2, 3",
              "datatype int32 (a derived type of 4 x int32) on rank 1")),
            ("count", "count-mismatch",
             ("count 3 on ranks 0, 2, 3", "count 4 (1 x derived (4 x int32)) on rank 1")),
            ("mixed", "datatype-mismatch", ("datatype mixed signature", "on rank 1"))):
        def signature_types(status, report, rule=rule, sides=sides, mode=mode):
            found = of(report, rule)
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            message = found[0]["message"]
            assert all(s in message for s in sides), message
            assert ranks(found[0], "differs") == [1], found[0]
            details = [g["detail"] for g in found[0]["groups"]]
            if mode != "mixed":
                assert "broadcast(1 x derived (4 x int32), root 0)" in details, details
            else:
                assert all(d.startswith("allgather(1 x derived (mixed signature ") for d in
                           details), details
            others = {f["rule"] for f in report["findings"]} & PARTICIPATION
            assert others == {rule}, others
            assert status == 1

        case(f"type_signatures_{mode}", "type_signatures", [mode], 30, None, signature_types)

    # Each pair of a gather, scatter, allgather or alltoall must match in type signature: both
    # sides through different types of one signature (and MPI_IN_PLACE) are no mismatch; a
    # receiver expecting more per peer than is sent is, though every rank passes the same count.
    case("exchange_counts_equal", "exchange_counts", ["equal"], 60, False, expect_clean)
    for mode, message, receivers, senders in (
            ("gather", "gather: the root expects 3 elements from each rank but ranks 0-3 send 2",
             [0], [0, 1, 2, 3]),
            ("scatter", "scatter: the root sends 2 elements to each rank but ranks 0-3 expect 3",
             [0, 1, 2, 3], [0]),
            ("allgather", "allgather: ranks 0-3 expect 3 elements from each rank but ranks 0-3 "
             "send 2", [0, 1, 2, 3], [0, 1, 2, 3]),
            ("alltoall", "alltoall: ranks 0-3 expect 3 elements from each rank but ranks 0-3 "
             "send 2", [0, 1, 2, 3], [0, 1, 2, 3])):
        def exchange(status, report, message=message, receivers=receivers, senders=senders):
            found = of(report, "count-mismatch")
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            assert message in found[0]["message"], found[0]["message"]
            assert ranks(found[0], "receives") == receivers, found[0]
            assert ranks(found[0], "sends") == senders, found[0]
            others = {f["rule"] for f in report["findings"]} & PARTICIPATION
            assert others == {"count-mismatch"}, others
            assert status == 1

        case(f"exchange_counts_{mode}", "exchange_counts", [mode], 60, False, exchange)

    def missing(status, report):
        found = of(report, "missing-participant")
        assert len(found) == 1, [f["message"] for f in report["findings"]]
        assert ranks(found[0], "issued") == [0, 1, 2], found[0]
        assert ranks(found[0], "did not issue") == [3], found[0]
        assert found[0]["communicator"]["label"] == "world"
        assert status == 1

    case("missing_participant", "bug_missing_participant", [], 60, None, missing)

    for field, rule in (("kind", "kind-mismatch"), ("count", "count-mismatch"),
                        ("datatype", "datatype-mismatch"), ("op", "reduce-op-mismatch"),
                        ("root", "root-mismatch")):
        def signature(status, report, rule=rule):
            found = of(report, rule)
            assert found, [f["message"] for f in report["findings"]]
            assert 1 in ranks(found[0], "differs"), found[0]
            assert found[0]["seq"]["first"] == 1, found[0]
            assert status == 1

        case(f"signature_{field}", "bug_signature", [field], 60, None, signature)

    # Ranks 0, 1 SUM and ranks 2, 3 MAX (or 8 and 4 elements): no majority, so the finding says
    # that the ranks disagree and shows both sides, blaming neither half.
    for field, rule, sides in (("op", "reduce-op-mismatch", ("op sum on ranks 0, 1",
                                                             "op max on ranks 2, 3")),
                               ("count", "count-mismatch", ("count 8 on ranks 0, 1",
                                                            "count 4 on ranks 2, 3"))):
        def tie(status, report, rule=rule, sides=sides):
            found = of(report, rule)
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            message = found[0]["message"]
            assert "the ranks disagree" in message and all(s in message for s in sides), message
            assert ranks(found[0], "disagree") == [0, 1, 2, 3], found[0]
            assert not ranks(found[0], "differs") and not ranks(found[0], "reference"), found[0]
            assert status == 1

        case(f"tie_{field}", "bug_signature", [field, "half"], 60, None, tie)

    # The upper half issues its two calls in the other order: a tie as well.
    def reorder(status, report):
        found = of(report, "collective-reorder")
        assert len(found) == 1, [f["message"] for f in report["findings"]]
        assert ranks(found[0], "disagree") == [0, 1, 2, 3], found[0]
        assert "the ranks disagree on the order of 2 collectives" in found[0]["message"], found[0]
        assert found[0]["seq"] == {"first": 3, "last": 4}, found[0]
        assert not of(report, "kind-mismatch"), "a reorder must not cascade into mismatches"
        assert status == 1

    case("reorder", "bug_reorder", [], 60, None, reorder)

    def hang(status, report):
        world = [f for f in of(report, "hang") if f["communicator"]["label"] == "world"]
        assert len(world) == 1, [f["message"] for f in report["findings"]]
        assert ranks(world[0], "waiting") == [0, 1, 2], world[0]
        assert ranks(world[0], "waited for") == [3], world[0]
        detail = [g["detail"] for g in world[0]["groups"] if g["role"] == "waited for"][0]
        assert "stuck in barrier" in detail, detail
        assert any("last sequence number reached on world" in n for n in world[0]["notes"])
        assert status == 1

    case("hang", "bug_hang", [], 60, True, hang)

    # Every rank dies between collectives: all calls matched, yet never "no findings".
    def crashed(signal):
        def check(status, report):
            found = of(report, "rank-ended-unfinished")
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            assert ranks(found[0], "ended") == [0, 1, 2, 3], found[0]
            details = [g["detail"] for g in found[0]["groups"]]
            # The launcher stops the others where they are: after the barrier, or still on their
            # way out of it (it completed: no hang).
            assert all("barrier (seq 0)" in d for d in details), details
            assert any("barrier (seq 0), had returned" in d for d in details), details
            # The first to die took its signal; mpirun may have terminated the others. Under a
            # sanitizer its runtime handles SIGSEGV itself: the end is known, not its signal.
            told = ("killed, crashed or aborted" if args.sanitized and signal == "SIGSEGV"
                    else "died of " + signal)
            assert any(d.startswith(told) for d in details), details
            assert not of(report, "hang"), "nobody was inside a collective"
            assert status == 1
        return check

    case("crash_segv", "bug_crash", ["segv"], 30, False, crashed("SIGSEGV"))
    case("crash_assert", "bug_crash", ["assert"], 30, False, crashed("SIGABRT"))

    # The error output of a job MPI aborted in its MPI_Allreduce, which must name that call (the
    # tracer's own queries must not be what fails). Where mpirun itself failed to relay the
    # message, the check is left out, and said so: Open MPI 4.1's help aggregation loses it now
    # and then when several ranks abort at once ("ORTE_ERROR_LOG: Data unpack would read past end
    # of buffer in file .../show_help.c"; also without the tracer, about 1 run in 8 here), and
    # under AddressSanitizer, preloaded into mpirun too, its runtime reads a freed buffer on this
    # path (orte_rml_oob_send_buffer_nb) and is stopped before it prints.
    def mpi_error_output(name):
        with open(os.path.join(args.work, name + ".stderr")) as f:
            err = f.read()
        if "error occurred in MPI_Allreduce" in err:
            return err
        lost = ("show_help.c" in err and "ORTE_ERROR_LOG" in err) or (
            args.sanitized and "AddressSanitizer" in err and "orte_rml_oob_send_buffer_nb" in err)
        assert lost, err
        print(f"note {name}: mpirun lost the MPI error message in Open MPI's own runtime; the "
              "message is not checked in this run")
        return err

    # Invalid arguments: MPI aborts the job in the call; each is a finding of its own kind.
    def invalid(rule, role, expected_ranks, text):
        def check(status, report):
            found = of(report, rule)
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            named = ranks(found[0], role)
            if named != expected_ranks:
                # Where every rank passes the argument, the first to be rejected aborts the job:
                # mpirun may kill another rank before it entered the call. That rank must then be
                # reported as ended, or, where the others are left inside the call, as the rank
                # the hang finding says they wait for; never left out.
                ended = {r for f in of(report, "rank-ended-unfinished") for g in f["groups"]
                         for r in g["ranks"]}
                ended |= {r for f in of(report, "hang") for g in f["groups"]
                          if g["role"] == "waited for" for r in g["ranks"]}
                missing = set(expected_ranks) - set(named)
                assert named and set(named) <= set(expected_ranks) and missing <= ended, (
                    found[0], ended)
                print(f"note: ranks {sorted(missing)} were ended before they entered the call")
            assert text in found[0]["message"], found[0]["message"]
            assert not of(report, "incomplete-trace"), [f["message"] for f in report["findings"]]
            assert not of(report, "count-mismatch") and not of(report, "root-mismatch")
            assert status == 1
        return check

    def invalid_null(status, report):
        invalid("invalid-communicator", "called", [0, 1, 2, 3],
                "allreduce called without a valid communicator")(status, report)
        # A rank ended in that call (by a signal of mpirun's, where it came before the rank's own
        # abort) is said to have ended there, not at a sequence number of a communicator the call
        # never had.
        details = [g["detail"] for f in of(report, "rank-ended-unfinished") for g in f["groups"]]
        inside = [d for d in details if "inside allreduce" in d]
        assert all(d.endswith("without a valid communicator") for d in inside), details

    case("invalid_null", "bug_invalid", ["null"], 30, None, invalid_null)
    def invalid_count(status, report):
        invalid("negative-count", "negative count", [1],
                "allreduce on world called with a negative count (-1) on rank 1")(status, report)
        # The ranks left inside the call are no unexplained hang.
        for f in of(report, "hang"):
            assert any("rank 1 passed a negative count" in n for n in f["notes"]), f

    case("invalid_count", "bug_invalid", ["count"], 30, None, invalid_count)
    case("invalid_root", "bug_invalid", ["root"], 30, None,
         invalid("invalid-root", "invalid root", [0, 1, 2, 3],
                 "broadcast on world names root 4, not a rank of the communicator (0 to 3)"))

    # A handle that is no communicator: the tracer asks MPI nothing it could fail on, so the
    # error MPI reports is the application's own call's, as without the tracer.
    def invalid_handle(status, report):
        invalid("invalid-communicator", "called", [0, 1, 2, 3],
                "allreduce called without a valid communicator")(status, report)
        err = mpi_error_output("invalid_handle")
        assert "MPI_Comm_size" not in err and "MPI_Comm_rank" not in err, err

    case("invalid_handle", "bug_invalid", ["handle"], 30, None, invalid_handle)

    # MPI_DATATYPE_NULL: the tracer's look-up of a datatype it has not seen fails quietly, and MPI
    # reports the application's MPI_Allreduce, as untraced. The call is recorded with an invalid
    # datatype: its finding, no datatype or count mismatch, and no unexplained hang.
    def invalid_type(status, report):
        invalid("invalid-datatype", "invalid datatype", [0, 1, 2, 3],
                "allreduce on world called with a handle that is no datatype on ranks 0-3")(
                    status, report)
        assert not of(report, "datatype-mismatch"), [f["message"] for f in report["findings"]]
        for f in of(report, "hang"):
            assert any("passed a handle that is no datatype" in n for n in f["notes"]), f
        err = mpi_error_output("invalid_type")
        assert "MPI_Type_get_envelope" not in err, err

    case("invalid_type", "bug_invalid", ["type"], 30, None, invalid_type)

    # The shape of a molecular-dynamics code: small SUMs of energies and an integer count every
    # step, no annotations. No training job: no note about "the gradient all-reduce".
    case("correct_md", "correct_md", [], 60, False, expect_clean)

    # Two real jobs' files in one folder: refused with the list of jobs, then analyzed one job at
    # a time with --job.
    def two_jobs():
        nonlocal passed
        name = "two_jobs"
        try:
            both = os.path.join(args.work, name)
            other = os.path.join(args.work, name + "_other")
            run_job(args, "correct_uniform", [], both, 60)
            run_job(args, "bug_signature", ["count"], other, 10)
            for f in os.listdir(other):
                shutil.copy(os.path.join(other, f), both)
            out = subprocess.run([args.collcheck, "analyze", "--quiet", both],
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 2, out
            assert "2 different jobs; name the one to analyze with --job ID" in out.stderr, out
            listed = subprocess.run([args.collcheck, "analyze", "--list-jobs", both],
                                    capture_output=True, text=True, timeout=60)
            assert listed.returncode == 0, listed
            jobs = [line.split("\t") for line in listed.stdout.splitlines()]
            assert len(jobs) == 2 and all(j[1] == f"{RANKS} file(s)" for j in jobs), jobs
            for job in jobs:
                assert f"job '{job[0]}': {RANKS} file(s), world size {RANKS}" in out.stderr, out
            verdicts = {}
            for job in jobs:
                one = subprocess.run([args.collcheck, "analyze", "--json", "-", "--quiet",
                                      "--job", job[0], both],
                                     capture_output=True, text=True, timeout=60)
                rules = sorted({f["rule"] for f in json.loads(one.stdout)["findings"]})
                verdicts[one.returncode] = rules
            assert sorted(verdicts) == [0, 1], verdicts
            assert verdicts[0] == [] and "count-mismatch" in verdicts[1], verdicts
            absent = subprocess.run([args.collcheck, "analyze", "--job", "no-such-job", both],
                                    capture_output=True, text=True, timeout=60)
            assert absent.returncode == 2, absent
            assert "no trace file of job 'no-such-job' here; the jobs found:" in absent.stderr
            passed += 1
            print(f"ok   {name}")
        except (AssertionError, ValueError, IndexError) as e:
            failures.append(name)
            print(f"FAIL {name}: {e}")
        # Later users of the work folder (analyzer.thread_split) take each folder for one job.
        for folder in (name, name + "_other"):
            shutil.rmtree(os.path.join(args.work, folder), ignore_errors=True)

    two_jobs()

    if args.nccl:
        def clean_but_unverified_average(status, report):
            # Participation and signatures are clean; its PreMulSum 1/P averages per-rank values
            # with no count known (no annotation, no count reduction): one note says so.
            notes = [f for f in report["findings"] if f["rule"] == "unverified-reduction"]
            others = [f["message"] for f in report["findings"] if f not in notes]
            assert others == [], others
            assert len(notes) == 1 and notes[0]["severity"] == "note", notes
            assert "no valid counts" in notes[0]["message"], notes[0]["message"]
            assert status == 0, status

        case("nccl_correct", "nccl_job", ["correct"], 60, False, clean_but_unverified_average)

        def premulsum(status, report):
            found = of(report, "premulsum-scalar-mismatch")
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            assert ranks(found[0], "differs") == [1], found[0]
            assert "scalar 0.5" in found[0]["message"], found[0]["message"]
            assert found[0]["severity"] == "note"
            others = [f for f in report["findings"] if f["rule"] in PARTICIPATION]
            assert len(others) == 1, [f["message"] for f in others]

        case("nccl_premulsum", "nccl_job", ["premulsum"], 30, None, premulsum)

        def sendrecv(status, report):
            found = of(report, "send-recv-mismatch")
            assert found, [f["message"] for f in report["findings"]]
            assert "rank 0 sends 256 x float32 to rank 1" in found[0]["message"], found[0]
            assert "which receives 128" in found[0]["message"], found[0]
            assert status == 1

        case("nccl_sendrecv", "nccl_job", ["sendrecv"], 60, None, sendrecv)

    if args.neighbors:
        case("neighbors_correct", args.neighbors, [], 60, False, expect_clean)

        # Rank 3 has no neighbors on the last graph and skips its neighborhood all-gather there:
        # nobody waits for it, the job ends, and the call is still one every member must issue.
        def neighbors_skipped(status, report):
            found = of(report, "missing-participant")
            assert len(found) == 1, [f["message"] for f in report["findings"]]
            assert ranks(found[0], "issued") == [0, 1, 2], found[0]
            assert ranks(found[0], "did not issue") == [3], found[0]
            assert "neighbor_allgather" in found[0]["message"], found[0]["message"]
            assert found[0]["seq"]["first"] == 0, found[0]
            assert len(report["findings"]) == 1, [f["message"] for f in report["findings"]]
            assert status == 1

        case("neighbors_skipped", args.neighbors, ["skip"], 30, False, neighbors_skipped)

    if args.fortran:
        for program in ("mpi_fortran", "mpi_fortran_f08"):
            path = os.path.join(args.fortran, program)
            case(f"{program}_correct", path, [], 60, False, expect_clean)

            def fortran_count(status, report):
                found = of(report, "count-mismatch")
                assert len(found) == 1, [f["message"] for f in report["findings"]]
                assert ranks(found[0], "differs") == [1], found[0]
                assert found[0]["seq"]["first"] == 3, found[0]
                assert status == 1

            case(f"{program}_count", path, ["count"], 60, None, fortran_count)

    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
