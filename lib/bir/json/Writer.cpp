#include "loom/bir/json/BirJson.h"

#include "loom/bir/ir/Instructions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::bir {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

constexpr size_t LineWidth = 120;

Value coresToJson(llvm::ArrayRef<unsigned> Cores) {
  Array A;
  for (unsigned C : Cores)
    A.push_back(C);
  return A;
}

Value accessPatternToJson(const AccessPattern &AP) {
  Array Pattern;
  for (const PatternDim &D : AP.getPattern())
    Pattern.push_back(Array{D.Step, D.Count});
  // A pass may leave a location unset; the name "" then fails to load.
  const MemoryLocation *L = AP.getLocation();
  return Object{{"memloc", L ? L->getName().str() : ""},
                {"start_partition", AP.getStartPartition()},
                {"partitions", AP.getNumPartitions()},
                {"offset", AP.getOffset()},
                {"pattern", std::move(Pattern)},
                {"dtype", enumName(AP.getType())}};
}

Value accessPatternsToJson(llvm::ArrayRef<AccessPattern> APs) {
  Array A;
  for (const AccessPattern &AP : APs)
    A.push_back(accessPatternToJson(AP));
  return A;
}

void addAttributes(Object &O, const Instruction &I) {
  using llvm::dyn_cast;
  if (const auto *CC = dyn_cast<InstCollectiveCompute>(&I)) {
    O["kind"] = enumName(CC->getKind());
    O["group"] = coresToJson(CC->getGroup());
    O["reduce"] = enumName(CC->getReduceOp());
    O["local"] = CC->isLocal();
  } else if (const auto *DMA = dyn_cast<InstDMACopy>(&I)) {
    O["accumulate"] = DMA->isAccumulate();
  } else if (const auto *SB2SB = dyn_cast<InstGPSIMDSB2SB>(&I)) {
    O["lowered"] = SB2SB->isLowered();
  } else if (const auto *TC = dyn_cast<InstTensorCompletion>(&I)) {
    Array Waits;
    for (const CompletionWait &W : TC->getWaits())
      Waits.push_back(Object{{"core", W.Core}, {"instruction", W.Instruction}});
    O["waits"] = std::move(Waits);
  } else if (const auto *SW = dyn_cast<InstSemaphoreWait>(&I)) {
    O["semaphore"] = SW->getSemaphore().str();
    O["count"] = SW->getCount();
  } else if (const auto *CB = dyn_cast<InstCoreBarrier>(&I)) {
    O["id"] = CB->getId();
    O["cores"] = coresToJson(CB->getCores());
  } else if (const auto *MM = dyn_cast<InstMatmul>(&I)) {
    O["accumulate"] = MM->isAccumulate();
  } else if (const auto *Act = dyn_cast<InstActivation>(&I)) {
    O["func"] = enumName(Act->getFunc());
    O["scale"] = Act->getScale();
  } else if (const auto *TT = dyn_cast<InstTensorTensor>(&I)) {
    O["op"] = enumName(TT->getOp());
  } else if (const auto *MS = dyn_cast<InstMemset>(&I)) {
    O["value"] = MS->getValue();
  } else if (const auto *Br = dyn_cast<InstBranch>(&I)) {
    O["kind"] = enumName(Br->getKind());
    if (Br->getKind() == BranchKind::Loop)
      O["trip_count"] = Br->getTripCount();
  }
}

Value instructionToJson(const Instruction &I) {
  Array Deps;
  for (const Instruction *D : I.dependencies())
    Deps.push_back(D->getName().str());
  Object O{{"name", I.getName().str()},
           {"type", getInstructionTypeName(I.getType())},
           {"opcode", static_cast<unsigned>(I.getType())},
           {"engine", enumName(I.getEngine())},
           {"inputs", accessPatternsToJson(I.inputs())},
           {"outputs", accessPatternsToJson(I.outputs())},
           {"deps", std::move(Deps)}};
  addAttributes(O, I);
  // A copy without a signal has no "signal" field: absent means none.
  if (const auto *Copy = llvm::dyn_cast<InstCopyBase>(&I))
    if (const std::optional<SemaphoreSignal> &S = Copy->getSignal())
      O["signal"] = Object{{"core", S->Core}, {"semaphore", S->Semaphore}};
  return O;
}

Value blockToJson(const BasicBlock &BB) {
  Array Succs, Insts;
  for (const BasicBlock *S : BB.successors())
    Succs.push_back(S->getName().str());
  for (const auto &I : BB)
    Insts.push_back(instructionToJson(*I));
  return Object{{"name", BB.getName().str()},
                {"successors", std::move(Succs)},
                {"instructions", std::move(Insts)}};
}

Value locationToJson(const MemoryLocation &L) {
  Object O{{"name", L.getName().str()},
           {"tensor_id", L.getTensorId()},
           {"kind", enumName(L.getKind())},
           {"dtype", enumName(L.getType())},
           {"partitions", L.getNumPartitions()},
           {"bytes_per_partition", L.getBytesPerPartition()},
           {"written_by_another_core", L.isWrittenByAnotherCore()},
           {"allocated", L.isAllocated()}};
  // A local location has no "remote" field: absent means local.
  if (const std::optional<RemoteRef> &R = L.getRemote())
    O["remote"] = Object{{"core", R->Core}, {"memloc", R->MemLoc}};
  return O;
}

/// Counts what is written to it: the length of a value's compact form
/// without building the text.
class CountingStream : public llvm::raw_ostream {
public:
  CountingStream() { SetUnbuffered(); }

private:
  void write_impl(const char *, size_t Size) override { Count += Size; }
  uint64_t current_pos() const override { return Count; }
  uint64_t Count = 0;
};

/// Writes a document compactly where a value fits in the line and one member
/// per line otherwise. Every container's compact length is computed once,
/// bottom up, so saving is linear in the document, whatever its depth.
class PrettyPrinter {
public:
  explicit PrettyPrinter(llvm::raw_ostream &OS) : OS(OS) {}

  void print(const Value &V, unsigned Indent, size_t Column) {
    const Object *O = V.getAsObject();
    const Array *A = V.getAsArray();
    if ((!O && !A) || Column + compactSize(V) <= LineWidth) {
      llvm::json::OStream(OS).value(V);
      return;
    }
    unsigned Inner = Indent + 2;
    if (A) {
      OS << "[\n";
      for (size_t I = 0; I < A->size(); ++I) {
        OS.indent(Inner);
        print((*A)[I], Inner, Inner);
        OS << (I + 1 < A->size() ? ",\n" : "\n");
      }
      OS.indent(Indent) << ']';
      return;
    }
    std::vector<llvm::StringRef> Keys;
    for (const auto &KV : *O)
      Keys.push_back(KV.first);
    llvm::sort(Keys);
    OS << "{\n";
    for (size_t I = 0; I < Keys.size(); ++I) {
      OS.indent(Inner);
      size_t KeyWidth = leafSize(Value(Keys[I])) + 2;
      llvm::json::OStream(OS).value(Keys[I]);
      OS << ": ";
      print(*O->get(Keys[I]), Inner, Inner + KeyWidth);
      OS << (I + 1 < Keys.size() ? ",\n" : "\n");
    }
    OS.indent(Indent) << '}';
  }

private:
  static size_t leafSize(const Value &V) {
    CountingStream C;
    llvm::json::OStream(C).value(V);
    return C.tell();
  }

  /// The length of V's compact form, as llvm::json writes it:
  /// {"k":v,...} and [v,...].
  size_t compactSize(const Value &V) {
    const Object *O = V.getAsObject();
    const Array *A = V.getAsArray();
    if (!O && !A)
      return leafSize(V);
    auto It = Sizes.find(&V);
    if (It != Sizes.end())
      return It->second;
    size_t Size = 2;
    if (A) {
      for (const Value &E : *A)
        Size += compactSize(E) + 1;
      Size -= A->empty() ? 0 : 1;
    } else {
      for (const auto &KV : *O)
        Size += leafSize(Value(llvm::StringRef(KV.first))) + 1 +
                compactSize(KV.second) + 1;
      Size -= O->empty() ? 0 : 1;
    }
    Sizes[&V] = Size;
    return Size;
  }

  llvm::raw_ostream &OS;
  llvm::DenseMap<const Value *, size_t> Sizes;
};

} // namespace

Value moduleToJson(const Module &M) {
  Array Locs, Blocks;
  for (const auto &L : M.getMemoryLocations().locations())
    Locs.push_back(locationToJson(*L));
  for (const auto &BB : M.blocks())
    Blocks.push_back(blockToJson(*BB));
  const PassOptions &Opts = M.getPassOptions();
  return Object{{"name", M.getName().str()},
                {"neuron_core_id", M.getNeuronCoreId()},
                {"subgraph_id", M.getSubgraphId()},
                {"pass_options", Object{{"lnc_size", Opts.LncSize},
                                        {"target", enumName(Opts.Arch)}}},
                {"memory_locations", std::move(Locs)},
                {"blocks", std::move(Blocks)}};
}

Value programToJson(const Program &P) {
  Array Modules;
  for (const auto &M : P)
    Modules.push_back(moduleToJson(*M));
  return Object{{"version", BirJsonVersion}, {"modules", std::move(Modules)}};
}

std::string formatProgram(const Program &P) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  PrettyPrinter(OS).print(programToJson(P), 0, 0);
  OS << '\n';
  return OS.str();
}

} // namespace loom::bir
