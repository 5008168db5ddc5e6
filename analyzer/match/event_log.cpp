#include "analyzer/match/event_log.h"

namespace collcheck::analyzer {
namespace {

enum class Tag : uint8_t { Collective = 1, Reorder, Extra, PointToPoint, Meta };

void putRecords(wire::Writer &w, const std::vector<format::Record> &records) {
  w.putVector(records);
}

// Comm ranks a rule may index the communicator's members with.
bool ranksOf(const Communicator &comm, const std::vector<int32_t> &ranks) {
  for (int32_t r : ranks)
    if (r < 0 || static_cast<size_t>(r) >= comm.worldRankOf.size())
      return false;
  return true;
}

} // namespace

void EventLog::collective(const CollectiveEvent &e) {
  out_.put(Tag::Collective);
  out_.put(e.comm.id);
  out_.put(e.referenceRank);
  out_.put<uint8_t>(e.allMatched);
  out_.put<uint8_t>(e.tied);
  out_.put(e.reference);
  out_.put<uint64_t>(e.records.size());
  for (const format::Record *r : e.records) {
    out_.put<uint8_t>(r != nullptr);
    if (r)
      out_.put(*r);
  }
  // Every member matched: the presence is implied, one byte per member is not sent.
  out_.put<uint64_t>(e.presence.size());
  if (!e.allMatched)
    for (Presence p : e.presence)
      out_.put(p);
}

void EventLog::reorder(const ReorderEvent &e) {
  out_.put(Tag::Reorder);
  out_.put(e.comm.id);
  putRecords(out_, e.expected);
  putRecords(out_, e.actual);
  out_.putVector(e.ranks);
  out_.putVector(e.referenceRanks);
}

void EventLog::extra(const ExtraEvent &e) {
  out_.put(Tag::Extra);
  out_.put(e.comm.id);
  out_.put(e.call);
  out_.putVector(e.issuedBy);
  out_.putVector(e.notIssuedBy);
}

void EventLog::pointToPoint(const PointToPointEvent &e) {
  out_.put(Tag::PointToPoint);
  out_.put(e.comm.id);
  for (const format::Record *r : {e.send, e.recv}) {
    out_.put<uint8_t>(r != nullptr);
    if (r)
      out_.put(*r);
  }
  out_.put(e.sender);
  out_.put(e.receiver);
  out_.put<uint8_t>(e.endOfTrace);
  out_.put(e.otherSide);
}

void EventLog::meta(const MetaEvent &e) {
  out_.put(Tag::Meta);
  out_.put<int32_t>(e.file);
  out_.put(e.record);
}

bool replayEvents(std::string_view log, const CommLookup &comms, JobEvents &sink) {
  wire::Reader in(log);
  std::vector<format::Record> records;
  std::vector<const format::Record *> pointers;
  std::vector<Presence> presence;
  while (!in.done()) {
    Tag tag{};
    if (!in.get(tag))
      return false;
    if (tag == Tag::Meta) {
      int32_t file = 0;
      format::Record r{};
      if (!in.get(file) || !in.get(r))
        return false;
      sink.meta({file, r});
      continue;
    }
    uint64_t id = 0;
    if (!in.get(id))
      return false;
    const Communicator *comm = comms(id);
    if (!comm)
      return false;
    switch (tag) {
    case Tag::Collective: {
      int32_t referenceRank = 0;
      uint8_t allMatched = 0, tied = 0;
      format::Record reference{};
      uint64_t count = 0;
      // Sized by the communicator, never by the log: per member records, or none.
      const size_t members = comm->worldRankOf.size();
      if (!in.get(referenceRank) || !in.get(allMatched) || !in.get(tied) || !in.get(reference) ||
          !in.get(count) || (count != 0 && count != members) || referenceRank < -1 ||
          referenceRank >= static_cast<int64_t>(members))
        return false;
      records.resize(count);
      pointers.assign(count, nullptr);
      for (size_t r = 0; r < count; ++r) {
        uint8_t present = 0;
        if (!in.get(present) || (present && !in.get(records[r])))
          return false;
        if (present)
          pointers[r] = &records[r];
      }
      uint64_t sent = 0;
      if (!in.get(sent) || sent != members)
        return false;
      presence.assign(members, Presence::Matched);
      if (!allMatched)
        for (Presence &p : presence)
          if (!in.get(p) || static_cast<uint8_t>(p) > static_cast<uint8_t>(Presence::NoTrace))
            return false;
      sink.collective(
          {*comm, reference, referenceRank, pointers, presence, allMatched != 0, tied != 0});
      break;
    }
    case Tag::Reorder: {
      ReorderEvent e{*comm, {}, {}, {}, {}};
      if (!in.getVector(e.expected) || !in.getVector(e.actual) || !in.getVector(e.ranks) ||
          !in.getVector(e.referenceRanks) || !ranksOf(*comm, e.ranks) ||
          !ranksOf(*comm, e.referenceRanks))
        return false;
      sink.reorder(e);
      break;
    }
    case Tag::Extra: {
      ExtraEvent e{*comm, {}, {}, {}};
      if (!in.get(e.call) || !in.getVector(e.issuedBy) || !in.getVector(e.notIssuedBy) ||
          !ranksOf(*comm, e.issuedBy) || !ranksOf(*comm, e.notIssuedBy))
        return false;
      sink.extra(e);
      break;
    }
    case Tag::PointToPoint: {
      format::Record sides[2]{};
      bool present[2]{};
      for (int s = 0; s < 2; ++s) {
        uint8_t p = 0;
        if (!in.get(p) || (p && !in.get(sides[s])))
          return false;
        present[s] = p != 0;
      }
      int32_t sender = 0, receiver = 0;
      uint8_t endOfTrace = 0;
      Presence otherSide{};
      if (!in.get(sender) || !in.get(receiver) || !in.get(endOfTrace) || !in.get(otherSide))
        return false;
      sink.pointToPoint({*comm, present[0] ? &sides[0] : nullptr, present[1] ? &sides[1] : nullptr,
                         sender, receiver, endOfTrace != 0, otherSide});
      break;
    }
    default:
      return false;
    }
  }
  return true;
}

} // namespace collcheck::analyzer
