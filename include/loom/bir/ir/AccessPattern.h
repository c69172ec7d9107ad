//===- AccessPattern.h - The elements an operand names -------*- C++ -*-===//
//
// An access pattern selects a range of partitions of a memory location and,
// within each of them, the same sequence of elements: starting at a byte
// offset, a free-dimension pattern of [step, count] pairs, outermost first,
// steps in elements. Its elements are ordered partition by partition, then by
// the pattern like nested loops; instructions pair input and output elements
// in that order (docs/bir.md, "Element order").
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_ACCESSPATTERN_H
#define LOOM_BIR_IR_ACCESSPATTERN_H

#include "loom/bir/ir/Types.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <vector>

namespace loom::bir {

class MemoryLocation;

struct PatternDim {
  int64_t Step;
  uint64_t Count;

  friend bool operator==(const PatternDim &A, const PatternDim &B) {
    return A.Step == B.Step && A.Count == B.Count;
  }
};

/// Half-open byte range [Begin, End) inside one partition.
struct ByteRange {
  uint64_t Begin;
  uint64_t End;
};

/// The pattern in canonical form: dimensions of count 1 dropped, adjacent
/// dimensions that walk contiguously merged. It selects the same elements
/// in the same order.
std::vector<PatternDim> normalizePattern(llvm::ArrayRef<PatternDim> P);

class AccessPattern {
public:
  AccessPattern(MemoryLocation *Loc, unsigned StartPartition,
                unsigned NumPartitions, uint64_t Offset,
                std::vector<PatternDim> Pattern, DataType Type)
      : Loc(Loc), StartPartition(StartPartition), NumPartitions(NumPartitions),
        Offset(Offset), Pattern(std::move(Pattern)), Type(Type) {}

  MemoryLocation *getLocation() const { return Loc; }
  unsigned getStartPartition() const { return StartPartition; }
  unsigned getNumPartitions() const { return NumPartitions; }
  uint64_t getOffset() const { return Offset; }
  llvm::ArrayRef<PatternDim> getPattern() const { return Pattern; }
  DataType getType() const { return Type; }

  void setLocation(MemoryLocation *L) { Loc = L; }
  void setPartitions(unsigned Start, unsigned Num) {
    StartPartition = Start;
    NumPartitions = Num;
  }
  void setOffset(uint64_t O) { Offset = O; }
  void setPattern(std::vector<PatternDim> P) { Pattern = std::move(P); }
  void setType(DataType T) { Type = T; }

  /// A copy to be edited and attached to another instruction.
  AccessPattern clone() const { return *this; }

  /// The product of the pattern's counts, saturating at UINT64_MAX; an empty
  /// pattern selects one element.
  uint64_t getNumElementsPerPartition() const;
  uint64_t getNumElements() const;

  /// The bytes touched in each partition; none if the pattern reaches below
  /// byte 0 or past 2^64.
  std::optional<ByteRange> getByteRange() const;

private:
  MemoryLocation *Loc;
  unsigned StartPartition;
  unsigned NumPartitions;
  uint64_t Offset;
  std::vector<PatternDim> Pattern;
  DataType Type;
};

} // namespace loom::bir

#endif
