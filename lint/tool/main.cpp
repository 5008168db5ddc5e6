// collcheck-lint: the code-review check of collcheck. Usage and the config file: docs/lint.md.
//
//   collcheck-lint -p build/ src/train.cpp            files of a compilation database
//   collcheck-lint src/train.cpp -- -std=c++20 -I...  one file, its flags after --
//   git diff -U0 main | collcheck-lint -p build/ --diff=-   findings on changed lines only
//
// Exit status: 0 no findings, 1 findings, 2 could not run (bad usage, unreadable input, code that
// does not compile unless --allow-compile-errors, no compile command).
#include "catalogue.h"
#include "support/ChangedLines.h"
#include "support/Config.h"
#include "support/Sarif.h"
#include "tool/CompileCommands.h"
#include "tool/LintAction.h"
#include "tool/ProjectSummaries.h"

#include "clang/Basic/Version.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using namespace collcheck::lint;
namespace cl = llvm::cl;
namespace tooling = clang::tooling;

namespace {

constexpr int kClean = 0, kFindings = 1, kCouldNotRun = 2;

cl::OptionCategory category("collcheck-lint options");

cl::list<std::string> sources(cl::Positional, cl::desc("<source files>"), cl::cat(category));
cl::opt<std::string> buildPath("p", cl::desc("Build directory holding compile_commands.json"),
                               cl::value_desc("build-path"), cl::cat(category));
cl::opt<std::string>
    configPath("config",
               cl::desc("Config file (default: the nearest .collcheck-lint.json above the first "
                        "source file)"),
               cl::value_desc("file"), cl::cat(category));
cl::list<std::string> disabled("disable", cl::desc("Rules not to run (comma separated)"),
                               cl::CommaSeparated, cl::value_desc("rule"), cl::cat(category));
cl::opt<std::string> sarifPath("sarif", cl::desc("Also write SARIF 2.1.0 to <file> ('-': stdout)"),
                               cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> sourceRootOption(
    "source-root",
    cl::desc("Root that SARIF URIs and --diff paths are relative to (default: the git repository "
             "holding the current directory, else the current directory)"),
    cl::value_desc("dir"), cl::cat(category));
cl::opt<std::string> diffPath(
    "diff",
    cl::desc("Report only findings on lines a unified diff adds or changes ('-': stdin), e.g. "
             "`git diff -U0 BASE`; with no source files, lint the changed files"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> cudaPath("cuda-path", cl::desc("CUDA installation for .cu host code"),
                              cl::init(COLLCHECK_CUDA_ROOT), cl::value_desc("dir"),
                              cl::cat(category));
cl::opt<bool> cudaFallback(
    "cuda-fallback",
    cl::desc(
        "Parse .cu files with collcheck-lint's minimal CUDA declarations, not the CUDA headers"),
    cl::cat(category));
cl::opt<std::string> resourceDir("resource-dir", cl::desc("Clang's builtin header directory"),
                                 cl::init(COLLCHECK_CLANG_RESOURCE_DIR), cl::value_desc("dir"),
                                 cl::cat(category), cl::Hidden);
cl::list<std::string> extraArgs("extra-arg",
                                cl::desc("Extra argument appended to every compile "
                                         "command"),
                                cl::value_desc("arg"), cl::cat(category));
cl::opt<bool> listRules("list-rules", cl::desc("Print the rules and exit"), cl::cat(category));
cl::opt<bool> quiet("quiet", cl::desc("No summary line on stderr"), cl::cat(category));
cl::opt<bool> allowCompileErrors(
    "allow-compile-errors",
    cl::desc("Analyse a file that does not compile as far as it parsed (its errors become notes); "
             "by default such a file is an error (exit status 2)"),
    cl::cat(category));
cl::opt<bool> noSummaries(
    "no-summaries",
    cl::desc("Do not summarise the other translation units of the compilation database first "
             "(calls into other files are then unknown)"),
    cl::cat(category));
cl::opt<std::string> summaryCache(
    "summary-cache",
    cl::desc("Directory of the cached summaries (default: $XDG_CACHE_HOME/collcheck-lint or "
             "~/.cache/collcheck-lint; 'none': no cache)"),
    cl::value_desc("dir"), cl::cat(category));
// For the tests of the crash containment: the walk of this function fails on purpose.
cl::opt<std::string> debugFailIn("debug-fail-in", cl::desc("Fail the analysis of this function"),
                                 cl::value_desc("name"), cl::cat(category), cl::Hidden);

// Why each file checked twice was: the first question whose answer changed.
cl::opt<bool> debugRechecks("debug-rechecks", cl::desc("Say why a file is checked a second time"),
                            cl::cat(category), cl::Hidden);

int usageError(llvm::StringRef message) {
  message.consume_front("error: ");
  llvm::errs() << "collcheck-lint: error: " << message.rtrim() << "\n";
  return kCouldNotRun;
}

std::string gitRoot(std::string dir) {
  llvm::SmallString<256> path(dir);
  while (!path.empty()) {
    llvm::SmallString<256> git(path);
    llvm::sys::path::append(git, ".git");
    if (llvm::sys::fs::exists(git))
      return std::string(path);
    size_t parent = llvm::sys::path::parent_path(path).size();
    if (parent == path.size())
      break;
    path.resize(parent); // the parent is a prefix: no copy from the buffer being changed
  }
  return {};
}

bool readInput(const std::string &path, std::string &text, std::string &error) {
  auto buffer = path == "-" ? llvm::MemoryBuffer::getSTDIN() : llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    error = path + ": " + buffer.getError().message();
    return false;
  }
  text = (*buffer)->getBuffer().str();
  return true;
}

bool isSourceFile(llvm::StringRef path) {
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return ext == ".c" || ext == ".cc" || ext == ".cpp" || ext == ".cxx" || ext == ".cu" ||
         ext == ".C";
}

void printRules() {
  for (const collcheck::rules::Rule &rule : collcheck::rules::catalogue())
    if (rule.checker == "lint" || rule.checker == "both")
      llvm::outs() << rule.id << " (" << collcheck::rules::severityName(rule.severity)
                   << "): " << rule.title << "\n";
}

// A source file built into several targets is listed once per target in compile_commands.json;
// it is one translation unit to review: linted once, with its first command.
class FirstCommandDatabase : public tooling::CompilationDatabase {
public:
  explicit FirstCommandDatabase(std::unique_ptr<tooling::CompilationDatabase> inner)
      : inner_(std::move(inner)) {}
  std::vector<tooling::CompileCommand> getCompileCommands(llvm::StringRef file) const override {
    std::vector<tooling::CompileCommand> commands = inner_->getCompileCommands(file);
    if (commands.size() > 1)
      commands.resize(1);
    return commands;
  }
  std::vector<std::string> getAllFiles() const override { return inner_->getAllFiles(); }

private:
  std::unique_ptr<tooling::CompilationDatabase> inner_;
};

} // namespace

namespace {

// Output that could not be written (a full disk, a closed pipe) makes the run fail with a message,
// rather than LLVM's fatal error when the stream is destroyed (exit status 1, read as "findings").
bool written(llvm::raw_fd_ostream &out, llvm::StringRef what) {
  out.flush();
  if (!out.has_error())
    return true;
  llvm::errs() << "collcheck-lint: cannot write " << what << ": " << out.error().message() << "\n";
  out.clear_error();
  return false;
}

int lintMain(int argc, const char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](llvm::raw_ostream &out) {
    out << "collcheck-lint " << COLLCHECK_VERSION << " (Clang " << CLANG_VERSION_STRING << ")\n";
  });
  // Everything after `--` is the compile command of every source file.
  std::string fixedError;
  std::unique_ptr<tooling::CompilationDatabase> database =
      tooling::FixedCompilationDatabase::loadFromCommandLine(argc, argv, fixedError);
  if (!fixedError.empty())
    return usageError(fixedError);
  // Flags after `--`: the files given are the whole project; a database: every file it lists.
  const bool fixedFlags = database != nullptr;
  std::string parseErrors;
  llvm::raw_string_ostream parseStream(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "collcheck-lint: static checks for distributed training code\n",
                                   &parseStream)) {
    llvm::errs() << parseStream.str();
    return kCouldNotRun;
  }
  if (listRules) {
    printRules();
    return kClean;
  }

  llvm::SmallString<256> cwd;
  llvm::sys::fs::current_path(cwd);
  std::string sourceRoot = sourceRootOption.empty() ? gitRoot(std::string(cwd)) : "";
  if (!sourceRootOption.empty())
    sourceRoot = absolutePath(sourceRootOption);
  if (sourceRoot.empty())
    sourceRoot = std::string(cwd);

  ChangedLines changed;
  if (!diffPath.empty()) {
    std::string text, error;
    if (!readInput(diffPath, text, error) || !ChangedLines::parse(text, changed, error))
      return usageError("--diff " + error);
  }

  std::vector<std::string> files(sources.begin(), sources.end());
  if (files.empty() && !diffPath.empty())
    for (const std::string &path : changed.files()) {
      llvm::SmallString<256> full(sourceRoot);
      llvm::sys::path::append(full, path);
      if (isSourceFile(path) && llvm::sys::fs::exists(full))
        files.push_back(std::string(full));
    }
  if (files.empty()) {
    if (!diffPath.empty()) {
      if (!quiet)
        llvm::errs() << "collcheck-lint: the diff changes no source file\n";
      return kClean;
    }
    return usageError("no source files given (see --help)");
  }

  std::string databaseError;
  if (!database) {
    if (!buildPath.empty())
      database = tooling::CompilationDatabase::autoDetectFromDirectory(buildPath, databaseError);
    else
      database = tooling::CompilationDatabase::autoDetectFromSource(files.front(), databaseError);
    if (!database)
      return usageError(
          (databaseError.empty() ? std::string("no compilation database") : databaseError) +
          "\n  give the build directory with -p BUILD (it holds compile_commands.json), or the "
          "compile flags after --, e.g.\n  collcheck-lint file.cpp -- -std=c++20 -Iinclude");
    database = tooling::inferMissingCompileCommands(std::move(database));
    database = std::make_unique<FirstCommandDatabase>(std::move(database));
  }

  LintConfig config = LintConfig::defaults();
  std::string configFile = configPath;
  if (configFile.empty())
    configFile = findConfigFile(llvm::sys::path::parent_path(absolutePath(files.front())).str());
  std::string configText;
  if (!configFile.empty()) {
    std::string error;
    if (!loadConfigFile(configFile, config, error))
      return usageError(error);
    readInput(configFile, configText, error);
  }
  config.failInFunction = debugFailIn;
  for (std::string id : disabled) {
    if (llvm::StringRef(id).starts_with("collcheck-"))
      id = id.substr(10);
    if (!collcheck::rules::find(id))
      return usageError("--disable: no rule '" + id + "' (see --list-rules)");
    config.disabledRules.insert(id);
  }

  bool couldNotRun = false;
  std::vector<std::string> runnable;
  for (const std::string &file : files) {
    if (!llvm::sys::fs::is_regular_file(file)) {
      llvm::errs() << "collcheck-lint: error: " << file << ": no such file\n";
      couldNotRun = true;
    } else {
      runnable.push_back(file);
    }
  }

  LintOptions options;
  options.config = &config;
  options.changedLines = diffPath.empty() ? nullptr : &changed;
  options.sourceRoot = sourceRoot;
  // LLVM's own --color option (default: when stdout is a terminal).
  // SARIF on stdout moves the text diagnostics to stderr.
  options.out = sarifPath == "-" ? &llvm::errs() : &llvm::outs();
  options.color = llvm::WithColor(*options.out).colorsEnabled();
  options.allowCompileErrors = allowCompileErrors;
  CompileErrorCollector errors;
  CudaSetup cuda = chooseCudaSetup(cudaPath, cudaFallback);
  std::vector<tooling::ArgumentsAdjuster> adjusters{makeLintAdjuster(cuda, resourceDir)};
  if (!extraArgs.empty())
    adjusters.push_back(tooling::getInsertArgumentAdjuster(
        tooling::CommandLineArguments(extraArgs.begin(), extraArgs.end()),
        tooling::ArgumentInsertPosition::END));

  // One check of a file: what it printed and found, kept apart so that a second check of the file
  // replaces them, and what it asked of the project's summaries.
  struct FileCheck {
    std::string text;
    LintResults results;
    ProjectLookups lookups;
    bool analysed = false;
  };
  std::vector<FileCheck> checks(runnable.size());
  std::map<std::string, unsigned> parses; // of each file parsed, by absolute path
  auto check = [&](size_t index, const LintOptions &checkOptions) {
    const std::string &file = runnable[index];
    FileCheck &result = checks[index];
    result.text.clear();
    result.results = LintResults();
    llvm::raw_string_ostream text(result.text);
    text.enable_colors(checkOptions.color);
    LintOptions here = checkOptions;
    here.out = &text;
    // One tool per file, so that a file that cannot be parsed is known by name.
    tooling::ClangTool tool(*database, {file}, std::make_shared<clang::PCHContainerOperations>(),
                            makeLintFileSystem());
    tool.setPrintErrorMessage(false);
    tool.setDiagnosticConsumer(&errors);
    for (const tooling::ArgumentsAdjuster &adjuster : adjusters)
      tool.appendArgumentsAdjuster(adjuster);
    auto factory = makeLintActionFactory(here, errors, result.results);
    int status = tool.run(factory.get());
    ++parses[absolutePath(file)];
    result.analysed = result.results.analyzedFiles.contains(absolutePath(file));
    if (result.results.notCompiling.contains(absolutePath(file))) {
      couldNotRun = true;
    } else if (!result.analysed) {
      couldNotRun = true;
      llvm::errs() << "collcheck-lint: error: " << file << ": could not be analysed";
      if (status == 2)
        llvm::errs() << " (no compile command for it; check -p or give flags after --)";
      llvm::errs() << "\n";
      for (const CompileErrorCollector::Error &e : errors.take())
        llvm::errs() << "  " << e.message << "\n";
      result.results.notifications.push_back(
          {"error", file + ": could not be analysed", ReportedLocation{absolutePath(file)}});
    }
  };

  // First what every function of the project does, so that a call into another file is a call
  // of a known function (a reducer wrapper, a rank query, a local mean's source).
  ProjectSummaries summaries;
  const LintConfig baseConfig = config;
  SummaryPassOptions pass;
  pass.cacheDir = summaryCache.empty()     ? defaultSummaryCache()
                  : summaryCache == "none" ? std::string()
                                           : summaryCache.getValue();
  pass.configKey = configText;
  pass.adjusters = adjusters;
  SummaryCache cache(*database, pass);
  auto useSummaries = [&] {
    config = baseConfig;
    summaries.extend(config);
    config.project = &summaries;
  };
  std::vector<std::string> project;           // in the order its summaries are added
  std::map<std::string, FileSummary> byFile;  // the summaries known, by absolute path
  std::set<std::string> withCheck;            // files summarised from their checks' parses
  std::vector<size_t> order(runnable.size()); // of the checks
  std::iota(order.begin(), order.end(), 0);
  SummaryPassStats stats;
  if (!noSummaries) {
    std::set<std::string> seen;
    auto addFile = [&](const std::string &file) {
      std::string absolute = absolutePath(file);
      if (isSourceFile(absolute) && seen.insert(absolute).second)
        project.push_back(absolute);
    };
    for (const std::string &file : runnable)
      addFile(file);
    if (!fixedFlags)
      for (const std::string &file : database->getAllFiles())
        addFile(file);
    // One translation unit alone sees every function it defines: nothing to summarise.
    if (project.size() < 2)
      project.clear();
    // A file to check whose summary is not in the cache (one just changed, or every file of a
    // first run) is summarised from its check's parse: the files not checked are summarised
    // first, then these are checked first, in order, so that the others see their summaries.
    std::set<std::string> checked;
    if (!project.empty())
      for (const std::string &file : runnable)
        checked.insert(absolutePath(file));
    summariseProject(*database, project, checked, baseConfig, pass, cache, byFile, stats);
    for (const std::string &file : project)
      if (checked.contains(file) && !byFile.contains(file) &&
          !database->getCompileCommands(file).empty())
        withCheck.insert(file);
    for (const std::string &file : project)
      if (auto it = byFile.find(file); it != byFile.end())
        summaries.add(it->second);
    useSummaries();
    std::stable_partition(order.begin(), order.end(),
                          [&](size_t i) { return withCheck.contains(absolutePath(runnable[i])); });
  }

  size_t fromChecks = 0, separately = 0;
  for (size_t index : order) {
    std::string file = absolutePath(runnable[index]);
    const bool summarise = withCheck.contains(file) && !byFile.contains(file);
    LintOptions first = options;
    first.config = &config;
    auto known = [&](const FileSummary &summary) {
      byFile[file] = summary;
      summaries.add(summary);
      useSummaries();
    };
    if (summarise) {
      first.summariseFile = file;
      first.summaryConfig = &baseConfig;
      first.summarised = [&](std::vector<std::string> read, const FileSummary &summary) {
        cache.store(file, std::move(read), summary);
        known(summary);
        ++fromChecks;
      };
    }
    summaries.recordInto(noSummaries ? nullptr : &checks[index].lookups);
    check(index, first);
    summaries.recordInto(nullptr);
    // Not summarised by its check (a missing header, which the check skips): by a parse of its
    // own, as the files not checked are.
    if (summarise && !byFile.contains(file)) {
      known(summariseFile(*database, file, baseConfig, pass, cache, stats));
      ++parses[file];
      ++separately;
    }
  }

  // A file checked before some summary it asked for was known is checked again, with the summaries
  // of the whole project added in the order a run with every summary known adds them.
  ProjectSummaries whole;
  LintConfig wholeConfig = baseConfig;
  if (!withCheck.empty()) {
    for (const std::string &file : project)
      if (auto it = byFile.find(file); it != byFile.end())
        whole.add(it->second);
    whole.extend(wholeConfig);
    wholeConfig.project = &whole;
    LintOptions again = options;
    again.config = &wholeConfig;
    for (size_t index : order) {
      if (!checks[index].analysed)
        continue;
      std::string changed = checks[index].lookups.firstChanged(whole, wholeConfig);
      if (changed.empty())
        continue;
      if (debugRechecks)
        llvm::errs() << "collcheck-lint: " << runnable[index] << " is checked again: its answer to "
                     << changed << " changed\n";
      check(index, again);
    }
  }
  if (!quiet && stats.files > 1) {
    // The files not checked that were summarised, each parsed once, and the files checked.
    size_t once = stats.parsed - separately, twice = 0, more = 0;
    for (const auto &[file, count] : parses)
      ++(count == 1 ? once : count == 2 ? twice : more);
    llvm::errs() << "collcheck-lint: summarised " << stats.files << " files (" << stats.fromCache
                 << " from the cache";
    if (fromChecks > 0)
      llvm::errs() << ", " << fromChecks
                   << (fromChecks == 1 ? " with its check" : " with their checks");
    llvm::errs() << ") in " << llvm::format("%.1f", stats.seconds) << " s; parsed " << once
                 << (once == 1 ? " file" : " files") << " once, " << twice << " twice";
    if (more > 0)
      llvm::errs() << ", " << more << " three times";
    llvm::errs() << "\n";
  }

  // By file in the order given, whatever order they were checked in.
  LintResults results;
  for (FileCheck &c : checks) {
    *options.out << c.text;
    std::move(c.results.findings.begin(), c.results.findings.end(),
              std::back_inserter(results.findings));
    std::move(c.results.notifications.begin(), c.results.notifications.end(),
              std::back_inserter(results.notifications));
    results.analyzedFiles.insert(c.results.analyzedFiles.begin(), c.results.analyzedFiles.end());
    results.notCompiling.insert(c.results.notCompiling.begin(), c.results.notCompiling.end());
    results.functionsNotAnalysed += c.results.functionsNotAnalysed;
  }
  options.out->flush();

  if (!sarifPath.empty()) {
    SarifOptions sarif;
    sarif.sourceRoot = sourceRoot;
    sarif.toolVersion = COLLCHECK_VERSION;
    sarif.executionSuccessful = !couldNotRun;
    std::string text = writeSarif(results.findings, results.notifications, sarif);
    if (sarifPath == "-") {
      llvm::outs() << text;
    } else {
      std::error_code ec;
      llvm::raw_fd_ostream out(sarifPath, ec);
      if (ec)
        return usageError("--sarif " + sarifPath + ": " + ec.message());
      out << text;
      if (!written(out, "--sarif " + sarifPath))
        return kCouldNotRun;
    }
  }
  if (!quiet)
    llvm::errs() << "collcheck-lint: " << results.findings.size()
                 << (results.findings.size() == 1 ? " finding" : " findings") << " in "
                 << results.analyzedFiles.size()
                 << (results.analyzedFiles.size() == 1 ? " file" : " files");
  if (!quiet && !results.notCompiling.empty())
    llvm::errs() << "; " << results.notCompiling.size()
                 << (results.notCompiling.size() == 1 ? " file does" : " files do")
                 << " not compile (--allow-compile-errors analyses what parsed)";
  if (!quiet && results.functionsNotAnalysed > 0)
    llvm::errs() << "; " << results.functionsNotAnalysed
                 << (results.functionsNotAnalysed == 1 ? " function" : " functions")
                 << " not analysed (the analysis failed inside)";
  if (!quiet)
    llvm::errs() << "\n";
  if (couldNotRun)
    return kCouldNotRun;
  // Notes (guesses) are shown but do not fail a review.
  bool failing = std::any_of(results.findings.begin(), results.findings.end(),
                             [](const ReportedFinding &f) { return f.level != "note"; });
  return failing ? kFindings : kClean;
}

} // namespace

int main(int argc, const char **argv) {
  int status = lintMain(argc, argv);
  return written(llvm::outs(), "the output to stdout") ? status : kCouldNotRun;
}
