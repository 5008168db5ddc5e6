// Samples the positions of each communicator into a participation picture: the first few, a few
// before and after each divergence, and the last few (where a hung job stopped).
#pragma once

#include "analyzer/checks/rule.h"
#include "analyzer/model/participation.h"

#include <deque>
#include <map>

namespace collcheck::analyzer {

class ParticipationRecorder {
public:
  static constexpr size_t kHead = 12, kContext = 6, kTail = 12, kMaxColumns = 400;

  void collective(const CollectiveEvent &e);
  void extra(const ExtraEvent &e);
  void reorder(const ReorderEvent &e);
  void communicatorEnd(const CommunicatorEnd &e, const JobView &job);
  std::vector<CommPicture> take();

private:
  struct State {
    CommPicture picture;
    struct Recent {
      PictureColumn column;
      uint64_t index;
      format::Record call; // described only if the column is kept
    };
    std::deque<Recent> recent; // the last positions, not yet kept
    size_t keepAfter = 0;      // positions still to keep after a divergence
    uint64_t seen = 0;
    uint64_t lastKeptIndex = UINT64_MAX;
  };
  State &state(const Communicator &comm);
  void add(State &s, PictureColumn column, bool divergent, const format::Record &call);
  void keep(State &s, PictureColumn column, uint64_t index, const format::Record &call);
  void flushRecent(State &s);
  std::map<uint64_t, State> states_;
  std::vector<uint64_t> order_;
};

} // namespace collcheck::analyzer
