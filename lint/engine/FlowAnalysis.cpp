#include "engine/FlowAnalysis.h"
#include "engine/Callee.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Compiler.h"

#include <map>
#include <optional>
#include <regex>

namespace collcheck::lint {

using namespace clang;

namespace {

// A storage location: a variable (or parameter), optionally one field of it. For a pointer or a
// handle (a tensor, a vector of tensors) the location stands for what it points to.
using LocKey = std::pair<const void *, const void *>;
using Locations = llvm::SmallVector<LocKey, 2>;
const char kThisTag = 0;
const void *const kThis = &kThisTag;

LocKey keyOf(const ValueDecl *decl, const FieldDecl *field = nullptr) {
  return {decl ? decl->getCanonicalDecl() : nullptr, field ? field->getCanonicalDecl() : nullptr};
}

struct State {
  llvm::DenseMap<LocKey, Value> values;
  llvm::DenseMap<const void *, Locations> aliases; // pointer, reference or handle -> targets
  bool reachable = true;
};

// A loop or a switch being walked: where its `break`s and `continue`s go.
struct LoopContext {
  bool isSwitch = false;
  const Stmt *body = nullptr;
  State entry; // switch: the state every case label starts from
  std::vector<State> breaks, continues;
  std::optional<ControlDependence> varyingExit; // some ranks leave it early
  llvm::SmallPtrSet<const Decl *, 4> induction; // variables the loop itself steps
};

// What the last walk of a loop left behind: its back edge, the state its last pass started from
// and whether that pass changed nothing.
struct LoopMemo {
  std::optional<State> back;
  State head;
  bool settled = false;
  std::optional<ControlDependence> varyingExit;
};

// A control dependence in force, and the region it ends with: a branch ends with its if, an early
// exit with the loop it leaves (`region`) or with the function (`region == nullptr`).
struct ActiveControl {
  ControlDependence dep;
  bool earlyExit = false;
  const LoopContext *region = nullptr;
};

// The statements left to run in an enclosing block, for the collectives a jump skips.
struct Continuation {
  const CompoundStmt *block;
  unsigned next;
  size_t loopDepth; // loops open when the block was entered
};

struct Frame {
  const FunctionDecl *function = nullptr;
  Frame *caller = nullptr;
  const Expr *callSite = nullptr;
  Frame *lexicalParent = nullptr; // a lambda: the frame owning its captured variables
  unsigned depth = 0;
  std::vector<uint32_t> argParamMasks; // for each parameter, the caller's mask of its argument
  State state;
  std::vector<ActiveControl> control;
  std::vector<LoopContext *> loops;
  // The try blocks being walked, innermost last: the region a `throw` inside one leaves (its
  // handler catches it), and how many loops were open when it was entered.
  std::vector<std::pair<const LoopContext *, size_t>> tries;
  std::vector<Continuation> rest;
  std::optional<Value> returned;
  std::optional<State> returnState;
  std::optional<Value> gradients; // libtorch: the loss of the last backward()
  llvm::DenseSet<const Decl *> countEvidence;
  unsigned silent = 0; // > 0: a provisional pass of a loop, which reports nothing
};

constexpr unsigned kMaxCallDepth = 8;
constexpr unsigned long kEvaluationBudget = 4'000'000;

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

// Whether `s` assigns `param`, steps it, takes its address or binds a reference to it: then its
// value at the end of the function may not be the argument's.
bool writes(const Stmt *s, const ParmVarDecl *param) {
  if (!s)
    return false;
  auto names = [&](const Expr *e) {
    const auto *ref = dyn_cast_or_null<DeclRefExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
    return ref && ref->getDecl() == param;
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
    if (writes(child, param))
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

} // namespace

class FlowAnalysis::Walker {
public:
  Walker(ASTContext &context, const LintConfig &config, const ReducerTable &table,
         CollectiveSignatures &signatures, FlowListener &listener)
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

  void analyzeRoot(const FunctionDecl *function) {
    Frame frame;
    frame.function = function;
    runFrame(frame);
  }

  // Fields and variables outside any function that some function of the file fills with the
  // rank (`MPI_Comm_rank(comm_, &rank_)` in a constructor, `g_rank = pg.getRank()` in a setup
  // function). A method walked on its own, or a function that reads the global, does not see
  // that write and would take a condition on them for rank-uniform.
  void learnRankStorage(llvm::ArrayRef<const FunctionDecl *> functions) {
    for (const FunctionDecl *fn : functions) {
      findRankWrites(fn->getBody());
      if (const auto *ctor = dyn_cast<CXXConstructorDecl>(fn))
        for (const CXXCtorInitializer *init : ctor->inits())
          if (const FieldDecl *field = init->getMember(); field && init->getInit())
            if (const CallExpr *query = rankQuery(init->getInit()))
              rankStorage_.try_emplace(field->getCanonicalDecl(), Origin{query, field});
    }
  }

  bool analyzed(const FunctionDecl *function) const {
    return walked_.contains(function->getCanonicalDecl());
  }

  void markAnalyzed(const FunctionDecl *function) { walked_.insert(function->getCanonicalDecl()); }

  void recoverFromFailure() {
    frame_ = nullptr;
    loopMemos_.clear();
    evaluatingGlobals_.clear();
  }

  bool analyzedOrInstantiated(const FunctionDecl *pattern) const {
    return analyzed(pattern) || walkedPatterns_.contains(pattern->getCanonicalDecl());
  }

  std::vector<const CXXMethodDecl *> unwalkedLambdas() const {
    std::vector<const CXXMethodDecl *> out;
    for (const CXXMethodDecl *op : lambdas_)
      if (!analyzed(op))
        out.push_back(op);
    return out;
  }

private:
  // ---- frames -------------------------------------------------------------------------------

  void runFrame(Frame &frame) {
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

  bool emitting() const { return frame_->silent == 0; }

  bool onCallStack(const FunctionDecl *function) const {
    for (const Frame *f = frame_; f; f = f->caller)
      if (f->function->getCanonicalDecl() == function->getCanonicalDecl())
        return true;
    return false;
  }

  bool canInline(const FunctionDecl *definition) const {
    return definition && definition->getBody() && frame_->depth < kMaxCallDepth &&
           evaluations_ < kEvaluationBudget && !sm_.isInSystemHeader(definition->getLocation()) &&
           !definition->isDependentContext() && !onCallStack(definition);
  }

  // Walks `definition` for a call from the current frame with the given argument values.
  Value inlineCall(const FunctionDecl *definition, const Expr *call,
                   llvm::ArrayRef<const Expr *> argExprs, std::vector<Value> args,
                   Frame *lexicalParent = nullptr) {
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
      bool writable =
          (type->isPointerType() && !type->getPointeeType().isConstQualified()) ||
          (type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified()) ||
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
  void leaveWithCallee(const Frame &callee, const Expr *call) {
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
  Value forCaller(Value v, const Frame &callee) {
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
      v.pendingSum = std::move(moved);
    }
    return v;
  }

  // `e` itself, stripped, when it is a call of a rank query that returns the rank.
  const CallExpr *rankQuery(const Expr *e) const {
    const auto *call = dyn_cast_or_null<CallExpr>(strip(e));
    const FunctionDecl *callee = call ? calleeOf(call) : nullptr;
    const QuerySpec *query = callee ? table_.lookup(callee).query : nullptr;
    return query && query->what == QuerySpec::What::Rank && query->out < 0 ? call : nullptr;
  }

  // The field, or the variable outside functions, that the lvalue `e` names; null otherwise.
  static const NamedDecl *lastingStorage(const Expr *e) {
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

  void findRankWrites(const Stmt *s) {
    if (!s)
      return;
    for (const Stmt *child : s->children())
      findRankWrites(child);
    const NamedDecl *storage = nullptr;
    const Expr *at = nullptr;
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
      if (query && query->what == QuerySpec::What::Rank && query->out >= 0 &&
          query->out < static_cast<int>(call->getNumArgs()))
        if (const auto *address =
                dyn_cast<UnaryOperator>(call->getArg(query->out)->IgnoreParenImpCasts());
            address && address->getOpcode() == UO_AddrOf) {
          storage = lastingStorage(address->getSubExpr());
          at = call;
        }
    } else if (const auto *assign = dyn_cast<BinaryOperator>(s);
               assign && assign->getOpcode() == BO_Assign) {
      at = rankQuery(assign->getRHS());
      storage = at ? lastingStorage(assign->getLHS()) : nullptr;
    }
    if (storage)
      rankStorage_.try_emplace(storage, Origin{at, storage});
  }

  // Variables that a function sends as the integer data of a reduction are local counts.
  void collectCountEvidence(const Stmt *s) {
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

  // ---- names and defaults -------------------------------------------------------------------

  static bool matchesAny(const std::vector<std::regex> &patterns, llvm::StringRef name) {
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
  const Value &namedFacts(const NamedDecl *decl, QualType type) {
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
  bool namesLocalData(const Expr *e) {
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
  Value withNamedFacts(Value v, const NamedDecl *decl, QualType type) {
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

  static std::optional<ReduceOpKind> mpiOpNamed(llvm::StringRef name) {
    // Open MPI's predefined op objects and the MPI_* macros that name them.
    if (name.consume_front("ompi_mpi_op_") || name.consume_front("MPI_"))
      return name.equals_insensitive("sum") ? ReduceOpKind::Sum : ReduceOpKind::Other;
    return std::nullopt;
  }

  Value defaultFor(LocKey key) {
    if (key.second) {
      const auto *field = static_cast<const FieldDecl *>(key.second);
      Value whole = key.first == kThis ? Value{} : readLocation({key.first, nullptr});
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
  Value withRankStorage(Value v, const Decl *storage) const {
    if (splitStorage_.contains(storage->getCanonicalDecl()))
      v.subCommunicator = true;
    auto it = rankStorage_.find(storage->getCanonicalDecl());
    // What the flow shows replaces what a name suggests (a field named `local_rank`).
    if (it == rankStorage_.end() || (v.rankDerived && !v.guessed))
      return v;
    v.guessed = false;
    v.uniform = false;
    v.rankDerived = true;
    v.exactRank = true;
    v.rankSource = it->second;
    return v;
  }

  // ---- locations ----------------------------------------------------------------------------

  Frame *ownerFrame(LocKey key) {
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

  Value readLocation(LocKey key) {
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

  const Locations *aliasesOf(const void *base) {
    Frame *owner = ownerFrame({base, nullptr});
    auto it = owner->state.aliases.find(base);
    return it == owner->state.aliases.end() || it->second.empty() ? nullptr : &it->second;
  }

  void setAliases(const void *base, Locations targets) {
    Frame *owner = ownerFrame({base, nullptr});
    llvm::erase_if(targets, [&](const LocKey &k) { return k.first == base; });
    owner->state.aliases[base] = std::move(targets);
  }

  // A record variable read as a whole: its fields joined (an options struct's op is the op of
  // whichever field holds one).
  Value readWhole(const VarDecl *var) {
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
  Value readKey(LocKey k) {
    if (k.second || k.first == kThis || !k.first)
      return readLocation(k);
    if (const auto *var = dyn_cast<VarDecl>(static_cast<const Decl *>(k.first)))
      return readWhole(var);
    return readLocation(k);
  }

  // A value assigned under a condition that differs across ranks differs too. An early exit is
  // different: the ranks that go on all compute the same thing, so it decides only reachability.
  void applyControlTaint(Value &v) {
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

  void write(LocKey key, Value v, bool taint = true) {
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

  void writeAll(const Locations &targets, const Value &v, bool taint = true) {
    for (const LocKey &k : targets)
      write(k, v, taint);
  }

  void appendAliases(Locations &out, const void *base, const FieldDecl *field) {
    if (const Locations *targets = aliasesOf(base))
      for (const LocKey &t : *targets)
        out.push_back({t.first, field ? static_cast<const void *>(field) : t.second});
  }

  // The locations an lvalue expression names.
  Locations lvalueLocations(const Expr *e) {
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
  Locations pointeeLocations(const Expr *e) {
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

  // ---- states -------------------------------------------------------------------------------

  Value lookupIn(const State &s, LocKey key) {
    auto it = s.values.find(key);
    return it != s.values.end() ? it->second : defaultFor(key);
  }

  State joinStates(const State &a, const State &b) {
    if (!a.reachable)
      return b;
    if (!b.reachable)
      return a;
    State r;
    for (const auto &[key, value] : a.values)
      r.values[key] = b.values.count(key) ? join(value, b.values.find(key)->second)
                                          : join(value, lookupIn(b, key));
    for (const auto &[key, value] : b.values)
      if (!a.values.count(key))
        r.values[key] = join(lookupIn(a, key), value);
    r.aliases = a.aliases;
    for (const auto &[base, targets] : b.aliases) {
      Locations &merged = r.aliases[base];
      for (const LocKey &t : targets)
        if (llvm::find(merged, t) == merged.end())
          merged.push_back(t);
    }
    return r;
  }

  static bool sameState(const State &a, const State &b) {
    if (a.reachable != b.reachable || a.values.size() != b.values.size())
      return false;
    for (const auto &[key, value] : a.values) {
      auto it = b.values.find(key);
      if (it == b.values.end() || !value.sameFacts(it->second))
        return false;
    }
    return true;
  }

  // ---- guards -------------------------------------------------------------------------------

  static std::optional<double> literalValue(const Expr *e) {
    e = e->IgnoreParenImpCasts();
    if (const auto *i = dyn_cast<IntegerLiteral>(e))
      return static_cast<double>(i->getValue().getSExtValue());
    if (const auto *f = dyn_cast<FloatingLiteral>(e))
      return f->getValueAsApproximateDouble();
    if (const auto *u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_Minus)
      if (auto v = literalValue(u->getSubExpr()))
        return -*v;
    return std::nullopt;
  }

  static BinaryOperatorKind negate(BinaryOperatorKind op) {
    switch (op) {
    case BO_LT:
      return BO_GE;
    case BO_GE:
      return BO_LT;
    case BO_GT:
      return BO_LE;
    case BO_LE:
      return BO_GT;
    case BO_EQ:
      return BO_NE;
    case BO_NE:
      return BO_EQ;
    default:
      return op;
    }
  }

  static BinaryOperatorKind mirror(BinaryOperatorKind op) {
    switch (op) {
    case BO_LT:
      return BO_GT;
    case BO_GT:
      return BO_LT;
    case BO_LE:
      return BO_GE;
    case BO_GE:
      return BO_LE;
    default:
      return op;
    }
  }

  // Whether `x OP c` being true rules out x == 0.
  static bool impliesNonZero(BinaryOperatorKind op, double c) {
    switch (op) {
    case BO_GT:
      return c >= 0;
    case BO_GE:
      return c > 0;
    case BO_NE:
      return c == 0;
    case BO_EQ:
      return c != 0;
    case BO_LT:
      return c <= 0;
    case BO_LE:
      return c < 0;
    default:
      return false;
    }
  }

  void markNonZero(State &s, const Expr *e) {
    for (const LocKey &key : lvalueLocations(e)) {
      Value v = lookupIn(s, key);
      v.nonZero = true;
      s.values[key] = v;
    }
  }

  // The state in which `cond` evaluated to `truth`: `N > 0`, `N != 0`, `!N`, `N` and their
  // conjunctions guard N against zero.
  State refine(const State &in, const Expr *cond, bool truth) {
    State s = in;
    if (!cond)
      return s;
    refineInto(s, cond, truth);
    return s;
  }

  void refineInto(State &s, const Expr *cond, bool truth, int depth = 0) {
    // `static_cast<bool>(N > 0)` (what assert expands to) tests the same thing.
    cond = cond->IgnoreParenCasts();
    if (const auto *unary = dyn_cast<UnaryOperator>(cond); unary && unary->getOpcode() == UO_LNot)
      return refineInto(s, unary->getSubExpr(), !truth, depth);
    if (const auto *binary = dyn_cast<BinaryOperator>(cond)) {
      BinaryOperatorKind op = binary->getOpcode();
      if (op == BO_LAnd && truth) {
        refineInto(s, binary->getLHS(), true, depth);
        refineInto(s, binary->getRHS(), true, depth);
        return;
      }
      if (op == BO_LOr && !truth) {
        refineInto(s, binary->getLHS(), false, depth);
        refineInto(s, binary->getRHS(), false, depth);
        return;
      }
      if (!binary->isComparisonOp())
        return;
      if (!truth)
        op = negate(op);
      if (auto c = literalValue(binary->getRHS()); c && impliesNonZero(op, *c))
        markNonZero(s, binary->getLHS());
      else if (auto c = literalValue(binary->getLHS()); c && impliesNonZero(mirror(op), *c))
        markNonZero(s, binary->getRHS());
      return;
    }
    // `const bool empty = N == 0; if (empty) return ...;`: a named test is the test it names, as
    // long as nothing it read has been written since.
    if (const auto *ref = dyn_cast<DeclRefExpr>(cond))
      if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()); var && depth < 4)
        if (auto it = namedTests_.find(var); it != namedTests_.end() && stillHolds(it->second))
          refineInto(s, var->getInit(), truth, depth + 1);
    if (truth && (isa<DeclRefExpr>(cond) || isa<MemberExpr>(cond)))
      markNonZero(s, cond);
  }

  // ---- control ------------------------------------------------------------------------------

  unsigned pushControl(ControlDependence dep, bool earlyExit = false,
                       const LoopContext *region = nullptr) {
    dep.id = ++nextControlId_;
    frame_->control.push_back({std::move(dep), earlyExit, region});
    return frame_->control.back().dep.id;
  }

  void popControl(unsigned id) {
    llvm::erase_if(frame_->control, [&](const ActiveControl &c) { return c.dep.id == id; });
  }

  bool anyNonUniformControl() const {
    return llvm::any_of(frame_->control,
                        [](const ActiveControl &c) { return !c.dep.value.uniform; });
  }

  static bool tainted(const Value &v) { return !v.uniform && (v.rankDerived || v.countDerived); }

  LoopContext *innermostLoop(bool allowSwitch) {
    for (auto it = frame_->loops.rbegin(); it != frame_->loops.rend(); ++it)
      if (allowSwitch || !(*it)->isSwitch)
        return *it;
    return nullptr;
  }

  // The collectives the rest of `region` (a loop body, or the function when null) would issue.
  PathSet remainderSignature(const LoopContext *region) {
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

  const LoopContext *regionOf(const Stmt *jump) {
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
  size_t loopsLeftBy(const Stmt *jump) const {
    return isa<CXXThrowExpr>(jump) && !frame_->tries.empty() ? frame_->tries.back().second : 0;
  }

  // ---- membership guards --------------------------------------------------------------------

  // The communicator `cond` tests for membership: `comm == MPI_COMM_NULL`, `comm != MPI_COMM_NULL`
  // (what MPI_Comm_split with MPI_UNDEFINED, MPI_Comm_create and friends give the ranks left out),
  // or a communicator handle compared with a null pointer.
  const NamedDecl *membershipTested(const Expr *cond) {
    const auto *binary =
        dyn_cast_or_null<BinaryOperator>(cond ? cond->IgnoreParenCasts() : nullptr);
    if (!binary || (binary->getOpcode() != BO_EQ && binary->getOpcode() != BO_NE))
      return nullptr;
    auto isNull = [&](const Expr *e) {
      if (auto macro = macroNameAt(e->getBeginLoc()); macro && *macro == "MPI_COMM_NULL")
        return true;
      return !e->isValueDependent() &&
             e->isNullPointerConstant(context_, Expr::NPC_ValueDependentIsNotNull) !=
                 Expr::NPCK_NotNull;
    };
    auto isCommunicator = [&](const Expr *e) {
      if (!hasType(e))
        return false;
      std::string type = e->IgnoreParenImpCasts()->getType().getAsString();
      return type.find("Comm") != std::string::npos;
    };
    const Expr *lhs = binary->getLHS(), *rhs = binary->getRHS();
    const Expr *comm = isNull(rhs) ? lhs : (isNull(lhs) ? rhs : nullptr);
    if (!comm || !isCommunicator(comm))
      return nullptr;
    const NamedDecl *decl = coreDecl(comm);
    return decl ? cast<NamedDecl>(decl->getCanonicalDecl()) : nullptr;
  }

  // ---- process ends -------------------------------------------------------------------------

  // Whether a `throw` here is caught by a try block of this function or of a caller being walked.
  // One that nothing catches ends the process (std::terminate).
  bool throwCaught() const {
    for (const Frame *f = frame_; f; f = f->caller)
      if (!f->tries.empty())
        return true;
    return false;
  }

  // Whether `s` contains a jump that leaves it otherwise than by ending the process.
  static bool mayLeave(const Stmt *s) {
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
  bool endsProcess(const Stmt *s, unsigned depth = 0) {
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

  bool functionEndsProcess(const FunctionDecl *definition, unsigned depth) {
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
  const Stmt *findJump(const Stmt *s) {
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

  // ---- statements ---------------------------------------------------------------------------

  void exec(const Stmt *s) {
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

  void execCompound(const CompoundStmt *block) {
    LoopContext *switchContext = !frame_->loops.empty() && frame_->loops.back()->isSwitch &&
                                         frame_->loops.back()->body == block
                                     ? frame_->loops.back()
                                     : nullptr;
    unsigned index = 0;
    for (const Stmt *child : block->body()) {
      ++index;
      if (switchContext && isa<SwitchCase>(child))
        frame_->state = frame_->state.reachable ? joinStates(switchContext->entry, frame_->state)
                                                : switchContext->entry;
      if (!frame_->state.reachable)
        break;
      frame_->rest.push_back({block, index, frame_->loops.size()});
      exec(child);
      frame_->rest.pop_back();
    }
  }

  // Fields of a struct initialised by an init list or by their default member initialisers.
  bool initFields(const VarDecl *var, const Expr *init) {
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
  static void variablesRead(const Stmt *e, std::vector<const VarDecl *> &out) {
    if (!e)
      return;
    if (const auto *ref = dyn_cast<DeclRefExpr>(e))
      if (const auto *var = dyn_cast<VarDecl>(ref->getDecl()))
        out.push_back(var);
    for (const Stmt *child : e->children())
      variablesRead(child, out);
  }

  struct NamedTest {
    std::vector<const VarDecl *> read;
    uint64_t at = 0; // writeClock_ when the test was made
  };

  // A local `const bool` initialized with a test: the variables the test read, and when.
  void rememberNamedTest(const VarDecl *var) {
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
  bool stillHolds(const NamedTest &test) const {
    return llvm::all_of(test.read, [&](const VarDecl *v) {
      auto it = lastWrite_.find(keyOf(v));
      return it == lastWrite_.end() || it->second <= test.at;
    });
  }

  void execVarDecl(const VarDecl *var) {
    rememberNamedTest(var);
    const Expr *init = var->getInit();
    if (var->isStaticLocal() && init && var->getType().isConstQualified())
      return; // read through defaultFor
    if (initFields(var, init))
      return;
    Value v = init ? eval(init) : Value{};
    v = withNamedFacts(v, var, var->getType());
    v.fields = fieldsFor(fieldwiseRecord(var->getType()), std::move(v.fields));
    QualType type = var->getType();
    if (init && isHandleType(type)) {
      Locations targets = type->isReferenceType() ? lvalueLocations(init) : pointeeLocations(init);
      setAliases(keyOf(var).first, std::move(targets));
    }
    write(keyOf(var), v);
  }

  void execIf(const IfStmt *branch) {
    exec(branch->getInit());
    if (const DeclStmt *decl = branch->getConditionVariableDeclStmt())
      exec(decl);
    const Expr *cond = branch->getCond();
    Value c = eval(cond);
    if (!frame_->state.reachable)
      return;
    const Stmt *thenStmt = branch->getThen(), *elseStmt = branch->getElse();

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

    // An exit taken on some ranks only: what follows it is not reached by them.
    if (jump && !c.uniform && frame_->state.reachable) {
      ControlDependence exit = dep;
      exit.kind = ControlDependence::Kind::EarlyExit;
      exit.exit = jump;
      exit.negated = jump == elseJump; // the ranks leaving are those where the condition fails
      const LoopContext *region = regionOf(jump);
      if (isa<BreakStmt>(jump) && region && region->isSwitch)
        return;
      bool known = llvm::any_of(frame_->control, [&](const ActiveControl &a) {
        return a.earlyExit && a.dep.exit == jump;
      });
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

  void collectInduction(const Stmt *s, LoopContext &loop, bool onlyModified) {
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

  void endRegion(const LoopContext *loop) {
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
  void settle(LoopContext &loop, const Stmt *loopStmt, const State &entry,
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
  void runLoop(const Stmt *loopStmt, const DeclStmt *condVar, const Expr *cond, const Expr *inc,
               const Stmt *body, bool condFirst) {
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

  void execRangeFor(const CXXForRangeStmt *loopStmt) {
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

  void execSwitch(const SwitchStmt *sw) {
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

  // ---- expressions --------------------------------------------------------------------------

  // The outermost macro whose expansion `loc` comes from, not counting the macros it was passed
  // to as an argument: MPI_LONG in `MPICHECK(MPI_Allreduce(..., MPI_LONG, ...))`, not MPICHECK.
  std::optional<llvm::StringRef> macroNameAt(SourceLocation loc) {
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

  bool isInPlace(const Expr *e) {
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

  static bool integralDatatypeName(llvm::StringRef name) {
    name.consume_front("MPI_");
    name.consume_front("ompi_mpi_");
    name.consume_front("nccl");
    std::string lower = name.lower();
    llvm::StringRef l(lower);
    return l.starts_with("int") || l.starts_with("uint") || l.starts_with("long") ||
           l.starts_with("unsigned") || l == "short" || l == "c_bool" || l.starts_with("int");
  }

  bool isIntegralData(const CallExpr *call, const ReducerSpec &spec, const Expr *data) {
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

  Value eval(const Expr *e) {
    if (!e)
      return Value{};
    ++evaluations_;
    Value v = evalInner(e);
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

  Value evalInner(const Expr *e) {
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

  Value evalDeclRef(const DeclRefExpr *ref) {
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
  Locations bindingLocations(const BindingDecl *binding) {
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
  Value evalBinding(const BindingDecl *binding) {
    Value v;
    if (Locations locations = bindingLocations(binding); !locations.empty())
      v = readLocations(locations, nullptr);
    else if (const Expr *e = binding->getBinding(); e && !binding->getHoldingVar())
      v = eval(e); // e[I] of an array
    v.fields.reset();
    return withNamedFacts(v, binding, binding->getType());
  }

  static ReduceOpKind opForEnumerator(const EnumConstantDecl *enumerator) {
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

  Value evalMember(const MemberExpr *member) {
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
  static const FieldDecl *pairElement(const FunctionDecl *get, const Expr *object) {
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
  Value readField(const Expr *object, const Value &whole, const FieldDecl *field) {
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
  Value fieldOfValue(Value whole, const FieldDecl *field) {
    if (const Value *known = whole.fields ? whole.fields->find(field) : nullptr)
      return *known;
    whole.fields.reset();
    whole.op = ReduceOpKind::None;
    return withNamedFacts(whole, field, field->getType());
  }

  Value evalConstruct(const CXXConstructExpr *construct) {
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
    if (args.size() == 1 &&
        (!isStdContainer(record) || listInit || ctor->isCopyOrMoveConstructor()))
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
  ControlDependence operandBranch(const Expr *cond, const Value &c, const Expr *operand,
                                  const PathSet &other, bool negated) {
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

  Value evalConditional(const Expr *cond, const Expr *trueExpr, const Expr *falseExpr) {
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
    } else if (!c.uniform && r.uniform &&
               !(t.constant && f.constant && *t.constant == *f.constant)) {
      r.uniform = false;
    }
    return r;
  }

  Value evalUnary(const UnaryOperator *unary) {
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

  Value evalBinary(const BinaryOperator *binary) {
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
  static std::optional<bool> rankTautology(BinaryOperatorKind op, const Value &a, const Value &b) {
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

  Value compare(BinaryOperatorKind op, const Expr *lhs, const Value &a, const Expr *rhs,
                const Value &b) {
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
  bool implicitCount(const Expr *e, const Value &v) {
    if (!v.powers.isZero() || v.uniform || v.rankDerived || v.exactSize || v.mask ||
        !integralUnderlying(e))
      return false;
    const NamedDecl *decl = coreDecl(e);
    if (!decl)
      return true;
    for (const LoopContext *loop : frame_->loops)
      if (loop->induction.contains(decl->getCanonicalDecl()))
        return false;
    return !(decl->getIdentifier() && matchesAny(nonCountNames_, decl->getName()));
  }

  static bool realContext(const Expr *whole) {
    if (!hasType(whole))
      return false;
    QualType t = whole->getType().getNonReferenceType();
    return t->isRealFloatingType() || t->isRecordType();
  }

  Value arith(BinaryOperatorKind op, const Expr *lhs, const Value &a, const Expr *rhs,
              const Value &b, const Expr *whole) {
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

  Value assign(const Expr *lhs, const Expr *rhs, const Expr *whole) {
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
      v = withNamedFacts(v, decl, lhs->getType());
    writeAll(targets, v);
    return v;
  }

  Value readLocations(const Locations &targets, const Expr *fallback) {
    if (targets.empty())
      return eval(fallback);
    std::optional<Value> r;
    for (const LocKey &k : targets) {
      Value v = readKey(k);
      r = r ? join(*r, v) : v;
    }
    return *r;
  }

  // A count: an integer stepped under a condition that differs across ranks (`if (mask[i]) ++n`).
  // The count is rank-local (a condition on it diverges) when its name says so or when what
  // decides the stepping already depends on the rank or on local data.
  void markCounted(Value &v, const Expr *target, const Expr *step, const Expr *amount) {
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
    bool byFlow = llvm::any_of(frame_->control, [](const ActiveControl &c) {
      return tainted(c.dep.value) && !c.dep.value.guessed;
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

  Value increment(const Expr *target, BinaryOperatorKind op, const Expr *amount,
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

  Value compoundAssign(BinaryOperatorKind op, const Expr *lhs, const Expr *rhs, const Expr *whole) {
    if (op == BO_Add || op == BO_Sub)
      return increment(lhs, op, rhs, whole);
    Locations targets = lvalueLocations(lhs);
    Value current = readLocations(targets, lhs);
    Value amount = eval(rhs);
    Value r = arith(op, lhs, current, rhs, amount, whole);
    writeAll(targets, r);
    return r;
  }

  // ---- calls --------------------------------------------------------------------------------

  std::vector<Value> evalArgs(llvm::ArrayRef<const Expr *> args) {
    std::vector<Value> values;
    values.reserve(args.size());
    for (const Expr *arg : args)
      values.push_back(eval(arg));
    return values;
  }

  static llvm::SmallVector<const Expr *, 8> argsOf(const CallExpr *call, unsigned skip = 0) {
    llvm::SmallVector<const Expr *, 8> out;
    for (unsigned i = skip; i < call->getNumArgs(); ++i)
      out.push_back(call->getArg(i));
    return out;
  }

  Value evalCall(const CallExpr *call) {
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

  Value callLambda(const CXXMethodDecl *op, const Expr *call, llvm::ArrayRef<const Expr *> args,
                   std::vector<Value> values) {
    const FunctionDecl *definition = nullptr;
    if (op->hasBody(definition) && canInline(definition))
      return callDefinition(definition, "the lambda", call, args, std::move(values), frame_);
    return unknownCall(op, args, values);
  }

  // A function of this translation unit: a collective itself if it issues one, then walked.
  Value callDefinition(const FunctionDecl *definition, std::string name, const Expr *call,
                       llvm::ArrayRef<const Expr *> args, std::vector<Value> values,
                       Frame *lexicalParent = nullptr, bool onSubCommunicator = false) {
    if (signatures_.ofFunction(definition).issuesCollectives())
      emitCollective(call, std::move(name), onSubCommunicator);
    return inlineCall(definition, call, args, std::move(values), lexicalParent);
  }

  // A call of `callee` with `args` (excluding the object of a method call, whose value is
  // `object` when there is one).
  Value callFunction(const FunctionDecl *callee, const CallExpr *call,
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
    const FunctionDecl *definition = nullptr;
    if (callee->hasBody(definition) && canInline(definition))
      return callDefinition(definition, CollectiveSignatures::displayName(callee), call, args,
                            std::move(values));
    return unknownCall(callee, args, values);
  }

  // Standard functions whose effect on counts and guards matters.
  std::optional<Value> knownFunction(const FunctionDecl *callee, const CallExpr *call,
                                     llvm::ArrayRef<const Expr *> args,
                                     const std::vector<Value> &values) {
    const IdentifierInfo *id = callee->getIdentifier();
    if (!id || values.empty())
      return std::nullopt;
    llvm::StringRef name = id->getName();
    bool library = isStdDecl(callee) || sm_.isInSystemHeader(callee->getLocation());
    if (!library)
      return std::nullopt;
    if (name == "max" || name == "fmax" || name == "clamp" || name == "fmaxf") {
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
                  (values.size() > 1 && values[1].nonZero && name != "clamp");
      return r;
    }
    if (name == "min" || name == "fmin" || name == "abs" || name == "fabs" || name == "move" ||
        name == "forward" || name == "as_const" || name == "atoi" || name == "atol" ||
        name == "stoi" || name == "stol" || name == "stoll" || name == "strtol" ||
        name == "accumulate" || name == "reduce") {
      Value r = values[0];
      for (size_t i = 1; i < values.size(); ++i)
        if (name != "accumulate" && name != "reduce")
          r = join(r, values[i]);
      if (name == "min")
        r.nonZero = values[0].nonZero && (values.size() < 2 || values[1].nonZero);
      return r;
    }
    if (name == "make_pair" && values.size() == 2) {
      Value r = join(values[0], values[1]);
      r.fields = fieldsOf(fieldwiseRecord(call->getType()), values);
      return r;
    }
    if (name == "get" && values.size() == 1)
      if (const FieldDecl *field = pairElement(callee, args[0]))
        return readField(args[0], values[0], field);
    if (name == "count" || name == "count_if" || name == "distance") {
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
    if (name == "getenv" || name == "secure_getenv") {
      const auto *literal = dyn_cast<StringLiteral>(args[0]->IgnoreParenImpCasts());
      if (!literal)
        return std::nullopt;
      llvm::StringRef var = literal->getString();
      Value r;
      if (var.ends_with("RANK") || var == "SLURM_PROCID") {
        r.rankDerived = true;
        r.exactRank = true;
        r.rankSource = {call, nullptr};
      } else if (var.ends_with("WORLD_SIZE") || var == "SLURM_NTASKS" || var == "PMI_SIZE") {
        r.uniform = true;
        r.exactSize = true;
        r.nonZero = true;
        r.powers.commSize = 1;
      }
      return r;
    }
    return std::nullopt;
  }

  // A function the walk cannot see into: uniform if its arguments are, tainted as they are.
  Value unknownCall(const FunctionDecl *callee, llvm::ArrayRef<const Expr *> args,
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
    bool runtime =
        callee && callee->getIdentifier() &&
        (callee->getName().starts_with("MPI_") || callee->getName().starts_with("nccl") ||
         callee->getName().starts_with("cuda") || isStdDecl(callee) ||
         sm_.isInSystemHeader(callee->getLocation()));
    if (callee && !runtime)
      for (unsigned i = 0; i < args.size() && i < callee->getNumParams(); ++i) {
        QualType type = callee->getParamDecl(i)->getType();
        bool out =
            (type->isPointerType() && !type->getPointeeType().isConstQualified()) ||
            (type->isLValueReferenceType() && !type.getNonReferenceType().isConstQualified());
        if (out) {
          Value unknown;
          unknown.rankDerived = r.rankDerived;
          for (const LocKey &k : pointeeOrLvalue(args[i], type))
            write(k, hasType(args[i]) ? withNamedFacts(unknown, keyDecl(k), args[i]->getType())
                                      : unknown);
        }
      }
    return r;
  }

  const NamedDecl *keyDecl(LocKey k) {
    if (k.second)
      return static_cast<const FieldDecl *>(k.second);
    if (k.first == kThis || !k.first)
      return nullptr;
    return dyn_cast<NamedDecl>(static_cast<const Decl *>(k.first));
  }

  Locations pointeeOrLvalue(const Expr *arg, QualType paramType) {
    return paramType->isReferenceType() ? lvalueLocations(arg) : pointeeLocations(arg);
  }

  Value queryCall(const QuerySpec &spec, const CallExpr *call, llvm::ArrayRef<const Expr *> args) {
    Value q;
    if (spec.what == QuerySpec::What::Rank) {
      q.rankDerived = true;
      q.exactRank = true;
    } else {
      q.uniform = true;
      q.exactSize = true;
      q.nonZero = true;
      q.powers.commSize = 1;
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

  Value preMulSumCall(const PreMulSumFactorySpec &spec, const CallExpr *call,
                      llvm::ArrayRef<const Expr *> args, const std::vector<Value> &values) {
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

  std::vector<ControlDependence> activeControls() const {
    std::vector<ControlDependence> out;
    for (const ActiveControl &c : frame_->control)
      if (!c.dep.value.uniform)
        out.push_back(c.dep);
    return out;
  }

  void emitCollective(const Expr *call, std::string name, bool onSubCommunicator) {
    if (!emitting())
      return;
    CollectiveEvent event;
    event.call = call;
    event.name = std::move(name);
    event.onSubCommunicator = onSubCommunicator;
    event.controls = activeControls();
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
  const Expr *reportSite(const Expr *at, uint32_t mask, std::vector<WrapperStep> &steps,
                         unsigned &depth) {
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

  void sumThenDivide(const PendingSum &pending, const Expr *division) {
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
    event.input.powers = pending.contribution;
    event.input.meanFormed = pending.meanFormed;
    event.input.normalized = pending.normalized;
    event.input.countReduced = pending.countReduced;
    event.effective = pending.contribution + CountPowers{0, 0, -1};
    listener_.reduction(event);
  }

  std::string opName(const Expr *opArg, ReduceOpKind kind) {
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

  Value reducerCall(const ReducerSpec &spec, const FunctionDecl *callee, const CallExpr *call,
                    llvm::ArrayRef<const Expr *> args, const Value *object) {
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
    emitCollective(call, name, subCommunicator);

    const Expr *sendExpr = arg(spec.send), *recvExpr = arg(spec.recv);
    bool inPlace = !recvExpr || isInPlace(sendExpr);
    const Expr *dataExpr = inPlace && recvExpr ? recvExpr : sendExpr;
    const Expr *outExpr = recvExpr ? recvExpr : sendExpr;
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
    bool summing = opKind == ReduceOpKind::Sum ||
                   (opKind == ReduceOpKind::PreMulSum && opScalar.commSize >= 0);
    // Each rank's share divided by P before a SUM (DDP's default hook): the sum is the average
    // of the undivided values, as if the division came after it.
    bool dividedFirst =
        opKind == ReduceOpKind::Sum && !input.uniform && input.sizeDivided &&
        contribution.commSize < 0 &&
        (spec.kind == CollectiveKind::AllReduce || spec.kind == CollectiveKind::Reduce);
    std::string op = spec.op >= 0 ? opName(opNamedAt ? opNamedAt : opArgument, opKind)
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
      unsigned depth = 0;
      event.reportAt = reportSite(call, input.paramMask, event.steps, depth);
      event.opArgument = event.steps.empty() ? enumeratorSpelledIn(opNamedAt, call) : nullptr;
      event.input = input;
      event.effective =
          opKind == ReduceOpKind::Avg ? contribution + CountPowers{0, 0, -1} : contribution;
      listener_.reduction(event);
    }

    bool countReduction = summing && !input.uniform && spec.kind != CollectiveKind::ReduceScatter &&
                          (input.powers.local >= 1 ||
                           (input.powers.isZero() && isIntegralData(call, spec, dataExpr)));
    if (input.uniform) {
      out.powers = input.powers;
      if (summing)
        out.powers.commSize = static_cast<int8_t>(out.powers.commSize + 1);
      out.nonZero = summing && input.nonZero;
    } else if (countReduction) {
      out.powers = {
          0, static_cast<int8_t>(input.powers.reduced + std::max<int>(1, input.powers.local)),
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
      pending->reportAt = reportSite(call, input.paramMask, pending->steps, pending->reportDepth);
      out.pendingSum = std::move(pending);
    }
    if (outExpr)
      writeAll(pointeeLocations(outExpr), out, false);
    return Value::uniformConstant(0);
  }

  // The op enumerator when it is spelled inside the reducer call (`ncclAvg`,
  // `{c10d::ReduceOp::AVG}`), where a fix-it can rewrite it.
  const Expr *enumeratorSpelledIn(const Expr *named, const Expr *call) {
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

  void commCreation(const FunctionDecl *callee, llvm::ArrayRef<const Expr *> args,
                    const std::vector<Value> &values) {
    llvm::StringRef name = callee->getName();
    if ((name == "MPI_Comm_split" || name == "ncclCommSplit") && args.size() > 3) {
      Value comm = Value::uniformConstant(0);
      comm.constant.reset();
      comm.subCommunicator = !values[1].uniform;
      writeAll(pointeeLocations(args[3]), comm, false);
    } else if (name == "MPI_Comm_create" && args.size() > 2) {
      Value comm;
      comm.subCommunicator = true;
      writeAll(pointeeLocations(args[2]), comm, false);
    } else if (name == "MPI_Comm_dup" && args.size() > 1) {
      writeAll(pointeeLocations(args[1]), values[0], false);
    }
  }

  bool namesModelState(const NamedDecl *decl) {
    return decl && decl->getIdentifier() && matchesAny(modelNames_, decl->getName());
  }

  // The methods that count a container's or a tensor's elements.
  static bool isElementCount(DeclarationName name) {
    const IdentifierInfo *id = name.getAsIdentifierInfo();
    return id && llvm::StringSwitch<bool>(id->getName())
                     .Cases("size", "numel", "count", "nnz", "numel_", true)
                     .Default(false);
  }

  // The number of elements of a container or tensor, or of the true entries of a mask: a count,
  // and a rank-local one when the container holds this rank's data.
  Value elementCount(const Value &container, const Expr *containerExpr, const Expr *at) {
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

  Value evalMemberCall(const CXXMemberCallExpr *call) {
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

  Value evalOperatorCall(const CXXOperatorCallExpr *call) {
    OverloadedOperatorKind kind = call->getOperator();
    unsigned n = call->getNumArgs();
    if (kind == OO_Call) {
      Value target = n > 0 ? eval(call->getArg(0)) : Value{};
      auto args = argsOf(call, 1);
      std::vector<Value> values = evalArgs(args);
      if (target.lambda)
        return callLambda(target.lambda, call, args, std::move(values));
      if (const FunctionDecl *callee = calleeOf(call)) {
        const FunctionDecl *definition = nullptr;
        if (callee->hasBody(definition) && canInline(definition))
          return callDefinition(definition, CollectiveSignatures::displayName(callee), call, args,
                                std::move(values));
        return unknownCall(callee, args, values);
      }
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
    if (const FunctionDecl *callee = calleeOf(call)) {
      const FunctionDecl *definition = nullptr;
      if (callee->hasBody(definition) && canInline(definition))
        return callDefinition(definition, CollectiveSignatures::displayName(callee), call, args,
                              std::move(values));
      return unknownCall(callee, args, values);
    }
    return unknownCall(nullptr, args, values);
  }

  ASTContext &context_;
  const SourceManager &sm_;
  const LintConfig &config_;
  const ReducerTable &table_;
  CollectiveSignatures &signatures_;
  FlowListener &listener_;
  std::vector<std::regex> rankNames_, sizeNames_, countNames_, globalCountNames_, dataNames_,
      maskNames_, nonCountNames_, modelNames_;
  // Named tests (`const bool empty = N == 0`), and when each location was last written.
  std::map<const VarDecl *, NamedTest> namedTests_;
  std::map<LocKey, uint64_t> lastWrite_;
  uint64_t writeClock_ = 0;
  llvm::DenseMap<const NamedDecl *, Value> named_;
  llvm::DenseMap<const NamedDecl *, bool> localData_;
  llvm::DenseSet<const VarDecl *> evaluatingGlobals_;
  std::map<std::pair<const FunctionDecl *, bool>, bool> endsProcess_; // (helper, throw caught)
  // Fields and variables outside functions that a function of the file fills with the rank, and
  // where (learnRankStorage).
  llvm::DenseMap<const Decl *, Origin> rankStorage_;
  llvm::DenseSet<const Decl *> splitStorage_; // ... and that a split fills with a communicator
  llvm::DenseSet<const FunctionDecl *> walked_;
  llvm::DenseSet<const FunctionDecl *> walkedPatterns_; // templates of the instantiations walked
  llvm::SmallPtrSet<const CXXMethodDecl *, 8> lambdas_;
  Frame *frame_ = nullptr;
  unsigned nextControlId_ = 0;
  unsigned long evaluations_ = 0;
  // What the last walk of each loop of each frame being walked left behind (settle()).
  std::vector<llvm::DenseMap<const Stmt *, LoopMemo>> loopMemos_;
};

FlowAnalysis::FlowAnalysis(ASTContext &context, const LintConfig &config, const ReducerTable &table,
                           CollectiveSignatures &signatures, FlowListener &listener)
    : walker_(std::make_unique<Walker>(context, config, table, signatures, listener)) {}

FlowAnalysis::~FlowAnalysis() = default;

void FlowAnalysis::analyzeRoot(const FunctionDecl *function) { walker_->analyzeRoot(function); }

void FlowAnalysis::recoverFromFailure() { walker_->recoverFromFailure(); }

void FlowAnalysis::markAnalyzed(const FunctionDecl *function) { walker_->markAnalyzed(function); }

void FlowAnalysis::learnRankStorage(llvm::ArrayRef<const FunctionDecl *> functions) {
  walker_->learnRankStorage(functions);
}

bool FlowAnalysis::analyzed(const FunctionDecl *function) const {
  return walker_->analyzed(function);
}

bool FlowAnalysis::analyzedOrInstantiated(const FunctionDecl *pattern) const {
  return walker_->analyzedOrInstantiated(pattern);
}

std::vector<const CXXMethodDecl *> FlowAnalysis::unwalkedLambdas() const {
  return walker_->unwalkedLambdas();
}

} // namespace collcheck::lint
