// Shared by the signature rules: groups the ranks of one position by the value of one signature
// field and writes one finding naming each group ("count 1023 on rank 3, count 1024 on ranks 0-2").
#pragma once

#include "analyzer/checks/rule.h"
#include "analyzer/model/signature.h"

#include <string>

namespace collcheck::analyzer {

// Reports `field` for the variants of `e` that differ from the reference in it; `explain` adds
// the rule's note (may be empty). Returns false when no rank differs in that field.
bool reportFieldMismatch(const CollectiveEvent &e, RuleContext &ctx, std::string_view ruleId,
                         SignatureField field, const std::string &note);

} // namespace collcheck::analyzer
