// The transport between MPI processes. Every call is a PMPI_* entry point: the collcheck tracer
// interposes MPI_* and must not see the double's own traffic.
#pragma once

#include "tests/nccl_double/src/transport.h"

#include <mpi.h>

#include <memory>
#include <string>

namespace collcheck::nccl_double {

// Initializes MPI when the application has not (it is finalized at exit then).
ncclResult_t ensureMpiInitialized();

// `privateComm` belongs to the transport from now on; errors on it are returned, not fatal.
std::unique_ptr<Transport> makeMpiTransport(MPI_Comm privateComm);

// An MPI error code as an NCCL result with MPI's text in ncclGetLastError.
ncclResult_t mpiFailure(int code, const std::string &during);

} // namespace collcheck::nccl_double
