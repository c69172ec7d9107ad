//===- BirProgramGenerator.h - Large LNC=2 BIR programs -----*- C++ -*-===//
//-*-===//
//
// Builds an unsplit LNC=2 trn2 program (one module, core 0) of about the
// requested number of instructions, shaped like a compiled transformer
// layer stack: an entry block that zeroes the accumulators, then one loop
// per layer, then an exit block with a core barrier. A layer loads its
// activations and its own weights by DMA, multiplies them on PE into PSUM,
// evacuates to SBUF, applies an activation, all-reduces across the two
// cores, runs a few vector ops, sometimes swaps a tile with the peer core,
// and stores its result; its last branch repeats it a few times. Every
// instruction waits for its producer, and a layer's loads wait for the
// previous layer, so the dependencies form one long chain with side edges.
//
// The same seed gives the same program on every host: sizes and choices
// come from std::mt19937_64 (fully specified by the standard) reduced with
// %, not from the implementation-defined distributions.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BENCH_BIRPROGRAMGENERATOR_H
#define LOOM_BENCH_BIRPROGRAMGENERATOR_H

#include "loom/bir/ir/Instructions.h"
#include "loom/bir/ir/Module.h"
#include "loom/bir/ir/Verifier.h"
#include "loom/bir/json/BirJson.h"

#include "llvm/Support/Error.h"

#include <random>
#include <string>

namespace loom::bir::bench {

struct BirGeneratorOptions {
  uint64_t Instructions = 100000;
  uint64_t Seed = 1;
};

namespace detail {

class Generator {
public:
  explicit Generator(const BirGeneratorOptions &O)
      : Opts(O), Rng(O.Seed),
        M(std::make_unique<Module>("layers", 0, 0,
                                   TargetOptions{2, Target::Trn2})) {}

  Program run() {
    // Tiles are reused round-robin, as an allocator would after liveness.
    for (unsigned I = 0; I < NumTiles; ++I) {
      std::string N = std::to_string(I);
      XSb.push_back(loc("x_sb_" + N, MemoryKind::SB, DataType::BF16, 1024));
      WSb.push_back(loc("w_sb_" + N, MemoryKind::SB, DataType::BF16, 256));
      YSb.push_back(loc("y_sb_" + N, MemoryKind::SB, DataType::FP32, 2048));
      ZSb.push_back(loc("z_sb_" + N, MemoryKind::SB, DataType::FP32, 2048));
      RSb.push_back(loc("r_sb_" + N, MemoryKind::SB, DataType::FP32, 2048));
      RSb.back()->setIsWrittenByAnotherCore(true);
    }
    for (unsigned I = 0; I < NumPsum; ++I)
      Psum.push_back(loc("mm_psum_" + std::to_string(I), MemoryKind::PSUM,
                         DataType::FP32, 2048));
    Acc = loc("acc_sb", MemoryKind::SB, DataType::FP32, 2048);
    Send = loc("send_sb", MemoryKind::SB, DataType::FP32, 256);
    Recv = loc("recv_sb", MemoryKind::SB, DataType::FP32, 256);
    Recv->setIsWrittenByAnotherCore(true);
    XDram = loc("x_dram", MemoryKind::DRAM, DataType::BF16, 65536);
    OutDram = loc("out_dram", MemoryKind::DRAM, DataType::FP32, 65536);

    BasicBlock *Entry = M->createBlock("entry");
    Instruction *Zero =
        add(Entry, std::make_unique<InstMemset>("zero", Engine::DVE, 0.0));
    Zero->addOutput(tile(Acc, 512));
    Last = Zero;
    add(Entry,
        std::make_unique<InstBranch>("br_entry", Engine::SP, BranchKind::Jump));
    BasicBlock *Prev = Entry;
    // The exit block takes 3 instructions.
    for (unsigned L = 0; Count + 3 < Opts.Instructions; ++L) {
      BasicBlock *BB = M->createBlock("layer_" + std::to_string(L));
      // A loop's successors are its body (itself) and then its exit.
      Prev->addSuccessor(BB);
      layer(BB, L);
      BB->addSuccessor(BB);
      Prev = BB;
    }
    BasicBlock *Exit = M->createBlock("exit");
    Prev->addSuccessor(Exit);
    Instruction *Fin =
        add(Exit, std::make_unique<InstActivation>(
                      "mean", Engine::ACT, ActivationFunc::Identity, 0.25));
    Fin->addInput(tile(Acc, 512));
    Fin->addOutput(tile(ZSb[0], 512));
    Fin->addDependency(Last);
    Instruction *Barrier =
        add(Exit, std::make_unique<InstCoreBarrier>(
                      "cb_end", Engine::POOL, 0, std::vector<unsigned>{0, 1}));
    Barrier->addDependency(Fin);
    add(Exit,
        std::make_unique<InstBranch>("ret", Engine::SP, BranchKind::Return));
    Program P;
    P.push_back(std::move(M));
    return P;
  }

private:
  static constexpr unsigned NumTiles = 8;
  static constexpr unsigned NumPsum = 4;

  uint64_t pick(uint64_t N) { return Rng() % N; }

  MemoryLocation *loc(std::string Name, MemoryKind K, DataType T,
                      uint64_t Bytes) {
    return llvm::cantFail(
        M->getMemoryLocations().add(std::make_unique<MemoryLocation>(
            std::move(Name), NextTensorId++, K, T, 128, Bytes)));
  }

  static AccessPattern tile(MemoryLocation *L, uint64_t Elements,
                            uint64_t Offset = 0) {
    return AccessPattern(L, 0, 128, Offset, {{1, Elements}}, L->getType());
  }

  Instruction *add(BasicBlock *BB, std::unique_ptr<Instruction> I) {
    ++Count;
    return BB->append(std::move(I));
  }

  Engine dmaQueue() {
    return static_cast<Engine>(static_cast<unsigned>(Engine::DMA0) + pick(16));
  }

  void layer(BasicBlock *BB, unsigned L) {
    std::string S = "_" + std::to_string(L);
    const uint64_t Widths[] = {128, 256, 512};
    uint64_t N = Widths[pick(3)];
    unsigned T = L % NumTiles;
    // Each layer has its own weights, as in a real model.
    MemoryLocation *WDram =
        loc("w_dram" + S, MemoryKind::DRAM, DataType::BF16, 256);

    Instruction *LdX =
        add(BB, std::make_unique<InstDMACopy>("ld_x" + S, dmaQueue(), false));
    LdX->addInput(tile(XDram, N, 2 * N * pick(64)));
    LdX->addOutput(tile(XSb[T], N));
    LdX->addDependency(Last);
    Instruction *LdW =
        add(BB, std::make_unique<InstDMACopy>("ld_w" + S, dmaQueue(), false));
    LdW->addInput(tile(WDram, 128));
    LdW->addOutput(tile(WSb[T], 128));

    Instruction *Mm = add(
        BB, std::make_unique<InstMatmul>("mm" + S, Engine::PE, pick(4) == 0));
    MemoryLocation *P = Psum[L % NumPsum];
    Mm->addInput(tile(WSb[T], 128));
    Mm->addInput(tile(XSb[T], N));
    Mm->addOutput(tile(P, N));
    Mm->addDependency(LdX);
    Mm->addDependency(LdW);

    Instruction *Evac =
        add(BB, std::make_unique<InstTensorCopy>(
                    "evac" + S, pick(2) ? Engine::ACT : Engine::DVE));
    Evac->addInput(tile(P, N));
    Evac->addOutput(tile(YSb[T], N));
    Evac->addDependency(Mm);

    const ActivationFunc Funcs[] = {ActivationFunc::Identity,
                                    ActivationFunc::Relu, ActivationFunc::Exp,
                                    ActivationFunc::Tanh};
    Instruction *Act = add(BB, std::make_unique<InstActivation>(
                                   "act" + S, Engine::ACT, Funcs[pick(4)],
                                   1.0 / double(1 + pick(8))));
    Act->addInput(tile(YSb[T], N));
    Act->addOutput(tile(ZSb[T], N));
    Act->addDependency(Evac);

    Instruction *Ar =
        add(BB, std::make_unique<InstCollectiveCompute>(
                    "ar" + S, Engine::POOL, CollectiveKind::AllReduce,
                    std::vector<unsigned>{0, 1}, ReduceOp::Add, true));
    Ar->addInput(tile(ZSb[T], N));
    Ar->addOutput(tile(RSb[T], N));
    Ar->addDependency(Act);
    Instruction *Cur = Ar;

    const ArithOp Ops[] = {ArithOp::Add, ArithOp::Subtract, ArithOp::Multiply,
                           ArithOp::Max, ArithOp::Min};
    for (uint64_t K = 0, E = pick(4); K < E; ++K) {
      Instruction *TT =
          add(BB, std::make_unique<InstTensorTensor>(
                      "tt" + S + "_" + std::to_string(K),
                      pick(2) ? Engine::DVE : Engine::POOL, Ops[pick(5)]));
      TT->addInput(tile(RSb[T], N));
      TT->addInput(tile(YSb[T], N));
      TT->addOutput(tile(RSb[T], N));
      TT->addDependency(Cur);
      Cur = TT;
    }

    if (pick(8) == 0) {
      Instruction *Pack =
          add(BB, std::make_unique<InstTensorCopy>("pack" + S, Engine::DVE));
      Pack->addInput(tile(RSb[T], 64));
      Pack->addOutput(tile(Send, 64));
      Pack->addDependency(Cur);
      Instruction *Swap =
          add(BB, std::make_unique<InstCollectiveCompute>(
                      "swap" + S, Engine::POOL, CollectiveKind::SendRecv,
                      std::vector<unsigned>{0, 1}, ReduceOp::None, true));
      Swap->addInput(tile(Send, 64));
      Swap->addOutput(tile(Recv, 64));
      Swap->addDependency(Pack);
      Cur = Swap;
    }

    Instruction *Accum = add(BB, std::make_unique<InstTensorTensor>(
                                     "accum" + S, Engine::DVE, ArithOp::Add));
    Accum->addInput(tile(Acc, 512));
    Accum->addInput(tile(Acc, 512));
    Accum->addOutput(tile(Acc, 512));
    Accum->addDependency(Cur);
    Accum->addDependency(Last);

    Instruction *St = add(
        BB, std::make_unique<InstDMACopy>("st" + S, dmaQueue(), pick(4) == 0));
    St->addInput(tile(RSb[T], N));
    St->addOutput(tile(OutDram, N, 4 * N * pick(32)));
    St->addDependency(Cur);

    add(BB, std::make_unique<InstBranch>("br" + S, Engine::SP, BranchKind::Loop,
                                         1 + pick(4)));
    Last = Accum;
  }

  BirGeneratorOptions Opts;
  std::mt19937_64 Rng;
  std::unique_ptr<Module> M;
  uint64_t NextTensorId = 0;
  uint64_t Count = 0;
  Instruction *Last = nullptr;
  std::vector<MemoryLocation *> XSb, WSb, YSb, ZSb, RSb, Psum;
  MemoryLocation *Acc = nullptr, *Send = nullptr, *Recv = nullptr,
                 *XDram = nullptr, *OutDram = nullptr;
};

} // namespace detail

/// A verified-shape program; see the file comment.
inline Program generateBirProgram(const BirGeneratorOptions &O) {
  return detail::Generator(O).run();
}

/// Generates the program, verifies it and saves it to Path ("-" for stdout)
/// in the saved JSON form.
inline llvm::Error writeGeneratedProgram(const BirGeneratorOptions &O,
                                         llvm::StringRef Path) {
  Program P = generateBirProgram(O);
  if (llvm::Error E = verifyProgram(P))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "generated program does not verify: " +
                                       llvm::toString(std::move(E)));
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  if (EC)
    return llvm::createStringError(EC, Path + ": " + EC.message());
  writeProgram(OS, P);
  return llvm::Error::success();
}

} // namespace loom::bir::bench

#endif
