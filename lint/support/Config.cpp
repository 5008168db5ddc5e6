#include "support/Config.h"

#include "catalogue.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string_view>

namespace collcheck::lint {
namespace {

using Kind = CollectiveKind;
using Json = nlohmann::json;

ReducerSpec reducer(std::string name, Kind kind, int send, int recv, int op, int datatype,
                    int comm) {
  ReducerSpec spec;
  spec.name = std::move(name);
  spec.kind = kind;
  spec.send = send;
  spec.recv = recv;
  spec.op = op;
  spec.datatype = datatype;
  spec.comm = comm;
  return spec;
}

// An MPI collective: its blocking and nonblocking names, its kind as the trace format names it,
// and its C parameter list as the MPI standard spells it.
struct MpiCollective {
  const char *blocking, *nonblocking, *kind, *parameters;
};

// The tracer's table (tracer/preload/mpi_collectives.def): what the tracer records is what the
// lint knows as a collective, so that neither misses one the other has.
constexpr MpiCollective kTracedMpiCollectives[] = {
#define COLLECTIVE(Blocking, blocking, Nonblocking, nonblocking, kind, parameters, arguments,      \
                   fill)                                                                           \
  {"MPI_" #Blocking, "MPI_" #Nonblocking, #kind, #parameters},
#include "mpi_collectives.def"
#undef COLLECTIVE
};

// What the lint follows through a collective of the trace format's kind `kind`: the reductions
// and the gathers that sum what they collect; whatever else leaves each rank its own result.
Kind mpiKind(std::string_view kind) {
  if (kind == "AllReduce")
    return Kind::AllReduce;
  if (kind == "Reduce")
    return Kind::Reduce;
  if (kind == "ReduceScatter" || kind == "ReduceScatterBlock")
    return Kind::ReduceScatter;
  if (kind == "Broadcast")
    return Kind::Broadcast;
  if (kind == "AllGather" || kind == "AllGatherv")
    return Kind::AllGather;
  if (kind == "Barrier")
    return Kind::Barrier;
  return Kind::Other;
}

// A spec whose arguments are found by the names the MPI standard gives its parameters:
// "(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm
// comm)" has its data at 0, its result at 1, its op at 4, its datatype at 3, its communicator at 5.
ReducerSpec fromParameters(std::string name, Kind kind, std::string_view parameters) {
  constexpr size_t npos = std::string_view::npos;
  std::vector<std::string_view> names;
  std::string_view list = parameters.substr(1, parameters.size() - 2); // without the parentheses
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view parameter = list.substr(0, comma);
    // The name is the parameter's last identifier: "const int recvcounts[]" is "recvcounts".
    size_t end = parameter.find_last_not_of(" []");
    size_t begin = parameter.find_last_of(" *", end);
    begin = begin == npos ? 0 : begin + 1;
    names.push_back(end == npos ? std::string_view() : parameter.substr(begin, end + 1 - begin));
    list = comma == npos ? std::string_view() : list.substr(comma + 1);
  }
  auto at = [&](std::initializer_list<std::string_view> wanted) {
    for (std::string_view w : wanted)
      for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == w)
          return static_cast<int>(i);
    return -1;
  };
  // A broadcast's buffer is its data and its result; an all-to-all of per-peer datatypes has no
  // one datatype.
  return reducer(std::move(name), kind, at({"sendbuf", "buffer"}), at({"recvbuf"}), at({"op"}),
                 at({"datatype", "sendtype"}), at({"comm"}));
}

void addBuiltinReducers(std::vector<ReducerSpec> &table) {
  // NCCL, nccl.h order: (sendbuff, recvbuff, count, datatype, op, [root,] comm, stream).
  table.push_back(reducer("ncclAllReduce", Kind::AllReduce, 0, 1, 4, 3, 5));
  table.push_back(reducer("ncclReduce", Kind::Reduce, 0, 1, 4, 3, 6));
  table.push_back(reducer("ncclReduceScatter", Kind::ReduceScatter, 0, 1, 4, 3, 5));
  table.push_back(reducer("ncclBroadcast", Kind::Broadcast, 0, 1, -1, 3, 5));
  table.push_back(reducer("ncclBcast", Kind::Broadcast, 0, -1, -1, 2, 4));
  table.push_back(reducer("ncclAllGather", Kind::AllGather, 0, 1, -1, 3, 4));
  table.push_back(reducer("ncclAlltoAll", Kind::Other, 0, 1, -1, 3, 4));
  table.push_back(reducer("ncclGather", Kind::Other, 0, 1, -1, 3, 5));
  table.push_back(reducer("ncclScatter", Kind::Other, 0, 1, -1, 3, 5));
  table.push_back(reducer("ncclCommSplit", Kind::Other, -1, -1, -1, -1, 0));
  table.push_back(reducer("ncclCommInitRank", Kind::Other, -1, -1, -1, -1, -1));
  // MPI: every collective the tracer records, from its table: blocking, nonblocking, and the
  // initialization of a persistent one (MPI-4's MPI_<name>_init and Open MPI 4's
  // MPIX_<name>_init), which every member must call too and which takes the blocking form's
  // arguments followed by an info and a request.
  for (const MpiCollective &c : kTracedMpiCollectives) {
    const std::string init = std::string(c.blocking).substr(4) + "_init";
    for (const std::string &name :
         {std::string(c.blocking), std::string(c.nonblocking), "MPI_" + init, "MPIX_" + init})
      table.push_back(fromParameters(name, mpiKind(c.kind), c.parameters));
  }
  table.push_back(reducer("MPI_Comm_split", Kind::Other, -1, -1, -1, -1, 0));
  table.push_back(reducer("MPI_Comm_dup", Kind::Other, -1, -1, -1, -1, 0));
  table.push_back(reducer("MPI_Comm_create", Kind::Other, -1, -1, -1, -1, 0));
  // libtorch c10d process groups and backends: (tensors, options), in place.
  for (const char *owner : {"c10d::ProcessGroup::", "c10d::Backend::"}) {
    std::string prefix = owner;
    table.push_back(reducer(prefix + "allreduce", Kind::AllReduce, 0, -1, 1, -1, -1));
    table.push_back(reducer(prefix + "allreduce_coalesced", Kind::AllReduce, 0, -1, 1, -1, -1));
    table.push_back(reducer(prefix + "reduce", Kind::Reduce, 0, -1, 1, -1, -1));
    table.push_back(reducer(prefix + "broadcast", Kind::Broadcast, 0, -1, -1, -1, -1));
    table.push_back(reducer(prefix + "reduce_scatter", Kind::ReduceScatter, 1, 0, 2, -1, -1));
    table.push_back(reducer(prefix + "_reduce_scatter_base", Kind::ReduceScatter, 1, 0, 2, -1, -1));
    table.push_back(reducer(prefix + "allgather", Kind::AllGather, 1, 0, -1, -1, -1));
    table.push_back(reducer(prefix + "_allgather_base", Kind::AllGather, 1, 0, -1, -1, -1));
    table.push_back(reducer(prefix + "barrier", Kind::Barrier, -1, -1, -1, -1, -1));
  }
}

void addBuiltinQueries(std::vector<QuerySpec> &queries) {
  using What = QuerySpec::What;
  queries.push_back({"MPI_Comm_rank", What::Rank, 1});
  queries.push_back({"MPI_Comm_size", What::Size, 1});
  queries.push_back({"ncclCommUserRank", What::Rank, 1});
  queries.push_back({"ncclCommCount", What::Size, 1});
  for (const char *owner : {"c10d::ProcessGroup::", "c10d::Backend::"}) {
    queries.push_back({std::string(owner) + "getRank", What::Rank, -1});
    queries.push_back({std::string(owner) + "getSize", What::Size, -1});
  }
}

bool fail(std::string &error, std::string_view origin, const std::string &what) {
  error = std::string(origin) + ": " + what;
  return false;
}

bool readIndex(const Json &entry, const char *key, int &out, std::string &where,
               std::string &error) {
  if (!entry.contains(key))
    return true;
  const Json &value = entry.at(key);
  if (!value.is_number_integer() || value.get<int>() < -1) {
    error = where + "." + key + " must be an argument index (0, 1, ...) or -1";
    return false;
  }
  out = value.get<int>();
  return true;
}

bool parseKind(const std::string &text, CollectiveKind &kind) {
  static const std::pair<const char *, CollectiveKind> kKinds[] = {
      {"all-reduce", Kind::AllReduce},
      {"reduce", Kind::Reduce},
      {"reduce-scatter", Kind::ReduceScatter},
      {"broadcast", Kind::Broadcast},
      {"all-gather", Kind::AllGather},
      {"barrier", Kind::Barrier},
      {"other", Kind::Other}};
  for (const auto &[name, value] : kKinds)
    if (text == name) {
      kind = value;
      return true;
    }
  return false;
}

bool parseOp(const std::string &text, ReduceOpKind &op) {
  if (text == "sum")
    op = ReduceOpKind::Sum;
  else if (text == "avg")
    op = ReduceOpKind::Avg;
  else if (text == "other")
    op = ReduceOpKind::Other;
  else
    return false;
  return true;
}

bool checkKeys(const Json &object, std::initializer_list<const char *> allowed,
               const std::string &where, std::string &error) {
  if (!object.is_object()) {
    error = where + " must be an object";
    return false;
  }
  for (const auto &item : object.items()) {
    bool known = false;
    for (const char *key : allowed)
      known = known || item.key() == key;
    if (!known) {
      error = where + ": unknown key '" + item.key() + "'";
      return false;
    }
  }
  return true;
}

bool readName(const Json &entry, const std::string &where, std::string &name, std::string &error) {
  if (!entry.contains("name") || !entry.at("name").is_string() ||
      entry.at("name").get<std::string>().empty()) {
    error = where + ".name must be a non-empty string";
    return false;
  }
  name = entry.at("name").get<std::string>();
  return true;
}

bool parseReducer(const Json &entry, std::string where, ReducerSpec &spec, std::string &error) {
  if (!checkKeys(entry, {"name", "kind", "send", "recv", "op-arg", "op", "datatype", "comm"}, where,
                 error) ||
      !readName(entry, where, spec.name, error))
    return false;
  if (entry.contains("kind") && (!entry.at("kind").is_string() ||
                                 !parseKind(entry.at("kind").get<std::string>(), spec.kind))) {
    error = where + ".kind must be one of all-reduce, reduce, reduce-scatter, broadcast, "
                    "all-gather, barrier, other";
    return false;
  }
  spec.send = spec.kind == Kind::Barrier ? -1 : 0;
  if (!readIndex(entry, "send", spec.send, where, error) ||
      !readIndex(entry, "recv", spec.recv, where, error) ||
      !readIndex(entry, "op-arg", spec.op, where, error) ||
      !readIndex(entry, "datatype", spec.datatype, where, error) ||
      !readIndex(entry, "comm", spec.comm, where, error))
    return false;
  if (entry.contains("op")) {
    if (!entry.at("op").is_string() || !parseOp(entry.at("op").get<std::string>(), spec.fixedOp)) {
      error = where + ".op must be sum, avg or other";
      return false;
    }
  } else if (spec.op < 0 && (spec.kind == Kind::AllReduce || spec.kind == Kind::Reduce ||
                             spec.kind == Kind::ReduceScatter)) {
    error = where + ": a reduction needs \"op\" (sum, avg, other) or \"op-arg\"";
    return false;
  }
  return true;
}

bool parseWrapper(const Json &entry, std::string where, ReducerSpec &spec, std::string &error) {
  if (!checkKeys(entry, {"name", "buffer", "result", "op"}, where, error) ||
      !readName(entry, where, spec.name, error))
    return false;
  spec.kind = Kind::AllReduce;
  spec.send = 0;
  if (!readIndex(entry, "buffer", spec.send, where, error))
    return false;
  if (entry.contains("result") && entry.at("result").is_string()) {
    if (entry.at("result") != "return") {
      error = where + ".result must be an argument index or \"return\"";
      return false;
    }
    spec.recv = kReturned;
  } else if (!readIndex(entry, "result", spec.recv, where, error)) {
    return false;
  }
  std::string op = entry.value("op", std::string("avg"));
  if (op == "broadcast") {
    spec.kind = Kind::Broadcast;
  } else if (!parseOp(op, spec.fixedOp)) {
    error = where + ".op must be avg, sum, other or broadcast";
    return false;
  }
  return true;
}

bool parseQueries(const Json &list, const std::string &key, QuerySpec::What what,
                  std::vector<QuerySpec> &queries, std::string &error) {
  if (!list.is_array()) {
    error = key + " must be a list";
    return false;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = key + "[" + std::to_string(i) + "]";
    QuerySpec query;
    query.what = what;
    if (list[i].is_string()) {
      query.name = list[i].get<std::string>();
    } else {
      if (!checkKeys(list[i], {"name", "out"}, where, error) ||
          !readName(list[i], where, query.name, error) ||
          !readIndex(list[i], "out", query.out, where, error))
        return false;
    }
    queries.push_back(std::move(query));
  }
  return true;
}

bool parsePatterns(const Json &list, const std::string &key, std::vector<std::string> &out,
                   std::string &error) {
  if (!list.is_array()) {
    error = key + " must be a list of patterns";
    return false;
  }
  out.clear();
  for (const Json &item : list) {
    if (!item.is_string()) {
      error = key + " must be a list of patterns";
      return false;
    }
    if (item.get<std::string>().size() > kMaxNamePatternLength) {
      error = key + ": a pattern of " + std::to_string(item.get<std::string>().size()) +
              " characters is longer than the " + std::to_string(kMaxNamePatternLength) +
              " allowed";
      return false;
    }
    try {
      compileNamePattern(item.get<std::string>());
    } catch (const std::regex_error &) {
      error = key + ": '" + item.get<std::string>() + "' is not a valid regular expression";
      return false;
    }
    out.push_back(item.get<std::string>());
  }
  return true;
}

} // namespace

std::string_view collectiveKindName(CollectiveKind kind) {
  switch (kind) {
  case Kind::AllReduce:
    return "all-reduce";
  case Kind::Reduce:
    return "reduce";
  case Kind::ReduceScatter:
    return "reduce-scatter";
  case Kind::Broadcast:
    return "broadcast";
  case Kind::AllGather:
    return "all-gather";
  case Kind::Barrier:
    return "barrier";
  case Kind::Other:
    return "collective";
  }
  return "collective";
}

std::regex compileNamePattern(const std::string &pattern) {
  if (pattern.size() > kMaxNamePatternLength)
    throw std::regex_error(std::regex_constants::error_complexity);
  auto flags = std::regex::ECMAScript | std::regex::icase | std::regex::optimize;
#if defined(__GLIBCXX__)
  flags |= std::regex_constants::__polynomial;
#endif
  return std::regex(pattern, flags);
}

LintConfig LintConfig::defaults() {
  LintConfig config;
  addBuiltinReducers(config.reducers);
  addBuiltinQueries(config.queries);
  config.preMulSumFactories = {{"ncclRedOpCreatePreMulSum", 0, 1},
                               {"c10d::makeNCCLPreMulSum", -1, 0}};
  config.copies = {{"cudaMemcpy", 0, 1},  {"cudaMemcpyAsync", 0, 1}, {"memcpy", 0, 1},
                   {"std::memcpy", 0, 1}, {"memmove", 0, 1},         {"std::copy", 2, 0},
                   {"std::copy_n", 2, 0}, {"memset", 0, 1},          {"std::memset", 0, 1},
                   {"cudaMemset", 0, 1},  {"cudaMemsetAsync", 0, 1}};
  config.rankNames = {"(my_?|world_?|global_?|local_?|node_?)?rank(_?id)?", "proc_?id"};
  config.sizeNames = {"(world|comm|group)_?size", "n_?(ranks|procs|workers)",
                      "num_?(ranks|procs|processes|workers|replicas)", "nprocs"};
  config.globalCountNames = {
      "(global|total|all|world)_?(count|cnt|n|num|tokens?|items|samples|valid).*"};
  config.countNames = {"cnt",
                       ".*count.*",
                       ".*_cnt",
                       "n_?(valid|tokens?|items|samples)",
                       "(num|local|my)_?(valid|tokens?|items|samples|examples)",
                       ".*valid_?(tokens?|items|count|n)?",
                       "n_?local|local_?n",
                       "ntok.*"};
  // Integers that divide values without counting this rank's items: steps, factors, and model
  // and data dimensions (the same on every rank).
  config.nonCountNames = {
      ".*(step|iter|epoch|warmup|seed|dim|layer|head|stride|scale|factor).*",
      "(.*_)?(classes|class|vocab|features?|channels?|hidden|embed(ding)?s?|kernels?|"
      "buckets?|width|height)(_.*)?",
      "lr|.*_lr|lr_.*"};
  config.maskNames = {".*mask.*", "(is_)?valid", "keep"};
  config.modelNames = {"(.*_)?(grads?|gradients?|params?|parameters?|optim(izer)?s?|momentum|"
                       "moments?)(_.*)?"};
  config.dataNames = {
      ".*(batch|shard|sample|token|item|example|dataset|input|target|label|mask).*"};
  return config;
}

bool parseConfig(std::string_view text, std::string_view origin, LintConfig &config,
                 std::string &error) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error &e) {
    return fail(error, origin, std::string("not valid JSON: ") + e.what());
  }
  std::string problem;
  if (!checkKeys(root,
                 {"disabled-rules", "reducers", "wrappers", "rank-functions", "size-functions",
                  "rank-names", "size-names", "count-names", "global-count-names",
                  "non-count-names", "data-names", "mask-names", "model-names"},
                 "the top level", problem))
    return fail(error, origin, problem);
  if (root.contains("disabled-rules")) {
    const Json &list = root.at("disabled-rules");
    if (!list.is_array())
      return fail(error, origin, "disabled-rules must be a list of rule ids");
    for (const Json &item : list) {
      if (!item.is_string())
        return fail(error, origin, "disabled-rules must be a list of rule ids");
      std::string id = item.get<std::string>();
      if (id.starts_with("collcheck-"))
        id = id.substr(10);
      if (!rules::find(id))
        return fail(error, origin, "disabled-rules: no rule '" + id + "' in the catalogue");
      config.disabledRules.insert(id);
    }
  }
  for (const char *key : {"reducers", "wrappers"}) {
    if (!root.contains(key))
      continue;
    const Json &list = root.at(key);
    if (!list.is_array())
      return fail(error, origin, std::string(key) + " must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      ReducerSpec spec;
      std::string where = std::string(key) + "[" + std::to_string(i) + "]";
      bool ok = std::string_view(key) == "reducers" ? parseReducer(list[i], where, spec, problem)
                                                    : parseWrapper(list[i], where, spec, problem);
      if (!ok)
        return fail(error, origin, problem);
      // A project entry replaces a built-in one of the same name.
      std::erase_if(config.reducers, [&](const ReducerSpec &r) { return r.name == spec.name; });
      config.reducers.push_back(std::move(spec));
    }
  }
  if (root.contains("rank-functions") &&
      !parseQueries(root.at("rank-functions"), "rank-functions", QuerySpec::What::Rank,
                    config.queries, problem))
    return fail(error, origin, problem);
  if (root.contains("size-functions") &&
      !parseQueries(root.at("size-functions"), "size-functions", QuerySpec::What::Size,
                    config.queries, problem))
    return fail(error, origin, problem);
  for (auto [key, patterns] :
       {std::pair{"rank-names", &config.rankNames}, std::pair{"size-names", &config.sizeNames},
        std::pair{"count-names", &config.countNames}, std::pair{"data-names", &config.dataNames},
        std::pair{"mask-names", &config.maskNames}, std::pair{"model-names", &config.modelNames},
        std::pair{"global-count-names", &config.globalCountNames},
        std::pair{"non-count-names", &config.nonCountNames}})
    if (root.contains(key) && !parsePatterns(root.at(key), key, *patterns, problem))
      return fail(error, origin, problem);
  config.origin = std::string(origin);
  return true;
}

bool loadConfigFile(const std::string &path, LintConfig &config, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot read the config file";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  return parseConfig(text.str(), path, config, error);
}

std::string findConfigFile(const std::string &directory) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(directory, ec);
  if (ec)
    return {};
  while (true) {
    std::filesystem::path candidate = dir / kConfigFileName;
    if (std::filesystem::is_regular_file(candidate, ec))
      return candidate.string();
    if (!dir.has_parent_path() || dir.parent_path() == dir)
      return {};
    dir = dir.parent_path();
  }
}

} // namespace collcheck::lint
