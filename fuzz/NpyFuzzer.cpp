//===- NpyFuzzer.cpp - .npy files: the container and hlo-run's reader -----===//
//
// loom::parseNpy either fails with an error or gives an array that
// serializeNpy writes back as a file that parses to the same array. The same
// bytes then go through hlo-run's path (hlo::ParseNpy, NpyToLiteral against
// a shape, LiteralToNpy, Literal::ToString): the input's first line is the
// parameter's shape (`f32[2,3]`), the rest is the file.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "loom/hlo/eval/NpyLiteral.h"
#include "loom/hlo/parser/HloParser.h"
#include "loom/support/Npy.h"

using namespace loom;

static void checkContainer(llvm::StringRef Bytes) {
  auto A = parseNpy(Bytes);
  if (!A) {
    fuzz::ignore(A.takeError());
    return;
  }
  std::string Written = serializeNpy(*A);
  auto B = parseNpy(Written);
  if (!B)
    fuzz::fail("serializeNpy wrote a file parseNpy refuses",
               llvm::toString(B.takeError()));
  if (B->Descr != A->Descr || B->Shape != A->Shape || B->Data != A->Data)
    fuzz::fail("an array changed through serializeNpy and parseNpy");
}

static void checkHloReader(llvm::StringRef Text) {
  auto [ShapeText, Bytes] = Text.split('\n');
  auto S = hlo::ParseShape(ShapeText);
  if (!S) {
    fuzz::ignore(S.takeError());
    return;
  }
  auto A = hlo::ParseNpy(Bytes);
  if (!A) {
    fuzz::ignore(A.takeError());
    return;
  }
  auto L = hlo::NpyToLiteral(*A, *S);
  if (!L) {
    fuzz::ignore(L.takeError());
    return;
  }
  (void)L->ToString(16);
  auto Back = hlo::LiteralToNpy(*L);
  if (!Back) {
    fuzz::ignore(Back.takeError());
    return;
  }
  auto Again = hlo::ParseNpy(hlo::SerializeNpy(*Back));
  if (!Again)
    fuzz::fail("hlo-run writes a .npy file it cannot read back",
               llvm::toString(Again.takeError()));
  auto L2 = hlo::NpyToLiteral(*Again, *S);
  if (!L2)
    fuzz::fail("hlo-run cannot read back the .npy it wrote for " +
                   S->ToString(),
               llvm::toString(L2.takeError()));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text = fuzz::asText(Data, Size);
  checkContainer(Text);
  checkHloReader(Text);
  return 0;
}
