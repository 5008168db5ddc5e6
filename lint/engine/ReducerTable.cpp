#include "engine/ReducerTable.h"

#include "engine/Summary.h"
#include "clang/AST/Decl.h"

#include "clang/AST/DeclCXX.h"
#include "llvm/Support/raw_ostream.h"

namespace collcheck::lint {
namespace {

llvm::StringRef shortName(llvm::StringRef name) {
  size_t colon = name.rfind("::");
  return colon == llvm::StringRef::npos ? name : name.substr(colon + 2);
}

// `Network::GlobalSyncUpByMean` names the function in any enclosing namespace, as Clang's
// `hasName` does (`LightGBM::Network::GlobalSyncUpByMean`); a leading `::` asks for the whole name.
bool sameQualifiedName(llvm::StringRef qualified, llvm::StringRef specName) {
  if (specName.consume_front("::"))
    return qualified == specName;
  return qualified == specName ||
         (qualified.ends_with(specName) && qualified.drop_back(specName.size()).ends_with("::"));
}

bool matchesQualified(const clang::FunctionDecl *function, llvm::StringRef specName,
                      unsigned depth = 0) {
  if (sameQualifiedName(function->getQualifiedNameAsString(), specName))
    return true;
  // A call through a derived process group (ProcessGroupNCCL::allreduce) is still the reducer.
  if (const auto *method = llvm::dyn_cast<clang::CXXMethodDecl>(function); method && depth < 8)
    for (const clang::CXXMethodDecl *overridden : method->overridden_methods())
      if (matchesQualified(overridden, specName, depth + 1))
        return true;
  return false;
}

} // namespace

bool matchesSpecName(const clang::FunctionDecl *function, llvm::StringRef specName) {
  const clang::IdentifierInfo *id = function->getIdentifier();
  if (!id || id->getName() != shortName(specName))
    return false;
  if (!specName.contains("::"))
    return true;
  return matchesQualified(function, specName);
}

ReducerTable::ReducerTable(const LintConfig &config)
    : lookups_(config.project ? config.project->lookups() : nullptr) {
  for (const ReducerSpec &spec : config.reducers)
    byShortName_[shortName(spec.name)].reducers.push_back(&spec);
  for (const QuerySpec &spec : config.queries)
    byShortName_[shortName(spec.name)].queries.push_back(&spec);
  for (const PreMulSumFactorySpec &spec : config.preMulSumFactories)
    byShortName_[shortName(spec.name)].preMulSums.push_back(&spec);
  for (const CopySpec &spec : config.copies)
    byShortName_[shortName(spec.name)].copies.push_back(&spec);
}

ReducerTable::Match ReducerTable::lookup(const clang::FunctionDecl *function) const {
  auto [it, inserted] = cache_.try_emplace(function);
  if (inserted)
    it->second = compute(function);
  return it->second;
}

ReducerTable::Match ReducerTable::compute(const clang::FunctionDecl *function) const {
  Match match;
  const clang::IdentifierInfo *id = function ? function->getIdentifier() : nullptr;
  if (!id)
    return match;
  // The summaries add wrappers and queries by name: a function of this name, defined in this file
  // or not, may match one that a file summarised later brings.
  if (lookups_)
    lookups_->record(ProjectLookups::Table, id->getName(),
                     [&] { return entriesNamed(id->getName()); });
  auto it = byShortName_.find(id->getName());
  if (it == byShortName_.end())
    return match;
  const Candidates &c = it->second;
  // Later entries (the project's config) take precedence over the built-in ones.
  for (auto spec = c.reducers.rbegin(); spec != c.reducers.rend() && !match.reducer; ++spec)
    if (matchesSpecName(function, (*spec)->name))
      match.reducer = *spec;
  for (auto spec = c.queries.rbegin(); spec != c.queries.rend() && !match.query; ++spec)
    if (matchesSpecName(function, (*spec)->name))
      match.query = *spec;
  for (const PreMulSumFactorySpec *spec : c.preMulSums)
    if (!match.preMulSum && matchesSpecName(function, spec->name))
      match.preMulSum = spec;
  for (const CopySpec *spec : c.copies)
    if (!match.copy && matchesSpecName(function, spec->name))
      match.copy = spec;
  return match;
}

std::string ReducerTable::entriesNamed(llvm::StringRef shortName) const {
  auto it = byShortName_.find(shortName);
  if (it == byShortName_.end())
    return "";
  std::string text;
  llvm::raw_string_ostream out(text);
  for (const ReducerSpec *r : it->second.reducers)
    out << "reducer " << r->name << ' ' << static_cast<int>(r->kind) << ' ' << r->send << ' '
        << r->recv << ' ' << r->op << ' ' << static_cast<int>(r->fixedOp) << ' ' << r->datatype
        << ' ' << r->comm << ' ' << r->how << '\n';
  for (const QuerySpec *q : it->second.queries)
    out << "query " << q->name << ' ' << static_cast<int>(q->what) << ' ' << q->out << '\n';
  for (const PreMulSumFactorySpec *p : it->second.preMulSums)
    out << "premulsum " << p->name << ' ' << p->out << ' ' << p->scalar << '\n';
  for (const CopySpec *c : it->second.copies)
    out << "copy " << c->name << ' ' << c->dst << ' ' << c->src << '\n';
  return text;
}

} // namespace collcheck::lint
