// Calls: inlined definitions and lambdas, the standard functions whose effect on counts and
// guards matters, the reducer table's functions, the collectives reported to the listener, and
// unknownCall for a function the walk cannot see into.

#include "engine/LibraryModels.h"
#include "engine/flow/Walker.h"

#include "clang/AST/Attr.h"

namespace collcheck::lint {

std::vector<Value> FlowAnalysis::Walker::evalArgs(llvm::ArrayRef<const Expr *> args) {
  std::vector<Value> values;
  values.reserve(args.size());
  for (const Expr *arg : args)
    values.push_back(eval(arg));
  return values;
}

llvm::SmallVector<const Expr *, 8> FlowAnalysis::Walker::argsOf(const CallExpr *call,
                                                                unsigned skip) {
  llvm::SmallVector<const Expr *, 8> out;
  for (unsigned i = skip; i < call->getNumArgs(); ++i)
    out.push_back(call->getArg(i));
  return out;
}

Value FlowAnalysis::Walker::evalCall(const CallExpr *call) {
  if (const auto *member = dyn_cast<CXXMemberCallExpr>(call))
    return evalMemberCall(member);
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(call))
    return evalOperatorCall(op);
  const FunctionDecl *callee = calleeOf(call);
  // In a template as written, `losses.size()` of a container of dependent type counts its
  // elements as it will once instantiated.
  if (const auto *member = dyn_cast<CXXDependentScopeMemberExpr>(call->getCallee());
      !callee && member && !member->isImplicitAccess() && isElementCount(member->getMember())) {
    Value object = eval(member->getBase());
    evalArgs(argsOf(call));
    return elementCount(object, member->getBase(), call);
  }
  if (!callee) {
    Value target = eval(call->getCallee());
    auto args = argsOf(call);
    std::vector<Value> values = evalArgs(args);
    if (target.lambda)
      return callLambda(target.lambda, call, args, std::move(values));
    return unknownCall(nullptr, args, values);
  }
  if (const auto *kernel = dyn_cast<CUDAKernelCallExpr>(call))
    (void)kernel; // the launch configuration carries no data
  auto args = argsOf(call);
  return callFunction(callee, call, args, nullptr);
}

Value FlowAnalysis::Walker::callLambda(const CXXMethodDecl *op, const Expr *call,
                                       llvm::ArrayRef<const Expr *> args,
                                       std::vector<Value> values) {
  const FunctionDecl *definition = nullptr;
  if (op->hasBody(definition) && canInline(definition))
    return callDefinition(definition, "the lambda", call, args, std::move(values), frame_);
  return unknownCall(op, args, values);
}

// A function of this translation unit: a collective itself if it issues one, then walked.
Value FlowAnalysis::Walker::callDefinition(const FunctionDecl *definition, std::string name,
                                           const Expr *call, llvm::ArrayRef<const Expr *> args,
                                           std::vector<Value> values, Frame *lexicalParent,
                                           bool onSubCommunicator) {
  if (signatures_.ofFunction(definition).issuesCollectives())
    emitCollective(call, std::move(name), onSubCommunicator);
  return inlineCall(definition, call, args, std::move(values), lexicalParent);
}

// A call of `callee` with `args` (excluding the object of a method call, whose value is
// `object` when there is one).
Value FlowAnalysis::Walker::callFunction(const FunctionDecl *callee, const CallExpr *call,
                                         llvm::ArrayRef<const Expr *> args, const Value *object) {
  const ReducerTable::Match match = table_.lookup(callee);
  if (match.reducer)
    return reducerCall(*match.reducer, callee, call, args, object);
  std::vector<Value> values = evalArgs(args);
  if (match.query)
    return queryCall(*match.query, call, args);
  if (match.preMulSum)
    return preMulSumCall(*match.preMulSum, call, args, values);
  if (match.copy) {
    const CopySpec &copy = *match.copy;
    if (copy.dst < static_cast<int>(args.size()) && copy.src < static_cast<int>(args.size())) {
      Value data = values[copy.src];
      writeAll(pointeeLocations(args[copy.dst]), data);
    }
    return Value::uniformConstant(0);
  }
  if (auto known = knownFunction(callee, call, args, values))
    return *known;
  return callByBody(callee, call, args, std::move(values));
}

// A function no table describes: walked where this translation unit defines it, as its summary
// says where another file of the project does, unknown otherwise.
Value FlowAnalysis::Walker::callByBody(const FunctionDecl *callee, const CallExpr *call,
                                       llvm::ArrayRef<const Expr *> args,
                                       std::vector<Value> values) {
  const FunctionDecl *definition = nullptr;
  if (callee->hasBody(definition) && canInline(definition))
    return callDefinition(definition, CollectiveSignatures::displayName(callee), call, args,
                          std::move(values));
  if (const FunctionSummary *summary = summaryOf(callee))
    return summarisedCall(*summary, callee, call, args, values);
  return unknownCall(callee, args, values);
}

// A status enum (one with a `...Success` enumerator: ncclResult_t, cudaError_t, a project's
// testResult_t): a value of it says whether a call failed.
bool FlowAnalysis::Walker::isStatusType(QualType type) {
  const auto *enumType = type->getAs<EnumType>();
  const EnumDecl *decl = enumType ? enumType->getDecl()->getDefinition() : nullptr;
  if (!decl)
    return false;
  auto [it, inserted] = statusEnums_.try_emplace(decl, false);
  if (inserted)
    for (const EnumConstantDecl *e : decl->enumerators())
      if (e->getName().contains("Success") || e->getName().contains("SUCCESS"))
        it->second = true;
  return it->second;
}

// A function defined in another translation unit of the project, as its summary says.
const FunctionSummary *FlowAnalysis::Walker::summaryOf(const FunctionDecl *callee) const {
  if (!config_.project || callee->hasBody() || sm_.isInSystemHeader(callee->getLocation()))
    return nullptr;
  return config_.project->find(callee);
}

Value FlowAnalysis::Walker::summarisedCall(const FunctionSummary &summary,
                                           const FunctionDecl *callee, const CallExpr *call,
                                           llvm::ArrayRef<const Expr *> args,
                                           const std::vector<Value> &values) {
  if (!summary.collectives.empty())
    emitCollective(call, CollectiveSignatures::displayName(callee), false);
  for (const auto &[param, facts] : summary.writes)
    if (param < args.size() && param < callee->getNumParams())
      writeAll(pointeeOrLvalue(args[param], callee->getParamDecl(param)->getType()),
               fromSummary(facts, values, call), false);
  Value result = summary.returns ? fromSummary(*summary.returns, values, call)
                                 : unknownCall(nullptr, args, values);
  // Every path of it ends the process (it exits or aborts): so does the caller's, here.
  if (summary.endsProcess)
    frame_->state.reachable = false;
  return result;
}

// A value a summarised function hands back: what it owes to the function itself (the summary was
// made with parameters the same on every rank), and the taints of the arguments it derives from.
Value FlowAnalysis::Walker::fromSummary(const ValueFacts &facts, const std::vector<Value> &values,
                                        const Expr *call) {
  Value v;
  v.uniform = facts.uniform;
  v.reduced = facts.reduced;
  v.rankDerived = facts.rankDerived;
  v.countDerived = facts.countDerived;
  v.nonZero = facts.nonZero;
  v.mask = facts.mask;
  v.guessed = facts.guessed;
  v.powers = facts.powers;
  if (facts.paramMask == 0) {
    v.exactRank = facts.exactRank;
    v.exactSize = facts.exactSize;
  }
  if (facts.rankDerived)
    v.rankSource = {call, nullptr};
  if (facts.countDerived)
    v.countSource = {call, nullptr};
  if (facts.meanFormed)
    v.meanFormed = {call, nullptr};
  const Value *only = nullptr;
  unsigned derived = 0;
  for (unsigned i = 0; i < values.size() && i < 32; ++i) {
    if (!(facts.paramMask & (1u << i)))
      continue;
    const Value &arg = values[i];
    ++derived;
    only = &arg;
    bool ownTaint = v.rankDerived || v.countDerived;
    v.uniform = v.uniform && arg.uniform;
    v.rankDerived |= arg.rankDerived;
    v.countDerived |= arg.countDerived;
    v.guessed = ownTaint ? v.guessed : guessedFrom(v, arg);
    if (!v.rankSource)
      v.rankSource = arg.rankSource;
    if (!v.countSource)
      v.countSource = arg.countSource;
    if (!v.meanFormed)
      v.meanFormed = arg.meanFormed;
    v.paramMask |= arg.paramMask;
  }
  // Handed through (`float clip(float x)`): the argument's normalisation is the result's.
  if (derived == 1 && facts.powers.isZero()) {
    v.powers = only->powers;
    v.normalized = only->normalized;
    v.countReduced = only->countReduced;
    v.sizeDivided = only->sizeDivided;
  }
  return v;
}

// Standard functions whose effect on counts and guards matters (engine/LibraryModels.h).
std::optional<Value> FlowAnalysis::Walker::knownFunction(const FunctionDecl *callee,
                                                         const CallExpr *call,
                                                         llvm::ArrayRef<const Expr *> args,
                                                         const std::vector<Value> &values) {
  const IdentifierInfo *id = callee->getIdentifier();
  if (!id || values.empty())
    return std::nullopt;
  llvm::StringRef name = id->getName();
  bool library = isStdDecl(callee) || sm_.isInSystemHeader(callee->getLocation());
  if (!library)
    return std::nullopt;
  std::optional<LibraryModel> model = standardFunctionModel(name);
  if (!model)
    return std::nullopt;
  switch (*model) {
  case LibraryModel::UpperBound:
  case LibraryModel::Clamp: {
    // std::max(N, 1) and std::clamp(N, 1, hi) cannot be zero.
    Value r = values[0];
    for (size_t i = 1; i < values.size(); ++i) {
      Value m = mix(r, values[i]);
      r.guessed = m.guessed;
      r.uniform = m.uniform;
      r.rankDerived = m.rankDerived;
      r.countDerived = m.countDerived;
    }
    bool positiveBound = values.size() > 1 && values[1].constant && *values[1].constant > 0;
    r.nonZero = values[0].nonZero || positiveBound ||
                (values.size() > 1 && values[1].nonZero && *model != LibraryModel::Clamp);
    return r;
  }
  case LibraryModel::Minimum:
  case LibraryModel::AsArguments:
  case LibraryModel::FirstArgument: {
    Value r = values[0];
    for (size_t i = 1; i < values.size(); ++i)
      if (*model != LibraryModel::FirstArgument)
        r = join(r, values[i]);
    if (*model == LibraryModel::Minimum)
      r.nonZero = values[0].nonZero && (values.size() < 2 || values[1].nonZero);
    return r;
  }
  case LibraryModel::MakePair: {
    if (values.size() != 2)
      return std::nullopt;
    Value r = join(values[0], values[1]);
    r.fields = fieldsOf(fieldwiseRecord(call->getType()), values);
    return r;
  }
  case LibraryModel::PairElement:
    if (values.size() == 1)
      if (const FieldDecl *field = pairElement(callee, args[0]))
        return readField(args[0], values[0], field);
    return std::nullopt;
  case LibraryModel::Count: {
    Value r = mix(values[0], values[0]);
    if (!r.uniform) {
      r.powers.local = 1;
      if (values[0].countDerived || namesLocalData(args[0])) {
        r.guessed = !((values[0].countDerived || values[0].rankDerived) && !values[0].guessed);
        r.countDerived = true;
        r.countSource = {call, coreDecl(args[0])};
      }
    }
    return r;
  }
  case LibraryModel::Environment: {
    const auto *literal = dyn_cast<StringLiteral>(args[0]->IgnoreParenImpCasts());
    if (!literal)
      return std::nullopt;
    std::optional<EnvironmentValue> held = environmentValue(literal->getString());
    if (held == EnvironmentValue::Size)
      return Value::communicatorSize();
    Value r;
    if (held == EnvironmentValue::Rank) {
      r.rankDerived = true;
      r.exactRank = true;
      r.rankSource = {call, nullptr};
    }
    return r;
  }
  }
  return std::nullopt;
}

// A function the walk cannot see into: uniform if its arguments are, tainted as they are.
Value FlowAnalysis::Walker::unknownCall(const FunctionDecl *callee,
                                        llvm::ArrayRef<const Expr *> args,
                                        const std::vector<Value> &values) {
  Value r;
  r.uniform = !values.empty();
  for (const Value &v : values) {
    r.guessed = guessedFrom(r, v);
    r.uniform = r.uniform && v.uniform;
    r.rankDerived |= v.rankDerived;
    r.countDerived |= v.countDerived;
    if (!r.rankSource)
      r.rankSource = v.rankSource;
    if (!r.countSource)
      r.countSource = v.countSource;
    r.paramMask |= v.paramMask;
  }
  // Out arguments of a project function are overwritten with something unknown; the runtime
  // libraries write nothing the table does not describe.
  bool runtime = callee && callee->getIdentifier() &&
                 (callee->getName().starts_with("MPI_") || callee->getName().starts_with("nccl") ||
                  callee->getName().starts_with("cuda") || isStdDecl(callee) ||
                  sm_.isInSystemHeader(callee->getLocation()));
  // The status a runtime call returns (ncclResult_t, cudaError_t, MPI's int) says whether it
  // failed, not what its arguments hold: a branch on it is error handling, which fails the run,
  // even where the rank is one of those arguments (`ncclCommInitRank(..., rank)`).
  if (runtime && !isStdDecl(callee) &&
      (callee->getReturnType()->isEnumeralType() ||
       (callee->getName().starts_with("MPI_") && callee->getReturnType()->isIntegerType()))) {
    Value status;
    status.uniform = status.status = true;
    return status;
  }
  if (callee && !runtime)
    for (unsigned i = 0; i < args.size() && i < callee->getNumParams(); ++i) {
      QualType type = callee->getParamDecl(i)->getType();
      if (isOutPointerOrReference(type)) {
        Value unknown;
        unknown.rankDerived = r.rankDerived;
        for (const LocKey &k : pointeeOrLvalue(args[i], type))
          write(k, hasType(args[i]) ? withNamedFacts(unknown, keyDecl(k), args[i]->getType())
                                    : unknown);
      }
    }
  return r;
}

const NamedDecl *FlowAnalysis::Walker::keyDecl(LocKey k) {
  if (k.second)
    return static_cast<const FieldDecl *>(k.second);
  if (k.first == kThis || !k.first)
    return nullptr;
  return dyn_cast<NamedDecl>(static_cast<const Decl *>(k.first));
}

Locations FlowAnalysis::Walker::pointeeOrLvalue(const Expr *arg, QualType paramType) {
  return paramType->isReferenceType() ? lvalueLocations(arg) : pointeeLocations(arg);
}

Value FlowAnalysis::Walker::queryCall(const QuerySpec &spec, const CallExpr *call,
                                      llvm::ArrayRef<const Expr *> args) {
  Value q = Value::communicatorSize();
  if (spec.what == QuerySpec::What::Rank) {
    q = Value{};
    q.rankDerived = true;
    q.exactRank = true;
  }
  if (spec.out >= 0 && spec.out < static_cast<int>(args.size())) {
    for (const LocKey &k : pointeeLocations(args[spec.out])) {
      Value v = q;
      if (v.rankDerived)
        v.rankSource = {call, keyDecl(k)};
      write(k, v, false);
    }
    return Value::uniformConstant(0);
  }
  if (q.rankDerived)
    q.rankSource = {call, nullptr};
  return q;
}

Value FlowAnalysis::Walker::preMulSumCall(const PreMulSumFactorySpec &spec, const CallExpr *call,
                                          llvm::ArrayRef<const Expr *> args,
                                          const std::vector<Value> &values) {
  Value op;
  op.uniform = true;
  op.op = ReduceOpKind::PreMulSum;
  op.opNamedAt = call;
  if (spec.scalar < static_cast<int>(values.size()))
    op.opScalar = values[spec.scalar].powers;
  if (spec.out >= 0 && spec.out < static_cast<int>(args.size())) {
    writeAll(pointeeLocations(args[spec.out]), op, false);
    return Value::uniformConstant(0);
  }
  return op;
}

std::vector<ControlDependence> FlowAnalysis::Walker::activeControls() const {
  std::vector<ControlDependence> out;
  for (const ActiveControl &c : frame_->control)
    if (!c.dep.value.uniform)
      out.push_back(c.dep);
  return out;
}

// A communicator named the same way in every function and translation unit: MPI_COMM_WORLD, the
// qualified name of the field or global that holds it (`ns::Context::local_comm`), or the getter
// and constant arguments that return it (`ns::Context::comm(ns::Kind::CROSS)`). "" for anything
// else: a parameter or a local may hold any communicator (the caller's world among them).
std::string FlowAnalysis::Walker::communicatorKey(const Expr *comm) {
  if (!comm)
    return "";
  comm = comm->IgnoreParenImpCasts();
  if (auto macro = macroNameAt(comm->getBeginLoc()); macro && *macro == "MPI_COMM_WORLD")
    return std::string(kWorldCommunicator);
  while (const auto *unary = dyn_cast<UnaryOperator>(comm)) // `*ctx.comm_`
    comm = unary->getSubExpr()->IgnoreParenImpCasts();
  if (const auto *call = dyn_cast<CallExpr>(comm)) {
    const FunctionDecl *getter = calleeOf(call);
    if (!getter)
      return "";
    std::string key = qualifiedName(getter) + "(";
    for (const Expr *arg : call->arguments()) {
      const auto *ref = dyn_cast<DeclRefExpr>(arg->IgnoreParenImpCasts());
      if (const auto *e = ref ? dyn_cast<EnumConstantDecl>(ref->getDecl()) : nullptr)
        key += qualifiedName(e) + ",";
      else if (std::optional<llvm::APSInt> n =
                   arg->isValueDependent() ? std::nullopt : arg->getIntegerConstantExpr(context_);
               n && n->getSignificantBits() <= 64)
        key += std::to_string(n->getExtValue()) + ",";
      else
        return ""; // which communicator depends on a value not seen here
    }
    return key + ")";
  }
  const NamedDecl *decl = coreDecl(comm);
  const auto *var = dyn_cast_or_null<VarDecl>(decl);
  if (var && var->getName().starts_with("ompi_mpi_comm_world"))
    return std::string(kWorldCommunicator);
  if (!isa_and_nonnull<FieldDecl>(decl) && !(var && !var->isLocalVarDeclOrParm()))
    return "";
  return qualifiedName(decl);
}

// The communicator a rank was queried on: the first argument of a query that writes the rank
// through a pointer (`MPI_Comm_rank(comm, &rank)`, `ncclCommUserRank(comm, &rank)`), or what the
// project's summaries say of a field another file fills so.
std::string FlowAnalysis::Walker::rankCommunicator(const Origin &source) {
  if (const auto *call = dyn_cast_or_null<CallExpr>(source.at)) {
    const FunctionDecl *callee = calleeOf(call);
    const QuerySpec *query = callee ? table_.lookup(callee).query : nullptr;
    if (query && query->what == QuerySpec::What::Rank && query->out > 0 && call->getNumArgs() > 1)
      return communicatorKey(call->getArg(0));
    return "";
  }
  return config_.project && source.subject ? config_.project->rankCommunicatorOf(source.subject)
                                           : "";
}

void FlowAnalysis::Walker::emitCollective(const Expr *call, std::string name,
                                          bool onSubCommunicator, const Expr *comm) {
  if (!emitting())
    return;
  CollectiveEvent event;
  event.call = call;
  event.name = std::move(name);
  event.onSubCommunicator = onSubCommunicator;
  event.controls = activeControls();
  event.communicator = communicatorKey(comm);
  for (ControlDependence &dep : event.controls)
    if (dep.value.rankDerived)
      dep.rankCommunicator = rankCommunicator(dep.value.rankSource);
  if (const auto *callExpr = dyn_cast<CallExpr>(call))
    for (const Expr *arg : callExpr->arguments())
      if (const NamedDecl *decl = coreDecl(arg))
        event.argumentDecls.push_back(cast<NamedDecl>(decl->getCanonicalDecl()));
  if (const auto *member = dyn_cast<CXXMemberCallExpr>(call))
    if (const NamedDecl *decl = coreDecl(member->getImplicitObjectArgument()))
      event.argumentDecls.push_back(cast<NamedDecl>(decl->getCanonicalDecl()));
  listener_.collective(event);
}

// Follows a value through the parameters of the wrappers it came in by: the call the user sees.
// `mask` becomes the parameters of the function holding the returned call that the value comes
// from.
const Expr *FlowAnalysis::Walker::reportSite(const Expr *at, uint32_t &mask,
                                             std::vector<WrapperStep> &steps, unsigned &depth) {
  const Frame *f = frame_;
  while (f->caller && mask) {
    steps.insert(steps.begin(), {f->function, f->callSite});
    uint32_t next = 0;
    for (unsigned i = 0; i < f->argParamMasks.size() && i < 32; ++i)
      if (mask & (1u << i))
        next |= f->argParamMasks[i];
    at = f->callSite;
    mask = next;
    f = f->caller;
  }
  depth = f->depth;
  return at;
}

void FlowAnalysis::Walker::sumThenDivide(const PendingSum &pending, const Expr *division) {
  if (!emitting())
    return;
  ReductionEvent event;
  event.how = ReductionEvent::Averaging::SumThenDivide;
  event.reportAt = pending.reportAt;
  event.reducerCall = pending.reducerCall;
  event.reducerName = pending.reducerName;
  event.opName = pending.opName;
  event.divisionSite = division;
  event.steps = pending.steps;
  event.reportDepth = pending.reportDepth;
  event.reportMask = pending.reportMask;
  event.input.powers = pending.contribution;
  event.input.meanFormed = pending.meanFormed;
  event.input.normalized = pending.normalized;
  event.input.countReduced = pending.countReduced;
  event.input.guessed = pending.guessed;
  event.effective = pending.contribution + CountPowers{0, 0, -1};
  listener_.reduction(event);
}

std::string FlowAnalysis::Walker::opName(const Expr *opArg, ReduceOpKind kind) {
  if (opArg) {
    std::string text = sourceText(opArg, context_, 48);
    if (!text.empty() && text.find('(') == std::string::npos)
      return text;
  }
  switch (kind) {
  case ReduceOpKind::Sum:
    return "a sum";
  case ReduceOpKind::Avg:
    return "an average";
  case ReduceOpKind::PreMulSum:
    return "a PreMulSum";
  default:
    return "its op";
  }
}

Value FlowAnalysis::Walker::reducerCall(const ReducerSpec &spec, const FunctionDecl *callee,
                                        const CallExpr *call, llvm::ArrayRef<const Expr *> args,
                                        const Value *object) {
  std::vector<Value> values = evalArgs(args);
  auto arg = [&](int index) -> const Expr * {
    return index >= 0 && index < static_cast<int>(args.size()) ? args[index] : nullptr;
  };
  auto value = [&](int index) -> const Value * {
    return index >= 0 && index < static_cast<int>(values.size()) ? &values[index] : nullptr;
  };
  bool subCommunicator = (value(spec.comm) && value(spec.comm)->subCommunicator) ||
                         (object && object->subCommunicator);
  std::string name = CollectiveSignatures::displayName(callee);
  emitCollective(call, name, subCommunicator, arg(spec.comm));

  const Expr *sendExpr = arg(spec.send), *recvExpr = arg(spec.recv);
  bool inPlace = !recvExpr || isInPlace(sendExpr);
  const Expr *dataExpr = inPlace && recvExpr ? recvExpr : sendExpr;
  // A wrapper that returns the result (`float mean = sync_mean(x)`) writes no argument.
  const bool returnsResult = spec.recv == kReturned;
  const Expr *outExpr = returnsResult ? nullptr : recvExpr ? recvExpr : sendExpr;
  Value input = dataExpr ? values[dataExpr == sendExpr ? spec.send : spec.recv] : Value{};

  if (spec.kind == CollectiveKind::Barrier)
    return Value::uniformConstant(0);
  if (spec.kind == CollectiveKind::Other) {
    commCreation(callee, args, values);
    if (outExpr && outExpr != sendExpr) {
      // What a scan, a scatter, a gather or an all-to-all leaves differs from rank to rank (a
      // prefix, a piece, the root's whole), as a local count does: a condition on it diverges,
      // and dividing by it forms a local mean.
      Value out;
      out.countDerived = true;
      out.countSource = {call, coreDecl(outExpr), true};
      writeAll(pointeeLocations(outExpr), out);
    }
    return Value::uniformConstant(0);
  }

  Value out;
  out.reduced = true;
  out.uniform = spec.kind != CollectiveKind::Reduce && spec.kind != CollectiveKind::ReduceScatter;
  // Only the root receives a reduce's result; the others keep what their buffer held. A
  // condition on it differs between the root and the rest, as one on the rank does.
  if (spec.kind == CollectiveKind::Reduce) {
    out.rankDerived = out.rootOnly = true;
    out.rankSource = {call, outExpr ? coreDecl(outExpr) : nullptr};
  }
  if (spec.kind == CollectiveKind::Broadcast) {
    out = input;
    out.reduced = true;
    out.uniform = true;
    out.rankDerived = out.countDerived = false;
    out.pendingSum.reset();
    out.paramMask = 0;
    if (returnsResult)
      return out;
    writeAll(pointeeLocations(outExpr), out, false);
    return Value::uniformConstant(0);
  }

  ReduceOpKind opKind = spec.fixedOp;
  CountPowers opScalar;
  const Expr *opArgument = nullptr, *opNamedAt = nullptr;
  if (const Value *op = value(spec.op)) {
    opKind = op->op;
    opScalar = op->opScalar;
    opArgument = arg(spec.op);
    opNamedAt = op->opNamedAt;
  }
  if (spec.kind == CollectiveKind::AllGather)
    opKind = ReduceOpKind::Sum; // gathered counts are summed by whoever reads them

  CountPowers contribution = input.powers;
  if (opKind == ReduceOpKind::PreMulSum)
    contribution = contribution + opScalar;
  bool averaging =
      opKind == ReduceOpKind::Avg || (opKind == ReduceOpKind::PreMulSum && opScalar.commSize < 0);
  bool summing =
      opKind == ReduceOpKind::Sum || (opKind == ReduceOpKind::PreMulSum && opScalar.commSize >= 0);
  // Each rank's share divided by P before a SUM (DDP's default hook): the sum is the average
  // of the undivided values, as if the division came after it.
  bool dividedFirst =
      opKind == ReduceOpKind::Sum && !input.uniform && input.sizeDivided &&
      contribution.commSize < 0 &&
      (spec.kind == CollectiveKind::AllReduce || spec.kind == CollectiveKind::Reduce);
  std::string op = spec.op >= 0 ? opName(opNamedAt ? opNamedAt : opArgument, opKind)
                   : !spec.how.empty()
                       ? spec.how
                       : (opKind == ReduceOpKind::Avg ? "its averaging op" : "a sum");

  if ((averaging || dividedFirst) && emitting()) {
    ReductionEvent event;
    event.how = dividedFirst                  ? ReductionEvent::Averaging::DivideThenSum
                : opKind == ReduceOpKind::Avg ? ReductionEvent::Averaging::AverageOp
                                              : ReductionEvent::Averaging::PreMulSumByInverseSize;
    if (dividedFirst)
      event.divisionSite = dyn_cast_or_null<Expr>(input.sizeDivided.at);
    event.reducerCall = call;
    event.reducerName = name;
    event.opName = op;
    event.reportMask = input.paramMask;
    event.reportAt = reportSite(call, event.reportMask, event.steps, event.reportDepth);
    event.opArgument = event.steps.empty() ? enumeratorSpelledIn(opNamedAt, call) : nullptr;
    event.input = input;
    event.effective =
        opKind == ReduceOpKind::Avg ? contribution + CountPowers{0, 0, -1} : contribution;
    listener_.reduction(event);
  }

  bool countReduction =
      summing && !input.uniform && spec.kind != CollectiveKind::ReduceScatter &&
      (input.powers.local >= 1 || (input.powers.isZero() && isIntegralData(call, spec, dataExpr)));
  if (input.uniform) {
    out.powers = input.powers;
    if (summing)
      out.powers.commSize = static_cast<int8_t>(out.powers.commSize + 1);
    out.nonZero = summing && input.nonZero;
  } else if (countReduction) {
    out.powers = {0,
                  static_cast<int8_t>(input.powers.reduced + std::max<int>(1, input.powers.local)),
                  input.powers.commSize};
    out.countReduced = {call, coreDecl(dataExpr)};
  } else {
    // An AVG op divides by P here; a PreMulSum's scalar (1/P included) is in the contribution.
    out.powers = {
        0, contribution.reduced,
        static_cast<int8_t>(contribution.commSize - (opKind == ReduceOpKind::Avg ? 1 : 0))};
    out.normalized = input.normalized;
    out.countReduced = input.countReduced;
    out.meanFormed = input.meanFormed;
  }
  if (summing && !input.uniform && !countReduction && !dividedFirst &&
      (spec.kind == CollectiveKind::AllReduce || spec.kind == CollectiveKind::Reduce)) {
    auto pending = std::make_shared<PendingSum>();
    pending->reducerCall = call;
    pending->reducerName = name;
    pending->opName = op;
    pending->contribution = contribution;
    pending->meanFormed = input.meanFormed;
    pending->normalized = input.normalized;
    pending->countReduced = input.countReduced;
    pending->guessed = input.guessed;
    pending->reportMask = input.paramMask;
    pending->reportAt = reportSite(call, pending->reportMask, pending->steps, pending->reportDepth);
    out.pendingSum = std::move(pending);
  }
  if (returnsResult)
    return out;
  if (outExpr)
    writeAll(pointeeLocations(outExpr), out, false);
  return Value::uniformConstant(0);
}

// The op enumerator when it is spelled inside the reducer call (`ncclAvg`,
// `{c10d::ReduceOp::AVG}`), where a fix-it can rewrite it.
const Expr *FlowAnalysis::Walker::enumeratorSpelledIn(const Expr *named, const Expr *call) {
  const auto *ref = dyn_cast_or_null<DeclRefExpr>(named);
  if (!ref || !isa<EnumConstantDecl>(ref->getDecl()))
    return nullptr;
  // Written there, possibly as a macro's argument (NCCLCHECK(...)), not made by a macro's body.
  SourceLocation at = sm_.getFileLoc(ref->getLocation());
  if (sm_.getSpellingLoc(ref->getLocation()) != at)
    return nullptr;
  CharSourceRange range = writtenRange(call->getSourceRange(), sm_, context_.getLangOpts());
  if (range.isInvalid() || sm_.isBeforeInTranslationUnit(at, range.getBegin()) ||
      sm_.isBeforeInTranslationUnit(range.getEnd(), at))
    return nullptr;
  return ref;
}

void FlowAnalysis::Walker::commCreation(const FunctionDecl *callee,
                                        llvm::ArrayRef<const Expr *> args,
                                        const std::vector<Value> &values) {
  llvm::StringRef name = callee->getName();
  // The handle names a new communicator: not the one it was assigned before (`comm =
  // MPI_COMM_WORLD`), which the split leaves as it was.
  auto create = [&](const Expr *out, const Value &comm) {
    const auto *address = dyn_cast<UnaryOperator>(out->IgnoreParenImpCasts());
    const auto *ref = address && address->getOpcode() == UO_AddrOf
                          ? dyn_cast<DeclRefExpr>(address->getSubExpr()->IgnoreParenImpCasts())
                          : nullptr;
    if (const auto *var = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr) {
      setAliases(keyOf(var).first, {});
      write(keyOf(var), comm, false);
      return;
    }
    writeAll(pointeeLocations(out), comm, false);
  };
  if ((name == "MPI_Comm_split" || name == "ncclCommSplit") && args.size() > 3) {
    Value comm = Value::uniformConstant(0);
    comm.constant.reset();
    comm.subCommunicator = !values[1].uniform;
    create(args[3], comm);
  } else if (name == "MPI_Comm_create" && args.size() > 2) {
    Value comm;
    comm.subCommunicator = true;
    create(args[2], comm);
  } else if (name == "MPI_Comm_dup" && args.size() > 1) {
    create(args[1], values[0]);
  }
}

bool FlowAnalysis::Walker::namesModelState(const NamedDecl *decl) {
  return decl && decl->getIdentifier() && matchesAny(modelNames_, decl->getName());
}

// The methods that count a container's or a tensor's elements (engine/LibraryModels.h).
bool FlowAnalysis::Walker::isElementCount(DeclarationName name) {
  const IdentifierInfo *id = name.getAsIdentifierInfo();
  return id && isElementCountMethod(id->getName());
}

// The number of elements of a container or tensor, or of the true entries of a mask: a count,
// and a rank-local one when the container holds this rank's data.
Value FlowAnalysis::Walker::elementCount(const Value &container, const Expr *containerExpr,
                                         const Expr *at) {
  // The model's state (gradients, parameters) is as large on every rank.
  if (!container.uniform && !container.countDerived && !container.mask &&
      namesModelState(coreDecl(containerExpr))) {
    Value uniform;
    uniform.uniform = true;
    return uniform;
  }
  Value r = mix(container, container);
  if (!container.uniform) {
    r.powers.local = 1;
    if (container.countDerived || container.mask || namesLocalData(containerExpr)) {
      // Known from the flow when the container's contents are (a mask counts valid items);
      // else a container named like this rank's data: a guess.
      r.guessed = !(((container.countDerived || container.rankDerived) && !container.guessed) ||
                    container.mask);
      r.countDerived = true;
      r.countSource = {at, coreDecl(containerExpr)};
    }
  }
  return r;
}

Value FlowAnalysis::Walker::evalMemberCall(const CXXMemberCallExpr *call) {
  const CXXMethodDecl *method = call->getMethodDecl();
  const Expr *objectExpr = call->getImplicitObjectArgument();
  auto args = argsOf(call);
  if (!method) {
    eval(call->getCallee());
    std::vector<Value> values = evalArgs(args);
    return unknownCall(nullptr, args, values);
  }
  Value object = objectExpr ? eval(objectExpr) : Value{};
  const ReducerTable::Match match = table_.lookup(method);
  if (match)
    return callFunction(method, call, args, &object);
  llvm::StringRef name = method->getIdentifier() ? method->getName() : "";
  std::vector<Value> values;
  auto evalValues = [&] { values = evalArgs(args); };
  // A method of the project defined in another file: its summary, not what its name suggests.
  // A virtual one called through a pointer or reference may run any override the project has,
  // whatever the base class's own body does.
  const FunctionSummary *summary = summaryOf(method);
  if (!summary && config_.project && method->isVirtual() && !method->hasAttr<FinalAttr>())
    if (const auto *named = dyn_cast<MemberExpr>(call->getCallee()->IgnoreParens());
        named && !named->hasQualifier()) {
      const auto *ref = dyn_cast<DeclRefExpr>(named->getBase()->IgnoreParenImpCasts());
      bool throughReference = ref && ref->getDecl()->getType()->isReferenceType();
      if (named->isArrow() || throughReference)
        summary = config_.project->dispatched(method);
    }
  if (summary) {
    evalValues();
    return summarisedCall(*summary, method, call, args, values);
  }

  auto sizeOf = [&](const Value &container) { return elementCount(container, objectExpr, call); };
  if (isElementCount(method->getDeclName())) {
    evalValues();
    return sizeOf(object);
  }
  if (name == "sum" || name == "nansum" || name == "count_nonzero") {
    evalValues();
    if (object.mask || name == "count_nonzero")
      return sizeOf(object);
    Value r = object;
    r.op = ReduceOpKind::None;
    return r;
  }
  if (name == "mean" || name == "nanmean") {
    evalValues();
    Value r = object;
    if (!object.uniform && object.powers.local >= 0) {
      r.powers.local = static_cast<int8_t>(r.powers.local - 1);
      r.meanFormed = {call, nullptr};
    }
    return r;
  }
  if (name == "backward") {
    evalValues();
    frame_->gradients = frame_->gradients ? join(*frame_->gradients, object) : object;
    return Value::uniformConstant(0);
  }
  if (name == "grad" || name == "mutable_grad") {
    evalValues();
    return frame_->gradients ? *frame_->gradients : Value{};
  }
  std::optional<BinaryOperatorKind> arithmetic =
      llvm::StringSwitch<std::optional<BinaryOperatorKind>>(name)
          .Cases("div", "true_divide", "divide", BO_Div)
          .Cases("mul", "multiply", BO_Mul)
          .Case("add", BO_Add)
          .Cases("sub", "subtract", BO_Sub)
          .Default(std::nullopt);
  std::optional<BinaryOperatorKind> inPlace =
      llvm::StringSwitch<std::optional<BinaryOperatorKind>>(name)
          .Cases("div_", "true_divide_", "divide_", BO_Div)
          .Cases("mul_", "multiply_", BO_Mul)
          .Case("add_", BO_Add)
          .Cases("sub_", "subtract_", BO_Sub)
          .Default(std::nullopt);
  if ((arithmetic || inPlace) && !args.empty()) {
    evalValues();
    Value r =
        arith(arithmetic ? *arithmetic : *inPlace, objectExpr, object, args[0], values[0], call);
    if (inPlace)
      writeAll(lvalueLocations(objectExpr), r);
    return r;
  }
  if (name == "clamp_min" || name == "clamp" || name == "clip" || name == "clamp_min_") {
    // N.clamp_min(1): a guarded count.
    evalValues();
    Value r = object;
    r.op = ReduceOpKind::None;
    r.nonZero =
        object.nonZero || (!values.empty() && values[0].constant && *values[0].constant > 0);
    if (name.ends_with("_"))
      writeAll(lvalueLocations(objectExpr), r);
    return r;
  }
  if (name == "copy_" && !args.empty()) {
    evalValues();
    writeAll(lvalueLocations(objectExpr), values[0]);
    return values[0];
  }
  if (name == "fill_" || name == "zero_") {
    evalValues();
    Value v = values.empty() ? Value::uniformConstant(0) : values[0];
    writeAll(lvalueLocations(objectExpr), v);
    return v;
  }
  if ((name == "push_back" || name == "emplace_back" || name == "insert") && !args.empty()) {
    evalValues();
    Locations container = lvalueLocations(objectExpr);
    Value joined = object;
    for (const Value &v : values)
      joined = join(joined, v);
    // An empty container has no facts of its own: the first element's are the container's.
    if (!object.uniform || !object.constant)
      writeAll(container, joined);
    else
      writeAll(container, values.back());
    if (isHandleType(args.back()->getType()))
      for (const LocKey &c : container) {
        Locations targets;
        if (const Locations *existing = aliasesOf(c.first))
          targets = *existing;
        targets.append(pointeeLocations(args.back()));
        setAliases(c.first, targets);
      }
    return Value::uniformConstant(0);
  }
  if (llvm::StringSwitch<bool>(name)
          .Cases("item", "to", "cuda", "cpu", "clone", "detach", "contiguous", true)
          .Cases("float", "double", "half", "type_as", "view", "reshape", "flatten", true)
          .Cases("squeeze", "unsqueeze", "expand", "data_ptr", "data", "get", "value", true)
          .Cases("front", "back", "at", "begin", "end", "cbegin", "cend", true)
          .Cases("toDouble", "toFloat", "toLong", "toInt", "mutable_data_ptr", true)
          .Default(false)) {
    evalValues();
    Value r = object;
    r.op = ReduceOpKind::None;
    return r;
  }
  const FunctionDecl *definition = nullptr;
  if (method->hasBody(definition) && canInline(definition))
    return callDefinition(definition, CollectiveSignatures::displayName(method), call, args,
                          evalArgs(args), nullptr, object.subCommunicator);
  evalValues();
  std::vector<Value> all = values;
  all.push_back(object);
  Value r = unknownCall(method, args, all);
  // `loader.next(batch)`, `batch.empty()`: what this rank's data says differs across ranks.
  bool aboutLocalData = namesLocalData(objectExpr) ||
                        llvm::any_of(args, [&](const Expr *a) { return namesLocalData(a); });
  if (aboutLocalData && !r.uniform) {
    r.guessed = (r.rankDerived || r.countDerived) ? r.guessed : true;
    r.countDerived = true;
    if (!r.countSource)
      r.countSource = {call, coreDecl(objectExpr)};
  }
  return r;
}

Value FlowAnalysis::Walker::evalOperatorCall(const CXXOperatorCallExpr *call) {
  OverloadedOperatorKind kind = call->getOperator();
  unsigned n = call->getNumArgs();
  if (kind == OO_Call) {
    Value target = n > 0 ? eval(call->getArg(0)) : Value{};
    auto args = argsOf(call, 1);
    std::vector<Value> values = evalArgs(args);
    if (target.lambda)
      return callLambda(target.lambda, call, args, std::move(values));
    if (const FunctionDecl *callee = calleeOf(call))
      return callByBody(callee, call, args, std::move(values));
    return unknownCall(nullptr, args, values);
  }
  if (kind == OO_Equal && n == 2)
    return assign(call->getArg(0), call->getArg(1), call);
  bool compound = false;
  if (auto op = binaryOpFor(kind, compound); op && n == 2) {
    const Expr *lhs = call->getArg(0), *rhs = call->getArg(1);
    if (compound)
      return compoundAssign(*op, lhs, rhs, call);
    if (*op == BO_LAnd || *op == BO_LOr) {
      Value a = eval(lhs), b = eval(rhs);
      return mix(a, b);
    }
    Value a = eval(lhs), b = eval(rhs);
    if (BinaryOperator::isComparisonOp(*op))
      return compare(*op, lhs, a, rhs, b);
    return arith(*op, lhs, a, rhs, b, call);
  }
  if ((kind == OO_PlusPlus || kind == OO_MinusMinus) && n >= 1)
    return increment(call->getArg(0), kind == OO_PlusPlus ? BO_Add : BO_Sub, nullptr, call);
  if (kind == OO_Subscript && n == 2) {
    Value base = eval(call->getArg(0));
    eval(call->getArg(1));
    base.op = ReduceOpKind::None;
    return base;
  }
  if ((kind == OO_Star || kind == OO_Arrow || kind == OO_Minus || kind == OO_Plus) && n == 1)
    return eval(call->getArg(0));
  if (kind == OO_Exclaim && n == 1) {
    Value v = eval(call->getArg(0));
    Value r = mix(v, v);
    r.mask = v.mask;
    return r;
  }
  auto args = argsOf(call);
  std::vector<Value> values = evalArgs(args);
  if (const FunctionDecl *callee = calleeOf(call))
    return callByBody(callee, call, args, std::move(values));
  return unknownCall(nullptr, args, values);
}

} // namespace collcheck::lint
