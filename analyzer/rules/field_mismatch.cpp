#include "field_mismatch.h"

#include <vector>

namespace collcheck::analyzer {

bool reportFieldMismatch(const CollectiveEvent &e, RuleContext &ctx, std::string_view ruleId,
                         SignatureField field, const std::string &note) {
  if (e.allMatched)
    return false;
  struct Group {
    const format::Record *example;
    std::vector<int32_t> ranks;
  };
  std::vector<Group> groups{{&e.reference, {}}};
  bool any = false;
  for (size_t r = 0; r < e.records.size(); ++r) {
    const format::Record *rec = e.records[r];
    if (!rec || !issued(e.presence[r]))
      continue;
    uint32_t diff = signatureDifferences(e.reference, *rec);
    // A different collective is the kind rule's; its other fields are not comparable.
    if (field != kFieldKind && (diff & kFieldKind))
      continue;
    bool differs = (diff & field) != 0;
    any = any || differs;
    size_t g = 0;
    if (differs) {
      g = 1;
      while (g < groups.size() && (signatureDifferences(*groups[g].example, *rec) & field))
        ++g;
      if (g == groups.size())
        groups.push_back({rec, {}});
    }
    groups[g].ranks.push_back(static_cast<int32_t>(r));
  }
  if (!any)
    return false;
  Finding f = ctx.make(ruleId, e.comm, e.reference);
  std::string parts, key;
  // The largest group first: it is what the others are compared with.
  for (size_t g = groups.size(); g-- > 0;) {
    if (groups[g].ranks.empty())
      continue;
    auto names = ctx.worldRanks(e.comm, groups[g].ranks);
    std::string value = field == kFieldKind ? describeCall(*groups[g].example)
                                            : describeField(*groups[g].example, field);
    parts += (parts.empty() ? "" : ", ") + value + " on " + describeRanks(names);
    key += value + "@" + formatRanks(groups[g].ranks) + ";";
    f.groups.push_back({g == 0 ? "reference" : "differs", names, describeCall(*groups[g].example)});
  }
  std::string what = field == kFieldKind
                         ? "different collectives at the same position"
                         : std::string(format::kindName(kindOf(e.reference))) + " with different " +
                               std::string(fieldName(field)) + "s";
  f.message = what + " on " + e.comm.label + ": " + parts;
  if (!note.empty())
    f.notes.push_back(note);
  ctx.findings.add(std::move(f), key);
  return true;
}

} // namespace collcheck::analyzer
