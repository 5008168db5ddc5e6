#!/usr/bin/env python3
"""Checks the traces of the GPU check (tests/gpu/README.md) against what the programs asked for.

  check_traces.py --collcheck BIN calls TRACE_DIR MANIFEST
      nccl_device_calls: every call in the manifest is on the NCCL communicator, in order, with
      its fields (kind, count, datatype, operator, root or peer, in place, PreMulSum scalar); the
      group and reduction-operator records are there; the three count reductions' values were
      copied from device memory (value_capture records, input and output, device_buffer).
  check_traces.py --collcheck BIN torch TRACE_DIR MANIFEST
      torch_nccl_job.py: the manifest's collectives appear in order among the NCCL calls of the
      worker's trace, the one-element sum with its captured value; DDP's own calls are listed.
  --nccl-log DIR (either): the trace holds exactly the calls NCCL itself logged (NCCL_DEBUG=INFO,
      NCCL_DEBUG_SUBSYS=COLL, NCCL_DEBUG_FILE=DIR/nccl.%p.log), in order.

Prints one line per check and exits 1 if any failed."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

failures = []


def ok(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)
    return condition


def dump(collcheck, path):
    out = subprocess.run([collcheck, "dump", path], capture_output=True, text=True)
    if out.returncode != 0:
        ok(False, f"collcheck dump {path}: {out.stderr.strip()}")
        return None, [], ""
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    if not lines:
        ok(False, f"collcheck dump {path}: no header")
        return None, [], ""
    return lines[0], lines[1:], out.stderr.strip()


def traces_with_nccl(collcheck, directory):
    """The traces holding NCCL calls (a launcher's, if any, is not judged), read without warnings."""
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "*"))):
        header, records, warnings = dump(collcheck, path)
        if header is not None and any("nccl" in r["flags"] for r in records):
            ok(not warnings, f"{os.path.basename(path)}: dump reads it without warnings "
               f"{warnings!r}")
            found.append((path, header, records))
    return found


def sequenced_nccl(records):
    calls = [r for r in records if "seq" in r and "nccl" in r["flags"]]
    return sorted(calls, key=lambda r: r["t_ns"])


def manifest(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


def same_call(record, want):
    """want: kind count dtype op [root in_place [scalar]]"""
    kind, count, dtype, op = want[0], int(want[1]), want[2], want[3]
    if (record["kind"], record["count"], record["dtype"], record["op"]) != (kind, count, dtype, op):
        return False
    if len(want) > 4:
        key = "peer" if kind in ("send", "recv") else "root"
        if record.get(key) != int(want[4]) or ("in_place" in record["flags"]) != (want[5] == "1"):
            return False
    if len(want) > 6:
        if want[6] == "unknown":
            return "scalar_unknown" in record["flags"] and "scalar" not in record
        return record.get("scalar") == float(want[6])
    return True


def describe(record):
    fields = [record["kind"], str(record["count"]), record["dtype"], record["op"]]
    fields.append(f"{'peer' if record['kind'] in ('send', 'recv') else 'root'} "
                  f"{record.get('peer', record.get('root'))}")
    return " ".join(fields) + f" flags {record['flags']}"


def captures(records):
    return [r for r in records if r["kind"] == "value_capture"]


def check_header(path, header):
    name = os.path.basename(path)
    ok(header["finished"], f"{name}: the trace was finished (the process exited cleanly)")
    ok(header["dropped_records"] == 0, f"{name}: no records dropped")
    ok(header["nccl_version"] > 0, f"{name}: the NCCL version is recorded ({header['nccl_version']})")


NCCL_NAMES = {"AllReduce": "allreduce", "Broadcast": "broadcast", "Reduce": "reduce",
              "AllGather": "allgather", "ReduceScatter": "reduce_scatter", "Send": "send",
              "Recv": "recv", "AlltoAll": "alltoall", "Gather": "gather", "Scatter": "scatter"}
NCCL_LINE = re.compile(r"NCCL INFO (\w+): opCount \S+ sendbuff \S+ recvbuff \S+ count (\d+)")


def check_against_nccl_log(log_dir, header, records):
    """NCCL's own log of the calls it received (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=COLL, one file
    per process, named nccl.PID.log): the trace of that process must hold the same calls in the
    same order, whichever way the application reached NCCL."""
    path = os.path.join(log_dir, f"nccl.{header['pid']}.log")
    if not ok(os.path.exists(path), f"NCCL's log of process {header['pid']} exists ({path})"):
        return None
    with open(path, errors="replace") as f:
        lines = [line for line in f if "opCount" in line]
    logged = [(NCCL_NAMES.get(m.group(1), m.group(1)), int(m.group(2)))
              for m in map(NCCL_LINE.search, lines) if m]
    if not ok(len(logged) == len(lines) and logged,
              f"NCCL's log: {len(lines)} call lines, {len(logged)} understood"):
        print("info  first lines: " + "".join(lines[:3]))
        return None
    traced = [(r["kind"], r["count"]) for r in sequenced_nccl(records)]
    ok(traced == logged, f"the trace holds the {len(logged)} calls NCCL logged, in order"
       + ("" if traced == logged else f": NCCL {logged}; trace {traced}"))
    return logged


def the_nccl_trace(collcheck, directory, nccl_log):
    """The one trace with NCCL calls in `directory`, its header checked and, with `nccl_log`, its
    calls compared with NCCL's log: (records, the calls NCCL logged or None), or None."""
    traces = traces_with_nccl(collcheck, directory)
    if not ok(len(traces) == 1, f"one trace with NCCL calls in {directory} (found {len(traces)})"):
        return None
    path, header, records = traces[0]
    check_header(path, header)
    logged = check_against_nccl_log(nccl_log, header, records) if nccl_log else None
    return records, logged


def check_calls(collcheck, directory, manifest_path, nccl_log):
    found = the_nccl_trace(collcheck, directory, nccl_log)
    if not found:
        return
    records, _ = found
    creates = [r for r in records if r["kind"] == "comm_create" and "nccl" in r["flags"]]
    ok(len(creates) == 1 and creates[0]["origin"] == "nccl_init_all" and creates[0]["size"] == 1,
       f"one NCCL communicator, from ncclCommInitAll, of size 1: {creates}")
    want = manifest(manifest_path)
    got = sequenced_nccl(records)
    ok(len(got) == len(want), f"{len(want)} calls asked for, {len(got)} recorded")
    for i, (w, r) in enumerate(zip(want, got)):
        ok(same_call(r, w) and r["seq"] == i and r["rank"] == 0 and not r["failed"],
           f"call {i}: asked {' '.join(w)}; recorded seq {r['seq']} {describe(r)}")
    kinds = [r["kind"] for r in records]
    ok(kinds.count("group_start") == 2 and kinds.count("group_end") == 2, "two groups recorded")
    ok(kinds.count("redop_create") == 2 and kinds.count("redop_destroy") == 2,
       "two PreMulSum operators created and destroyed")
    values = [(r["dtype"], r["count"], r["value"], r.get("output"), "device_buffer" in r["flags"])
              for r in captures(records)]
    expected = []
    for dtype, elements in (("float32", [37.0]), ("float64", [3.5, 8.0]), ("int64", [12.0])):
        for output in (False, True):
            expected += [(dtype, i, v, output, True) for i, v in enumerate(elements)]
    ok(sorted(values, key=str) == sorted(expected, key=str),
       f"count reductions copied from device memory: {sorted(values, key=str)}")


def check_torch(collcheck, directory, manifest_path, nccl_log):
    found = the_nccl_trace(collcheck, directory, nccl_log)
    if not found:
        return
    records, logged = found
    got = sequenced_nccl(records)
    want = manifest(manifest_path)
    at = 0
    matched = []
    for w in want:
        start = at
        while at < len(got) and not same_call(got[at], w):
            at += 1
        if at == len(got) and logged is not None and (w[0], int(w[1])) not in logged:
            # Not a call the tracer missed: the library never received it.
            print(f"info  asked {' '.join(w)}: PyTorch made no NCCL call for it (none in NCCL's "
                  "log either)")
            at = start
            continue
        if not ok(at < len(got), f"asked {' '.join(w)}: recorded in order"):
            break
        matched.append(at)
        at += 1
    others = [describe(r) for i, r in enumerate(got) if i not in matched]
    print(f"info  {len(got)} NCCL calls recorded, {len(others)} of them PyTorch's own: {others}")
    one = [r for r in captures(records) if r["dtype"] == "float32" and r["value"] == 37.0]
    ok(len(one) == 2 and all("device_buffer" in r["flags"] for r in one),
       f"the one-element sum's value copied from device memory, input and output: {one}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--collcheck", required=True)
    parser.add_argument("what", choices=["calls", "torch"])
    parser.add_argument("trace_dir")
    parser.add_argument("manifest")
    parser.add_argument("--nccl-log", help="folder of NCCL's logs (nccl.PID.log) to compare with")
    args = parser.parse_args()
    (check_calls if args.what == "calls" else check_torch)(args.collcheck, args.trace_dir,
                                                           args.manifest, args.nccl_log)
    print(f"{len(failures)} check(s) failed" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
