// count-mismatch: the element counts of one collective do not fit together. For fixed-size kinds
// every rank passes the same count (what it means per kind is in the note), and where the trace
// holds the side of a gather, scatter, allgather or alltoall that count is not, that side matches
// it; for the v-variants the per-rank counts must add up to the totals the other side expects
// (docs/trace-format.md: count and aux per kind).
#include "analyzer/checks/participation/field_mismatch.h"
#include "analyzer/checks/participation/invalid_arguments.h"

#include <map>
#include <vector>

namespace collcheck::analyzer {
namespace {

std::string countRule(Kind kind) {
  switch (kind) {
  case Kind::AllGather:
    return "allgather: each rank sends `count` elements and receives P x count; every rank must "
           "pass the same count";
  case Kind::ReduceScatter:
  case Kind::ReduceScatterBlock:
    return "reduce-scatter: each rank receives `count` elements of a P x count reduction; every "
           "rank must pass the same count";
  case Kind::AllToAll:
    return "alltoall: each rank sends `count` elements to every rank (P x count in all) and "
           "receives as much; every rank must pass the same count";
  case Kind::Gather:
    return "gather: each rank sends `count` elements and the root receives P x count";
  case Kind::Scatter:
    return "scatter: each rank receives `count` elements of the root's P x count";
  default:
    return "every rank must pass the same count: the library reads or writes that many elements "
           "on every rank";
  }
}

class CountMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "count-mismatch"; }

  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    const format::Record *negative = nullptr;
    if (!e.allMatched && !ranksWith(e, hasNegativeCount, negative).empty())
      return; // negative-count's: a count MPI rejects is no mismatch to weigh
    // invalid-datatype's: a count of no datatype is in no unit the others' can be weighed against
    // (theirs may count the elements of a derived type).
    const format::Record *invalidType = nullptr;
    if (!ranksWith(e, hasInvalidDatatype, invalidType).empty())
      return;
    if (hasVariableCounts(e.reference)) {
      checkTotals(e, ctx);
      return;
    }
    if (!e.allMatched)
      reportFieldMismatch(e, ctx, id(), kFieldCount, countRule(kindOf(e.reference)));
    else
      checkOtherSide(e, ctx);
  }

private:
  void checkTotals(const CollectiveEvent &e, RuleContext &ctx) {
    Kind kind = kindOf(e.reference);
    uint64_t counts = 0; // sum over ranks of `count`
    uint64_t auxSum = 0; // sum over ranks of `aux` (alltoallv)
    bool mixedTypes = false, uniformAux = true;
    const format::Record *root = nullptr;
    for (size_t r = 0; r < e.records.size(); ++r) {
      const format::Record *rec = e.records[r];
      if (!rec || !issued(e.presence[r]))
        return; // with a rank missing the totals are undecidable
      // A derived type of unknown signature carries its size in bytes where the totals would be:
      // they are not known. A mixed signature's totals count units whose signature the record
      // cannot carry beside them: not comparable either. (A homogeneous one counts elements of
      // its basic type, on both sides: those add up.)
      if ((rec->flags & format::kFlagDerived) &&
          (rec->dataType == static_cast<uint8_t>(format::DataType::Derived) ||
           rec->dataType == static_cast<uint8_t>(format::DataType::Mixed)))
        return;
      // On an intercommunicator the totals are the other group's, whose records are checked
      // apart (each group has its own id): nothing here to add them up against.
      if (onIntercomm(*rec))
        return;
      mixedTypes = mixedTypes || rec->dataType != e.reference.dataType;
      uniformAux = uniformAux && rec->aux == e.reference.aux;
      counts += rec->count;
      auxSum += rec->aux;
      if (rec->commRank == rec->peer)
        root = rec;
    }
    if (mixedTypes)
      return; // the datatype rule reports it; element totals are not comparable
    std::string name(format::kindName(kind));
    switch (kind) {
    case Kind::Gatherv: // the root receives what every rank sends
      if (root && root->aux != counts)
        report(e, ctx,
               name + ": the ranks send " + std::to_string(counts) +
                   " elements in all but the root expects " + std::to_string(root->aux));
      break;
    case Kind::Scatterv: // the root sends what every rank receives
      if (root && root->aux != counts)
        report(e, ctx,
               name + ": the root sends " + std::to_string(root->aux) +
                   " elements in all but the ranks expect " + std::to_string(counts));
      break;
    case Kind::AllGatherv:
    case Kind::ReduceScatter: // every rank knows the total; the parts must add up to it
      if (!uniformAux)
        report(e, ctx, name + ": the ranks expect different totals");
      else if (e.reference.aux != counts)
        report(e, ctx,
               name + ": the per-rank counts add up to " + std::to_string(counts) +
                   " but every rank expects " + std::to_string(e.reference.aux));
      break;
    case Kind::AllToAllv:
    case Kind::AllToAllw: // what all ranks send is what all ranks receive
      if (auxSum != counts)
        report(e, ctx,
               name + ": the ranks send " + std::to_string(counts) + " in all but expect " +
                   std::to_string(auxSum));
      break;
    default:
      break;
    }
  }

  // Gather, scatter, allgather, alltoall: every rank passes the same count (checked above), but
  // the side the records do not count may differ from it, where the tracer recorded it
  // (format::OtherSide): the root's receive count of a gather, its send count of a scatter, every
  // rank's receive count of an allgather or alltoall. It is in the units of its record's count,
  // and the records agree in count and datatype here: the two compare. Traces without it (older
  // writers, MPI_IN_PLACE, an intercommunicator) have nothing to compare.
  void checkOtherSide(const CollectiveEvent &e, RuleContext &ctx) {
    if (!format::carriesOtherSide(e.reference) || onIntercomm(e.reference))
      return;
    Kind kind = kindOf(e.reference);
    std::vector<int32_t> issuing;
    std::map<uint64_t, std::vector<int32_t>> expecting; // other side -> the ranks recording it
    const format::Record *example = nullptr;
    for (size_t r = 0; r < e.records.size(); ++r) {
      const format::Record *rec = e.records[r];
      if (!rec || !issued(e.presence[r]))
        continue;
      issuing.push_back(static_cast<int32_t>(r));
      uint64_t other = 0;
      if (format::otherSideCount(*rec, other) && other != rec->count) {
        expecting[other].push_back(static_cast<int32_t>(r));
        example = example ? example : rec;
      }
    }
    if (expecting.empty())
      return;
    std::string name(format::kindName(kind));
    std::string count = std::to_string(e.reference.count);
    auto all = ctx.worldRanks(e.comm, issuing);
    for (const auto &[other, commRanks] : expecting) {
      auto ranks = ctx.worldRanks(e.comm, commRanks);
      // The other side's call as one of them made it: a rank that does not record this count, if
      // any (the root of a gather records both).
      const format::Record *others = &e.reference;
      for (int32_t r : issuing) {
        uint64_t its = 0;
        if (!format::otherSideCount(*e.records[r], its) || its != other) {
          others = e.records[r];
          break;
        }
      }
      std::string expected = std::to_string(other);
      std::string what;
      Finding f = ctx.make(id(), e.comm, *example);
      if (kind == Kind::Scatter) {
        what = name + ": the root sends " + expected + " elements to each rank but " +
               describeRanks(all) + (all.size() == 1 ? " expects " : " expect ") + count;
        f.groups.push_back({"sends", ranks, describeCall(*e.records[commRanks.front()])});
        f.groups.push_back({"receives", all, describeCall(*others)});
      } else {
        std::string who = kind == Kind::Gather
                              ? "the root expects"
                              : describeRanks(ranks) + (ranks.size() == 1 ? " expects" : " expect");
        what = name + ": " + who + " " + expected + " elements from each rank but " +
               describeRanks(all) + (all.size() == 1 ? " sends " : " send ") + count;
        f.groups.push_back({"receives", ranks, describeCall(*e.records[commRanks.front()])});
        f.groups.push_back({"sends", all, describeCall(*others)});
      }
      f.message = what + " on " + e.comm.label;
      f.notes.push_back("MPI matches each pair of a collective's send and receive by type "
                        "signature: what a rank receives from each peer must be what that peer "
                        "sends it, here compared in the units of the recorded count");
      ctx.findings.add(std::move(f), what);
    }
  }

  void report(const CollectiveEvent &e, RuleContext &ctx, const std::string &what) {
    Finding f = ctx.make(id(), e.comm, e.reference);
    f.message = what + " on " + e.comm.label;
    f.notes.push_back("the per-rank counts of a v-collective must add up to the totals the other "
                      "side expects");
    ctx.findings.add(std::move(f), what);
  }
};

} // namespace

std::unique_ptr<TraceRule> makeCountMismatchRule() { return std::make_unique<CountMismatch>(); }

} // namespace collcheck::analyzer
