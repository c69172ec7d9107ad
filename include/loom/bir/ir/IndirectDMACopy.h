//===- IndirectDMACopy.h - A DMA whose address is read at run time -*- C++ -*-===//
//
// IndirectDMACopy is a DMACopy one of whose data operands starts at an
// element offset computed when it runs, from integer values it reads from
// memory (a dynamic slice's start indices, a gather's index vector): the
// production machine's DMA with a run-time address (neuronx-cc's indirect
// DMA, NKI's dynamic access patterns). Each index value is clamped to
// [0, limit] before it is scaled by its stride, which is XLA's clamp of a
// dynamic-slice start, or, in the skip mode, makes the instruction move
// nothing, which is XLA's scatter of a window that does not fit (docs/bir.md,
// "IndirectDMACopy").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_INDIRECTDMACOPY_H
#define LOOM_BIR_IR_INDIRECTDMACOPY_H

#include "loom/bir/ir/Instruction.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom::bir {

/// Which data operand of an IndirectDMACopy starts at the run-time offset.
enum class IndirectSide : uint8_t { In, Out };

template <> llvm::ArrayRef<llvm::StringRef> enumNames<IndirectSide>();

/// What an index value outside [0, limit] does: Clamp moves the window to
/// the nearest start (XLA's clamp of a dynamic-slice or gather start);
/// Skip makes the whole instruction move nothing (XLA's scatter, which
/// skips an update window that does not fit).
enum class IndirectBounds : uint8_t { Clamp, Skip };

template <> llvm::ArrayRef<llvm::StringRef> enumNames<IndirectBounds>();

/// One index term: the value read is clamped to [0, Limit] and multiplied by
/// Stride (in elements of the dynamic operand).
struct IndirectOffset {
  int64_t Stride;
  uint64_t Limit;

  friend bool operator==(const IndirectOffset &A, const IndirectOffset &B) {
    return A.Stride == B.Stride && A.Limit == B.Limit;
  }
};

class InstIndirectDMACopy : public Instruction {
public:
  /// At most this many index terms, each |Stride * Limit| below
  /// MaxTermSpan, so that every sum of terms fits in int64 with room.
  static constexpr unsigned MaxOffsets = 8;
  static constexpr int64_t MaxTermSpan = int64_t(1) << 40;

  InstIndirectDMACopy(std::string Name, Engine Eng, IndirectSide Side,
                      std::vector<IndirectOffset> Offsets, bool Accumulate,
                      IndirectBounds Bounds = IndirectBounds::Clamp)
      : Instruction(InstructionType::IndirectDMACopy, std::move(Name), Eng),
        Side(Side), Offsets(std::move(Offsets)), Accumulate(Accumulate),
        Bounds(Bounds) {}

  IndirectSide getSide() const { return Side; }
  /// One term per index operand: inputs()[1 + k] is the value of term k.
  llvm::ArrayRef<IndirectOffset> getOffsets() const { return Offsets; }
  bool isAccumulate() const { return Accumulate; }
  IndirectBounds getBounds() const { return Bounds; }
  /// Whether the instruction moves data for these index values: always
  /// when it clamps; when it skips, only if every value is in [0, Limit].
  bool moves(llvm::ArrayRef<int64_t> Values) const;

  /// The data operand whose offset moves: inputs()[0] or outputs()[0].
  const AccessPattern &getDynamicOperand() const {
    return Side == IndirectSide::In ? inputs()[0] : outputs()[0];
  }
  /// The element delta for the index values Values (one per term):
  /// sum_k clamp(Values[k], 0, Limit_k) * Stride_k. Terms past
  /// MaxOffsets or with an out-of-range span are the verifier's to refuse.
  int64_t getDelta(llvm::ArrayRef<int64_t> Values) const;
  /// The smallest and largest delta over all index values.
  std::pair<int64_t, int64_t> getDeltaRange() const;

  static bool classof(const Instruction *I) {
    return I->getType() == InstructionType::IndirectDMACopy;
  }

private:
  IndirectSide Side;
  std::vector<IndirectOffset> Offsets;
  bool Accumulate;
  IndirectBounds Bounds;
};

/// What is wrong with an IndirectDMACopy beyond the checks every
/// instruction gets: the path below the instruction (".offsets[1]") and the
/// message; none when it is well formed.
std::optional<std::pair<std::string, std::string>>
checkIndirectDMACopy(const InstIndirectDMACopy &I);

/// The value of an integer element stored at P (little-endian, as the
/// simulator's storages hold it); Type must be an integer type. A uint64
/// above int64's range reads as INT64_MAX (it clamps to any limit alike).
int64_t readIndexValue(DataType Type, const uint8_t *P);

} // namespace loom::bir

#endif
