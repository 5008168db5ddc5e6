// The flow walker's entry points and its frames: walking a function's body with a state of its
// own, inlining a call into a new frame and handing its result back to the caller, and the
// fields and globals that some function of the file fills with the rank.

#include "engine/flow/Walker.h"

namespace collcheck::lint {

FlowAnalysis::Walker::Walker(ASTContext &context, const LintConfig &config,
                             const ReducerTable &table, CollectiveSignatures &signatures,
                             FlowListener &listener)
    : context_(context), sm_(context.getSourceManager()), config_(config), table_(table),
      signatures_(signatures), listener_(listener) {
  auto compile = [](const std::vector<std::string> &patterns) {
    std::vector<std::regex> out;
    for (const std::string &p : patterns)
      out.push_back(compileNamePattern(p));
    return out;
  };
  rankNames_ = compile(config.rankNames);
  sizeNames_ = compile(config.sizeNames);
  countNames_ = compile(config.countNames);
  globalCountNames_ = compile(config.globalCountNames);
  dataNames_ = compile(config.dataNames);
  maskNames_ = compile(config.maskNames);
  nonCountNames_ = compile(config.nonCountNames);
  modelNames_ = compile(config.modelNames);
}

void FlowAnalysis::Walker::analyzeRoot(const FunctionDecl *function) {
  Frame frame;
  frame.function = function;
  runFrame(frame);
}

RootEffect FlowAnalysis::Walker::summariseRoot(const FunctionDecl *function,
                                               bool uniformParameters) {
  Frame frame;
  frame.function = function;
  std::vector<Value> initial;
  for (unsigned i = 0; i < function->getNumParams() && i < 32; ++i) {
    // Scalars are the same on every rank (sizes, steps, options); what a pointer, a reference
    // or a handle reaches is data, which differs (a batch, a mask, a loss).
    QualType type = function->getParamDecl(i)->getType();
    bool data = type->isPointerType() || type->isReferenceType() || type->isArrayType() ||
                isHandleType(type);
    Value v;
    v.uniform = uniformParameters && !data;
    v.paramMask = 1u << i;
    frame.state.values[keyOf(function->getParamDecl(i))] = v;
    initial.push_back(v);
  }
  runFrame(frame);
  RootEffect effect;
  effect.returned = frame.returned;
  effect.neverReturns = !frame.returnState && !frame.state.reachable;
  State final = frame.state;
  if (frame.returnState)
    final = joinStates(*frame.returnState, final);
  for (unsigned i = 0; i < initial.size(); ++i) {
    auto it = final.values.find(keyOf(function->getParamDecl(i)));
    if (it != final.values.end() && !it->second.sameFacts(initial[i]))
      effect.outParams.emplace_back(i, it->second);
  }
  return effect;
}

std::vector<LastingStorage> FlowAnalysis::Walker::lastingStorage() {
  std::vector<LastingStorage> out;
  for (const auto &[decl, origin] : rankStorage_)
    out.push_back({cast<NamedDecl>(decl), QuerySpec::What::Rank, rankCommunicator(origin)});
  for (const auto &[decl, origin] : sizeStorage_)
    out.push_back({cast<NamedDecl>(decl), QuerySpec::What::Size, ""});
  return out;
}

// Fields and variables outside any function that some function of the file fills with the
// rank (`MPI_Comm_rank(comm_, &rank_)` in a constructor, `g_rank = pg.getRank()` in a setup
// function). A method walked on its own, or a function that reads the global, does not see
// that write and would take a condition on them for rank-uniform.
void FlowAnalysis::Walker::learnRankStorage(llvm::ArrayRef<const FunctionDecl *> functions) {
  for (const FunctionDecl *fn : functions) {
    findRankWrites(fn->getBody());
    if (const auto *ctor = dyn_cast<CXXConstructorDecl>(fn))
      for (const CXXCtorInitializer *init : ctor->inits())
        if (const FieldDecl *field = init->getMember(); field && init->getInit()) {
          if (const CallExpr *query = returnedQuery(init->getInit(), QuerySpec::What::Rank))
            rankStorage_.try_emplace(field->getCanonicalDecl(), Origin{query, field});
          if (const CallExpr *query = returnedQuery(init->getInit(), QuerySpec::What::Size))
            sizeStorage_.try_emplace(field->getCanonicalDecl(), Origin{query, field});
        }
  }
}

bool FlowAnalysis::Walker::analyzed(const FunctionDecl *function) const {
  return walked_.contains(function->getCanonicalDecl());
}

void FlowAnalysis::Walker::markAnalyzed(const FunctionDecl *function) {
  walked_.insert(function->getCanonicalDecl());
}

void FlowAnalysis::Walker::recoverFromFailure() {
  frame_ = nullptr;
  loopMemos_.clear();
  evaluatingGlobals_.clear();
}

bool FlowAnalysis::Walker::analyzedOrInstantiated(const FunctionDecl *pattern) const {
  return analyzed(pattern) || walkedPatterns_.contains(pattern->getCanonicalDecl());
}

std::vector<const CXXMethodDecl *> FlowAnalysis::Walker::unwalkedLambdas() const {
  std::vector<const CXXMethodDecl *> out;
  for (const CXXMethodDecl *op : lambdas_)
    if (!analyzed(op))
      out.push_back(op);
  return out;
}

void FlowAnalysis::Walker::runFrame(Frame &frame) {
  if (!config_.failInFunction.empty() && frame.function->getIdentifier() &&
      frame.function->getName() == config_.failInFunction)
    LLVM_BUILTIN_TRAP;
  Frame *saved = frame_;
  frame_ = &frame;
  walked_.insert(frame.function->getCanonicalDecl());
  if (const FunctionDecl *pattern = frame.function->getTemplateInstantiationPattern())
    walkedPatterns_.insert(pattern->getCanonicalDecl());
  loopMemos_.emplace_back();
  collectCountEvidence(frame.function->getBody());
  if (const auto *ctor = dyn_cast<CXXConstructorDecl>(frame.function))
    for (const CXXCtorInitializer *init : ctor->inits())
      if (init->getInit())
        eval(init->getInit());
  exec(frame.function->getBody());
  loopMemos_.pop_back();
  frame_ = saved;
}

bool FlowAnalysis::Walker::emitting() const { return frame_->silent == 0; }

bool FlowAnalysis::Walker::onCallStack(const FunctionDecl *function) const {
  for (const Frame *f = frame_; f; f = f->caller)
    if (f->function->getCanonicalDecl() == function->getCanonicalDecl())
      return true;
  return false;
}

bool FlowAnalysis::Walker::canInline(const FunctionDecl *definition) const {
  return definition && definition->getBody() && frame_->depth < kMaxCallDepth &&
         evaluations_ < kEvaluationBudget && !sm_.isInSystemHeader(definition->getLocation()) &&
         !definition->isDependentContext() && !onCallStack(definition);
}

// Walks `definition` for a call from the current frame with the given argument values.
Value FlowAnalysis::Walker::inlineCall(const FunctionDecl *definition, const Expr *call,
                                       llvm::ArrayRef<const Expr *> argExprs,
                                       std::vector<Value> args, Frame *lexicalParent) {
  Frame callee;
  callee.function = definition;
  callee.caller = frame_;
  callee.callSite = call;
  callee.depth = frame_->depth + 1;
  callee.silent = frame_->silent;
  callee.lexicalParent = lexicalParent;
  callee.gradients = frame_->gradients;
  unsigned count = std::min<unsigned>(definition->getNumParams(), args.size());
  for (unsigned i = 0; i < count; ++i) {
    Value v = args[i];
    callee.argParamMasks.push_back(v.paramMask);
    v.paramMask = i < 32 ? 1u << i : 0;
    callee.state.values[keyOf(definition->getParamDecl(i))] = v;
  }
  runFrame(callee);
  leaveWithCallee(callee, call);
  // A helper that never returns (it always ends the process) ends the caller's path too.
  bool neverReturns = !callee.returnState && !callee.state.reachable;

  State final = callee.state;
  if (callee.returnState)
    final = joinStates(*callee.returnState, final);
  // A helper that returns only when a condition it was given held (`require(N > 0, "...")`,
  // whose body throws or exits otherwise) guards what follows the call as that test would.
  for (unsigned i = 0; i < count && i < argExprs.size() && final.reachable; ++i) {
    const ParmVarDecl *param = definition->getParamDecl(i);
    if (!param->getType()->isBooleanType() || writes(definition->getBody(), param))
      continue;
    auto it = final.values.find(keyOf(param));
    if (it != final.values.end() && it->second.nonZero)
      refineInto(frame_->state, argExprs[i], true);
  }
  // Out parameters: what the callee left behind a pointer, reference or handle parameter is
  // what the caller's argument now holds.
  for (unsigned i = 0; i < count && i < argExprs.size(); ++i) {
    const ParmVarDecl *param = definition->getParamDecl(i);
    QualType type = param->getType();
    bool writable = isOutPointerOrReference(type) ||
                    (isHandleType(type) && !type->isReferenceType() && !type->isPointerType());
    if (!writable)
      continue;
    Locations targets =
        type->isReferenceType() ? lvalueLocations(argExprs[i]) : pointeeLocations(argExprs[i]);
    if (targets.empty())
      continue;
    LocKey paramKey = keyOf(param);
    auto it = final.values.find(paramKey);
    if (it == final.values.end())
      continue;
    Value v = forCaller(it->second, callee);
    for (const LocKey &target : targets)
      write(target, v, /*taint=*/false);
    for (const auto &[key, fieldValue] : final.values)
      if (key.first == paramKey.first && key.second)
        for (const LocKey &target : targets)
          write({target.first, key.second}, forCaller(fieldValue, callee), false);
  }
  if (callee.gradients)
    frame_->gradients =
        frame_->gradients ? join(*frame_->gradients, *callee.gradients) : *callee.gradients;
  Value result = callee.returned ? forCaller(*callee.returned, callee) : Value{};
  if (neverReturns)
    frame_->state.reachable = false;
  return result;
}

// A call that never returns (std::exit, std::abort, a [[noreturn]] helper), taken in `callee`
// on some ranks only, ends those ranks' process: what the caller issues after `call` is not
// reached by them either. So does a `throw` the callee does not catch, up to the end of the
// caller's try block around the call, if any. A `return` leaves only the callee.
void FlowAnalysis::Walker::leaveWithCallee(const Frame &callee, const Expr *call) {
  if (!frame_->state.reachable)
    return;
  for (const ActiveControl &c : callee.control) {
    const Stmt *exit = c.dep.exit;
    bool thrown = isa_and_nonnull<CXXThrowExpr>(exit);
    if (!c.earlyExit || c.region || !(thrown || isNoReturnCall(dyn_cast_or_null<Expr>(exit))))
      continue;
    bool known = llvm::any_of(frame_->control, [&](const ActiveControl &a) {
      return a.earlyExit && a.dep.exit == c.dep.exit;
    });
    if (known)
      continue;
    ControlDependence leave = c.dep;
    leave.via = call; // the call in this function: what a finding here points the reader to
    if (!leave.exitIn)
      leave.exitIn = callee.function;
    // Judged in the callee against what it issues after the exit; any collective that meets
    // this dependence here is one the leaving ranks skip.
    leave.balanced = leave.reordered = false;
    // The loops around the call (inside the try block a throw lands in): the leaving ranks
    // miss their later iterations too.
    ControlDependence loopExit = leave;
    loopExit.kind = ControlDependence::Kind::LoopExit;
    const LoopContext *region = thrown ? regionOf(exit) : nullptr;
    for (size_t i = loopsLeftBy(exit); i < frame_->loops.size(); ++i)
      if (!frame_->loops[i]->isSwitch)
        frame_->loops[i]->varyingExit = loopExit;
    pushControl(std::move(leave), /*earlyExit=*/true, region);
  }
}

// A value leaving `callee` for its caller: parameter masks become the caller's, and a pending
// sum made inside is now seen at the call.
Value FlowAnalysis::Walker::forCaller(Value v, const Frame &callee) {
  uint32_t mask = 0;
  for (unsigned i = 0; i < callee.argParamMasks.size() && i < 32; ++i)
    if (v.paramMask & (1u << i))
      mask |= callee.argParamMasks[i];
  v.paramMask = mask;
  if (v.fields) {
    auto fields = std::make_shared<FieldValues>(*v.fields);
    for (auto &item : fields->items)
      item.second = forCaller(std::move(item.second), callee);
    v.fields = std::move(fields);
  }
  if (v.pendingSum && v.pendingSum->reportDepth > frame_->depth) {
    auto moved = std::make_shared<PendingSum>(*v.pendingSum);
    moved->steps.insert(moved->steps.begin(), {callee.function, callee.callSite});
    moved->reportAt = callee.callSite;
    moved->reportDepth = frame_->depth;
    uint32_t callerMask = 0;
    for (unsigned i = 0; i < callee.argParamMasks.size() && i < 32; ++i)
      if (moved->reportMask & (1u << i))
        callerMask |= callee.argParamMasks[i];
    moved->reportMask = callerMask;
    v.pendingSum = std::move(moved);
  }
  return v;
}

// `e` itself, stripped, when it is a call of a query that returns the rank or the size.
const CallExpr *FlowAnalysis::Walker::returnedQuery(const Expr *e, QuerySpec::What what) const {
  const auto *call = dyn_cast_or_null<CallExpr>(strip(e));
  const FunctionDecl *callee = call ? calleeOf(call) : nullptr;
  const QuerySpec *query = callee ? table_.lookup(callee).query : nullptr;
  return query && query->what == what && query->out < 0 ? call : nullptr;
}

// The field, or the variable outside functions, that the lvalue `e` names; null otherwise.
const NamedDecl *FlowAnalysis::Walker::lastingStorage(const Expr *e) {
  e = e ? e->IgnoreParenImpCasts() : nullptr;
  if (const auto *member = dyn_cast_or_null<MemberExpr>(e))
    if (const auto *field = dyn_cast<FieldDecl>(member->getMemberDecl()))
      return field->getCanonicalDecl();
  if (const auto *ref = dyn_cast_or_null<DeclRefExpr>(e))
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl());
        var && var->hasGlobalStorage() && !var->isLocalVarDecl())
      return var->getCanonicalDecl();
  return nullptr;
}

void FlowAnalysis::Walker::findRankWrites(const Stmt *s) {
  if (!s)
    return;
  for (const Stmt *child : s->children())
    findRankWrites(child);
  const NamedDecl *storage = nullptr;
  const Expr *at = nullptr;
  QuerySpec::What what = QuerySpec::What::Rank;
  if (const auto *call = dyn_cast<CallExpr>(s)) {
    const FunctionDecl *callee = calleeOf(call);
    // A field or global that a split fills (`MPI_Comm_split(world, local_rank, rank,
    // &cross_)`): its members are chosen by the colour, so conditions on the rank are theirs.
    if (callee && callee->getIdentifier() &&
        (callee->getName() == "MPI_Comm_split" || callee->getName() == "ncclCommSplit") &&
        call->getNumArgs() > 3)
      if (const auto *address = dyn_cast<UnaryOperator>(call->getArg(3)->IgnoreParenImpCasts());
          address && address->getOpcode() == UO_AddrOf)
        if (const NamedDecl *comm = lastingStorage(address->getSubExpr()))
          splitStorage_.insert(comm);
    const QuerySpec *query = callee ? table_.lookup(callee).query : nullptr;
    if (query && query->out >= 0 && query->out < static_cast<int>(call->getNumArgs()))
      if (const auto *address =
              dyn_cast<UnaryOperator>(call->getArg(query->out)->IgnoreParenImpCasts());
          address && address->getOpcode() == UO_AddrOf) {
        storage = lastingStorage(address->getSubExpr());
        at = call;
        what = query->what;
      }
  } else if (const auto *assign = dyn_cast<BinaryOperator>(s);
             assign && assign->getOpcode() == BO_Assign) {
    at = returnedQuery(assign->getRHS(), QuerySpec::What::Rank);
    if (!at) {
      at = returnedQuery(assign->getRHS(), QuerySpec::What::Size);
      what = QuerySpec::What::Size;
    }
    storage = at ? lastingStorage(assign->getLHS()) : nullptr;
  }
  if (storage)
    (what == QuerySpec::What::Rank ? rankStorage_ : sizeStorage_)
        .try_emplace(storage, Origin{at, storage});
}

// Variables that a function sends as the integer data of a reduction are local counts.
void FlowAnalysis::Walker::collectCountEvidence(const Stmt *s) {
  if (!s)
    return;
  for (const Stmt *child : s->children())
    collectCountEvidence(child);
  const auto *call = dyn_cast<CallExpr>(s);
  const FunctionDecl *callee = call ? calleeOf(call) : nullptr;
  if (!callee)
    return;
  const ReducerSpec *spec = table_.lookup(callee).reducer;
  if (!spec || spec->kind == CollectiveKind::Broadcast || spec->send < 0 ||
      spec->send >= static_cast<int>(call->getNumArgs()))
    return;
  const Expr *data = call->getArg(spec->send);
  if (isInPlace(data) && spec->recv >= 0 && spec->recv < static_cast<int>(call->getNumArgs()))
    data = call->getArg(spec->recv);
  if (!isIntegralData(call, *spec, data))
    return;
  if (const NamedDecl *decl = coreDecl(data))
    frame_->countEvidence.insert(decl->getCanonicalDecl());
}

} // namespace collcheck::lint
