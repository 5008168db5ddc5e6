#!/usr/bin/env python3
"""A two-rank job whose collectives disagree (in op or datatype: MPI itself would abort on a count
that differs), made from Python lines that differ by rank,
so that the findings must name those lines (collcheck.call_sites, collcheck.torch):

1. through the program's own wrapper, decorated with collcheck.call_sites;
2. with --torch, through torch.distributed.all_reduce (MIN on rank 1 where the wrapper had MAX,
   so that it is a finding of its own) (collcheck.torch.record_call_sites), over a
   Python process group whose all-reduce is real MPI through ctypes;
3. with --torch, as the all-reduce of a DDP bucket, by torch's own default comm hook, as
   collcheck.torch.declare_ddp(model, comm_hook=True) registers it.

    mpirun -np 2 python3 python_sites_job.py [--torch --store DIR]
"""
import argparse
import ctypes
import os

import collcheck
import collcheck.torch
from python_job import MPI


class Net:  # the model DDP wraps: its bucket all-reduces are named after it
    pass


def handle(mpi, name):  # Open MPI's predefined handles are addresses of globals
    return ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(mpi.lib, name)))


@collcheck.call_sites
def reduce_values(mpi, values, op="sum"):
    """The program's own wrapper around MPI: findings name the line that called it."""
    array = (ctypes.c_double * len(values))(*values)
    mpi.process.MPI_Allreduce(ctypes.c_void_p(1), array, len(values), mpi.double,
                              handle(mpi, "ompi_mpi_op_" + op), mpi.world)  # 1: MPI_IN_PLACE
    return list(array)


def torch_part(mpi, store):
    import torch
    import torch.distributed as dist

    types = {torch.float32: handle(mpi, "ompi_mpi_float"), torch.float64: mpi.double}
    ops = {dist.ReduceOp.SUM: handle(mpi, "ompi_mpi_op_sum"),
           dist.ReduceOp.MIN: handle(mpi, "ompi_mpi_op_min")}

    class Done:  # c10d's Work, as far as all_reduce and the comm hook use it
        def __init__(self, tensors):
            self.future = torch.futures.Future()
            self.future.set_result(tensors)

        def wait(self, timeout=None):
            return True

        def get_future(self):
            return self.future

    class MpiGroup(dist.ProcessGroup):
        def __init__(self, rank, size):
            super().__init__(rank, size)

        def allreduce(self, tensors, opts=None):
            op = ops[opts.reduceOp if opts is not None else dist.ReduceOp.SUM]
            for t in tensors:
                mpi.process.MPI_Allreduce(ctypes.c_void_p(1), ctypes.c_void_p(t.data_ptr()),
                                          t.numel(), types[t.dtype], op, mpi.world)
            return Done(tensors)

    dist.Backend.register_backend("collcheck_test_mpi",
                                  lambda store, rank, size, timeout: MpiGroup(rank, size))
    dist.init_process_group("collcheck_test_mpi", rank=mpi.rank, world_size=mpi.size,
                            store=dist.FileStore(os.path.join(store, "store"), mpi.size))
    print("replaced", len(collcheck.torch.record_call_sites()) > 0, flush=True)
    if mpi.rank == 0:
        dist.all_reduce(torch.ones(4))  # site: torch rank 0
    else:
        dist.all_reduce(torch.ones(4), op=dist.ReduceOp.MIN)  # site: torch rank 1

    class Bucket:  # c10d's GradBucket, as far as the default allreduce hook uses it
        def __init__(self, tensor):
            self.tensor = tensor

        def index(self):
            return 0

        def buffer(self):
            return self.tensor

    class DistributedDataParallel:  # what declare_ddp reads and registers
        def __init__(self):
            self.module = Net()
            self.process_group = dist.distributed_c10d._get_default_group()
            self.hook = None

        def register_comm_hook(self, state, hook):
            self.hook = (state, hook)

    model = DistributedDataParallel()
    collcheck.torch.declare_ddp(model, comm_hook=True)
    state, hook = model.hook
    # The same 16 bytes: 4 floats on rank 0, 2 doubles on rank 1.
    bucket = torch.ones(4) if mpi.rank == 0 else torch.ones(2, dtype=torch.float64)
    hook(state, Bucket(bucket)).wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--torch", action="store_true")
    p.add_argument("--store")
    args = p.parse_args()
    mpi = MPI()
    if mpi.rank == 0:
        reduce_values(mpi, [1.0, 2.0])  # site: wrapper rank 0
    else:
        reduce_values(mpi, [1.0, 2.0], op="max")  # site: wrapper rank 1
    if args.torch:
        torch_part(mpi, args.store)
    print("done", flush=True)
    mpi.finalize()


if __name__ == "__main__":
    main()
