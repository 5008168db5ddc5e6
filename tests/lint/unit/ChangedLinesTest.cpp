#include "support/ChangedLines.h"

#include <gtest/gtest.h>

namespace collcheck::lint {
namespace {

TEST(ChangedLines, ZeroContextDiff) {
  const char *diff = "diff --git a/src/train.cpp b/src/train.cpp\n"
                     "index 1..2 100644\n"
                     "--- a/src/train.cpp\n"
                     "+++ b/src/train.cpp\n"
                     "@@ -10,0 +11,2 @@ void step() {\n"
                     "+  a();\n"
                     "+  b();\n"
                     "@@ -20 +22 @@\n"
                     "-  old();\n"
                     "+  new_();\n"
                     "@@ -30,2 +31,0 @@\n"
                     "-  gone();\n"
                     "-  gone_too();\n";
  ChangedLines lines;
  std::string error;
  ASSERT_TRUE(ChangedLines::parse(diff, lines, error)) << error;
  EXPECT_FALSE(lines.contains("src/train.cpp", 10));
  EXPECT_TRUE(lines.contains("src/train.cpp", 11));
  EXPECT_TRUE(lines.contains("src/train.cpp", 12));
  EXPECT_FALSE(lines.contains("src/train.cpp", 13));
  EXPECT_TRUE(lines.contains("src/train.cpp", 22));
  EXPECT_FALSE(lines.contains("src/train.cpp", 31));
  EXPECT_FALSE(lines.contains("src/other.cpp", 11));
  EXPECT_EQ(lines.files(), std::vector<std::string>{"src/train.cpp"});
}

TEST(ChangedLines, ContextLinesAreNotChanges) {
  const char *diff = "--- a/x.cu\n"
                     "+++ b/x.cu\n"
                     "@@ -1,4 +1,5 @@\n"
                     " one\n"
                     "-two\n"
                     "+TWO\n"
                     "+two and a half\n"
                     " three\n"
                     " four\n";
  ChangedLines lines;
  std::string error;
  ASSERT_TRUE(ChangedLines::parse(diff, lines, error)) << error;
  EXPECT_FALSE(lines.contains("x.cu", 1));
  EXPECT_TRUE(lines.contains("x.cu", 2));
  EXPECT_TRUE(lines.contains("x.cu", 3));
  EXPECT_FALSE(lines.contains("x.cu", 4));
}

TEST(ChangedLines, NewAndDeletedFiles) {
  const char *diff = "--- /dev/null\n"
                     "+++ b/new.cpp\n"
                     "@@ -0,0 +1,2 @@\n"
                     "+a\n"
                     "+b\n"
                     "--- a/old.cpp\n"
                     "+++ /dev/null\n"
                     "@@ -1,1 +0,0 @@\n"
                     "-gone\n";
  ChangedLines lines;
  std::string error;
  ASSERT_TRUE(ChangedLines::parse(diff, lines, error)) << error;
  EXPECT_TRUE(lines.contains("new.cpp", 1));
  EXPECT_TRUE(lines.contains("new.cpp", 2));
  EXPECT_EQ(lines.files(), std::vector<std::string>{"new.cpp"});
}

TEST(ChangedLines, MalformedHunkHeader) {
  ChangedLines lines;
  std::string error;
  EXPECT_FALSE(ChangedLines::parse("+++ b/a.cpp\n@@ -1 +x @@\n", lines, error));
  EXPECT_NE(error.find("malformed hunk header"), std::string::npos);
}

} // namespace
} // namespace collcheck::lint
