// Where a job analyzed in shares (thread_split.h) cuts the files. A cut follows one communicator
// that every file takes part in (the one with the most calls, normally the world): in each file it
// falls right after that communicator's call S-1, where S is the sequence number found at the
// share's fraction of the first file. In a job whose ranks run the same program, every
// communicator's members are then in step at the cut; the merge checks that they were (merge.h).
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/match/analysis.h"

#include <cstdint>
#include <optional>

namespace collcheck::analyzer::parallel {

// The communicator the cuts follow (from the first file's first slots), or none when no
// communicator spans every file (then the job is analyzed whole by one thread).
std::optional<uint64_t> cutCommunicator(const TraceSet &traces);

// What the shares are equal in. Bytes: every slot the reader gives of the first file, the
// preallocated, never-written end included where it is read (an unfinished trace's; it costs
// what records cost): the balance of the work, what the threads use. Records: the slots up to
// the first file's last record, so that the cuts of a small job fall among its records, not in the
// end of its files (what the tests use).
enum class Balance { Bytes, Records };

// Bytes, or Records where COLLCHECK_SPLIT_BALANCE=records (the tests cut small jobs among their
// records, so that their shares are really merged).
Balance balanceFromEnvironment();

// Share `index` of `count`, cut along `commId`.
RangeSpec planShare(const TraceSet &traces, uint64_t commId, int index, int count,
                    Balance balance = Balance::Bytes);

// Where a running share can stop to hand the rest of what it has left to a thread that finished
// its own and then pays `startSlots` (what starting a share costs, in slots of the first file): in
// every file after call S-1 of `commId`, S taken in the first file where both then end together.
// `from`: per file, the first slot the share has not read; `end`: its range's end. Nullopt when
// that would gain less than half of a share's start, or when the cut would fall where a file was
// read already (files out of step) or past a file's end.
std::optional<std::vector<uint64_t>> cutAhead(const TraceSet &traces, uint64_t commId,
                                              const std::vector<uint64_t> &from,
                                              const std::vector<uint64_t> &end,
                                              uint64_t startSlots);

} // namespace collcheck::analyzer::parallel
