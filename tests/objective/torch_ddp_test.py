#!/usr/bin/env python3
"""collcheck.torch.declare_ddp on real PyTorch (Debian's python3-torch): two processes train a
DistributedDataParallel model over the gloo backend under the preload library, with the one-line
declaration through a DDP communication hook. Checked: DDP accepts the hook; the hook declares
DDP's 1/P before every bucket's all-reduce (one reducer_scale record per bucket and step, in its
window); the gradients come out exactly as without the hook (the mean of the ranks' local
gradients, computed here without torch.distributed); and declare_ddp returns 1/P.

Then the same workers once more, started as users start them: `collcheck run -- torchrun ...`.

gloo moves the buckets itself, outside MPI and NCCL, so the tracer records the declarations but not
the all-reduces: what is tested is the declaration against the real wrapper, and that the analyzer
refuses to call such a run clean. FSDP is not tested
here: Debian's torch 1.13 cannot import torch.distributed.fsdp under Python 3.11 (a dataclass in
its sharded-tensor metadata is rejected), so the FSDP declarations are tested on stand-ins only
(python_module_test.py).

Exit status 77 (skipped) when torch cannot be imported."""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap

WORKER = """
    import json, sys
    import torch, torch.distributed as dist
    import collcheck, collcheck.torch

    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    # Two parameters, buckets as small as DDP makes them: the hook runs once per bucket.
    net = torch.nn.Sequential(torch.nn.Linear(3, 2, bias=False), torch.nn.Linear(2, 1, bias=False))
    model = torch.nn.parallel.DistributedDataParallel(net, bucket_cap_mb=1e-6)
    factor = collcheck.torch.declare_ddp(model, comm_hook=True)
    grads = []
    for step in range(2):
        n = 2 + 4 * rank + step
        x = torch.arange(3 * n, dtype=torch.float64).reshape(n, 3).float() / 10 + rank
        collcheck.window_begin(step)
        collcheck.valid_count(n)
        collcheck.normalization("local-mean")
        model.zero_grad()
        model(x).pow(2).mean().backward()
        grads.append([p.grad.flatten().tolist() for p in model.parameters()])
    print(json.dumps({"rank": rank, "factor": factor, "grads": grads,
                      "weights": [p.detach().flatten().tolist() for p in model.parameters()]}))
    sys.stdout.flush()
    # Torn down before the interpreter exits: gloo's threads left running then end the process
    # with std::terminate ("terminate called without an active exception"), now and then.
    dist.barrier()
    dist.destroy_process_group()
"""


def local_gradients(weights, ranks):
    """Each rank's own gradient of its local mean, and their mean: what DDP must produce."""
    import torch

    expected = []
    for step in range(2):
        per_rank = []
        for rank in range(ranks):
            n = 2 + 4 * rank + step
            x = torch.arange(3 * n, dtype=torch.float64).reshape(n, 3).float() / 10 + rank
            a = torch.tensor(weights[0]).reshape(2, 3).requires_grad_()
            b = torch.tensor(weights[1]).reshape(1, 2).requires_grad_()
            (x @ a.T @ b.T).pow(2).mean().backward()
            per_rank.append([a.grad.flatten(), b.grad.flatten()])
        expected.append([(sum(g[i] for g in per_rank) / ranks).tolist() for i in range(2)])
    return expected


def main():
    p = argparse.ArgumentParser()
    for option in ("collcheck", "preload", "module", "work"):
        p.add_argument("--" + option, required=True)
    args = p.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"skipped: torch cannot be imported ({e}); scripts/setup installs python3-torch")
        return 77
    os.makedirs(args.work, exist_ok=True)
    output = os.path.join(args.work, "traces")
    subprocess.run(["rm", "-rf", output], check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ranks = 2
    workers = []
    for rank in range(ranks):
        env = dict(os.environ, PYTHONPATH=args.module, COLLCHECK_OUTPUT=output,
                   LD_PRELOAD=args.preload, RANK=str(rank), WORLD_SIZE=str(ranks),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        workers.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(WORKER)], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for w in workers:
        out, err = w.communicate(timeout=180)
        assert w.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    failures = []

    def check(name, condition, detail):
        print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))
        if not condition:
            failures.append(name)

    check("torch.declare_ddp_returns_one_over_p", all(r["factor"] == 0.5 for r in results),
          [r["factor"] for r in results])
    expected = local_gradients(results[0]["weights"], ranks)
    for r in results:
        close = all(abs(a - b) < 1e-5 for step in range(2) for i in range(2)
                    for a, b in zip(r["grads"][step][i], expected[step][i]))
        check(f"torch.rank{r['rank']}_gradients_are_the_mean_of_local_gradients", close,
              f"{r['grads']} != {expected}")

    files = sorted(os.listdir(output))
    check("torch.one_trace_per_process", len(files) == ranks, files)
    for name in files:
        dump = subprocess.run([args.collcheck, "dump", os.path.join(output, name)],
                              capture_output=True, text=True, check=True)
        records = [json.loads(line) for line in dump.stdout.splitlines()[1:]]
        scales = [(r["window"], r["value"]) for r in records if r["kind"] == "reducer_scale"]
        # The hook declares 1/P right before each bucket's all-reduce: as many a step as DDP
        # made buckets (it decides; at least one), the same in both steps.
        per_window = [sum(1 for w, _ in scales if w == step) for step in range(2)]
        check(f"torch.{name}_hook_declares_each_bucket",
              per_window[0] >= 1 and per_window[0] == per_window[1] and
              all(v == 0.5 for _, v in scales), scales)
        windows = [r["window"] for r in records if r["kind"] == "window_begin"]
        check(f"torch.{name}_windows", windows == [0, 1], windows)
    # Annotations alone: the analyzer must not call the job clean (exit 2, and why).
    verdict = subprocess.run([args.collcheck, "analyze", output], capture_output=True, text=True)
    check("torch.gloo_job_is_not_passed", verdict.returncode == 2
          and "no collective was recorded" in verdict.stderr and "gloo" in verdict.stderr,
          (verdict.returncode, verdict.stdout, verdict.stderr))

    # The same job started as users start it: `collcheck run -- torchrun ...`. torchrun (its own
    # Python process, preloaded too) starts the workers and passes the environment on.
    torchrun = shutil.which("torchrun")
    script = os.path.join(args.work, "worker.py")
    with open(script, "w") as f:
        f.write(textwrap.dedent(WORKER))
    # Debian's torchrun 1.13 under Python 3.11 cannot parse its default --redirects 0 / --tee 0
    # (Python 3.11 no longer iterates an IntFlag's zero member: "'NoneType' object has no
    # attribute 'get'"); 1 (stdout) parses. Checked untraced first.
    options = ["--standalone", "--nproc_per_node", str(ranks), "--redirects", "1", "--tee", "1"]
    untraced = torchrun and subprocess.run([torchrun, *options, "-m", "json.tool", "--help"],
                                           capture_output=True, text=True, timeout=120)
    if not torchrun:
        print("note: no torchrun on PATH: the launch through torchrun is not checked")
    elif untraced.returncode != 0:
        print("note: torchrun fails here without the tracer too, so the launch through torchrun "
              "is not checked: " + (untraced.stderr.strip().splitlines() or ["?"])[-1])
    else:
        launched = os.path.join(args.work, "torchrun-traces")
        subprocess.run(["rm", "-rf", launched], check=True)
        env = dict(os.environ, PYTHONPATH=args.module, OMP_NUM_THREADS="1")
        run = subprocess.run([args.collcheck, "run", "-o", launched, "--preload", args.preload,
                              "--", torchrun, *options, script], env=env, capture_output=True,
                             text=True, timeout=300)
        check("torchrun.job_ran", run.returncode == 0, (run.returncode, run.stderr[-3000:]))
        # One trace per worker with its windows (torchrun's own process makes no collective
        # call, so it leaves no trace).
        windows = {}
        for name in sorted(os.listdir(launched)) if os.path.isdir(launched) else []:
            dump = subprocess.run([args.collcheck, "dump", os.path.join(launched, name)],
                                  capture_output=True, text=True, check=True)
            records = [json.loads(line) for line in dump.stdout.splitlines()[1:]]
            windows[name] = [r["window"] for r in records if r["kind"] == "window_begin"]
        check("torchrun.one_trace_per_worker_with_its_windows",
              len(windows) == ranks and all(w == [0, 1] for w in windows.values()), windows)
        verdict = subprocess.run([args.collcheck, "analyze", launched], capture_output=True,
                                 text=True)
        check("torchrun.gloo_job_is_not_passed", verdict.returncode == 2
              and "gloo" in verdict.stderr, (verdict.returncode, verdict.stderr))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
