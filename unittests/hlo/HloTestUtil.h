//===- HloTestUtil.h - The base of the HLO unit tests ---------------------===//
//
// What the HLO unit tests share instead of each writing its own: the source
// tree and its .hlo files, parsing (and verifying) a module, running a pass,
// finding an instruction by name, and TestModule, a module built by hand
// around two parameters.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_UNITTESTS_HLO_HLOTESTUTIL_H
#define LOOM_UNITTESTS_HLO_HLOTESTUTIL_H

#include "loom/hlo/ir/HloModule.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloPassInterface.h"
#include "loom/hlo/pass/HloVerifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace loom::hlo::testutil {

/// The source tree: LOOM_SOURCE_DIR, which unittests/CMakeLists.txt defines,
/// else found from this header's path (unittests/hlo/HloTestUtil.h in it),
/// which is relative to the build folder when the build compiles with
/// relative paths. The shared corpus, when present, is
/// SourceRoot() + "/../shared/corpus/hlo".
inline std::string SourceRoot() {
#ifdef LOOM_SOURCE_DIR
  return LOOM_SOURCE_DIR;
#else
  llvm::SmallString<256> root(__FILE__);
  llvm::sys::path::remove_filename(root); // unittests/hlo
  llvm::sys::path::remove_filename(root); // unittests
  llvm::sys::path::remove_filename(root); // the tree
  return std::string(root);
#endif
}

/// Every .hlo file under `dir`, sorted; empty when `dir` does not exist.
inline std::vector<std::string> HloFilesUnder(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".hlo")
      files.push_back(it->path());
  llvm::sort(files);
  return files;
}

/// The file's bytes; empty when it cannot be read.
inline std::string ReadFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// Parses `text`; a parse error is a test failure and nullptr.
inline std::unique_ptr<HloModule> Parse(llvm::StringRef text) {
  auto module = ParseHloModule(text);
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError()) << "\nwhile parsing:\n" << text.str();
    return nullptr;
  }
  return std::move(*module);
}

/// Parses and verifies `text`; an error of either is a test failure and
/// nullptr.
inline std::unique_ptr<HloModule> ParseAndVerify(llvm::StringRef text) {
  std::unique_ptr<HloModule> module = Parse(text);
  if (!module)
    return nullptr;
  if (llvm::Error err = VerifyHloModule(*module)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return nullptr;
  }
  return module;
}

/// Runs `pass` on `module` and returns whether it reported a change; an
/// error is a test failure (and false). With `remarks`, the pass's remarks
/// are collected there.
inline bool RunPass(HloPassInterface &pass, HloModule &module, std::string *remarks = nullptr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (remarks)
    pass.SetRemarkStream(&os);
  llvm::Expected<bool> changed = pass.Run(module);
  if (remarks) {
    pass.SetRemarkStream(nullptr);
    *remarks = os.str();
  }
  if (!changed) {
    ADD_FAILURE() << pass.name().str() << ": " << llvm::toString(changed.takeError());
    return false;
  }
  return *changed;
}

/// RunPass, then the module must verify.
inline bool RunPassAndVerify(HloPassInterface &pass, HloModule &module,
                             std::string *remarks = nullptr) {
  bool changed = RunPass(pass, module, remarks);
  if (llvm::Error err = VerifyHloModule(module))
    ADD_FAILURE() << "after " << pass.name().str() << ": " << llvm::toString(std::move(err));
  return changed;
}

/// The instruction named `name` in any computation; a test failure and
/// nullptr when there is none.
/// What a parse with HloParseOptions gives: the printed module or the
/// error's whole text, and how many pieces were joined. With
/// `with_users`, also every instruction's users in order, one line each.
struct Outcome {
  std::string text;
  std::string users;
  bool ok = false;
  size_t pieces = 0;
};

/// Parses `text` on `threads` threads with pieces of at least
/// `min_chunk_bytes` (one byte: a piece may start at every line).
inline Outcome ParseWith(const std::string &text, unsigned threads, size_t min_chunk_bytes,
                         bool with_users = false) {
  HloParseOptions options;
  options.threads = threads;
  options.min_chunk_bytes = min_chunk_bytes;
  Outcome out;
  options.pieces_joined = &out.pieces;
  auto module = ParseHloModuleOwned(text, "in.hlo", options);
  if (!module) {
    out.text = llvm::toString(module.takeError());
    return out;
  }
  out.ok = true;
  out.text = (*module)->ToString();
  if (with_users)
    for (const HloComputation *c : (*module)->computations())
      for (const HloInstruction *i : c->instructions()) {
        out.users += i->name().str() + ":";
        for (const HloInstruction *u : i->users())
          out.users += " " + u->name().str();
        out.users += "\n";
      }
  return out;
}

inline HloInstruction *Find(const HloModule &module, llvm::StringRef name) {
  for (HloComputation *comp : module.computations())
    if (HloInstruction *inst = comp->GetInstructionWithName(name))
      return inst;
  ADD_FAILURE() << "no instruction " << name.str();
  return nullptr;
}

inline Shape F32(std::initializer_list<int64_t> dims) { return Shape(PrimitiveType::F32, dims); }

/// A module `m` built by hand: an entry computation `main` with two
/// parameters `p0` and `p1` of f32[2], and helpers that add instructions of
/// that shape to it.
struct TestModule {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("m");
  HloComputation *comp = nullptr;
  HloInstruction *p0 = nullptr, *p1 = nullptr;

  TestModule() {
    comp = module->AddComputation(std::make_unique<HloComputation>("main"));
    module->set_entry_computation(comp);
    p0 = Param(0, "p0");
    p1 = Param(1, "p1");
  }
  HloInstruction *Param(int64_t n, const char *name) {
    auto p = HloInstruction::Create(HloOpcode::kParameter, F32({2}), {}, name);
    p->set_parameter_number(n);
    return comp->AddInstruction(std::move(p));
  }
  HloInstruction *Op(HloOpcode opcode, std::vector<HloInstruction *> operands,
                     const char *name = "") {
    return comp->AddInstruction(HloInstruction::Create(opcode, F32({2}), operands, name));
  }
  HloInstruction *Add(HloInstruction *a, HloInstruction *b) {
    return Op(HloOpcode::kAdd, {a, b});
  }
  /// Whether `inst` is still one of main's instructions.
  bool Has(const HloInstruction *inst) const {
    for (HloInstruction *i : comp->instructions())
      if (i == inst)
        return true;
    return false;
  }
  bool HasName(llvm::StringRef name) const { return comp->GetInstructionWithName(name); }
};

} // namespace loom::hlo::testutil

#endif
