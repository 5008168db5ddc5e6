// Says where each finding's call was made: reads, per rank, the call at the finding's first
// position (communicator and sequence number) and its site in that trace's call-site table
// (format/sites.h), symbolizes it, and groups the ranks by source location. Traces before
// version 3 have no sites: their ranks are left out, and the report says so.
#pragma once

#include "analyzer/load/trace_set.h"
#include "analyzer/model/finding.h"
#include "analyzer/sites/symbolizer.h"

#include <vector>

namespace collcheck::analyzer {

struct CallSiteStats {
  size_t filesWithoutSites = 0; // traces of a version before 3
};

// Fills Finding::callSites of the findings with a position. Reads each file from its start until
// every call it looks for and the table entries they need are found, on up to `threads` threads.
CallSiteStats attachCallSites(const TraceSet &traces, std::vector<Finding> &findings,
                              Symbolizer &symbolizer, unsigned threads);

} // namespace collcheck::analyzer
