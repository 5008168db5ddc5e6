// Locations and aliases: which storage an expression names, what a pointer, a reference or a
// handle points to, and how writes through them reach the state.

#include "engine/flow/Walker.h"

namespace collcheck::lint {

Frame *FlowAnalysis::Walker::ownerFrame(LocKey key) {
  const auto *decl = static_cast<const Decl *>(key.first);
  if (key.first == kThis || !decl)
    return frame_;
  const auto *var = dyn_cast<VarDecl>(decl);
  if (!var || !var->isLocalVarDeclOrParm())
    return frame_;
  const DeclContext *owner = var->getParentFunctionOrMethod();
  for (Frame *f = frame_; f; f = f->lexicalParent)
    if (f->function == owner || f->function->getCanonicalDecl() == owner)
      return f;
  return frame_;
}

Value FlowAnalysis::Walker::readLocation(LocKey key) {
  Frame *owner = ownerFrame(key);
  auto it = owner->state.values.find(key);
  Value v = it != owner->state.values.end() ? it->second : defaultFor(key);
  if (!key.second && !v.uniform && v.powers.isZero()) {
    const auto *decl = static_cast<const Decl *>(key.first);
    if (key.first != kThis && decl && owner->countEvidence.contains(decl)) {
      v.countDerived = true;
      v.powers.local = 1;
      if (!v.countSource)
        v.countSource = {nullptr, dyn_cast<NamedDecl>(decl)};
    }
  }
  return v;
}

const Locations *FlowAnalysis::Walker::aliasesOf(const void *base) {
  Frame *owner = ownerFrame({base, nullptr});
  auto it = owner->state.aliases.find(base);
  return it == owner->state.aliases.end() || it->second.empty() ? nullptr : &it->second;
}

void FlowAnalysis::Walker::setAliases(const void *base, Locations targets) {
  Frame *owner = ownerFrame({base, nullptr});
  llvm::erase_if(targets, [&](const LocKey &k) { return k.first == base; });
  owner->state.aliases[base] = std::move(targets);
}

// A record variable read as a whole: its fields joined (an options struct's op is the op of
// whichever field holds one).
Value FlowAnalysis::Walker::readWhole(const VarDecl *var) {
  LocKey key = keyOf(var);
  Value whole = readLocation(key);
  if (!var->getType()->isRecordType() || isHandleType(var->getType()))
    return whole;
  Frame *owner = ownerFrame(key);
  const CXXRecordDecl *record = fieldwiseRecord(var->getType());
  std::shared_ptr<FieldValues> fields;
  for (const auto &[k, v] : owner->state.values)
    if (k.first == key.first && k.second) {
      if (record) {
        if (!fields)
          fields = std::make_shared<FieldValues>();
        fields->items.emplace_back(static_cast<const FieldDecl *>(k.second), v);
      }
      Value field = v;
      whole.uniform = whole.uniform && field.uniform;
      whole.rankDerived |= field.rankDerived;
      whole.countDerived |= field.countDerived;
      if (field.op != ReduceOpKind::None) {
        whole.op = field.op;
        whole.opScalar = field.opScalar;
        whole.opNamedAt = field.opNamedAt;
      }
    }
  // In the record's order, so that values of one record compare field by field (join).
  if (fields) {
    llvm::SmallVector<const FieldDecl *, 4> order;
    for (const FieldDecl *field : record->fields())
      order.push_back(field->getCanonicalDecl());
    llvm::sort(fields->items, [&](const auto &a, const auto &b) {
      return llvm::find(order, a.first) < llvm::find(order, b.first);
    });
    whole.fields = std::move(fields);
  }
  return whole;
}

// Reads one location; a record variable as a whole.
Value FlowAnalysis::Walker::readKey(LocKey k) {
  if (k.second || k.first == kThis || !k.first)
    return readLocation(k);
  if (const auto *var = dyn_cast<VarDecl>(static_cast<const Decl *>(k.first)))
    return readWhole(var);
  return readLocation(k);
}

// A value assigned under a condition that differs across ranks differs too. An early exit is
// different: the ranks that go on all compute the same thing, so it decides only reachability.
void FlowAnalysis::Walker::applyControlTaint(Value &v) {
  for (const ActiveControl &c : frame_->control) {
    const Value &cond = c.dep.value;
    if (c.earlyExit || c.dep.kind == ControlDependence::Kind::LoopExit)
      continue;
    if (cond.uniform || !(cond.rankDerived || cond.countDerived))
      continue;
    v.guessed = guessedFrom(v, cond);
    v.uniform = false;
    v.exactRank = v.exactSize = false;
    v.rankDerived |= cond.rankDerived;
    v.countDerived |= cond.countDerived;
    if (!v.rankSource)
      v.rankSource = cond.rankSource;
    if (!v.countSource)
      v.countSource = cond.countSource;
  }
}

void FlowAnalysis::Walker::write(LocKey key, Value v, bool taint) {
  lastWrite_[key] = ++writeClock_;
  if (taint)
    applyControlTaint(v);
  Frame *owner = ownerFrame(key);
  // A value built field by field is stored field by field: a field read later (`p.second`, a
  // structured binding) finds its own value; readWhole puts them back together.
  if (std::shared_ptr<const FieldValues> fields = std::move(v.fields); fields && !key.second)
    for (const auto &[field, fieldValue] : fields->items)
      write({key.first, field}, fieldValue, taint);
  owner->state.values[key] = std::move(v);
}

void FlowAnalysis::Walker::writeAll(const Locations &targets, const Value &v, bool taint) {
  for (const LocKey &k : targets)
    write(k, v, taint);
}

void FlowAnalysis::Walker::appendAliases(Locations &out, const void *base, const FieldDecl *field) {
  if (const Locations *targets = aliasesOf(base))
    for (const LocKey &t : *targets)
      out.push_back({t.first, field ? static_cast<const void *>(field) : t.second});
}

// The locations an lvalue expression names.
Locations FlowAnalysis::Walker::lvalueLocations(const Expr *e) {
  Locations out;
  if (!e)
    return out;
  e = e->IgnoreParenImpCasts();
  if (const auto *full = dyn_cast<FullExpr>(e))
    return lvalueLocations(full->getSubExpr());
  if (const auto *temp = dyn_cast<MaterializeTemporaryExpr>(e))
    return lvalueLocations(temp->getSubExpr());
  if (const auto *ref = dyn_cast<DeclRefExpr>(e)) {
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl())) {
      out.push_back(keyOf(var));
      if (var->getType()->isReferenceType())
        appendAliases(out, keyOf(var).first, nullptr);
    } else if (const auto *binding = dyn_cast<BindingDecl>(ref->getDecl())) {
      return bindingLocations(binding);
    }
    return out;
  }
  if (const auto *member = dyn_cast<MemberExpr>(e)) {
    const auto *field = dyn_cast<FieldDecl>(member->getMemberDecl());
    if (!field)
      return out;
    const Expr *base = member->getBase()->IgnoreParenImpCasts();
    if (isa<CXXThisExpr>(base)) {
      out.push_back({kThis, field->getCanonicalDecl()});
      return out;
    }
    Locations bases = member->isArrow() ? pointeeLocations(base) : lvalueLocations(base);
    for (const LocKey &b : bases)
      out.push_back({b.first, field->getCanonicalDecl()});
    return out;
  }
  if (const auto *subscript = dyn_cast<ArraySubscriptExpr>(e))
    return pointeeLocations(subscript->getBase());
  if (const auto *unary = dyn_cast<UnaryOperator>(e); unary && unary->getOpcode() == UO_Deref)
    return pointeeLocations(unary->getSubExpr());
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e)) {
    OverloadedOperatorKind kind = op->getOperator();
    if ((kind == OO_Subscript || kind == OO_Star || kind == OO_Arrow) && op->getNumArgs() > 0)
      return lvalueLocations(op->getArg(0));
    return out;
  }
  if (const auto *call = dyn_cast<CXXMemberCallExpr>(e)) {
    // operator-like accessors of containers and tensors: v.at(i), v.front(), t.grad()
    if (const CXXMethodDecl *method = call->getMethodDecl();
        method && method->getIdentifier() &&
        llvm::StringSwitch<bool>(method->getName())
            .Cases("at", "front", "back", "data", "get", "value", true)
            .Default(false))
      return lvalueLocations(call->getImplicitObjectArgument());
    return out;
  }
  if (const auto *cond = dyn_cast<ConditionalOperator>(e)) {
    out = lvalueLocations(cond->getTrueExpr());
    out.append(lvalueLocations(cond->getFalseExpr()));
  }
  return out;
}

// The locations a pointer or handle expression refers to.
Locations FlowAnalysis::Walker::pointeeLocations(const Expr *e) {
  Locations out;
  if (!e)
    return out;
  e = e->IgnoreParens();
  if (const auto *full = dyn_cast<FullExpr>(e))
    return pointeeLocations(full->getSubExpr());
  if (const auto *cast = dyn_cast<CastExpr>(e))
    return pointeeLocations(cast->getSubExpr());
  if (const auto *temp = dyn_cast<MaterializeTemporaryExpr>(e))
    return pointeeLocations(temp->getSubExpr());
  if (const auto *bind = dyn_cast<CXXBindTemporaryExpr>(e))
    return pointeeLocations(bind->getSubExpr());
  if (const auto *unary = dyn_cast<UnaryOperator>(e); unary && unary->getOpcode() == UO_AddrOf)
    return lvalueLocations(unary->getSubExpr());
  if (const auto *ref = dyn_cast<DeclRefExpr>(e)) {
    if (const auto *var = dyn_cast<VarDecl>(ref->getDecl())) {
      out.push_back(keyOf(var));
      appendAliases(out, keyOf(var).first, nullptr);
    }
    return out;
  }
  if (const auto *binary = dyn_cast<BinaryOperator>(e)) {
    if (pointerTyped(binary->getLHS()))
      return pointeeLocations(binary->getLHS());
    if (pointerTyped(binary->getRHS()))
      return pointeeLocations(binary->getRHS());
    return out;
  }
  if (isa<MemberExpr, ArraySubscriptExpr>(e))
    return lvalueLocations(e);
  if (const auto *call = dyn_cast<CXXMemberCallExpr>(e)) {
    if (const CXXMethodDecl *method = call->getMethodDecl();
        method && method->getIdentifier() &&
        llvm::StringSwitch<bool>(method->getName())
            .Cases("data", "data_ptr", "get", "begin", "cbegin", "mutable_data_ptr", true)
            .Case("const_data_ptr", true)
            .Default(false))
      return lvalueLocations(call->getImplicitObjectArgument());
    return out;
  }
  if (const auto *construct = dyn_cast<CXXConstructExpr>(e)) {
    for (const Expr *arg : construct->arguments())
      out.append(pointeeLocations(arg));
    return out;
  }
  if (const auto *list = dyn_cast<InitListExpr>(e)) {
    for (const Expr *init : list->inits())
      out.append(pointeeLocations(init));
    return out;
  }
  if (const auto *il = dyn_cast<CXXStdInitializerListExpr>(e))
    return pointeeLocations(il->getSubExpr());
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e);
      op && op->getNumArgs() > 0 &&
      (op->getOperator() == OO_Arrow || op->getOperator() == OO_Subscript))
    return pointeeLocations(op->getArg(0));
  return out;
}

} // namespace collcheck::lint
