#!/usr/bin/env python3
"""A data-parallel training step written in Python, as a PyTorch DDP user would annotate it: the
seed's two ranks (targets [9, 9] and six of 7, w = 10, lr 0.1), a stand-in for DDP that keeps
DDP's attributes (module, process_group.size(), register_comm_hook) and reduces like DDP's default
(each bucket divided by the world size, then a SUM all-reduce), real MPI through ctypes, and the
collcheck module's declarations: collcheck.torch.declare_ddp(model) for the division.

    mpirun -np 2 python3 python_job.py [--compensate]   # update 1 w 9.8 (wrong), 9.75 (right)
"""
import argparse
import ctypes
import ctypes.util

import collcheck
import collcheck.torch


class MPI:
    """The few MPI calls the step needs, resolved in the process (the tracer's wrappers first)."""

    def __init__(self):
        library = ctypes.util.find_library("mpi")
        if not library:
            raise SystemExit("python_job.py: no libmpi found")
        self.lib = ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
        self.process = ctypes.CDLL(None)
        self.world = self._handle("ompi_mpi_comm_world")
        self.double = self._handle("ompi_mpi_double")
        self.int64 = self._handle("ompi_mpi_int64_t")
        self.sum = self._handle("ompi_mpi_op_sum")
        self.process.MPI_Init(None, None)
        rank, size = ctypes.c_int(), ctypes.c_int()
        self.process.MPI_Comm_rank(self.world, ctypes.byref(rank))
        self.process.MPI_Comm_size(self.world, ctypes.byref(size))
        self.rank, self.size = rank.value, size.value

    def _handle(self, name):  # Open MPI's predefined handles are addresses of globals
        return ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(self.lib, name)))

    def allreduce_sum(self, value, integral=False):
        kind, datatype = (ctypes.c_int64, self.int64) if integral else (ctypes.c_double, self.double)
        send, receive = kind(value), kind()
        self.process.MPI_Allreduce(ctypes.byref(send), ctypes.byref(receive), 1, datatype,
                                   self.sum, self.world)
        return receive.value

    def finalize(self):
        self.process.MPI_Finalize()


class ProcessGroup:
    def __init__(self, mpi):
        self.mpi = mpi

    def size(self):
        return self.mpi.size


class DataParallel:
    """Stands in for torch.nn.parallel.DistributedDataParallel: same attributes, same reduction."""

    def __init__(self, mpi):
        self.module = object()
        self.process_group = ProcessGroup(mpi)
        self.mpi = mpi

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("not used by this job")

    def reduce_gradient(self, gradient):
        return self.mpi.allreduce_sum(gradient / self.process_group.size())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--compensate", action="store_true")
    args = p.parse_args()
    mpi = MPI()
    model = DataParallel(mpi)
    collcheck.torch.declare_ddp(model)  # DDP divides every bucket by P before its SUM
    targets = [9.0, 9.0] if mpi.rank == 0 else [7.0] * 6
    w, lr = 10.0, 0.1
    collcheck.window_begin(0)
    n = len(targets)
    collcheck.valid_count(n)
    local_mean = sum(w - y for y in targets) / n
    if args.compensate:
        N = mpi.allreduce_sum(n, integral=True)
        contribution = local_mean * mpi.size * n / N
        collcheck.normalization(collcheck.MULTIPLIER, mpi.size / N)  # per item: (1/n)(P n/N)
    else:
        contribution = local_mean
        collcheck.normalization(collcheck.LOCAL_MEAN)
    w -= lr * model.reduce_gradient(contribution)
    if mpi.rank == 0:
        print(f"update 1 w {w:.10g}", flush=True)
    mpi.finalize()


if __name__ == "__main__":
    main()
