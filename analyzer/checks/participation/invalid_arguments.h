// The argument checks shared by the rules of invalid arguments and the signature rules they
// pre-empt: a count, datatype or root that is invalid on its own is reported as such, not as a
// mismatch.
#pragma once

#include "analyzer/checks/rule.h"

namespace collcheck::analyzer {

// A count the application passed as a negative int (the tracer keeps its two's complement).
inline bool hasNegativeCount(const format::Record &r) { return static_cast<int64_t>(r.count) < 0; }
// A handle MPI rejected as a datatype (MPI_DATATYPE_NULL, a freed type): the tracer's query of it
// failed.
inline bool hasInvalidDatatype(const format::Record &r) {
  return r.dataType == static_cast<uint8_t>(format::DataType::Invalid);
}
// A root outside the communicator of a rooted call (intercommunicators excepted: their roots
// are MPI_ROOT, MPI_PROC_NULL or a rank of the other group). False where the size is unknown.
bool hasInvalidRoot(const format::Record &r, const Communicator &comm);
// Comm ranks of the position whose own call satisfies `bad`, and one such call.
template <typename Bad>
std::vector<int32_t> ranksWith(const CollectiveEvent &e, Bad &&bad,
                               const format::Record *&example) {
  std::vector<int32_t> ranks;
  example = nullptr;
  if (e.records.empty()) { // every member issued the reference call
    if (bad(e.reference)) {
      example = &e.reference;
      for (size_t r = 0; r < e.comm.worldRankOf.size(); ++r)
        ranks.push_back(static_cast<int32_t>(r));
    }
    return ranks;
  }
  for (size_t r = 0; r < e.records.size(); ++r)
    if (e.records[r] && issued(e.presence[r]) && bad(*e.records[r])) {
      example = example ? example : e.records[r];
      ranks.push_back(static_cast<int32_t>(r));
    }
  return ranks;
}

} // namespace collcheck::analyzer
