// How the walker reads names: the configuration's rank, size, count and data patterns, and the
// values a variable or a field starts with when the walk has not seen them written.

#include "engine/flow/Walker.h"

namespace collcheck::lint {

bool FlowAnalysis::Walker::matchesAny(const std::vector<std::regex> &patterns,
                                      llvm::StringRef name) {
  std::string text = name.str();
  while (!text.empty() && text.back() == '_')
    text.pop_back();
  if (text.starts_with("m_"))
    text = text.substr(2);
  while (!text.empty() && text.front() == '_')
    text.erase(text.begin());
  for (const std::regex &p : patterns)
    if (std::regex_match(text, p))
      return true;
  return false;
}

// What a name promises when the value's origin is out of sight (docs/lint.md, naming).
const Value &FlowAnalysis::Walker::namedFacts(const NamedDecl *decl, QualType type) {
  auto [it, inserted] = named_.try_emplace(decl);
  if (!inserted)
    return it->second;
  Value v;
  QualType t = type.getNonReferenceType();
  if (t->isPointerType())
    t = t->getPointeeType();
  bool arithmetic = isArithmetic(t) || isTensorLike(t);
  QualType element = t->isArrayType() ? QualType(t->getPointeeOrArrayElementType(), 0) : t;
  if (decl->getIdentifier() &&
      (isTensorLike(t) || element->isBooleanType() || element->isIntegralOrEnumerationType()) &&
      matchesAny(maskNames_, decl->getName()))
    v.mask = true;
  if (decl->getIdentifier() && arithmetic && !v.mask) {
    llvm::StringRef name = decl->getName();
    if (t->isIntegralOrEnumerationType() && matchesAny(rankNames_, name)) {
      v.rankDerived = true;
      v.exactRank = true;
      v.guessed = true;
      v.rankSource = {nullptr, decl};
    } else if (matchesAny(sizeNames_, name)) {
      v.uniform = true;
      v.exactSize = true;
      v.nonZero = true;
      v.powers.commSize = 1;
    } else if (matchesAny(globalCountNames_, name)) {
      // Uniform and normalising like N; not `reduced`, since where it was reduced (and
      // whether it was guarded) is out of sight.
      v.uniform = true;
      v.powers.reduced = 1;
    } else if (matchesAny(countNames_, name)) {
      v.countDerived = true;
      v.guessed = true;
      v.powers.local = 1;
      v.countSource = {nullptr, decl};
    }
  }
  return it->second = v;
}

// Whether `e` names this rank's data (a batch, its tokens, a mask) or a count of it, so that its
// size is a rank-local count; not the model's state.
bool FlowAnalysis::Walker::namesLocalData(const Expr *e) {
  const NamedDecl *decl = coreDecl(e);
  if (!decl || !decl->getIdentifier())
    return false;
  auto [it, inserted] = localData_.try_emplace(decl);
  if (inserted)
    it->second = (matchesAny(dataNames_, decl->getName()) && !namesModelState(decl)) ||
                 matchesAny(countNames_, decl->getName());
  return it->second;
}

// Adds what a variable's name says to a value of unknown origin.
Value FlowAnalysis::Walker::withNamedFacts(Value v, const NamedDecl *decl, QualType type) {
  if (!decl || v.uniform || !v.powers.isZero() || v.rankDerived || v.reduced)
    return v;
  const Value &named = namedFacts(decl, type);
  v.mask = v.mask || named.mask;
  if (named.powers.reduced > 0) {
    v.uniform = true;
    v.powers = named.powers;
  } else if (named.exactSize) {
    v.uniform = named.uniform;
    v.exactSize = true;
    v.nonZero = true;
    v.powers = named.powers;
  } else if (named.exactRank) {
    v.guessed = v.countDerived ? v.guessed : true;
    v.rankDerived = true;
    v.exactRank = true;
    v.rankSource = named.rankSource;
  } else if (named.countDerived) {
    v.guessed = v.countDerived ? v.guessed : true;
    v.countDerived = true;
    v.powers = named.powers;
    v.countSource = named.countSource;
  }
  return v;
}

std::optional<ReduceOpKind> FlowAnalysis::Walker::mpiOpNamed(llvm::StringRef name) {
  // Open MPI's predefined op objects and the MPI_* macros that name them.
  if (name.consume_front("ompi_mpi_op_") || name.consume_front("MPI_"))
    return name.equals_insensitive("sum") ? ReduceOpKind::Sum : ReduceOpKind::Other;
  return std::nullopt;
}

Value FlowAnalysis::Walker::defaultFor(LocKey key) {
  if (key.second) {
    const auto *field = static_cast<const FieldDecl *>(key.second);
    Value whole = key.first == kThis ? Value{} : readLocation({key.first, nullptr});
    // A struct assigned whole from one built field by field (`cfg = config_init(rank, size)`):
    // each field holds its own value, not the join of all of them.
    if (const Value *own = whole.fields ? whole.fields->find(field->getCanonicalDecl()) : nullptr)
      return *own;
    whole.op = ReduceOpKind::None;
    whole.lambda = nullptr;
    return withRankStorage(withNamedFacts(whole, field, field->getType()), field);
  }
  const auto *decl = static_cast<const Decl *>(key.first);
  if (key.first == kThis || !decl)
    return Value{};
  const auto *var = dyn_cast<VarDecl>(decl);
  if (!var)
    return Value{};
  if (const auto *param = dyn_cast<ParmVarDecl>(var)) {
    // Every rank of a job is started with the same command line.
    if (const auto *fn = dyn_cast_or_null<FunctionDecl>(param->getDeclContext());
        fn && fn->isMain()) {
      Value v;
      v.uniform = true;
      return v;
    }
    Value v;
    unsigned index = param->getFunctionScopeIndex();
    v.paramMask = index < 32 ? 1u << index : 0;
    return withNamedFacts(v, param, param->getType());
  }
  if (auto op = mpiOpNamed(var->getName()); op && !var->isLocalVarDeclOrParm()) {
    Value v;
    v.uniform = true;
    v.op = *op;
    return v;
  }
  if (!var->isLocalVarDeclOrParm() || var->isStaticLocal()) {
    QualType t = var->getType();
    if ((t.isConstQualified() || var->isConstexpr()) && var->getInit() &&
        evaluatingGlobals_.insert(var).second) {
      Value v = eval(var->getInit());
      evaluatingGlobals_.erase(var);
      return v;
    }
    if (var->getName().starts_with("ompi_mpi_"))
      return Value::uniformConstant(0); // datatypes and communicators of Open MPI
  }
  return withRankStorage(withNamedFacts(Value{}, var, var->getType()), var);
}

// A field or global some function of the file fills with the rank (learnRankStorage), read
// where the walk has not seen that write; or with a communicator a split made.
Value FlowAnalysis::Walker::withRankStorage(Value v, const Decl *storage) const {
  if (splitStorage_.contains(storage->getCanonicalDecl()))
    v.subCommunicator = true;
  // What the flow shows replaces what a name suggests (a field named `local_rank`), here or in
  // another translation unit of the project.
  const Decl *canonical = storage->getCanonicalDecl();
  std::optional<QuerySpec::What> held;
  Origin origin{nullptr, dyn_cast<NamedDecl>(canonical)};
  if (auto it = rankStorage_.find(canonical); it != rankStorage_.end()) {
    held = QuerySpec::What::Rank;
    origin = it->second;
  } else if (auto size = sizeStorage_.find(canonical); size != sizeStorage_.end()) {
    held = QuerySpec::What::Size;
  } else if (config_.project) {
    held = config_.project->storageOf(dyn_cast<NamedDecl>(canonical));
  }
  if (!held || (v.rankDerived && !v.guessed))
    return v;
  if (*held == QuerySpec::What::Size) {
    Value size = Value::communicatorSize();
    size.subCommunicator = v.subCommunicator;
    return size;
  }
  v.guessed = false;
  v.uniform = false;
  v.rankDerived = true;
  v.exactRank = true;
  v.rankSource = origin;
  return v;
}

} // namespace collcheck::lint
