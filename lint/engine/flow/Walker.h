// The flow walker behind FlowAnalysis: one class that walks a function's statements in order,
// keeps the value of every location (uniform across ranks or not, rank- or count-derived) and
// the control dependences in force, and reports collectives and divisions to the FlowListener.
// Its member functions live in one source per section, named beside each group below.
#pragma once

#include "engine/Callee.h"
#include "engine/FlowAnalysis.h"
#include "engine/Summary.h"
#include "engine/flow/Helpers.h"

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

// The walker's sources, and only they, name clang's AST unqualified.
using namespace clang;

namespace flow {

// A storage location: a variable (or parameter), optionally one field of it. For a pointer or a
// handle (a tensor, a vector of tensors) the location stands for what it points to.
using LocKey = std::pair<const void *, const void *>;
using Locations = llvm::SmallVector<LocKey, 2>;
// Inline: one tag, hence one key for `this`, in every source of the walker.
inline constexpr char kThisTag = 0;
inline const void *const kThis = &kThisTag;

inline LocKey keyOf(const ValueDecl *decl, const FieldDecl *field = nullptr) {
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

// What separate ifs compare one variable with (`if (rank == src)`, `if (rank == dest)`,
// `if (rank != src && rank != dest)`), to prove that together they split its values
// (flow/Partitions.cpp).
struct Partition {
  struct Operand {
    const Expr *expr = nullptr;      // null: the zero a bare `if (rank)` tests against
    std::optional<int64_t> constant; // its value, when a constant
    bool size = false;               // exactly the communicator size
  };
  const Expr *subject = nullptr;
  bool nonNegative = false; // the subject is exactly the rank
  llvm::SmallVector<Operand, 4> operands;
  llvm::SmallVector<const IfStmt *, 8> decided; // the ifs whose conditions are such comparisons
};
// One way the subject can compare with each operand: below (-1), equal (0) or above (1).
using Ordering = llvm::SmallVector<int8_t, 4>;

constexpr unsigned kMaxCallDepth = 8;
constexpr unsigned long kEvaluationBudget = 4'000'000;

} // namespace flow

// Private to the walker's sources, which name the walker's types and helpers unqualified.
using namespace flow;

class FlowAnalysis::Walker {
public:
  Walker(ASTContext &context, const LintConfig &config, const ReducerTable &table,
         CollectiveSignatures &signatures, FlowListener &listener);
  void analyzeRoot(const FunctionDecl *function);
  RootEffect summariseRoot(const FunctionDecl *function, bool uniformParameters);
  std::vector<LastingStorage> lastingStorage();
  void learnRankStorage(llvm::ArrayRef<const FunctionDecl *> functions);
  bool analyzed(const FunctionDecl *function) const;
  void markAnalyzed(const FunctionDecl *function);
  void recoverFromFailure();
  bool analyzedOrInstantiated(const FunctionDecl *pattern) const;
  std::vector<const CXXMethodDecl *> unwalkedLambdas() const;

private:
  // ---- frames (flow/Frames.cpp) -----------------------------------------------------------------

  void runFrame(Frame &frame);
  bool emitting() const;
  bool onCallStack(const FunctionDecl *function) const;
  bool canInline(const FunctionDecl *definition) const;
  Value inlineCall(const FunctionDecl *definition, const Expr *call,
                   llvm::ArrayRef<const Expr *> argExprs, std::vector<Value> args,
                   Frame *lexicalParent = nullptr);
  void leaveWithCallee(const Frame &callee, const Expr *call);
  Value forCaller(Value v, const Frame &callee);
  const CallExpr *returnedQuery(const Expr *e, QuerySpec::What what) const;
  static const NamedDecl *lastingStorage(const Expr *e);
  void findRankWrites(const Stmt *s);
  void collectCountEvidence(const Stmt *s);

  // ---- names and defaults (flow/Names.cpp) ------------------------------------------------------

  static bool matchesAny(const std::vector<std::regex> &patterns, llvm::StringRef name);
  const Value &namedFacts(const NamedDecl *decl, QualType type);
  bool namesLocalData(const Expr *e);
  Value withNamedFacts(Value v, const NamedDecl *decl, QualType type);
  static std::optional<ReduceOpKind> mpiOpNamed(llvm::StringRef name);
  Value defaultFor(LocKey key);
  Value withRankStorage(Value v, const Decl *storage) const;

  // ---- locations (flow/Locations.cpp) -----------------------------------------------------------

  Frame *ownerFrame(LocKey key);
  Value readLocation(LocKey key);
  const Locations *aliasesOf(const void *base);
  void setAliases(const void *base, Locations targets);
  Value readWhole(const VarDecl *var);
  Value readKey(LocKey k);
  void applyControlTaint(Value &v);
  void write(LocKey key, Value v, bool taint = true);
  void writeAll(const Locations &targets, const Value &v, bool taint = true);
  void appendAliases(Locations &out, const void *base, const FieldDecl *field);
  Locations lvalueLocations(const Expr *e);
  Locations pointeeLocations(const Expr *e);

  // ---- states (flow/Guards.cpp) -----------------------------------------------------------------

  Value lookupIn(const State &s, LocKey key);
  State joinStates(const State &a, const State &b);
  static bool sameState(const State &a, const State &b);

  // ---- guards (flow/Guards.cpp) -----------------------------------------------------------------

  static std::optional<double> literalValue(const Expr *e);
  static BinaryOperatorKind negate(BinaryOperatorKind op);
  static BinaryOperatorKind mirror(BinaryOperatorKind op);
  static bool impliesNonZero(BinaryOperatorKind op, double c);
  void markNonZero(State &s, const Expr *e);
  State refine(const State &in, const Expr *cond, bool truth);
  void refineInto(State &s, const Expr *cond, bool truth, int depth = 0);

  // ---- control (flow/Control.cpp) ---------------------------------------------------------------

  unsigned pushControl(ControlDependence dep, bool earlyExit = false,
                       const LoopContext *region = nullptr);
  void popControl(unsigned id);
  bool anyNonUniformControl() const;
  static bool tainted(const Value &v);
  LoopContext *innermostLoop(bool allowSwitch);
  PathSet remainderSignature(const LoopContext *region);
  const LoopContext *regionOf(const Stmt *jump);
  size_t loopsLeftBy(const Stmt *jump) const;

  // ---- membership guards (flow/Guards.cpp) ------------------------------------------------------

  const NamedDecl *membershipTested(const Expr *cond);

  // ---- process ends (flow/Control.cpp) ----------------------------------------------------------

  bool throwCaught() const;
  static bool mayLeave(const Stmt *s);
  bool endsProcess(const Stmt *s, unsigned depth = 0);
  bool functionEndsProcess(const FunctionDecl *definition, unsigned depth);
  const Stmt *findJump(const Stmt *s);

  // ---- ifs that split the ranks (flow/Partitions.cpp) -------------------------------------------

  unsigned provePartition(const CompoundStmt *block, unsigned first,
                          llvm::SmallVectorImpl<const IfStmt *> &proved);
  bool provePartitionOf(llvm::ArrayRef<const Stmt *> run, Partition &p);
  std::optional<int64_t> constantOperand(const Expr *operand) const;
  std::optional<unsigned> operandIndex(const Expr *operand, const Partition &p) const;
  bool comparisonsOf(const Expr *cond, Partition &p, bool addOperands) const;
  bool truthIn(const Expr *cond, const Partition &p, const Ordering &ways) const;
  void collectDecided(const Stmt *s, Partition &p) const;
  bool stableIn(llvm::ArrayRef<const Stmt *> run, const Partition &p) const;
  bool oneCommunicator(llvm::ArrayRef<const Stmt *> run) const;
  static bool possible(const Partition &p, const Ordering &ways);
  PathSet pathsIn(const Stmt *s, const Partition &p, const Ordering &ways);

  // ---- statements (flow/Statements.cpp) ---------------------------------------------------------

  void exec(const Stmt *s);
  void execCompound(const CompoundStmt *block);
  bool initFields(const VarDecl *var, const Expr *init);
  static void variablesRead(const Stmt *e, std::vector<const VarDecl *> &out);
  struct NamedTest {
    std::vector<const VarDecl *> read;
    uint64_t at = 0; // writeClock_ when the test was made
  };
  void rememberNamedTest(const VarDecl *var);
  bool stillHolds(const NamedTest &test) const;
  void execVarDecl(const VarDecl *var);
  void execIf(const IfStmt *branch);
  std::optional<bool> flagFromCaller(const Expr *cond);
  void collectInduction(const Stmt *s, LoopContext &loop, bool onlyModified);
  void endRegion(const LoopContext *loop);
  // A template defined in Statements.cpp, the only source that instantiates it.
  template <typename Pass>
  void settle(LoopContext &loop, const Stmt *loopStmt, const State &entry,
              std::optional<State> &back, Pass &&pass);
  void runLoop(const Stmt *loopStmt, const DeclStmt *condVar, const Expr *cond, const Expr *inc,
               const Stmt *body, bool condFirst);
  void execRangeFor(const CXXForRangeStmt *loopStmt);
  void execSwitch(const SwitchStmt *sw);

  // ---- expressions (flow/Expressions.cpp) -------------------------------------------------------

  std::optional<llvm::StringRef> macroNameAt(SourceLocation loc);
  bool isInPlace(const Expr *e);
  static bool integralDatatypeName(llvm::StringRef name);
  bool isIntegralData(const CallExpr *call, const ReducerSpec &spec, const Expr *data);
  Value eval(const Expr *e);
  Value evalInner(const Expr *e);
  Value evalDeclRef(const DeclRefExpr *ref);
  Locations bindingLocations(const BindingDecl *binding);
  Value evalBinding(const BindingDecl *binding);
  static ReduceOpKind opForEnumerator(const EnumConstantDecl *enumerator);
  Value evalMember(const MemberExpr *member);
  static const FieldDecl *pairElement(const FunctionDecl *get, const Expr *object);
  Value readField(const Expr *object, const Value &whole, const FieldDecl *field);
  Value fieldOfValue(Value whole, const FieldDecl *field);
  Value evalConstruct(const CXXConstructExpr *construct);
  ControlDependence operandBranch(const Expr *cond, const Value &c, const Expr *operand,
                                  const PathSet &other, bool negated);
  Value evalConditional(const Expr *cond, const Expr *trueExpr, const Expr *falseExpr);
  Value evalUnary(const UnaryOperator *unary);
  Value evalBinary(const BinaryOperator *binary);
  static std::optional<bool> rankTautology(BinaryOperatorKind op, const Value &a, const Value &b);
  Value compare(BinaryOperatorKind op, const Expr *lhs, const Value &a, const Expr *rhs,
                const Value &b);
  bool implicitCount(const Expr *e, const Value &v);
  // `v`, stored from `source` into a variable of `target` type: marked when a real takes an
  // integer that implicitCount would call a count.
  Value keepIntegerCopy(Value v, const Expr *source, QualType target);
  static bool realContext(const Expr *whole);
  Value arith(BinaryOperatorKind op, const Expr *lhs, const Value &a, const Expr *rhs,
              const Value &b, const Expr *whole);
  Value assign(const Expr *lhs, const Expr *rhs, const Expr *whole);
  Value readLocations(const Locations &targets, const Expr *fallback);
  void markCounted(Value &v, const Expr *target, const Expr *step, const Expr *amount);
  Value increment(const Expr *target, BinaryOperatorKind op, const Expr *amount, const Expr *whole);
  Value compoundAssign(BinaryOperatorKind op, const Expr *lhs, const Expr *rhs, const Expr *whole);

  // ---- calls (flow/Calls.cpp) -------------------------------------------------------------------

  std::vector<Value> evalArgs(llvm::ArrayRef<const Expr *> args);
  static llvm::SmallVector<const Expr *, 8> argsOf(const CallExpr *call, unsigned skip = 0);
  Value evalCall(const CallExpr *call);
  bool isStatusType(QualType type);
  Value callLambda(const CXXMethodDecl *op, const Expr *call, llvm::ArrayRef<const Expr *> args,
                   std::vector<Value> values);
  Value callDefinition(const FunctionDecl *definition, std::string name, const Expr *call,
                       llvm::ArrayRef<const Expr *> args, std::vector<Value> values,
                       Frame *lexicalParent = nullptr, bool onSubCommunicator = false);
  Value callFunction(const FunctionDecl *callee, const CallExpr *call,
                     llvm::ArrayRef<const Expr *> args, const Value *object);
  std::optional<Value> knownFunction(const FunctionDecl *callee, const CallExpr *call,
                                     llvm::ArrayRef<const Expr *> args,
                                     const std::vector<Value> &values);
  Value unknownCall(const FunctionDecl *callee, llvm::ArrayRef<const Expr *> args,
                    const std::vector<Value> &values);
  Value callByBody(const FunctionDecl *callee, const CallExpr *call,
                   llvm::ArrayRef<const Expr *> args, std::vector<Value> values);
  const FunctionSummary *summaryOf(const FunctionDecl *callee) const;
  Value summarisedCall(const FunctionSummary &summary, const FunctionDecl *callee,
                       const CallExpr *call, llvm::ArrayRef<const Expr *> args,
                       const std::vector<Value> &values);
  Value fromSummary(const ValueFacts &facts, const std::vector<Value> &values, const Expr *call);
  const NamedDecl *keyDecl(LocKey k);
  Locations pointeeOrLvalue(const Expr *arg, QualType paramType);
  Value queryCall(const QuerySpec &spec, const CallExpr *call, llvm::ArrayRef<const Expr *> args);
  Value preMulSumCall(const PreMulSumFactorySpec &spec, const CallExpr *call,
                      llvm::ArrayRef<const Expr *> args, const std::vector<Value> &values);
  std::vector<ControlDependence> activeControls() const;
  void emitCollective(const Expr *call, std::string name, bool onSubCommunicator,
                      const Expr *comm = nullptr);
  std::string communicatorKey(const Expr *comm);
  std::string rankCommunicator(const Origin &source);
  const Expr *reportSite(const Expr *at, uint32_t &mask, std::vector<WrapperStep> &steps,
                         unsigned &depth);
  void sumThenDivide(const PendingSum &pending, const Expr *division);
  std::string opName(const Expr *opArg, ReduceOpKind kind);
  Value reducerCall(const ReducerSpec &spec, const FunctionDecl *callee, const CallExpr *call,
                    llvm::ArrayRef<const Expr *> args, const Value *object);
  const Expr *enumeratorSpelledIn(const Expr *named, const Expr *call);
  void commCreation(const FunctionDecl *callee, llvm::ArrayRef<const Expr *> args,
                    const std::vector<Value> &values);
  bool namesModelState(const NamedDecl *decl);
  static bool isElementCount(DeclarationName name);
  Value elementCount(const Value &container, const Expr *containerExpr, const Expr *at);
  Value evalMemberCall(const CXXMemberCallExpr *call);
  Value evalOperatorCall(const CXXOperatorCallExpr *call);

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
  llvm::DenseMap<const EnumDecl *, bool> statusEnums_;
  llvm::DenseSet<const VarDecl *> evaluatingGlobals_;
  std::map<std::pair<const FunctionDecl *, bool>, bool> endsProcess_; // (helper, throw caught)
  // The ifs of the runs being walked that together issue the same collectives on every rank
  // (provePartition), each with the number of walks of its block under way that proved it.
  llvm::DenseMap<const IfStmt *, unsigned> partitioned_;
  // Fields and variables outside functions that a function of the file fills with the rank, and
  // where (learnRankStorage).
  llvm::DenseMap<const Decl *, Origin> rankStorage_;
  llvm::DenseMap<const Decl *, Origin> sizeStorage_; // ... with the communicator size
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

} // namespace collcheck::lint
