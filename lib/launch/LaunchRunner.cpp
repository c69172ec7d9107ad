//===- LaunchRunner.cpp - Run a launch on hlo-run's inputs, compare outputs ===//
//
// A binding's location holds its leaf's elements in row-major order from byte
// 0 (docs/bir.md, "Launch documents"), and every HLO element type that is
// lowered has the same bytes in both halves (f32, bf16 and f16 bits, f8 bits,
// little-endian integers, pred as a 0/1 byte), so a leaf moves between a
// literal and a location by a copy of its bytes.
//
//===----------------------------------------------------------------------===//

#include "loom/launch/LaunchRunner.h"

#include "loom/codegen/Codegen.h"
#include "loom/hlo/eval/NpyLiteral.h"
#include "loom/hlo/eval/RandomInputs.h"
#include "loom/hlo/ir/HloComputation.h"
#include "loom/hlo/ir/HloInstruction.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>

namespace loom::launch {

using bir::Launch;
using bir::LaunchBinding;
using hlo::Literal;
using hlo::Shape;

std::optional<ParameterInput> parseParameterInput(llvm::StringRef Text) {
  auto [Target, Path] = Text.split('=');
  auto [Device, Param] = Target.split(':');
  if (Path.empty() || Param.empty() || Target.find(':') == llvm::StringRef::npos)
    return std::nullopt;
  ParameterInput In;
  In.Param = Param.str();
  In.Path = Path.str();
  if (Device != "*") {
    unsigned D;
    if (Device.getAsInteger(10, D))
      return std::nullopt;
    In.Device = D;
  }
  return In;
}

namespace {

std::string indexText(llvm::ArrayRef<unsigned> Index) {
  std::string S = "{";
  for (size_t I = 0; I < Index.size(); ++I)
    S += (I ? "," : "") + std::to_string(Index[I]);
  return S + "}";
}

/// How messages name a leaf: "output {1}" / "parameter 0 {1}".
std::string leafName(const char *What, const LaunchBinding &B, bool Output) {
  std::string S = What;
  if (!Output)
    S += " " + std::to_string(B.Parameter);
  if (!B.Index.empty() || Output)
    S += B.Index.empty() ? "" : " " + indexText(B.Index);
  return S;
}

const Literal *leafAt(const Literal &L, llvm::ArrayRef<unsigned> Index) {
  const Literal *Cur = &L;
  for (unsigned I : Index) {
    if (!Cur->IsTuple() || I >= Cur->tuple_elements().size())
      return nullptr;
    Cur = &Cur->tuple_elements()[I];
  }
  return Cur;
}

/// A tuple shape built from leaves at index paths; positions no leaf names
/// are tokens (which have no binding, no data and draw no random values).
struct ShapeNode {
  std::optional<Shape> Leaf;
  std::map<unsigned, ShapeNode> Children;
  Shape build() const {
    if (Leaf)
      return *Leaf;
    std::vector<Shape> Elements;
    unsigned Next = 0;
    for (const auto &[I, Child] : Children) {
      for (; Next < I; ++Next)
        Elements.push_back(Shape::MakeToken());
      Elements.push_back(Child.build());
      ++Next;
    }
    return Shape::MakeTuple(std::move(Elements));
  }
};

/// The shapes of the entry parameters as the bindings describe them.
llvm::Expected<std::vector<Shape>> parameterShapes(const Launch &L) {
  std::vector<ShapeNode> Roots;
  for (const bir::LaunchDevice &D : L.Devices)
    for (const LaunchBinding &B : D.Parameters) {
      if (Roots.size() <= B.Parameter)
        Roots.resize(B.Parameter + 1);
      ShapeNode *N = &Roots[B.Parameter];
      for (unsigned I : B.Index)
        N = &N->Children[I];
      llvm::Expected<Shape> S = hlo::ParseShape(B.Shape);
      if (!S)
        return makeError("device " + llvm::Twine(D.Device) + " " +
                         leafName("parameter", B, false) + ": shape '" + B.Shape +
                         "': " + llvm::toString(S.takeError()));
      N->Leaf = *S;
    }
  std::vector<Shape> Shapes;
  for (const ShapeNode &N : Roots)
    Shapes.push_back(N.Leaf || !N.Children.empty() ? N.build()
                                                    : Shape::MakeTuple({}));
  return Shapes;
}

/// The native .npy dtype the simulator's --input takes for a location type.
const char *nativeDescr(bir::DataType T) {
  return bir::getNativeNpyDescr(T);
}

const bir::MemoryLocation *findLocation(const bir::LaunchDevice &D,
                                        const LaunchBinding &B) {
  for (const auto &M : D.Modules)
    if (M->getSubgraphId() == B.Subgraph)
      if (const bir::MemoryLocation *Loc =
              M->getMemoryLocations().getMemlocByName(B.Memloc))
        return Loc;
  return nullptr;
}

/// What a sum whose order the HLO does not fix is, for the check.
enum class SumFilter { Any, SplitContraction };

/// The loosest per-type tolerance of the sums found (of their result
/// element types), none when there is no sum.
using SumTolerance = std::optional<hlo::Tolerance>;

void loosen(SumTolerance &T, const SumTolerance &With) {
  if (!With)
    return;
  if (!T)
    T = With;
  T->rtol = std::max(T->rtol, With->rtol);
  T->atol = std::max(T->atol, With->atol);
}

SumTolerance toleranceOf(const Shape &S) {
  SumTolerance T;
  if (S.IsTuple()) {
    for (int64_t K = 0; K < S.tuple_shapes_size(); ++K)
      loosen(T, toleranceOf(S.tuple_shapes(K)));
    return T;
  }
  if (S.IsArray())
    return hlo::DefaultTolerance(S.element_type());
  return T;
}

SumTolerance containsSum(const hlo::HloComputation &C, unsigned Lnc, SumFilter F,
                         llvm::DenseMap<const hlo::HloComputation *, SumTolerance> &Memo);

SumTolerance sumAt(const hlo::HloInstruction &I, unsigned Lnc, SumFilter F,
                   llvm::DenseMap<const hlo::HloComputation *, SumTolerance> &Memo) {
  hlo::HloOpcode Op = I.async_wrapped_opcode().value_or(I.opcode());
  SumTolerance T;
  if (F == SumFilter::Any &&
      (Op == hlo::HloOpcode::kAllReduce || Op == hlo::HloOpcode::kAllReduceStart ||
       Op == hlo::HloOpcode::kReduceScatter))
    loosen(T, toleranceOf(I.shape()));
  // Exactly the dots and collective matmuls whose contraction the code
  // generator splits (its rule, one home).
  if (codegen::splitsContraction(I, Lnc))
    loosen(T, toleranceOf(I.shape()));
  // A called computation (fusion, call, while, async) that sums anywhere.
  if (Op != hlo::HloOpcode::kReduce)
    for (const hlo::HloComputation *Called : I.called_computations())
      loosen(T, containsSum(*Called, Lnc, F, Memo));
  return T;
}

SumTolerance containsSum(const hlo::HloComputation &C, unsigned Lnc, SumFilter F,
                         llvm::DenseMap<const hlo::HloComputation *, SumTolerance> &Memo) {
  auto It = Memo.find(&C);
  if (It != Memo.end())
    return It->second;
  Memo[&C] = std::nullopt; // a recursion (not valid HLO) stops here
  SumTolerance T;
  for (const hlo::HloInstruction *I : C.instructions())
    loosen(T, sumAt(*I, Lnc, F, Memo));
  Memo[&C] = T;
  return T;
}

SumTolerance fedBy(const hlo::HloModule &M, int TopIndex, unsigned LncSize,
                   SumFilter F) {
  const hlo::HloInstruction *Root = M.entry_computation()->root_instruction();
  const hlo::HloInstruction *Start = Root;
  if (TopIndex >= 0 && Root->opcode() == hlo::HloOpcode::kTuple &&
      TopIndex < int(Root->operands().size()))
    Start = Root->operand(TopIndex);
  llvm::DenseMap<const hlo::HloComputation *, SumTolerance> Memo;
  llvm::DenseMap<const hlo::HloInstruction *, bool> Seen;
  std::vector<const hlo::HloInstruction *> Work{Start};
  SumTolerance T;
  while (!Work.empty()) {
    const hlo::HloInstruction *I = Work.back();
    Work.pop_back();
    if (!Seen.insert({I, true}).second)
      continue;
    loosen(T, sumAt(*I, LncSize, F, Memo));
    for (const hlo::HloInstruction *Op : I->operands())
      Work.push_back(Op);
  }
  return T;
}

/// The arguments with every float element replaced by its magnitude.
std::vector<std::vector<Literal>>
absoluteArguments(const std::vector<std::vector<Literal>> &Args) {
  std::vector<std::vector<Literal>> Abs = Args;
  std::function<void(Literal &)> Walk = [&](Literal &V) {
    if (V.IsTuple()) {
      for (Literal &E : V.mutable_tuple_elements())
        Walk(E);
      return;
    }
    if (V.IsToken() || !hlo::IsFloatingPointType(V.element_type()))
      return;
    for (int64_t I = 0; I < V.element_count(); ++I)
      V.SetFromDouble(I, std::fabs(V.GetAsDouble(I)));
  };
  for (auto &Device : Abs)
    for (Literal &P : Device)
      Walk(P);
  return Abs;
}

} // namespace

llvm::Expected<std::vector<std::vector<Literal>>>
makeLaunchArguments(const Launch &L, const hlo::HloModule *Module,
                    const LaunchOptions &O) {
  unsigned Devices = L.Devices.size();
  std::vector<std::vector<Literal>> Args;
  std::vector<Shape> Shapes;
  std::vector<std::string> Names;
  if (Module) {
    auto A = hlo::MakeRandomArguments(*Module, O.Seed, O.Eval, O.SameInputs);
    if (!A)
      return A.takeError();
    if (A->size() != Devices)
      return makeError("the module runs on " + llvm::Twine(A->size()) +
                       " device(s), the launch has " + llvm::Twine(Devices));
    Args = std::move(*A);
    for (const hlo::HloInstruction *P :
         Module->entry_computation()->parameter_instructions()) {
      Shapes.push_back(P->shape());
      Names.push_back(P->name().str());
    }
  } else {
    auto S = parameterShapes(L);
    if (!S)
      return S.takeError();
    Shapes = std::move(*S);
    Names.resize(Shapes.size());
    // A parameter is replicated when its leaves say so on device 0, the
    // device whose values the others then take, as MakeRandomArguments does.
    std::vector<bool> Replicated(Shapes.size(), false);
    for (const bir::LaunchDevice &D : L.Devices)
      for (const LaunchBinding &B : D.Parameters) {
        Names[B.Parameter] = B.Name;
        if (D.Device == 0 && B.Replicated)
          Replicated[B.Parameter] = true;
      }
    Args.resize(Devices);
    for (unsigned D = 0; D < Devices; ++D)
      for (size_t P = 0; P < Shapes.size(); ++P)
        Args[D].push_back(hlo::MakeRandomLiteral(
            Shapes[P], O.Seed, O.SameInputs || Replicated[P] ? 0 : D, P));
  }
  for (const ParameterInput &In : O.Inputs) {
    if (In.Device && *In.Device >= Devices)
      return makeError("--input names device " + llvm::Twine(*In.Device) +
                       ", which does not exist: the launch has " + llvm::Twine(Devices) +
                       (Devices == 1 ? " device" : " devices"));
    int64_t Param = -1;
    if (llvm::StringRef(In.Param).getAsInteger(10, Param)) {
      Param = -1;
      for (size_t P = 0; P < Names.size(); ++P)
        if (!Names[P].empty() && Names[P] == In.Param)
          Param = P;
      if (Param < 0)
        return makeError("--input names parameter '" + In.Param +
                         "' but the entry computation has no parameter of "
                         "that name");
    }
    if (Param < 0 || size_t(Param) >= Shapes.size())
      return makeError("--input names parameter " + In.Param +
                       " but the entry computation has " +
                       llvm::Twine(Shapes.size()) +
                       (Shapes.size() == 1 ? " parameter" : " parameters"));
    auto Value = hlo::ReadNpyFile(In.Path, Shapes[Param]);
    if (!Value)
      return Value.takeError();
    for (unsigned D = 0; D < Devices; ++D)
      if (!In.Device || *In.Device == D)
        Args[D][Param] = *Value;
  }
  return Args;
}

llvm::Expected<LaunchRun> runLaunch(Launch &L,
                                    const std::vector<std::vector<Literal>> &Args,
                                    const LaunchOptions &O,
                                    bir::sim::SimResult *Partial) {
  if (Args.size() != L.Devices.size())
    return makeError("the arguments are for " + llvm::Twine(Args.size()) +
                     " device(s), the launch has " + llvm::Twine(L.Devices.size()));
  bir::sim::SimOptions SO = O.Sim;
  SO.Inputs.clear();
  for (size_t D = 0; D < L.Devices.size(); ++D) {
    bir::LaunchDevice &Dev = L.Devices[D];
    if (llvm::Error E = bir::sim::splitIfNeeded(Dev.Modules))
      return makeError(SO.FileName + ": device " + llvm::Twine(D) + ": " +
                       llvm::toString(std::move(E)));
    for (const LaunchBinding &B : Dev.Parameters) {
      std::string Where = (SO.FileName + ": device " + llvm::Twine(D) + " " +
                           leafName("parameter", B, false))
                              .str();
      const Literal *Leaf =
          B.Parameter < Args[D].size() ? leafAt(Args[D][B.Parameter], B.Index)
                                       : nullptr;
      if (!Leaf || !Leaf->shape().IsArray())
        return makeError(Where + ": the parameter has no array leaf there");
      const bir::MemoryLocation *Loc = findLocation(Dev, B);
      if (!Loc)
        return makeError(Where + ": subgraph " + llvm::Twine(B.Subgraph) +
                         " has no location '" + B.Memloc + "'");
      unsigned Size = bir::getDataTypeSize(Loc->getType());
      uint64_t Bytes = uint64_t(Loc->getNumPartitions()) * Loc->getBytesPerPartition();
      if (uint64_t(Leaf->size_bytes()) > Bytes)
        return makeError(Where + ": " + llvm::Twine(Leaf->size_bytes()) +
                         " bytes do not fit location '" + B.Memloc + "'");
      bir::sim::InputValue In;
      In.Device = D;
      In.Name = B.Memloc;
      In.Array.Descr = nativeDescr(Loc->getType());
      In.Array.Shape = {int64_t(Bytes / Size)};
      In.Array.Data.assign(Bytes - Bytes % Size, '\0');
      // An empty leaf has no data to point at (memcpy wants pointers).
      if (Leaf->size_bytes())
        std::memcpy(In.Array.Data.data(), Leaf->raw_data(), Leaf->size_bytes());
      SO.Inputs.push_back(std::move(In));
    }
  }
  std::vector<const bir::Program *> Programs;
  for (const bir::LaunchDevice &Dev : L.Devices)
    Programs.push_back(&Dev.Modules);
  llvm::Expected<bir::sim::SimResult> R =
      bir::sim::simulateLaunch(Programs, SO, Partial);
  if (!R)
    return R.takeError();
  LaunchRun Run;
  Run.Sim = std::move(*R);
  Run.Outputs.resize(L.Devices.size());
  for (size_t D = 0; D < L.Devices.size(); ++D)
    for (const LaunchBinding &B : L.Devices[D].Outputs) {
      std::string Where = (SO.FileName + ": device " + llvm::Twine(D) + " " +
                           leafName("output", B, true))
                              .str();
      llvm::Expected<Shape> S = hlo::ParseShape(B.Shape);
      if (!S)
        return makeError(Where + ": shape '" + B.Shape +
                         "': " + llvm::toString(S.takeError()));
      const bir::sim::LocationState *State =
          Run.Sim.find(D, B.Subgraph, 0, B.Memloc);
      if (!State)
        return makeError(Where + ": subgraph " + llvm::Twine(B.Subgraph) +
                         " has no location '" + B.Memloc + "'");
      Literal Value(*S);
      uint64_t Bytes = Value.size_bytes();
      if (Bytes > State->Data.size())
        return makeError(Where + ": location '" + B.Memloc +
                         "' is smaller than the output");
      for (uint64_t I = 0; I < Bytes; ++I)
        if (!State->isInit(I))
          return makeError(Where + ": byte " + llvm::Twine(I) + " of location '" +
                           B.Memloc + "' was never written");
      if (Bytes)
        std::memcpy(Value.raw_data(), State->Data.data(), Bytes);
      Run.Outputs[D].push_back({B.Index, std::move(Value)});
    }
  return Run;
}

llvm::Error writeOutputs(llvm::StringRef Dir, const LaunchRun &Run) {
  if (std::error_code EC = llvm::sys::fs::create_directories(Dir))
    return makeError("cannot create '" + Dir + "': " + EC.message());
  for (size_t D = 0; D < Run.Outputs.size(); ++D)
    for (const OutputLeaf &Leaf : Run.Outputs[D]) {
      std::string Stem = "device" + std::to_string(D);
      for (unsigned I : Leaf.Index)
        Stem += "_" + std::to_string(I);
      llvm::SmallString<256> Path(Dir);
      llvm::sys::path::append(Path, Stem + ".npy");
      if (llvm::Error E = hlo::WriteNpyFile(Path, Leaf.Value))
        return E;
    }
  return llvm::Error::success();
}

bool isFedBySum(const hlo::HloModule &M, int TopIndex, unsigned LncSize) {
  return fedBy(M, TopIndex, LncSize, SumFilter::Any).has_value();
}

bool isFedBySplitContraction(const hlo::HloModule &M, int TopIndex,
                             unsigned LncSize) {
  return fedBy(M, TopIndex, LncSize, SumFilter::SplitContraction).has_value();
}

llvm::Expected<hlo::ComparisonSummary>
compareWithReference(const hlo::HloModule &M, const Launch &L,
                     const std::vector<Literal> &Reference, const LaunchRun &Run,
                     const std::vector<Literal> *Magnitudes) {
  if (Reference.size() != Run.Outputs.size())
    return makeError("the module ran on " + llvm::Twine(Reference.size()) +
                     " device(s), the launch on " + llvm::Twine(Run.Outputs.size()));
  hlo::ComparisonSummary Total;
  for (size_t D = 0; D < Reference.size(); ++D) {
    // Every array leaf of the result must be bound (tokens have no data).
    std::vector<std::vector<unsigned>> Leaves;
    std::vector<unsigned> Path;
    std::function<void(const Literal &)> Walk = [&](const Literal &V) {
      if (V.IsTuple()) {
        for (size_t I = 0; I < V.tuple_elements().size(); ++I) {
          Path.push_back(I);
          Walk(V.tuple_elements()[I]);
          Path.pop_back();
        }
        return;
      }
      if (!V.IsToken())
        Leaves.push_back(Path);
    };
    Walk(Reference[D]);
    for (const std::vector<unsigned> &Index : Leaves) {
      const OutputLeaf *Cand = nullptr;
      for (const OutputLeaf &O : Run.Outputs[D])
        if (O.Index == Index)
          Cand = &O;
      std::string Name = "output" + (Index.empty() ? "" : " " + indexText(Index));
      if (!Cand)
        return makeError("device " + llvm::Twine(D) + ": " + Name +
                         " of the module has no binding in the launch");
      const Literal *Ref = leafAt(Reference[D], Index);
      hlo::NumericsCheckOptions Opts;
      int Top = Index.empty() ? -1 : int(Index.front());
      SumTolerance SumTol = fedBy(M, Top, L.LncSize, SumFilter::Any);
      bool Sum = SumTol.has_value();
      if (!Sum) {
        // Bit for bit: the same operations in the same order.
        Opts.rtol = 0;
        Opts.atol = 0;
      } else if (Ref->shape().IsArray()) {
        // The tolerance of the sum's own type when it is looser: a bf16 sum
        // converted to f32 carries bf16's rounding.
        loosen(SumTol, hlo::DefaultTolerance(Ref->element_type()));
        Opts.rtol = SumTol->rtol;
        Opts.atol = SumTol->atol;
      }
      // A contraction split between cores adds partial sums whose rounding
      // follows the magnitude of the terms, not of the result: an element
      // is within the per-type tolerance of that magnitude (the same
      // output computed on the inputs' absolute values) when it is not
      // within that of its own value.
      const Literal *Mag = Magnitudes && Sum && D < Magnitudes->size()
                               ? leafAt((*Magnitudes)[D], Index)
                               : nullptr;
      Literal Adjusted;
      const Literal *Candidate = &Cand->Value;
      double TolAbs = 0, TolRel = 0;
      if (Mag && Mag->shape() == Ref->shape() && Ref->shape().IsArray() &&
          hlo::IsFloatingPointType(Ref->element_type()) &&
          Cand->Value.shape() == Ref->shape() &&
          isFedBySplitContraction(M, Top, L.LncSize)) {
        hlo::Tolerance T = *SumTol;
        Adjusted = Cand->Value;
        for (int64_t K = 0; K < Ref->element_count(); ++K) {
          double A = Cand->Value.GetAsDouble(K), B = Ref->GetAsDouble(K);
          double Err = std::fabs(A - B), Scale = std::fabs(Mag->GetAsDouble(K));
          if (!std::isfinite(Err) || A == B ||
              Err > T.atol + T.rtol * std::max(std::fabs(B), Scale))
            continue;
          Adjusted.SetFromDouble(K, B);
          TolAbs = std::max(TolAbs, Err);
          TolRel = std::max(TolRel, B == 0 ? HUGE_VAL : Err / std::fabs(B));
        }
        Candidate = &Adjusted;
      }
      std::string Where = "device " + std::to_string(D);
      auto S = hlo::CompareLiterals(*Ref, *Candidate, Opts, Where);
      if (!S)
        return S.takeError();
      S->max_abs_error = std::max(S->max_abs_error, TolAbs);
      S->max_rel_error = std::max(S->max_rel_error, TolRel);
      // CompareLiterals names a leaf compared alone "output"; give its path.
      std::string Prefix = Where + ", output, ";
      if (!S->first_mismatch.empty() &&
          llvm::StringRef(S->first_mismatch).startswith(Prefix))
        S->first_mismatch = Where + ", " + Name + ", " +
                            S->first_mismatch.substr(Prefix.size());
      Total.Merge(*S);
    }
  }
  return Total;
}

llvm::Expected<bool> checkAgainstHlo(const hlo::HloModule &M, Launch &L,
                                     const CheckOptions &O, llvm::raw_ostream &Out) {
  auto Args = makeLaunchArguments(L, &M, O);
  if (!Args)
    return Args.takeError();
  auto Reference = hlo::RunSpmd(M, *Args, O.Eval, nullptr);
  if (!Reference)
    return makeError("the interpreter fails: " + llvm::toString(Reference.takeError()));
  LaunchOptions LO = O;
  LO.Sim.RecordTrace = LO.Sim.RecordTrace || !O.TraceFile.empty();
  bir::sim::SimResult Partial;
  auto WriteTrace = [&](const bir::sim::SimResult &R) -> llvm::Error {
    if (O.TraceFile.empty())
      return llvm::Error::success();
    std::error_code EC;
    llvm::raw_fd_ostream TS(O.TraceFile, EC);
    if (EC)
      return makeError("cannot write '" + O.TraceFile + "': " + EC.message());
    bir::sim::writeTrace(TS, R);
    return llvm::Error::success();
  };
  auto Run = runLaunch(L, *Args, LO, &Partial);
  if (!Run) {
    if (llvm::Error E = WriteTrace(Partial))
      llvm::consumeError(std::move(E));
    return Run.takeError();
  }
  if (llvm::Error E = WriteTrace(Run->Sim))
    return E;
  if (O.Report)
    bir::sim::printReport(Out, Run->Sim, O.ReportJson);
  // The magnitudes for outputs fed by a split contraction: the module on
  // the inputs' absolute values (only when there is such an output).
  std::optional<std::vector<Literal>> Magnitudes;
  bool Split = false;
  const hlo::HloInstruction *Root = M.entry_computation()->root_instruction();
  int Tops = Root->opcode() == hlo::HloOpcode::kTuple ? int(Root->operand_count()) : 0;
  for (int T = Tops ? 0 : -1; T < Tops && !Split; ++T)
    Split = isFedBySplitContraction(M, T, L.LncSize);
  if (Split) {
    auto Abs = hlo::RunSpmd(M, absoluteArguments(*Args), O.Eval, nullptr);
    if (Abs)
      Magnitudes = std::move(*Abs);
    else
      llvm::consumeError(Abs.takeError()); // then each element's own value
  }
  auto Summary = compareWithReference(M, L, *Reference, *Run,
                                      Magnitudes ? &*Magnitudes : nullptr);
  if (!Summary)
    return Summary.takeError();
  Out << "compared " << Summary->elements_compared << " elements on "
      << L.Devices.size() << " devices: " << Summary->elements_differing
      << " differ\n";
  if (Summary->ok())
    return true;
  Out << "first difference: " << Summary->first_mismatch << "\n";
  Out << "largest absolute error " << Summary->max_abs_error
      << ", largest relative error " << Summary->max_rel_error << "\n";
  return false;
}

} // namespace loom::launch
