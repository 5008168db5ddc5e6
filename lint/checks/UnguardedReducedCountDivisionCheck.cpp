#include "checks/UnguardedReducedCountDivisionCheck.h"

#include "checks/Describe.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"

namespace collcheck::lint {

void UnguardedReducedCountDivisionCheck::onDivision(const DivisionEvent &event,
                                                    clang::ASTContext &context,
                                                    std::vector<Finding> &out) {
  const Value &divisor = event.divisorValue;
  // The sum of the ranks' counts, with no guard (N > 0, std::max(N, 1), an early exit) on the
  // path to this division.
  bool reducedCount = divisor.reduced && divisor.powers.reduced >= 1;
  if (!reducedCount || divisor.nonZero)
    return;
  std::string name = "'" + sourceText(event.divisor, context) + "'";
  Finding f = finding(event.divisor,
                      "division by the all-reduced count " + name +
                          ", which is zero in a window where no rank has a valid item; guard it (" +
                          sourceText(event.divisor, context) + " > 0) or divide by std::max(" +
                          sourceText(event.divisor, context) + ", 1)");
  f.range = event.division->getSourceRange();
  addNote(f, divisor.countReduced, "summed over the ranks here");
  // `N` -> `(N > 0 ? N : 1)`: the same value whenever N > 0, and 1 (a zero gradient over a zero
  // sum) otherwise; needs no header and works for every arithmetic type.
  // Not where a macro's body makes it; a macro's argument (CHECK(loss / N)) is written in place.
  const clang::Expr *core = event.divisor->IgnoreParenImpCasts();
  const clang::SourceManager &sm = context.getSourceManager();
  clang::SourceLocation at = core->getBeginLoc();
  if (llvm::isa<clang::DeclRefExpr>(core) && sm.getSpellingLoc(at) == sm.getFileLoc(at) &&
      core->getType()->isArithmeticType()) {
    std::string text = sourceText(core, context, 80);
    f.fixes.push_back({writtenRange(core->getSourceRange(), sm, context.getLangOpts()),
                       "(" + text + " > 0 ? " + text + " : 1)"});
  }
  out.push_back(std::move(f));
}

} // namespace collcheck::lint
