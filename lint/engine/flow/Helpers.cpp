// The definitions of engine/flow/Helpers.h: questions about expressions, types and records that
// the flow walker asks without any state of its own.

#include "engine/flow/Helpers.h"
#include "engine/Callee.h"

#include "clang/AST/DeclTemplate.h"
#include "llvm/ADT/StringSwitch.h"

namespace collcheck::lint::flow {

const Expr *strip(const Expr *e) {
  while (e) {
    const Expr *next = e->IgnoreParens();
    if (const auto *cast = dyn_cast<CastExpr>(next))
      next = cast->getSubExpr();
    else if (const auto *temp = dyn_cast<MaterializeTemporaryExpr>(next))
      next = temp->getSubExpr();
    else if (const auto *bind = dyn_cast<CXXBindTemporaryExpr>(next))
      next = bind->getSubExpr();
    else if (const auto *full = dyn_cast<FullExpr>(next))
      next = full->getSubExpr();
    else if (const auto *construct = dyn_cast<CXXConstructExpr>(next);
             construct && construct->getNumArgs() == 1 && !isa<CXXTemporaryObjectExpr>(next))
      next = construct->getArg(0);
    if (next == e)
      return e;
    e = next;
  }
  return e;
}

bool isStdDecl(const Decl *d) {
  const DeclContext *dc = d->getDeclContext();
  while (dc && !dc->isTranslationUnit()) {
    if (const auto *ns = dyn_cast<NamespaceDecl>(dc); ns && !ns->isInline())
      return ns->getName() == "std" && ns->getParent()->getRedeclContext()->isTranslationUnit();
    dc = dc->getParent();
  }
  return false;
}

bool isTensorLike(QualType type) {
  if (type.isNull())
    return false;
  const CXXRecordDecl *record = type.getNonReferenceType()->getAsCXXRecordDecl();
  if (!record || !record->getIdentifier())
    return false;
  llvm::StringRef name = record->getName();
  return name == "Tensor" || name == "TensorBase" || name == "Scalar";
}

// Types whose copies share their data: pointers, references, tensors and containers of them.
bool isHandleType(QualType type) {
  if (type.isNull())
    return false;
  if (type->isPointerType() || type->isReferenceType() || type->isArrayType())
    return true;
  const CXXRecordDecl *record = type->getAsCXXRecordDecl();
  if (!record || !record->getIdentifier())
    return false;
  llvm::StringRef name = record->getName();
  if (name == "Tensor" || name == "TensorBase" || name == "intrusive_ptr" || name == "shared_ptr")
    return true;
  if (const auto *spec = dyn_cast<ClassTemplateSpecializationDecl>(record))
    if (name == "vector" || name == "array" || name == "initializer_list" || name == "ArrayRef")
      for (const TemplateArgument &arg : spec->getTemplateArgs().asArray())
        if (arg.getKind() == TemplateArgument::Type && isHandleType(arg.getAsType()))
          return true;
  return false;
}

bool isOutPointerOrReference(QualType type) {
  return (type->isPointerType() && !type->getPointeeType().isConstQualified()) ||
         (type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified());
}

bool isStdContainer(const CXXRecordDecl *record) {
  if (!record || !record->getIdentifier() || !isStdDecl(record))
    return false;
  return llvm::StringSwitch<bool>(record->getName())
      .Cases("vector", "array", "deque", "list", "valarray", "basic_string", true)
      .Default(false);
}

bool isStdPair(const CXXRecordDecl *record) {
  return record && record->getIdentifier() && record->getName() == "pair" && isStdDecl(record);
}

// A record whose fields a value can be followed through one by one: a plain struct (its fields
// in order), or a std::pair (`first`, `second`). Unions, classes with bases and handles are read
// as a whole.
const CXXRecordDecl *fieldwiseRecord(QualType type) {
  if (type.isNull())
    return nullptr;
  type = type.getNonReferenceType();
  const CXXRecordDecl *record = type->getAsCXXRecordDecl();
  if (!record || !record->hasDefinition() || record->isUnion() || isHandleType(type))
    return nullptr;
  if (isStdPair(record))
    return record;
  return isStdDecl(record) || record->getNumBases() > 0 ? nullptr : record;
}

// The values of `record`'s fields, one per field in order; none when the counts differ.
std::shared_ptr<const FieldValues> fieldsOf(const CXXRecordDecl *record,
                                            llvm::ArrayRef<Value> values) {
  if (!record)
    return nullptr;
  auto out = std::make_shared<FieldValues>();
  size_t i = 0;
  for (const FieldDecl *field : record->fields()) {
    if (i >= values.size())
      return nullptr;
    Value v = values[i++];
    v.fields.reset(); // one level: a field's own fields are read as its whole
    out->items.emplace_back(field->getCanonicalDecl(), std::move(v));
  }
  return i == values.size() ? out : nullptr;
}

// `fields` as the fields of `record`: by position when they were built for another record of as
// many fields (`std::pair<double, long> p = std::make_pair(sum, n)`); none when that cannot be.
std::shared_ptr<const FieldValues> fieldsFor(const CXXRecordDecl *record,
                                             std::shared_ptr<const FieldValues> fields) {
  if (!record || !fields || fields->items.empty())
    return nullptr;
  if (fields->items.front().first->getParent()->getCanonicalDecl() == record->getCanonicalDecl())
    return fields;
  std::vector<Value> values;
  for (const auto &item : fields->items)
    values.push_back(item.second);
  return fieldsOf(record, values);
}

// Field `index` of `record` (a binding's or std::get's position), or null.
const FieldDecl *fieldAt(const CXXRecordDecl *record, unsigned index) {
  if (!record)
    return nullptr;
  for (const FieldDecl *field : record->fields())
    if (index-- == 0)
      return field->getCanonicalDecl();
  return nullptr;
}

bool isArithmetic(QualType type) {
  if (type.isNull())
    return false;
  type = type.getNonReferenceType();
  return (type->isIntegralOrEnumerationType() && !type->isBooleanType()) ||
         type->isRealFloatingType();
}

// The type the programmer wrote beneath conversions: `(double)n` and `Scalar(n)` are `n`.
QualType underlyingType(const Expr *e) { return strip(e)->getType(); }

// In a template as written some expressions have no type yet (a ParenListExpr such as the
// arguments of `new T(a, b)` or of `T x(a, b)`): every type test below is false for them.
bool hasType(const Expr *e) { return e && !e->getType().isNull(); }

bool pointerTyped(const Expr *e) { return hasType(e) && e->getType()->isPointerType(); }

bool integralUnderlying(const Expr *e) {
  QualType t = underlyingType(e);
  if (t.isNull())
    return false;
  t = t.getNonReferenceType();
  return t->isIntegralOrEnumerationType() && !t->isBooleanType();
}

// The variable or field a value is about: `n` in `(double)std::max(n, 1)`.
const NamedDecl *coreDecl(const Expr *e) {
  for (int guard = 0; e && guard < 16; ++guard) {
    e = strip(e);
    if (const auto *ref = dyn_cast<DeclRefExpr>(e))
      return ref->getDecl();
    if (const auto *member = dyn_cast<MemberExpr>(e))
      return member->getMemberDecl();
    if (const auto *unary = dyn_cast<UnaryOperator>(e)) {
      e = unary->getSubExpr();
      continue;
    }
    if (const auto *subscript = dyn_cast<ArraySubscriptExpr>(e)) {
      e = subscript->getBase();
      continue;
    }
    if (const auto *call = dyn_cast<CXXMemberCallExpr>(e)) {
      e = call->getImplicitObjectArgument();
      continue;
    }
    if (const auto *call = dyn_cast<CallExpr>(e); call && call->getNumArgs() > 0) {
      e = call->getArg(0);
      continue;
    }
    return nullptr;
  }
  return nullptr;
}

bool isNoReturnCall(const Expr *e) {
  const auto *call = dyn_cast_or_null<CallExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  if (!call)
    return false;
  const FunctionDecl *callee = calleeOf(call);
  return callee && callee->isNoReturn();
}

// Whether `s` assigns `decl` (a variable, or a field through any object), steps it, takes its
// address or binds a reference to it: then its value after `s` may not be the one before (for a
// parameter, at the end of the function it may not be the argument's).
bool writes(const Stmt *s, const ValueDecl *decl) {
  if (!s)
    return false;
  auto names = [&](const Expr *e) {
    e = e ? e->IgnoreParenImpCasts() : nullptr;
    if (const auto *member = dyn_cast_or_null<MemberExpr>(e))
      return member->getMemberDecl()->getCanonicalDecl() == decl->getCanonicalDecl();
    const auto *ref = dyn_cast_or_null<DeclRefExpr>(e);
    return ref && ref->getDecl()->getCanonicalDecl() == decl->getCanonicalDecl();
  };
  if (const auto *binary = dyn_cast<BinaryOperator>(s);
      binary && binary->isAssignmentOp() && names(binary->getLHS()))
    return true;
  if (const auto *unary = dyn_cast<UnaryOperator>(s);
      unary && (unary->isIncrementDecrementOp() || unary->getOpcode() == UO_AddrOf) &&
      names(unary->getSubExpr()))
    return true;
  // Bound to a reference (`bool &r = ok`, `widen(ok)` taking `bool &`): writable through it.
  if (const auto *call = dyn_cast<CallExpr>(s))
    if (const FunctionDecl *callee = calleeOf(call))
      for (unsigned i = 0; i < call->getNumArgs() && i < callee->getNumParams(); ++i) {
        QualType t = callee->getParamDecl(i)->getType();
        if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified() &&
            names(call->getArg(i)))
          return true;
      }
  if (const auto *decls = dyn_cast<DeclStmt>(s))
    for (const Decl *d : decls->decls())
      if (const auto *var = dyn_cast<VarDecl>(d);
          var && var->getType()->isReferenceType() &&
          !var->getType().getNonReferenceType().isConstQualified() && names(var->getInit()))
        return true;
  for (const Stmt *child : s->children())
    if (writes(child, decl))
      return true;
  return false;
}

bool isDefaultAllocator(const Expr *arg) {
  const auto *defaulted = dyn_cast<CXXDefaultArgExpr>(arg);
  const CXXRecordDecl *record = defaulted ? defaulted->getType()->getAsCXXRecordDecl() : nullptr;
  return record && record->getIdentifier() && isStdDecl(record) &&
         record->getName().ends_with("allocator");
}

bool isMpiAbort(const Expr *e) {
  const auto *call = dyn_cast_or_null<CallExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  const FunctionDecl *callee = call ? calleeOf(call) : nullptr;
  return callee && callee->getIdentifier() && callee->getName() == "MPI_Abort";
}

std::optional<BinaryOperatorKind> binaryOpFor(OverloadedOperatorKind op, bool &compound) {
  compound = false;
  switch (op) {
  case OO_Plus:
    return BO_Add;
  case OO_Minus:
    return BO_Sub;
  case OO_Star:
    return BO_Mul;
  case OO_Slash:
    return BO_Div;
  case OO_Percent:
    return BO_Rem;
  case OO_PlusEqual:
    compound = true;
    return BO_Add;
  case OO_MinusEqual:
    compound = true;
    return BO_Sub;
  case OO_StarEqual:
    compound = true;
    return BO_Mul;
  case OO_SlashEqual:
    compound = true;
    return BO_Div;
  case OO_EqualEqual:
    return BO_EQ;
  case OO_ExclaimEqual:
    return BO_NE;
  case OO_Less:
    return BO_LT;
  case OO_Greater:
    return BO_GT;
  case OO_LessEqual:
    return BO_LE;
  case OO_GreaterEqual:
    return BO_GE;
  case OO_AmpAmp:
    return BO_LAnd;
  case OO_PipePipe:
    return BO_LOr;
  default:
    return std::nullopt;
  }
}

} // namespace collcheck::lint::flow
