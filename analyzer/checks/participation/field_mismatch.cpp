#include "analyzer/checks/participation/field_mismatch.h"

#include <algorithm>
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
  // Every issuing rank by its value of `field`, the matcher's reference included: which value is
  // the odd one out is decided here, by counting, never by which rank came first.
  std::vector<Group> groups;
  for (size_t r = 0; r < e.records.size(); ++r) {
    const format::Record *rec = e.records[r];
    if (!rec || !issued(e.presence[r]))
      continue;
    // A different collective is the kind rule's; its other fields are not comparable.
    if (field != kFieldKind && (signatureDifferences(e.reference, *rec) & kFieldKind))
      continue;
    size_t g = 0;
    while (g < groups.size() && (signatureDifferences(*groups[g].example, *rec) & field))
      ++g;
    if (g == groups.size())
      groups.push_back({rec, {}});
    groups[g].ranks.push_back(static_cast<int32_t>(r));
  }
  if (groups.size() < 2)
    return false;
  // The largest group first; among equal groups, the one with the lowest rank first.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group &a, const Group &b) { return a.ranks.size() > b.ranks.size(); });
  // No majority: the ranks split evenly, and calling either side the reference would blame the
  // other at random (with two ranks, always the higher one).
  const bool tie = groups[0].ranks.size() == groups[1].ranks.size();
  Finding f = ctx.make(ruleId, e.comm, e.reference);
  std::string parts, key;
  for (size_t g = 0; g < groups.size(); ++g) {
    auto names = ctx.worldRanks(e.comm, groups[g].ranks);
    std::string value = field == kFieldKind ? describeCall(*groups[g].example)
                                            : describeField(*groups[g].example, field);
    parts += (parts.empty() ? "" : ", ") + value + " on " + describeRanks(names);
    key += value + "@" + formatRanks(groups[g].ranks) + ";";
    std::string role = tie ? "disagree" : g == 0 ? "reference" : "differs";
    f.groups.push_back({role, names, describeCall(*groups[g].example)});
  }
  std::string what = field == kFieldKind
                         ? "different collectives at the same position"
                         : std::string(format::kindName(kindOf(e.reference))) + " with different " +
                               std::string(fieldName(field)) + "s";
  f.message = what + " on " + e.comm.label + ": " + (tie ? "the ranks disagree, " : "") + parts;
  if (tie)
    f.notes.push_back("the ranks split evenly between these values: no side is the reference, "
                      "either may be the one in error; check both");
  if (!note.empty())
    f.notes.push_back(note);
  ctx.findings.add(std::move(f), key);
  return true;
}

} // namespace collcheck::analyzer
