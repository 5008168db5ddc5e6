#include "tool/ProjectSummaries.h"

#include "engine/Analysis.h"
#include "tool/CompileCommands.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

namespace collcheck::lint {
namespace {

using Json = nlohmann::json;
constexpr int kCacheFormat = 2;

std::string hex(uint64_t h) {
  char text[17];
  snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

uint64_t hashText(llvm::StringRef text) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

} // namespace

// The content hash of a file, once per run (headers are shared by many translation units).
class FileHashes {
public:
  std::optional<std::string> of(const std::string &path) {
    auto it = hashes_.find(path);
    if (it != hashes_.end())
      return it->second;
    std::optional<std::string> hash;
    if (auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                                  /*RequiresNullTerminator=*/false))
      hash = hex(hashText((*buffer)->getBuffer()));
    hashes_.emplace(path, hash);
    return hash;
  }

private:
  std::map<std::string, std::optional<std::string>> hashes_;
};

namespace {

// The lint itself: a rebuilt binary summarises differently, whatever its version string says.
std::string toolIdentity() {
  static const std::string identity = [] {
    std::string path = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
    FileHashes hashes;
    return std::string(COLLCHECK_VERSION) + "/" + hashes.of(path).value_or("unknown");
  }();
  return identity;
}

class SummaryConsumer : public clang::ASTConsumer {
public:
  SummaryConsumer(const LintConfig &config, FileSummary &summary, std::vector<std::string> &read)
      : config_(config), summary_(summary), read_(read) {}

  void HandleTranslationUnit(clang::ASTContext &context) override {
    summary_ = summariseTranslationUnit(context, config_);
    read_ = filesRead(context.getSourceManager());
  }

private:
  const LintConfig &config_;
  FileSummary &summary_;
  std::vector<std::string> &read_;
};

class SummaryAction : public clang::ASTFrontendAction {
public:
  SummaryAction(const LintConfig &config, FileSummary &summary, std::vector<std::string> &read)
      : config_(config), summary_(summary), read_(read) {}
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &,
                                                        llvm::StringRef) override {
    return std::make_unique<SummaryConsumer>(config_, summary_, read_);
  }

private:
  const LintConfig &config_;
  FileSummary &summary_;
  std::vector<std::string> &read_;
};

class SummaryActionFactory : public clang::tooling::FrontendActionFactory {
public:
  SummaryActionFactory(const LintConfig &config, FileSummary &summary,
                       std::vector<std::string> &read)
      : config_(config), summary_(summary), read_(read) {}
  std::unique_ptr<clang::FrontendAction> create() override {
    return std::make_unique<SummaryAction>(config_, summary_, read_);
  }

private:
  const LintConfig &config_;
  FileSummary &summary_;
  std::vector<std::string> &read_;
};

// Reads a cache entry and checks every file it depends on; false when it is missing or stale.
bool readCached(const std::string &entryPath, const std::string &key, FileHashes &hashes,
                FileSummary &summary) {
  std::ifstream in(entryPath, std::ios::binary);
  if (!in)
    return false;
  Json entry = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!entry.is_object() || entry.value("format", 0) != kCacheFormat ||
      entry.value("key", "") != key)
    return false;
  const Json &deps = entry["deps"];
  if (!deps.is_array())
    return false;
  for (const Json &dep : deps) {
    if (!dep.is_array() || dep.size() != 2 || !dep[0].is_string())
      return false;
    std::optional<std::string> now = hashes.of(dep[0].get<std::string>());
    if (!now || dep[1] != *now)
      return false;
  }
  return fromJson(entry["summary"], summary);
}

// Written to a temporary name, then renamed: two runs sharing the cache never read half an entry.
void writeCached(const std::string &entryPath, const std::string &key,
                 const std::vector<std::string> &read, FileHashes &hashes,
                 const FileSummary &summary) {
  Json deps = Json::array();
  for (const std::string &path : read) {
    if (llvm::StringRef(path).starts_with(kEmbeddedHeaderRoot))
      continue; // part of the binary, which the key names
    std::optional<std::string> hash = hashes.of(path);
    if (!hash)
      return; // a file that cannot be read again cannot be checked: no entry
    deps.push_back({path, *hash});
  }
  Json entry = {
      {"format", kCacheFormat}, {"key", key}, {"deps", deps}, {"summary", toJson(summary)}};
  std::string temporary = entryPath + "." + std::to_string(llvm::sys::Process::getProcessId());
  {
    std::ofstream out(temporary, std::ios::binary);
    out << entry.dump();
    if (!out)
      return;
  }
  if (llvm::sys::fs::rename(temporary, entryPath))
    llvm::sys::fs::remove(temporary);
}

} // namespace

std::string defaultSummaryCache() {
  llvm::SmallString<256> dir;
  if (std::optional<std::string> xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    dir = *xdg;
  else if (std::optional<std::string> home = llvm::sys::Process::GetEnv("HOME"); home)
    llvm::sys::path::append(dir, *home, ".cache");
  else
    return {};
  llvm::sys::path::append(dir, "collcheck-lint");
  return std::string(dir);
}

SummaryCache::SummaryCache(const clang::tooling::CompilationDatabase &database,
                           const SummaryPassOptions &options)
    : database_(database), options_(options), hashes_(std::make_unique<FileHashes>()) {
  enabled_ = !options.cacheDir.empty() && !llvm::sys::fs::create_directories(options.cacheDir);
}

SummaryCache::~SummaryCache() = default;

std::optional<SummaryCache::Entry> SummaryCache::entryOf(const std::string &file) const {
  std::vector<clang::tooling::CompileCommand> commands = database_.getCompileCommands(file);
  if (commands.empty())
    return std::nullopt;
  const clang::tooling::CompileCommand &command = commands.front();
  std::string commandLine = command.Directory;
  for (const std::string &arg : command.CommandLine)
    commandLine += '\0' + arg;
  Entry entry;
  entry.directory = command.Directory;
  entry.key = toolIdentity() + "/" + hex(hashText(options_.configKey)) + "/" +
              hex(hashText(commandLine)) + "/" + file;
  llvm::SmallString<256> path(options_.cacheDir);
  llvm::sys::path::append(path, hex(hashText(entry.key)) + ".json");
  entry.path = std::string(path);
  return entry;
}

bool SummaryCache::lookup(const std::string &file, FileSummary &summary) {
  std::optional<Entry> entry = entryOf(file);
  return enabled_ && entry && readCached(entry->path, entry->key, *hashes_, summary);
}

void SummaryCache::store(const std::string &file, std::vector<std::string> read,
                         const FileSummary &summary) {
  std::optional<Entry> entry = entryOf(file);
  if (!enabled_ || !entry || read.empty())
    return;
  for (std::string &path : read)
    if (!llvm::sys::path::is_absolute(path)) {
      llvm::SmallString<256> absolute(entry->directory);
      llvm::sys::path::append(absolute, path);
      llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
      path = std::string(absolute);
    }
  writeCached(entry->path, entry->key, read, *hashes_, summary);
}

std::vector<std::string> filesRead(const clang::SourceManager &sm) {
  std::vector<std::string> read;
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it)
    read.push_back(std::string(it->first.getName()));
  return read;
}

FileSummary summariseFile(const clang::tooling::CompilationDatabase &database,
                          const std::string &file, const LintConfig &config,
                          const SummaryPassOptions &options, SummaryCache &cache,
                          SummaryPassStats &stats) {
  FileSummary summary;
  std::vector<std::string> read;
  clang::tooling::ClangTool tool(
      database, {file}, std::make_shared<clang::PCHContainerOperations>(), makeLintFileSystem());
  tool.setPrintErrorMessage(false);
  // Only counted: errors are the check's to report, for the files it is asked to check.
  clang::DiagnosticConsumer errors;
  tool.setDiagnosticConsumer(&errors);
  for (const clang::tooling::ArgumentsAdjuster &adjuster : options.adjusters)
    tool.appendArgumentsAdjuster(adjuster);
  SummaryActionFactory factory(config, summary, read);
  tool.run(&factory);
  ++stats.parsed;
  if (errors.getNumErrors() > 0)
    ++stats.notCompiling;
  cache.store(file, std::move(read), summary);
  return summary;
}

void summariseProject(const clang::tooling::CompilationDatabase &database,
                      const std::vector<std::string> &files, const std::set<std::string> &checked,
                      const LintConfig &config, const SummaryPassOptions &options,
                      SummaryCache &cache, std::map<std::string, FileSummary> &out,
                      SummaryPassStats &stats) {
  auto start = std::chrono::steady_clock::now();
  for (const std::string &file : files) {
    if (database.getCompileCommands(file).empty())
      continue;
    ++stats.files;
    FileSummary summary;
    if (cache.lookup(file, summary)) {
      ++stats.fromCache;
      out[file] = std::move(summary);
      continue;
    }
    if (checked.contains(file))
      continue; // summarised by its check, from the same parse
    out[file] = summariseFile(database, file, config, options, cache, stats);
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace collcheck::lint
