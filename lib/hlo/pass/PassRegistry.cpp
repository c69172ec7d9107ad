#include "loom/hlo/pass/PassRegistry.h"

#include "loom/support/Error.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>

namespace loom::hlo {

namespace {

// A function-local static: built on first use, so registration order
// across translation units does not matter. std::map keeps names sorted.
std::map<std::string, HloPassFactory, std::less<>> &Registry() {
  static std::map<std::string, HloPassFactory, std::less<>> registry;
  return registry;
}

} // namespace

void RegisterHloPass(llvm::StringRef name, HloPassFactory factory) {
  Registry()[name.str()] = std::move(factory);
}

llvm::Expected<std::unique_ptr<HloPassInterface>> CreateHloPass(llvm::StringRef name) {
  auto it = Registry().find(name);
  // Pass names are spelled with underscores, as the Neuron passes are; the
  // hyphenated spelling loom's own passes had (`hlo-dce`) still names them.
  std::string underscored = name.str();
  std::replace(underscored.begin(), underscored.end(), '-', '_');
  if (it == Registry().end())
    it = Registry().find(underscored);
  if (it == Registry().end()) {
    std::vector<std::string> names = RegisteredHloPassNames();
    return makeError("unknown pass '" + name + "'; valid passes: " +
                     (names.empty() ? std::string("(none registered)") : llvm::join(names, ", ")));
  }
  std::unique_ptr<HloPassInterface> pass = it->second();
  if (!pass)
    return makeError("the factory of pass '" + name + "' made no pass");
  return pass;
}

std::vector<std::string> RegisteredHloPassNames() {
  std::vector<std::string> names;
  for (const auto &entry : Registry())
    names.push_back(entry.first);
  return names;
}

} // namespace loom::hlo
