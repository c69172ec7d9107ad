#include "loom/bir/analysis/BlockDifference.h"

#include "llvm/Support/Casting.h"

namespace loom::bir::analysis {

const InstBranch *getTerminator(const BasicBlock &BB) {
  if (BB.empty())
    return nullptr;
  return llvm::dyn_cast<InstBranch>(std::prev(BB.end())->get());
}

std::optional<std::string> describeBlockDifference(const BasicBlock &X,
                                                   const BasicBlock &Y) {
  std::string Y0 = "'" + Y.getName().str() + "'";
  if (X.getName() != Y.getName())
    return "block '" + X.getName().str() + "' stands where the other core has " +
           Y0;
  const InstBranch *TX = getTerminator(X), *TY = getTerminator(Y);
  if (!TX || !TY)
    return "block '" + X.getName().str() + "' does not end with a Branch";
  if (TX->getKind() != TY->getKind())
    return "block '" + X.getName().str() + "' ends with a " +
           enumName(TX->getKind()).str() + " branch, the other core's with a " +
           enumName(TY->getKind()).str();
  if (TX->getTripCount() != TY->getTripCount())
    return "block '" + X.getName().str() + "' loops " +
           std::to_string(TX->getTripCount()) + " time(s), the other core's " +
           std::to_string(TY->getTripCount());
  bool Same = X.successors().size() == Y.successors().size();
  for (size_t K = 0; Same && K < X.successors().size(); ++K)
    Same = X.successors()[K]->getName() == Y.successors()[K]->getName();
  if (!Same) {
    auto List = [](const BasicBlock &BB) {
      std::string S;
      for (const BasicBlock *Succ : BB.successors())
        S += (S.empty() ? "'" : ", '") + Succ->getName().str() + "'";
      return S.empty() ? std::string("none") : S;
    };
    return "block '" + X.getName().str() + "' goes to " + List(X) +
           ", the other core's to " + List(Y);
  }
  return std::nullopt;
}

} // namespace loom::bir::analysis
