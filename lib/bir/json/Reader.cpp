#include "loom/bir/json/BirJson.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cmath>

namespace loom::bir {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

/// An object of the document and its path.
struct Obj {
  const Object *O = nullptr;
  std::string Path;
};

std::string field(const std::string &Path, llvm::StringRef Key) {
  return Path + "." + Key.str();
}

std::string element(const std::string &Path, size_t I) {
  return Path + "[" + std::to_string(I) + "]";
}

/// Reads a document. Only the first error is kept; after it every read
/// returns a default value, so the code reading a structure needs no error
/// handling between its fields. Every reader entry point checks for the error
/// before it hands anything built from those defaults to the caller.
class Reader {
public:
  llvm::Expected<Program> readProgram(const Value &V);
  llvm::Expected<std::unique_ptr<Module>> readModule(const Value &V,
                                                     const std::string &Path);

private:
  /// Null after an error.
  std::unique_ptr<Module> buildModule(const Value &V, const std::string &Path);

  void fail(const std::string &Path, const llvm::Twine &Msg);
  llvm::Error takeError() { return makeError(*Error); }

  // Values.
  Obj asObject(const Value *V, const std::string &Path);
  const Array *asArray(const Value *V, const std::string &Path);
  std::string asString(const Value *V, const std::string &Path);
  uint64_t asUnsigned(const Value *V, const std::string &Path, uint64_t Max);
  int64_t asSigned(const Value *V, const std::string &Path);
  bool asBool(const Value *V, const std::string &Path);
  double asNumber(const Value *V, const std::string &Path);
  template <typename E> E asEnum(const Value *V, const std::string &Path);
  InstructionType asInstructionType(const Value *V, const std::string &Path);

  // Fields of an object; those with a default may be absent.
  void checkKeys(const Obj &O, llvm::ArrayRef<llvm::StringRef> Keys);
  const Value *get(const Obj &O, llvm::StringRef Key, bool Required);
  std::string getString(const Obj &O, llvm::StringRef Key);
  uint64_t getUnsigned(const Obj &O, llvm::StringRef Key, uint64_t Max,
                       std::optional<uint64_t> Default = std::nullopt);
  bool getBool(const Obj &O, llvm::StringRef Key);
  double getNumber(const Obj &O, llvm::StringRef Key,
                   std::optional<double> Default = std::nullopt);
  template <typename E>
  E getEnum(const Obj &O, llvm::StringRef Key,
            std::optional<E> Default = std::nullopt);
  std::vector<unsigned> getCores(const Obj &O, llvm::StringRef Key);
  /// Calls F on each element of the array O.Key; an absent array is empty.
  void forEach(const Obj &O, llvm::StringRef Key, bool Required,
               llvm::function_ref<void(const Value &, const std::string &)> F);

  // Structures.
  PassOptions readPassOptions(const Obj &O);
  void readLocation(const Value &V, const std::string &Path);
  void readBlocks(const Obj &O);
  void readInstruction(const Value &V, const std::string &Path, BasicBlock &BB);
  void checkInstructionKeys(const Obj &O, llvm::ArrayRef<llvm::StringRef> Own);
  std::unique_ptr<Instruction> createInstruction(InstructionType T,
                                                 const Obj &O, std::string Name,
                                                 Engine E);
  void readSignal(const Obj &O, InstCopyBase &I);
  std::optional<AccessPattern> readAccessPattern(const Value &V,
                                                 const std::string &Path);
  std::vector<PatternDim> readPattern(const Obj &O);
  void resolveDependencies();

  std::optional<std::string> Error;
  // The module being read.
  std::unique_ptr<Module> M;
  llvm::StringMap<BasicBlock *> Blocks;
  llvm::StringMap<Instruction *> Insts;
  std::vector<std::pair<Instruction *, Obj>> PendingDeps;
};

void Reader::fail(const std::string &Path, const llvm::Twine &Msg) {
  if (!Error)
    Error = Path + ": " + Msg.str();
}

Obj Reader::asObject(const Value *V, const std::string &Path) {
  if (!V || Error)
    return {nullptr, Path};
  if (!V->getAsObject())
    fail(Path, "expected an object");
  return {V->getAsObject(), Path};
}

const Array *Reader::asArray(const Value *V, const std::string &Path) {
  if (!V || Error)
    return nullptr;
  if (!V->getAsArray())
    fail(Path, "expected an array");
  return V->getAsArray();
}

std::string Reader::asString(const Value *V, const std::string &Path) {
  if (!V || Error)
    return "";
  if (auto S = V->getAsString())
    return S->str();
  fail(Path, "expected a string");
  return "";
}

uint64_t Reader::asUnsigned(const Value *V, const std::string &Path,
                            uint64_t Max) {
  if (!V || Error)
    return 0;
  auto N = V->getAsUINT64();
  if (!N || *N > Max)
    fail(Path, "expected an integer from 0 to " + llvm::Twine(Max));
  return N ? *N : 0;
}

int64_t Reader::asSigned(const Value *V, const std::string &Path) {
  if (!V || Error)
    return 0;
  auto N = V->getAsInteger();
  if (!N)
    fail(Path, "expected a 64-bit signed integer");
  return N ? *N : 0;
}

bool Reader::asBool(const Value *V, const std::string &Path) {
  if (!V || Error)
    return false;
  auto B = V->getAsBoolean();
  if (!B)
    fail(Path, "expected true or false");
  return B && *B;
}

double Reader::asNumber(const Value *V, const std::string &Path) {
  if (!V || Error)
    return 0;
  auto D = V->getAsNumber();
  if (!D || !std::isfinite(*D))
    fail(Path, "expected a number");
  return D ? *D : 0;
}

template <typename E>
E Reader::asEnum(const Value *V, const std::string &Path) {
  std::string S = asString(V, Path);
  if (Error)
    return E();
  std::optional<E> Parsed = parseEnum<E>(S);
  if (!Parsed)
    fail(Path, "unknown value '" + S + "'; expected one of " +
                   llvm::join(enumNames<E>(), ", "));
  return Parsed.value_or(E());
}

InstructionType Reader::asInstructionType(const Value *V,
                                          const std::string &Path) {
  std::string S = asString(V, Path);
  if (Error)
    return InstructionType::Branch;
  std::optional<InstructionType> T = parseInstructionType(S);
  if (!T) {
    std::vector<llvm::StringRef> Names;
    for (InstructionType Known : allInstructionTypes())
      Names.push_back(getInstructionTypeName(Known));
    fail(Path, "unknown instruction type '" + S + "'; expected one of " +
                   llvm::join(Names, ", "));
  }
  return T.value_or(InstructionType::Branch);
}

void Reader::checkKeys(const Obj &O, llvm::ArrayRef<llvm::StringRef> Keys) {
  if (!O.O || Error)
    return;
  std::vector<llvm::StringRef> Unknown;
  for (const auto &KV : *O.O)
    if (!llvm::is_contained(Keys, llvm::StringRef(KV.first)))
      Unknown.push_back(KV.first);
  llvm::sort(Unknown);
  if (!Unknown.empty())
    fail(field(O.Path, Unknown.front()),
         "unknown field; expected one of " + llvm::join(Keys, ", "));
}

const Value *Reader::get(const Obj &O, llvm::StringRef Key, bool Required) {
  if (!O.O || Error)
    return nullptr;
  const Value *V = O.O->get(Key);
  if (!V && Required)
    fail(O.Path, "missing field '" + Key + "'");
  return V;
}

std::string Reader::getString(const Obj &O, llvm::StringRef Key) {
  return asString(get(O, Key, true), field(O.Path, Key));
}

uint64_t Reader::getUnsigned(const Obj &O, llvm::StringRef Key, uint64_t Max,
                             std::optional<uint64_t> Default) {
  const Value *V = get(O, Key, !Default);
  return V ? asUnsigned(V, field(O.Path, Key), Max) : Default.value_or(0);
}

bool Reader::getBool(const Obj &O, llvm::StringRef Key) {
  const Value *V = get(O, Key, false);
  return V && asBool(V, field(O.Path, Key));
}

double Reader::getNumber(const Obj &O, llvm::StringRef Key,
                         std::optional<double> Default) {
  const Value *V = get(O, Key, !Default);
  return V ? asNumber(V, field(O.Path, Key)) : Default.value_or(0);
}

template <typename E>
E Reader::getEnum(const Obj &O, llvm::StringRef Key, std::optional<E> Default) {
  const Value *V = get(O, Key, !Default);
  return V ? asEnum<E>(V, field(O.Path, Key)) : Default.value_or(E());
}

std::vector<unsigned> Reader::getCores(const Obj &O, llvm::StringRef Key) {
  std::vector<unsigned> Cores;
  forEach(O, Key, true, [&](const Value &V, const std::string &Path) {
    Cores.push_back(asUnsigned(&V, Path, UINT_MAX));
  });
  return Cores;
}

void Reader::forEach(
    const Obj &O, llvm::StringRef Key, bool Required,
    llvm::function_ref<void(const Value &, const std::string &)> F) {
  std::string Path = field(O.Path, Key);
  const Array *A = asArray(get(O, Key, Required), Path);
  for (size_t I = 0; A && I < A->size() && !Error; ++I)
    F((*A)[I], element(Path, I));
}

llvm::Expected<Program> Reader::readProgram(const Value &V) {
  Obj O = asObject(&V, "$");
  checkKeys(O, {"version", "modules"});
  uint64_t Version = getUnsigned(O, "version", UINT_MAX);
  if (!Error && Version != BirJsonVersion)
    fail("$.version", "version " + llvm::Twine(Version) + " is not " +
                          llvm::Twine(BirJsonVersion) + ", the one loom reads");
  Program P;
  forEach(O, "modules", true, [&](const Value &MV, const std::string &Path) {
    if (std::unique_ptr<Module> Mod = buildModule(MV, Path))
      P.push_back(std::move(Mod));
  });
  if (Error)
    return takeError();
  return P;
}

llvm::Expected<std::unique_ptr<Module>>
Reader::readModule(const Value &V, const std::string &Path) {
  std::unique_ptr<Module> Mod = buildModule(V, Path);
  if (Error)
    return takeError();
  return Mod;
}

std::unique_ptr<Module> Reader::buildModule(const Value &V,
                                            const std::string &Path) {
  Blocks.clear();
  Insts.clear();
  PendingDeps.clear();
  Obj O = asObject(&V, Path);
  checkKeys(O, {"name", "neuron_core_id", "subgraph_id", "pass_options",
                "memory_locations", "blocks"});
  std::string Name = getString(O, "name");
  unsigned Core = getUnsigned(O, "neuron_core_id", UINT_MAX);
  unsigned Subgraph = getUnsigned(O, "subgraph_id", UINT_MAX);
  PassOptions Opts = readPassOptions(O);
  if (Error)
    return nullptr;
  M = std::make_unique<Module>(Name, Core, Subgraph, Opts);
  forEach(
      O, "memory_locations", true,
      [&](const Value &LV, const std::string &LP) { readLocation(LV, LP); });
  readBlocks(O);
  resolveDependencies();
  if (Error)
    return nullptr;
  return std::move(M);
}

PassOptions Reader::readPassOptions(const Obj &Parent) {
  Obj O = asObject(get(Parent, "pass_options", true),
                   field(Parent.Path, "pass_options"));
  checkKeys(O, {"lnc_size", "target"});
  PassOptions Opts;
  Opts.LncSize = getUnsigned(O, "lnc_size", UINT_MAX);
  Opts.Arch = getEnum<Target>(O, "target");
  return Opts;
}

void Reader::readLocation(const Value &V, const std::string &Path) {
  Obj O = asObject(&V, Path);
  checkKeys(O, {"name", "tensor_id", "kind", "dtype", "partitions",
                "bytes_per_partition", "written_by_another_core", "allocated",
                "remote"});
  std::string Name = getString(O, "name");
  uint64_t TensorId = getUnsigned(O, "tensor_id", UINT64_MAX);
  MemoryKind Kind = getEnum<MemoryKind>(O, "kind");
  DataType Type = getEnum<DataType>(O, "dtype");
  unsigned Partitions = getUnsigned(O, "partitions", UINT_MAX);
  uint64_t Bytes = getUnsigned(O, "bytes_per_partition", UINT64_MAX);
  bool Remote = getBool(O, "written_by_another_core");
  bool Allocated = getBool(O, "allocated");
  std::optional<RemoteRef> Ref;
  if (const Value *RV = get(O, "remote", false)) {
    Obj R = asObject(RV, field(Path, "remote"));
    checkKeys(R, {"core", "memloc"});
    unsigned RCore = getUnsigned(R, "core", UINT_MAX);
    Ref = RemoteRef{RCore, getString(R, "memloc")};
  }
  if (Error)
    return;
  auto L = std::make_unique<MemoryLocation>(Name, TensorId, Kind, Type,
                                            Partitions, Bytes);
  L->setIsWrittenByAnotherCore(Remote);
  L->setIsAllocated(Allocated);
  if (Ref)
    L->setRemote(Ref->Core, Ref->MemLoc);
  llvm::Expected<MemoryLocation *> Added =
      M->getMemoryLocations().add(std::move(L));
  if (!Added)
    fail(Path, llvm::toString(Added.takeError()));
}

// Blocks are created first so that successors can name later blocks.
void Reader::readBlocks(const Obj &O) {
  std::vector<Obj> BlockObjs;
  forEach(O, "blocks", true, [&](const Value &V, const std::string &Path) {
    Obj B = asObject(&V, Path);
    checkKeys(B, {"name", "successors", "instructions"});
    std::string Name = getString(B, "name");
    if (Error)
      return;
    if (!Blocks.try_emplace(Name, M->createBlock(Name)).second)
      fail(field(Path, "name"), "duplicate block name '" + Name + "'");
    BlockObjs.push_back(B);
  });
  for (size_t I = 0; I < BlockObjs.size() && !Error; ++I) {
    BasicBlock &BB = *M->getBlock(I);
    forEach(BlockObjs[I], "successors", false,
            [&](const Value &V, const std::string &Path) {
              std::string Name = asString(&V, Path);
              if (BasicBlock *S = Blocks.lookup(Name))
                BB.addSuccessor(S);
              else if (!Error)
                fail(Path, "no block named '" + Name + "' in this module");
            });
    forEach(BlockObjs[I], "instructions", true,
            [&](const Value &V, const std::string &Path) {
              readInstruction(V, Path, BB);
            });
  }
}

void Reader::readInstruction(const Value &V, const std::string &Path,
                             BasicBlock &BB) {
  Obj O = asObject(&V, Path);
  std::string Name = getString(O, "name");
  InstructionType T =
      asInstructionType(get(O, "type", true), field(Path, "type"));
  Engine E = getEnum<Engine>(O, "engine");
  if (const Value *Op = get(O, "opcode", false)) {
    uint64_t Opcode = asUnsigned(Op, field(Path, "opcode"), UINT_MAX);
    if (!Error && Opcode != static_cast<unsigned>(T))
      fail(field(Path, "opcode"), "opcode " + llvm::Twine(Opcode) + " is not " +
                                      getInstructionTypeName(T) + "'s (" +
                                      llvm::Twine(static_cast<unsigned>(T)) +
                                      ")");
  }
  std::unique_ptr<Instruction> I = createInstruction(T, O, Name, E);
  forEach(O, "inputs", false, [&](const Value &AV, const std::string &AP) {
    if (std::optional<AccessPattern> X = readAccessPattern(AV, AP))
      I->addInput(*X);
  });
  forEach(O, "outputs", false, [&](const Value &AV, const std::string &AP) {
    if (std::optional<AccessPattern> X = readAccessPattern(AV, AP))
      I->addOutput(*X);
  });
  if (Error)
    return;
  Instruction *Raw = BB.append(std::move(I));
  if (!Insts.try_emplace(Name, Raw).second)
    fail(field(Path, "name"), "duplicate instruction name '" + Name + "'");
  PendingDeps.push_back({Raw, O});
}

void Reader::checkInstructionKeys(const Obj &O,
                                  llvm::ArrayRef<llvm::StringRef> Own) {
  std::vector<llvm::StringRef> Keys = {"name",   "type",    "opcode", "engine",
                                       "inputs", "outputs", "deps"};
  Keys.insert(Keys.end(), Own.begin(), Own.end());
  checkKeys(O, Keys);
}

std::unique_ptr<Instruction> Reader::createInstruction(InstructionType T,
                                                       const Obj &O,
                                                       std::string Name,
                                                       Engine E) {
  switch (T) {
  case InstructionType::CollectiveCompute: {
    checkInstructionKeys(O, {"kind", "group", "reduce", "local"});
    auto Kind = getEnum<CollectiveKind>(O, "kind");
    std::vector<unsigned> Group = getCores(O, "group");
    auto Op = getEnum<ReduceOp>(O, "reduce", ReduceOp::None);
    bool Local = getBool(O, "local");
    return std::make_unique<InstCollectiveCompute>(Name, E, Kind, Group, Op,
                                                   Local);
  }
  case InstructionType::DMACopy: {
    checkInstructionKeys(O, {"accumulate", "signal"});
    auto I = std::make_unique<InstDMACopy>(Name, E, getBool(O, "accumulate"));
    readSignal(O, *I);
    return I;
  }
  case InstructionType::GPSIMDSB2SB: {
    checkInstructionKeys(O, {"lowered", "signal"});
    auto I = std::make_unique<InstGPSIMDSB2SB>(Name, E, getBool(O, "lowered"));
    readSignal(O, *I);
    return I;
  }
  case InstructionType::SemaphoreWait: {
    checkInstructionKeys(O, {"semaphore", "count"});
    std::string Sem = getString(O, "semaphore");
    unsigned Count = getUnsigned(O, "count", UINT_MAX, 1);
    return std::make_unique<InstSemaphoreWait>(Name, E, Sem, Count);
  }
  case InstructionType::TensorCopy:
    checkInstructionKeys(O, {});
    return std::make_unique<InstTensorCopy>(Name, E);
  case InstructionType::CoreBarrier: {
    checkInstructionKeys(O, {"id", "cores"});
    unsigned Id = getUnsigned(O, "id", UINT_MAX);
    return std::make_unique<InstCoreBarrier>(Name, E, Id, getCores(O, "cores"));
  }
  case InstructionType::TensorCompletion: {
    checkInstructionKeys(O, {"waits"});
    auto I = std::make_unique<InstTensorCompletion>(Name, E);
    forEach(O, "waits", false, [&](const Value &V, const std::string &Path) {
      Obj W = asObject(&V, Path);
      checkKeys(W, {"core", "instruction"});
      unsigned Core = getUnsigned(W, "core", UINT_MAX);
      I->addWait({Core, getString(W, "instruction")});
    });
    return I;
  }
  case InstructionType::Matmul:
    checkInstructionKeys(O, {"accumulate"});
    return std::make_unique<InstMatmul>(Name, E, getBool(O, "accumulate"));
  case InstructionType::Activation: {
    checkInstructionKeys(O, {"func", "scale"});
    auto Func = getEnum<ActivationFunc>(O, "func");
    return std::make_unique<InstActivation>(Name, E, Func,
                                            getNumber(O, "scale", 1.0));
  }
  case InstructionType::TensorTensor:
    checkInstructionKeys(O, {"op"});
    return std::make_unique<InstTensorTensor>(Name, E,
                                              getEnum<ArithOp>(O, "op"));
  case InstructionType::Memset:
    checkInstructionKeys(O, {"value"});
    return std::make_unique<InstMemset>(Name, E, getNumber(O, "value"));
  case InstructionType::Branch: {
    checkInstructionKeys(O, {"kind", "trip_count"});
    auto Kind = getEnum<BranchKind>(O, "kind");
    bool IsLoop = Kind == BranchKind::Loop;
    if (!IsLoop && get(O, "trip_count", false))
      fail(field(O.Path, "trip_count"), "only a Loop has a trip count");
    unsigned Trips =
        getUnsigned(O, "trip_count", UINT_MAX,
                    IsLoop ? std::nullopt : std::optional<uint64_t>(0));
    return std::make_unique<InstBranch>(Name, E, Kind, Trips);
  }
  }
  llvm_unreachable("unknown instruction type");
}

void Reader::readSignal(const Obj &O, InstCopyBase &I) {
  const Value *V = get(O, "signal", false);
  if (!V)
    return;
  Obj S = asObject(V, field(O.Path, "signal"));
  checkKeys(S, {"core", "semaphore"});
  unsigned Core = getUnsigned(S, "core", UINT_MAX);
  std::string Sem = getString(S, "semaphore");
  if (!Error)
    I.setSignal(Core, Sem);
}

std::optional<AccessPattern>
Reader::readAccessPattern(const Value &V, const std::string &Path) {
  Obj O = asObject(&V, Path);
  checkKeys(O, {"memloc", "start_partition", "partitions", "offset", "pattern",
                "dtype"});
  std::string LocName = getString(O, "memloc");
  MemoryLocation *L =
      Error ? nullptr : M->getMemoryLocations().getMemlocByName(LocName);
  if (!L)
    fail(field(Path, "memloc"),
         "no memory location named '" + LocName + "' in this module");
  unsigned Start = getUnsigned(O, "start_partition", UINT_MAX, 0);
  unsigned Partitions = getUnsigned(O, "partitions", UINT_MAX);
  uint64_t Offset = getUnsigned(O, "offset", UINT64_MAX, 0);
  std::vector<PatternDim> Pattern = readPattern(O);
  DataType Type = getEnum<DataType>(O, "dtype", L ? L->getType() : DataType());
  if (Error)
    return std::nullopt;
  return AccessPattern(L, Start, Partitions, Offset, std::move(Pattern), Type);
}

std::vector<PatternDim> Reader::readPattern(const Obj &O) {
  std::vector<PatternDim> Pattern;
  forEach(O, "pattern", true, [&](const Value &V, const std::string &Path) {
    const Array *Pair = asArray(&V, Path);
    if (Pair && Pair->size() != 2)
      fail(Path, "expected a [step, count] pair");
    if (Error)
      return;
    int64_t Step = asSigned(&(*Pair)[0], element(Path, 0));
    uint64_t Count = asUnsigned(&(*Pair)[1], element(Path, 1), UINT64_MAX);
    Pattern.push_back({Step, Count});
  });
  return Pattern;
}

// Dependencies may name instructions of later blocks, so they are resolved
// once every instruction exists.
void Reader::resolveDependencies() {
  for (auto &[I, O] : PendingDeps)
    forEach(
        O, "deps", false, [&, I = I](const Value &V, const std::string &Path) {
          std::string Name = asString(&V, Path);
          Instruction *D = Insts.lookup(Name);
          if (Error)
            return;
          if (!D)
            fail(Path, "no instruction named '" + Name + "' in this module");
          else if (llvm::is_contained(I->dependencies(), D))
            fail(Path, "'" + Name + "' is listed twice");
          else
            I->addDependency(D);
        });
}

/// A BIR document nests about eight levels deep. llvm::json's parser
/// recurses once per level, so a hostile document of a million nested arrays
/// would overflow the stack: deeper nesting is refused, located, before
/// parsing.
constexpr unsigned MaxNestingDepth = 256;

llvm::Error checkNestingDepth(llvm::StringRef FileName, llvm::StringRef Text) {
  unsigned Depth = 0;
  bool InString = false;
  for (size_t I = 0; I < Text.size(); ++I) {
    char C = Text[I];
    if (InString) {
      if (C == '\\')
        ++I;
      else if (C == '"')
        InString = false;
      continue;
    }
    if (C == '"') {
      InString = true;
    } else if (C == '[' || C == '{') {
      if (++Depth > MaxNestingDepth)
        return makeLocatedError(locate(FileName, Text, I),
                                "nesting deeper than " +
                                    llvm::Twine(MaxNestingDepth) +
                                    " levels; a BIR document needs far fewer");
    } else if ((C == ']' || C == '}') && Depth > 0) {
      --Depth;
    }
  }
  return llvm::Error::success();
}

/// llvm::json reports "[line:column, byte=offset]: message"; loom locates
/// errors as "file:line:column: message", 1-based, from the byte offset.
llvm::Error syntaxError(llvm::StringRef FileName, llvm::StringRef Text,
                        llvm::StringRef Report) {
  llvm::StringRef Rest = Report;
  size_t Offset;
  if (Rest.consume_front("[") && Rest.contains("byte=")) {
    Rest = Rest.drop_until([](char C) { return C == '='; }).drop_front();
    if (!Rest.consumeInteger(10, Offset) && Rest.consume_front("]: "))
      return makeLocatedError(locate(FileName, Text, Offset),
                              "not valid JSON: " + Rest);
  }
  return makeError(FileName + ": not valid JSON: " + Report);
}

} // namespace

llvm::Expected<std::unique_ptr<Module>> moduleFromJson(const Value &V,
                                                       llvm::StringRef Path) {
  return Reader().readModule(V, Path.str());
}

llvm::Expected<Program> parseProgram(llvm::StringRef Text,
                                     llvm::StringRef FileName,
                                     const LoadOptions &Opts) {
  auto Located = [&](llvm::Error E) {
    return makeError(FileName + ": " + llvm::toString(std::move(E)));
  };
  if (Text.trim().empty())
    return makeError(FileName + ": empty document");
  if (llvm::Error E = checkNestingDepth(FileName, Text))
    return E;
  llvm::Expected<Value> V = llvm::json::parse(Text);
  if (!V)
    return syntaxError(FileName, Text, llvm::toString(V.takeError()));
  llvm::Expected<Program> P = Reader().readProgram(*V);
  if (!P)
    return Located(P.takeError());
  for (const auto &M : *P) {
    if (Opts.LncSize)
      M->getPassOptions().LncSize = *Opts.LncSize;
    if (Opts.Arch)
      M->getPassOptions().Arch = *Opts.Arch;
  }
  if (llvm::Error E = verifyProgram(*P))
    return Located(std::move(E));
  return P;
}

} // namespace loom::bir
