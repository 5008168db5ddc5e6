// The events of one share of a job analyzed in parts (analyzer/parallel), logged in the order its
// aligners made them, and replayed by the merge into the one judge of the job. A matched position
// costs one record (about 80 bytes) whatever the communicator's size: the log grows with the
// positions of the job, not with its ranks. An end of communicator is not logged: the merge makes
// it with every share's counts.
#pragma once

#include "analyzer/match/judge.h"
#include "analyzer/match/wire.h"

#include <functional>
#include <string>
#include <string_view>

namespace collcheck::analyzer {

class EventLog final : public JobEvents {
public:
  void collective(const CollectiveEvent &e) override;
  void reorder(const ReorderEvent &e) override;
  void extra(const ExtraEvent &e) override;
  void communicatorEnd(const CommunicatorEnd &) override {}
  void pointToPoint(const PointToPointEvent &e) override;
  void meta(const MetaEvent &e) override;
  std::string take() { return out_.take(); }

private:
  wire::Writer out_;
};

// Replays a log into `sink`; false when the log is damaged or names an unknown communicator.
using CommLookup = std::function<const Communicator *(uint64_t id)>;
bool replayEvents(std::string_view log, const CommLookup &comms, JobEvents &sink);

} // namespace collcheck::analyzer
