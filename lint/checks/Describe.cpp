#include "checks/Describe.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"

namespace collcheck::lint {
std::string describeReducer(const ReductionEvent &event) {
  switch (event.how) {
  case ReductionEvent::Averaging::AverageOp:
    return event.reducerName + " with " + event.opName;
  case ReductionEvent::Averaging::PreMulSumByInverseSize:
    return event.reducerName + " with a PreMulSum op scaling by 1/P";
  case ReductionEvent::Averaging::SumThenDivide:
    return event.reducerName + " with " + event.opName +
           ", then a division by the communicator size";
  case ReductionEvent::Averaging::DivideThenSum:
    return "a division by the communicator size, then " + event.reducerName + " with " +
           event.opName;
  }
  return event.reducerName;
}

std::string describeAveraging(const ReductionEvent &event) {
  if (event.steps.empty())
    return describeReducer(event);
  return quoted(event.steps.front().wrapper) + " (" + describeReducer(event) + ")";
}

std::string divisorText(const Origin &origin, const clang::ASTContext &context) {
  const clang::Expr *divisor = nullptr;
  if (const auto *binary = llvm::dyn_cast_or_null<clang::BinaryOperator>(origin.at))
    divisor = binary->getRHS();
  else if (const auto *op = llvm::dyn_cast_or_null<clang::CXXOperatorCallExpr>(origin.at);
           op && op->getNumArgs() == 2)
    divisor = op->getArg(1);
  else if (const auto *call = llvm::dyn_cast_or_null<clang::CXXMemberCallExpr>(origin.at);
           call && call->getNumArgs() == 1)
    divisor = call->getArg(0);
  if (divisor)
    return "'" + sourceText(divisor->IgnoreImplicit(), context) + "'";
  return quoted(origin.subject);
}

void addNote(Finding &finding, const Origin &origin, std::string message) {
  clang::SourceLocation loc;
  if (const auto *expr = llvm::dyn_cast_or_null<clang::Expr>(origin.at))
    loc = expr->getExprLoc();
  else if (origin.at)
    loc = origin.at->getBeginLoc();
  else if (origin.subject)
    loc = origin.subject->getLocation();
  if (loc.isValid())
    finding.notes.push_back({loc, std::move(message)});
}

void addAveragingNotes(const ReductionEvent &event, Finding &finding) {
  if (event.divisionSite && event.how == ReductionEvent::Averaging::DivideThenSum)
    finding.notes.push_back({event.divisionSite->getExprLoc(),
                             "divided by the communicator size here, before the sum over ranks"});
  for (size_t i = 1; i < event.steps.size(); ++i)
    finding.notes.push_back({event.steps[i].call->getExprLoc(),
                             quoted(event.steps[i - 1].wrapper) + " passes it on to " +
                                 quoted(event.steps[i].wrapper) + " here"});
  if (!event.steps.empty())
    finding.notes.push_back(
        {event.reducerCall->getExprLoc(),
         quoted(event.steps.back().wrapper) + " averages it across ranks here"});
  if (event.divisionSite && event.how != ReductionEvent::Averaging::DivideThenSum) {
    if (event.reportAt == event.reducerCall)
      finding.notes.push_back({event.divisionSite->getExprLoc(),
                               "the sum over ranks is divided by the communicator size here"});
    else {
      finding.notes.push_back({event.reducerCall->getExprLoc(), "summed over ranks here"});
      finding.notes.push_back(
          {event.divisionSite->getExprLoc(), "then divided by the communicator size here"});
    }
  }
}

} // namespace collcheck::lint
