// The C interface between the analyzer and its MPI plugin (libcollcheck_mpi.so), which
// transport.cpp loads with dlopen. Plain C types only, so the plugin and the analyzer need not
// share a C++ standard library build; bump the version on any change to these declarations.
#pragma once

#include <stdint.h>

#define COLLCHECK_MPI_ABI_VERSION 4

#ifdef __cplusplus
extern "C" {
#endif

// Called at rank 0 once per process, in rank order, before that process's bytes arrive: where to
// put them, `bytes` long (null when `bytes` is 0; null for more: the memory cannot be had, and the
// gather fails at once, with processes still waiting in their sends: the caller ends the job). It
// must not throw: the other processes wait for their turn.
// The bytes arrive straight where they are to stay: no buffer of the message's size in between.
typedef void *(*collcheck_mpi_place_fn)(void *ctx, int rank, uint64_t bytes);

// One part of what a process sends: a gather sends the concatenation of its parts, so that a
// message of a header and a large log is not first copied into one buffer.
typedef struct {
  const void *data;
  uint64_t bytes;
} collcheck_mpi_part;

// COLLCHECK_MPI_ABI_VERSION as the plugin was built; the loader refuses any other.
int collcheck_mpi_abi_version(void);
// Initializes MPI (unless the process already did) and agrees on the gather piece size; 0 on
// success. The functions below return 0 on success or an MPI error code, described then by
// collcheck_mpi_last_error().
int collcheck_mpi_init(void);
int collcheck_mpi_rank(void);
int collcheck_mpi_size(void);
// Collective: rank 0 receives every process's bytes (any length, also beyond 2 GiB).
int collcheck_mpi_gather(const collcheck_mpi_part *parts, uint64_t count,
                         collcheck_mpi_place_fn place, void *ctx);
// Collective: `*value` becomes rank 0's value on every process.
int collcheck_mpi_broadcast(int64_t *value);
// Point to point, for messages under 2 GiB: the work a process that finished its share asks
// another for. A send never waits for the receiver: it copies the bytes and returns; finalizing
// waits until every message sent has been received.
int collcheck_mpi_send(int dest, int tag, const void *data, uint64_t bytes);
// Whether a message with `tag` from any process waits; if so (*found 1), its *source and *bytes.
int collcheck_mpi_probe(int tag, int *found, int *source, uint64_t *bytes);
// Receives the message collcheck_mpi_probe found (`bytes` as it said).
int collcheck_mpi_receive(int source, int tag, void *data, uint64_t bytes);
// A barrier that does not block: start it once, then test it until *done is 1.
int collcheck_mpi_barrier_start(void);
int collcheck_mpi_barrier_test(int *done);
// Finalizes MPI if collcheck_mpi_init initialized it.
void collcheck_mpi_finalize(void);
// Ends the whole job; for when a collective failed half-way and the others wait in it forever.
void collcheck_mpi_abort(int code);
// What the last failing call said; never null.
const char *collcheck_mpi_last_error(void);

#ifdef __cplusplus
}
#endif
