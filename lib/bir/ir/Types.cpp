#include "loom/bir/ir/Types.h"

#include "llvm/Support/ErrorHandling.h"

namespace loom::bir {

unsigned getDataTypeSize(DataType T) {
  static const unsigned Sizes[] = {4, 2, 2, 1, 1, 1, 2, 4, 1, 2, 4, 8, 8};
  return Sizes[static_cast<unsigned>(T)];
}

const char *getNativeNpyDescr(DataType T) {
  static const char *Native[] = {"<f4", "<u2", "<f2", "|u1", "|u1",
                                 "|i1", "<i2", "<i4", "|u1", "<u2",
                                 "<u4", "<i8", "<u8"};
  return Native[static_cast<unsigned>(T)];
}

bool isFloatType(DataType T) { return T <= DataType::FP8E5M2; }

// SBUF is 24 MiB on NeuronCore-v2 (trn1) and 28 MiB on NeuronCore-v3 (trn2),
// PSUM 2 MiB on both, each split over 128 partitions.
std::optional<uint64_t> getPartitionCapacity(Target T, MemoryKind K) {
  if (K == MemoryKind::SB)
    return T == Target::Trn1 ? 192 * 1024 : 224 * 1024;
  if (K == MemoryKind::PSUM)
    return 16 * 1024;
  return std::nullopt;
}

// Trn1 exposes every NeuronCore on its own; trn2 pairs two cores into one
// logical core (LNC=2). The generic target allows up to 8 for studies.
unsigned getMaxLncSize(Target T) {
  switch (T) {
  case Target::Trn1:
    return 1;
  case Target::Trn2:
    return 2;
  case Target::Generic:
    return 8;
  }
  llvm_unreachable("unknown target");
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<DataType>() {
  static const llvm::StringRef Names[] = {
      "fp32",  "bf16",  "fp16",  "fp8e4m3", "fp8e5m2", "int8",
      "int16", "int32", "uint8", "uint16",  "uint32", "int64", "uint64"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<MemoryKind>() {
  static const llvm::StringRef Names[] = {"SB", "PSUM", "DRAM", "SharedDRAM"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<Target>() {
  static const llvm::StringRef Names[] = {"trn1", "trn2", "generic"};
  return Names;
}

template <> llvm::ArrayRef<llvm::StringRef> enumNames<Engine>() {
  static const llvm::StringRef Names[] = {
      "PE",   "ACT",   "DVE",   "POOL",  "SP",    "DMA0",  "DMA1",
      "DMA2", "DMA3",  "DMA4",  "DMA5",  "DMA6",  "DMA7",  "DMA8",
      "DMA9", "DMA10", "DMA11", "DMA12", "DMA13", "DMA14", "DMA15"};
  return Names;
}

} // namespace loom::bir
