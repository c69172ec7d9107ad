#include "loom/bir/passes/Pass.h"

#include "loom/bir/passes/InsertPTCOMFlat.h"
#include "loom/bir/passes/LncSplitter.h"
#include "loom/bir/passes/LncVerifier.h"
#include "loom/bir/passes/LowerLocalCollectives.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <type_traits>

namespace loom::bir {

namespace {

struct PassEntry {
  llvm::StringRef Name;
  std::unique_ptr<BirPass> (*Create)(const BackendOptions &);
};

template <typename T>
std::unique_ptr<BirPass> create(const BackendOptions &Opts) {
  if constexpr (std::is_constructible_v<T, const BackendOptions &>)
    return std::make_unique<T>(Opts);
  else
    return std::make_unique<T>();
}

// A new pass is registered by adding its line here.
const PassEntry Registry[] = {
    {"lnc_splitter", create<LncSplitter>},
    {"lower_local_collectives", create<LowerLocalCollectives>},
    {"insert_ptcom_flat", create<InsertPTCOMFlat>},
    {"lnc_verifier", create<LncVerifier>},
};

} // namespace

std::vector<llvm::StringRef> getPassNames() {
  std::vector<llvm::StringRef> Names;
  for (const PassEntry &E : Registry)
    Names.push_back(E.Name);
  llvm::sort(Names);
  return Names;
}

llvm::Expected<std::unique_ptr<BirPass>>
createPass(llvm::StringRef Name, const BackendOptions &Opts) {
  for (const PassEntry &E : Registry)
    if (E.Name == Name)
      return E.Create(Opts);
  return makeError("unknown pass '" + Name +
                   "'; valid passes: " + llvm::join(getPassNames(), ", "));
}

} // namespace loom::bir
