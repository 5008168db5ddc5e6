#!/usr/bin/env python3
"""What collcheck.call_sites adds to a Python call: a function decorated with it against the same
function undecorated, both doing nothing, timed over many calls in one process. Run it with the
preload library loaded, as a traced job would (without it the decorator returns the function
itself and adds nothing):

    LD_PRELOAD=$PWD/build/lib/libcollcheck_preload.so COLLCHECK_OUTPUT=/tmp/sites-bench \\
        PYTHONPATH=tracer/python python3 bench/tracer/python_sites.py [CALLS]

Prints JSON: ns per call for each (best of five interleaved rounds), and their difference."""
import json
import sys
import time

import collcheck


def plain():
    return None


decorated = collcheck.call_sites(plain)


def per_call(function, calls):
    start = time.perf_counter_ns()
    for _ in range(calls):
        function()
    return (time.perf_counter_ns() - start) / calls


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    if decorated is plain:
        print("the collcheck preload library is not loaded: nothing to measure", file=sys.stderr)
        return 2
    decorated()  # the site's first sight: written once, not timed
    without, with_site = float("inf"), float("inf")
    for _ in range(5):
        without = min(without, per_call(plain, calls))
        with_site = min(with_site, per_call(decorated, calls))
    print(json.dumps({"calls": calls, "python": sys.version.split()[0],
                      "ns_without": round(without, 1), "ns_with_site": round(with_site, 1),
                      "ns_added": round(with_site - without, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
