#include "engine/FlowAnalysis.h"
#include "engine/flow/Walker.h"

namespace collcheck::lint {

FlowAnalysis::FlowAnalysis(ASTContext &context, const LintConfig &config, const ReducerTable &table,
                           CollectiveSignatures &signatures, FlowListener &listener)
    : walker_(std::make_unique<Walker>(context, config, table, signatures, listener)) {}

FlowAnalysis::~FlowAnalysis() = default;

void FlowAnalysis::analyzeRoot(const FunctionDecl *function) { walker_->analyzeRoot(function); }

RootEffect FlowAnalysis::summariseRoot(const FunctionDecl *function, bool uniformParameters) {
  return walker_->summariseRoot(function, uniformParameters);
}

std::vector<LastingStorage> FlowAnalysis::lastingStorage() const {
  return walker_->lastingStorage();
}

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
