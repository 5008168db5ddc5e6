#!/usr/bin/env python3
"""PyTorch over NCCL for the GPU check (tests/gpu/README.md): torch.distributed with the NCCL
backend (started by torchrun, world size 1), a few collectives on CUDA tensors and one
DistributedDataParallel training step. PyTorch loads its own libnccl from its package folder; the
tracer must record these calls all the same.

Writes MANIFEST: one line per collective this script asks for, in the names `collcheck dump` uses
(kind count dtype op); torch may issue more of its own (DDP's), which the checker reports but does
not require."""
import os
import sys

import torch
import torch.distributed as dist


def main(manifest_path):
    dist.init_process_group("nccl", device_id=torch.device("cuda", 0))
    rank, size = dist.get_rank(), dist.get_world_size()
    lines = []

    def expect(kind, count, dtype, op):
        lines.append(f"{kind} {count} {dtype} {op}")

    t = torch.arange(1024, dtype=torch.float32, device="cuda")
    for _ in range(3):
        dist.all_reduce(t)
        expect("allreduce", 1024, "float32", "sum")
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    expect("allreduce", 1024, "float32", "avg")
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    expect("allreduce", 1024, "float32", "max")
    b = torch.full((300,), 7, dtype=torch.int64, device="cuda")
    dist.broadcast(b, src=0)
    expect("broadcast", 300, "int64", "none")
    gathered = torch.empty(256 * size, dtype=torch.bfloat16, device="cuda")
    dist.all_gather_into_tensor(gathered, torch.ones(256, dtype=torch.bfloat16, device="cuda"))
    expect("allgather", 256, "bfloat16", "none")
    scattered = torch.empty(128, dtype=torch.float32, device="cuda")
    dist.reduce_scatter_tensor(scattered, torch.ones(128 * size, device="cuda"))
    expect("reduce_scatter", 128, "float32", "sum")
    # A count reduction: a one-element sum on the device, whose value the tracer copies.
    n = torch.tensor([37.0], device="cuda")
    dist.all_reduce(n)
    expect("allreduce", 1, "float32", "sum")

    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4).cuda(), device_ids=[0])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 16, device="cuda")
    model(x).pow(2).mean().backward()
    opt.step()
    torch.cuda.synchronize()
    print(f"rank {rank} of {size}: sum {t.sum().item():.6g}, count {n.item():g}, "
          f"weight sum {sum(p.sum().item() for p in model.parameters()):.6g}, "
          f"NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}")
    dist.destroy_process_group()
    with open(manifest_path, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
