//===- HloProtoFuzzer.cpp - HloModuleProto bytes: read, write, read again --===//
//
// Any bytes either fail to read with an error or give a module
// (docs/hlo-proto.md). A module read from a proto writes to bytes that read
// again, and those give the same bytes and the same text (proto -> proto is
// byte-identical). A module that also verifies prints to text that parses.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/hlo/pass/HloVerifier.h"
#include "loom/hlo/proto/HloProto.h"

using namespace loom;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto M = hlo::ParseHloModuleProto(fuzz::asText(Data, Size), "fuzz.pb");
  if (!M) {
    fuzz::ignore(M.takeError());
    return 0;
  }
  std::string Bytes = hlo::SerializeHloModuleProto(**M);
  auto Again = hlo::ParseHloModuleProto(Bytes, "written.pb");
  if (!Again)
    fuzz::fail("a module read from a proto wrote bytes that do not read back",
               llvm::toString(Again.takeError()));
  if (hlo::SerializeHloModuleProto(**Again) != Bytes)
    fuzz::fail("writing the module read back changed the bytes");
  std::string Text = (*M)->ToString();
  if ((*Again)->ToString() != Text)
    fuzz::fail("the module read back prints differently",
               "--- first:\n" + Text + "--- second:\n" + (*Again)->ToString());
  if (llvm::Error E = hlo::VerifyHloModule(**M)) {
    fuzz::ignore(std::move(E));
    return 0;
  }
  auto Parsed = hlo::ParseHloModule(Text, "printed.hlo");
  if (!Parsed)
    fuzz::fail("a verified module read from a proto printed text that does not parse",
               llvm::toString(Parsed.takeError()) + "\n--- printed:\n" + Text);
  return 0;
}
