// collcheck rules / collcheck explain RULE: the rule catalogue on the terminal.
#include "cli/commands.h"
#include "rules/catalogue.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace collcheck::cli {

int rulesMain(Args args) {
  if (!args.empty() && std::string_view(args[0]) != "--help") {
    std::fprintf(stderr, "collcheck rules: takes no arguments\n");
    return 2;
  }
  if (!args.empty()) {
    std::printf("usage: collcheck rules\nLists every rule: id, severity, checker, title.\n");
    return 0;
  }
  size_t width = 0;
  for (const rules::Rule &r : rules::catalogue())
    width = std::max(width, r.id.size());
  for (const rules::Rule &r : rules::catalogue())
    std::printf("%-*s  %-7s  %-8s  %s\n", static_cast<int>(width), r.id.c_str(),
                std::string(rules::severityName(r.severity)).c_str(), r.checker.c_str(),
                r.title.c_str());
  return 0;
}

int explainMain(Args args) {
  if (args.size() != 1 || std::string_view(args[0]) == "--help") {
    std::fprintf(args.size() == 1 ? stdout : stderr,
                 "usage: collcheck explain RULE\nPrints the rule's page (see collcheck rules).\n");
    return args.size() == 1 ? 0 : 2;
  }
  const rules::Rule *rule = rules::find(args[0]);
  if (!rule) {
    std::fprintf(stderr, "collcheck explain: no rule '%s' (collcheck rules lists them)\n", args[0]);
    return 2;
  }
  std::printf("%s  [%s, %s]\n%s\n\n%s", rule->title.c_str(),
              std::string(rules::severityName(rule->severity)).c_str(), rule->checker.c_str(),
              rule->summary.c_str(), rule->page.c_str());
  return 0;
}

} // namespace collcheck::cli
