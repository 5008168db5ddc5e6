#include "engine/Check.h"

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

namespace collcheck::lint {

Finding Check::finding(const clang::Expr *at, std::string message) const {
  Finding f;
  f.ruleId = ruleId_;
  f.loc = at->getExprLoc();
  f.range = at->getSourceRange();
  f.message = std::move(message);
  return f;
}

clang::CharSourceRange writtenRange(clang::SourceRange range, const clang::SourceManager &sm,
                                    const clang::LangOptions &lang) {
  // Lexer::makeFileCharRange alone would widen an expression that fills a whole macro argument to
  // the macro's use.
  auto argumentSpelling = [&](clang::SourceLocation loc) {
    while (loc.isMacroID() && sm.isMacroArgExpansion(loc))
      loc = sm.getImmediateSpellingLoc(loc);
    return loc;
  };
  clang::SourceLocation begin = argumentSpelling(range.getBegin());
  clang::SourceLocation end = argumentSpelling(range.getEnd());
  if (begin.isFileID() != end.isFileID())
    return {};
  return clang::Lexer::makeFileCharRange(clang::CharSourceRange::getTokenRange(begin, end), sm,
                                         lang);
}

std::string sourceText(const clang::Stmt *s, const clang::ASTContext &context, size_t limit) {
  if (!s)
    return {};
  const clang::SourceManager &sm = context.getSourceManager();
  clang::CharSourceRange range = writtenRange(s->getSourceRange(), sm, context.getLangOpts());
  if (range.isInvalid())
    range = clang::CharSourceRange::getTokenRange(sm.getExpansionRange(s->getBeginLoc()).getBegin(),
                                                  sm.getExpansionRange(s->getEndLoc()).getEnd());
  std::string text = clang::Lexer::getSourceText(range, sm, context.getLangOpts()).str();
  std::string compact;
  for (char c : text) {
    if (c == '\n' || c == '\t' || c == '\r')
      c = ' ';
    if (c == ' ' && !compact.empty() && compact.back() == ' ')
      continue;
    compact += c;
  }
  if (compact.size() > limit)
    compact = compact.substr(0, limit - 3) + "...";
  return compact;
}

std::string quoted(const clang::NamedDecl *d) {
  if (!d || !d->getDeclName().isIdentifier())
    return "the value";
  return "'" + d->getName().str() + "'";
}

} // namespace collcheck::lint
