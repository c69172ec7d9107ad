//===- LncVerifierTest.cpp - lnc_verifier on programs in memory -----------===//
//
// The pipeline's output for a program with a swap and, in a loop, an
// AllReduce is accepted unchanged; each tampering is then made in memory,
// on one core, and must be refused by the pass itself with one line naming
// the module, core, block and instruction. The tests also record which
// tamperings the IR verifier (the loader) refuses on its own, which is how
// the two verifiers divide the work (docs/lnc-verifier.md).
//
//===----------------------------------------------------------------------===//

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/InsertPTCOMFlat.h"
#include "loom/bir/passes/LncSplitter.h"
#include "loom/bir/passes/LncVerifier.h"
#include "loom/bir/passes/LowerLocalCollectives.h"

#include "llvm/ADT/StringExtras.h"

#include "gtest/gtest.h"

using namespace loom::bir;

namespace {

/// A swap of `mine` into `peer`, then a loop of 2 AllReduces of `peer` into
/// `sum`, over @GROUP@ at lnc_size @LNC@ (generic target, so that 4 cores
/// are allowed).
const char Source[] = R"({"version": 1, "modules": [{
  "name": "prog", "neuron_core_id": 0, "subgraph_id": 0,
  "pass_options": {"lnc_size": @LNC@, "target": "generic"},
  "memory_locations": [
    {"name": "mine", "tensor_id": 0, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 512},
    {"name": "peer", "tensor_id": 1, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 512},
    {"name": "sum", "tensor_id": 2, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 512}],
  "blocks": [
    {"name": "entry", "successors": ["loop"], "instructions": [
      {"name": "fill", "type": "Memset", "engine": "DVE", "value": 2,
       "outputs": [{"memloc": "mine", "partitions": 128, "pattern": [[1, 128]]}]},
      @SWAP@
      {"name": "jump", "type": "Branch", "engine": "SP", "kind": "Jump"}]},
    {"name": "loop", "successors": ["loop", "exit"], "instructions": [
      {"name": "ar", "type": "CollectiveCompute", "engine": "POOL", "kind": "AllReduce", "reduce": "Add",
       "group": @GROUP@, "local": true,
       "inputs": [{"memloc": "mine", "partitions": 128, "pattern": [[1, 128]]}],
       "outputs": [{"memloc": "sum", "partitions": 128, "pattern": [[1, 128]]}], "deps": ["fill"]},
      {"name": "back", "type": "Branch", "engine": "SP", "kind": "Loop", "trip_count": 2}]},
    {"name": "exit", "instructions": [
      {"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})";

const char Swap[] = R"(
      {"name": "swap", "type": "CollectiveCompute", "engine": "POOL", "kind": "SendRecv", "group": [0, 1], "local": true,
       "inputs": [{"memloc": "mine", "partitions": 128, "pattern": [[1, 128]]}],
       "outputs": [{"memloc": "peer", "partitions": 128, "pattern": [[1, 128]]}], "deps": ["fill"]},)";

std::string source(unsigned Lnc) {
  std::string S = Source;
  auto Replace = [&](llvm::StringRef From, const std::string &To) {
    size_t At = S.find(From.str());
    S.replace(At, From.size(), To);
  };
  std::string Group = "[";
  for (unsigned C = 0; C < Lnc; ++C)
    Group += (C ? "," : "") + std::to_string(C);
  Replace("@LNC@", std::to_string(Lnc));
  Replace("@SWAP@", Lnc == 2 ? Swap : "");
  Replace("@GROUP@", Group + "]");
  return S;
}

/// The program split, and lowered with completions unless Lower is false.
Program build(unsigned Lnc = 2, bool Lower = true) {
  Program P = llvm::cantFail(parseProgram(source(Lnc), "prog.json"));
  EXPECT_TRUE(llvm::cantFail(LncSplitter().run(P)));
  if (Lower) {
    BackendOptions O;
    EXPECT_TRUE(llvm::cantFail(LowerLocalCollectives(O).run(P)));
    EXPECT_TRUE(llvm::cantFail(InsertPTCOMFlat(O).run(P)));
  }
  return P;
}

Module &core(Program &P, unsigned Core) {
  for (auto &M : P)
    if (M->getNeuronCoreId() == Core)
      return *M;
  ADD_FAILURE() << "no core " << Core;
  return *P[0];
}

Instruction *find(Program &P, unsigned Core, llvm::StringRef Name) {
  for (const auto &BB : core(P, Core).blocks())
    for (const auto &I : *BB)
      if (I->getName() == Name)
        return I.get();
  ADD_FAILURE() << "no instruction " << Name.str() << " on core " << Core;
  return nullptr;
}

/// Removes I; whatever waited for it waits for its dependencies instead.
void removeRewired(Instruction *I) {
  std::vector<Instruction *> Users(I->users().begin(), I->users().end());
  std::vector<Instruction *> Deps(I->dependencies().begin(),
                                  I->dependencies().end());
  for (Instruction *U : Users)
    for (Instruction *D : Deps)
      U->addDependency(D);
  I->getBasicBlock()->removeInstruction(I);
}

/// The pass's problems, one per line; empty when it accepts. The program
/// must come back unchanged either way.
std::vector<std::string> problems(Program &P,
                                  std::vector<std::string> *Warnings = nullptr) {
  std::string Before = formatProgram(P);
  LncVerifier V;
  V.setWarningHandler([&](llvm::StringRef W) {
    if (Warnings)
      Warnings->push_back(W.str());
    else
      ADD_FAILURE() << "unexpected warning: " << W.str();
  });
  llvm::Expected<bool> Changed = V.run(P);
  EXPECT_EQ(formatProgram(P), Before);
  if (Changed) {
    EXPECT_FALSE(*Changed);
    return {};
  }
  std::string Msg = llvm::toString(Changed.takeError());
  llvm::SmallVector<llvm::StringRef> Lines;
  llvm::StringRef(Msg).split(Lines, '\n');
  std::vector<std::string> Out;
  for (llvm::StringRef L : Lines)
    Out.push_back(L.str());
  return Out;
}

TEST(LncVerifier, AcceptsThePipelinesOutputAndChangesNothing) {
  Program P = build();
  EXPECT_EQ(problems(P), std::vector<std::string>{});
  Program Q = build(4);
  EXPECT_EQ(problems(Q), std::vector<std::string>{});
}

TEST(LncVerifier, AcceptsAgreeingCollectivesBeforeLowering) {
  Program P = build(2, /*Lower=*/false);
  EXPECT_EQ(problems(P), std::vector<std::string>{});
}

TEST(LncVerifier, RefusesABarrierIdChangedOnOneCore) {
  Program P = build();
  auto *CB = llvm::cast<InstCoreBarrier>(find(P, 1, "swap_cb_end"));
  unsigned Old = CB->getId();
  CB->setId(77);
  // One module at a time, the barrier is fine: the loader lets it through.
  EXPECT_FALSE(bool(verifyProgram(P)));
  EXPECT_EQ(problems(P),
            std::vector<std::string>{
                "module 'prog', subgraph 0, core 1, block 'entry', instruction "
                "'swap_cb_end': core barrier 'swap_cb_end' differs from its "
                "copy on core 0: id 77 (core 0's: " +
                std::to_string(Old) + ")"});
}

TEST(LncVerifier, RefusesABarrierRenamedOnOneCore) {
  Program P = build();
  find(P, 1, "ar_cb_mid")->setName("ar_cb_middle");
  EXPECT_FALSE(bool(verifyProgram(P)));
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_EQ(Lines[0].rfind("module 'prog', subgraph 0, core 1, block 'loop', "
                           "instruction 'ar_cb_middle': expected core barrier "
                           "'ar_cb_mid' (id ",
                           0),
            0u)
      << Lines[0];
}

TEST(LncVerifier, RefusesABarrierRemovedFromOneCore) {
  Program P = build();
  removeRewired(find(P, 1, "swap_cb_0_1"));
  EXPECT_FALSE(bool(verifyProgram(P)));
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_NE(Lines[0].find("core 0, block 'entry', instruction 'swap_cb_0_1': "
                          "core barrier 'swap_cb_0_1'"),
            std::string::npos)
      << Lines[0];
  EXPECT_NE(Lines[0].find("has no counterpart on core 1"), std::string::npos);
  EXPECT_NE(Lines[0].find("core 1 has no instruction 'swap_cb_0_1'"),
            std::string::npos);
}

TEST(LncVerifier, RefusesACompletionWaitingForAMissingInstruction) {
  Program P = build();
  auto *TC = llvm::cast<InstTensorCompletion>(find(P, 0, "peer-PTCOM"));
  TC->addWait({1, "ghost"});
  // This one the loader refuses too.
  llvm::Error E = verifyProgram(P);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("core 1 has no instruction named 'ghost'"),
            std::string::npos);
  EXPECT_EQ(problems(P),
            std::vector<std::string>{
                "module 'prog', subgraph 0, core 0, block 'entry', instruction "
                "'peer-PTCOM': waits for 'ghost' on core 1, which has no "
                "instruction of that name: the completion would never "
                "finish"});
}

TEST(LncVerifier, RefusesACompletionWaitingForACoreWithoutModule) {
  Program P = build();
  llvm::cast<InstTensorCompletion>(find(P, 1, "peer-PTCOM"))
      ->addWait({3, "swap_copy"});
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_NE(Lines[0].find("core 1, block 'entry', instruction 'peer-PTCOM': "
                          "waits for 'swap_copy' on core 3, which has no "
                          "module in this subgraph"),
            std::string::npos)
      << Lines[0];
}

TEST(LncVerifier, RefusesACompletionWaitingForAnInstructionThatNeverRuns) {
  Program P = build();
  // A block no branch reaches, on core 1, with a write.
  Module &M1 = core(P, 1);
  BasicBlock *Dead = M1.createBlock("dead");
  MemoryLocation *Sum = M1.getMemoryLocations().getMemlocByName("sum");
  auto W = std::make_unique<InstMemset>("dead_write", Engine::DVE, 0.0);
  W->addOutput(AccessPattern(Sum, 0, 1, 0, {}, DataType::FP32));
  Dead->append(std::move(W));
  Dead->append(
      std::make_unique<InstBranch>("dead_ret", Engine::SP, BranchKind::Return));
  // The same block on core 0, so that the control flow still agrees.
  Module &M0 = core(P, 0);
  BasicBlock *Dead0 = M0.createBlock("dead");
  Dead0->append(
      std::make_unique<InstBranch>("dead_ret", Engine::SP, BranchKind::Return));
  llvm::cast<InstTensorCompletion>(find(P, 0, "peer-PTCOM"))
      ->addWait({1, "dead_write"});
  EXPECT_FALSE(bool(verifyProgram(P)));
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_NE(Lines[0].find("waits for 'dead_write' on core 1, which lies in "
                          "block 'dead', unreachable from that core's entry"),
            std::string::npos)
      << Lines[0];
}

TEST(LncVerifier, RefusesARemoteLocationNamingAMissingLocation) {
  Program P = build();
  MemoryLocation *R =
      core(P, 0).getMemoryLocations().getMemlocByName("peer_remote_1");
  ASSERT_NE(R, nullptr);
  R->setRemote(1, "peer_gone");
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_EQ(Lines[0], "module 'prog', subgraph 0, core 0, memory location "
                      "'peer_remote_1': remote location 'peer_remote_1': core "
                      "1 has no memory location named 'peer_gone'");
}

TEST(LncVerifier, RefusesCollectivesWhoseMembersDisagree) {
  Program P = build(2, /*Lower=*/false);
  // Core 1's AllReduce becomes a Max: the same operands and edges.
  auto *Old = llvm::cast<InstCollectiveCompute>(find(P, 1, "ar"));
  auto New = std::make_unique<InstCollectiveCompute>(
      "ar", Old->getEngine(), Old->getKind(),
      std::vector<unsigned>(Old->getGroup().begin(), Old->getGroup().end()),
      ReduceOp::Max, true);
  New->addInput(Old->inputs()[0].clone());
  New->addOutput(Old->outputs()[0].clone());
  for (Instruction *D : Old->dependencies())
    New->addDependency(D);
  BasicBlock *BB = Old->getBasicBlock();
  BB->removeInstruction(Old);
  BB->insert(BB->getFirstTerminator(), std::move(New));
  EXPECT_FALSE(bool(verifyProgram(P)));
  EXPECT_EQ(problems(P),
            std::vector<std::string>{
                "module 'prog', subgraph 0, core 1, block 'loop', instruction "
                "'ar': collective 'ar' differs from its copy on core 0: reduce "
                "Max (core 0's: Add)"});
}

TEST(LncVerifier, RefusesACollectiveMissingOnOneCore) {
  Program P = build(2, /*Lower=*/false);
  removeRewired(find(P, 1, "swap"));
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_NE(Lines[0].find("core 0, block 'entry', instruction 'swap': "
                          "collective 'swap' (SendRecv, group [0,1]) has no "
                          "counterpart on core 1"),
            std::string::npos)
      << Lines[0];
}

TEST(LncVerifier, OneRenamedBarrierOfFourCoresIsOneLine) {
  Program P = build(4);
  find(P, 1, "ar_cb_mid")->setName("ar_cb_middle");
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u) << llvm::join(Lines, "\n");
  EXPECT_NE(Lines[0].find("core 1, block 'loop', instruction 'ar_cb_middle'"),
            std::string::npos);
}

TEST(LncVerifier, ABarrierRemovedFromOneOfFourCoresIsNamedPerPeer) {
  Program P = build(4);
  removeRewired(find(P, 2, "ar_cb_mid"));
  std::vector<std::string> Lines = problems(P);
  // Each of cores 0, 1 and 3 has a barrier that core 2 lacks.
  ASSERT_EQ(Lines.size(), 3u) << llvm::join(Lines, "\n");
  for (unsigned K = 0; K < 3; ++K)
    EXPECT_NE(Lines[K].find("has no counterpart on core 2"), std::string::npos)
        << Lines[K];
}

TEST(LncVerifier, EveryProblemIsALine) {
  Program P = build();
  llvm::cast<InstCoreBarrier>(find(P, 1, "swap_cb_begin"))->setId(90);
  llvm::cast<InstCoreBarrier>(find(P, 1, "ar_cb_end"))->setId(91);
  find(P, 0, "ar_cb_mid")->setName("ar_cb_mid0");
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 3u) << llvm::join(Lines, "\n");
  EXPECT_NE(Lines[0].find("instruction 'swap_cb_begin'"), std::string::npos);
  EXPECT_NE(Lines[1].find("instruction 'ar_cb_mid'"), std::string::npos);
  EXPECT_NE(Lines[2].find("instruction 'ar_cb_end'"), std::string::npos);
}

TEST(LncVerifier, ShowsTheFirstHundredProblems) {
  Program P = build();
  auto *TC = llvm::cast<InstTensorCompletion>(find(P, 0, "peer-PTCOM"));
  for (unsigned K = 0; K < 105; ++K)
    TC->addWait({1, "ghost" + std::to_string(K)});
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 101u);
  EXPECT_NE(Lines[99].find("waits for 'ghost99' on core 1"), std::string::npos);
  EXPECT_EQ(Lines[100], "... and 5 more problem(s)");
}

TEST(LncVerifier, RefusesAnUnsplitProgram) {
  Program P = llvm::cantFail(parseProgram(source(2), "prog.json"));
  EXPECT_EQ(problems(P),
            std::vector<std::string>{
                "module 'prog', subgraph 0, core 0: the subgraph is not split: "
                "it has only core 0's module of lnc_size 2 (run lnc_splitter "
                "first)"});
}

/// The source with the AllReduce not marked local.
std::string nonLocal(unsigned Lnc) {
  std::string S = source(Lnc);
  const std::string Local = R"("local": true,
       "inputs": [{"memloc": "mine", "partitions": 128, "pattern": [[1, 128]]}],
       "outputs": [{"memloc": "sum")";
  size_t At = S.find(Local);
  EXPECT_NE(At, std::string::npos);
  S.replace(At, 14, R"("local": false,)");
  return S;
}

TEST(LncVerifier, WarnsOncePerCopyOfANonLocalCollective) {
  Program P = llvm::cantFail(parseProgram(nonLocal(2), "prog.json"));
  ASSERT_TRUE(llvm::cantFail(LncSplitter().run(P)));
  std::vector<std::string> Warnings;
  EXPECT_EQ(problems(P, &Warnings), std::vector<std::string>{});
  ASSERT_EQ(Warnings.size(), 2u);
  EXPECT_EQ(Warnings[0],
            "module 'prog', subgraph 0, core 0, block 'loop', instruction "
            "'ar': CollectiveCompute (AllReduce, group [0,1]) is not marked "
            "local: lower_local_collectives leaves it unlowered and unfenced, "
            "and no check covers its peers (mark it local if its group lists "
            "cores of this logical core)");
  EXPECT_NE(Warnings[1].find("core 1, block 'loop', instruction 'ar'"),
            std::string::npos);

  // At lnc_size 1 a non-local collective is the only kind there is.
  Program One = llvm::cantFail(parseProgram(nonLocal(1), "prog.json"));
  Warnings.clear();
  EXPECT_EQ(problems(One, &Warnings), std::vector<std::string>{});
  EXPECT_TRUE(Warnings.empty());
}

TEST(LncVerifier, ControlFlowThatDiffersIsOneLinePerPair) {
  Program P = build();
  // Core 1's loop gets an extra block: the block lists no longer match.
  core(P, 1).createBlock("extra")->append(
      std::make_unique<InstBranch>("extra_ret", Engine::SP, BranchKind::Return));
  std::vector<std::string> Lines = problems(P);
  ASSERT_EQ(Lines.size(), 1u);
  EXPECT_EQ(Lines[0], "module 'prog', subgraph 0, core 1: has 4 blocks, core 0 "
                      "has 3; the cores meet, so their control flow must agree");
}

} // namespace
