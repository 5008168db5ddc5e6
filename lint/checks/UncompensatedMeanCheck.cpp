#include "checks/UncompensatedMeanCheck.h"

#include "checks/Describe.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"

namespace collcheck::lint {

void UncompensatedMeanCheck::onReduction(const ReductionEvent &event, clang::ASTContext &context,
                                         std::vector<Finding> &out) {
  // Still divided by n once the reducer has averaged: items on small ranks weigh more. A value
  // that is already rank-uniform is the same on every rank, so averaging it again is harmless.
  bool localMean = event.effective.local < 0;
  if (event.input.uniform || !localMean)
    return;
  Finding f = finding(event.reportAt,
                      "local mean averaged across ranks by " + describeAveraging(event) +
                          ": items on ranks with fewer of them weigh more; reduce the local sum "
                          "and divide by the all-reduced count, or scale the mean by P*n/N first");
  const Origin &mean = event.input.meanFormed;
  if (mean.subject ||
      llvm::isa_and_nonnull<clang::BinaryOperator, clang::CXXOperatorCallExpr>(mean.at))
    addNote(f, mean,
            "local mean formed here: divided by " + divisorText(mean, context) +
                ", a count of this rank's items");
  else
    addNote(f, mean, "local mean formed here, over this rank's items only");
  addAveragingNotes(event, f);
  if (event.input.guessed) {
    f.guess = true;
    f.message += " (a guess: the count is one of this rank's items by its name only; every rank "
                 "may hold the same value)";
  }
  out.push_back(std::move(f));
}

} // namespace collcheck::lint
