#include "loom/bir/json/BirJson.h"

#include "ReadDocument.h"

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/JsonDocument.h"
#include "loom/support/Base64.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cmath>
#include <limits>

namespace loom::bir {

namespace {

/// Where a value sits in its document, e.g. $.modules[0].blocks[2]. It is
/// made into text only for an error: each level points to its parent, a
/// local of the caller reading the enclosing value.
class JsonPath {
public:
  explicit JsonPath(llvm::StringRef Root) : Name(Root) {}

  JsonPath field(llvm::StringRef Key) const {
    return JsonPath(this, Key, 0, true);
  }
  JsonPath element(size_t I) const { return JsonPath(this, "", I, false); }

  std::string str() const {
    if (!Parent)
      return Name.str();
    std::string S = Parent->str();
    if (IsField)
      return S + "." + Name.str();
    return S + "[" + std::to_string(Index) + "]";
  }

private:
  JsonPath(const JsonPath *Parent, llvm::StringRef Name, size_t Index,
           bool IsField)
      : Parent(Parent), Name(Name), Index(Index), IsField(IsField) {}

  const JsonPath *Parent = nullptr;
  llvm::StringRef Name;
  size_t Index = 0;
  bool IsField = false;
};

/// An object of the document (no value when it is not one) and its path,
/// which must outlive it. Its members are listed once, for the lookups of
/// its fields.
struct Obj {
  Obj(JsonRef O, const JsonPath *Path) : O(O), Path(Path) {
    O.forEachMember([&](llvm::StringRef Key, JsonRef Value) {
      Members.push_back({Key, Value});
    });
  }

  /// The value of Key; the last one if it repeats, as llvm::json keeps.
  JsonRef get(llvm::StringRef Key) const {
    for (auto It = Members.rbegin(); It != Members.rend(); ++It)
      if (It->first == Key)
        return It->second;
    return JsonRef();
  }

  JsonRef O;
  const JsonPath *Path;
  llvm::SmallVector<std::pair<llvm::StringRef, JsonRef>, 12> Members;
};

/// Reads a document. Only the first error is kept; after it every read
/// returns a default value, so the code reading a structure needs no error
/// handling between its fields. Every reader entry point checks for the error
/// before it hands anything built from those defaults to the caller.
class Reader {
public:
  llvm::Expected<Program> readProgram(JsonRef V);
  llvm::Expected<std::unique_ptr<Module>> readModule(JsonRef V,
                                                     const JsonPath &Path);

private:
  /// Null after an error.
  std::unique_ptr<Module> buildModule(JsonRef V, const JsonPath &Path);

  void fail(const JsonPath &Path, const llvm::Twine &Msg);
  llvm::Error takeError() { return makeError(*Error); }

  // Values; an absent value (no JsonRef) reads as the default, silently.
  Obj asObject(JsonRef V, const JsonPath &Path);
  JsonRef asArray(JsonRef V, const JsonPath &Path);
  llvm::StringRef asString(JsonRef V, const JsonPath &Path);
  uint64_t asUnsigned(JsonRef V, const JsonPath &Path, uint64_t Max);
  int64_t asSigned(JsonRef V, const JsonPath &Path);
  bool asBool(JsonRef V, const JsonPath &Path);
  double asNumber(JsonRef V, const JsonPath &Path);
  /// A number, or one of the strings "inf", "-inf", "nan".
  double asReal(JsonRef V, const JsonPath &Path);
  template <typename E> E asEnum(JsonRef V, const JsonPath &Path);
  InstructionType asInstructionType(JsonRef V, const JsonPath &Path);

  // Fields of an object; those with a default may be absent.
  void checkKeys(const Obj &O, llvm::ArrayRef<llvm::StringRef> Keys);
  JsonRef get(const Obj &O, llvm::StringRef Key, bool Required);
  llvm::StringRef getString(const Obj &O, llvm::StringRef Key);
  uint64_t getUnsigned(const Obj &O, llvm::StringRef Key, uint64_t Max,
                       std::optional<uint64_t> Default = std::nullopt);
  bool getBool(const Obj &O, llvm::StringRef Key);
  double getNumber(const Obj &O, llvm::StringRef Key,
                   std::optional<double> Default = std::nullopt);
  double getReal(const Obj &O, llvm::StringRef Key,
                 std::optional<double> Default = std::nullopt);
  int64_t getSigned(const Obj &O, llvm::StringRef Key, int64_t Default);
  template <typename E>
  E getEnum(const Obj &O, llvm::StringRef Key,
            std::optional<E> Default = std::nullopt);
  std::vector<unsigned> getCores(const Obj &O, llvm::StringRef Key);
  /// Calls F on each element of the array O.Key; an absent array is empty.
  void forEach(const Obj &O, llvm::StringRef Key, bool Required,
               llvm::function_ref<void(JsonRef, const JsonPath &)> F);

  // Structures.
  TargetOptions readTargetOptions(const Obj &O);
  void readLocation(JsonRef V, const JsonPath &Path);
  void readBlocks(const Obj &O);
  void readInstruction(JsonRef V, const JsonPath &Path, BasicBlock &BB,
                       unsigned Block, unsigned Index);
  void checkInstructionKeys(const Obj &O, llvm::ArrayRef<llvm::StringRef> Own);
  std::unique_ptr<Instruction> createInstruction(InstructionType T,
                                                 const Obj &O, std::string Name,
                                                 Engine E);
  void readSignal(const Obj &O, InstCopyBase &I);
  std::optional<AccessPattern> readAccessPattern(JsonRef V,
                                                 const JsonPath &Path);
  std::vector<PatternDim> readPattern(const Obj &O);
  void resolveDependencies(const JsonPath &ModulePath);

  std::optional<std::string> Error;
  // The module being read.
  std::unique_ptr<Module> M;
  llvm::StringMap<BasicBlock *> Blocks;
  /// Keyed by the instructions' own names.
  llvm::DenseMap<llvm::StringRef, Instruction *> Insts;
  /// An instruction whose deps are read once every instruction exists:
  /// its object and its position, for the path.
  struct Pending {
    Instruction *I;
    JsonRef O;
    unsigned Block, Index;
  };
  std::vector<Pending> PendingDeps;
};

void Reader::fail(const JsonPath &Path, const llvm::Twine &Msg) {
  if (!Error)
    Error = Path.str() + ": " + Msg.str();
}

Obj Reader::asObject(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return {JsonRef(), &Path};
  if (!V.isObject()) {
    fail(Path, "expected an object");
    return {JsonRef(), &Path};
  }
  return {V, &Path};
}

JsonRef Reader::asArray(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return JsonRef();
  if (!V.isArray()) {
    fail(Path, "expected an array");
    return JsonRef();
  }
  return V;
}

llvm::StringRef Reader::asString(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return "";
  if (std::optional<llvm::StringRef> S = V.getAsString())
    return *S;
  fail(Path, "expected a string");
  return "";
}

uint64_t Reader::asUnsigned(JsonRef V, const JsonPath &Path, uint64_t Max) {
  if (!V || Error)
    return 0;
  std::optional<uint64_t> N = V.getAsUINT64();
  if (!N || *N > Max)
    fail(Path, "expected an integer from 0 to " + llvm::Twine(Max));
  return N ? *N : 0;
}

int64_t Reader::asSigned(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return 0;
  std::optional<int64_t> N = V.getAsInteger();
  if (!N)
    fail(Path, "expected a 64-bit signed integer");
  return N ? *N : 0;
}

bool Reader::asBool(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return false;
  std::optional<bool> B = V.getAsBoolean();
  if (!B)
    fail(Path, "expected true or false");
  return B && *B;
}

double Reader::asNumber(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return 0;
  std::optional<double> D = V.getAsNumber();
  if (!D || !std::isfinite(*D))
    fail(Path, "expected a number");
  return D ? *D : 0;
}

double Reader::asReal(JsonRef V, const JsonPath &Path) {
  if (!V || Error)
    return 0;
  if (std::optional<llvm::StringRef> S = V.getAsString()) {
    // JSON has no spelling for the non-finite values.
    if (*S == "inf")
      return HUGE_VAL;
    if (*S == "-inf")
      return -HUGE_VAL;
    if (*S == "nan")
      return std::numeric_limits<double>::quiet_NaN();
    fail(Path, "expected a number, \"inf\", \"-inf\" or \"nan\"");
    return 0;
  }
  std::optional<double> D = V.getAsNumber();
  if (!D || !std::isfinite(*D))
    fail(Path, "expected a number, \"inf\", \"-inf\" or \"nan\"");
  return D ? *D : 0;
}

template <typename E> E Reader::asEnum(JsonRef V, const JsonPath &Path) {
  llvm::StringRef S = asString(V, Path);
  if (Error)
    return E();
  std::optional<E> Parsed = parseEnum<E>(S);
  if (!Parsed)
    fail(Path, "unknown value '" + S + "'; expected one of " +
                   llvm::join(enumNames<E>(), ", "));
  return Parsed.value_or(E());
}

InstructionType Reader::asInstructionType(JsonRef V, const JsonPath &Path) {
  llvm::StringRef S = asString(V, Path);
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
  // The first unknown key in sorted order, whatever the document's order.
  std::optional<llvm::StringRef> Unknown;
  for (const auto &[Key, Value] : O.Members)
    if (!llvm::is_contained(Keys, Key) && (!Unknown || Key < *Unknown))
      Unknown = Key;
  if (Unknown)
    fail(O.Path->field(*Unknown),
         "unknown field; expected one of " + llvm::join(Keys, ", "));
}

JsonRef Reader::get(const Obj &O, llvm::StringRef Key, bool Required) {
  if (!O.O || Error)
    return JsonRef();
  JsonRef V = O.get(Key);
  if (!V && Required)
    fail(*O.Path, "missing field '" + Key + "'");
  return V;
}

llvm::StringRef Reader::getString(const Obj &O, llvm::StringRef Key) {
  return asString(get(O, Key, true), O.Path->field(Key));
}

uint64_t Reader::getUnsigned(const Obj &O, llvm::StringRef Key, uint64_t Max,
                             std::optional<uint64_t> Default) {
  JsonRef V = get(O, Key, !Default);
  return V ? asUnsigned(V, O.Path->field(Key), Max) : Default.value_or(0);
}

bool Reader::getBool(const Obj &O, llvm::StringRef Key) {
  JsonRef V = get(O, Key, false);
  return V && asBool(V, O.Path->field(Key));
}

double Reader::getNumber(const Obj &O, llvm::StringRef Key,
                         std::optional<double> Default) {
  JsonRef V = get(O, Key, !Default);
  return V ? asNumber(V, O.Path->field(Key)) : Default.value_or(0);
}

double Reader::getReal(const Obj &O, llvm::StringRef Key,
                       std::optional<double> Default) {
  JsonRef V = get(O, Key, !Default);
  return V ? asReal(V, O.Path->field(Key)) : Default.value_or(0);
}

int64_t Reader::getSigned(const Obj &O, llvm::StringRef Key, int64_t Default) {
  JsonRef V = get(O, Key, false);
  return V ? asSigned(V, O.Path->field(Key)) : Default;
}

template <typename E>
E Reader::getEnum(const Obj &O, llvm::StringRef Key, std::optional<E> Default) {
  JsonRef V = get(O, Key, !Default);
  return V ? asEnum<E>(V, O.Path->field(Key)) : Default.value_or(E());
}

std::vector<unsigned> Reader::getCores(const Obj &O, llvm::StringRef Key) {
  std::vector<unsigned> Cores;
  forEach(O, Key, true, [&](JsonRef V, const JsonPath &Path) {
    Cores.push_back(asUnsigned(V, Path, UINT_MAX));
  });
  return Cores;
}

void Reader::forEach(const Obj &O, llvm::StringRef Key, bool Required,
                     llvm::function_ref<void(JsonRef, const JsonPath &)> F) {
  JsonPath Path = O.Path->field(Key);
  JsonRef A = asArray(get(O, Key, Required), Path);
  size_t I = 0;
  for (JsonRef E = A.firstElement(); E && !Error; E = E.next(), ++I)
    F(E, Path.element(I));
}

llvm::Expected<Program> Reader::readProgram(JsonRef V) {
  JsonPath Root("$");
  Obj O = asObject(V, Root);
  checkKeys(O, {"version", "modules"});
  uint64_t Version = getUnsigned(O, "version", UINT_MAX);
  if (!Error && Version != BirJsonVersion)
    fail(Root.field("version"), "version " + llvm::Twine(Version) + " is not " +
                                    llvm::Twine(BirJsonVersion) +
                                    ", the one loom reads");
  Program P;
  forEach(O, "modules", true, [&](JsonRef MV, const JsonPath &Path) {
    if (std::unique_ptr<Module> Mod = buildModule(MV, Path))
      P.push_back(std::move(Mod));
  });
  if (Error)
    return takeError();
  return P;
}

llvm::Expected<std::unique_ptr<Module>>
Reader::readModule(JsonRef V, const JsonPath &Path) {
  std::unique_ptr<Module> Mod = buildModule(V, Path);
  if (Error)
    return takeError();
  return Mod;
}

std::unique_ptr<Module> Reader::buildModule(JsonRef V, const JsonPath &Path) {
  Blocks.clear();
  Insts.clear();
  PendingDeps.clear();
  Obj O = asObject(V, Path);
  checkKeys(O, {"name", "neuron_core_id", "subgraph_id", "pass_options",
                "memory_locations", "blocks"});
  llvm::StringRef Name = getString(O, "name");
  unsigned Core = getUnsigned(O, "neuron_core_id", UINT_MAX);
  unsigned Subgraph = getUnsigned(O, "subgraph_id", UINT_MAX);
  TargetOptions Opts = readTargetOptions(O);
  if (Error)
    return nullptr;
  M = std::make_unique<Module>(Name.str(), Core, Subgraph, Opts);
  forEach(O, "memory_locations", true,
          [&](JsonRef LV, const JsonPath &LP) { readLocation(LV, LP); });
  readBlocks(O);
  resolveDependencies(Path);
  if (Error)
    return nullptr;
  return std::move(M);
}

TargetOptions Reader::readTargetOptions(const Obj &Parent) {
  JsonPath Path = Parent.Path->field("pass_options");
  Obj O = asObject(get(Parent, "pass_options", true), Path);
  checkKeys(O, {"lnc_size", "target"});
  TargetOptions Opts;
  Opts.LncSize = getUnsigned(O, "lnc_size", UINT_MAX);
  Opts.Arch = getEnum<Target>(O, "target");
  return Opts;
}

void Reader::readLocation(JsonRef V, const JsonPath &Path) {
  Obj O = asObject(V, Path);
  checkKeys(O, {"name", "tensor_id", "kind", "dtype", "partitions",
                "bytes_per_partition", "written_by_another_core", "allocated",
                "remote", "initial_data"});
  llvm::StringRef Name = getString(O, "name");
  uint64_t TensorId = getUnsigned(O, "tensor_id", UINT64_MAX);
  MemoryKind Kind = getEnum<MemoryKind>(O, "kind");
  DataType Type = getEnum<DataType>(O, "dtype");
  unsigned Partitions = getUnsigned(O, "partitions", UINT_MAX);
  uint64_t Bytes = getUnsigned(O, "bytes_per_partition", UINT64_MAX);
  bool Remote = getBool(O, "written_by_another_core");
  bool Allocated = getBool(O, "allocated");
  std::optional<RemoteRef> Ref;
  if (JsonRef RV = get(O, "remote", false)) {
    JsonPath RPath = Path.field("remote");
    Obj R = asObject(RV, RPath);
    checkKeys(R, {"core", "memloc"});
    unsigned RCore = getUnsigned(R, "core", UINT_MAX);
    Ref = RemoteRef{RCore, getString(R, "memloc").str()};
  }
  std::vector<uint8_t> Data;
  if (JsonRef DV = get(O, "initial_data", false)) {
    JsonPath DPath = Path.field("initial_data");
    llvm::StringRef Text = asString(DV, DPath);
    if (!Error) {
      if (std::optional<Base64Error> E = decodeBase64(Text, Data))
        fail(DPath, "not base64: " + E->Message + " (at character " +
                        llvm::Twine(E->Offset) + ")");
      else if (Data.empty())
        fail(DPath, "empty initial data; leave the field out instead");
    }
  }
  if (Error)
    return;
  auto L = std::make_unique<MemoryLocation>(Name.str(), TensorId, Kind, Type,
                                            Partitions, Bytes);
  L->setIsWrittenByAnotherCore(Remote);
  L->setIsAllocated(Allocated);
  if (Ref)
    L->setRemote(Ref->Core, Ref->MemLoc);
  if (!Data.empty())
    L->setInitialData(std::move(Data));
  llvm::Expected<MemoryLocation *> Added =
      M->getMemoryLocations().add(std::move(L));
  if (!Added)
    fail(Path, llvm::toString(Added.takeError()));
}

// Blocks are created first so that successors can name later blocks.
void Reader::readBlocks(const Obj &O) {
  std::vector<JsonRef> BlockObjs;
  forEach(O, "blocks", true, [&](JsonRef V, const JsonPath &Path) {
    Obj B = asObject(V, Path);
    checkKeys(B, {"name", "successors", "instructions"});
    llvm::StringRef Name = getString(B, "name");
    if (Error)
      return;
    if (!Blocks.try_emplace(Name, M->createBlock(Name.str())).second)
      fail(Path.field("name"), "duplicate block name '" + Name + "'");
    BlockObjs.push_back(B.O);
  });
  JsonPath BlocksPath = O.Path->field("blocks");
  for (unsigned I = 0; I < BlockObjs.size() && !Error; ++I) {
    JsonPath Path = BlocksPath.element(I);
    Obj B{BlockObjs[I], &Path};
    BasicBlock &BB = *M->getBlock(I);
    forEach(B, "successors", false, [&](JsonRef V, const JsonPath &SP) {
      llvm::StringRef Name = asString(V, SP);
      if (BasicBlock *S = Blocks.lookup(Name))
        BB.addSuccessor(S);
      else if (!Error)
        fail(SP, "no block named '" + Name + "' in this module");
    });
    unsigned Index = 0;
    forEach(B, "instructions", true, [&](JsonRef V, const JsonPath &IP) {
      readInstruction(V, IP, BB, I, Index++);
    });
  }
}

void Reader::readInstruction(JsonRef V, const JsonPath &Path, BasicBlock &BB,
                             unsigned Block, unsigned Index) {
  Obj O = asObject(V, Path);
  llvm::StringRef Name = getString(O, "name");
  InstructionType T =
      asInstructionType(get(O, "type", true), Path.field("type"));
  Engine E = getEnum<Engine>(O, "engine");
  if (JsonRef Op = get(O, "opcode", false)) {
    JsonPath OpPath = Path.field("opcode");
    uint64_t Opcode = asUnsigned(Op, OpPath, UINT_MAX);
    if (!Error && Opcode != static_cast<unsigned>(T))
      fail(OpPath, "opcode " + llvm::Twine(Opcode) + " is not " +
                       getInstructionTypeName(T) + "'s (" +
                       llvm::Twine(static_cast<unsigned>(T)) + ")");
  }
  std::unique_ptr<Instruction> I = createInstruction(T, O, Name.str(), E);
  forEach(O, "inputs", false, [&](JsonRef AV, const JsonPath &AP) {
    if (std::optional<AccessPattern> X = readAccessPattern(AV, AP))
      I->addInput(std::move(*X));
  });
  forEach(O, "outputs", false, [&](JsonRef AV, const JsonPath &AP) {
    if (std::optional<AccessPattern> X = readAccessPattern(AV, AP))
      I->addOutput(std::move(*X));
  });
  if (Error)
    return;
  Instruction *Raw = BB.append(std::move(I));
  if (!Insts.try_emplace(Raw->getName(), Raw).second)
    fail(Path.field("name"), "duplicate instruction name '" + Name + "'");
  PendingDeps.push_back({Raw, O.O, Block, Index});
}

void Reader::checkInstructionKeys(const Obj &O,
                                  llvm::ArrayRef<llvm::StringRef> Own) {
  llvm::SmallVector<llvm::StringRef, 12> Keys = {
      "name", "type", "opcode", "engine", "inputs", "outputs", "deps"};
  Keys.append(Own.begin(), Own.end());
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
    return std::make_unique<InstCollectiveCompute>(std::move(Name), E, Kind,
                                                   std::move(Group), Op, Local);
  }
  case InstructionType::DMACopy: {
    checkInstructionKeys(O, {"accumulate", "signal"});
    auto I = std::make_unique<InstDMACopy>(std::move(Name), E,
                                           getBool(O, "accumulate"));
    readSignal(O, *I);
    return I;
  }
  case InstructionType::IndirectDMACopy: {
    checkInstructionKeys(O, {"accumulate", "dynamic", "offsets", "bounds"});
    bool Accumulate = getBool(O, "accumulate");
    auto Side = getEnum<IndirectSide>(O, "dynamic");
    auto Bounds = getEnum<IndirectBounds>(O, "bounds", IndirectBounds::Clamp);
    std::vector<IndirectOffset> Offsets;
    forEach(O, "offsets", true, [&](JsonRef V, const JsonPath &Path) {
      Obj T = asObject(V, Path);
      checkKeys(T, {"stride", "limit"});
      int64_t Stride = asSigned(get(T, "stride", true), Path.field("stride"));
      uint64_t Limit = getUnsigned(T, "limit", UINT64_MAX);
      Offsets.push_back({Stride, Limit});
    });
    return std::make_unique<InstIndirectDMACopy>(std::move(Name), E, Side,
                                                 std::move(Offsets), Accumulate,
                                                 Bounds);
  }
  case InstructionType::GPSIMDSB2SB: {
    checkInstructionKeys(O, {"lowered", "signal"});
    auto I = std::make_unique<InstGPSIMDSB2SB>(std::move(Name), E,
                                               getBool(O, "lowered"));
    readSignal(O, *I);
    return I;
  }
  case InstructionType::SemaphoreWait: {
    checkInstructionKeys(O, {"semaphore", "count"});
    std::string Sem = getString(O, "semaphore").str();
    unsigned Count = getUnsigned(O, "count", UINT_MAX, 1);
    return std::make_unique<InstSemaphoreWait>(std::move(Name), E, Sem, Count);
  }
  case InstructionType::TensorCopy:
    checkInstructionKeys(O, {});
    return std::make_unique<InstTensorCopy>(std::move(Name), E);
  case InstructionType::CoreBarrier: {
    checkInstructionKeys(O, {"id", "cores"});
    unsigned Id = getUnsigned(O, "id", UINT_MAX);
    return std::make_unique<InstCoreBarrier>(std::move(Name), E, Id,
                                             getCores(O, "cores"));
  }
  case InstructionType::TensorCompletion: {
    checkInstructionKeys(O, {"waits"});
    auto I = std::make_unique<InstTensorCompletion>(std::move(Name), E);
    forEach(O, "waits", false, [&](JsonRef V, const JsonPath &Path) {
      Obj W = asObject(V, Path);
      checkKeys(W, {"core", "instruction"});
      unsigned Core = getUnsigned(W, "core", UINT_MAX);
      I->addWait({Core, getString(W, "instruction").str()});
    });
    return I;
  }
  case InstructionType::Matmul:
    checkInstructionKeys(O, {"accumulate"});
    return std::make_unique<InstMatmul>(std::move(Name), E,
                                        getBool(O, "accumulate"));
  case InstructionType::Activation: {
    checkInstructionKeys(O, {"func", "scale"});
    auto Func = getEnum<ActivationFunc>(O, "func");
    return std::make_unique<InstActivation>(std::move(Name), E, Func,
                                            getNumber(O, "scale", 1.0));
  }
  case InstructionType::TensorTensor:
    checkInstructionKeys(O, {"op"});
    return std::make_unique<InstTensorTensor>(std::move(Name), E,
                                              getEnum<ArithOp>(O, "op"));
  case InstructionType::Memset:
    checkInstructionKeys(O, {"value"});
    return std::make_unique<InstMemset>(std::move(Name), E,
                                        getReal(O, "value"));
  case InstructionType::Select:
    checkInstructionKeys(O, {});
    return std::make_unique<InstSelect>(std::move(Name), E);
  case InstructionType::TensorConvert:
    checkInstructionKeys(O, {});
    return std::make_unique<InstTensorConvert>(std::move(Name), E);
  case InstructionType::TensorReduce: {
    checkInstructionKeys(O, {"op", "accumulate", "init"});
    auto Op = getEnum<ArithOp>(O, "op");
    bool Accumulate = getBool(O, "accumulate");
    return std::make_unique<InstTensorReduce>(std::move(Name), E, Op,
                                              Accumulate,
                                              getReal(O, "init", 0.0));
  }
  case InstructionType::Iota: {
    checkInstructionKeys(O, {"start", "partition_step", "multipliers"});
    int64_t Start = getSigned(O, "start", 0);
    int64_t Step = getSigned(O, "partition_step", 0);
    std::vector<int64_t> Multipliers;
    forEach(O, "multipliers", true, [&](JsonRef V, const JsonPath &Path) {
      Multipliers.push_back(asSigned(V, Path));
    });
    return std::make_unique<InstIota>(std::move(Name), E, Start, Step,
                                      std::move(Multipliers));
  }
  case InstructionType::Branch: {
    checkInstructionKeys(O, {"kind", "trip_count"});
    auto Kind = getEnum<BranchKind>(O, "kind");
    bool IsLoop = Kind == BranchKind::Loop;
    if (!IsLoop && get(O, "trip_count", false))
      fail(O.Path->field("trip_count"), "only a Loop has a trip count");
    unsigned Trips =
        getUnsigned(O, "trip_count", UINT_MAX,
                    IsLoop ? std::nullopt : std::optional<uint64_t>(0));
    return std::make_unique<InstBranch>(std::move(Name), E, Kind, Trips);
  }
  }
  llvm_unreachable("unknown instruction type");
}

void Reader::readSignal(const Obj &O, InstCopyBase &I) {
  JsonRef V = get(O, "signal", false);
  if (!V)
    return;
  JsonPath Path = O.Path->field("signal");
  Obj S = asObject(V, Path);
  checkKeys(S, {"core", "semaphore"});
  unsigned Core = getUnsigned(S, "core", UINT_MAX);
  llvm::StringRef Sem = getString(S, "semaphore");
  if (!Error)
    I.setSignal(Core, Sem.str());
}

std::optional<AccessPattern> Reader::readAccessPattern(JsonRef V,
                                                       const JsonPath &Path) {
  Obj O = asObject(V, Path);
  checkKeys(O, {"memloc", "start_partition", "partitions", "offset", "pattern",
                "dtype"});
  llvm::StringRef LocName = getString(O, "memloc");
  MemoryLocation *L =
      Error ? nullptr : M->getMemoryLocations().getMemlocByName(LocName);
  if (!L)
    fail(Path.field("memloc"),
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
  forEach(O, "pattern", true, [&](JsonRef V, const JsonPath &Path) {
    JsonRef Pair = asArray(V, Path);
    if (Pair && Pair.size() != 2)
      fail(Path, "expected a [step, count] pair");
    if (Error)
      return;
    JsonRef Step = Pair.firstElement();
    int64_t S = asSigned(Step, Path.element(0));
    uint64_t Count = asUnsigned(Step.next(), Path.element(1), UINT64_MAX);
    Pattern.push_back({S, Count});
  });
  return Pattern;
}

/// Dependency lists up to this long are searched for a repeated name.
constexpr size_t MaxSearchedDeps = 16;

// Dependencies may name instructions of later blocks, so they are resolved
// once every instruction exists.
void Reader::resolveDependencies(const JsonPath &ModulePath) {
  JsonPath BlocksPath = ModulePath.field("blocks");
  for (const Pending &P : PendingDeps) {
    if (Error)
      return;
    JsonPath BlockPath = BlocksPath.element(P.Block);
    JsonPath InstsPath = BlockPath.field("instructions");
    JsonPath Path = InstsPath.element(P.Index);
    Instruction *I = P.I;
    // A short list is searched; a long one (a barrier waiting for every
    // instruction of a block) gets a set, so that the check stays linear.
    llvm::DenseSet<const Instruction *> Listed;
    forEach({P.O, &Path}, "deps", false, [&](JsonRef V, const JsonPath &DP) {
      llvm::StringRef Name = asString(V, DP);
      Instruction *D = Insts.lookup(Name);
      if (Error)
        return;
      if (!D) {
        fail(DP, "no instruction named '" + Name + "' in this module");
        return;
      }
      llvm::ArrayRef<Instruction *> Deps = I->dependencies();
      if (Deps.size() == MaxSearchedDeps)
        Listed.insert(Deps.begin(), Deps.end());
      bool Twice = Deps.size() < MaxSearchedDeps ? llvm::is_contained(Deps, D)
                                                 : !Listed.insert(D).second;
      if (Twice)
        fail(DP, "'" + Name + "' is listed twice");
      else
        I->addNewDependency(D);
    });
  }
}

/// A BIR document nests about eight levels deep. Deeper nesting is refused,
/// located, before parsing: a hostile document of a million nested arrays
/// gets a clear message instead of a million open containers (the parser
/// keeps them on the heap, so it would not overflow the stack either).
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

} // namespace

std::string getModulePath(unsigned Index) {
  return ("$.modules[" + llvm::Twine(Index) + "]").str();
}

llvm::Expected<std::unique_ptr<Module>>
moduleFromJson(const llvm::json::Value &V, llvm::StringRef Path) {
  JsonDocument Doc;
  Doc.assign(V);
  JsonPath Root(Path);
  return Reader().readModule(Doc.root(), Root);
}

llvm::Expected<std::unique_ptr<Module>> readEmbeddedModule(JsonRef V,
                                                           llvm::StringRef Path) {
  JsonPath Root(Path);
  return Reader().readModule(V, Root);
}

llvm::Expected<std::unique_ptr<Module>> parseModule(llvm::StringRef Text,
                                                    llvm::StringRef Path) {
  JsonDocument Doc;
  if (std::optional<JsonDocument::SyntaxError> E = Doc.parse(Text))
    return makeError(Path + ": not valid JSON at byte " +
                     llvm::Twine(E->Offset) + ": " + E->Message);
  JsonPath Root(Path);
  return Reader().readModule(Doc.root(), Root);
}

llvm::Expected<Program> parseProgram(llvm::StringRef Text,
                                     llvm::StringRef FileName,
                                     const LoadOptions &Opts) {
  if (llvm::Error E = checkNestingDepth(FileName, Text))
    return E;
  // The nodes go before verification, which needs only the IR.
  llvm::Expected<Program> P = readDocument<Program>(
      Text, FileName, [](JsonRef Root) { return Reader().readProgram(Root); });
  if (!P)
    return P.takeError();
  applyLoadOptions(*P, Opts);
  if (llvm::Error E = verifyProgram(*P))
    return prefixFileName(FileName, std::move(E));
  return P;
}

} // namespace loom::bir
