#include "engine/Summary.h"

#include "engine/ReducerTable.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/Index/USRGeneration.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

namespace collcheck::lint {

using Json = nlohmann::json;

ValueFacts ValueFacts::of(const Value &v) {
  ValueFacts f;
  f.uniform = v.uniform;
  f.reduced = v.reduced;
  f.rankDerived = v.rankDerived;
  f.countDerived = v.countDerived;
  f.nonZero = v.nonZero;
  f.mask = v.mask;
  f.exactRank = v.exactRank;
  f.exactSize = v.exactSize;
  f.guessed = v.guessed;
  f.meanFormed = static_cast<bool>(v.meanFormed);
  f.powers = v.powers;
  f.paramMask = v.paramMask;
  return f;
}

namespace {

// Flags as a list of names: a cache entry stays readable, and a flag added later reads as false.
constexpr std::pair<const char *, bool ValueFacts::*> kFlags[] = {
    {"uniform", &ValueFacts::uniform},      {"reduced", &ValueFacts::reduced},
    {"rank", &ValueFacts::rankDerived},     {"count", &ValueFacts::countDerived},
    {"non-zero", &ValueFacts::nonZero},     {"mask", &ValueFacts::mask},
    {"exact-rank", &ValueFacts::exactRank}, {"exact-size", &ValueFacts::exactSize},
    {"guessed", &ValueFacts::guessed},      {"mean-formed", &ValueFacts::meanFormed}};

Json factsJson(const ValueFacts &f) {
  Json flags = Json::array();
  for (const auto &[name, member] : kFlags)
    if (f.*member)
      flags.push_back(name);
  return {{"flags", flags},
          {"powers", {f.powers.local, f.powers.reduced, f.powers.commSize}},
          {"params", f.paramMask}};
}

ValueFacts factsFrom(const Json &j) {
  ValueFacts f;
  for (const Json &flag : j.at("flags"))
    for (const auto &[name, member] : kFlags)
      if (flag == name)
        f.*member = true;
  const Json &p = j.at("powers");
  f.powers = {p.at(0).get<int8_t>(), p.at(1).get<int8_t>(), p.at(2).get<int8_t>()};
  f.paramMask = j.at("params").get<uint32_t>();
  return f;
}

const char *whatName(QuerySpec::What what) {
  return what == QuerySpec::What::Rank ? "rank" : "size";
}
QuerySpec::What whatFrom(const Json &j) {
  return j == "rank" ? QuerySpec::What::Rank : QuerySpec::What::Size;
}

// Facts that hold whichever of two functions runs: those of both, the taints of either.
ValueFacts joinFacts(const ValueFacts &a, const ValueFacts &b) {
  ValueFacts r;
  r.uniform = a.uniform && b.uniform;
  r.reduced = a.reduced && b.reduced;
  r.nonZero = a.nonZero && b.nonZero;
  r.mask = a.mask && b.mask;
  r.exactRank = a.exactRank && b.exactRank;
  r.exactSize = a.exactSize && b.exactSize;
  r.rankDerived = a.rankDerived || b.rankDerived;
  r.countDerived = a.countDerived || b.countDerived;
  r.meanFormed = a.meanFormed || b.meanFormed;
  // A guess on one side and a fact on the other is a fact.
  auto factual = [](const ValueFacts &f) {
    return (f.rankDerived || f.countDerived) && !f.guessed;
  };
  r.guessed = (r.rankDerived || r.countDerived) && !factual(a) && !factual(b);
  // The more divided side: a mean from one override is a mean for the call.
  r.powers = a.powers.local <= b.powers.local ? a.powers : b.powers;
  r.paramMask = a.paramMask | b.paramMask;
  return r;
}

FunctionSummary joinOverriders(const std::string &name,
                               const std::vector<const FunctionSummary *> &overriders) {
  FunctionSummary joined;
  joined.name = name;
  joined.params = overriders.front()->params;
  bool allEnd = true;
  for (const FunctionSummary *f : overriders)
    allEnd = allEnd && f->endsProcess;
  // An override summarised without a return returns a value of no known fact (a local statistic,
  // a constant of unseen origin): the join keeps what the others return, less their uniformity.
  for (const FunctionSummary *f : overriders)
    if (f->returns)
      joined.returns = joined.returns ? joinFacts(*joined.returns, *f->returns) : *f->returns;
  if (joined.returns)
    for (const FunctionSummary *f : overriders)
      if (!f->returns)
        joined.returns = joinFacts(*joined.returns, ValueFacts{});
  joined.endsProcess = allEnd;
  // Collectives only when every override issues the same ones.
  joined.collectives = overriders.front()->collectives;
  for (const FunctionSummary *f : overriders)
    if (f->collectives != joined.collectives)
      joined.collectives.clear();
  return joined;
}

} // namespace

Json toJson(const FileSummary &summary) {
  Json functions = Json::array();
  for (const FunctionSummary &f : summary.functions) {
    Json j = {
        {"usr", f.usr}, {"name", f.name}, {"params", f.params}, {"file", f.file}, {"line", f.line}};
    if (f.reducedParam >= 0)
      j["reduces"] = {{"param", f.reducedParam},
                      {"op", f.reducedOp == ReduceOpKind::Avg ? "avg" : "sum"},
                      {"result", f.resultAt},
                      {"by", f.reducedBy}};
    if (f.query)
      j["query"] = whatName(*f.query);
    if (f.returns)
      j["returns"] = factsJson(*f.returns);
    for (const auto &[param, facts] : f.writes)
      j["writes"].push_back({{"param", param}, {"facts", factsJson(facts)}});
    if (!f.collectives.empty())
      j["collectives"] = f.collectives;
    if (f.endsProcess)
      j["ends-process"] = true;
    if (!f.overrides.empty())
      j["overrides"] = f.overrides;
    functions.push_back(std::move(j));
  }
  Json storage = Json::array();
  for (const StorageFact &s : summary.storage) {
    Json j = {{"name", s.name}, {"holds", whatName(s.what)}};
    if (!s.communicator.empty())
      j["communicator"] = s.communicator;
    storage.push_back(std::move(j));
  }
  return {{"functions", functions}, {"storage", storage}};
}

bool fromJson(const Json &json, FileSummary &summary) {
  try {
    for (const Json &j : json.at("functions")) {
      FunctionSummary f;
      f.usr = j.at("usr").get<std::string>();
      f.name = j.at("name").get<std::string>();
      f.params = j.at("params").get<unsigned>();
      f.file = j.at("file").get<std::string>();
      f.line = j.at("line").get<unsigned>();
      if (j.contains("reduces")) {
        const Json &r = j.at("reduces");
        f.reducedParam = r.at("param").get<int>();
        f.reducedOp = r.at("op") == "avg" ? ReduceOpKind::Avg : ReduceOpKind::Sum;
        f.resultAt = r.at("result").get<int>();
        f.reducedBy = r.at("by").get<std::string>();
      }
      if (j.contains("query"))
        f.query = whatFrom(j.at("query"));
      if (j.contains("returns"))
        f.returns = factsFrom(j.at("returns"));
      if (j.contains("writes"))
        for (const Json &w : j.at("writes"))
          f.writes.emplace_back(w.at("param").get<unsigned>(), factsFrom(w.at("facts")));
      if (j.contains("collectives"))
        f.collectives = j.at("collectives").get<std::vector<std::string>>();
      f.endsProcess = j.value("ends-process", false);
      if (j.contains("overrides"))
        f.overrides = j.at("overrides").get<std::vector<std::string>>();
      summary.functions.push_back(std::move(f));
    }
    for (const Json &s : json.at("storage"))
      summary.storage.push_back({s.at("name").get<std::string>(), whatFrom(s.at("holds")),
                                 s.value("communicator", std::string())});
  } catch (const Json::exception &) {
    summary = {};
    return false;
  }
  return true;
}

void ProjectSummaries::add(const FileSummary &file) {
  dispatched_.clear(); // the joins may gain an override
  for (const FunctionSummary &f : file.functions) {
    // A function defined in several translation units (an inline one in a header, or the same
    // source in two targets) has one summary: the first.
    auto [it, inserted] = byUsr_.try_emplace(f.usr, f);
    if (!inserted)
      continue;
    for (const std::string &base : it->second.overrides)
      overridersOf_[base].push_back(&it->second);
  }
  for (const StorageFact &s : file.storage) {
    auto [it, inserted] = storage_.try_emplace(s.name, s);
    // Filled from two communicators (or from one and from a query that names none): neither.
    if (!inserted && it->second.communicator != s.communicator)
      it->second.communicator.clear();
  }
}

namespace {

std::string answerText(const FunctionSummary *f) {
  if (!f)
    return "";
  FileSummary file;
  file.functions.push_back(*f);
  return toJson(file).dump();
}

std::string answerText(const StorageFact *s) {
  if (!s)
    return "";
  FileSummary file;
  file.storage.push_back(*s);
  return toJson(file).dump();
}

} // namespace

const FunctionSummary *ProjectSummaries::byUsr(const std::string &usr) const {
  auto it = byUsr_.find(usr);
  return it != byUsr_.end() ? &it->second : nullptr;
}

const FunctionSummary *ProjectSummaries::overridesOf(const std::string &name) const {
  auto overriders = overridersOf_.find(name);
  if (overriders == overridersOf_.end())
    return nullptr;
  if (overriders->second.size() == 1)
    return overriders->second.front();
  auto [joined, inserted] = dispatched_.try_emplace(name);
  if (inserted)
    joined->second = joinOverriders(name, overriders->second);
  return &joined->second;
}

const StorageFact *ProjectSummaries::storageNamed(const std::string &name) const {
  auto it = storage_.find(name);
  return it != storage_.end() ? &it->second : nullptr;
}

const FunctionSummary *ProjectSummaries::find(const clang::FunctionDecl *function) const {
  std::string usr = usrOf(function);
  const FunctionSummary *summary = byUsr(usr);
  if (lookups_)
    lookups_->record(ProjectLookups::Function, usr, [&] { return answerText(summary); });
  if (summary)
    return summary;
  // A call through a base class whose method is pure or defined elsewhere: any override of the
  // project may run, so the call does what they all do and may return what any returns.
  const auto *method = llvm::dyn_cast<clang::CXXMethodDecl>(function);
  return method ? dispatched(method) : nullptr;
}

const FunctionSummary *ProjectSummaries::dispatched(const clang::CXXMethodDecl *method) const {
  if (!method->isVirtual())
    return nullptr;
  std::string name = qualifiedName(method);
  const FunctionSummary *summary = overridesOf(name);
  if (lookups_)
    lookups_->record(ProjectLookups::Overrides, name, [&] { return answerText(summary); });
  return summary;
}

std::optional<QuerySpec::What> ProjectSummaries::storageOf(const clang::NamedDecl *decl) const {
  // With no storage facts the answer is known without the name, unless it is to be recorded.
  if ((storage_.empty() && !lookups_) || !decl)
    return std::nullopt;
  std::string name = qualifiedName(decl);
  const StorageFact *fact = storageNamed(name);
  if (lookups_)
    lookups_->record(ProjectLookups::Storage, name, [&] { return answerText(fact); });
  if (!fact)
    return std::nullopt;
  return fact->what;
}

std::string ProjectSummaries::rankCommunicatorOf(const clang::NamedDecl *decl) const {
  if ((storage_.empty() && !lookups_) || !decl)
    return "";
  std::string name = qualifiedName(decl);
  const StorageFact *fact = storageNamed(name);
  if (lookups_)
    lookups_->record(ProjectLookups::Storage, name, [&] { return answerText(fact); });
  return fact && fact->what == QuerySpec::What::Rank ? fact->communicator : "";
}

std::string ProjectLookups::firstChanged(const ProjectSummaries &project,
                                         const LintConfig &config) const {
  ReducerTable table(config);
  for (const auto &[question, answer] : answers_) {
    std::string key = question.substr(1);
    std::string now;
    const char *what = "";
    switch (static_cast<Kind>(question.front())) {
    case Function:
      now = answerText(project.byUsr(key));
      what = "function ";
      break;
    case Overrides:
      now = answerText(project.overridesOf(key));
      what = "overrides ";
      break;
    case Storage:
      now = answerText(project.storageNamed(key));
      what = "storage ";
      break;
    case Table:
      now = table.entriesNamed(key);
      what = "table ";
      break;
    }
    if (now != answer)
      return what + key;
  }
  return "";
}

void ProjectSummaries::extend(LintConfig &config) const {
  auto named = [&](const std::string &name) {
    for (const ReducerSpec &r : config.reducers)
      if (r.name == name)
        return true;
    for (const QuerySpec &q : config.queries)
      if (q.name == name)
        return true;
    return false;
  };
  for (const auto &[usr, f] : byUsr_) {
    // Neither a wrapper nor a query: nothing to add (and no need to search the tables).
    if (f.name.empty() || (f.reducedParam < 0 && !f.query) || named(f.name))
      continue;
    if (f.reducedParam >= 0) {
      ReducerSpec spec;
      spec.name = f.name;
      spec.kind = CollectiveKind::AllReduce;
      spec.send = f.reducedParam;
      spec.recv = f.resultAt;
      spec.fixedOp = f.reducedOp;
      spec.how = "its " + f.reducedBy + " (" + f.file + ":" + std::to_string(f.line) + ")";
      config.reducers.push_back(std::move(spec));
    } else if (f.query) {
      QuerySpec spec;
      spec.name = f.name;
      spec.what = *f.query;
      config.queries.push_back(std::move(spec));
    }
  }
}

std::string usrOf(const clang::FunctionDecl *function) {
  llvm::SmallString<128> usr;
  if (clang::index::generateUSRForDecl(function->getCanonicalDecl(), usr))
    return {};
  return std::string(usr);
}

std::string qualifiedName(const clang::NamedDecl *decl) {
  std::string name;
  llvm::raw_string_ostream out(name);
  decl->printQualifiedName(out);
  return out.str();
}

} // namespace collcheck::lint
