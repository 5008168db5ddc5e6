// The recording half of the MPI collective wrappers, generated from mpi_collectives.def: for each
// collective, start<Name> takes the C function's arguments, records the call and says what is left
// to do once the real call returned. The C bindings (mpi_wrappers.cpp) and the Fortran bindings
// (mpi_fortran.cpp) both record through it, so a call is recorded the same whichever binding the
// program used.
#pragma once

#include "tracer/preload/capture.h"
#include "tracer/preload/mpi_support.h"

namespace collcheck::tracer::COLLCHECK_MPI_NS {

// What a wrapper started before the real call.
struct Started {
  Record *record = nullptr;            // null: not recorded (tracing off, a nested call)
  const void *captureOutput = nullptr; // a count reduction's output, read after the call
  bool holdsValues = false;            // the record holds its values (format::holdsValues)
};

// After the real call: stamps the record's end (failed: the call returned an error) and captures
// the output values it asked for.
COLLCHECK_HOT void finish(const Started &started, bool failed) {
  if (started.holdsValues) [[unlikely]]
    return finishInline(*started.record, started.captureOutput, failed);
  endRecord(started.record, failed);
  if (started.captureOutput) [[unlikely]]
    finishCapture(*started.record, started.captureOutput, failed);
}

#define COLLCHECK_WITH_REQUEST(...) (__VA_ARGS__, MPI_Request * request)
#define COLLCHECK_WITH_REQUEST_ARG(...) (__VA_ARGS__, request)
// A persistent collective's initialization: the blocking form's parameters, an info and a request.
#define COLLCHECK_WITH_INFO_REQUEST(...) (__VA_ARGS__, MPI_Info info, MPI_Request * request)
#define COLLCHECK_WITH_INFO_REQUEST_ARG(...) (__VA_ARGS__, info, request)

#define COLLECTIVE(blocking, lowerBlocking, nonblocking, lowerNonblocking, kind, params, args,     \
                   fill)                                                                           \
  Started start##blocking params;                                                                  \
  Started start##nonblocking COLLCHECK_WITH_REQUEST params;                                        \
  Started start##blocking##_init COLLCHECK_WITH_INFO_REQUEST params;
#include "tracer/preload/mpi_collectives.def"
#undef COLLECTIVE

} // namespace collcheck::tracer::COLLCHECK_MPI_NS
