// Control dependences in force (branches, early exits, loops left early), and the process ends:
// exit, abort, MPI_Abort, an uncaught throw or a helper that always ends so, past which a rank
// kills the job rather than skipping a collective.

#include "engine/flow/Walker.h"

namespace collcheck::lint {

unsigned FlowAnalysis::Walker::pushControl(ControlDependence dep, bool earlyExit,
                                           const LoopContext *region) {
  dep.id = ++nextControlId_;
  frame_->control.push_back({std::move(dep), earlyExit, region});
  return frame_->control.back().dep.id;
}

void FlowAnalysis::Walker::popControl(unsigned id) {
  llvm::erase_if(frame_->control, [&](const ActiveControl &c) { return c.dep.id == id; });
}

bool FlowAnalysis::Walker::anyNonUniformControl() const {
  return llvm::any_of(frame_->control, [](const ActiveControl &c) { return !c.dep.value.uniform; });
}

bool FlowAnalysis::Walker::tainted(const Value &v) {
  return !v.uniform && (v.rankDerived || v.countDerived);
}

LoopContext *FlowAnalysis::Walker::innermostLoop(bool allowSwitch) {
  for (auto it = frame_->loops.rbegin(); it != frame_->loops.rend(); ++it)
    if (allowSwitch || !(*it)->isSwitch)
      return *it;
  return nullptr;
}

// The collectives the rest of `region` (a loop body, or the function when null) would issue.
PathSet FlowAnalysis::Walker::remainderSignature(const LoopContext *region) {
  size_t minDepth = 0;
  if (region)
    for (size_t i = 0; i < frame_->loops.size(); ++i)
      if (frame_->loops[i] == region)
        minDepth = i + 1;
  PathSet out;
  for (auto it = frame_->rest.rbegin(); it != frame_->rest.rend(); ++it) {
    if (region && it->loopDepth < minDepth)
      break;
    for (unsigned i = it->next; i < it->block->size(); ++i)
      out = out.then(signatures_.of(it->block->body_begin()[i]));
  }
  return out;
}

const LoopContext *FlowAnalysis::Walker::regionOf(const Stmt *jump) {
  if (isa<ContinueStmt>(jump))
    return innermostLoop(false);
  if (isa<BreakStmt>(jump))
    return innermostLoop(true);
  if (isa<CXXThrowExpr>(jump) && !frame_->tries.empty())
    return frame_->tries.back().first; // caught by a handler of the try block around it
  return nullptr; // return, throw and calls that never return leave the function
}

// The first of the open loops that a return, throw or call that never returns leaves: all of
// them, but for a throw inside a try block only those opened inside it.
size_t FlowAnalysis::Walker::loopsLeftBy(const Stmt *jump) const {
  return isa<CXXThrowExpr>(jump) && !frame_->tries.empty() ? frame_->tries.back().second : 0;
}

// Whether a `throw` here is caught by a try block of this function or of a caller being walked.
// One that nothing catches ends the process (std::terminate).
bool FlowAnalysis::Walker::throwCaught() const {
  for (const Frame *f = frame_; f; f = f->caller)
    if (!f->tries.empty())
      return true;
  return false;
}

// Whether `s` contains a jump that leaves it otherwise than by ending the process.
bool FlowAnalysis::Walker::mayLeave(const Stmt *s) {
  if (!s || isa<LambdaExpr>(s))
    return false;
  if (isa<ReturnStmt, GotoStmt, BreakStmt, ContinueStmt, IndirectGotoStmt>(s))
    return true;
  for (const Stmt *child : s->children())
    if (mayLeave(child))
      return true;
  return false;
}

// Whether every path through `s` ends the process: a call that never returns (exit, _Exit,
// quick_exit, abort, std::terminate, a failed assert's __assert_fail, a [[noreturn]] function),
// MPI_Abort, a `throw` nothing catches, a helper that always ends one of these ways. A rank on
// such a path kills the job; it is not a rank that skips a collective and leaves the others
// waiting.
bool FlowAnalysis::Walker::endsProcess(const Stmt *s, unsigned depth) {
  if (!s || depth > 8)
    return false;
  if (const auto *e = dyn_cast<Expr>(s)) {
    e = e->IgnoreParenCasts();
    if (const auto *full = dyn_cast<FullExpr>(e))
      return endsProcess(full->getSubExpr(), depth + 1);
    if (isa<CXXThrowExpr>(e))
      return !throwCaught();
    if (const auto *call = dyn_cast<CallExpr>(e)) {
      if (isNoReturnCall(call) || isMpiAbort(call))
        return true;
      const FunctionDecl *callee = calleeOf(call);
      const FunctionDecl *definition = nullptr;
      if (const FunctionSummary *summary = callee ? summaryOf(callee) : nullptr)
        return summary->endsProcess;
      return callee && callee->hasBody(definition) && definition &&
             functionEndsProcess(definition, depth + 1);
    }
    if (const auto *cond = dyn_cast<ConditionalOperator>(e)) {
      bool truth = false;
      const Expr *test = cond->getCond();
      if (!test->isValueDependent() && !test->isTypeDependent() &&
          test->EvaluateAsBooleanCondition(truth, context_))
        return endsProcess(truth ? cond->getTrueExpr() : cond->getFalseExpr(), depth + 1);
      return endsProcess(cond->getTrueExpr(), depth + 1) &&
             endsProcess(cond->getFalseExpr(), depth + 1);
    }
    if (const auto *binary = dyn_cast<BinaryOperator>(e); binary && binary->isCommaOp())
      return endsProcess(binary->getLHS(), depth + 1) || endsProcess(binary->getRHS(), depth + 1);
    return false;
  }
  if (const auto *block = dyn_cast<CompoundStmt>(s)) {
    for (const Stmt *child : block->body()) {
      if (endsProcess(child, depth + 1))
        return true;
      if (mayLeave(child))
        return false;
    }
    return false;
  }
  if (const auto *branch = dyn_cast<IfStmt>(s))
    return branch->getElse() && endsProcess(branch->getThen(), depth + 1) &&
           endsProcess(branch->getElse(), depth + 1);
  if (const auto *attributed = dyn_cast<AttributedStmt>(s))
    return endsProcess(attributed->getSubStmt(), depth + 1);
  if (const auto *label = dyn_cast<LabelStmt>(s))
    return endsProcess(label->getSubStmt(), depth + 1);
  return false;
}

bool FlowAnalysis::Walker::functionEndsProcess(const FunctionDecl *definition, unsigned depth) {
  if (definition->isNoReturn())
    return true;
  auto key = std::make_pair(definition->getCanonicalDecl(), throwCaught());
  if (auto it = endsProcess_.find(key); it != endsProcess_.end())
    return it->second;
  endsProcess_[key] = false; // a recursive helper: not known to end until proved
  bool ends = endsProcess(definition->getBody(), depth);
  endsProcess_[key] = ends;
  return ends;
}

// The jump a branch always ends with, if any: a return, break or continue, or a throw that a
// try block around it catches. Paths that end the process are no jump (endsProcess).
const Stmt *FlowAnalysis::Walker::findJump(const Stmt *s) {
  if (!s)
    return nullptr;
  if (isa<ReturnStmt, ContinueStmt, BreakStmt>(s))
    return s;
  if (const auto *e = dyn_cast<Expr>(s)) {
    const Expr *bare = e->IgnoreParenImpCasts();
    if (const auto *full = dyn_cast<FullExpr>(bare))
      bare = full->getSubExpr()->IgnoreParenImpCasts();
    if (isa<CXXThrowExpr>(bare) && throwCaught())
      return bare;
    return nullptr;
  }
  if (const auto *block = dyn_cast<CompoundStmt>(s)) {
    for (const Stmt *child : block->body())
      if (endsProcess(child))
        return nullptr;
    for (auto it = block->body_rbegin(); it != block->body_rend(); ++it)
      if (const Stmt *jump = findJump(*it))
        return jump;
    return nullptr;
  }
  if (const auto *branch = dyn_cast<IfStmt>(s))
    if (branch->getElse() && findJump(branch->getThen()) && findJump(branch->getElse()))
      return findJump(branch->getThen());
  return nullptr;
}

} // namespace collcheck::lint
