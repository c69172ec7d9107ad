//===- RelowerTest.cpp - The pipeline's output lowers to itself -----------===//
//
// For every BIR input of the lit tests and the examples that the pipeline
// accepts, under the option sets that change the lowering: run the default
// pipeline, then lower_local_collectives (and insert_ptcom_flat) again, and
// compare the bytes. The second run must change nothing
// (docs/local-collectives.md, "Idempotence").
//
//===----------------------------------------------------------------------===//

#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/PassManager.h"
#include "loom/bir/passes/Pipeline.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace loom::bir;

namespace {

std::string sourceRoot() { return LOOM_SOURCE_DIR; }

std::vector<std::string> jsonFiles(const std::string &Dir) {
  std::vector<std::string> Files;
  std::error_code EC;
  for (llvm::sys::fs::recursive_directory_iterator It(Dir, EC), End;
       It != End && !EC; It.increment(EC))
    if (llvm::StringRef(It->path()).endswith(".json"))
      Files.push_back(It->path());
  std::sort(Files.begin(), Files.end());
  return Files;
}

TEST(Relower, EveryLitInputLowersToItself) {
  std::string Root = sourceRoot();
  std::vector<std::string> Files = jsonFiles(Root + "/test/bir");
  for (const std::string &F : jsonFiles(Root + "/examples/bir"))
    Files.push_back(F);
  ASSERT_FALSE(Files.empty()) << "no inputs under " << Root;

  std::vector<BackendOptions> Variants(4);
  Variants[1].EnableRemoteSemaphoreDMA = true;
  Variants[2].SendRecvEngine = SendRecvEngineChoice::CostModel;
  Variants[3].SendRecvToGpsimdMaxBpp = 0;
  for (BackendOptions &O : Variants)
    O.EnablePTCOM = true;

  unsigned Lowered = 0;
  for (const std::string &File : Files) {
    auto Buf = llvm::MemoryBuffer::getFile(File);
    ASSERT_TRUE(bool(Buf)) << File;
    for (size_t V = 0; V < Variants.size(); ++V) {
      const BackendOptions &O = Variants[V];
      SCOPED_TRACE(File + ", option set " + std::to_string(V));
      // Inputs that do not load (the tests of bad input, templates) or that
      // the pipeline refuses are not what this property is about.
      llvm::Expected<Program> P = parseProgram((*Buf)->getBuffer(), File);
      if (!P) {
        llvm::consumeError(P.takeError());
        continue;
      }
      auto Entries = buildDefaultPipeline(O, P->front()->getTargetOptions().Arch);
      ASSERT_TRUE(bool(Entries)) << llvm::toString(Entries.takeError());
      auto PM = PassManager::fromPipeline(*Entries, O);
      ASSERT_TRUE(bool(PM)) << llvm::toString(PM.takeError());
      if (llvm::Expected<bool> C = PM->run(*P); !C) {
        llvm::consumeError(C.takeError());
        continue;
      }
      std::string Once = formatProgram(*P);
      auto Again = PassManager::fromNames(
          {"lower_local_collectives", "insert_ptcom_flat"}, O);
      ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
      llvm::Expected<bool> Changed = Again->run(*P);
      ASSERT_TRUE(bool(Changed)) << llvm::toString(Changed.takeError());
      EXPECT_FALSE(*Changed);
      EXPECT_EQ(formatProgram(*P), Once);
      ++Lowered;
    }
  }
  // Most inputs lower; far fewer would mean the inputs moved.
  EXPECT_GE(Lowered, 200u);
}

} // namespace
