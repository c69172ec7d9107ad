//===- EvalWindow.cpp - reduce-window and select-and-scatter --------------===//
//
// Windows follow XLA's HloEvaluator: a window position that falls into
// padding or into a hole of the base dilation contributes nothing (the init
// value is folded once, first); window positions are visited in row-major
// order.
//
//===----------------------------------------------------------------------===//

#include "EvalInternal.h"
#include "ElementTypes.h"

#include "llvm/ADT/StringExtras.h"

#include <limits>

namespace loom::hlo {
namespace {

struct WindowDimension {
  int64_t size = 1, stride = 1, pad_low = 0, pad_high = 0, base_dilation = 1,
          window_dilation = 1;
  bool reversal = false;
};

/// `window={size=2x2 stride=1x2 pad=0_1x-1_0 lhs_dilate=1x1 rhs_dilate=1x1}`.
llvm::Expected<std::vector<WindowDimension>> ParseWindow(const HloInstruction &inst,
                                                         int64_t rank) {
  std::vector<WindowDimension> dims(rank);
  const HloText *text = inst.FindAttribute("window");
  if (!text) {
    if (rank == 0)
      return dims;
    return EvalError(inst, "missing window");
  }
  llvm::StringRef body = llvm::StringRef(*text).trim();
  if (!body.consume_front("{") || !body.consume_back("}"))
    return EvalError(inst, "malformed window '" + *text + "'");
  llvm::SmallVector<llvm::StringRef, 8> fields;
  body.split(fields, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef field : fields) {
    auto [key, value] = field.split('=');
    llvm::SmallVector<llvm::StringRef, 8> parts;
    value.split(parts, 'x');
    if (static_cast<int64_t>(parts.size()) != rank)
      return EvalError(inst, "window field '" + key + "' has " + llvm::Twine(parts.size()) +
                                 " dimensions, expected " + llvm::Twine(rank));
    for (int64_t d = 0; d < rank; ++d) {
      WindowDimension &w = dims[d];
      bool bad = false;
      if (key == "pad") {
        auto [lo, hi] = parts[d].split('_');
        bad = lo.getAsInteger(10, w.pad_low) || hi.getAsInteger(10, w.pad_high);
      } else if (key == "size") {
        bad = parts[d].getAsInteger(10, w.size) || w.size < 0;
      } else if (key == "stride") {
        bad = parts[d].getAsInteger(10, w.stride) || w.stride <= 0;
      } else if (key == "lhs_dilate") {
        bad = parts[d].getAsInteger(10, w.base_dilation) || w.base_dilation <= 0;
      } else if (key == "rhs_dilate") {
        bad = parts[d].getAsInteger(10, w.window_dilation) || w.window_dilation <= 0;
      } else if (key == "rhs_reversal") {
        int64_t r = 0;
        bad = parts[d].getAsInteger(10, r);
        w.reversal = r != 0;
      } else {
        return UnsupportedError(inst, "window field '" + key + "'");
      }
      if (bad)
        return EvalError(inst, "malformed window field '" + field + "'");
    }
  }
  return dims;
}

/// Visits the operand positions of the window at output index `out`.
class WindowIterator {
public:
  WindowIterator(llvm::ArrayRef<WindowDimension> window, llvm::ArrayRef<int64_t> operand_dims)
      : window_(window), operand_dims_(operand_dims.begin(), operand_dims.end()),
        strides_(RowMajorStrides(operand_dims)) {}

  /// Calls fn(linear operand index) for every valid window position.
  template <typename Fn> void ForEach(llvm::ArrayRef<int64_t> out, Fn &&fn) const {
    const int64_t rank = static_cast<int64_t>(window_.size());
    std::vector<int64_t> w(rank, 0);
    for (const WindowDimension &d : window_)
      if (d.size == 0)
        return;
    while (true) {
      int64_t linear = 0;
      bool valid = true;
      for (int64_t d = 0; d < rank && valid; ++d) {
        const WindowDimension &wd = window_[d];
        int64_t dilated = out[d] * wd.stride - wd.pad_low + w[d] * wd.window_dilation;
        if (dilated % wd.base_dilation != 0) {
          valid = false;
          break;
        }
        int64_t i = dilated / wd.base_dilation;
        if (dilated < 0 || i >= operand_dims_[d])
          valid = false;
        else
          linear += i * strides_[d];
      }
      if (valid)
        fn(linear);
      int64_t d = rank - 1;
      for (; d >= 0; --d) {
        if (++w[d] < window_[d].size)
          break;
        w[d] = 0;
      }
      if (d < 0)
        return;
    }
  }

private:
  llvm::ArrayRef<WindowDimension> window_;
  std::vector<int64_t> operand_dims_;
  std::vector<int64_t> strides_;
};

} // namespace

int64_t WindowElements(const HloInstruction &inst) {
  if (inst.operand_count() < 1 || !inst.operand(0)->shape().IsArray())
    return 1;
  llvm::Expected<std::vector<WindowDimension>> window =
      ParseWindow(inst, inst.operand(0)->shape().rank());
  if (!window) {
    llvm::consumeError(window.takeError());
    return 1;
  }
  int64_t n = 1;
  for (const WindowDimension &w : *window) {
    if (w.size == 0)
      return 1;
    if (__builtin_mul_overflow(n, w.size, &n))
      return std::numeric_limits<int64_t>::max();
  }
  return n;
}

llvm::Expected<Literal> EvalReduceWindow(const HloInstruction &inst,
                                         llvm::ArrayRef<const Literal *> operands,
                                         const Combiner &combiner) {
  if (operands.empty() || operands.size() % 2 != 0)
    return EvalError(inst, "reduce-window needs as many init values as operands");
  const size_t n = operands.size() / 2;
  const Shape &in = operands[0]->shape();
  llvm::Expected<std::vector<WindowDimension>> window = ParseWindow(inst, in.rank());
  if (!window)
    return window.takeError();
  std::vector<Shape> out_shapes;
  if (n == 1)
    out_shapes.push_back(inst.shape());
  else if (inst.shape().IsTuple() && inst.shape().tuple_shapes_size() == static_cast<int64_t>(n))
    out_shapes.assign(inst.shape().tuple_shapes().begin(), inst.shape().tuple_shapes().end());
  else
    return EvalError(inst, "variadic reduce-window needs a tuple result");
  for (int64_t d = 0; d < in.rank(); ++d) {
    const WindowDimension &w = (*window)[d];
    if (w.reversal)
      return UnsupportedError(inst, "window reversal");
    int64_t padded = (in.dimensions(d) - 1) * w.base_dilation + 1 + w.pad_low + w.pad_high;
    int64_t extent = (w.size - 1) * w.window_dilation + 1;
    int64_t expected = in.dimensions(d) == 0 || padded < extent ? 0 : (padded - extent) / w.stride + 1;
    if (out_shapes[0].rank() != in.rank() || out_shapes[0].dimensions(d) != expected)
      return EvalError(inst, "result shape does not match the window");
  }
  std::vector<Literal> outs;
  for (size_t j = 0; j < n; ++j) {
    const Literal &init = *operands[n + j];
    if (!operands[j]->shape().IsArray() || operands[j]->shape().dimensions() != in.dimensions() ||
        init.element_count() != 1 || !out_shapes[j].IsArray() ||
        out_shapes[j].element_type() != init.element_type() ||
        out_shapes[j].dimensions() != out_shapes[0].dimensions())
      return EvalError(inst, "operand, init value and result shapes do not agree");
    outs.emplace_back(out_shapes[j]);
  }
  WindowIterator iterator(*window, in.dimensions());
  ErrorSlot error;
  int64_t o = 0;
  ForEachIndex(out_shapes[0].dimensions(), [&](llvm::ArrayRef<int64_t> out_index) {
    if (error.failed())
      return;
    std::vector<Literal> acc;
    for (size_t j = 0; j < n; ++j)
      acc.push_back(*operands[n + j]);
    iterator.ForEach(out_index, [&](int64_t i) {
      if (error.failed())
        return;
      std::vector<Literal> args = acc;
      for (size_t j = 0; j < n; ++j)
        args.push_back(ScalarAt(*operands[j], i));
      llvm::Expected<Literal> step = combiner.Call(std::move(args));
      if (!step) {
        error.Set(step.takeError());
        return;
      }
      if (n == 1) {
        acc[0] = std::move(*step);
      } else {
        for (size_t j = 0; j < n; ++j)
          acc[j] = std::move(step->mutable_tuple_elements()[j]);
      }
    });
    for (size_t j = 0; j < n && !error.failed(); ++j) {
      if (acc[j].element_type() != outs[j].element_type() || acc[j].element_count() != 1) {
        error.Set(EvalError(inst, "to_apply returned " + acc[j].shape().ToString()));
        return;
      }
      StoreScalar(outs[j], o, acc[j]);
    }
    ++o;
  });
  if (error.failed())
    return error.Take();
  if (n == 1)
    return std::move(outs[0]);
  Literal tuple = Literal::MakeTuple(std::move(outs));
  tuple.Reshape(inst.shape());
  return tuple;
}

llvm::Expected<Literal> EvalSelectAndScatter(const HloInstruction &inst, const Literal &operand,
                                             const Literal &source, const Literal &init,
                                             const ComputationRunner &runner) {
  llvm::ArrayRef<HloComputation *> select = inst.CalledComputations("select");
  llvm::ArrayRef<HloComputation *> scatter = inst.CalledComputations("scatter");
  if (select.size() != 1 || scatter.size() != 1)
    return EvalError(inst, "needs select and scatter computations");
  const Shape &in = operand.shape();
  llvm::Expected<std::vector<WindowDimension>> window = ParseWindow(inst, in.rank());
  if (!window)
    return window.takeError();
  for (const WindowDimension &w : *window)
    if (w.base_dilation != 1 || w.window_dilation != 1 || w.reversal)
      return UnsupportedError(inst, "dilated window");
  if (!inst.shape().Compatible(in) || init.element_count() != 1 ||
      init.element_type() != in.element_type() || source.shape().rank() != in.rank())
    return EvalError(inst, "operand, source, init and result shapes do not agree");
  Literal out(inst.shape());
  for (int64_t i = 0; i < out.element_count(); ++i)
    StoreScalar(out, i, init);
  WindowIterator iterator(*window, in.dimensions());
  Combiner scatter_combiner(*scatter[0], runner);
  ErrorSlot error;
  int64_t s = 0;
  ForEachIndex(source.shape().dimensions(), [&](llvm::ArrayRef<int64_t> source_index) {
    if (error.failed())
      return;
    int64_t selected = -1;
    iterator.ForEach(source_index, [&](int64_t i) {
      if (error.failed())
        return;
      if (selected < 0) {
        selected = i;
        return;
      }
      // XLA keeps the current choice while select(current, candidate) holds.
      llvm::Expected<Literal> keep =
          runner(*select[0], {ScalarAt(operand, selected), ScalarAt(operand, i)});
      if (!keep) {
        error.Set(keep.takeError());
        return;
      }
      if (keep->element_type() != PrimitiveType::PRED || keep->element_count() != 1) {
        error.Set(EvalError(inst, "select must return pred[]"));
        return;
      }
      if (!keep->GetAsBool(0))
        selected = i;
    });
    if (selected >= 0 && !error.failed()) {
      llvm::Expected<Literal> sum =
          scatter_combiner.Call({ScalarAt(out, selected), ScalarAt(source, s)});
      if (!sum)
        error.Set(sum.takeError());
      else if (sum->element_type() != out.element_type() || sum->element_count() != 1)
        error.Set(EvalError(inst, "scatter returned " + sum->shape().ToString()));
      else
        StoreScalar(out, selected, *sum);
    }
    ++s;
  });
  if (error.failed())
    return error.Take();
  return out;
}

} // namespace loom::hlo
