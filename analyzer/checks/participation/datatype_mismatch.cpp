// datatype-mismatch: the same collective with different element datatypes across ranks.
#include "analyzer/checks/participation/field_mismatch.h"
#include "analyzer/checks/participation/invalid_arguments.h"

namespace collcheck::analyzer {
namespace {

class DatatypeMismatch final : public TraceRule {
public:
  std::string_view id() const override { return "datatype-mismatch"; }
  void onCollective(const CollectiveEvent &e, RuleContext &ctx) override {
    if (e.allMatched)
      return;
    const format::Record *invalid = nullptr;
    if (!ranksWith(e, hasInvalidDatatype, invalid).empty())
      return; // invalid-datatype's: a handle MPI rejects is no datatype to compare
    std::string note;
    // Equal byte counts make the mismatch silent: the data arrive and are misread.
    for (size_t r = 0; r < e.records.size(); ++r) {
      const format::Record *rec = e.records[r];
      if (rec && (signatureDifferences(e.reference, *rec) & kFieldDataType) &&
          !(signatureDifferences(e.reference, *rec) & kFieldKind)) {
        uint64_t a = payloadBytes(e.reference, e.reference.count),
                 b = payloadBytes(*rec, rec->count);
        if (a && a == b)
          note = "the byte counts agree (" + std::to_string(a) +
                 " bytes), so the call completes and the bytes are read as the wrong type";
        break;
      }
    }
    reportFieldMismatch(e, ctx, id(), kFieldDataType, note);
  }
};

} // namespace

std::unique_ptr<TraceRule> makeDatatypeMismatchRule() {
  return std::make_unique<DatatypeMismatch>();
}

} // namespace collcheck::analyzer
