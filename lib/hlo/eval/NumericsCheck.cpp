//===- NumericsCheck.cpp - Run two modules on the same inputs and compare -===//

#include "loom/hlo/eval/NumericsCheck.h"

#include "loom/hlo/eval/Interpreter.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/support/Error.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace loom::hlo {
namespace {

std::string FormatDouble(double v, PrimitiveType type) {
  char buf[64];
  // Enough digits to tell any two f32 (or f64) values apart.
  std::snprintf(buf, sizeof buf, type == PrimitiveType::F64 ? "%.17g" : "%.9g", v);
  return buf;
}

std::string FormatElement(const Literal &literal, int64_t i) {
  PrimitiveType type = literal.element_type();
  if (type == PrimitiveType::PRED)
    return literal.GetAsBool(i) ? "true" : "false";
  if (IsComplexType(type)) {
    std::complex<double> c = literal.GetAsComplex(i);
    return "(" + FormatDouble(c.real(), type) + ", " + FormatDouble(c.imag(), type) + ")";
  }
  if (IsFloatingPointType(type))
    return FormatDouble(literal.GetAsDouble(i), type);
  if (IsUnsignedIntegralType(type))
    return std::to_string(literal.GetAsUint64(i));
  return std::to_string(literal.GetAsInt64(i));
}

std::string FormatMultiIndex(llvm::ArrayRef<int64_t> dims, int64_t linear) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] ? linear % dims[d] : 0;
    linear = dims[d] ? linear / dims[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d)
    s += (d ? "," : "") + std::to_string(index[d]);
  return s + "]";
}

std::string FormatPath(llvm::ArrayRef<int64_t> path) {
  if (path.empty())
    return "output";
  std::string s = "output {";
  for (size_t i = 0; i < path.size(); ++i)
    s += (i ? "," : "") + std::to_string(path[i]);
  return s + "}";
}

// Absolute and relative error of one element, and whether it is in
// tolerance. Both NaN, or the same infinity, is a match with error 0.
struct ElementError {
  double abs = 0;
  double rel = 0;
  bool ok = true;
};

ElementError CompareFloat(std::complex<double> a, std::complex<double> b, Tolerance tol) {
  auto is_nan = [](std::complex<double> z) { return std::isnan(z.real()) || std::isnan(z.imag()); };
  if (is_nan(a) || is_nan(b)) {
    bool both = is_nan(a) && is_nan(b);
    double inf = std::numeric_limits<double>::infinity();
    return both ? ElementError{} : ElementError{inf, inf, false};
  }
  if (a == b)
    return {};
  double abs = std::abs(a - b);
  double mag = std::abs(b);
  double rel = mag == 0 ? std::numeric_limits<double>::infinity() : abs / mag;
  // An infinity against anything else gives inf or NaN here: a mismatch.
  bool ok = std::isfinite(abs) && abs <= tol.atol + tol.rtol * mag;
  return {abs, rel, ok};
}

ElementError CompareExact(const Literal &reference, const Literal &candidate, int64_t i) {
  PrimitiveType type = reference.element_type();
  if (IsUnsignedIntegralType(type)) {
    uint64_t a = candidate.GetAsUint64(i), b = reference.GetAsUint64(i);
    if (a == b)
      return {};
    double abs = static_cast<double>(a > b ? a - b : b - a);
    return {abs, b ? abs / static_cast<double>(b) : std::numeric_limits<double>::infinity(), false};
  }
  int64_t a = candidate.GetAsInt64(i), b = reference.GetAsInt64(i);
  if (a == b)
    return {};
  double abs = std::fabs(static_cast<double>(a) - static_cast<double>(b));
  double mag = std::fabs(static_cast<double>(b));
  return {abs, mag ? abs / mag : std::numeric_limits<double>::infinity(), false};
}

Tolerance EffectiveTolerance(PrimitiveType type, const NumericsCheckOptions &options) {
  Tolerance tol = DefaultTolerance(type);
  if (IsFloatingPointType(type) || IsComplexType(type)) {
    tol.rtol = options.rtol.value_or(tol.rtol);
    tol.atol = options.atol.value_or(tol.atol);
  }
  return tol;
}

void CompareArrays(const Literal &reference, const Literal &candidate,
                   const NumericsCheckOptions &options, const std::string &where,
                   ComparisonSummary &summary) {
  PrimitiveType type = reference.element_type();
  bool inexact = IsFloatingPointType(type) || IsComplexType(type);
  Tolerance tol = EffectiveTolerance(type, options);
  for (int64_t i = 0; i < reference.element_count(); ++i) {
    ElementError e = inexact
                         ? CompareFloat(candidate.GetAsComplex(i), reference.GetAsComplex(i), tol)
                         : CompareExact(reference, candidate, i);
    ++summary.elements_compared;
    summary.max_abs_error = std::max(summary.max_abs_error, e.abs);
    summary.max_rel_error = std::max(summary.max_rel_error, e.rel);
    if (e.ok)
      continue;
    if (summary.elements_differing++ != 0)
      continue;
    summary.first_mismatch =
        llvm::formatv("{0}, element {1} (index {2}): reference {3}, candidate {4}", where, i,
                      FormatMultiIndex(reference.shape().dimensions(), i),
                      FormatElement(reference, i), FormatElement(candidate, i))
            .str();
    summary.first_mismatch +=
        inexact ? llvm::formatv(" ({0}: rtol {1}, atol {2})", PrimitiveTypeName(type),
                                FormatDouble(tol.rtol, PrimitiveType::F32),
                                FormatDouble(tol.atol, PrimitiveType::F32))
                      .str()
                : " (" + PrimitiveTypeName(type).str() + ": exact)";
  }
}

llvm::Error CompareRecursive(const Literal &reference, const Literal &candidate,
                             const NumericsCheckOptions &options, llvm::StringRef where,
                             std::vector<int64_t> &path, ComparisonSummary &summary) {
  std::string here = (where.empty() ? "" : where.str() + ", ") + FormatPath(path);
  if (!reference.shape().Compatible(candidate.shape()))
    return makeError(here + ": the shapes differ: reference " + reference.shape().ToString(false) +
                     ", candidate " + candidate.shape().ToString(false));
  if (reference.IsTuple()) {
    const auto &ref_elements = reference.tuple_elements();
    const auto &cand_elements = candidate.tuple_elements();
    for (size_t i = 0; i < ref_elements.size(); ++i) {
      path.push_back(static_cast<int64_t>(i));
      llvm::Error err =
          CompareRecursive(ref_elements[i], cand_elements[i], options, where, path, summary);
      path.pop_back();
      if (err)
        return err;
    }
    return llvm::Error::success();
  }
  if (!reference.IsToken())
    CompareArrays(reference, candidate, options, here, summary);
  return llvm::Error::success();
}

llvm::Error CheckSameParameters(const HloModule &reference, const HloModule &candidate) {
  const HloComputation *ref_entry = reference.entry_computation();
  const HloComputation *cand_entry = candidate.entry_computation();
  if (!ref_entry || !cand_entry)
    return makeError("a module has no entry computation");
  if (ref_entry->num_parameters() != cand_entry->num_parameters())
    return makeError(llvm::formatv("the modules take different parameters: {0} vs {1}",
                                   ref_entry->num_parameters(), cand_entry->num_parameters()));
  for (int64_t p = 0; p < ref_entry->num_parameters(); ++p) {
    const Shape &a = ref_entry->parameter_instruction(p)->shape();
    const Shape &b = cand_entry->parameter_instruction(p)->shape();
    if (!a.Compatible(b))
      return makeError(llvm::formatv("parameter {0} differs: {1} vs {2}", p, a.ToString(false),
                                     b.ToString(false)));
  }
  SpmdLayout ref_layout = SpmdLayout::FromModule(reference);
  SpmdLayout cand_layout = SpmdLayout::FromModule(candidate);
  if (ref_layout.replica_count != cand_layout.replica_count ||
      ref_layout.num_partitions != cand_layout.num_partitions)
    return makeError(llvm::formatv("the modules run on different devices: replica_count {0} "
                                   "num_partitions {1} vs replica_count {2} num_partitions {3}",
                                   ref_layout.replica_count, ref_layout.num_partitions,
                                   cand_layout.replica_count, cand_layout.num_partitions));
  return llvm::Error::success();
}

llvm::Expected<std::vector<Literal>> Run(const HloModule &module, llvm::StringRef role,
                                         llvm::StringRef name,
                                         const std::vector<std::vector<Literal>> &args,
                                         const EvalOptions &options) {
  auto results = RunSpmd(module, args, options, nullptr);
  if (!results)
    return makeError("cannot run the " + role + " module" +
                     (name.empty() ? std::string() : (" (" + name + ")").str()) + ": " +
                     llvm::toString(results.takeError()));
  return results;
}

} // namespace

Tolerance DefaultTolerance(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::F64:
  case PrimitiveType::C128:
    return {1e-12, 1e-12};
  case PrimitiveType::F32:
  case PrimitiveType::C64:
    return {1e-5, 1e-6};
  case PrimitiveType::F16:
    return {1e-3, 1e-3};
  case PrimitiveType::BF16:
    return {1e-2, 1e-2};
  default:
    // f8 and f4 types: 3 or fewer mantissa bits; integers and pred are
    // never compared with a tolerance.
    return IsFloatingPointType(type) ? Tolerance{1.25e-1, 1e-1} : Tolerance{0, 0};
  }
}

void ComparisonSummary::Merge(const ComparisonSummary &other) {
  if (first_mismatch.empty())
    first_mismatch = other.first_mismatch;
  elements_compared += other.elements_compared;
  elements_differing += other.elements_differing;
  max_abs_error = std::max(max_abs_error, other.max_abs_error);
  max_rel_error = std::max(max_rel_error, other.max_rel_error);
}

std::string ComparisonSummary::ToString() const {
  return llvm::formatv("{0} elements compared, {1} differ; largest absolute error {2}, "
                       "largest relative error {3}",
                       elements_compared, elements_differing,
                       FormatDouble(max_abs_error, PrimitiveType::F32),
                       FormatDouble(max_rel_error, PrimitiveType::F32))
      .str();
}

llvm::Expected<ComparisonSummary> CompareLiterals(const Literal &reference,
                                                  const Literal &candidate,
                                                  const NumericsCheckOptions &options,
                                                  llvm::StringRef where) {
  ComparisonSummary summary;
  std::vector<int64_t> path;
  if (auto err = CompareRecursive(reference, candidate, options, where, path, summary))
    return err;
  return summary;
}

llvm::Expected<ComparisonSummary> CompareDeviceResults(const std::vector<Literal> &reference,
                                                       const std::vector<Literal> &candidate,
                                                       const NumericsCheckOptions &options) {
  if (reference.size() != candidate.size())
    return makeError(
        llvm::formatv("the runs have {0} and {1} devices", reference.size(), candidate.size()));
  ComparisonSummary total;
  for (size_t d = 0; d < reference.size(); ++d) {
    auto summary =
        CompareLiterals(reference[d], candidate[d], options, "device " + std::to_string(d));
    if (!summary)
      return summary.takeError();
    total.Merge(*summary);
  }
  return total;
}

llvm::Expected<ComparisonSummary> CompareModules(const HloModule &reference,
                                                 const HloModule &candidate,
                                                 const std::vector<std::vector<Literal>> &args,
                                                 const NumericsCheckOptions &options) {
  if (auto err = CheckSameParameters(reference, candidate))
    return makeError("cannot compare the modules: " + llvm::toString(std::move(err)));
  auto ref_results = Run(reference, "reference", options.reference_name, args, options.eval);
  if (!ref_results)
    return ref_results.takeError();
  auto cand_results = Run(candidate, "candidate", options.candidate_name, args, options.eval);
  if (!cand_results)
    return cand_results.takeError();
  return CompareDeviceResults(*ref_results, *cand_results, options);
}

llvm::Error CheckNumerics(const HloModule &reference, const HloModule &candidate,
                          const NumericsCheckOptions &options, llvm::raw_ostream &log) {
  auto args = MakeRandomArguments(reference, options.seed, options.eval);
  if (!args)
    return args.takeError();
  auto summary = CompareModules(reference, candidate, *args, options);
  if (!summary)
    return summary.takeError();
  log << "numerics (seed " << options.seed << "): " << summary->ToString() << "\n";
  if (!summary->ok())
    return makeError("numerics differ: " + summary->first_mismatch + "; " + summary->ToString());
  return llvm::Error::success();
}

} // namespace loom::hlo
