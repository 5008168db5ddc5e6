#!/usr/bin/env python3
"""The Python annotation module (tracer/python/collcheck): a no-op without the preload library (no
error, no file), records under the real preload library, the PyTorch declarations on stand-in
objects with the attributes of DDP, FSDP1 and FSDP2 (real DDP: torch_ddp_test.py), and a
Python DDP-shaped job over real MPI whose reductions the analyzer verifies from those
declarations."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

failures = []


def case(name):
    def wrap(test):
        try:
            test()
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL {name}: {e}")
        return test
    return wrap


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "preload", "module", "mpirun", "work"):
        p.add_argument("--" + option, required=True)
    args = p.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)

    def python(code, preload, output):
        env = dict(os.environ, PYTHONPATH=args.module, COLLCHECK_OUTPUT=output)
        env.pop("LD_PRELOAD", None)
        if preload:
            env["LD_PRELOAD"] = args.preload
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                              capture_output=True, text=True, timeout=60)

    def records(output):
        files = os.listdir(output)
        assert len(files) == 1, files
        out = subprocess.run([args.collcheck, "dump", os.path.join(output, files[0])],
                             capture_output=True, text=True, check=True)
        return [json.loads(line) for line in out.stdout.splitlines()[1:]]

    loop = """
        import collcheck
        print(collcheck.active())
        collcheck.reducer_scale(0.25, every_window=True)
        for window in range(2):
            collcheck.window_begin(window)
            collcheck.valid_count(2)
            collcheck.valid_count(3.0)
            collcheck.normalization("local-mean")
        collcheck.normalization(collcheck.MULTIPLIER, 0.125)
    """

    @case("python.no_preload_no_error_no_file")
    def _():
        output = os.path.join(args.work, "absent")
        out = python(loop, preload=False, output=output)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "False", out.stdout
        assert not os.path.exists(output), os.listdir(output)

    @case("python.no_preload_reads_no_tensor")
    def _():
        # A tensor's .item() waits for its device: without the tracer nothing may call it.
        out = python("""
            import collcheck

            class DeviceScalar:
                def item(self):
                    raise AssertionError("item() called without the tracer")

            collcheck.window_begin(0)
            collcheck.valid_count(DeviceScalar())
            collcheck.normalization(collcheck.MULTIPLIER, DeviceScalar())
            collcheck.reducer_scale(DeviceScalar(), every_window=True)
            collcheck.window_begin(1)
            print("done")
        """, preload=False, output=os.path.join(args.work, "absent-tensor"))
        assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr

    @case("python.call_sites_cost_nothing_without_preload")
    def _():
        out = python("""
            import collcheck, collcheck.torch

            def reduce(): return "reduced"
            print(collcheck.call_sites(reduce) is reduce, collcheck.torch.record_call_sites())
            with collcheck.site("train.py", 12, "step"):
                print(reduce(), collcheck.source_site("train.py", 12, "step"))
            try:
                collcheck.source_site("train.py", -1, "step")
            except ValueError as e:
                print("ValueError")
        """, preload=False, output=os.path.join(args.work, "absent-sites"))
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["True", "[]", "reduced", "0", "ValueError"], out.stdout

    @case("python.records_under_preload")
    def _():
        output = os.path.join(args.work, "present")
        out = python(loop, preload=True, output=output)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "True", out.stdout
        got = [(r["kind"], r["window"], r.get("value", r.get("multiplier", r.get("count"))),
                r.get("normalization")) for r in records(output)]
        expected = [("reducer_scale", 0, 0.25, None)]
        for window in range(2):
            expected += [("window_begin", window, window, None),
                         ("reducer_scale", window, 0.25, None),  # repeated: every_window
                         ("valid_count", window, 2.0, None), ("valid_count", window, 3.0, None),
                         ("normalization", window, 0.0, "local_mean")]
        expected.append(("normalization", 1, 0.125, "multiplier"))
        assert got == expected, f"{got}\n!= {expected}"

    @case("python.bad_input_is_a_clear_error")
    def _():
        out = python("""
            import collcheck
            for call in (lambda: collcheck.normalization("bogus"),
                         lambda: collcheck.window_begin(-1),
                         lambda: collcheck.valid_count("many")):
                try:
                    call()
                except (ValueError, TypeError) as e:
                    print(type(e).__name__, e)
        """, preload=True, output=os.path.join(args.work, "bad"))
        lines = out.stdout.splitlines()
        assert len(lines) == 3, out
        assert "'bogus' is not one of" in lines[0], lines
        assert "non-negative" in lines[1], lines
        assert "expected a number, not str" in lines[2], lines

    stand_ins = """
        import collcheck, collcheck.torch

        class ProcessGroup:                 # c10d ProcessGroup: size()
            def __init__(self, size): self._size = size
            def size(self): return self._size

        class DistributedDataParallel:     # DDP keeps module, process_group, register_comm_hook
            def __init__(self, size):
                self.module = object(); self.process_group = ProcessGroup(size); self.hooks = []
            def register_comm_hook(self, state, hook): self.hooks.append((state, hook))

        class FullyShardedDataParallel:    # FSDP1 keeps its divide factors and comm hook
            def __init__(self, pre, post, hook=None):
                self._gradient_predivide_factor = pre
                self._gradient_postdivide_factor = post
                self._comm_hook = hook

        class ParamGroup:                  # FSDP2's FSDPParamGroup settings
            def __init__(self, force_sum, factor):
                self.force_sum_reduction_for_comms = force_sum
                self.gradient_divide_factor = factor

        class FSDPState:
            def __init__(self, group): self._fsdp_param_group = group

        class FSDPModule:                  # fully_shard: _get_fsdp_state()
            def __init__(self, force_sum, factor):
                self.state = FSDPState(ParamGroup(force_sum, factor))
            def _get_fsdp_state(self): return self.state
    """

    @case("python.torch_declarations_on_stand_ins")
    def _():
        output = os.path.join(args.work, "torch")
        out = python(textwrap.dedent(stand_ins) + textwrap.dedent("""
            ddp = DistributedDataParallel(4)
            print(collcheck.torch.declare_ddp(ddp))
            collcheck.window_begin(0)
            collcheck.window_begin(1)
            print(collcheck.torch.fsdp_reducer_scale(FullyShardedDataParallel(2.0, 4.0)))
            print(collcheck.torch.fsdp_reducer_scale(FSDPModule(False, None)))
            print(collcheck.torch.fsdp_reducer_scale(FSDPModule(True, 8.0)))
            for bad in (lambda: collcheck.torch.declare_fsdp(FullyShardedDataParallel(1, 2, hook=print)),
                        lambda: collcheck.torch.declare_ddp(object()),
                        lambda: collcheck.torch.declare_fsdp(object())):
                try:
                    bad()
                except (TypeError, ValueError) as e:
                    print(type(e).__name__)
            # The comm-hook form: declares before each bucket, then DDP's default allreduce_hook.
            calls = []
            collcheck.torch._default_allreduce_hook = lambda: (lambda state, bucket: calls.append((state, bucket)) or "future")
            class Bucket:                  # c10d's GradBucket: index()
                def index(self): return 0
            bucket = Bucket()
            hooked = DistributedDataParallel(2)
            print(collcheck.torch.declare_ddp(hooked, comm_hook=True))
            state, hook = hooked.hooks[0]
            print(state is hooked.process_group, hook(state, bucket), calls == [(state, bucket)])
        """), preload=True, output=output)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == ["0.25", "0.125", "None", "0.125", "ValueError", "TypeError",
                                      "TypeError", "0.5", "True", "future", "True"], out.stdout
        scales = [(r["window"], r["value"]) for r in records(output) if r["kind"] == "reducer_scale"]
        # declare_ddp (window 0), again at both window_begins, then the hook's own declaration.
        assert scales == [(0, 0.25), (0, 0.25), (1, 0.25), (1, 0.5)], scales

    @case("python.installs_by_path")
    def _():
        # From a copy: setuptools builds in the source folder it is given.
        source = os.path.join(args.work, "source")
        shutil.copytree(args.module, source, ignore=shutil.ignore_patterns("__pycache__"))
        site = os.path.join(args.work, "site")
        # Offline, pip builds with the interpreter's own setuptools and wheel: use one that has
        # both (Debian's python3 with python3-wheel does).
        def can_build(python):
            return all(subprocess.run([python, *check], capture_output=True).returncode == 0
                       for check in (["-c", "import setuptools, wheel"], ["-m", "pip", "-V"]))

        installers = [python for python in (sys.executable, "/usr/bin/python3")
                      if os.path.exists(python) and can_build(python)]
        assert installers, "no python3 with pip, setuptools and wheel to install with"
        installer = installers[0]
        out = subprocess.run([installer, "-m", "pip", "install", "--quiet", "--no-index",
                              "--no-build-isolation", "--no-deps", "--target", site, source],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stdout + out.stderr
        env = dict(os.environ, PYTHONPATH=site)
        env.pop("LD_PRELOAD", None)
        out = subprocess.run([installer, "-c", "import collcheck, collcheck.torch; "
                              "print(collcheck.__file__, collcheck.active())"],
                             env=env, capture_output=True, text=True, cwd=args.work)
        assert out.returncode == 0 and out.stdout.startswith(site), out.stdout + out.stderr
        assert out.stdout.split()[-1] == "False", out.stdout

    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_job.py")
    for name, extra, update, clean in (("wrong", [], "update 1 w 9.8", False),
                                       ("right", ["--compensate"], "update 1 w 9.75", True)):
        @case(f"python.ddp_job_over_mpi.{name}")
        def _(extra=extra, update=update, clean=clean, name=name):
            output = os.path.join(args.work, "job." + name)
            env = dict(os.environ, PYTHONPATH=args.module, COLLCHECK_OUTPUT=output,
                       LD_PRELOAD=args.preload)
            out = subprocess.run(args.mpirun.split() + ["-np", "2", sys.executable, job] + extra,
                                 env=env, capture_output=True, text=True, timeout=120,
                                 stdin=subprocess.DEVNULL)
            assert out.returncode == 0, out.stderr
            assert out.stdout.strip() == update, out.stdout
            report = json.loads(subprocess.run(
                [args.collcheck, "analyze", "--json", "-", "--quiet", output],
                capture_output=True, text=True).stdout)
            rules = [f["rule"] for f in report["findings"]]
            if clean:
                assert rules == [], rules
            else:
                assert rules == ["uncompensated-mean"], rules
                f = report["findings"][0]
                assert "1/4 (rank 0) and 1/12 (rank 1)" in f["message"], f["message"]
                assert "declared reducer scale" in " ".join(f["notes"]), f["notes"]

    print(f"{len(failures)} failed" + (": " + ", ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
