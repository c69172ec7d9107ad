#include "loom/hlo/pass/HloPassPipeline.h"

#include "loom/hlo/pass/HloVerifier.h"
#include "loom/support/Error.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"

#include <chrono>

namespace loom::hlo {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct TimingRow {
  std::string name;
  double seconds = 0;
};

/// The layout of LLVM's -time-passes report, wall clock only.
void PrintTimingReport(llvm::raw_ostream &os, llvm::StringRef pipeline,
                       const std::vector<TimingRow> &rows) {
  double total = 0;
  for (const TimingRow &row : rows)
    total += row.seconds;
  std::string title = ("HLO pass execution timing report (" + pipeline + ")").str();
  std::string rule = "===" + std::string(73, '-') + "===\n";
  os << rule;
  os.indent(title.size() < 79 ? (79 - title.size()) / 2 : 0) << title << "\n";
  os << rule;
  os << llvm::format("  Total Execution Time: %.4f seconds (wall clock)\n\n", total);
  os << "   ---Wall Time---  --- Name ---\n";
  auto line = [&](double seconds, llvm::StringRef name) {
    double percent = total > 0 ? 100.0 * seconds / total : 0.0;
    os << llvm::format("  %8.4f (%5.1f%%)  ", seconds, percent) << name << "\n";
  };
  for (const TimingRow &row : rows)
    line(row.seconds, row.name);
  line(total, "Total");
  os << "\n";
  os.flush();
}

/// `prefix` before every line of `error`'s message: a verifier report has
/// one problem per line and each must still say which pass it follows.
llvm::Error PrefixLines(const std::string &prefix, llvm::Error error) {
  std::string msg = llvm::toString(std::move(error));
  std::string out;
  llvm::SmallVector<llvm::StringRef, 8> lines;
  llvm::StringRef(msg).split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines)
    out += (out.empty() ? "" : "\n") + prefix + line.str();
  return makeError(out);
}

} // namespace

HloPassInterface &HloPassPipeline::AddPass(std::unique_ptr<HloPassInterface> pass) {
  passes_.push_back(std::move(pass));
  return *passes_.back();
}

llvm::Expected<bool> HloPassPipeline::Run(HloModule &module) {
  llvm::raw_ostream &print_os = options_.print_stream ? *options_.print_stream : llvm::errs();
  llvm::raw_ostream &timing_os = options_.timing_stream ? *options_.timing_stream : llvm::errs();
  std::vector<TimingRow> rows;
  double verify_seconds = 0;
  // The report is printed on every way out: a slow pass that then fails is
  // exactly when the numbers matter.
  auto finish = [&](llvm::Expected<bool> result) -> llvm::Expected<bool> {
    if (options_.time_passes) {
      if (options_.verify_each)
        rows.push_back({"hlo_verifier (after each pass)", verify_seconds});
      PrintTimingReport(timing_os, name_, rows);
    }
    return result;
  };

  bool changed = false;
  for (const std::unique_ptr<HloPassInterface> &pass : passes_) {
    if (remark_stream())
      pass->SetRemarkStream(remark_stream());
    Clock::time_point start = Clock::now();
    llvm::Expected<bool> pass_changed = pass->Run(module);
    rows.push_back({pass->name().str(), SecondsSince(start)});
    if (!pass_changed)
      return finish(
          PrefixLines("pass '" + pass->name().str() + "' failed: ", pass_changed.takeError()));
    changed |= *pass_changed;
    if (options_.print_after_all) {
      print_os << "// -----// IR after " << pass->name()
               << (*pass_changed ? " (changed)" : " (no change)") << " //----- //\n"
               << module.ToString();
      print_os.flush();
    }
    if (options_.verify_each) {
      Clock::time_point verify_start = Clock::now();
      llvm::Error err = VerifyHloModule(module);
      verify_seconds += SecondsSince(verify_start);
      if (err)
        return finish(PrefixLines("after pass '" + pass->name().str() + "': ", std::move(err)));
    }
  }
  return finish(changed);
}

} // namespace loom::hlo
