#include "loom/bir/json/LaunchJson.h"

#include "ReadDocument.h"

#include "loom/bir/json/JsonDocument.h"
#include "loom/bir/json/JsonPrinter.h"
#include "loom/support/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <climits>

namespace loom::bir {

namespace {

constexpr unsigned LaunchJsonVersion = 1;

/// Reads a launch document; the first error is kept and every later read
/// returns a default, as in the program reader.
class LaunchReader {
public:
  llvm::Expected<Launch> read(JsonRef Root);

private:
  bool failed() const { return !Error.empty(); }
  void fail(const std::string &Path, const llvm::Twine &Msg) {
    if (Error.empty())
      Error = Path + ": " + Msg.str();
  }
  bool expectObject(JsonRef V, const std::string &Path,
                    llvm::ArrayRef<llvm::StringRef> Keys);
  JsonRef field(JsonRef O, const std::string &Path, llvm::StringRef Key,
                bool Required = true);
  uint64_t getUnsigned(JsonRef O, const std::string &Path, llvm::StringRef Key,
                       uint64_t Max);
  std::string getString(JsonRef O, const std::string &Path,
                        llvm::StringRef Key);
  std::vector<unsigned> getIndex(JsonRef O, const std::string &Path);
  void forEach(JsonRef O, const std::string &Path, llvm::StringRef Key,
               llvm::function_ref<void(JsonRef, const std::string &)> F);
  void readDevice(JsonRef V, const std::string &Path, LaunchDevice &D);
  LaunchBinding readBinding(JsonRef V, const std::string &Path,
                            bool IsParameter);

  std::string Error;
};

bool LaunchReader::expectObject(JsonRef V, const std::string &Path,
                                llvm::ArrayRef<llvm::StringRef> Keys) {
  if (failed())
    return false;
  if (!V.isObject()) {
    fail(Path, "expected an object");
    return false;
  }
  std::optional<llvm::StringRef> Unknown;
  V.forEachMember([&](llvm::StringRef Key, JsonRef) {
    if (!llvm::is_contained(Keys, Key) && (!Unknown || Key < *Unknown))
      Unknown = Key;
  });
  if (Unknown) {
    fail(Path + "." + Unknown->str(),
         "unknown field; expected one of " + llvm::join(Keys, ", "));
    return false;
  }
  return true;
}

JsonRef LaunchReader::field(JsonRef O, const std::string &Path,
                            llvm::StringRef Key, bool Required) {
  if (failed())
    return JsonRef();
  JsonRef V = O.get(Key);
  if (!V && Required)
    fail(Path, "missing field '" + Key + "'");
  return V;
}

uint64_t LaunchReader::getUnsigned(JsonRef O, const std::string &Path,
                                   llvm::StringRef Key, uint64_t Max) {
  JsonRef V = field(O, Path, Key);
  if (!V)
    return 0;
  std::optional<uint64_t> N = V.getAsUINT64();
  if (!N || *N > Max) {
    fail(Path + "." + Key.str(), "expected an integer from 0 to " +
                                     llvm::Twine(Max));
    return 0;
  }
  return *N;
}

std::string LaunchReader::getString(JsonRef O, const std::string &Path,
                                    llvm::StringRef Key) {
  JsonRef V = field(O, Path, Key);
  if (!V)
    return "";
  std::optional<llvm::StringRef> S = V.getAsString();
  if (!S) {
    fail(Path + "." + Key.str(), "expected a string");
    return "";
  }
  return S->str();
}

void LaunchReader::forEach(
    JsonRef O, const std::string &Path, llvm::StringRef Key,
    llvm::function_ref<void(JsonRef, const std::string &)> F) {
  JsonRef A = field(O, Path, Key);
  if (!A)
    return;
  std::string APath = Path + "." + Key.str();
  if (!A.isArray()) {
    fail(APath, "expected an array");
    return;
  }
  size_t I = 0;
  for (JsonRef E = A.firstElement(); E && !failed(); E = E.next(), ++I)
    F(E, APath + "[" + std::to_string(I) + "]");
}

std::vector<unsigned> LaunchReader::getIndex(JsonRef O,
                                             const std::string &Path) {
  std::vector<unsigned> Index;
  forEach(O, Path, "index", [&](JsonRef V, const std::string &EPath) {
    std::optional<uint64_t> N = V.getAsUINT64();
    if (!N || *N > UINT_MAX)
      fail(EPath, "expected an integer from 0 to " + llvm::Twine(UINT_MAX));
    else
      Index.push_back(static_cast<unsigned>(*N));
  });
  return Index;
}

LaunchBinding LaunchReader::readBinding(JsonRef V, const std::string &Path,
                                        bool IsParameter) {
  LaunchBinding B;
  if (IsParameter) {
    if (!expectObject(V, Path,
                      {"index", "memloc", "name", "parameter", "shape",
                       "subgraph"}))
      return B;
    B.Parameter = getUnsigned(V, Path, "parameter", UINT_MAX);
    B.Name = getString(V, Path, "name");
  } else if (!expectObject(V, Path, {"index", "memloc", "shape", "subgraph"})) {
    return B;
  }
  B.Index = getIndex(V, Path);
  B.Shape = getString(V, Path, "shape");
  B.Subgraph = getUnsigned(V, Path, "subgraph", UINT_MAX);
  B.Memloc = getString(V, Path, "memloc");
  return B;
}

void LaunchReader::readDevice(JsonRef V, const std::string &Path,
                              LaunchDevice &D) {
  if (!expectObject(V, Path,
                    {"device", "modules", "outputs", "parameters", "partition",
                     "replica"}))
    return;
  D.Device = getUnsigned(V, Path, "device", UINT_MAX);
  D.Replica = getUnsigned(V, Path, "replica", UINT_MAX);
  D.Partition = getUnsigned(V, Path, "partition", UINT_MAX);
  forEach(V, Path, "parameters", [&](JsonRef B, const std::string &BPath) {
    D.Parameters.push_back(readBinding(B, BPath, true));
  });
  forEach(V, Path, "outputs", [&](JsonRef B, const std::string &BPath) {
    D.Outputs.push_back(readBinding(B, BPath, false));
  });
  forEach(V, Path, "modules", [&](JsonRef M, const std::string &MPath) {
    llvm::Expected<std::unique_ptr<Module>> Mod = readEmbeddedModule(M, MPath);
    if (!Mod) {
      // The module reader's message already starts with its path.
      Error = llvm::toString(Mod.takeError());
      return;
    }
    D.Modules.push_back(std::move(*Mod));
  });
}

llvm::Expected<Launch> LaunchReader::read(JsonRef Root) {
  Launch L;
  if (expectObject(Root, "$", {"launch", "version"})) {
    uint64_t Version = getUnsigned(Root, "$", "version", UINT_MAX);
    if (!failed() && Version != LaunchJsonVersion)
      fail("$.version", "version " + llvm::Twine(Version) + " is not " +
                            llvm::Twine(LaunchJsonVersion) +
                            ", the one loom reads");
    JsonRef LV = field(Root, "$", "launch");
    const std::string P = "$.launch";
    if (LV && expectObject(LV, P,
                           {"devices", "hlo_module", "lnc_size",
                            "num_partitions", "replica_count", "target"})) {
      L.HloModule = getString(LV, P, "hlo_module");
      L.ReplicaCount = getUnsigned(LV, P, "replica_count", UINT_MAX);
      L.NumPartitions = getUnsigned(LV, P, "num_partitions", UINT_MAX);
      L.LncSize = getUnsigned(LV, P, "lnc_size", UINT_MAX);
      std::string T = getString(LV, P, "target");
      if (!failed()) {
        std::optional<Target> Arch = parseEnum<Target>(T);
        if (!Arch)
          fail(P + ".target", "unknown value '" + T + "'; expected one of " +
                                  llvm::join(enumNames<Target>(), ", "));
        else
          L.Arch = *Arch;
      }
      forEach(LV, P, "devices", [&](JsonRef D, const std::string &DPath) {
        L.Devices.emplace_back();
        readDevice(D, DPath, L.Devices.back());
      });
    }
  }
  if (failed())
    return makeError(Error);
  return L;
}

/// Skips whitespace from I; returns the index of the next other byte.
size_t skipSpace(llvm::StringRef Text, size_t I) {
  while (I < Text.size() && llvm::isSpace(Text[I]))
    ++I;
  return I;
}

template <typename Out> void writeBinding(Out &W, const LaunchBinding &B,
                                          bool IsParameter) {
  W.object([&] {
    W.key("index");
    W.array([&] {
      for (unsigned I : B.Index)
        W.unsignedInteger(I);
    });
    W.key("memloc");
    W.string(B.Memloc);
    if (IsParameter) {
      W.key("name");
      W.string(B.Name);
      W.key("parameter");
      W.unsignedInteger(B.Parameter);
    }
    W.key("shape");
    W.string(B.Shape);
    W.key("subgraph");
    W.unsignedInteger(B.Subgraph);
  });
}

} // namespace

DocumentKind getDocumentKind(llvm::StringRef Text) {
  // Walks the top-level object only: each top-level key is compared, the
  // values are skipped by bracket depth. A saved document has its one
  // distinguishing key first, so this reads a few bytes.
  size_t I = skipSpace(Text, 0);
  if (I >= Text.size() || Text[I] != '{')
    return DocumentKind::Unknown;
  unsigned Depth = 0;
  for (; I < Text.size(); ++I) {
    char C = Text[I];
    if (C == '"') {
      size_t Start = ++I;
      while (I < Text.size() && Text[I] != '"')
        I += Text[I] == '\\' ? 2 : 1;
      if (I >= Text.size())
        return DocumentKind::Unknown;
      if (Depth == 1) {
        size_t After = skipSpace(Text, I + 1);
        if (After < Text.size() && Text[After] == ':') {
          llvm::StringRef Key = Text.slice(Start, I);
          if (Key == "launch")
            return DocumentKind::Launch;
          if (Key == "modules")
            return DocumentKind::Program;
        }
      }
    } else if (C == '{' || C == '[') {
      ++Depth;
    } else if (C == '}' || C == ']') {
      if (--Depth == 0)
        return DocumentKind::Unknown;
    }
  }
  return DocumentKind::Unknown;
}

llvm::Expected<Launch> parseLaunch(llvm::StringRef Text,
                                   llvm::StringRef FileName,
                                   const LoadOptions &Opts) {
  llvm::Expected<Launch> L = readDocument<Launch>(
      Text, FileName, [](JsonRef Root) { return LaunchReader().read(Root); });
  if (!L)
    return L.takeError();
  if (Opts.LncSize)
    L->LncSize = *Opts.LncSize;
  if (Opts.Arch)
    L->Arch = *Opts.Arch;
  for (LaunchDevice &D : L->Devices)
    applyLoadOptions(D.Modules, Opts);
  if (llvm::Error E = verifyLaunch(*L))
    return prefixFileName(FileName, std::move(E));
  return L;
}

void writeLaunch(llvm::raw_ostream &OS, const Launch &L) {
  {
    JsonPrinter W(OS, JsonPrinter::Layout::Saved);
    W.object([&] {
      W.key("launch");
      W.object([&] {
        W.key("devices");
        W.array([&] {
          for (const LaunchDevice &D : L.Devices)
            W.object([&] {
              W.key("device");
              W.unsignedInteger(D.Device);
              W.key("modules");
              W.array([&] {
                for (const auto &M : D.Modules)
                  writeEmbeddedModule(W, *M);
              });
              W.key("outputs");
              W.array([&] {
                for (const LaunchBinding &B : D.Outputs)
                  writeBinding(W, B, false);
              });
              W.key("parameters");
              W.array([&] {
                for (const LaunchBinding &B : D.Parameters)
                  writeBinding(W, B, true);
              });
              W.key("partition");
              W.unsignedInteger(D.Partition);
              W.key("replica");
              W.unsignedInteger(D.Replica);
            });
        });
        W.key("hlo_module");
        W.string(L.HloModule);
        W.key("lnc_size");
        W.unsignedInteger(L.LncSize);
        W.key("num_partitions");
        W.unsignedInteger(L.NumPartitions);
        W.key("replica_count");
        W.unsignedInteger(L.ReplicaCount);
        W.key("target");
        W.string(enumName(L.Arch));
      });
      W.key("version");
      W.unsignedInteger(LaunchJsonVersion);
    });
  }
  OS << '\n';
}

std::string formatLaunch(const Launch &L) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  writeLaunch(OS, L);
  OS.flush();
  return S;
}

} // namespace loom::bir
