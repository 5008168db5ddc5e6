#include "analyzer/checks/objective/reference_comparison.h"

#include "analyzer/checks/objective/ledger.h"
#include "analyzer/checks/objective/numbers.h"
#include "analyzer/checks/objective/windows.h"

#include <cmath>
#include <map>

namespace collcheck::analyzer::objective {

namespace {

using format::Kind;

// One reduction of one file, with its captured values.
struct FileReduction {
  format::Record call{};
  uint32_t window = 0;
  std::vector<double> input, output;
  std::vector<bool> inputCaptured, outputCaptured;
  ReductionRole role = ReductionRole::Other;
};

// A gradient reduction's compared values: captured outputs times the declared reducer scale.
struct GradientResult {
  format::Record call{};
  std::vector<double> values; // empty: not captured
};

using WindowResults = std::map<uint32_t, std::vector<GradientResult>>;

void store(std::vector<double> &values, std::vector<bool> &captured, uint64_t index, double v) {
  if (index >= 1024)
    return;
  if (values.size() <= index) {
    values.resize(index + 1, NAN);
    captured.resize(index + 1, false);
  }
  values[index] = v;
  captured[index] = true;
}

// Reads one file's reductions and declarations and keeps its gradient results per window.
WindowResults readResults(const TraceFile &file) {
  const format::Reader &reader = *file.reader;
  std::vector<FileReduction> reductions;
  std::map<std::pair<uint64_t, uint64_t>, size_t> byCall; // (comm, seq) -> index
  Ledger declarations; // only its per-window declarations are used (file index 0)
  bool windowAnnotations = false;
  for (uint64_t i = 0; i < reader.slotCount(); ++i) {
    if (!reader.usable(i))
      continue;
    const format::Record &r = reader.slot(i);
    auto kind = static_cast<Kind>(r.kind);
    if (kind == Kind::ValueCapture || kind == Kind::CapturedValues) {
      auto it = byCall.find({r.commId, r.seq()});
      if (it == byCall.end())
        continue;
      FileReduction &fr = reductions[it->second];
      format::CapturedValue values[2 * format::kPackedMaxElements];
      int n = format::capturedValues(r, values);
      for (int k = 0; k < n; ++k) {
        if (values[k].output)
          store(fr.output, fr.outputCaptured, values[k].index, values[k].value);
        else
          store(fr.input, fr.inputCaptured, values[k].index, values[k].value);
      }
      continue;
    }
    if (!format::isSequenced(kind)) {
      windowAnnotations = windowAnnotations || kind == Kind::WindowBegin;
      declarations.meta(0, r, 1);
      continue;
    }
    if (!isWeightedReduction(r) && !hasCountShape(r))
      continue;
    byCall[{r.commId, r.seq()}] = reductions.size();
    FileReduction fr;
    fr.call = r;
    format::CapturedValue held[2 * format::kPackedMaxElements];
    for (int k = 0, n = format::capturedValues(r, held); k < n; ++k) // a call holding its values
      store(held[k].output ? fr.output : fr.input,
            held[k].output ? fr.outputCaptured : fr.inputCaptured, held[k].index, held[k].value);
    fr.window = r.window;
    reductions.push_back(std::move(fr));
  }

  // Roles, as the cross-rank checks read them (windows.h), from this one rank's evidence.
  std::map<std::pair<uint64_t, uint32_t>, bool> floatAfter;
  for (size_t i = reductions.size(); i-- > 0;) {
    FileReduction &fr = reductions[i];
    uint32_t window = windowAnnotations ? fr.window : 0;
    bool &after = floatAfter[{fr.call.commId, window}];
    CountEvidence e;
    std::vector<double> inputs;
    for (size_t k = 0; k < fr.input.size(); ++k)
      inputs.push_back(fr.inputCaptured[k] ? fr.input[k] : NAN);
    e.inputs.push_back(std::move(inputs));
    const Declarations *d = declarations.declarations(fr.window, 0);
    if (windowAnnotations && d && d->countRecords > 0)
      e.declaredCounts.emplace_back(d->validCount, d->lastCount);
    e.followedByGradient = after;
    fr.role = classify(fr.call, e);
    if (isWeightedReduction(fr.call) &&
        isFloatType(static_cast<format::DataType>(fr.call.dataType)))
      after = true;
  }

  WindowResults results;
  std::map<uint64_t, uint32_t> inferred; // per comm, without window annotations
  std::map<uint64_t, bool> gradientSeen;
  for (const FileReduction &fr : reductions) {
    uint32_t window = fr.window;
    if (!windowAnnotations) {
      uint32_t &current = inferred[fr.call.commId];
      bool &seen = gradientSeen[fr.call.commId];
      if (fr.role == ReductionRole::Count && seen) {
        ++current;
        seen = false;
      }
      seen = seen || fr.role == ReductionRole::Gradient;
      window = current;
    }
    if (fr.role != ReductionRole::Gradient)
      continue;
    const Declarations *d = declarations.declarations(windowAnnotations ? fr.window : 0, 0);
    double scale = d && d->hasReducerScale ? d->reducerScale : 1.0;
    GradientResult result;
    result.call = fr.call;
    for (size_t k = 0; k < fr.output.size() && fr.outputCaptured[k]; ++k)
      result.values.push_back(fr.output[k] * scale);
    results[window].push_back(std::move(result));
  }
  return results;
}

bool agree(double a, double b, double tolerance) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b)) + 1e-300;
}

// How one window of one rank differs from the reference; empty when it agrees.
struct Difference {
  std::string what;
  const format::Record *call = nullptr; // the run's reduction, null when the run has none
  bool compared = false;
};

Difference compareWindow(const std::vector<GradientResult> *run,
                         const std::vector<GradientResult> *reference, double tolerance) {
  size_t inRun = run ? run->size() : 0, inReference = reference ? reference->size() : 0;
  Difference d;
  if (inRun != inReference) {
    d.compared = true;
    if (run)
      d.call = &run->front().call;
    if (inReference == 0)
      d.what = "the run reduces " + std::to_string(inRun) +
               " gradient(s) in it, the reference skips it (no valid item?)";
    else if (inRun == 0)
      d.what = "the run reduces no gradient in it, the reference " + std::to_string(inReference);
    else
      d.what = "the run reduces " + std::to_string(inRun) + " gradients in it, the reference " +
               std::to_string(inReference);
    return d;
  }
  for (size_t i = 0; i < inRun; ++i) {
    const GradientResult &a = (*run)[i], &b = (*reference)[i];
    size_t elements = std::min(a.values.size(), b.values.size());
    d.compared = d.compared || elements > 0;
    for (size_t e = 0; e < elements; ++e) {
      if (agree(a.values[e], b.values[e], tolerance))
        continue;
      d.call = &a.call;
      double relative = std::fabs(a.values[e] - b.values[e]) /
                        std::max(std::fabs(a.values[e]), std::fabs(b.values[e]));
      d.what = "gradient reduction " + std::to_string(i + 1) + " (" +
               std::string(format::kindName(static_cast<Kind>(a.call.kind))) + " at seq " +
               std::to_string(a.call.seq()) + ") gives " + formatValue(a.values[e]) +
               ", the reference " + formatValue(b.values[e]) + " (element " + std::to_string(e) +
               ", relative difference " + formatValue(relative) + ")";
      return d;
    }
  }
  return d;
}

// Findings of the comparison (none when every window agrees). False with `error` set when nothing
// could be compared.
bool compare(const JobView &job, const ReferenceRun &ref, std::vector<Finding> &findings,
             std::string &error) {
  const TraceSet &run = job.traces();
  const TraceSet &reference = *ref.traces;
  const double tolerance = ref.tolerance;
  const std::string &referenceName = ref.name;
  if (reference.fatal) {
    error = "cannot be analyzed as one run";
    return false;
  }
  if (reference.files.empty()) {
    error = referenceName + ": no usable trace file";
    return false;
  }
  // The reference is one process; with several, its lowest rank stands for all.
  WindowResults expected = readResults(reference.files.front());
  std::vector<WindowResults> actual;
  for (const TraceFile &f : run.files)
    actual.push_back(readResults(f));

  std::map<uint32_t, bool> windows;
  for (const auto &[w, _] : expected)
    windows[w] = true;
  for (const WindowResults &a : actual)
    for (const auto &[w, _] : a)
      windows[w] = true;

  bool comparedAny = false;
  uint32_t agreeing = 0;
  for (const auto &[window, _] : windows) {
    auto ref = expected.find(window);
    const std::vector<GradientResult> *refList = ref == expected.end() ? nullptr : &ref->second;
    std::vector<int32_t> differing;
    Difference first;
    for (size_t f = 0; f < actual.size(); ++f) {
      auto it = actual[f].find(window);
      Difference d =
          compareWindow(it == actual[f].end() ? nullptr : &it->second, refList, tolerance);
      comparedAny = comparedAny || d.compared;
      if (d.what.empty())
        continue;
      differing.push_back(run.files[f].worldRank);
      if (first.what.empty())
        first = d;
    }
    if (differing.empty()) {
      ++agreeing;
      continue;
    }
    Finding f;
    f.ruleId = "reference-mismatch";
    const rules::Rule *rule = rules::find(f.ruleId);
    f.severity = rule ? rule->severity : Severity::Error;
    if (first.call) {
      f.commId = first.call->commId;
      if (const Communicator *comm = job.communicator(f.commId))
        f.commLabel = comm->label;
      f.hasPosition = true;
      f.firstSeq = f.lastSeq = first.call->seq();
    }
    f.firstWindow = f.lastWindow = window;
    f.message = "window " + std::to_string(window) + " differs from the reference: " + first.what;
    f.groups.push_back({"differs", differing, ""});
    f.notes.push_back(std::to_string(agreeing) + " earlier window(s) agree; compared: each " +
                      "gradient reduction's captured outputs times the declared reducer scale, " +
                      "relative tolerance " + formatValue(tolerance) + ", against " +
                      referenceName);
    f.notes.push_back("the objective checks of the same run say why (uncompensated-mean, "
                      "double-normalization, partial-window, ...)");
    findings.push_back(std::move(f));
    return true; // the first differing window: later ones follow from it
  }
  if (!comparedAny) {
    error = "no captured reduction results to compare: trace both runs with "
            "COLLCHECK_CAPTURE_RESULTS=K (the first K elements of every all-reduce)";
    return false;
  }
  return true;
}

class ReferenceMismatch final : public TraceRule {
public:
  explicit ReferenceMismatch(const ReferenceRun &reference) : reference_(reference) {}
  std::string_view id() const override { return "reference-mismatch"; }
  void onJobEnd(RuleContext &ctx) override {
    std::vector<Finding> differences;
    std::string error;
    if (!compare(ctx.job, reference_, differences, error)) {
      ctx.uncheckable.push_back("--reference " + reference_.name + ": " + error);
      return;
    }
    for (Finding &f : differences)
      ctx.findings.add(std::move(f), "reference");
  }

private:
  ReferenceRun reference_;
};

} // namespace

std::unique_ptr<TraceRule> makeReferenceMismatchRule(const ReferenceRun &reference) {
  return std::make_unique<ReferenceMismatch>(reference);
}

} // namespace collcheck::analyzer::objective
