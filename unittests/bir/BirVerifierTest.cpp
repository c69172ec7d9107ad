//===- BirVerifierTest.cpp - Every rule of the BIR verifier ---------------===//

#include "BirTestModules.h"

#include "loom/bir/ir/Verifier.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>

using namespace loom::bir;
using namespace loom::bir::test;

namespace {

std::string verifySmall(const std::function<void(SmallModule &)> &Edit) {
  SmallModule S = buildSmallModule();
  Edit(S);
  return errorText(verifyModule(*S.M, "$.modules[0]"));
}

/// Replaces instruction Old of its block by New, keeping its position.
Instruction *replace(Instruction *Old, std::unique_ptr<Instruction> New) {
  BasicBlock *BB = Old->getBasicBlock();
  Instruction *I = BB->insert(Old->getIterator(), std::move(New));
  BB->removeInstruction(Old);
  return I;
}

TEST(BirVerifier, SmallModuleIsValid) {
  EXPECT_EQ(verifySmall([](SmallModule &) {}), "");
}

// The verifier takes a program whose instructions follow their
// dependencies as acyclic at once; one that lists a dependency later is
// walked, and verifies when there is no cycle.
TEST(BirVerifier, DependencyOnALaterInstructionIsNoCycle) {
  EXPECT_EQ(verifySmall([](SmallModule &S) {
              S.Double->removeDependency(S.Copy);
              S.Copy->addDependency(S.Barrier);
            }),
            "");
}

struct Case {
  const char *Name;
  std::function<void(SmallModule &)> Edit;
  const char *Error;
};

class BirVerifierRule : public testing::TestWithParam<Case> {};

TEST_P(BirVerifierRule, Refuses) {
  EXPECT_EQ(verifySmall(GetParam().Edit), GetParam().Error);
}

const Case Cases[] = {
    {"LncTooLargeForTrn1",
     [](SmallModule &S) { S.M->getTargetOptions().Arch = Target::Trn1; },
     "$.modules[0].pass_options.lnc_size: lnc_size 2 is not supported by trn1 "
     "(1 to 1)"},
    {"CoreOutsideLnc", [](SmallModule &S) { S.M->setNeuronCoreId(2); },
     "$.modules[0].neuron_core_id: core 2 is outside the logical core "
     "(lnc_size 2)"},
    {"SBPartitions",
     [](SmallModule &S) {
       addLocation(*S.M, "big", 5, MemoryKind::SB, DataType::FP32, 129, 4);
     },
     "$.modules[0].memory_locations[2].partitions: SB location 'big' has 129 "
     "partitions; SB has 128"},
    {"PSUMCapacity",
     [](SmallModule &S) {
       addLocation(*S.M, "ps", 5, MemoryKind::PSUM, DataType::FP32, 128, 16385);
     },
     "$.modules[0].memory_locations[2].bytes_per_partition: 16385 bytes per "
     "partition exceed the 16384 of PSUM on trn2"},
    {"DuplicateBlock", [](SmallModule &S) { S.M->createBlock("exit"); },
     "$.modules[0].blocks[2].name: duplicate block name 'exit'"},
    {"DuplicateInstruction", [](SmallModule &S) { S.Ret->setName("copy"); },
     "$.modules[0].blocks[1].instructions[1].name: duplicate instruction name "
     "'copy'"},
    {"ForeignSuccessor",
     [](SmallModule &S) {
       static Module Other("o", 0, 0, TargetOptions{});
       S.Exit->addSuccessor(Other.createBlock("x"));
     },
     "$.modules[0].blocks[1].successors[0]: not a block of this module"},
    {"MissingTerminator",
     [](SmallModule &S) { S.Exit->removeInstruction(S.Ret); },
     "$.modules[0].blocks[1].instructions: block 'exit' does not end with a "
     "Branch"},
    {"TerminatorInTheMiddle",
     [](SmallModule &S) {
       S.Entry->insert(
           S.Entry->begin(),
           std::make_unique<InstBranch>("early", Engine::SP, BranchKind::Jump));
     },
     "$.modules[0].blocks[0].instructions[0]: a Branch must be the last "
     "instruction of its block"},
    {"SuccessorCount",
     [](SmallModule &S) {
       replace(S.Jump, std::make_unique<InstBranch>("jump", Engine::SP,
                                                    BranchKind::Loop, 3));
     },
     "$.modules[0].blocks[0].successors: a Loop branch needs 2 successor(s); "
     "block 'entry' has 1"},
    {"LoopWithoutTrips",
     [](SmallModule &S) {
       S.Entry->addSuccessor(S.Entry);
       replace(S.Jump, std::make_unique<InstBranch>("jump", Engine::SP,
                                                    BranchKind::Loop, 0));
     },
     "$.modules[0].blocks[0].instructions[2].trip_count: a Loop runs its body "
     "at least once"},
    {"WrongEngine", [](SmallModule &S) { S.Copy->setEngine(Engine::PE); },
     "$.modules[0].blocks[0].instructions[0].engine: engine PE cannot execute "
     "TensorCopy"},
    {"InputCount", [](SmallModule &S) { S.Copy->addInput(tile(S.A, 256)); },
     "$.modules[0].blocks[0].instructions[0].inputs: TensorCopy takes 1 "
     "input(s), not 2"},
    {"ForeignLocation",
     [](SmallModule &S) {
       static MemoryLocation Outside("a", 0, MemoryKind::SB, DataType::FP32,
                                     128, 1024);
       S.Copy->inputs()[0].setLocation(&Outside);
     },
     "$.modules[0].blocks[0].instructions[0].inputs[0].memloc: not a memory "
     "location of this module"},
    {"TypeDiffersFromLocation",
     [](SmallModule &S) { S.Copy->inputs()[0].setType(DataType::INT32); },
     "$.modules[0].blocks[0].instructions[0].inputs[0].dtype: type int32 "
     "differs from fp32, the type of 'a'"},
    {"PartitionsOutOfBounds",
     [](SmallModule &S) { S.Copy->inputs()[0].setPartitions(64, 65); },
     "$.modules[0].blocks[0].instructions[0].inputs[0]: partitions [64, 129) "
     "are outside the 128 partitions of 'a'"},
    {"BytesOutOfBounds",
     [](SmallModule &S) { S.Copy->outputs()[0].setOffset(4); },
     "$.modules[0].blocks[0].instructions[0].outputs[0]: bytes [4, 1028) are "
     "outside the 1024 bytes per partition of 'b'"},
    {"StridedOutOfBounds",
     [](SmallModule &S) {
       S.Copy->outputs()[0].setPattern({{2, 128}, {1, 3}});
     },
     "$.modules[0].blocks[0].instructions[0].outputs[0]: bytes [0, 1028) are "
     "outside the 1024 bytes per partition of 'b'"},
    {"BelowByteZero",
     [](SmallModule &S) {
       S.Copy->inputs()[0].setPattern({{-1, 256}});
     },
     "$.modules[0].blocks[0].instructions[0].inputs[0]: the pattern reaches "
     "outside 'a' (below byte 0 or past 2^64)"},
    {"MisalignedOffset",
     [](SmallModule &S) { S.Copy->inputs()[0].setOffset(2); },
     "$.modules[0].blocks[0].instructions[0].inputs[0].offset: offset 2 is not "
     "a multiple of the 4-byte element"},
    {"ZeroCount",
     [](SmallModule &S) {
       S.Copy->inputs()[0].setPattern({{1, 256}, {1, 0}});
     },
     "$.modules[0].blocks[0].instructions[0].inputs[0].pattern[1]: a count "
     "must be at least 1"},
    {"ShapeMismatch",
     [](SmallModule &S) {
       S.Copy->outputs()[0].setPattern({{1, 128}});
     },
     "$.modules[0].blocks[0].instructions[0].inputs[0]: shape [128 x 256] "
     "differs from the output's [128 x 128]"},
    {"SelfDependency", [](SmallModule &S) { S.Copy->addDependency(S.Copy); },
     "$.modules[0].blocks[0].instructions[0].deps[0]: 'copy' depends on "
     "itself"},
    {"ForeignDependency",
     [](SmallModule &S) {
       static SmallModule Other = buildSmallModule();
       S.Copy->addDependency(Other.Copy);
     },
     "$.modules[0].blocks[0].instructions[0].deps[0]: 'copy' is not an "
     "instruction of this module"},
    {"DependencyCycle",
     [](SmallModule &S) { S.Copy->addDependency(S.Barrier); },
     "$.modules[0].blocks[0].instructions[0].deps: dependency cycle: 'copy' -> "
     "'cb' -> 'double' -> 'copy'"},
    {"BarrierCoreOutsideLnc",
     [](SmallModule &S) {
       replace(S.Barrier,
               std::make_unique<InstCoreBarrier>("cb", Engine::POOL, 0,
                                                 std::vector<unsigned>{0, 2}));
     },
     "$.modules[0].blocks[1].instructions[0].cores[1]: core 2 is outside the "
     "logical core (lnc_size 2)"},
    {"BarrierWithoutOwnCore",
     [](SmallModule &S) {
       replace(S.Barrier, std::make_unique<InstCoreBarrier>(
                              "cb", Engine::POOL, 0, std::vector<unsigned>{1}));
     },
     "$.modules[0].blocks[1].instructions[0].cores: core 0, which runs this "
     "module, is not listed"},
    {"BarrierCoreTwice",
     [](SmallModule &S) {
       replace(S.Barrier,
               std::make_unique<InstCoreBarrier>("cb", Engine::POOL, 0,
                                                 std::vector<unsigned>{0, 0}));
     },
     "$.modules[0].blocks[1].instructions[0].cores[1]: core 0 is listed twice"},
    {"BarrierIdReused",
     [](SmallModule &S) {
       S.Exit->insert(S.Exit->getFirstTerminator(),
                      std::make_unique<InstCoreBarrier>(
                          "cb2", Engine::POOL, 0, std::vector<unsigned>{0, 1}));
     },
     "$.modules[0].blocks[1].instructions[1].id: barrier id 0 is already used "
     "by 'cb'"},
};

std::string caseName(const testing::TestParamInfo<Case> &Info) {
  return Info.param.Name;
}

INSTANTIATE_TEST_SUITE_P(Rules, BirVerifierRule, testing::ValuesIn(Cases),
                         caseName);

/// A module with one instruction I between a memset and a return; every
/// location has 128 partitions.
struct OneInstruction {
  std::unique_ptr<Module> M =
      std::make_unique<Module>("m", 0, 0, TargetOptions{2, Target::Trn2});
  BasicBlock *BB = M->createBlock("b");

  MemoryLocation *loc(std::string Name, MemoryKind K, DataType T,
                      uint64_t Bytes) {
    return addLocation(*M, std::move(Name), M->getMemoryLocations().size(), K,
                       T, 128, Bytes);
  }
  std::string verify(std::unique_ptr<Instruction> I) {
    BB->append(std::move(I));
    BB->append(
        std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
    return errorText(verifyModule(*M, "$"));
  }
};

std::unique_ptr<Instruction> withOperands(std::unique_ptr<Instruction> I,
                                          std::vector<AccessPattern> Ins,
                                          std::vector<AccessPattern> Outs) {
  for (AccessPattern &AP : Ins)
    I->addInput(AP);
  for (AccessPattern &AP : Outs)
    I->addOutput(AP);
  return I;
}

TEST(BirVerifierKinds, Matmul) {
  auto Check = [](DataType OutType, uint64_t M, uint64_t N, uint64_t OutN) {
    OneInstruction T;
    auto *W = T.loc("w", MemoryKind::SB, DataType::BF16, 4096);
    auto *X = T.loc("x", MemoryKind::SB, DataType::BF16, 4096);
    auto *P = T.loc("p", MemoryKind::PSUM, OutType, 4096);
    return T.verify(
        withOperands(std::make_unique<InstMatmul>("mm", Engine::PE, false),
                     {tile(W, M), tile(X, N)},
                     {AccessPattern(P, 0, 128, 0, {{1, OutN}}, OutType)}));
  };
  EXPECT_EQ(Check(DataType::FP32, 128, 512, 512), "");
  EXPECT_EQ(Check(DataType::FP32, 128, 512, 256),
            "$.blocks[0].instructions[0].outputs[0]: output is [128 x 256]; "
            "stationary^T x moving is [128 x 512]");
  EXPECT_EQ(
      Check(DataType::BF16, 128, 512, 512),
      "$.blocks[0].instructions[0].outputs[0].dtype: a Matmul writes fp32");
  EXPECT_EQ(
      Check(DataType::FP32, 128, 1024, 1024),
      "$.blocks[0].instructions[0].inputs[1]: moving operand has more than "
      "512 elements per partition");
}

TEST(BirVerifierKinds, DMACopy) {
  auto Check = [](DataType In, DataType Out, bool Accumulate, uint64_t OutN) {
    OneInstruction T;
    auto *D = T.loc("d", MemoryKind::DRAM, In, 1024);
    auto *S = T.loc("s", MemoryKind::SB, Out, 1024);
    return T.verify(withOperands(
        std::make_unique<InstDMACopy>("dma", Engine::DMA0, Accumulate),
        {AccessPattern(D, 0, 128, 0, {{1, 64}}, In)},
        {AccessPattern(S, 0, 64, 0, {{1, OutN}}, Out)}));
  };
  // A DMA may reshape: 128 x 64 elements land as 64 x 128.
  EXPECT_EQ(Check(DataType::FP32, DataType::FP32, true, 128), "");
  EXPECT_EQ(Check(DataType::FP32, DataType::FP32, false, 64),
            "$.blocks[0].instructions[0].outputs[0]: writes 4096 elements but "
            "reads 8192");
  EXPECT_EQ(Check(DataType::FP32, DataType::BF16, false, 128),
            "$.blocks[0].instructions[0].outputs[0].dtype: a DMACopy does not "
            "convert fp32 to bf16");
  EXPECT_EQ(
      Check(DataType::INT8, DataType::INT8, true, 128),
      "$.blocks[0].instructions[0].accumulate: DMA accumulation adds fp32, "
      "bf16 or fp16, not int8");
}

TEST(BirVerifierKinds, TensorTensorIntegerRules) {
  auto Check = [](ArithOp Op, DataType T0, DataType T1, DataType TO) {
    OneInstruction T;
    auto *A = T.loc("a", MemoryKind::SB, T0, 1024);
    auto *B = T.loc("b", MemoryKind::SB, T1, 1024);
    auto *O = T.loc("o", MemoryKind::SB, TO, 1024);
    return T.verify(
        withOperands(std::make_unique<InstTensorTensor>("tt", Engine::DVE, Op),
                     {tile(A, 8), tile(B, 8)}, {tile(O, 8)}));
  };
  EXPECT_EQ(Check(ArithOp::And, DataType::UINT8, DataType::UINT8, DataType::UINT8), "");
  EXPECT_EQ(Check(ArithOp::Less, DataType::FP32, DataType::BF16, DataType::UINT8), "");
  EXPECT_EQ(Check(ArithOp::Divide, DataType::INT32, DataType::FP32, DataType::FP32), "");
  EXPECT_EQ(Check(ArithOp::And, DataType::FP32, DataType::FP32, DataType::FP32),
            "$.blocks[0].instructions[0].op: And needs integer operands, not "
            "fp32 and fp32");
  EXPECT_EQ(Check(ArithOp::Add, DataType::INT8, DataType::INT32, DataType::INT32),
            "$.blocks[0].instructions[0].inputs[1].dtype: integer operands "
            "need one type, not int8 and int32");
}

TEST(BirVerifierKinds, ActivationIntegerRules) {
  auto Check = [](ActivationFunc F, double Scale, DataType TI, DataType TO) {
    OneInstruction T;
    auto *A = T.loc("a", MemoryKind::SB, TI, 1024);
    auto *O = T.loc("o", MemoryKind::PSUM, TO, 1024);
    return T.verify(withOperands(
        std::make_unique<InstActivation>("act", Engine::ACT, F, Scale),
        {tile(A, 8)}, {tile(O, 8)}));
  };
  EXPECT_EQ(Check(ActivationFunc::Negate, 1, DataType::INT32, DataType::INT32), "");
  EXPECT_EQ(Check(ActivationFunc::Negate, 2, DataType::INT32, DataType::FP32), "");
  EXPECT_EQ(Check(ActivationFunc::Log, 1, DataType::BF16, DataType::FP32), "");
  EXPECT_EQ(Check(ActivationFunc::LogicalNot, 1, DataType::FP32, DataType::FP32),
            "$.blocks[0].instructions[0].func: LogicalNot needs an input and an "
            "output of one integer type, not fp32 and fp32");
  EXPECT_EQ(Check(ActivationFunc::BitwiseNot, 1, DataType::INT8, DataType::INT16),
            "$.blocks[0].instructions[0].func: BitwiseNot needs an input and an "
            "output of one integer type, not int8 and int16");
  EXPECT_EQ(Check(ActivationFunc::Abs, 0.5, DataType::INT16, DataType::INT16),
            "$.blocks[0].instructions[0].scale: an Activation from int16 to "
            "int16 computes exactly in integers and takes no scale (1)");
}

TEST(BirVerifierKinds, Select) {
  auto Check = [](DataType P, DataType A, DataType B, DataType O,
                  Engine E = Engine::DVE, MemoryKind K = MemoryKind::SB) {
    OneInstruction T;
    auto *LP = T.loc("p", K, P, 1024);
    auto *LA = T.loc("a", MemoryKind::SB, A, 1024);
    auto *LB = T.loc("b", MemoryKind::SB, B, 1024);
    auto *LO = T.loc("o", MemoryKind::SB, O, 1024);
    return T.verify(withOperands(std::make_unique<InstSelect>("sel", E),
                                 {tile(LP, 8), tile(LA, 8), tile(LB, 8)},
                                 {tile(LO, 8)}));
  };
  EXPECT_EQ(Check(DataType::UINT8, DataType::BF16, DataType::BF16, DataType::BF16), "");
  EXPECT_EQ(Check(DataType::INT8, DataType::BF16, DataType::BF16, DataType::BF16),
            "$.blocks[0].instructions[0].inputs[0].dtype: the predicate of a "
            "Select is uint8 (0 or 1), not int8");
  EXPECT_EQ(Check(DataType::UINT8, DataType::BF16, DataType::FP32, DataType::BF16),
            "$.blocks[0].instructions[0].inputs[2].dtype: a Select copies fp32 "
            "but writes bf16; it does not convert");
  EXPECT_EQ(Check(DataType::UINT8, DataType::FP32, DataType::FP32, DataType::FP32,
                  Engine::ACT),
            "$.blocks[0].instructions[0].engine: engine ACT cannot execute "
            "Select");
  EXPECT_EQ(Check(DataType::UINT8, DataType::FP32, DataType::FP32, DataType::FP32,
                  Engine::POOL, MemoryKind::DRAM),
            "$.blocks[0].instructions[0].inputs[0]: Select reads SB or PSUM "
            "only");
  OneInstruction Two;
  auto *L = Two.loc("a", MemoryKind::SB, DataType::UINT8, 1024);
  EXPECT_EQ(Two.verify(withOperands(std::make_unique<InstSelect>("sel", Engine::DVE),
                                    {tile(L, 8), tile(L, 8)}, {tile(L, 8)})),
            "$.blocks[0].instructions[0].inputs: Select takes 3 input(s), not 2");
}

TEST(BirVerifierKinds, TensorReduce) {
  auto Check = [](ArithOp Op, DataType TI, uint64_t NI, DataType TO, uint64_t NO,
                  bool Accumulate = false, double Init = 0,
                  unsigned OutPartitions = 128) {
    OneInstruction T;
    auto *A = T.loc("a", MemoryKind::SB, TI, 4096);
    auto *O = T.loc("o", MemoryKind::SB, TO, 4096);
    return T.verify(withOperands(
        std::make_unique<InstTensorReduce>("red", Engine::POOL, Op, Accumulate,
                                           Init),
        {tile(A, NI)},
        {AccessPattern(O, 0, OutPartitions, 0, {{1, NO}}, TO)}));
  };
  EXPECT_EQ(Check(ArithOp::Add, DataType::BF16, 64, DataType::FP32, 4), "");
  EXPECT_EQ(Check(ArithOp::Max, DataType::FP32, 64, DataType::FP32, 1, false,
                  -HUGE_VAL),
            "");
  EXPECT_EQ(Check(ArithOp::Add, DataType::FP32, 64, DataType::FP32, 5),
            "$.blocks[0].instructions[0].outputs[0]: output is [128 x 5]; a "
            "reduction of input [128 x 64] needs its partitions and a divisor "
            "of its elements per partition");
  EXPECT_EQ(Check(ArithOp::Add, DataType::FP32, 64, DataType::FP32, 4, false, 0, 64),
            "$.blocks[0].instructions[0].outputs[0]: output is [64 x 4]; a "
            "reduction of input [128 x 64] needs its partitions and a divisor "
            "of its elements per partition");
  EXPECT_EQ(Check(ArithOp::Less, DataType::FP32, 64, DataType::FP32, 4),
            "$.blocks[0].instructions[0].op: a TensorReduce folds with an "
            "arithmetic or bitwise op, not Less");
  EXPECT_EQ(Check(ArithOp::Add, DataType::INT8, 64, DataType::INT32, 4),
            "$.blocks[0].instructions[0].outputs[0].dtype: an integer "
            "TensorReduce reads and writes one type, not int8 and int32");
  EXPECT_EQ(Check(ArithOp::Or, DataType::FP32, 64, DataType::FP32, 4),
            "$.blocks[0].instructions[0].op: Or needs integer operands, not "
            "fp32");
  EXPECT_EQ(Check(ArithOp::Max, DataType::INT8, 64, DataType::INT8, 4, false, -129),
            "$.blocks[0].instructions[0].init: the initial value of a "
            "reduction into int8 must be an integer from -128 to 127");
  EXPECT_EQ(Check(ArithOp::Max, DataType::UINT8, 64, DataType::UINT8, 4, false, 0.5),
            "$.blocks[0].instructions[0].init: the initial value of a "
            "reduction into uint8 must be an integer from 0 to 255");
  // When accumulating, init is not used.
  EXPECT_EQ(Check(ArithOp::Max, DataType::UINT8, 64, DataType::UINT8, 4, true, 0.5), "");
}

TEST(BirVerifierKinds, Iota) {
  auto Check = [](DataType T, int64_t Start, int64_t Step,
                  std::vector<int64_t> Mult, Engine E = Engine::POOL) {
    OneInstruction One;
    auto *O = One.loc("o", MemoryKind::SB, T, 4096);
    return One.verify(withOperands(
        std::make_unique<InstIota>("iota", E, Start, Step, std::move(Mult)), {},
        {AccessPattern(O, 0, 128, 0, {{8, 4}, {1, 8}}, T)}));
  };
  EXPECT_EQ(Check(DataType::INT32, 0, 32, {8, 1}), "");
  EXPECT_EQ(Check(DataType::BF16, -5, 0, {0, 1}), "");
  // uint8 reaches 127 * 1 + 3 * 1 + 7 * 16 = 242, or 258 with a start of 16.
  EXPECT_EQ(Check(DataType::UINT8, 0, 1, {1, 16}), "");
  EXPECT_EQ(Check(DataType::UINT8, 16, 1, {1, 16}),
            "$.blocks[0].instructions[0]: the values of an Iota into uint8 "
            "reach outside its range");
  EXPECT_EQ(Check(DataType::UINT8, 0, -1, {0, 0}),
            "$.blocks[0].instructions[0]: the values of an Iota into uint8 "
            "reach outside its range");
  EXPECT_EQ(Check(DataType::FP32, INT64_MAX, 0, {0, 1}),
            "$.blocks[0].instructions[0]: the values of an Iota into fp32 reach "
            "outside its range");
  EXPECT_EQ(Check(DataType::FP32, 0, 0, {1}),
            "$.blocks[0].instructions[0].multipliers: 1 multiplier(s) for an "
            "output pattern of 2 dimension(s)");
  EXPECT_EQ(Check(DataType::FP32, 0, 0, {1, 1}, Engine::DVE),
            "$.blocks[0].instructions[0].engine: engine DVE cannot execute "
            "Iota");
}

TEST(BirVerifierKinds, InitialData) {
  auto Check = [](MemoryKind K, size_t Bytes) {
    OneInstruction T;
    MemoryLocation *L = T.loc("c", K, DataType::FP32, 16);
    L->setInitialData(std::vector<uint8_t>(Bytes, 7));
    auto *S = T.loc("s", MemoryKind::SB, DataType::FP32, 1024);
    return T.verify(withOperands(
        std::make_unique<InstMemset>("ms", Engine::DVE, 0), {}, {tile(S, 8)}));
  };
  EXPECT_EQ(Check(MemoryKind::DRAM, 128 * 16), "");
  EXPECT_EQ(Check(MemoryKind::SharedDRAM, 128 * 16), "");
  EXPECT_EQ(Check(MemoryKind::DRAM, 128 * 16 - 1),
            "$.memory_locations[0].initial_data: 2047 bytes of initial data "
            "for the 2048 bytes of 'c'");
  EXPECT_EQ(Check(MemoryKind::PSUM, 128 * 16),
            "$.memory_locations[0].initial_data: only a DRAM or SharedDRAM "
            "location of its own has initial data; 'c' is in PSUM");
}

TEST(BirVerifierKinds, GPSIMDSB2SB) {
  auto Check = [](DataType T, uint64_t N, MemoryKind OutKind) {
    OneInstruction One;
    auto *In = One.loc("in", MemoryKind::SB, T, 4096);
    auto *Out = One.loc("out", OutKind, T, 4096);
    return One.verify(withOperands(
        std::make_unique<InstGPSIMDSB2SB>("sb2sb", Engine::POOL, true),
        {tile(In, N)}, {tile(Out, N)}));
  };
  EXPECT_EQ(Check(DataType::INT8, 256, MemoryKind::SB), "");
  EXPECT_EQ(
      Check(DataType::INT8, 257, MemoryKind::SB),
      "$.blocks[0].instructions[0].inputs[0]: 1028 bytes per partition in "
      "4-byte lanes exceed the 1024 a GPSIMDSB2SB moves");
  EXPECT_EQ(Check(DataType::FP32, 16, MemoryKind::PSUM),
            "$.blocks[0].instructions[0].outputs[0]: a GPSIMDSB2SB writes SB");
}

TEST(BirVerifierKinds, CollectiveCompute) {
  auto Check = [](CollectiveKind K, std::vector<unsigned> Group, ReduceOp Op,
                  bool Local, uint64_t InN, uint64_t OutN) {
    OneInstruction T;
    auto *In = T.loc("in", MemoryKind::SB, DataType::FP32, 4096);
    auto *Out = T.loc("out", MemoryKind::SB, DataType::FP32, 4096);
    return T.verify(withOperands(std::make_unique<InstCollectiveCompute>(
                                     "cc", Engine::POOL, K, Group, Op, Local),
                                 {tile(In, InN)}, {tile(Out, OutN)}));
  };
  using CK = CollectiveKind;
  EXPECT_EQ(Check(CK::AllReduce, {0, 1}, ReduceOp::Add, true, 64, 64), "");
  EXPECT_EQ(Check(CK::ReduceScatter, {0, 1}, ReduceOp::Max, true, 64, 32), "");
  EXPECT_EQ(Check(CK::AllGather, {0, 1}, ReduceOp::None, true, 32, 64), "");
  EXPECT_EQ(Check(CK::AllToAllV, {0, 5, 9}, ReduceOp::None, false, 7, 3), "");
  EXPECT_EQ(
      Check(CK::SendRecv, {0, 1, 2}, ReduceOp::None, false, 8, 8),
      "$.blocks[0].instructions[0].group: SendRecv swaps between 2 cores, "
      "not 3");
  EXPECT_EQ(Check(CK::AllReduce, {0, 1}, ReduceOp::None, true, 8, 8),
            "$.blocks[0].instructions[0].reduce: AllReduce needs a reduce op");
  EXPECT_EQ(Check(CK::Permute, {0, 1}, ReduceOp::Add, true, 8, 8),
            "$.blocks[0].instructions[0].reduce: Permute takes no reduce op");
  EXPECT_EQ(
      Check(CK::AllGather, {0, 1}, ReduceOp::None, true, 32, 32),
      "$.blocks[0].instructions[0].outputs[0]: AllGather of 4096 elements "
      "over 2 cores writes 8192 elements, not 4096");
  EXPECT_EQ(Check(CK::AllToAll, {0, 1, 2}, ReduceOp::None, false, 1, 1),
            "$.blocks[0].instructions[0].inputs[0]: 128 elements do not split "
            "evenly over 3 cores");
  EXPECT_EQ(
      Check(CK::AllReduce, {0, 3}, ReduceOp::Add, true, 8, 8),
      "$.blocks[0].instructions[0].group[1]: core 3 is outside the logical "
      "core (lnc_size 2)");
}

TEST(BirVerifierKinds, ComputeEnginesStayOnChip) {
  OneInstruction T;
  auto *D = T.loc("d", MemoryKind::DRAM, DataType::FP32, 1024);
  auto *S = T.loc("s", MemoryKind::SB, DataType::FP32, 1024);
  EXPECT_EQ(
      T.verify(withOperands(std::make_unique<InstActivation>(
                                "act", Engine::ACT, ActivationFunc::Exp, 1.0),
                            {tile(D, 8)}, {tile(S, 8)})),
      "$.blocks[0].instructions[0].inputs[0]: Activation reads SB or PSUM "
      "only");
}

TEST(BirVerifierKinds, ScalesAreFiniteMemsetsAnyValue) {
  OneInstruction T;
  auto *S = T.loc("s", MemoryKind::SB, DataType::FP32, 1024);
  // A Memset may write an infinity or NaN (a pad or reduction identity).
  EXPECT_EQ(
      T.verify(
          withOperands(std::make_unique<InstMemset>("ms", Engine::DVE, NAN), {},
                       {tile(S, 8)})),
      "");
  OneInstruction T2;
  auto *S2 = T2.loc("s", MemoryKind::SB, DataType::FP32, 1024);
  EXPECT_EQ(T2.verify(withOperands(
                std::make_unique<InstActivation>("act", Engine::ACT,
                                                 ActivationFunc::Exp, INFINITY),
                {tile(S2, 8)}, {tile(S2, 8)})),
            "$.blocks[0].instructions[0].scale: the scale must be a finite "
            "number");
}

TEST(BirVerifierKinds, TensorCompletionNeedsAnInput) {
  OneInstruction T;
  EXPECT_EQ(
      T.verify(std::make_unique<InstTensorCompletion>("tc", Engine::SP)),
      "$.blocks[0].instructions[0].inputs: TensorCompletion takes at least "
      "1 input(s), not 0");
}

TEST(BirVerifierProgram, ModulesAgree) {
  TargetOptions Lnc2{2, Target::Trn2};
  Program P;
  P.push_back(returnOnlyModule(Lnc2, 0));
  P.push_back(returnOnlyModule(Lnc2, 0));
  EXPECT_EQ(errorText(verifyProgram(P)),
            "$.modules[1]: a second module for subgraph 0, core 0");
  P[1]->setNeuronCoreId(1);
  EXPECT_EQ(errorText(verifyProgram(P)), "");
  P[1] = returnOnlyModule(TargetOptions{1, Target::Trn2}, 0);
  EXPECT_EQ(errorText(verifyProgram(P)),
            "$.modules[1].pass_options: lnc_size 1 and target trn2 differ from "
            "$.modules[0]'s 2 and trn2");
  EXPECT_EQ(errorText(verifyProgram(Program())),
            "$.modules: a program needs at least one module");
}

} // namespace

TEST(BirVerifierProgram, SharedDRAMStartsAlikeOnEveryCore) {
  TargetOptions Lnc2{2, Target::Trn2};
  Program P;
  P.push_back(returnOnlyModule(Lnc2, 0));
  P.push_back(returnOnlyModule(Lnc2, 1));
  MemoryLocation *L0 = addLocation(*P[0], "w", 0, MemoryKind::SharedDRAM,
                                   DataType::UINT8, 1, 4);
  MemoryLocation *L1 = addLocation(*P[1], "w", 0, MemoryKind::SharedDRAM,
                                   DataType::UINT8, 1, 4);
  L0->setInitialData({1, 2, 3, 4});
  EXPECT_EQ(errorText(verifyProgram(P)),
            "$.modules[1].memory_locations[0].initial_data: SharedDRAM "
            "location 'w' starts with other initial data than on core 0; the "
            "cores share its bytes");
  L1->setInitialData({1, 2, 3, 5});
  EXPECT_EQ(errorText(verifyProgram(P)),
            "$.modules[1].memory_locations[0].initial_data: SharedDRAM "
            "location 'w' starts with other initial data than on core 0; the "
            "cores share its bytes");
  L1->setInitialData({1, 2, 3, 4});
  EXPECT_EQ(errorText(verifyProgram(P)), "");
}
