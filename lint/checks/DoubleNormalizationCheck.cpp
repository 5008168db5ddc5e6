#include "checks/DoubleNormalizationCheck.h"

#include "checks/Describe.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"

namespace collcheck::lint {
namespace {

// The op enumerator that makes the reducer a sum instead of an average, when it has one.
std::string summingSpelling(llvm::StringRef averaging) {
  if (averaging == "ncclAvg")
    return "ncclSum";
  if (averaging == "AVG")
    return "SUM";
  return {};
}

} // namespace

void DoubleNormalizationCheck::onReduction(const ReductionEvent &event, clang::ASTContext &context,
                                           std::vector<Finding> &out) {
  const CountPowers &p = event.effective;
  // Divided by N, and by P on top, with no factor P to make up for the reducer's division.
  bool normalizedTwice = p.local >= 0 && p.reduced < 0 && p.commSize < 0;
  if (event.input.uniform || !normalizedTwice)
    return;
  Finding f = finding(event.reportAt,
                      "value already divided by the all-reduced count is averaged again by " +
                          describeAveraging(event) +
                          ", which divides it by the number of ranks a second time; use a sum "
                          "reducer, or scale the value by P");
  const Origin &norm = event.input.normalized;
  addNote(f, norm, "divided by the global count " + divisorText(norm, context) + " here");
  addNote(f, event.input.countReduced, "the count is summed over the ranks here");
  addAveragingNotes(event, f);
  // Safe to rewrite: with a sum reducer, (1/N) * sum over ranks is exactly the global mean.
  if (const auto *ref = llvm::dyn_cast_or_null<clang::DeclRefExpr>(event.opArgument))
    if (std::string sum = summingSpelling(ref->getDecl()->getName()); !sum.empty())
      f.fixes.push_back(
          {writtenRange(ref->getLocation(), context.getSourceManager(), context.getLangOpts()),
           sum});
  out.push_back(std::move(f));
}

} // namespace collcheck::lint
