//===- PipelineTest.cpp - The backend pipeline table ----------------------===//

#include "loom/bir/json/BirJson.h"
#include "loom/bir/passes/Pipeline.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <map>

using namespace loom::bir;

namespace {

/// "order:name" of every entry, "order:name*" for a skipped slot and
/// "order:[name]" for a marker.
std::vector<std::string> describe(llvm::ArrayRef<PipelineEntry> P) {
  std::vector<std::string> D;
  for (const PipelineEntry &E : P) {
    std::string S = std::to_string(E.Order) + ":";
    if (E.EntryKind == PipelineEntry::Kind::Marker)
      S += "[" + E.Name + "]";
    else
      S += E.Name + (E.Active ? "" : "*");
    D.push_back(S);
  }
  return D;
}

std::vector<PipelineEntry> build(BackendOptions O, Target T = Target::Trn2) {
  auto P = buildDefaultPipeline(O, T);
  EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
  return *P;
}

TEST(Pipeline, DefaultOrder) {
  EXPECT_EQ(describe(build({})),
            (std::vector<std::string>{
                "8:lnc_splitter", "80:lower_local_collectives",
                "81:[extend_shared_lifetimes]", "83:[sync_shared_allocations]",
                "111:lower_local_collectives*", "113:[post_sched]",
                "114:lnc_verifier"}));
}

TEST(Pipeline, PTCOMOnlyWhenEnabled) {
  BackendOptions O;
  O.EnablePTCOM = true;
  EXPECT_EQ(describe(build(O)),
            (std::vector<std::string>{
                "8:lnc_splitter", "80:lower_local_collectives",
                "81:[extend_shared_lifetimes]", "83:[sync_shared_allocations]",
                "95:insert_ptcom_flat", "111:lower_local_collectives*",
                "112:insert_ptcom_flat*", "113:[post_sched]",
                "114:lnc_verifier"}));
}

TEST(Pipeline, BeforePostSchedMovesBothPasses) {
  BackendOptions O;
  O.EnablePTCOM = true;
  O.RunSharedAllocationBeforePostSched = true;
  EXPECT_EQ(describe(build(O)),
            (std::vector<std::string>{
                "8:lnc_splitter", "80:lower_local_collectives*",
                "81:[extend_shared_lifetimes]", "83:[sync_shared_allocations]",
                "95:insert_ptcom_flat*", "111:lower_local_collectives",
                "112:insert_ptcom_flat", "113:[post_sched]",
                "114:lnc_verifier"}));
}

TEST(Pipeline, OrderNumbersAscendAndEachPassRunsOnce) {
  for (bool Early : {false, true})
    for (bool PTCOM : {false, true}) {
      BackendOptions O;
      O.EnablePTCOM = PTCOM;
      O.RunSharedAllocationBeforePostSched = Early;
      std::vector<PipelineEntry> P = build(O);
      std::map<std::string, unsigned> Active;
      for (size_t I = 0; I < P.size(); ++I) {
        if (I) {
          EXPECT_LT(P[I - 1].Order, P[I].Order);
        }
        if (P[I].EntryKind == PipelineEntry::Kind::Pass && P[I].Active)
          ++Active[P[I].Name];
      }
      for (const auto &[Name, N] : Active)
        EXPECT_EQ(N, 1u) << Name;
      EXPECT_EQ(Active.count("insert_ptcom_flat"), PTCOM ? 1u : 0u);
      // The verifier checks what every other entry produced.
      EXPECT_EQ(P.back().Name, "lnc_verifier");
      EXPECT_TRUE(P.back().Active);
      // The active slots are the ones before post_sched with the flag.
      for (const PipelineEntry &E : P)
        if (E.Name == "lower_local_collectives" && E.Active) {
          EXPECT_EQ(E.Order, Early ? 111u : 80u);
        }
    }
}

// "Only relevant for trn2": elsewhere the flag is ignored, and the
// pipeline is the one without it but for the notes of the late slots.
TEST(Pipeline, SlotsBeforePostSchedFlagIsIgnoredOffTrn2) {
  BackendOptions O;
  O.EnablePTCOM = true;
  BackendOptions WithFlag = O;
  WithFlag.RunSharedAllocationBeforePostSched = true;
  for (Target T : {Target::Trn1, Target::Generic}) {
    auto Plain = buildDefaultPipeline(O, T);
    auto Flagged = buildDefaultPipeline(WithFlag, T);
    ASSERT_TRUE(bool(Plain) && bool(Flagged));
    ASSERT_EQ(Plain->size(), Flagged->size());
    for (size_t I = 0; I < Plain->size(); ++I) {
      EXPECT_EQ((*Plain)[I].Name, (*Flagged)[I].Name);
      EXPECT_EQ((*Plain)[I].Active, (*Flagged)[I].Active);
    }
    EXPECT_EQ((*Flagged)[5].Note,
              "runs at 80; --run-shared-allocation-before-post-sched is only "
              "relevant for trn2");
  }
}

TEST(Pipeline, CreatesTheActivePassesInOrder) {
  BackendOptions O;
  O.EnablePTCOM = true;
  auto Passes = createPipelinePasses(build(O), O);
  ASSERT_TRUE(bool(Passes));
  std::vector<std::string> Names;
  for (const auto &P : *Passes)
    Names.push_back(P->name().str());
  EXPECT_EQ(Names,
            (std::vector<std::string>{"lnc_splitter", "lower_local_collectives",
                                      "insert_ptcom_flat", "lnc_verifier"}));
}

const char SwapProgram[] = R"({"version": 1, "modules": [{
  "name": "swap", "neuron_core_id": 0, "subgraph_id": 0,
  "pass_options": {"lnc_size": 2, "target": "trn2"},
  "memory_locations": [
    {"name": "mine", "tensor_id": 0, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 512},
    {"name": "peer", "tensor_id": 1, "kind": "SB", "dtype": "fp32", "partitions": 128, "bytes_per_partition": 512,
     "written_by_another_core": true}],
  "blocks": [{"name": "entry", "instructions": [
    {"name": "fill", "type": "Memset", "engine": "DVE", "value": 2,
     "outputs": [{"memloc": "mine", "partitions": 128, "pattern": [[1, 128]]}]},
    {"name": "swap", "type": "CollectiveCompute", "engine": "POOL", "kind": "SendRecv", "group": [0, 1], "local": true,
     "inputs": [{"memloc": "mine", "partitions": 128, "pattern": [[1, 128]]}],
     "outputs": [{"memloc": "peer", "partitions": 128, "pattern": [[1, 128]]}], "deps": ["fill"]},
    {"name": "ret", "type": "Branch", "engine": "SP", "kind": "Return"}]}]}]})";

TEST(Pipeline, TheSlotThatRunsSecondFindsNothing) {
  // Run both slots of each two-slot pass, as if the skipped ones were
  // active: the later slot reports no change and leaves the program alone.
  BackendOptions O;
  O.EnablePTCOM = true;
  std::vector<PipelineEntry> Entries = build(O);
  for (PipelineEntry &E : Entries)
    E.Active = true;
  auto Passes = createPipelinePasses(Entries, O);
  ASSERT_TRUE(bool(Passes));
  ASSERT_EQ(Passes->size(), 6u);

  Program P = llvm::cantFail(parseProgram(SwapProgram, "swap.json"));
  std::vector<bool> Changed;
  std::string AfterFirstSlots;
  for (size_t I = 0; I < Passes->size(); ++I) {
    llvm::Expected<bool> C = (*Passes)[I]->run(P);
    ASSERT_TRUE(bool(C)) << (*Passes)[I]->name().str() << ": "
                         << llvm::toString(C.takeError());
    Changed.push_back(*C);
    if (I == 2)
      AfterFirstSlots = formatProgram(P);
  }
  EXPECT_EQ(Changed,
            (std::vector<bool>{true, true, true, false, false, false}));
  EXPECT_EQ(formatProgram(P), AfterFirstSlots);
}

TEST(Pipeline, PrintsOrderNumbersAndWhySlotsAreSkipped) {
  BackendOptions O;
  O.EnablePTCOM = true;
  std::string S;
  llvm::raw_string_ostream OS(S);
  printPipeline(OS, build(O));
  EXPECT_EQ(OS.str(),
            "   8  lnc_splitter\n"
            "  80  lower_local_collectives\n"
            "  81  extend_shared_lifetimes   marker: neuronx-cc pass, not in "
            "loom\n"
            "  83  sync_shared_allocations   marker: neuronx-cc pass, not in "
            "loom\n"
            "  95  insert_ptcom_flat\n"
            " 111  lower_local_collectives   skipped: runs at 80 without "
            "--run-shared-allocation-before-post-sched\n"
            " 112  insert_ptcom_flat         skipped: runs at 95 without "
            "--run-shared-allocation-before-post-sched\n"
            " 113  post_sched                marker: neuronx-cc's post-RA "
            "scheduler, not in loom\n"
            " 114  lnc_verifier\n");
}

} // namespace
