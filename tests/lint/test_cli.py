#!/usr/bin/env python3
"""End-to-end tests of the collcheck-lint command line: exit statuses, SARIF 2.1.0 structure, the
changed-lines mode, compilation databases, files that do not compile, NOLINT problems, CUDA.

    test_cli.py --tool build/bin/collcheck-lint --source-root REPO -- <compile flags>
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ARGS = None
LINT_RULES = {"uncompensated-mean", "double-normalization", "collective-not-reached-by-all-ranks",
              "unguarded-reduced-count-division"}
# Findings at every level: a guess is a finding reported as a note (with its rule id), unlike the
# notes that explain a finding.
DIAGNOSTIC = re.compile(r"^(.*?):(\d+):(\d+): (warning|error|note): .* \[([a-z-]+)\]$", re.M)


def inputs(name):
    return ARGS.source_root / "tests" / "lint" / "inputs" / name


def lint(*args, flags=True, cwd=None, stdin=None, timeout=300):
    command = [str(ARGS.tool), *map(str, args)]
    if flags:
        command += ["--"] + ARGS.flags
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd or ARGS.source_root,
                          input=stdin, timeout=timeout)


def findings(output):
    return sorted((int(m.group(2)), m.group(5)) for m in DIAGNOSTIC.finditer(output))


class ExitStatus(unittest.TestCase):
    def test_clean_file_is_zero(self):
        result = lint(inputs("clean.cpp"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(findings(result.stdout), [])

    def test_a_guess_is_a_note_that_leaves_the_status_zero(self):
        named = ("#include <mpi.h>\n"
                 "double named(double loss_sum, int n_valid, MPI_Comm comm) {\n"
                 "  double mean = loss_sum / n_valid;\n"
                 "  MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_SUM, comm);\n"
                 "  int size = 1;\n"
                 "  MPI_Comm_size(comm, &size);\n"
                 "  return mean / size;\n"
                 "}\n")
        counted = ("double counted(const double *loss, const bool *valid, int n, MPI_Comm comm) {\n"
                   "  double sum = 0.0;\n"
                   "  int n_valid = 0;\n"
                   "  for (int i = 0; i < n; ++i)\n"
                   "    if (valid[i]) {\n"
                   "      sum += loss[i];\n"
                   "      ++n_valid;\n"
                   "    }\n"
                   "  return named(sum, n_valid, comm);\n"
                   "}\n")
        with tempfile.TemporaryDirectory() as tmp:
            alone, called = pathlib.Path(tmp) / "alone.cpp", pathlib.Path(tmp) / "called.cpp"
            alone.write_text(named)
            called.write_text(named + counted)
            guess, flow = lint(alone), lint(called)
        # `named` alone: n_valid is a count by its name only, a note; the status stays 0.
        self.assertEqual(guess.returncode, 0, guess.stdout + guess.stderr)
        self.assertRegex(guess.stdout, r"alone.cpp:4:\d+: note: local mean averaged across ranks "
                                       r"[^\n]*\(a guess: [^\n]*\[uncompensated-mean\]")
        # Called from `counted`, the flow shows that it counts this rank's valid items.
        self.assertEqual(flow.returncode, 1, flow.stdout + flow.stderr)
        self.assertEqual(findings(flow.stdout), [(17, "uncompensated-mean")])
        self.assertRegex(flow.stdout, r"called.cpp:17:\d+: warning: local mean averaged")

    def test_findings_are_one(self):
        result = lint(inputs("findings.cpp"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(findings(result.stdout),
                         [(7, "uncompensated-mean"), (16, "unguarded-reduced-count-division"),
                          (23, "collective-not-reached-by-all-ranks")])

    def test_missing_file_is_two(self):
        result = lint(inputs("no_such_file.cpp"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("no such file", result.stderr)

    def test_missing_file_among_good_ones_is_two(self):
        result = lint(inputs("findings.cpp"), inputs("no_such_file.cpp"))
        self.assertEqual(result.returncode, 2)
        self.assertEqual(len(findings(result.stdout)), 3)  # the readable file is still analysed

    def test_unknown_option_is_two(self):
        self.assertEqual(lint("--no-such-option", inputs("clean.cpp")).returncode, 2)

    def test_unknown_rule_is_two(self):
        result = lint("--disable=no-such-rule", inputs("clean.cpp"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("no-such-rule", result.stderr)

    def test_no_sources_is_two(self):
        self.assertEqual(lint().returncode, 2)

    def test_no_compilation_database_is_two(self):
        with tempfile.TemporaryDirectory() as empty:
            result = lint("-p", empty, inputs("clean.cpp"), flags=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("compile_commands.json", result.stderr)

    def test_unusable_flags_are_two(self):
        result = subprocess.run([str(ARGS.tool), str(inputs("clean.cpp")), "--",
                                 "-fno-such-flag-at-all"], capture_output=True, text=True)
        self.assertEqual(result.returncode, 2)
        self.assertIn("unknown argument", result.stderr)

    def test_unusable_compile_command_is_two(self):
        with tempfile.TemporaryDirectory() as build:
            entry = {"directory": str(ARGS.source_root), "file": str(inputs("clean.cpp")),
                     "arguments": ["c++", "-x", "nonsense", "-c", str(inputs("clean.cpp"))]}
            (pathlib.Path(build) / "compile_commands.json").write_text(json.dumps([entry]))
            result = lint("-p", build, inputs("clean.cpp"), flags=False)
        self.assertEqual(result.returncode, 2)
        self.assertIn("could not be analysed", result.stderr)
        self.assertIn("language not recognized", result.stderr)

    def test_malformed_config_is_two(self):
        with tempfile.TemporaryDirectory() as tmp:
            config = pathlib.Path(tmp) / "bad.json"
            config.write_text('{"reducers": [{"name": "f", "kind": "all-reduce", "sned": 0}]}')
            result = lint("--config", config, inputs("clean.cpp"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("sned", result.stderr)

    def test_disabling_rules(self):
        result = lint("--disable=uncompensated-mean,unguarded-reduced-count-division",
                      inputs("findings.cpp"))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(findings(result.stdout), [(23, "collective-not-reached-by-all-ranks")])
        result = lint("--disable=uncompensated-mean", "--disable=unguarded-reduced-count-division",
                      "--disable=collcheck-collective-not-reached-by-all-ranks",
                      inputs("findings.cpp"))
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_list_rules(self):
        result = lint("--list-rules", flags=False)
        self.assertEqual(result.returncode, 0)
        self.assertEqual({line.split(" ")[0] for line in result.stdout.splitlines()}, LINT_RULES)


class UnwritableOutput(unittest.TestCase):
    # Findings that could not be written are not a clean run, nor a status of 1 from LLVM's fatal
    # error on the stream: the status is 2, with the reason.
    @unittest.skipUnless(os.path.exists("/dev/full"), "needs /dev/full")
    def test_output_on_a_full_device_is_two(self):
        for args in ([], ["--sarif=-"], ["--sarif=/dev/full"]):
            with open("/dev/full", "w") as full:
                command = [str(ARGS.tool), *args, str(inputs("findings.cpp")), "--"] + ARGS.flags
                result = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True,
                                        cwd=ARGS.source_root, timeout=300)
            self.assertEqual(result.returncode, 2, f"{args}: {result.stderr}")
            self.assertIn("cannot write", result.stderr)


ERROR = re.compile(r"^(.*?):(\d+):(\d+): error: (.*) \[clang-diagnostic-error\]$", re.M)


class DoesNotCompile(unittest.TestCase):
    # Like clang-tidy: the errors, each with its place, and exit status 2; nothing analysed.
    def test_errors_are_errors_and_the_status_is_two(self):
        result = lint(inputs("does_not_compile.cpp"))
        self.assertEqual(result.returncode, 2, result.stderr)
        errors = ERROR.findall(result.stdout)
        self.assertGreaterEqual(len(errors), 4, result.stdout)
        self.assertTrue(any("no_such_header.h" in e[3] for e in errors))
        self.assertTrue(any("undeclared_value" in e[3] for e in errors))
        self.assertEqual([f for f in findings(result.stdout) if f[1] != "clang-diagnostic-error"], [])
        self.assertIn("1 file does not compile", result.stderr)

    def test_a_missing_include_path_is_two(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = pathlib.Path(tmp) / "includes.cpp"
            source.write_text('#include "project/config.h"\nint main() { return 0; }\n')
            result = lint(source)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertRegex(result.stdout, r"includes.cpp:1:\d+: error: 'project/config.h' file not "
                                        r"found \[clang-diagnostic-error\]")

    def test_a_bad_language_standard_is_two(self):
        result = subprocess.run([str(ARGS.tool), str(inputs("clean.cpp")), "--", "-std=c++99999"],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("c++99999", result.stdout + result.stderr)

    def test_errors_become_notes_and_the_analysis_goes_on_when_allowed(self):
        result = lint("--allow-compile-errors", inputs("does_not_compile.cpp"))
        self.assertEqual(result.returncode, 0, result.stderr)  # its one finding is a guess
        notes = [l for l in result.stdout.splitlines() if "note: the code does not compile" in l]
        self.assertGreaterEqual(len(notes), 4)
        self.assertTrue(any("no_such_header.h" in n for n in notes))
        self.assertTrue(any("undeclared_value" in n for n in notes))
        self.assertEqual(findings(result.stdout), [(16, "uncompensated-mean")])


class Sarif(unittest.TestCase):
    def run_sarif(self, *extra, cwd=None):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "out.sarif"
            result = lint("--sarif", out, *extra, inputs("findings.cpp"), cwd=cwd)
            self.assertEqual(result.returncode, 1, result.stderr)
            return json.loads(out.read_text())

    def check_structure(self, sarif):
        self.assertEqual(sarif["version"], "2.1.0")
        self.assertIn("sarif-2.1.0", sarif["$schema"])
        self.assertEqual(len(sarif["runs"]), 1)
        run = sarif["runs"][0]
        driver = run["tool"]["driver"]
        self.assertEqual(driver["name"], "collcheck-lint")
        ids = [rule["id"] for rule in driver["rules"]]
        self.assertTrue(LINT_RULES <= set(ids), ids)
        for rule in driver["rules"]:
            self.assertTrue(rule["shortDescription"]["text"])
            self.assertIn(rule["defaultConfiguration"]["level"], ("note", "warning", "error"))
        self.assertIn("%SRCROOT%", run["originalUriBaseIds"])
        self.assertTrue(run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///"))
        for result in run["results"]:
            self.assertIn(result["ruleId"], ids)
            self.assertEqual(ids[result["ruleIndex"]], result["ruleId"])
            self.assertIn(result["level"], ("note", "warning", "error"))
            self.assertTrue(result["message"]["text"])
            self.assertGreaterEqual(len(result["locations"]), 1)
            physical = result["locations"][0]["physicalLocation"]
            uri = physical["artifactLocation"]["uri"]
            self.assertFalse(uri.startswith("/") or "://" in uri, uri)
            self.assertEqual(physical["artifactLocation"]["uriBaseId"], "%SRCROOT%")
            self.assertGreaterEqual(physical["region"]["startLine"], 1)
            self.assertGreaterEqual(physical["region"]["startColumn"], 1)
        return run

    def test_structure_and_results(self):
        run = self.check_structure(self.run_sarif())
        results = {r["ruleId"]: r for r in run["results"]}
        self.assertEqual(set(results), LINT_RULES - {"double-normalization"})
        for result in run["results"]:
            self.assertEqual(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                             "tests/lint/inputs/findings.cpp")
        lines = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
                 for r in run["results"]}
        self.assertEqual(lines["uncompensated-mean"], 7)
        self.assertEqual(lines["unguarded-reduced-count-division"], 16)
        # The flow: where the mean was formed, where the sum was divided by P.
        mean = results["uncompensated-mean"]
        related = [l["physicalLocation"]["region"]["startLine"] for l in mean["relatedLocations"]]
        self.assertEqual(related, [5, 10])
        flow = mean["codeFlows"][0]["threadFlows"][0]["locations"]
        self.assertEqual(len(flow), 2)
        fix = results["unguarded-reduced-count-division"]["fixes"][0]
        replacement = fix["artifactChanges"][0]["replacements"][0]
        self.assertEqual(replacement["insertedContent"]["text"], "(N > 0 ? N : 1)")
        self.assertEqual(replacement["deletedRegion"]["startLine"], 16)
        self.assertTrue(run["invocations"][0]["executionSuccessful"])

    def test_uris_relative_to_the_given_root(self):
        root = ARGS.source_root / "tests" / "lint"
        run = self.check_structure(self.run_sarif("--source-root", root, cwd="/"))
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in run["results"]}
        self.assertEqual(uris, {"inputs/findings.cpp"})

    def test_sarif_on_stdout_moves_diagnostics_to_stderr(self):
        result = lint("--sarif=-", inputs("findings.cpp"))
        self.assertEqual(result.returncode, 1)
        self.check_structure(json.loads(result.stdout))
        self.assertEqual(len(findings(result.stderr)), 3)

    def test_compile_errors_are_notifications(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "out.sarif"
            result = lint("--sarif", out, inputs("does_not_compile.cpp"))
            run = self.check_structure(json.loads(out.read_text()))
        self.assertEqual(result.returncode, 2)
        notes = run["invocations"][0]["toolExecutionNotifications"]
        self.assertFalse(run["invocations"][0]["executionSuccessful"])
        self.assertTrue(any("no_such_header.h" in n["message"]["text"] and n["level"] == "error"
                            for n in notes))

    def test_call_inside_a_macro_argument(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "out.sarif"
            result = lint("--sarif", out, inputs("macro_arguments.cpp"))
            self.assertEqual(result.returncode, 1, result.stderr)
            run = self.check_structure(json.loads(out.read_text()))
        [result] = run["results"]
        self.assertEqual(result["ruleId"], "double-normalization")
        self.assertIn("ncclAllReduce with ncclAvg", result["message"]["text"])
        # The call in `NCCLCHECK(ncclAllReduce(...))`, not the NCCLCHECK before it.
        region = result["locations"][0]["physicalLocation"]["region"]
        self.assertEqual((region["startLine"], region["startColumn"]), (24, 13))
        self.assertEqual((region["endLine"], region["endColumn"]), (24, 79))
        replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
        self.assertEqual(replacement["insertedContent"]["text"], "ncclSum")
        deleted = replacement["deletedRegion"]
        self.assertEqual((deleted["startLine"], deleted["startColumn"], deleted["endColumn"]),
                         (24, 57, 64))


class ChangedLines(unittest.TestCase):
    DIFF = """diff --git a/tests/lint/inputs/findings.cpp b/tests/lint/inputs/findings.cpp
index 1111111..2222222 100644
--- a/tests/lint/inputs/findings.cpp
+++ b/tests/lint/inputs/findings.cpp
@@ -16 +16 @@ double unguarded(double total, long n, MPI_Comm comm) {
-  return total / N;
+  return total / N; // expect: unguarded-reduced-count-division
"""

    def test_only_changed_lines_are_reported(self):
        with tempfile.TemporaryDirectory() as tmp:
            diff = pathlib.Path(tmp) / "change.diff"
            diff.write_text(self.DIFF)
            result = lint("--diff", diff, inputs("findings.cpp"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(findings(result.stdout), [(16, "unguarded-reduced-count-division")])

    def test_diff_on_stdin_picks_the_changed_files(self):
        result = lint("--diff=-", stdin=self.DIFF)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(findings(result.stdout), [(16, "unguarded-reduced-count-division")])

    def test_unchanged_findings_give_a_clean_status(self):
        diff = self.DIFF.replace("@@ -16 +16 @@", "@@ -2 +2 @@")
        result = lint("--diff=-", inputs("findings.cpp"), stdin=diff)
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_git_diff_output(self):
        git = shutil.which("git")
        if not git:
            self.skipTest("git not installed")
        with tempfile.TemporaryDirectory() as tmp:
            old, new = pathlib.Path(tmp) / "old.cpp", pathlib.Path(tmp) / "new.cpp"
            text = inputs("findings.cpp").read_text()
            old.write_text(text.replace("MPI_Comm_rank(comm, &rank);", ""))
            new.write_text(text)
            diff = subprocess.run([git, "diff", "--no-index", "-U0", "old.cpp", "new.cpp"],
                                  capture_output=True, text=True, cwd=tmp).stdout
            self.assertIn("+++ b/new.cpp", diff)
            result = lint("--diff=-", "--source-root", tmp, new, stdin=diff, cwd=tmp)
        self.assertEqual(result.returncode, 0, result.stdout)  # the changed line has no finding

    def test_malformed_diff_is_two(self):
        result = lint("--diff=-", inputs("findings.cpp"), stdin="+++ b/x.cpp\n@@ -1 +oops @@\n")
        self.assertEqual(result.returncode, 2)


class CompilationDatabase(unittest.TestCase):
    def test_files_of_a_database(self):
        with tempfile.TemporaryDirectory() as build:
            entries = [{"directory": str(ARGS.source_root), "file": str(inputs(name)),
                        "arguments": ["c++"] + ARGS.flags + ["-c", str(inputs(name))]}
                       for name in ("findings.cpp", "clean.cpp")]
            (pathlib.Path(build) / "compile_commands.json").write_text(json.dumps(entries))
            result = lint("-p", build, inputs("findings.cpp"), inputs("clean.cpp"), flags=False)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertEqual(len(findings(result.stdout)), 3)
            self.assertIn("3 findings in 2 files", result.stderr)
            # A file the database does not list borrows the flags of its nearest neighbour (its
            # one finding, a guess, is a note: status 0).
            result = lint("-p", build, inputs("unmatched_nolint.cpp"), flags=False)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(findings(result.stdout), [(8, "uncompensated-mean")])


    # A source built into several targets is listed once per target: linted once.
    def test_a_file_listed_twice_is_linted_once(self):
        with tempfile.TemporaryDirectory() as build:
            entry = {"directory": str(ARGS.source_root), "file": str(inputs("findings.cpp")),
                     "arguments": ["c++"] + ARGS.flags + ["-c", str(inputs("findings.cpp"))]}
            (pathlib.Path(build) / "compile_commands.json").write_text(json.dumps([entry, entry]))
            result = lint("-p", build, inputs("findings.cpp"), flags=False)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(len(findings(result.stdout)), 3)

    # nvcc's `-isystem=DIR`, as CMake writes it for CUDA sources, is an include directory.
    def test_nvcc_include_spellings(self):
        includes = [f[2:] for f in ARGS.flags if f.startswith("-I")]
        with tempfile.TemporaryDirectory() as build:
            source = pathlib.Path(build) / "kernel.cu"
            source.write_text("#include <mpi.h>\nint f(MPI_Comm c) { return MPI_Barrier(c); }\n")
            command = (["/usr/local/cuda/bin/nvcc"] + [f"-isystem={d}" for d in includes[:1]] +
                       [f"--include-path={d}" for d in includes[1:]] +
                       ["-std=c++17", "-x", "cu", "-c", str(source), "-o", "kernel.o"])
            (pathlib.Path(build) / "compile_commands.json").write_text(json.dumps(
                [{"directory": build, "file": str(source), "arguments": command}]))
            result = lint("-p", build, "--cuda-fallback", source, flags=False)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


class Suppressions(unittest.TestCase):
    def test_unmatched_nolintbegin_is_reported_and_silences_nothing(self):
        result = lint(inputs("unmatched_nolint.cpp"))
        self.assertEqual(result.returncode, 0)  # the finding rests on a name: a note
        self.assertIn("NOLINTBEGIN without a matching NOLINTEND", result.stdout)
        self.assertEqual(findings(result.stdout), [(8, "uncompensated-mean")])


class LongNames(unittest.TestCase):
    # Clang takes identifiers of any length; every name is matched against the naming patterns.
    def test_a_name_of_300000_characters(self):
        name = "x" * 300000 + "_valid"
        with tempfile.TemporaryDirectory() as tmp:
            source = pathlib.Path(tmp) / "long_name.cpp"
            source.write_text(
                "#include <mpi.h>\n"
                f"double averaged_mean(double loss_sum, int {name}, MPI_Comm comm) {{\n"
                f"  double mean = loss_sum / {name};\n"
                "  double total = 0.0;\n"
                "  MPI_Allreduce(&mean, &total, 1, MPI_DOUBLE, MPI_SUM, comm);\n"
                "  int size = 1;\n"
                "  MPI_Comm_size(comm, &size);\n"
                "  return total / size;\n"
                "}\n")
            result = lint(source)
        # The name makes the count one of this rank's items: a guess, reported as a note.
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertEqual(findings(result.stdout), [(5, "uncompensated-mean")])
        self.assertIn("note: local mean averaged across ranks", result.stdout)


class NestedLoops(unittest.TestCase):
    # Each loop is walked again on every pass of the loops around it. Walked afresh each time,
    # 24 levels took several minutes (doubling with each level); now well under a second.
    def test_24_nested_loops_finish_and_report_the_innermost_finding(self):
        depth = 24
        body = ("g[0] += 1.0; double mean = loss_sum / n_valid; "
                "MPI_Allreduce(MPI_IN_PLACE, &mean, 1, MPI_DOUBLE, MPI_SUM, comm); "
                "g[1] += mean / size;")
        for k in reversed(range(depth)):
            body = f"for (int i{k} = 0; i{k} < n; ++i{k}) {{ {body} }}"
        with tempfile.TemporaryDirectory() as tmp:
            source = pathlib.Path(tmp) / "nested_loops.cpp"
            source.write_text(
                "#include <mpi.h>\n"
                "void f(double *g, int n, double loss_sum, int n_valid, MPI_Comm comm) {\n"
                "  int size = 1;\n"
                "  MPI_Comm_size(comm, &size);\n"
                f"  {body}\n"
                "}\n")
            result = lint(source, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])  # n_valid: a guess
        self.assertEqual(findings(result.stdout), [(5, "uncompensated-mean")])


class Messages(unittest.TestCase):
    def messages(self, body):
        with tempfile.TemporaryDirectory() as tmp:
            source = pathlib.Path(tmp) / "messages.cpp"
            source.write_text("#include <mpi.h>\n#include <cstdlib>\n#include <vector>\n" + body)
            result = lint(source)
        self.assertEqual(result.returncode, 1, result.stderr[-2000:])
        return [line for line in result.stdout.splitlines() if DIAGNOSTIC.match(line)]

    # The range of a range-for is both what bounds the loop and what its count is: said once.
    def test_range_for_names_its_range_once(self):
        [message] = self.messages(
            "std::vector<std::vector<float>> load_batches(int rank);\n"
            "void f(MPI_Comm comm) {\n"
            "  int rank = 0;\n"
            "  MPI_Comm_rank(comm, &rank);\n"
            "  std::vector<std::vector<float>> batches = load_batches(rank);\n"
            "  for (auto &batch : batches)\n"
            "    MPI_Allreduce(MPI_IN_PLACE, batch.data(), 1, MPI_FLOAT, MPI_SUM, comm);\n"
            "}\n")
        self.assertIn("once per element of 'batches', which depends on the rank ('rank');", message)
        self.assertEqual(message.count("batches"), 1, message)

    # A throw caught by the function's own try block: the throwing ranks skip the rest of it.
    def test_caught_throw_is_named(self):
        [message] = self.messages(
            "void f(double *g, int len, MPI_Comm comm) {\n"
            "  int rank = 0;\n"
            "  MPI_Comm_rank(comm, &rank);\n"
            "  try {\n"
            "    if (rank == 0)\n"
            "      throw 1;\n"
            "    MPI_Allreduce(MPI_IN_PLACE, g, len, MPI_DOUBLE, MPI_SUM, comm);\n"
            "  } catch (int) {\n"
            "  }\n"
            "}\n")
        self.assertIn("ranks where 'rank == 0' holds skip it (throw)", message)

    # Two calls down, the finding names the function the throw is taken in, and notes the call.
    def test_throw_inside_a_helper_names_the_helper_that_throws(self):
        [message] = self.messages(
            "static void leave_if_root(int r) {\n"
            "  if (r == 0)\n"
            "    throw 1;\n"
            "}\n"
            "static void check_rank(int r) { leave_if_root(r); }\n"
            "void f(double *g, int len, MPI_Comm comm) {\n"
            "  int rank = 0;\n"
            "  MPI_Comm_rank(comm, &rank);\n"
            "  try {\n"
            "    check_rank(rank);\n"
            "    MPI_Allreduce(MPI_IN_PLACE, g, len, MPI_DOUBLE, MPI_SUM, comm);\n"
            "  } catch (int) {\n"
            "  }\n"
            "}\n")
        self.assertIn("ranks where 'r == 0' holds skip it (throw in 'leave_if_root')", message)

    # A path that ends the process (exit, abort, an uncaught throw) is no skip: no finding.
    def test_paths_that_end_the_process_are_no_finding(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = pathlib.Path(tmp) / "ends.cpp"
            source.write_text(
                "#include <mpi.h>\n#include <cstdlib>\n"
                "void f(double *g, int len, MPI_Comm comm) {\n"
                "  int rank = 0;\n"
                "  MPI_Comm_rank(comm, &rank);\n"
                "  if (rank == 0 && len < 0)\n"
                "    std::exit(1);\n"
                "  if (rank == 1 && len < 0)\n"
                "    throw 1;\n"
                "  MPI_Allreduce(MPI_IN_PLACE, g, len, MPI_DOUBLE, MPI_SUM, comm);\n"
                "}\n")
            result = lint(source)
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_exit_on_the_else_side_names_the_ranks_where_the_condition_fails(self):
        [message] = self.messages(
            "long count_valid(int rank);\n"
            "void f(double *g, int len, MPI_Comm comm) {\n"
            "  int rank = 0;\n"
            "  MPI_Comm_rank(comm, &rank);\n"
            "  long n_valid = count_valid(rank);\n"
            "  if (n_valid > 0)\n"
            "    g[0] /= n_valid;\n"
            "  else\n"
            "    return;\n"
            "  MPI_Allreduce(MPI_IN_PLACE, g, len, MPI_DOUBLE, MPI_SUM, comm);\n"
            "}\n")
        self.assertIn("ranks where 'n_valid > 0' does not hold skip it (return)", message)


class Containment(unittest.TestCase):
    # A failure inside the analysis of one function (forced here) costs that function only: it is
    # reported as not analysed, counted in the summary, and the other functions are analysed.
    def test_a_failing_function_is_reported_and_the_rest_is_analysed(self):
        result = lint("--debug-fail-in=unguarded", inputs("findings.cpp"))
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertRegex(result.stdout, r"findings.cpp:\d+:\d+: note: 'unguarded' "
                                        r"was not analysed: the analysis failed inside it")
        self.assertIn("1 function not analysed", result.stderr)
        self.assertEqual(findings(result.stdout),
                         [(7, "uncompensated-mean"), (23, "collective-not-reached-by-all-ranks")])
        self.assertNotIn("Stack dump", result.stderr)


class Cuda(unittest.TestCase):
    # What code written for nvcc and CUDA 13 uses beyond Clang 19 (lint/cuda/compat).
    def test_cuda13_features_parse_with_no_error(self):
        cuda = pathlib.Path("/usr/local/cuda")
        if not (cuda / "include" / "cuda_runtime.h").exists():
            self.skipTest("no CUDA installation at /usr/local/cuda")
        result = subprocess.run([str(ARGS.tool), f"--cuda-path={cuda}",
                                 str(inputs("cuda13_features.cu")), "--", "-std=c++17"],
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-2000:])
        self.assertNotIn("error", result.stdout)

    def test_fallback_declarations(self):
        source = ARGS.source_root / "tests" / "lint" / "corpus" / "cuda_host.cu"
        for extra in (["--cuda-fallback"], ["--cuda-path=/nonexistent"], []):
            result = lint(*extra, source)
            self.assertEqual(result.returncode, 0, extra)  # both rest on names: notes
            self.assertNotIn("does not compile", result.stdout, extra)
            self.assertEqual(findings(result.stdout),
                             [(16, "uncompensated-mean"), (23, "uncompensated-mean")], extra)

class WholeProject(unittest.TestCase):
    """With a compilation database every translation unit is summarised first: reducer wrappers,
    size queries, local means and collectives defined in other files are known at their calls."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = pathlib.Path(self.tmp.name)
        self.src = self.root / "src"
        shutil.copytree(ARGS.source_root / "tests" / "lint" / "project", self.src)
        self.build = self.root / "build"
        self.build.mkdir()
        self.cache = self.root / "cache"
        entries = [{"directory": str(self.src), "file": str(self.src / name),
                    "arguments": ["c++"] + ARGS.flags + ["-c", name]}
                   for name in ("sync.cpp", "loss.cpp", "train.cpp")]
        (self.build / "compile_commands.json").write_text(json.dumps(entries))

    def tearDown(self):
        self.tmp.cleanup()

    def expected(self):
        text = (self.src / "train.cpp").read_text()
        return sorted((number, m.group(1)) for number, line in enumerate(text.splitlines(), 1)
                      for m in [re.search(r"// expect: ([a-z-]+)", line)] if m)

    def run_lint(self, *extra):
        return lint("-p", self.build, "--summary-cache", self.cache, *extra,
                    self.src / "train.cpp", flags=False, cwd=self.root)

    def test_calls_into_other_files_are_checked(self):
        result = self.run_lint()
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual(len(self.expected()), 7)
        self.assertEqual(findings(result.stdout), self.expected(), result.stdout)
        # train.cpp, not in the cache, is summarised from its check's own parse: sync.cpp and
        # loss.cpp are parsed once for their summaries, train.cpp once for its check.
        self.assertIn("summarised 3 files (0 from the cache, 1 with its check) in ", result.stderr)
        self.assertIn(" s; parsed 3 files once, 0 twice\n", result.stderr)
        # The wrapper is named with what it does and where it is defined.
        self.assertIn("by sync_mean with its MPI_Allreduce with MPI_SUM, then a division by the "
                      "communicator size (sync.cpp:6)", result.stdout)

    def test_without_summaries_the_other_files_are_unknown(self):
        result = self.run_lint("--no-summaries")
        self.assertEqual(findings(result.stdout), [], result.stdout)
        self.assertNotIn("summarised", result.stderr)

    def test_the_cache_follows_file_contents(self):
        self.assertEqual(self.run_lint().returncode, 1)
        again = self.run_lint()
        self.assertIn("summarised 3 files (3 from the cache) in ", again.stderr)
        self.assertIn(" s; parsed 1 file once, 0 twice\n", again.stderr)
        self.assertEqual(findings(again.stdout), self.expected(), again.stdout)
        # sync_mean no longer divides: a sum of local means is no finding where it is called.
        sync = self.src / "sync.cpp"
        sync.write_text(sync.read_text().replace("return total / size;", "return total;"))
        changed = self.run_lint()
        self.assertIn("summarised 3 files (2 from the cache) in ", changed.stderr)
        self.assertIn(" s; parsed 2 files once, 0 twice\n", changed.stderr)
        self.assertEqual(findings(changed.stdout),
                         [f for f in self.expected() if f[0] not in self.sync_mean_lines()],
                         changed.stdout)
        # A header every file includes: every summary is computed again.
        header = self.src / "sync.h"
        header.write_text(header.read_text() + "\n// changed\n")
        after = self.run_lint()
        self.assertIn("summarised 3 files (0 from the cache, 1 with its check) in ", after.stderr)
        self.assertIn(" s; parsed 3 files once, 0 twice\n", after.stderr)
        self.assertEqual(findings(after.stdout),
                         [f for f in self.expected() if f[0] not in self.sync_mean_lines()])
        # The check of train.cpp stored its summary: nothing is parsed twice next time.
        self.assertIn("summarised 3 files (3 from the cache)", self.run_lint().stderr)

    def check_all(self, *names, cache="none"):
        files = [self.src / n for n in names if n.endswith(".cpp")]
        options = [n for n in names if n.startswith("--")]
        return lint("-p", self.build, "--summary-cache", cache, *options, *files, flags=False,
                    cwd=self.root)

    def findings_by_file(self, stdout):
        return sorted((pathlib.Path(m.group(1)).name, int(m.group(2)), m.group(5))
                      for m in DIAGNOSTIC.finditer(stdout))

    def test_a_file_checked_before_its_callees_is_checked_again(self):
        # Cold, every file checked: train.cpp first, before sync.cpp and loss.cpp are summarised,
        # so its calls into them are unknown at its first check; it is parsed a second time, with
        # every summary, and that check's findings replace the first's.
        result = self.check_all("train.cpp", "sync.cpp", "loss.cpp", "--debug-rechecks")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        # Said with the first question whose answer the files checked after it changed.
        self.assertRegex(result.stderr, r"train\.cpp is checked again: its answer to "
                                        r"(function|overrides|storage|table) \S+ changed")
        self.assertNotIn("sync.cpp is checked again", result.stderr)
        self.assertNotIn("loss.cpp is checked again", result.stderr)
        self.assertIn("summarised 3 files (0 from the cache, 3 with their checks) in ",
                      result.stderr)
        self.assertIn(" s; parsed 2 files once, 1 twice\n", result.stderr)
        self.assertEqual([(line, rule) for name, line, rule in self.findings_by_file(result.stdout)
                          if name == "train.cpp"], self.expected(), result.stdout)
        # By file in the order given.
        order = [pathlib.Path(m.group(1)).name for m in DIAGNOSTIC.finditer(result.stdout)]
        self.assertEqual(order, sorted(order, key=["train.cpp", "sync.cpp", "loss.cpp"].index))
        # The same findings as one file at a time with every other file summarised.
        alone = sorted(f for name in ("train.cpp", "sync.cpp", "loss.cpp")
                       for f in self.findings_by_file(self.check_all(name).stdout))
        self.assertEqual(self.findings_by_file(result.stdout), alone)

    def test_callees_checked_first_need_no_second_parse(self):
        result = self.check_all("sync.cpp", "loss.cpp", "train.cpp")
        self.assertIn("summarised 3 files (0 from the cache, 3 with their checks) in ",
                      result.stderr)
        self.assertIn(" s; parsed 3 files once, 0 twice\n", result.stderr)
        self.assertEqual([(line, rule) for name, line, rule in self.findings_by_file(result.stdout)
                          if name == "train.cpp"], self.expected(), result.stdout)
        # With the cache: the first run stores every summary, the next parses each file once.
        self.check_all("train.cpp", "sync.cpp", "loss.cpp", cache=self.cache)
        warm = self.check_all("train.cpp", "sync.cpp", "loss.cpp", cache=self.cache)
        self.assertIn("summarised 3 files (3 from the cache) in ", warm.stderr)
        self.assertIn(" s; parsed 3 files once, 0 twice\n", warm.stderr)
        self.assertEqual(self.findings_by_file(warm.stdout),
                         self.findings_by_file(result.stdout))

    def test_no_cache(self):
        result = lint("-p", self.build, "--summary-cache", "none", self.src / "train.cpp",
                      flags=False, cwd=self.root)
        self.assertEqual(findings(result.stdout), self.expected(), result.stdout)
        self.assertFalse(self.cache.exists())

    def sync_mean_lines(self):
        text = (self.src / "train.cpp").read_text().splitlines()
        return {i for i, line in enumerate(text, 1) if "sync_mean(" in line}


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True, type=pathlib.Path)
    parser.add_argument("--source-root", required=True, type=pathlib.Path)
    parser.add_argument("flags", nargs=argparse.REMAINDER)
    ARGS, rest = parser.parse_known_args()
    if ARGS.flags and ARGS.flags[0] == "--":
        ARGS.flags = ARGS.flags[1:]
    ARGS.tool = ARGS.tool.resolve()
    ARGS.source_root = ARGS.source_root.resolve()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
