//===- Types.h - Enumerations shared by the BIR classes ---------*- C++ -*-===//
//
// Data types, memory kinds, engines and targets of the backend IR. Every enum
// here has one spelling per value, used by both the JSON and the text form, so
// the two forms agree and a document round-trips exactly.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_TYPES_H
#define LOOM_BIR_IR_TYPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace loom::bir {

/// Element types. neuronx-cc's size table has 20 slots; loom defines the 11
/// that the engines it models can read.
enum class DataType : uint8_t {
  FP32,
  BF16,
  FP16,
  FP8E4M3,
  FP8E5M2,
  INT8,
  INT16,
  INT32,
  UINT8,
  UINT16,
  UINT32,
  // Appended: the ordinals above are a contract (docs/bir.md, "Data types").
  INT64,
  UINT64,
};

unsigned getDataTypeSize(DataType T);
bool isFloatType(DataType T);
/// The .npy dtype of T's bytes as stored ("<f4", "<i8", ...; bf16 and fp16
/// are "<u2" and "<f2", the fp8 types "|u1").
const char *getNativeNpyDescr(DataType T);

/// SB is the on-chip state buffer (SBUF); SharedDRAM is device memory that
/// every core of a logical core sees at the same address.
enum class MemoryKind : uint8_t { SB, PSUM, DRAM, SharedDRAM };

/// True for the on-chip memories, which have 128 partitions.
inline bool isOnChip(MemoryKind K) {
  return K == MemoryKind::SB || K == MemoryKind::PSUM;
}

constexpr unsigned MaxOnChipPartitions = 128;

/// Generic is not a chip: a target for studies of wider logical cores, with
/// trn2's memory sizes and up to 8 cores per logical core.
enum class Target : uint8_t { Trn1, Trn2, Generic };

/// Bytes per partition of an on-chip memory on a target; none for DRAM.
std::optional<uint64_t> getPartitionCapacity(Target T, MemoryKind K);

/// The most cores one logical core has on a target.
unsigned getMaxLncSize(Target T);

/// POOL is the GPSIMD engine. DMA0..DMA15 are the core's DMA queues.
enum class Engine : uint8_t {
  PE,
  ACT,
  DVE,
  POOL,
  SP,
  DMA0,
  DMALast = DMA0 + 15,
};

inline bool isDMAQueue(Engine E) { return E >= Engine::DMA0; }

/// The spellings of a dense enum, indexed by value. Specialized in Types.cpp
/// and Instructions.cpp for every enum of the IR.
template <typename E> llvm::ArrayRef<llvm::StringRef> enumNames();

template <typename E> llvm::StringRef enumName(E V) {
  return enumNames<E>()[static_cast<unsigned>(V)];
}

template <typename E> std::optional<E> parseEnum(llvm::StringRef S) {
  llvm::ArrayRef<llvm::StringRef> Names = enumNames<E>();
  for (unsigned I = 0; I < Names.size(); ++I)
    if (Names[I] == S)
      return static_cast<E>(I);
  return std::nullopt;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<DataType>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<MemoryKind>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<Target>();
template <> llvm::ArrayRef<llvm::StringRef> enumNames<Engine>();

} // namespace loom::bir

#endif
