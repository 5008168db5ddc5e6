// The walk of statements: blocks, declarations, branches, loops (walked to a fixed point),
// switches, jumps, try blocks and returns.

#include "engine/flow/Walker.h"

namespace collcheck::lint {

void FlowAnalysis::Walker::exec(const Stmt *s) {
  if (!s || !frame_->state.reachable)
    return;
  switch (s->getStmtClass()) {
  case Stmt::CompoundStmtClass:
    return execCompound(cast<CompoundStmt>(s));
  case Stmt::DeclStmtClass:
    for (const Decl *d : cast<DeclStmt>(s)->decls())
      if (const auto *var = dyn_cast<VarDecl>(d))
        execVarDecl(var);
    return;
  case Stmt::IfStmtClass:
    return execIf(cast<IfStmt>(s));
  case Stmt::ForStmtClass: {
    const auto *loop = cast<ForStmt>(s);
    exec(loop->getInit());
    return runLoop(s, loop->getConditionVariableDeclStmt(), loop->getCond(), loop->getInc(),
                   loop->getBody(), true);
  }
  case Stmt::WhileStmtClass: {
    const auto *loop = cast<WhileStmt>(s);
    return runLoop(s, loop->getConditionVariableDeclStmt(), loop->getCond(), nullptr,
                   loop->getBody(), true);
  }
  case Stmt::DoStmtClass: {
    const auto *loop = cast<DoStmt>(s);
    return runLoop(s, nullptr, loop->getCond(), nullptr, loop->getBody(), false);
  }
  case Stmt::CXXForRangeStmtClass:
    return execRangeFor(cast<CXXForRangeStmt>(s));
  case Stmt::SwitchStmtClass:
    return execSwitch(cast<SwitchStmt>(s));
  case Stmt::CaseStmtClass:
    return exec(cast<CaseStmt>(s)->getSubStmt());
  case Stmt::DefaultStmtClass:
    return exec(cast<DefaultStmt>(s)->getSubStmt());
  case Stmt::LabelStmtClass:
    return exec(cast<LabelStmt>(s)->getSubStmt());
  case Stmt::AttributedStmtClass:
    return exec(cast<AttributedStmt>(s)->getSubStmt());
  case Stmt::ReturnStmtClass: {
    const auto *ret = cast<ReturnStmt>(s);
    Value v = ret->getRetValue() ? eval(ret->getRetValue()) : Value::uniformConstant(0);
    frame_->returned = frame_->returned ? join(*frame_->returned, v) : v;
    frame_->returnState =
        frame_->returnState ? joinStates(*frame_->returnState, frame_->state) : frame_->state;
    frame_->state.reachable = false;
    return;
  }
  case Stmt::BreakStmtClass:
    if (LoopContext *loop = innermostLoop(true)) {
      loop->breaks.push_back(frame_->state);
      frame_->state.reachable = false;
    }
    return;
  case Stmt::ContinueStmtClass:
    if (LoopContext *loop = innermostLoop(false)) {
      loop->continues.push_back(frame_->state);
      frame_->state.reachable = false;
    }
    return;
  case Stmt::CXXTryStmtClass: {
    const auto *tryStmt = cast<CXXTryStmt>(s);
    State before = frame_->state;
    // The region the try block's throws leave: the ranks that throw skip the rest of the block,
    // and go on after the handler with the others.
    LoopContext caught;
    frame_->tries.push_back({&caught, frame_->loops.size()});
    exec(tryStmt->getTryBlock());
    frame_->tries.pop_back();
    endRegion(&caught);
    State after = frame_->state;
    for (unsigned i = 0; i < tryStmt->getNumHandlers(); ++i) {
      frame_->state = joinStates(before, after);
      frame_->state.reachable = true;
      exec(tryStmt->getHandler(i)->getHandlerBlock());
      after = joinStates(after, frame_->state);
    }
    frame_->state = after;
    return;
  }
  case Stmt::GotoStmtClass:
  case Stmt::NullStmtClass:
    return;
  default:
    break;
  }
  if (const auto *e = dyn_cast<Expr>(s)) {
    eval(e);
    // MPI_Abort ends every rank's process: nothing after it runs (so it guards what follows
    // its condition), though it is no early exit of some ranks (nobody is left waiting).
    if (isa<CXXThrowExpr>(e->IgnoreParenImpCasts()) || isNoReturnCall(e) || isMpiAbort(e) ||
        endsProcess(e))
      frame_->state.reachable = false;
    return;
  }
  for (const Stmt *child : s->children())
    exec(child);
}

void FlowAnalysis::Walker::execCompound(const CompoundStmt *block) {
  LoopContext *switchContext = !frame_->loops.empty() && frame_->loops.back()->isSwitch &&
                                       frame_->loops.back()->body == block
                                   ? frame_->loops.back()
                                   : nullptr;
  unsigned index = 0;
  // The statements before `partitionEnd` are a run of ifs proved to split the ranks; `proved`
  // holds the ifs this walk of the block proved, until it ends.
  unsigned partitionEnd = 0;
  llvm::SmallVector<const IfStmt *, 8> proved;
  for (const Stmt *child : block->body()) {
    ++index;
    if (switchContext && isa<SwitchCase>(child))
      frame_->state = frame_->state.reachable ? joinStates(switchContext->entry, frame_->state)
                                              : switchContext->entry;
    if (!frame_->state.reachable)
      break;
    if (index > partitionEnd && isa<IfStmt>(child))
      if (unsigned length = provePartition(block, index - 1, proved))
        partitionEnd = index - 1 + length;
    frame_->rest.push_back({block, index, frame_->loops.size()});
    exec(child);
    frame_->rest.pop_back();
  }
  for (const IfStmt *branch : proved)
    if (--partitioned_[branch] == 0)
      partitioned_.erase(branch);
}

// Fields of a struct initialised by an init list or by their default member initialisers.
bool FlowAnalysis::Walker::initFields(const VarDecl *var, const Expr *init) {
  const CXXRecordDecl *record = var->getType()->getAsCXXRecordDecl();
  if (!record || isStdDecl(record) || isHandleType(var->getType()) || !record->hasDefinition() ||
      record->isUnion() || record->getNumBases() > 0)
    return false;
  const Expr *stripped = init ? init->IgnoreImplicit() : nullptr;
  llvm::SmallVector<const Expr *, 8> fieldInits;
  if (const auto *list = dyn_cast_or_null<InitListExpr>(stripped)) {
    if (list->getNumInits() == 1 && hasType(list->getInit(0)) &&
        list->getInit(0)->getType()->getAsCXXRecordDecl() == record)
      return false; // copy-list-initialisation
    for (const Expr *e : list->inits())
      fieldInits.push_back(e);
  } else if (const auto *construct = dyn_cast_or_null<CXXConstructExpr>(stripped);
             !stripped || (construct && construct->getNumArgs() == 0)) {
    for (const FieldDecl *field : record->fields())
      fieldInits.push_back(field->getInClassInitializer());
  } else {
    return false;
  }
  unsigned i = 0;
  Value whole = Value::uniformConstant(0);
  for (const FieldDecl *field : record->fields()) {
    const Expr *e = i < fieldInits.size() ? fieldInits[i] : nullptr;
    ++i;
    Value v = e ? eval(e) : Value::uniformConstant(0);
    whole = mix(whole, v);
    write(keyOf(var, field), v);
  }
  whole.op = ReduceOpKind::None;
  write(keyOf(var), whole);
  return true;
}

// The variables `e` reads, for a named test's snapshot.
void FlowAnalysis::Walker::variablesRead(const Stmt *e, std::vector<const VarDecl *> &out) {
  if (!e)
    return;
  if (const auto *ref = dyn_cast<DeclRefExpr>(e))
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()))
      out.push_back(var);
  for (const Stmt *child : e->children())
    variablesRead(child, out);
}

// A local `const bool` initialized with a test: the variables the test read, and when.
void FlowAnalysis::Walker::rememberNamedTest(const VarDecl *var) {
  if (isa<ParmVarDecl>(var) || !var->hasLocalStorage() || !var->getType().isConstQualified() ||
      !var->getType()->isBooleanType() || !var->getInit())
    return;
  NamedTest &test = namedTests_[var];
  test.read.clear();
  variablesRead(var->getInit(), test.read);
  test.at = writeClock_;
}

// Whether no variable `test` read has been written since (in the walk's order, which visits
// both sides of a branch: a write on either side counts).
bool FlowAnalysis::Walker::stillHolds(const NamedTest &test) const {
  return llvm::all_of(test.read, [&](const VarDecl *v) {
    auto it = lastWrite_.find(keyOf(v));
    return it == lastWrite_.end() || it->second <= test.at;
  });
}

void FlowAnalysis::Walker::execVarDecl(const VarDecl *var) {
  rememberNamedTest(var);
  const Expr *init = var->getInit();
  if (var->isStaticLocal() && init && var->getType().isConstQualified())
    return; // read through defaultFor
  if (initFields(var, init))
    return;
  Value v = init ? keepIntegerCopy(eval(init), init, var->getType()) : Value{};
  v = withNamedFacts(v, var, var->getType());
  // A pointer to a record (`const Config *config = &run_config`) stands for the record it
  // points to, field by field as that record.
  QualType type = var->getType();
  v.fields = fieldsFor(fieldwiseRecord(type->isPointerType() ? type->getPointeeType() : type),
                       std::move(v.fields));
  if (init && isHandleType(type)) {
    Locations targets = type->isReferenceType() ? lvalueLocations(init) : pointeeLocations(init);
    setAliases(keyOf(var).first, std::move(targets));
  }
  write(keyOf(var), v);
}

void FlowAnalysis::Walker::execIf(const IfStmt *branch) {
  exec(branch->getInit());
  if (const DeclStmt *decl = branch->getConditionVariableDeclStmt())
    exec(decl);
  const Expr *cond = branch->getCond();
  Value c = eval(cond);
  if (!frame_->state.reachable)
    return;
  const Stmt *thenStmt = branch->getThen(), *elseStmt = branch->getElse();
  if (std::optional<bool> fixed = flagFromCaller(cond))
    return exec(*fixed ? thenStmt : elseStmt);

  ControlDependence dep;
  dep.kind = ControlDependence::Kind::Branch;
  dep.condition = cond;
  dep.value = c;
  dep.membershipOf = membershipTested(cond);
  const Stmt *thenJump = findJump(thenStmt), *elseJump = findJump(elseStmt);
  const Stmt *jump =
      thenJump && !elseJump ? thenJump : (!thenJump && elseJump ? elseJump : nullptr);
  if (tainted(c)) {
    // What each side issues up to the end of the region a jump leaves. A side that ends the
    // process issues nothing the other ranks wait for.
    PathSet remainder = jump ? remainderSignature(regionOf(jump)) : PathSet{};
    PathSet thenPaths = signatures_.of(thenStmt), elsePaths = signatures_.of(elseStmt);
    if (!thenJump)
      thenPaths = thenPaths.then(remainder);
    if (!elseJump)
      elsePaths = elsePaths.then(remainder);
    bool thenEnds = endsProcess(thenStmt), elseEnds = elseStmt && endsProcess(elseStmt);
    PathSet all = thenEnds ? elsePaths : (elseEnds ? thenPaths : thenPaths.either(elsePaths));
    dep.balanced = all.single();
    dep.reordered = all.onlyReordered();
    // One of a run of ifs that together issue the same collectives on every rank.
    if (partitioned_.contains(branch))
      dep.balanced = true;
  }

  State entry = frame_->state;
  unsigned id = pushControl(dep);
  frame_->state = refine(entry, cond, true);
  exec(thenStmt);
  State thenEnd = frame_->state;
  frame_->state = refine(entry, cond, false);
  for (ActiveControl &active : frame_->control)
    if (active.dep.id == id)
      active.dep.negated = true; // the else side runs where the condition does not hold
  exec(elseStmt);
  State elseEnd = frame_->state;
  popControl(id);
  frame_->state = joinStates(thenEnd, elseEnd);
  if (!thenEnd.reachable && !elseEnd.reachable)
    frame_->state.reachable = false;

  // An exit taken on some ranks only: what follows it is not reached by them. A return taken
  // because a runtime call failed (nccl-tests' NCCLCHECK returns the error up to main, which
  // ends the process) is error handling, as an exit or a throw would be, not a silent skip.
  bool errorReturn = c.status && isa_and_nonnull<ReturnStmt>(jump);
  if (jump && !c.uniform && !errorReturn && frame_->state.reachable) {
    ControlDependence exit = dep;
    exit.kind = ControlDependence::Kind::EarlyExit;
    exit.exit = jump;
    exit.negated = jump == elseJump; // the ranks leaving are those where the condition fails
    const LoopContext *region = regionOf(jump);
    if (isa<BreakStmt>(jump) && region && region->isSwitch)
      return;
    bool known = llvm::any_of(
        frame_->control, [&](const ActiveControl &a) { return a.earlyExit && a.dep.exit == jump; });
    if (!known)
      pushControl(exit, /*earlyExit=*/true, region);
    if (tainted(c)) {
      ControlDependence leave = exit;
      leave.kind = ControlDependence::Kind::LoopExit;
      leave.balanced = false;
      if (isa<BreakStmt>(jump)) {
        if (LoopContext *loop = innermostLoop(false))
          loop->varyingExit = leave;
      } else if (!isa<ContinueStmt>(jump)) {
        for (size_t i = loopsLeftBy(jump); i < frame_->loops.size(); ++i)
          if (!frame_->loops[i]->isSwitch)
            frame_->loops[i]->varyingExit = leave;
      }
    }
  }
}

// A test of a flag the call passes as a constant (`norm_squared(out, x, n, /*reset=*/true)`),
// which the function never writes: for this call, the side it picks is the only one. The
// constant is read from the call's text, not from the values the walk tracks (those may miss a
// write that a runtime call makes).
std::optional<bool> FlowAnalysis::Walker::flagFromCaller(const Expr *cond) {
  bool negated = false;
  cond = cond->IgnoreParenImpCasts();
  while (const auto *unary = dyn_cast<UnaryOperator>(cond)) {
    if (unary->getOpcode() != UO_LNot)
      return std::nullopt;
    negated = !negated;
    cond = unary->getSubExpr()->IgnoreParenImpCasts();
  }
  const auto *ref = dyn_cast<DeclRefExpr>(cond);
  const auto *param = ref ? dyn_cast<ParmVarDecl>(ref->getDecl()) : nullptr;
  const auto *call = dyn_cast_or_null<CallExpr>(frame_->callSite);
  const auto *owner = param ? dyn_cast<FunctionDecl>(param->getDeclContext()) : nullptr;
  if (!param || !call || isa<CXXOperatorCallExpr>(call) || !owner || !frame_->function ||
      owner->getCanonicalDecl() != frame_->function->getCanonicalDecl() ||
      param->getFunctionScopeIndex() >= call->getNumArgs() || !frame_->function->getBody() ||
      writes(frame_->function->getBody(), param))
    return std::nullopt;
  const Expr *arg = call->getArg(param->getFunctionScopeIndex());
  bool truth = false;
  if (arg->isValueDependent() || arg->isTypeDependent() ||
      !arg->EvaluateAsBooleanCondition(truth, context_))
    return std::nullopt;
  return truth != negated;
}

void FlowAnalysis::Walker::collectInduction(const Stmt *s, LoopContext &loop, bool onlyModified) {
  if (!s)
    return;
  if (const auto *ref = dyn_cast<DeclRefExpr>(s)) {
    if (!onlyModified)
      loop.induction.insert(ref->getDecl()->getCanonicalDecl());
    return;
  }
  if (onlyModified) {
    const Expr *target = nullptr;
    if (const auto *unary = dyn_cast<UnaryOperator>(s); unary && unary->isIncrementDecrementOp())
      target = unary->getSubExpr();
    else if (const auto *binary = dyn_cast<BinaryOperator>(s); binary && binary->isAssignmentOp())
      target = binary->getLHS();
    else if (const auto *op = dyn_cast<CXXOperatorCallExpr>(s); op && op->getNumArgs() > 0)
      target = op->getArg(0);
    if (target)
      if (const NamedDecl *d = coreDecl(target))
        loop.induction.insert(d->getCanonicalDecl());
  }
  for (const Stmt *child : s->children())
    collectInduction(child, loop, onlyModified);
}

void FlowAnalysis::Walker::endRegion(const LoopContext *loop) {
  llvm::erase_if(frame_->control,
                 [&](const ActiveControl &c) { return c.earlyExit && c.region == loop; });
}

// Runs `pass` (which starts from the entry joined with `back`, joins what reaches the back edge
// into `back` and says whether that changed nothing): provisional passes until the loop
// settles, at most two, then the pass that reports. A loop inside another is walked again on
// every pass of the outer one, so it starts from where its last walk in this frame left its
// back edge; within an outer provisional pass it takes one pass (the outer loop's next pass
// carries on from there), and when it is to report from a state its last walk had settled on,
// it reports at once. Nesting then costs passes in proportion to the square of its depth at
// most, where walking each inner loop afresh cost 2^depth.
template <typename Pass>
void FlowAnalysis::Walker::settle(LoopContext &loop, const Stmt *loopStmt, const State &entry,
                                  std::optional<State> &back, Pass &&pass) {
  // Copied: the walks below add the memos of the loops inside, which may move this one.
  LoopMemo memo = loopMemos_.back().lookup(loopStmt);
  if (memo.back) {
    back = memo.back;
    if (!loop.varyingExit)
      loop.varyingExit = memo.varyingExit;
  }
  bool nested = frame_->silent > 0;
  bool settled = memo.settled && sameState(memo.head, joinStates(memo.head, entry));
  ++frame_->silent;
  for (unsigned i = 0; i < (nested ? 1 : 2) && (nested || !settled); ++i) {
    memo.head = back ? joinStates(entry, *back) : entry;
    settled = pass(false);
  }
  --frame_->silent;
  if (!nested)
    pass(true);
  memo.back = back;
  memo.settled = settled;
  memo.varyingExit = loop.varyingExit;
  loopMemos_.back()[loopStmt] = std::move(memo);
}

// for, while and do: provisional passes until the values settle, then the pass that reports.
void FlowAnalysis::Walker::runLoop(const Stmt *loopStmt, const DeclStmt *condVar, const Expr *cond,
                                   const Expr *inc, const Stmt *body, bool condFirst) {
  LoopContext loop;
  loop.body = body;
  // The variables a loop steps are not counts: those its increment modifies (for), those its
  // condition tests (while, do).
  if (isa<ForStmt>(loopStmt))
    collectInduction(inc, loop, true);
  else
    collectInduction(cond, loop, false);
  frame_->loops.push_back(&loop);

  State entry = frame_->state;
  std::optional<State> back;
  std::optional<Value> condValue;
  State exitState;
  exitState.reachable = false;
  auto pass = [&](bool reporting) {
    frame_->state = back ? joinStates(entry, *back) : entry;
    frame_->state.reachable = true;
    loop.breaks.clear();
    loop.continues.clear();
    if (condFirst) {
      if (condVar)
        exec(condVar);
      if (cond)
        condValue = eval(cond);
      exitState = refine(frame_->state, cond, false);
      frame_->state = refine(frame_->state, cond, true);
    }
    std::vector<unsigned> ids;
    if (cond && condValue && !condValue->uniform) {
      ControlDependence dep;
      dep.kind = ControlDependence::Kind::Loop;
      dep.condition = cond;
      dep.value = *condValue;
      ids.push_back(pushControl(dep));
    }
    if (reporting && loop.varyingExit)
      ids.push_back(pushControl(*loop.varyingExit));
    exec(body);
    for (unsigned id : ids)
      popControl(id);
    endRegion(&loop);
    for (const State &c : loop.continues)
      frame_->state = joinStates(frame_->state, c);
    if (!condFirst && frame_->state.reachable) {
      if (cond)
        condValue = eval(cond);
      exitState = refine(frame_->state, cond, false);
    }
    if (inc && frame_->state.reachable)
      eval(inc);
    bool settled = back && sameState(*back, joinStates(*back, frame_->state));
    back = back ? joinStates(*back, frame_->state) : frame_->state;
    return settled;
  };
  settle(loop, loopStmt, entry, back, [&](bool reporting) { return pass(reporting); });

  bool endless = !cond || (condValue && condValue->constant && *condValue->constant != 0);
  State out;
  out.reachable = false;
  if (!endless)
    out = exitState;
  for (const State &b : loop.breaks)
    out = joinStates(out, b);
  frame_->loops.pop_back();
  frame_->state = out;
}

void FlowAnalysis::Walker::execRangeFor(const CXXForRangeStmt *loopStmt) {
  exec(loopStmt->getInit());
  const Expr *range = loopStmt->getRangeInit();
  Value rangeValue = eval(range);
  const VarDecl *var = loopStmt->getLoopVariable();
  Locations elements =
      range ? (pointerTyped(range) ? pointeeLocations(range) : lvalueLocations(range))
            : Locations{};
  LoopContext loop;
  loop.body = loopStmt->getBody();
  frame_->loops.push_back(&loop);
  State entry = frame_->state;
  std::optional<State> back;
  auto pass = [&](bool) {
    frame_->state = back ? joinStates(entry, *back) : entry;
    frame_->state.reachable = true;
    loop.breaks.clear();
    loop.continues.clear();
    Value element = rangeValue;
    element.op = ReduceOpKind::None;
    if (var) {
      if (var->getType()->isReferenceType() || isHandleType(var->getType()))
        setAliases(keyOf(var).first, elements);
      write(keyOf(var), withNamedFacts(element, var, var->getType()));
    }
    // As many iterations as the range has elements, like `i < batches.size()`.
    ControlDependence dep;
    dep.kind = ControlDependence::Kind::Loop;
    dep.condition = range;
    dep.overRange = true;
    dep.value = elementCount(rangeValue, range, range);
    unsigned id = rangeValue.uniform ? 0 : pushControl(dep);
    unsigned exitId = 0;
    if (!frame_->silent && loop.varyingExit)
      exitId = pushControl(*loop.varyingExit);
    exec(loopStmt->getBody());
    popControl(id);
    popControl(exitId);
    endRegion(&loop);
    for (const State &c : loop.continues)
      frame_->state = joinStates(frame_->state, c);
    bool settled = back && sameState(*back, joinStates(*back, frame_->state));
    back = back ? joinStates(*back, frame_->state) : frame_->state;
    return settled;
  };
  settle(loop, loopStmt, entry, back, pass);
  State out = joinStates(entry, *back);
  for (const State &b : loop.breaks)
    out = joinStates(out, b);
  frame_->loops.pop_back();
  frame_->state = out;
}

void FlowAnalysis::Walker::execSwitch(const SwitchStmt *sw) {
  exec(sw->getInit());
  if (const DeclStmt *decl = sw->getConditionVariableDeclStmt())
    exec(decl);
  Value c = eval(sw->getCond());
  LoopContext context;
  context.isSwitch = true;
  context.body = sw->getBody();
  context.entry = frame_->state;
  bool hasDefault = false;
  ControlDependence dep;
  dep.kind = ControlDependence::Kind::Branch;
  dep.condition = sw->getCond();
  dep.value = c;
  if (tainted(c)) {
    // Balanced when every case (and the default) issues the same collectives.
    std::vector<PathSet> cases;
    if (const auto *block = dyn_cast<CompoundStmt>(sw->getBody()))
      for (const Stmt *child : block->body()) {
        if (isa<SwitchCase>(child)) {
          hasDefault |= isa<DefaultStmt>(child);
          cases.emplace_back();
        }
        if (!cases.empty())
          cases.back() = cases.back().then(signatures_.of(child));
      }
    // Without a default, some values of the condition run no case at all.
    std::optional<PathSet> all;
    if (!hasDefault)
      all = PathSet{};
    for (const PathSet &c : cases)
      all = all ? all->either(c) : c;
    if (!all)
      all = PathSet{};
    dep.balanced = all->single();
    dep.reordered = all->onlyReordered();
  }
  for (const SwitchCase *sc = sw->getSwitchCaseList(); sc; sc = sc->getNextSwitchCase())
    hasDefault |= isa<DefaultStmt>(sc);
  frame_->loops.push_back(&context);
  unsigned id = pushControl(dep);
  exec(sw->getBody());
  popControl(id);
  endRegion(&context);
  frame_->loops.pop_back();
  for (const State &b : context.breaks)
    frame_->state = joinStates(frame_->state, b);
  if (!hasDefault)
    frame_->state = joinStates(frame_->state, context.entry);
}

} // namespace collcheck::lint
