//===- ChromeTrace.cpp - A simulated timeline as Chrome trace JSON --------===//
//
// The Trace Event Format (the document Google publishes with
// chrome://tracing): "M" metadata events name processes and threads, "X"
// complete events carry ts and dur in microseconds, and a flow is an "s"
// event and an "f" event with the same cat, name and id; "bp": "e" binds the
// "f" end to the slice enclosing its timestamp. llvm::json::OStream does the
// escaping, so any instruction name gives valid JSON.
//
//===----------------------------------------------------------------------===//

#include "ChromeTrace.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace loom::bir::sim {
namespace {

/// ns -> the file's microseconds; a time that is not a finite, non-negative
/// number (a bug upstream) is written as 0 rather than as invalid JSON.
double toMicros(double Ns) { return std::isfinite(Ns) && Ns > 0 ? Ns / 1000.0 : 0.0; }

std::string validUTF8(llvm::StringRef S) {
  return llvm::json::isUTF8(S) ? S.str() : llvm::json::fixUTF8(S);
}

void writeMetadata(llvm::json::OStream &J, llvm::StringRef What, unsigned Pid, unsigned Tid,
                   llvm::StringRef Key, const llvm::json::Value &V) {
  J.object([&] {
    J.attribute("name", What);
    J.attribute("ph", "M");
    J.attribute("pid", Pid);
    J.attribute("tid", Tid);
    J.attributeObject("args", [&] { J.attribute(Key, V); });
  });
}

void writeNames(llvm::json::OStream &J, llvm::StringRef Key,
                llvm::ArrayRef<std::string> Names) {
  J.attributeArray(Key, [&] {
    for (const std::string &N : Names)
      J.value(validUTF8(N));
  });
}

/// The slice's details, in a fixed key order; the collective only when
/// the instruction belongs to one.
void writeArgs(llvm::json::OStream &J, const SliceDetails &D) {
  J.attributeObject("args", [&] {
    J.attribute("opcode", validUTF8(D.Opcode));
    J.attribute("bytes_read", int64_t(D.BytesRead));
    J.attribute("bytes_written", int64_t(D.BytesWritten));
    writeNames(J, "reads", D.Reads);
    writeNames(J, "writes", D.Writes);
    if (!D.Collective.empty())
      J.attribute("collective", validUTF8(D.Collective));
  });
}

} // namespace

void writeChromeTrace(llvm::raw_ostream &OS, llvm::ArrayRef<TraceSlice> Slices,
                      llvm::ArrayRef<TraceFlow> Flows, unsigned NumCores,
                      unsigned NumDevices) {
  // Which (device, core, engine) tracks exist: every engine some event uses.
  bool Launch = NumDevices > 0;
  unsigned Devices = std::max(1u, NumDevices);
  unsigned Cores = NumCores;
  for (const TraceSlice &S : Slices) {
    Cores = std::max(Cores, S.Core + 1);
    Devices = std::max(Devices, S.Device + 1);
  }
  for (const TraceFlow &F : Flows) {
    Cores = std::max({Cores, F.FromCore + 1, F.ToCore + 1});
    Devices = std::max({Devices, F.FromDevice + 1, F.ToDevice + 1});
  }
  auto TrackIndex = [&](unsigned Device, unsigned Core, Engine E) {
    return (static_cast<size_t>(Device) * Cores + Core) * NumEngines +
           static_cast<unsigned>(E);
  };
  std::vector<bool> Used(static_cast<size_t>(Devices) * Cores * NumEngines, false);
  for (const TraceSlice &S : Slices)
    Used[TrackIndex(S.Device, S.Core, S.Eng)] = true;
  for (const TraceFlow &F : Flows) {
    Used[TrackIndex(F.FromDevice, F.FromCore, F.FromEng)] = true;
    Used[TrackIndex(F.ToDevice, F.ToCore, F.ToEng)] = true;
  }
  // A single program: a process per core, a thread per engine. A launch: a
  // process per device, a thread per core and engine.
  auto Pid = [&](unsigned Device, unsigned Core) { return Launch ? Device : Core; };
  auto Tid = [&](unsigned Core, Engine E) {
    return Launch ? Core * NumEngines + static_cast<unsigned>(E) : static_cast<unsigned>(E);
  };

  llvm::json::OStream J(OS);
  J.object([&] {
    J.attributeArray("traceEvents", [&] {
      for (unsigned D = 0; D < Devices; ++D) {
        if (Launch) {
          writeMetadata(J, "process_name", D, 0, "name", "device " + std::to_string(D));
          writeMetadata(J, "process_sort_index", D, 0, "sort_index", D);
        }
        for (unsigned C = 0; C < Cores; ++C) {
          if (!Launch) {
            writeMetadata(J, "process_name", C, 0, "name", "core " + std::to_string(C));
            writeMetadata(J, "process_sort_index", C, 0, "sort_index", C);
          }
          for (unsigned E = 0; E < NumEngines; ++E) {
            Engine Eng = static_cast<Engine>(E);
            if (!Used[TrackIndex(D, C, Eng)])
              continue;
            std::string Name = Launch ? "core " + std::to_string(C) + " " + enumName(Eng).str()
                                      : enumName(Eng).str();
            writeMetadata(J, "thread_name", Pid(D, C), Tid(C, Eng), "name", Name);
            writeMetadata(J, "thread_sort_index", Pid(D, C), Tid(C, Eng), "sort_index",
                          Tid(C, Eng));
          }
        }
      }
      for (const TraceSlice &S : Slices) {
        J.object([&] {
          J.attribute("name", validUTF8(S.Name));
          J.attribute("cat", "instruction");
          J.attribute("ph", "X");
          J.attribute("pid", Pid(S.Device, S.Core));
          J.attribute("tid", Tid(S.Core, S.Eng));
          J.attribute("ts", toMicros(S.StartNs));
          J.attribute("dur", toMicros(S.DurNs));
          if (!S.Details.Opcode.empty())
            writeArgs(J, S.Details);
        });
      }
      uint64_t Id = 0;
      for (const TraceFlow &F : Flows) {
        ++Id;
        std::string Name = validUTF8(F.Name);
        J.object([&] {
          J.attribute("name", Name);
          J.attribute("cat", "sync");
          J.attribute("ph", "s");
          J.attribute("id", Id);
          J.attribute("pid", Pid(F.FromDevice, F.FromCore));
          J.attribute("tid", Tid(F.FromCore, F.FromEng));
          J.attribute("ts", toMicros(F.FromNs));
        });
        J.object([&] {
          J.attribute("name", Name);
          J.attribute("cat", "sync");
          J.attribute("ph", "f");
          J.attribute("bp", "e");
          J.attribute("id", Id);
          J.attribute("pid", Pid(F.ToDevice, F.ToCore));
          J.attribute("tid", Tid(F.ToCore, F.ToEng));
          J.attribute("ts", toMicros(F.ToNs));
        });
      }
    });
    J.attribute("displayTimeUnit", "ns");
  });
  OS << "\n";
}

} // namespace loom::bir::sim
