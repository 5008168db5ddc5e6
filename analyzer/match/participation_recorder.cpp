#include "analyzer/match/participation_recorder.h"

#include "analyzer/model/signature.h"

namespace collcheck::analyzer {

std::string_view cellName(Cell c) {
  switch (c) {
  case Cell::Matched:
    return "matched";
  case Cell::Mismatch:
    return "mismatch";
  case Cell::Reordered:
    return "reordered";
  case Cell::Missing:
    return "missing";
  case Cell::Extra:
    return "extra";
  case Cell::NotReached:
    return "not reached";
  case Cell::Stuck:
    return "stuck";
  case Cell::Unknown:
    return "unknown";
  case Cell::Absent:
    return "absent";
  }
  return "unknown";
}

ParticipationRecorder::State &ParticipationRecorder::state(const Communicator &comm) {
  auto [it, inserted] = states_.try_emplace(comm.id);
  if (inserted) {
    it->second.picture.commId = comm.id;
    it->second.picture.label = comm.label;
    order_.push_back(comm.id);
  }
  return it->second;
}

void ParticipationRecorder::keep(State &s, PictureColumn column, uint64_t index,
                                 const format::Record &call) {
  if (s.picture.columns.size() >= kMaxColumns)
    return;
  if (column.call.empty())
    column.call = describeCall(call);
  column.gapBefore = s.lastKeptIndex != UINT64_MAX && index != s.lastKeptIndex + 1;
  s.lastKeptIndex = index;
  s.picture.columns.push_back(std::move(column));
}

void ParticipationRecorder::flushRecent(State &s) {
  while (!s.recent.empty()) {
    keep(s, std::move(s.recent.front().column), s.recent.front().index, s.recent.front().call);
    s.recent.pop_front();
  }
}

void ParticipationRecorder::add(State &s, PictureColumn column, bool divergent,
                                const format::Record &call) {
  uint64_t index = s.seen++;
  column.divergent = column.divergent || divergent;
  if (index < kHead || s.keepAfter > 0 || divergent) {
    if (divergent) {
      flushRecent(s); // the context before a divergence shows where the ranks parted
      s.keepAfter = kContext;
    } else if (s.keepAfter > 0) {
      --s.keepAfter;
    }
    keep(s, std::move(column), index, call);
    return;
  }
  if (s.recent.size() == std::max(kContext, kTail))
    s.recent.pop_front();
  s.recent.push_back({std::move(column), index, call});
}

void ParticipationRecorder::collective(const CollectiveEvent &e) {
  State &s = state(e.comm);
  PictureColumn column;
  column.seq = e.reference.seq();
  if (!e.allMatched) {
    column.cells.resize(e.presence.size());
    for (size_t r = 0; r < e.presence.size(); ++r) {
      Cell c = Cell::Matched;
      switch (e.presence[r]) {
      case Presence::Matched:
        // On a tie the reference's side is as much in disagreement as the other.
        c = e.tied ? Cell::Mismatch : Cell::Matched;
        break;
      case Presence::Variant:
        c = Cell::Mismatch;
        break;
      case Presence::Reordered:
        c = Cell::Reordered;
        break;
      case Presence::Skipped:
      case Presence::Exited:
        c = Cell::Missing;
        break;
      case Presence::NotReached:
        c = Cell::NotReached;
        break;
      case Presence::NoTrace:
        c = Cell::Unknown;
        break;
      }
      column.cells[r] = c;
    }
    add(s, std::move(column), true, e.reference);
    return;
  }
  add(s, std::move(column), false, e.reference);
}

void ParticipationRecorder::extra(const ExtraEvent &e) {
  State &s = state(e.comm);
  PictureColumn column;
  column.seq = e.call.seq();
  column.call = describeCall(e.call) + " (not issued by all)";
  column.cells.assign(e.comm.worldRankOf.size(), Cell::Absent);
  // Ranks come from the records: a damaged file can name one outside the communicator.
  auto mark = [&column](int32_t r, Cell cell) {
    if (r >= 0 && static_cast<size_t>(r) < column.cells.size())
      column.cells[static_cast<size_t>(r)] = cell;
  };
  for (int32_t r : e.issuedBy)
    mark(r, Cell::Extra);
  for (int32_t r : e.notIssuedBy)
    mark(r, Cell::Missing);
  add(s, std::move(column), true, e.call);
}

void ParticipationRecorder::reorder(const ReorderEvent &) {
  // The reordered positions themselves are marked by the collective events that follow.
}

void ParticipationRecorder::communicatorEnd(const CommunicatorEnd &e, const JobView &job) {
  State &s = state(e.comm);
  flushRecent(s);
  s.picture.positions = e.positions;
  s.picture.worldRanks.resize(e.comm.worldRankOf.size());
  for (size_t r = 0; r < e.comm.worldRankOf.size(); ++r)
    s.picture.worldRanks[r] = e.comm.nameOf(static_cast<int32_t>(r));
  // A rank whose last call here never returned, in a process that did not exit, is stuck in it.
  for (size_t r = 0; r < e.lastCall.size(); ++r) {
    const format::Record *last = e.lastCall[r];
    int file = r < e.comm.fileOf.size() ? e.comm.fileOf[r] : -1;
    if (!last || format::returned(*last) || file < 0 || job.process(file).finished)
      continue;
    for (auto column = s.picture.columns.rbegin(); column != s.picture.columns.rend(); ++column) {
      if (column->seq > last->seq())
        continue;
      if (column->cells.empty())
        column->cells.assign(e.lastCall.size(), Cell::Matched);
      if (column->seq == last->seq() &&
          (column->cells[r] == Cell::Matched || column->cells[r] == Cell::Mismatch)) {
        column->cells[r] = Cell::Stuck;
        column->divergent = true;
      }
      break;
    }
  }
}

std::vector<CommPicture> ParticipationRecorder::take() {
  std::vector<CommPicture> out;
  for (uint64_t id : order_)
    out.push_back(std::move(states_[id].picture));
  states_.clear();
  order_.clear();
  return out;
}

} // namespace collcheck::analyzer
