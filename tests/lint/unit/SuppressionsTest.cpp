#include "support/Suppressions.h"

#include <gtest/gtest.h>

namespace collcheck::lint {
namespace {

TEST(Suppressions, SameLineWithAndWithoutRuleList) {
  Suppressions s("a(); // NOLINT\n"
                 "b(); // NOLINT(uncompensated-mean)\n"
                 "c(); // NOLINT(collcheck-double-normalization, other-rule)\n"
                 "d();\n");
  EXPECT_TRUE(s.suppressed(1, "uncompensated-mean"));
  EXPECT_TRUE(s.suppressed(1, "double-normalization"));
  EXPECT_TRUE(s.suppressed(2, "uncompensated-mean"));
  EXPECT_FALSE(s.suppressed(2, "double-normalization"));
  EXPECT_TRUE(s.suppressed(3, "double-normalization"));
  EXPECT_FALSE(s.suppressed(3, "uncompensated-mean"));
  EXPECT_FALSE(s.suppressed(4, "uncompensated-mean"));
  EXPECT_TRUE(s.problems().empty());
}

TEST(Suppressions, NextLineAndGlobs) {
  Suppressions s("// NOLINTNEXTLINE(collcheck-*)\n"
                 "a();\n"
                 "b();\n"
                 "// NOLINTNEXTLINE(*mean)\n"
                 "c();\n");
  EXPECT_FALSE(s.suppressed(1, "uncompensated-mean"));
  EXPECT_TRUE(s.suppressed(2, "uncompensated-mean"));
  EXPECT_TRUE(s.suppressed(2, "collective-not-reached-by-all-ranks"));
  EXPECT_FALSE(s.suppressed(3, "uncompensated-mean"));
  EXPECT_TRUE(s.suppressed(5, "uncompensated-mean"));
  EXPECT_FALSE(s.suppressed(5, "double-normalization"));
}

TEST(Suppressions, BeginEndBlocks) {
  Suppressions s("x();\n"
                 "// NOLINTBEGIN(uncompensated-mean)\n"
                 "a();\n"
                 "// NOLINTBEGIN\n"
                 "b();\n"
                 "// NOLINTEND\n"
                 "c();\n"
                 "// NOLINTEND(uncompensated-mean)\n"
                 "d();\n");
  EXPECT_FALSE(s.suppressed(1, "uncompensated-mean"));
  EXPECT_TRUE(s.suppressed(3, "uncompensated-mean"));
  EXPECT_FALSE(s.suppressed(3, "double-normalization"));
  EXPECT_TRUE(s.suppressed(5, "double-normalization"));
  EXPECT_TRUE(s.suppressed(7, "uncompensated-mean"));
  EXPECT_FALSE(s.suppressed(7, "double-normalization"));
  EXPECT_FALSE(s.suppressed(9, "uncompensated-mean"));
  EXPECT_TRUE(s.problems().empty());
}

TEST(Suppressions, UnmatchedDirectivesAreProblemsAndSilenceNothing) {
  Suppressions s("// NOLINTBEGIN(uncompensated-mean)\n"
                 "a();\n"
                 "// NOLINTEND(double-normalization)\n");
  EXPECT_FALSE(s.suppressed(2, "uncompensated-mean"));
  ASSERT_EQ(s.problems().size(), 2u);
  EXPECT_EQ(s.problems()[0].line, 3u);
  EXPECT_EQ(s.problems()[1].line, 1u);
}

TEST(Suppressions, LookalikesAreNotDirectives) {
  Suppressions s("a(); // NOLINTX\n"
                 "b(); // NOLINT(unclosed\n");
  EXPECT_FALSE(s.suppressed(1, "uncompensated-mean"));
  EXPECT_FALSE(s.suppressed(2, "uncompensated-mean"));
}

TEST(Glob, Matches) {
  EXPECT_TRUE(globMatch("*", "anything"));
  EXPECT_TRUE(globMatch("collcheck-*", "collcheck-uncompensated-mean"));
  EXPECT_TRUE(globMatch("*-mean", "uncompensated-mean"));
  EXPECT_TRUE(globMatch("a*b*c", "aXbYc"));
  EXPECT_FALSE(globMatch("a*b*c", "aXbY"));
  EXPECT_FALSE(globMatch("mean", "uncompensated-mean"));
}

} // namespace
} // namespace collcheck::lint
