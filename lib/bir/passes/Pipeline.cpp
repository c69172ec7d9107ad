//===- Pipeline.cpp - The backend pipeline and its order numbers ----------===//
//
// The whole pipeline is built in buildDefaultPipeline, top to bottom in
// order-number order, so that the order of the backend reads in one place.
// The order numbers are neuronx-cc 2.24's (docs/backend-pipeline.md).
//
//===----------------------------------------------------------------------===//

#include "loom/bir/passes/Pipeline.h"


#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace loom::bir {

namespace {

constexpr const char *SlotFlag = "--run-shared-allocation-before-post-sched";

} // namespace

llvm::Expected<std::vector<PipelineEntry>>
buildDefaultPipeline(const BackendOptions &Opts, Target T) {
  std::vector<PipelineEntry> P;
  auto Pass = [&](unsigned Order, llvm::StringRef Name, bool Active,
                  llvm::StringRef WhySkipped) {
    P.push_back({Order, Name.str(), PipelineEntry::Kind::Pass, Active,
                 Active ? "" : WhySkipped.str()});
  };
  auto Marker = [&](unsigned Order, llvm::StringRef Name,
                    llvm::StringRef What) {
    P.push_back({Order, Name.str(), PipelineEntry::Kind::Marker, true,
                 What.str()});
  };
  // The collective lowering and its completions run either in the default
  // slots (80, 95) or, on trn2 with the flag, just before post_sched (111,
  // 112). Both pairs are listed; the unused one is skipped. Were it run, it
  // would find nothing left to do: lower_local_collectives removes the
  // collectives it lowers, and insert_ptcom_flat finds its completions.
  // The flag is "only relevant for trn2" (its help text): on trn1 and the
  // generic target it is accepted and ignored, and lower_local_collectives
  // says so in a remark.
  bool UseSlotsBeforePostSched =
      Opts.RunSharedAllocationBeforePostSched && T == Target::Trn2;
  std::string Ignored =
      Opts.RunSharedAllocationBeforePostSched
          ? (llvm::Twine("; ") + SlotFlag + " is only relevant for trn2").str()
          : std::string();
  std::string InLateSlot = (llvm::Twine("runs at 111 with ") + SlotFlag).str();
  std::string InDefaultSlot =
      (llvm::Twine("runs at 80 without ") + SlotFlag).str();
  std::string PTCOMInLateSlot = (llvm::Twine("runs at 112 with ") + SlotFlag).str();
  std::string PTCOMInDefaultSlot =
      (llvm::Twine("runs at 95 without ") + SlotFlag).str();
  if (!Ignored.empty() && !UseSlotsBeforePostSched) {
    InDefaultSlot = "runs at 80" + Ignored;
    PTCOMInDefaultSlot = "runs at 95" + Ignored;
  }

  // One module per physical core of the logical core.
  Pass(8, "lnc_splitter", true, "");

  // Default phase: local collectives become copies and barriers, then the
  // shared-memory passes, then the completions.
  Pass(80, "lower_local_collectives", !UseSlotsBeforePostSched, InLateSlot);
  Marker(81, "extend_shared_lifetimes", "neuronx-cc pass, not in loom");
  Marker(83, "sync_shared_allocations", "neuronx-cc pass, not in loom");
  if (Opts.EnablePTCOM)
    Pass(95, "insert_ptcom_flat", !UseSlotsBeforePostSched, PTCOMInLateSlot);

  // Trn2 phase before post_sched, so that the post-RA scheduler sees the
  // real cross-core traffic.
  Pass(111, "lower_local_collectives", UseSlotsBeforePostSched, InDefaultSlot);
  if (Opts.EnablePTCOM)
    Pass(112, "insert_ptcom_flat", UseSlotsBeforePostSched,
         PTCOMInDefaultSlot);
  Marker(113, "post_sched", "neuronx-cc's post-RA scheduler, not in loom");

  // Last, so that it checks what the whole pipeline produced. The
  // production number is not known; 114 is loom's choice
  // (docs/lnc-verifier.md).
  Pass(114, "lnc_verifier", true, "");
  return P;
}

llvm::Expected<std::vector<std::unique_ptr<BirPass>>>
createPipelinePasses(llvm::ArrayRef<PipelineEntry> Pipeline,
                     const BackendOptions &Opts) {
  std::vector<std::unique_ptr<BirPass>> Passes;
  for (const PipelineEntry &E : Pipeline) {
    if (E.EntryKind != PipelineEntry::Kind::Pass || !E.Active)
      continue;
    llvm::Expected<std::unique_ptr<BirPass>> P = createPass(E.Name, Opts);
    if (!P)
      return P.takeError();
    Passes.push_back(std::move(*P));
  }
  return Passes;
}

void printPipeline(llvm::raw_ostream &OS,
                   llvm::ArrayRef<PipelineEntry> Pipeline) {
  for (const PipelineEntry &E : Pipeline) {
    OS << llvm::format("%4u  ", E.Order);
    if (E.EntryKind == PipelineEntry::Kind::Marker)
      OS << llvm::left_justify(E.Name, 24) << "  marker: " << E.Note;
    else if (!E.Active)
      OS << llvm::left_justify(E.Name, 24) << "  skipped: " << E.Note;
    else
      OS << E.Name;
    OS << "\n";
  }
}

} // namespace loom::bir
