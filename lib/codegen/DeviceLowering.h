//===- DeviceLowering.h - One device's lowering, shared by lib/codegen -*- C++ -*-===//
//
// The private interface of the code generator's files: the values of a
// device's lowering (Val, Buffer), the walks (Dims) and the DeviceLowering
// class, whose methods live in the file of their op family:
// Codegen.cpp (the walk over computations), Elementwise.cpp (elementwise
// ops, constants, folding), DataMovement.cpp (moves, dynamic slices),
// Dot.cpp (dot, the contraction split), CollectiveMatmul.cpp
// (AwsNeuronCollectiveMatmul), Collectives.cpp, Reduce.cpp (reduce, iota),
// Loops.cpp (while), Gather.cpp, Scatter.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_CODEGEN_DEVICELOWERING_H
#define LOOM_LIB_CODEGEN_DEVICELOWERING_H

#include "loom/codegen/Codegen.h"

#include "Emitter.h"

#include "loom/codegen/DeviceGroups.h"
#include "loom/hlo/ir/CollectiveMatmulContract.h"
#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace loom::codegen::detail {

using namespace bir;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;


/// A value: an array in a DRAM buffer, a tuple, or a token (no data).
struct Val {
  int Buf = -1;
  bool IsTuple = false;
  std::vector<Val> Elems;
  /// For a value whose elements are all one number known at compile time
  /// (constants, partition-id, scalar arithmetic on them): that number.
  std::optional<double> Const;
};

inline Val arrayVal(int Buf, std::optional<double> Const = std::nullopt) {
  Val V;
  V.Buf = Buf;
  V.Const = Const;
  return V;
}

/// Loops that cannot be a Loop branch are unrolled (docs/codegen.md,
/// "Loops") up to this trip count.
constexpr int64_t MaxUnrolledTrips = 64;

/// What folding a while loop at compile time found (Loops.cpp): its trip
/// count and the numbers of its state at the exit (Found); a condition
/// that holds on numbers the body leaves as they were (Endless); a
/// condition that depends on data (Unknown); or no end within the
/// counting limits (TooLong). Trips is the iterations counted.
struct TripCount {
  enum { Found, Endless, Unknown, TooLong } Kind = Unknown;
  int64_t Trips = 0;
  Val Final;
};

/// A core's program stops growing here: a larger one is refused
/// (docs/codegen.md, "Loops") rather than built for minutes.
constexpr uint64_t MaxInstructionsPerCore = 500000;
/// And the cores of a launch share this many instructions, each core at
/// most its equal part: every device is compiled on its own, so a launch
/// of many devices is built for minutes at a smaller size per core.
constexpr uint64_t MaxInstructionsPerLaunch = 2000000;

/// A gather or scatter of more index vectors than this would make a
/// program of that many DMAs (docs/codegen.md, "gather", "scatter").
constexpr uint64_t MaxGatherPositions = 16384;

/// A variadic reduce applies its to_apply G x R times (G result positions,
/// R reduced elements): larger ones are refused (docs/codegen.md, "reduce").
constexpr uint64_t MaxVariadicReduceWork = 1 << 20;

/// A SharedDRAM location present in every core's module.
struct Buffer {
  DataType T;
  uint64_t Elems;
  std::vector<MemoryLocation *> PerCore;
};

/// A strided walk over elements: (step, count) pairs, outermost first.
using Dims = std::vector<PatternDim>;

/// A move whose source (Side In) or destination (Side Out) starts at an
/// offset the device computes: the IndirectDMACopy terms, and for each the
/// buffer and element that hold its index value (docs/codegen.md,
/// "Run-time offsets").
struct RunTimeOffset {
  IndirectSide Side = IndirectSide::In;
  std::vector<IndirectOffset> Terms;
  std::vector<std::pair<int, uint64_t>> Index;
};

std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> Shape);
/// Drops count-1 dimensions and merges dimensions that walk on
/// contiguously; the same elements in the same order.
Dims normalize(const Dims &In);
uint64_t countOf(const Dims &D);
bool isDefaultLayout(const Shape &S);

/// The chunks of a stream of N elements through 128 x F tiles: full tiles,
/// then what is left spread over the partitions, then the last partial row.
struct Chunk {
  uint64_t First;
  unsigned Parts;
  uint64_t Free;
};
std::vector<Chunk> chunks(uint64_t N, uint64_t F);

/// The opcodes lowerElementwise lowers (one TensorTensor, Activation,
/// Select or TensorConvert per chunk).
bool isElementwiseOpcode(HloOpcode Op);
/// The TensorConvert of chunk Chunk of a stream (ACT, DVE, POOL in turn).
std::unique_ptr<Instruction> makeConvert(std::string Name, unsigned Chunk);
/// fp32, bf16 and fp16: the float types BIR arithmetic rounds as HLO does.
bool isArithmeticFloat(DataType T);
/// The values of a literal's text, in row-major order, or none when a value
/// is not a plain number, inf or nan.
std::optional<std::vector<double>> parseLiteral(llvm::StringRef Text);
/// Scalar integer arithmetic on values known at compile time.
std::optional<double> foldInteger(const HloInstruction &I,
                                  llvm::ArrayRef<Val> Ops);
/// The reduce op of a collective's to_apply, and of a reduce's.
llvm::Expected<ReduceOp> reduceOpOf(const HloInstruction &I);
llvm::Expected<ArithOp> reduceArithOf(const HloInstruction &I);
/// A dot's sizes: the products of the batch, contracting, lhs free and rhs
/// free dimensions.
struct DotSizes {
  uint64_t B = 1, K = 1, M = 1, N = 1;
};
DotSizes dotSizes(const Shape &LS, const Shape &RS,
                  const hlo::DotDimensionNumbers &DN);
/// Whether a dot of these sizes splits its contraction between L cores:
/// fewer output tiles than cores and at least L K tiles (docs/codegen.md).
bool contractionSplit(const DotSizes &S, unsigned L);
/// How a collective matmul's blocks meet its dot (CollectiveMatmul.cpp):
/// Rows, a [F][K] weight operand gathered in whole rows; Cols, a [K][F] one
/// gathered in column ranges (both multiplied block by block as the blocks
/// arrive); Gathered, any other (the whole weight gathered before the dot).
enum class RingForm { Gathered, Rows, Cols };
RingForm ringForm(const hlo::collective_matmul::Meaning &Mn,
                  const Shape &Other, const Shape &Result);
/// The dimensions of S that are neither batch nor contracting, in order.
std::vector<int64_t> freeDims(const Shape &S, llvm::ArrayRef<int64_t> Batch,
                              llvm::ArrayRef<int64_t> Contract);

class DeviceLowering {
public:
  DeviceLowering(const hlo::HloModule &HM, LaunchSize LS, int64_t Device,
                 const CodegenOptions &O)
      : HM(HM), LS(LS), Device(Device), Replica(Device / LS.NumPartitions),
        Partition(Device % LS.NumPartitions), L(O.LncSize),
        CoreBudget(std::min<uint64_t>(
            MaxInstructionsPerCore,
            MaxInstructionsPerLaunch /
                std::max<uint64_t>(1, static_cast<uint64_t>(LS.ReplicaCount *
                                                            LS.NumPartitions) *
                                          O.LncSize))) {
    for (unsigned C = 0; C < L; ++C)
      Cores.emplace_back(std::make_unique<Module>(
          HM.name(), C, 0, TargetOptions{O.LncSize, O.Arch}));
  }

  llvm::Expected<LaunchDevice> run();

private:
  // ---- Errors --------------------------------------------------------------
  llvm::Error notLowered(const HloInstruction &I, const llvm::Twine &Why) {
    return makeError(I.parent()->name() + "/" + I.name() + ": " +
                     I.OpcodeText() + " is not lowered (" + Why + ")");
  }

  // ---- Buffers -------------------------------------------------------------
  llvm::Expected<DataType> typeOf(const HloInstruction &I, const Shape &S) {
    std::optional<DataType> T =
        getBirTypeOfHloType(hlo::PrimitiveTypeName(S.element_type()));
    if (!T)
      return notLowered(I, "element type " +
                               hlo::PrimitiveTypeName(S.element_type()) +
                               " has no BIR type");
    if (!S.is_static())
      return notLowered(I, "dynamic shape " + S.ToString(false));
    return *T;
  }
  int newBuffer(llvm::StringRef Name, DataType T, uint64_t Elems) {
    Buffer B{T, Elems, {}};
    std::string Unique = Cores[0].uniqueLocationName(Name);
    for (unsigned C = 0; C < L; ++C) {
      if (C > 0)
        Cores[C].uniqueLocationName(Unique);
      B.PerCore.push_back(Cores[C].addLocation(Unique, MemoryKind::SharedDRAM,
                                               T, 1,
                                               Elems * getDataTypeSize(T)));
    }
    Bufs.push_back(std::move(B));
    return static_cast<int>(Bufs.size() - 1);
  }
  /// A new buffer for the array result of I.
  llvm::Expected<int> resultBuffer(const HloInstruction &I, const Shape &S,
                                   llvm::StringRef Suffix = "") {
    llvm::Expected<DataType> T = typeOf(I, S);
    if (!T)
      return T.takeError();
    // In a variadic reduce's to_apply a scalar is one element per lane.
    uint64_t Elems = Lanes > 0 && S.rank() == 0 ? Lanes : S.element_count();
    return newBuffer((I.name() + Suffix).str(), *T, Elems);
  }
  llvm::Expected<Val> newValue(const HloInstruction &I, const Shape &S,
                               std::string Suffix = "") {
    if (S.IsToken())
      return Val();
    if (S.IsTuple()) {
      Val V;
      V.IsTuple = true;
      for (int64_t K = 0; K < S.tuple_shapes_size(); ++K) {
        llvm::Expected<Val> E =
            newValue(I, S.tuple_shapes(K), Suffix + "." + std::to_string(K));
        if (!E)
          return E.takeError();
        V.Elems.push_back(std::move(*E));
      }
      return V;
    }
    llvm::Expected<int> B = resultBuffer(I, S, Suffix);
    if (!B)
      return B.takeError();
    Val V;
    V.Buf = *B;
    return V;
  }
  AccessPattern dram(int Buf, unsigned Core, uint64_t ElemOffset,
                     const Dims &D) {
    const Buffer &B = Bufs[Buf];
    return AccessPattern(B.PerCore[Core], 0, 1,
                         ElemOffset * getDataTypeSize(B.T), normalize(D), B.T);
  }

  // ---- Emission helpers ----------------------------------------------------
  std::string name(unsigned Core, const HloInstruction &I, llvm::StringRef S) {
    return Cores[Core].uniqueName((I.name() + "." + S).str());
  }
  /// At lnc > 1, a barrier over every core after work that other cores
  /// will read.
  void barrier(llvm::StringRef Why) {
    if (L < 2)
      return;
    std::vector<unsigned> All(L);
    std::iota(All.begin(), All.end(), 0);
    std::string Name = ("cb." + llvm::Twine(NextBarrier) + "." + Why).str();
    for (unsigned C = 0; C < L; ++C)
      Cores[C].emitFence(std::make_unique<InstCoreBarrier>(
          Cores[C].uniqueName(Name), Engine::POOL, NextBarrier, All));
    ++NextBarrier;
  }
  /// Copies elements from one walk to another, split between the cores
  /// along the outermost dimension of the destination walk.
  /// With RT, every piece is an IndirectDMACopy whose RT.Side operand
  /// moves by RT's terms. Piece k goes to core (FirstCore + k) mod L.
  void move(const HloInstruction &I, int Src, uint64_t SrcOff, Dims SrcD,
            int Dst, uint64_t DstOff, Dims DstD,
            const RunTimeOffset *RT = nullptr, unsigned FirstCore = 0);
  /// A broadcast repeating its trailing element in rows, if that is
  /// cheaper than one descriptor per element (DataMovement.cpp); false
  /// when it moved nothing.
  bool broadcastByRows(const HloInstruction &I, int Src, const Dims &SrcD,
                       int Out, llvm::ArrayRef<int64_t> OutDims);
  /// Streams elementwise work through SB: Make builds the engine
  /// instruction for one chunk.
  using MakeOp = std::function<std::unique_ptr<Instruction>(
      std::string Name, unsigned Chunk)>;
  void elementwise(const HloInstruction &I, llvm::ArrayRef<int> Ins, int Out,
                   const MakeOp &Make);
  /// Fills Buf with Value (Memset in SB, DMA to DRAM).
  void fill(const HloInstruction &I, int Buf, double Value);

  // ---- Ops -------------------------------------------------------------------
  llvm::Expected<Val> lowerComputation(const HloComputation &C,
                                       llvm::ArrayRef<Val> Args);
  llvm::Expected<Val> lower(const HloInstruction &I,
                            llvm::DenseMap<const HloInstruction *, Val> &Vals);
  llvm::Expected<Val> lowerElementwise(const HloInstruction &I,
                                       llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerConstant(const HloInstruction &I);
  llvm::Expected<Val> lowerConstantOf(const HloInstruction &I, const Shape &S,
                                      llvm::StringRef Text,
                                      const std::string &Suffix);
  llvm::Expected<Val> lowerInt64Constant(const HloInstruction &I, int Out,
                                         llvm::StringRef Text);
  llvm::Expected<Val> lowerDataMovement(const HloInstruction &I,
                                        llvm::ArrayRef<Val> Ops);
  /// A bitcast between layouts: the bytes in physical order stay, so the
  /// result's logical elements are the operand's in another order.
  llvm::Expected<Val> lowerBitcastLayouts(const HloInstruction &I,
                                          const Val &Op);
  llvm::Expected<Val> lowerDot(const HloInstruction &I, llvm::ArrayRef<Val> Ops);
  llvm::Error checkDotFits(const HloInstruction &I);
  llvm::Expected<Val> lowerDotOf(const HloInstruction &I, const Shape &LS,
                                 const Shape &RS,
                                 const hlo::DotDimensionNumbers &DN,
                                 llvm::ArrayRef<Val> Ops,
                                 const Shape &ResultShape);
  /// A dot operand laid out as [batch][contracting][free] (a move unless it
  /// is already so): the order the tiles read.
  int canonicalOperand(const HloInstruction &I, int Buf, const Shape &S,
                       llvm::ArrayRef<int64_t> Bt, llvm::ArrayRef<int64_t> Ct,
                       llvm::ArrayRef<int64_t> Fr, llvm::StringRef Tag);
  llvm::Expected<Val> lowerCollectiveMatmul(const HloInstruction &I,
                                            llvm::ArrayRef<Val> Ops);
  /// Step S of a collective matmul's ring (CollectiveMatmul.cpp).
  void ringStep(const HloInstruction &I, unsigned Step,
                const std::vector<unsigned> &Group, int InBuf, uint64_t InOff,
                int OutBuf, uint64_t OutOff, uint64_t E);
  struct RingDot;
  void ringBlockTiles(const HloInstruction &I, const RingDot &R, uint64_t Block,
                      int Src, uint64_t SrcOff);
  void splitContraction(const HloInstruction &I, int LT, int RT, int Out,
                        DataType TO, uint64_t Bi, uint64_t M0, uint64_t N0,
                        uint64_t M, uint64_t N, uint64_t K, uint64_t Mt,
                        uint64_t Nt, unsigned Tile);
  llvm::Expected<Val> lowerCollective(const HloInstruction &I,
                                      const Shape &Result,
                                      llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerPermute(const HloInstruction &I, const Shape &Result,
                                   const Val &Op);
  llvm::Expected<Val> lowerStart(const HloInstruction &I,
                                 llvm::ArrayRef<Val> Ops);
  Val startValue(const HloInstruction &I, llvm::ArrayRef<Val> Ops, Val Result);
  llvm::Expected<Val> lowerReduce(const HloInstruction &I,
                                  llvm::ArrayRef<Val> Ops);
  /// A reduce of several operands (argmax's values and indices): its
  /// to_apply lowered once per reduced element, over all result positions
  /// at once (Lanes).
  llvm::Expected<Val> lowerVariadicReduce(const HloInstruction &I,
                                          llvm::ArrayRef<Val> Ops);
  /// Folds each of G groups of R consecutive elements of In with A into
  /// one element of Out (type T), from InitConst, or else from element 0
  /// of Init broadcast; the groups stream through SB tiles.
  void foldGroups(const HloInstruction &I, int In, int Out, DataType T,
                  uint64_t G, uint64_t R, ArithOp A,
                  std::optional<double> InitConst, int Init);
  llvm::Expected<Val> lowerIota(const HloInstruction &I);
  llvm::Expected<Val> lowerDynamicSlice(const HloInstruction &I,
                                        llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerWhile(const HloInstruction &I,
                                 llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerGather(const HloInstruction &I,
                                  llvm::ArrayRef<Val> Ops);
  llvm::Expected<Val> lowerScatter(const HloInstruction &I,
                                   llvm::ArrayRef<Val> Ops);
  /// Loops.cpp: the trip count found by folding the condition and the
  /// body at compile time (no instruction emitted); the Loop branch.
  TripCount countTrips(const HloComputation &Cond, const HloComputation &Body,
                       const Val &Init);
  llvm::Expected<Val> lowerLoopBranch(const HloInstruction &I,
                                      const HloComputation &Body,
                                      const Val &Init, const Val &Invariant,
                                      const TripCount &T);

  const hlo::HloModule &HM;
  LaunchSize LS;
  int64_t Device, Replica, Partition;
  unsigned L;
  /// The instructions a core's program may have (MaxInstructionsPerCore,
  /// MaxInstructionsPerLaunch).
  uint64_t CoreBudget;
  std::vector<CoreEmitter> Cores;
  std::vector<Buffer> Bufs;
  unsigned NextBarrier = 0;
  /// Names the SB-to-SB tile exchanges of collective matmuls.
  unsigned NextExchange = 0;
  unsigned Depth = 0;
  /// Inside a variadic reduce's to_apply: the number of result positions
  /// each scalar value holds (0 elsewhere).
  uint64_t Lanes = 0;
};


} // namespace loom::codegen::detail

#endif
