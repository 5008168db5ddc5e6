// The evaluation of expressions: the value of each operator, cast, literal, member and
// subscript, and the divisions the listener is told about.

#include "engine/flow/Walker.h"

namespace collcheck::lint {

// The outermost macro whose expansion `loc` comes from, not counting the macros it was passed
// to as an argument: MPI_LONG in `MPICHECK(MPI_Allreduce(..., MPI_LONG, ...))`, not MPICHECK.
std::optional<llvm::StringRef> FlowAnalysis::Walker::macroNameAt(SourceLocation loc) {
  SourceLocation name;
  while (loc.isMacroID()) {
    if (sm_.isMacroArgExpansion(loc)) {
      loc = sm_.getImmediateSpellingLoc(loc);
    } else {
      loc = sm_.getImmediateExpansionRange(loc).getBegin();
      name = sm_.getSpellingLoc(loc);
    }
  }
  if (name.isInvalid())
    return std::nullopt;
  llvm::StringRef text =
      Lexer::getSourceText(CharSourceRange::getTokenRange(name), sm_, context_.getLangOpts());
  if (text.empty())
    return std::nullopt;
  return text;
}

bool FlowAnalysis::Walker::isInPlace(const Expr *e) {
  if (!e)
    return false;
  if (auto macro = macroNameAt(e->IgnoreParenImpCasts()->getBeginLoc());
      macro && *macro == "MPI_IN_PLACE")
    return true;
  const Expr *inner = e->IgnoreParenCasts();
  if (const auto *lit = dyn_cast<IntegerLiteral>(inner))
    return e->IgnoreParenImpCasts() != inner && lit->getValue() == 1;
  return false;
}

bool FlowAnalysis::Walker::integralDatatypeName(llvm::StringRef name) {
  name.consume_front("MPI_");
  name.consume_front("ompi_mpi_");
  name.consume_front("nccl");
  std::string lower = name.lower();
  llvm::StringRef l(lower);
  return l.starts_with("int") || l.starts_with("uint") || l.starts_with("long") ||
         l.starts_with("unsigned") || l == "short" || l == "c_bool" || l.starts_with("int");
}

bool FlowAnalysis::Walker::isIntegralData(const CallExpr *call, const ReducerSpec &spec,
                                          const Expr *data) {
  if (spec.datatype >= 0 && spec.datatype < static_cast<int>(call->getNumArgs())) {
    const Expr *type = call->getArg(spec.datatype);
    if (auto macro = macroNameAt(type->IgnoreParenImpCasts()->getBeginLoc()))
      return integralDatatypeName(*macro);
    if (const auto *ref = dyn_cast<DeclRefExpr>(type->IgnoreParenImpCasts());
        ref && ref->getDecl()->getIdentifier())
      return integralDatatypeName(ref->getDecl()->getName());
  }
  if (!data)
    return false;
  QualType t = strip(data)->getType();
  if (const auto *unary = dyn_cast<UnaryOperator>(strip(data));
      unary && unary->getOpcode() == UO_AddrOf)
    t = unary->getSubExpr()->getType();
  else if (!t.isNull() && t->isPointerType())
    t = t->getPointeeType();
  else if (!t.isNull() && t->isArrayType())
    t = QualType(t->getPointeeOrArrayElementType(), 0);
  if (t.isNull())
    return false;
  return t->isIntegralOrEnumerationType() && !t->isBooleanType();
}

Value FlowAnalysis::Walker::eval(const Expr *e) {
  if (!e)
    return Value{};
  ++evaluations_;
  Value v = evalInner(e);
  if (!v.status && hasType(e) && isStatusType(e->getType()))
    v.status = true;
  // Open MPI spells MPI_SUM as a cast of a global, MPICH as a cast of an integer: the macro
  // name is what both share.
  if (e->getBeginLoc().isMacroID() && v.op == ReduceOpKind::None && hasType(e)) {
    if (const auto *typedefType = e->getType()->getAs<TypedefType>();
        typedefType && typedefType->getDecl()->getName() == "MPI_Op")
      if (auto macro = macroNameAt(e->getBeginLoc()))
        if (auto op = mpiOpNamed(*macro)) {
          v.op = *op;
          v.uniform = true;
          v.opNamedAt = e;
        }
  }
  return v;
}

Value FlowAnalysis::Walker::evalInner(const Expr *e) {
  switch (e->getStmtClass()) {
  case Stmt::IntegerLiteralClass:
    return Value::uniformConstant(
        static_cast<double>(cast<IntegerLiteral>(e)->getValue().getLimitedValue()));
  case Stmt::FloatingLiteralClass:
    return Value::uniformConstant(cast<FloatingLiteral>(e)->getValueAsApproximateDouble());
  case Stmt::CXXBoolLiteralExprClass:
    return Value::uniformConstant(cast<CXXBoolLiteralExpr>(e)->getValue() ? 1 : 0);
  case Stmt::CharacterLiteralClass:
    return Value::uniformConstant(cast<CharacterLiteral>(e)->getValue());
  case Stmt::CXXNullPtrLiteralExprClass:
  case Stmt::GNUNullExprClass:
  case Stmt::ImplicitValueInitExprClass:
  case Stmt::CXXScalarValueInitExprClass:
    return Value::uniformConstant(0);
  case Stmt::StringLiteralClass:
  case Stmt::UnaryExprOrTypeTraitExprClass:
  case Stmt::TypeTraitExprClass:
  case Stmt::CXXNoexceptExprClass:
  case Stmt::SizeOfPackExprClass:
  case Stmt::CXXTypeidExprClass: {
    Value v = Value::uniformConstant(1);
    v.constant.reset();
    return v;
  }
  case Stmt::ParenExprClass:
    return eval(cast<ParenExpr>(e)->getSubExpr());
  case Stmt::ConstantExprClass:
  case Stmt::ExprWithCleanupsClass:
    return eval(cast<FullExpr>(e)->getSubExpr());
  case Stmt::MaterializeTemporaryExprClass:
    return eval(cast<MaterializeTemporaryExpr>(e)->getSubExpr());
  case Stmt::CXXBindTemporaryExprClass:
    return eval(cast<CXXBindTemporaryExpr>(e)->getSubExpr());
  case Stmt::CXXDefaultArgExprClass:
    return eval(cast<CXXDefaultArgExpr>(e)->getExpr());
  case Stmt::CXXDefaultInitExprClass:
    return eval(cast<CXXDefaultInitExpr>(e)->getExpr());
  case Stmt::OpaqueValueExprClass:
    return eval(cast<OpaqueValueExpr>(e)->getSourceExpr());
  case Stmt::SubstNonTypeTemplateParmExprClass:
    return eval(cast<SubstNonTypeTemplateParmExpr>(e)->getReplacement());
  case Stmt::CXXStdInitializerListExprClass:
    return eval(cast<CXXStdInitializerListExpr>(e)->getSubExpr());
  case Stmt::CXXRewrittenBinaryOperatorClass:
    return eval(cast<CXXRewrittenBinaryOperator>(e)->getSemanticForm());
  case Stmt::PseudoObjectExprClass: {
    const auto *pseudo = cast<PseudoObjectExpr>(e);
    return pseudo->getResultExpr() ? eval(pseudo->getResultExpr()) : Value{};
  }
  case Stmt::CXXThisExprClass:
    return Value{};
  case Stmt::DeclRefExprClass:
    return evalDeclRef(cast<DeclRefExpr>(e));
  case Stmt::MemberExprClass:
    return evalMember(cast<MemberExpr>(e));
  case Stmt::ArraySubscriptExprClass: {
    const auto *subscript = cast<ArraySubscriptExpr>(e);
    Value base = eval(subscript->getBase());
    eval(subscript->getIdx());
    return base;
  }
  case Stmt::UnaryOperatorClass:
    return evalUnary(cast<UnaryOperator>(e));
  case Stmt::BinaryOperatorClass:
  case Stmt::CompoundAssignOperatorClass:
    return evalBinary(cast<BinaryOperator>(e));
  case Stmt::ConditionalOperatorClass: {
    const auto *cond = cast<ConditionalOperator>(e);
    return evalConditional(cond->getCond(), cond->getTrueExpr(), cond->getFalseExpr());
  }
  case Stmt::BinaryConditionalOperatorClass: {
    const auto *cond = cast<BinaryConditionalOperator>(e);
    eval(cond->getCommon());
    return evalConditional(cond->getCond(), cond->getTrueExpr(), cond->getFalseExpr());
  }
  case Stmt::LambdaExprClass: {
    const auto *lambda = cast<LambdaExpr>(e);
    Value v;
    v.uniform = true;
    v.lambda = lambda->getCallOperator();
    lambdas_.insert(lambda->getCallOperator());
    return v;
  }
  case Stmt::InitListExprClass: {
    const auto *list = cast<InitListExpr>(e);
    if (list->getNumInits() == 0)
      return Value::uniformConstant(0);
    std::optional<Value> r;
    std::vector<Value> inits;
    for (const Expr *init : list->inits()) {
      Value v = eval(init);
      inits.push_back(v);
      r = r ? join(*r, v) : v;
    }
    if (hasType(list) && !list->getType()->isArrayType()) // an aggregate: `return Stats{sum, n};`
      r->fields = fieldsOf(fieldwiseRecord(list->getType()), inits);
    return *r;
  }
  case Stmt::CXXConstructExprClass:
  case Stmt::CXXTemporaryObjectExprClass:
    return evalConstruct(cast<CXXConstructExpr>(e));
  case Stmt::StmtExprClass: {
    const CompoundStmt *block = cast<StmtExpr>(e)->getSubStmt();
    Value last;
    for (const Stmt *child : block->body()) {
      if (const auto *expr = dyn_cast<Expr>(child))
        last = eval(expr);
      else
        exec(child);
    }
    return last;
  }
  default:
    break;
  }
  if (const auto *call = dyn_cast<CallExpr>(e))
    return evalCall(call);
  if (const auto *cast = dyn_cast<CastExpr>(e))
    return eval(cast->getSubExpr());
  // Anything else: its parts, and uniform only if every part is.
  std::optional<Value> r;
  for (const Stmt *child : e->children())
    if (const auto *sub = dyn_cast_or_null<Expr>(child)) {
      Value v = eval(sub);
      r = r ? mix(*r, v) : mix(v, v);
    }
  return r ? *r : Value{};
}

Value FlowAnalysis::Walker::evalDeclRef(const DeclRefExpr *ref) {
  const ValueDecl *decl = ref->getDecl();
  if (const auto *enumerator = dyn_cast<EnumConstantDecl>(decl)) {
    Value v = Value::uniformConstant(static_cast<double>(enumerator->getInitVal().getExtValue()));
    v.op = opForEnumerator(enumerator);
    if (v.op != ReduceOpKind::None)
      v.opNamedAt = ref;
    return v;
  }
  if (isa<FunctionDecl>(decl)) {
    Value v;
    v.uniform = true;
    return v;
  }
  if (const auto *binding = dyn_cast<BindingDecl>(decl))
    return evalBinding(binding);
  const auto *var = dyn_cast<VarDecl>(decl);
  if (!var)
    return Value{};
  // A pointer, reference or handle reads what it refers to.
  if (isHandleType(var->getType()) && !var->getType()->isArrayType())
    if (const Locations *targets = aliasesOf(keyOf(var).first)) {
      std::optional<Value> r;
      for (const LocKey &t : *targets) {
        Value v = readKey(t);
        r = r ? join(*r, v) : v;
      }
      return *r;
    }
  return readWhole(var);
}

// Where a structured binding lives: the field it names of the variable decomposed (a struct's
// member, or a std::pair's element, which the language reaches through get<I>), or of what
// that variable refers to (`auto &[a, b] = p`). Empty for arrays, tuples and classes with bases.
Locations FlowAnalysis::Walker::bindingLocations(const BindingDecl *binding) {
  Locations out;
  const auto *decomposed = dyn_cast_or_null<DecompositionDecl>(binding->getDecomposedDecl());
  const CXXRecordDecl *record = decomposed ? fieldwiseRecord(decomposed->getType()) : nullptr;
  if (!record)
    return out;
  unsigned index = 0;
  for (const BindingDecl *b : decomposed->bindings()) {
    if (b == binding)
      break;
    ++index;
  }
  const FieldDecl *field = fieldAt(record, index);
  if (!field)
    return out;
  if (!decomposed->getType()->isReferenceType())
    out.push_back(keyOf(decomposed, field));
  else
    appendAliases(out, keyOf(decomposed).first, field);
  return out;
}

// A binding's value. A std::tuple's elements are not followed (its `get<I>` would read the
// whole tuple, the join of rank and size): its binding is what its name says, like a variable of
// unknown origin.
Value FlowAnalysis::Walker::evalBinding(const BindingDecl *binding) {
  Value v;
  if (Locations locations = bindingLocations(binding); !locations.empty())
    v = readLocations(locations, nullptr);
  else if (const Expr *e = binding->getBinding(); e && !binding->getHoldingVar())
    v = eval(e); // e[I] of an array
  v.fields.reset();
  return withNamedFacts(v, binding, binding->getType());
}

ReduceOpKind FlowAnalysis::Walker::opForEnumerator(const EnumConstantDecl *enumerator) {
  llvm::StringRef name = enumerator->getName();
  if (name.starts_with("nccl")) {
    return llvm::StringSwitch<ReduceOpKind>(name)
        .Case("ncclSum", ReduceOpKind::Sum)
        .Case("ncclAvg", ReduceOpKind::Avg)
        .Cases("ncclProd", "ncclMax", "ncclMin", ReduceOpKind::Other)
        .Default(ReduceOpKind::None);
  }
  // c10d::ReduceOp::RedOpType
  const auto *enumDecl = dyn_cast<EnumDecl>(enumerator->getDeclContext());
  const auto *owner = enumDecl ? dyn_cast<CXXRecordDecl>(enumDecl->getDeclContext()) : nullptr;
  if (!owner || !owner->getIdentifier() || owner->getName() != "ReduceOp")
    return ReduceOpKind::None;
  return llvm::StringSwitch<ReduceOpKind>(name)
      .Case("SUM", ReduceOpKind::Sum)
      .Case("AVG", ReduceOpKind::Avg)
      .Case("PREMUL_SUM", ReduceOpKind::PreMulSum)
      .Default(ReduceOpKind::Other);
}

Value FlowAnalysis::Walker::evalMember(const MemberExpr *member) {
  const ValueDecl *decl = member->getMemberDecl();
  if (!isa<FieldDecl>(decl)) {
    // A method named without a call, a static member or an enumerator.
    if (const auto *var = dyn_cast<VarDecl>(decl))
      return readWhole(var);
    if (const auto *enumerator = dyn_cast<EnumConstantDecl>(decl)) {
      Value v = Value::uniformConstant(enumerator->getInitVal().getExtValue());
      v.op = opForEnumerator(enumerator);
      return v;
    }
    return eval(member->getBase());
  }
  Locations locations = lvalueLocations(member);
  if (locations.empty()) // `stats().second`
    return fieldOfValue(eval(member->getBase()), cast<FieldDecl>(decl)->getCanonicalDecl());
  std::optional<Value> r;
  for (const LocKey &k : locations) {
    Value v = readLocation(k);
    r = r ? join(*r, v) : v;
  }
  return *r;
}

// `std::get<I>(p)` of a std::pair: its field I.
const FieldDecl *FlowAnalysis::Walker::pairElement(const FunctionDecl *get, const Expr *object) {
  const TemplateArgumentList *targs = get->getTemplateSpecializationArgs();
  if (!targs || targs->size() == 0 || targs->get(0).getKind() != TemplateArgument::Integral)
    return nullptr;
  if (!hasType(object))
    return nullptr;
  const CXXRecordDecl *record = object->getType().getNonReferenceType()->getAsCXXRecordDecl();
  if (!isStdPair(record))
    return nullptr;
  return fieldAt(record, static_cast<unsigned>(targs->get(0).getAsIntegral().getZExtValue()));
}

// Field `field` of `object` (whose value is `whole`): where it is stored, or the field of a
// value built field by field, or else the whole with what the field's name says.
Value FlowAnalysis::Walker::readField(const Expr *object, const Value &whole,
                                      const FieldDecl *field) {
  Locations bases = lvalueLocations(object);
  if (!bases.empty()) {
    std::optional<Value> r;
    for (const LocKey &b : bases) {
      Value v = readLocation({b.first, field});
      r = r ? join(*r, v) : v;
    }
    return *r;
  }
  return fieldOfValue(whole, field);
}

// Field `field` of a value held nowhere (a call's result): its own value when the value was
// built field by field, else the whole with what the field's name says.
Value FlowAnalysis::Walker::fieldOfValue(Value whole, const FieldDecl *field) {
  if (const Value *known = whole.fields ? whole.fields->find(field) : nullptr)
    return *known;
  whole.fields.reset();
  whole.op = ReduceOpKind::None;
  return withNamedFacts(whole, field, field->getType());
}

Value FlowAnalysis::Walker::evalConstruct(const CXXConstructExpr *construct) {
  const CXXConstructorDecl *ctor = construct->getConstructor();
  const CXXRecordDecl *record = ctor ? ctor->getParent() : nullptr;
  if (construct->getNumArgs() == 0) {
    // Default construction: the default member initialisers (an options struct's op).
    Value v = Value::uniformConstant(0);
    v.constant.reset();
    if (record && record->hasDefinition() && !isStdDecl(record))
      for (const FieldDecl *field : record->fields())
        if (const Expr *init = field->getInClassInitializer()) {
          Value f = eval(init);
          Value merged = mix(v, f);
          merged.op = f.op != ReduceOpKind::None ? f.op : v.op;
          merged.opScalar = f.op != ReduceOpKind::None ? f.opScalar : v.opScalar;
          merged.opNamedAt = f.op != ReduceOpKind::None ? f.opNamedAt : v.opNamedAt;
          v = merged;
        }
    return v;
  }
  // A defaulted allocator says nothing about the value: `string(p)` is what p points to,
  // `vector(n, x)` copies of x.
  std::vector<Value> args;
  for (const Expr *arg : construct->arguments()) {
    Value v = eval(arg);
    if (!isDefaultAllocator(arg))
      args.push_back(v);
  }
  if (args.empty()) {
    Value v = Value::uniformConstant(0);
    v.constant.reset();
    return v;
  }
  bool listInit = isa<CXXStdInitializerListExpr>(construct->getArg(0)->IgnoreImplicit());
  if (args.size() == 1 && (!isStdContainer(record) || listInit || ctor->isCopyOrMoveConstructor()))
    return args[0];
  if (isStdContainer(record) && !listInit) {
    // vector(n, value): a buffer of n copies of value, not a count.
    Value v = args.back();
    if (args.size() == 1)
      v = mix(args[0], args[0]);
    return v;
  }
  Value r = args[0];
  for (size_t i = 1; i < args.size(); ++i)
    r = join(r, args[i]);
  if (isStdPair(record)) // pair(a, b), `return {sum, n};`
    r.fields = fieldsOf(record, args);
  return r;
}

// An operand evaluated only where `cond` has one value (`?:`, `&&`, `||`), like a branch of an
// if; `other` is what the other path issues.
ControlDependence FlowAnalysis::Walker::operandBranch(const Expr *cond, const Value &c,
                                                      const Expr *operand, const PathSet &other,
                                                      bool negated) {
  ControlDependence dep;
  dep.kind = ControlDependence::Kind::Branch;
  dep.condition = cond;
  dep.value = c;
  dep.negated = negated;
  if (tainted(c)) {
    PathSet all = signatures_.of(operand).either(other);
    dep.balanced = all.single();
    dep.reordered = all.onlyReordered();
  }
  return dep;
}

Value FlowAnalysis::Walker::evalConditional(const Expr *cond, const Expr *trueExpr,
                                            const Expr *falseExpr) {
  Value c = eval(cond);
  State entry = frame_->state;
  frame_->state = refine(entry, cond, true);
  unsigned id =
      pushControl(operandBranch(cond, c, trueExpr, signatures_.of(falseExpr), /*negated=*/false));
  Value t = eval(trueExpr);
  popControl(id);
  State afterTrue = frame_->state;
  if (endsProcess(trueExpr))
    afterTrue.reachable = false;
  frame_->state = refine(entry, cond, false);
  id = pushControl(operandBranch(cond, c, falseExpr, signatures_.of(trueExpr), /*negated=*/true));
  Value f = eval(falseExpr);
  popControl(id);
  State afterFalse = frame_->state;
  if (endsProcess(falseExpr))
    afterFalse.reachable = false;
  if (!afterTrue.reachable && !afterFalse.reachable) {
    frame_->state = entry;
    return t;
  }
  frame_->state = joinStates(afterTrue, afterFalse);
  Value r = !afterTrue.reachable ? f : (!afterFalse.reachable ? t : join(t, f));
  if (tainted(c)) {
    r.guessed = guessedFrom(r, c);
    r.uniform = false;
    r.rankDerived |= c.rankDerived;
    r.countDerived |= c.countDerived;
  } else if (!c.uniform && r.uniform && !(t.constant && f.constant && *t.constant == *f.constant)) {
    r.uniform = false;
  }
  return r;
}

Value FlowAnalysis::Walker::evalUnary(const UnaryOperator *unary) {
  const Expr *sub = unary->getSubExpr();
  switch (unary->getOpcode()) {
  case UO_AddrOf:
  case UO_Deref:
  case UO_Plus:
  case UO_Extension:
    return eval(sub);
  case UO_Minus: {
    Value v = eval(sub);
    if (v.constant)
      v.constant = -*v.constant;
    return v;
  }
  case UO_LNot:
  case UO_Not: {
    Value v = eval(sub);
    Value r = mix(v, v);
    r.mask = v.mask;
    if (v.constant)
      r.constant = unary->getOpcode() == UO_LNot ? std::optional<double>(*v.constant == 0 ? 1 : 0)
                                                 : std::nullopt;
    return r;
  }
  case UO_PreInc:
  case UO_PostInc:
  case UO_PreDec:
  case UO_PostDec:
    return increment(sub, unary->isIncrementOp() ? BO_Add : BO_Sub, nullptr, unary);
  default:
    return eval(sub);
  }
}

Value FlowAnalysis::Walker::evalBinary(const BinaryOperator *binary) {
  BinaryOperatorKind op = binary->getOpcode();
  const Expr *lhs = binary->getLHS(), *rhs = binary->getRHS();
  if (op == BO_Assign)
    return assign(lhs, rhs, binary);
  if (binary->isCompoundAssignmentOp())
    return compoundAssign(BinaryOperator::getOpForCompoundAssignment(op), lhs, rhs, binary);
  if (op == BO_Comma) {
    eval(lhs);
    return eval(rhs);
  }
  if (op == BO_LAnd || op == BO_LOr) {
    Value a = eval(lhs);
    State entry = frame_->state;
    frame_->state = refine(entry, lhs, op == BO_LAnd);
    unsigned id = pushControl(operandBranch(lhs, a, rhs, PathSet{}, op == BO_LOr));
    Value b = eval(rhs);
    popControl(id);
    frame_->state = joinStates(entry, frame_->state);
    Value r = mix(a, b);
    if (a.constant && b.constant)
      r.constant = op == BO_LAnd ? (*a.constant != 0 && *b.constant != 0)
                                 : (*a.constant != 0 || *b.constant != 0);
    return r;
  }
  Value a = eval(lhs);
  Value b = eval(rhs);
  if (binary->isComparisonOp())
    return compare(op, lhs, a, rhs, b);
  return arith(op, lhs, a, rhs, b, binary);
}

// `rank < size` and `rank >= 0` hold on every rank: a condition built on them is uniform.
std::optional<bool> FlowAnalysis::Walker::rankTautology(BinaryOperatorKind op, const Value &a,
                                                        const Value &b) {
  if (b.exactRank && !a.exactRank)
    return rankTautology(mirror(op), b, a);
  if (!a.exactRank)
    return std::nullopt;
  if (b.exactSize) {
    if (op == BO_LT || op == BO_NE)
      return true;
    if (op == BO_GE || op == BO_EQ)
      return false;
  }
  if (b.constant && *b.constant == 0) {
    if (op == BO_GE)
      return true;
    if (op == BO_LT)
      return false;
  }
  return std::nullopt;
}

Value FlowAnalysis::Walker::compare(BinaryOperatorKind op, const Expr *lhs, const Value &a,
                                    const Expr *rhs, const Value &b) {
  Value r = mix(a, b);
  r.mask = (hasType(lhs) && lhs->getType()->isRecordType()) ||
           (hasType(rhs) && rhs->getType()->isRecordType());
  if (auto always = rankTautology(op, a, b)) {
    Value u = Value::uniformConstant(*always ? 1 : 0);
    return u;
  }
  if (a.constant && b.constant) {
    double x = *a.constant, y = *b.constant;
    bool truth = op == BO_LT   ? x < y
                 : op == BO_GT ? x > y
                 : op == BO_LE ? x <= y
                 : op == BO_GE ? x >= y
                 : op == BO_EQ ? x == y
                               : x != y;
    r.constant = truth ? 1 : 0;
  }
  return r;
}

// A non-uniform integer meeting a floating value in `*` or `/` is taken for a count of items:
// dividing by it forms a mean, multiplying by it undoes one. Not a loop's own index, nor a name
// that says it is something else (a step number, a dimension).
bool FlowAnalysis::Walker::implicitCount(const Expr *e, const Value &v) {
  if (!v.powers.isZero() || v.uniform || v.rankDerived || v.exactSize || v.mask ||
      !(integralUnderlying(e) || v.integerCopy))
    return false;
  const NamedDecl *decl = coreDecl(e);
  if (!decl)
    return true;
  for (const LoopContext *loop : frame_->loops)
    if (loop->induction.contains(decl->getCanonicalDecl()))
      return false;
  return !(decl->getIdentifier() && matchesAny(nonCountNames_, decl->getName()));
}

Value FlowAnalysis::Walker::keepIntegerCopy(Value v, const Expr *source, QualType target) {
  target = target.getNonReferenceType();
  if (source && !target.isNull() && target->isRealFloatingType() && integralUnderlying(source) &&
      implicitCount(source, v))
    v.integerCopy = true;
  return v;
}

bool FlowAnalysis::Walker::realContext(const Expr *whole) {
  if (!hasType(whole))
    return false;
  QualType t = whole->getType().getNonReferenceType();
  return t->isRealFloatingType() || t->isRecordType();
}

Value FlowAnalysis::Walker::arith(BinaryOperatorKind op, const Expr *lhs, const Value &a,
                                  const Expr *rhs, const Value &b, const Expr *whole) {
  Value r = mix(a, b);
  r.reduced = a.reduced && b.reduced;
  r.meanFormed = a.meanFormed ? a.meanFormed : b.meanFormed;
  r.normalized = a.normalized ? a.normalized : b.normalized;
  r.countReduced = a.countReduced ? a.countReduced : b.countReduced;
  r.sizeDivided = a.sizeDivided ? a.sizeDivided : b.sizeDivided;
  auto fold = [&](auto f) {
    if (a.constant && b.constant)
      r.constant = f(*a.constant, *b.constant);
  };
  switch (op) {
  case BO_Add:
  case BO_Sub: {
    r.powers = addPowers(a.powers, b.powers);
    r.pendingSum = a.pendingSum ? a.pendingSum : b.pendingSum;
    r.exactSize = false;
    // `N + 1` and `N + eps` cannot be zero for a count.
    if (op == BO_Add && ((b.constant && *b.constant > 0 && (a.powers.isCount() || a.nonZero)) ||
                         (a.constant && *a.constant > 0 && (b.powers.isCount() || b.nonZero))))
      r.nonZero = true;
    if (op == BO_Add)
      fold([](double x, double y) { return x + y; });
    else
      fold([](double x, double y) { return x - y; });
    if (r.constant)
      r.nonZero = *r.constant != 0;
    return r;
  }
  case BO_Mul: {
    CountPowers pa = a.powers, pb = b.powers;
    if (realContext(whole)) {
      if (implicitCount(lhs, a))
        pa.local = 1;
      if (implicitCount(rhs, b))
        pb.local = 1;
    }
    r.powers = pa + pb;
    r.nonZero = a.nonZero && b.nonZero;
    r.mask = a.mask && b.mask;
    fold([](double x, double y) { return x * y; });
    const Value &carrier = a.pendingSum ? a : b;
    if (carrier.pendingSum) {
      if (r.powers.commSize < carrier.powers.commSize)
        sumThenDivide(*carrier.pendingSum, whole);
      else
        r.pendingSum = carrier.pendingSum;
    }
    return r;
  }
  case BO_Div: {
    CountPowers divisor = b.powers;
    if ((realContext(whole) || !integralUnderlying(lhs)) && implicitCount(rhs, b))
      divisor.local = 1;
    r.powers = a.powers - divisor;
    r.nonZero = a.nonZero;
    if (divisor.local >= 1 && r.powers.local < 0)
      r.meanFormed = {whole, coreDecl(rhs)};
    if (divisor.reduced >= 1) {
      r.normalized = {whole, coreDecl(rhs)};
      if (b.countReduced)
        r.countReduced = b.countReduced;
    }
    if (a.pendingSum) {
      if (divisor.commSize >= 1)
        sumThenDivide(*a.pendingSum, whole);
      else
        r.pendingSum = a.pendingSum;
    } else if (divisor.commSize >= 1) {
      r.sizeDivided = {whole, coreDecl(rhs)};
    }
    if (b.constant && *b.constant != 0)
      fold([](double x, double y) { return x / y; });
    if (emitting()) {
      DivisionEvent event;
      event.division = whole;
      event.divisor = rhs;
      event.dividendValue = a;
      event.divisorValue = b;
      listener_.division(event);
    }
    return r;
  }
  default:
    return r;
  }
}

Value FlowAnalysis::Walker::assign(const Expr *lhs, const Expr *rhs, const Expr *whole) {
  (void)whole;
  Value v = eval(rhs);
  Locations targets = lvalueLocations(lhs);
  if (targets.empty()) {
    eval(lhs);
    return v;
  }
  // `p = &y` re-targets a pointer.
  if (const auto *ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParenImpCasts()))
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl());
        var && isHandleType(var->getType()) && !var->getType()->isReferenceType()) {
      setAliases(keyOf(var).first, pointeeLocations(rhs));
      write(keyOf(var), v);
      return v;
    }
  if (const NamedDecl *decl = coreDecl(lhs); decl && hasType(lhs))
    v = withNamedFacts(keepIntegerCopy(v, rhs, lhs->getType()), decl, lhs->getType());
  writeAll(targets, v);
  return v;
}

Value FlowAnalysis::Walker::readLocations(const Locations &targets, const Expr *fallback) {
  if (targets.empty())
    return eval(fallback);
  std::optional<Value> r;
  for (const LocKey &k : targets) {
    Value v = readKey(k);
    r = r ? join(*r, v) : v;
  }
  return *r;
}

// Whether `cond` tests one item of the data the loop walks: it reads an element (`valid[i]`,
// `batch[i].ok`) at an index the enclosing loop steps. Counting the items that pass is a count of
// this rank's items by the flow, whatever the data is named.
static bool testsLoopItem(const Expr *cond, llvm::ArrayRef<LoopContext *> loops) {
  if (!cond)
    return false;
  if (const auto *subscript = dyn_cast<ArraySubscriptExpr>(cond->IgnoreParenImpCasts())) {
    const NamedDecl *index = coreDecl(subscript->getIdx());
    for (const LoopContext *loop : loops)
      if (index && loop->induction.contains(index->getCanonicalDecl()))
        return true;
  }
  for (const Stmt *child : cond->children())
    if (const auto *e = dyn_cast_or_null<Expr>(child); e && testsLoopItem(e, loops))
      return true;
  return false;
}

// A count: an integer stepped under a condition that differs across ranks (`if (mask[i]) ++n`).
// The count is rank-local (a condition on it diverges) when its name says so or when what
// decides the stepping already depends on the rank or on local data.
void FlowAnalysis::Walker::markCounted(Value &v, const Expr *target, const Expr *step,
                                       const Expr *amount) {
  const NamedDecl *decl = coreDecl(target);
  if (!hasType(target))
    return;
  bool integral = target->getType()->isIntegralOrEnumerationType() ||
                  (amount && integralUnderlying(amount) && isArithmetic(target->getType()));
  if (!integral || target->getType()->isBooleanType() || !anyNonUniformControl())
    return;
  for (const LoopContext *loop : frame_->loops)
    if (decl && loop->induction.contains(decl->getCanonicalDecl()))
      return;
  // Rank-local by the flow when a condition deciding the step depends on the rank or on local
  // data through the flow; by a guess when only names say so.
  bool byFlow = llvm::any_of(frame_->control, [&](const ActiveControl &c) {
    return (tainted(c.dep.value) && !c.dep.value.guessed) ||
           (!c.dep.value.uniform && testsLoopItem(c.dep.condition, frame_->loops));
  });
  bool local =
      byFlow || namesLocalData(target) ||
      llvm::any_of(frame_->control, [](const ActiveControl &c) { return tainted(c.dep.value); });
  bool wasTainted = v.rankDerived || v.countDerived;
  if (byFlow)
    v.guessed = false;
  else if (local)
    v.guessed = wasTainted ? v.guessed : true;
  v.uniform = false;
  v.countDerived = v.countDerived || local;
  v.exactRank = v.exactSize = false;
  v.constant.reset();
  if (v.powers.isZero())
    v.powers.local = 1;
  if (!v.countSource)
    v.countSource = {step, decl};
}

Value FlowAnalysis::Walker::increment(const Expr *target, BinaryOperatorKind op, const Expr *amount,
                                      const Expr *whole) {
  Locations targets = lvalueLocations(target);
  Value current = readLocations(targets, target);
  Value step = amount ? eval(amount) : Value::uniformConstant(1);
  Value r = arith(op, target, current, amount ? amount : target, step, whole);
  if (op == BO_Add)
    markCounted(r, target, whole, amount);
  writeAll(targets, r);
  return r;
}

Value FlowAnalysis::Walker::compoundAssign(BinaryOperatorKind op, const Expr *lhs, const Expr *rhs,
                                           const Expr *whole) {
  if (op == BO_Add || op == BO_Sub)
    return increment(lhs, op, rhs, whole);
  Locations targets = lvalueLocations(lhs);
  Value current = readLocations(targets, lhs);
  Value amount = eval(rhs);
  Value r = arith(op, lhs, current, rhs, amount, whole);
  writeAll(targets, r);
  return r;
}

} // namespace collcheck::lint
