// How the ranks of a new communicator find each other without a GPU or a socket: over
// MPI_COMM_WORLD, at the process that called ncclGetUniqueId.
//
// Assumptions (documented in README.md): every rank of a communicator made by ncclCommInitRank
// is a process of one MPI job, one rank per process, and the process that generated the unique
// id is one of the ranks.
#pragma once

#include <nccl.h>

#include <mpi.h>

#include <cstdint>

namespace collcheck::nccl_double {

// A fresh id: the generating process's world rank, host, pid, a counter and random bytes.
ncclResult_t generateUniqueId(ncclUniqueId *id);

// A 64-bit digest of the id (equal on every rank that holds the same id).
std::uint64_t uniqueIdKey(const ncclUniqueId &id);

// Joins rank `rank` of `nranks` to the communicator named by `id`; on success `privateComm` is a
// new MPI communicator whose rank i is NCCL rank i.
ncclResult_t rendezvous(const ncclUniqueId &id, int nranks, int rank, MPI_Comm *privateComm);

} // namespace collcheck::nccl_double
