#include "loom/bir/json/BirJson.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/json/JsonPrinter.h"
#include "loom/support/Base64.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <deque>

namespace loom::bir {

namespace {

/// Builds an llvm::json::Value from the calls a JsonPrinter takes, for
/// moduleToJson and programToJson. Numbers keep the types the Value
/// constructors give the IR's fields: int64_t for the signed and the 32-bit
/// ones, uint64_t for the 64-bit unsigned ones.
class ValueBuilder {
public:
  void integer(int64_t V) { put(V); }
  void unsignedInteger(uint64_t V) { put(V); }
  void real(double V) { put(V); }
  void boolean(bool V) { put(V); }
  void string(llvm::StringRef S) { put(S.str()); }
  void key(llvm::StringRef K) { Keys.back() = K.str(); }
  void array(llvm::function_ref<void()> Body) {
    container(llvm::json::Array(), Body);
  }
  void object(llvm::function_ref<void()> Body) {
    container(llvm::json::Object(), Body);
  }

  llvm::json::Value take() { return std::move(Root); }

private:
  void container(llvm::json::Value Empty, llvm::function_ref<void()> Body) {
    // A deque keeps the open containers in place while it grows.
    Open.push_back(std::move(Empty));
    Keys.emplace_back();
    Body();
    llvm::json::Value Done = std::move(Open.back());
    Open.pop_back();
    Keys.pop_back();
    put(std::move(Done));
  }

  void put(llvm::json::Value V) {
    if (Open.empty())
      Root = std::move(V);
    else if (llvm::json::Object *O = Open.back().getAsObject())
      (*O)[Keys.back()] = std::move(V);
    else
      Open.back().getAsArray()->push_back(std::move(V));
  }

  llvm::json::Value Root = nullptr;
  std::deque<llvm::json::Value> Open;
  std::deque<std::string> Keys;
};

// The JSON form of each IR object, for either output (JsonPrinter or
// ValueBuilder). Members are written in sorted key order, the order of the
// saved form; JsonPrinter asserts it.

template <typename Out>
void field(Out &W, llvm::StringRef Key, llvm::StringRef V) {
  W.key(Key);
  W.string(V);
}

template <typename Out> void fieldBool(Out &W, llvm::StringRef Key, bool V) {
  W.key(Key);
  W.boolean(V);
}

template <typename Out> void fieldInt(Out &W, llvm::StringRef Key, int64_t V) {
  W.key(Key);
  W.integer(V);
}

template <typename Out>
void fieldUnsigned(Out &W, llvm::StringRef Key, uint64_t V) {
  W.key(Key);
  W.unsignedInteger(V);
}

/// A double; JSON has no spelling for the non-finite ones, so they are the
/// strings "inf", "-inf" and "nan" (which the reader takes back).
template <typename Out> void fieldReal(Out &W, llvm::StringRef Key, double V) {
  W.key(Key);
  if (std::isnan(V))
    W.string("nan");
  else if (std::isinf(V))
    W.string(V > 0 ? "inf" : "-inf");
  else
    W.real(V);
}

template <typename Out>
void writeCores(Out &W, llvm::StringRef Key, llvm::ArrayRef<unsigned> Cores) {
  W.key(Key);
  W.array([&] {
    for (unsigned C : Cores)
      W.integer(C);
  });
}

template <typename Out>
void writeAccessPatterns(Out &W, llvm::StringRef Key,
                         llvm::ArrayRef<AccessPattern> APs) {
  W.key(Key);
  W.array([&] {
    for (const AccessPattern &AP : APs)
      W.object([&] {
        field(W, "dtype", enumName(AP.getType()));
        // A pass may leave a location unset; the name "" then fails to load.
        const MemoryLocation *L = AP.getLocation();
        field(W, "memloc", L ? L->getName() : "");
        fieldUnsigned(W, "offset", AP.getOffset());
        fieldInt(W, "partitions", AP.getNumPartitions());
        W.key("pattern");
        W.array([&] {
          for (const PatternDim &D : AP.getPattern())
            W.array([&] {
              W.integer(D.Step);
              W.unsignedInteger(D.Count);
            });
        });
        fieldInt(W, "start_partition", AP.getStartPartition());
      });
  });
}

/// The common fields and those of the opcode, merged in key order.
template <typename Out> void writeInstruction(Out &W, const Instruction &I) {
  using llvm::dyn_cast;
  const auto *CC = dyn_cast<InstCollectiveCompute>(&I);
  const auto *DMA = dyn_cast<InstDMACopy>(&I);
  const auto *SB2SB = dyn_cast<InstGPSIMDSB2SB>(&I);
  const auto *TC = dyn_cast<InstTensorCompletion>(&I);
  const auto *SW = dyn_cast<InstSemaphoreWait>(&I);
  const auto *CB = dyn_cast<InstCoreBarrier>(&I);
  const auto *MM = dyn_cast<InstMatmul>(&I);
  const auto *Act = dyn_cast<InstActivation>(&I);
  const auto *TT = dyn_cast<InstTensorTensor>(&I);
  const auto *MS = dyn_cast<InstMemset>(&I);
  const auto *TR = dyn_cast<InstTensorReduce>(&I);
  const auto *Iota = dyn_cast<InstIota>(&I);
  const auto *Br = dyn_cast<InstBranch>(&I);
  const auto *Copy = dyn_cast<InstCopyBase>(&I);
  const auto *ID = dyn_cast<InstIndirectDMACopy>(&I);
  W.object([&] {
    if (DMA)
      fieldBool(W, "accumulate", DMA->isAccumulate());
    if (ID) {
      fieldBool(W, "accumulate", ID->isAccumulate());
      field(W, "bounds", enumName(ID->getBounds()));
    }
    if (MM)
      fieldBool(W, "accumulate", MM->isAccumulate());
    if (TR)
      fieldBool(W, "accumulate", TR->isAccumulate());
    if (CB)
      writeCores(W, "cores", CB->getCores());
    if (SW)
      fieldInt(W, "count", SW->getCount());
    W.key("deps");
    W.array([&] {
      for (const Instruction *D : I.dependencies())
        W.string(D->getName());
    });
    if (ID)
      field(W, "dynamic", enumName(ID->getSide()));
    field(W, "engine", enumName(I.getEngine()));
    if (Act)
      field(W, "func", enumName(Act->getFunc()));
    if (CC)
      writeCores(W, "group", CC->getGroup());
    if (CB)
      fieldInt(W, "id", CB->getId());
    if (TR)
      fieldReal(W, "init", TR->getInit());
    writeAccessPatterns(W, "inputs", I.inputs());
    if (CC)
      field(W, "kind", enumName(CC->getKind()));
    if (Br)
      field(W, "kind", enumName(Br->getKind()));
    if (CC)
      fieldBool(W, "local", CC->isLocal());
    if (SB2SB)
      fieldBool(W, "lowered", SB2SB->isLowered());
    if (Iota) {
      W.key("multipliers");
      W.array([&] {
        for (int64_t M : Iota->getMultipliers())
          W.integer(M);
      });
    }
    field(W, "name", I.getName());
    if (ID) {
      W.key("offsets");
      W.array([&] {
        for (const IndirectOffset &O : ID->getOffsets())
          W.object([&] {
            fieldUnsigned(W, "limit", O.Limit);
            W.key("stride");
            W.integer(O.Stride);
          });
      });
    }
    if (TT)
      field(W, "op", enumName(TT->getOp()));
    if (TR)
      field(W, "op", enumName(TR->getOp()));
    fieldInt(W, "opcode", static_cast<unsigned>(I.getType()));
    writeAccessPatterns(W, "outputs", I.outputs());
    if (Iota)
      fieldInt(W, "partition_step", Iota->getPartitionStep());
    if (CC)
      field(W, "reduce", enumName(CC->getReduceOp()));
    if (Act) {
      W.key("scale");
      W.real(Act->getScale());
    }
    if (SW)
      field(W, "semaphore", SW->getSemaphore());
    // A copy without a signal has no "signal" field: absent means none.
    if (Copy && Copy->getSignal()) {
      const SemaphoreSignal &S = *Copy->getSignal();
      W.key("signal");
      W.object([&] {
        fieldInt(W, "core", S.Core);
        field(W, "semaphore", S.Semaphore);
      });
    }
    if (Iota)
      fieldInt(W, "start", Iota->getStart());
    if (Br && Br->getKind() == BranchKind::Loop)
      fieldInt(W, "trip_count", Br->getTripCount());
    field(W, "type", getInstructionTypeName(I.getType()));
    if (MS)
      fieldReal(W, "value", MS->getValue());
    if (TC) {
      W.key("waits");
      W.array([&] {
        for (const CompletionWait &Wait : TC->getWaits())
          W.object([&] {
            fieldInt(W, "core", Wait.Core);
            field(W, "instruction", Wait.Instruction);
          });
      });
    }
  });
}

template <typename Out> void writeBlock(Out &W, const BasicBlock &BB) {
  W.object([&] {
    W.key("instructions");
    W.array([&] {
      for (const auto &I : BB)
        writeInstruction(W, *I);
    });
    field(W, "name", BB.getName());
    W.key("successors");
    W.array([&] {
      for (const BasicBlock *S : BB.successors())
        W.string(S->getName());
    });
  });
}

template <typename Out> void writeLocation(Out &W, const MemoryLocation &L) {
  W.object([&] {
    fieldBool(W, "allocated", L.isAllocated());
    fieldUnsigned(W, "bytes_per_partition", L.getBytesPerPartition());
    field(W, "dtype", enumName(L.getType()));
    // A location without initial data has no "initial_data" field.
    if (L.hasInitialData())
      field(W, "initial_data", encodeBase64(L.getInitialData()));
    field(W, "kind", enumName(L.getKind()));
    field(W, "name", L.getName());
    fieldInt(W, "partitions", L.getNumPartitions());
    // A local location has no "remote" field: absent means local.
    if (const std::optional<RemoteRef> &R = L.getRemote()) {
      W.key("remote");
      W.object([&] {
        fieldInt(W, "core", R->Core);
        field(W, "memloc", R->MemLoc);
      });
    }
    fieldUnsigned(W, "tensor_id", L.getTensorId());
    fieldBool(W, "written_by_another_core", L.isWrittenByAnotherCore());
  });
}

template <typename Out> void writeModule(Out &W, const Module &M) {
  W.object([&] {
    W.key("blocks");
    W.array([&] {
      for (const auto &BB : M.blocks())
        writeBlock(W, *BB);
    });
    W.key("memory_locations");
    W.array([&] {
      for (const auto &L : M.getMemoryLocations().locations())
        writeLocation(W, *L);
    });
    field(W, "name", M.getName());
    fieldInt(W, "neuron_core_id", M.getNeuronCoreId());
    const TargetOptions &Opts = M.getTargetOptions();
    W.key("pass_options");
    W.object([&] {
      fieldInt(W, "lnc_size", Opts.LncSize);
      field(W, "target", enumName(Opts.Arch));
    });
    fieldInt(W, "subgraph_id", M.getSubgraphId());
  });
}

template <typename Out> void emitProgram(Out &W, const Program &P) {
  W.object([&] {
    W.key("modules");
    W.array([&] {
      for (const auto &M : P)
        writeModule(W, *M);
    });
    fieldInt(W, "version", BirJsonVersion);
  });
}

} // namespace

void writeProgram(llvm::raw_ostream &OS, const Program &P) {
  {
    JsonPrinter W(OS, JsonPrinter::Layout::Saved);
    emitProgram(W, P);
  }
  OS << '\n';
}

namespace {

/// Counts what is written to it.
class CountingStream : public llvm::raw_ostream {
public:
  CountingStream() { SetUnbuffered(); }

private:
  void write_impl(const char *, size_t Size) override { Count += Size; }
  uint64_t current_pos() const override { return Count; }
  uint64_t Count = 0;
};

} // namespace

// The text is written twice, once to measure it: a string that grows by
// doubling would hold its old and new buffers at once, 1.5 to 2 times the
// text, at the point where memory use peaks.
std::string formatProgram(const Program &P) {
  CountingStream Counter;
  writeProgram(Counter, P);
  std::string S;
  S.reserve(Counter.tell());
  llvm::raw_string_ostream OS(S);
  writeProgram(OS, P);
  OS.flush();
  return S;
}

void writeEmbeddedModule(JsonPrinter &W, const Module &M) { writeModule(W, M); }

std::string formatModule(const Module &M) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  {
    JsonPrinter W(OS, JsonPrinter::Layout::Compact);
    writeModule(W, M);
  }
  OS.flush();
  return S;
}

llvm::json::Value moduleToJson(const Module &M) {
  ValueBuilder B;
  writeModule(B, M);
  return B.take();
}

llvm::json::Value programToJson(const Program &P) {
  ValueBuilder B;
  emitProgram(B, P);
  return B.take();
}

} // namespace loom::bir
