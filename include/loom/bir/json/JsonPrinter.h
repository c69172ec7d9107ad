//===- JsonPrinter.h - JSON text written as it is produced ------*- C++ -*-===//
//
// Writes a JSON value from calls (a container's contents come from a
// callback), with no tree in between, in one of two layouts:
//
// - compact: llvm::json's form, {"k":v,...} and [v,...];
// - saved (docs/bir.md, "Saving"): a container that fits between its first
//   column and column 120 in compact form is written so; otherwise each
//   element or member goes on its own line, indented by 2 more than the
//   container's line, and the closing bracket on a line of its own.
//
// To know whether a container fits, the saved layout runs its callback once
// in compact form, stops writing as soon as the line is full and then takes
// that text back; a callback may therefore run twice and must write the
// same thing each time. Each container is measured once, by at most a line
// of text, so the cost is linear in the output whatever the depth.
//
// Scalars are spelled as llvm::json::OStream spells them: integers in
// decimal, doubles with %.17g, strings with its escapes (invalid UTF-8 is
// replaced as llvm::json::Value does).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_JSON_JSONPRINTER_H
#define LOOM_BIR_JSON_JSONPRINTER_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace loom::bir {

class JsonPrinter {
public:
  enum class Layout { Compact, Saved };

  /// Writes to OS, which must be at the start of a line for Layout::Saved.
  JsonPrinter(llvm::raw_ostream &OS, Layout L);
  ~JsonPrinter();

  void integer(int64_t V);
  void unsignedInteger(uint64_t V);
  void real(double V);
  void boolean(bool V);
  void string(llvm::StringRef S);
  void null();

  /// Inside an object: the key of the next value. The saved form has the
  /// keys of each object in sorted order; the caller writes them so.
  void key(llvm::StringRef K);

  /// A container whose contents Body writes by calls to this printer.
  void array(llvm::function_ref<void()> Body);
  void object(llvm::function_ref<void()> Body);

  /// Writes what is buffered to the stream.
  void flush();

private:
  struct Level {
    bool IsObject;
    bool Expanded;
    bool First = true;
    /// The indentation of the container's own line.
    unsigned Indent = 0;
  };

  void container(bool IsObject, llvm::function_ref<void()> Body);
  void compactContainer(bool IsObject, llvm::function_ref<void()> Body);
  /// The separator and indentation before a value in an array.
  void beginValue();
  /// True while a fit check has already filled its line: nothing more is
  /// written until it ends.
  bool full() const { return Measuring && Out.size() > MeasureEnd; }
  void newLine(unsigned Indent);

  llvm::raw_ostream &OS;
  Layout L;
  /// Buffered output, written to OS in large pieces, and where its current
  /// line starts (the saved layout writes to OS only at a line start).
  std::string Out;
  size_t LineStart = 0;
  /// A fit check in progress fails once Out is longer than MeasureEnd.
  bool Measuring = false;
  size_t MeasureEnd = 0;
  llvm::SmallVector<Level, 16> Stack;
};

} // namespace loom::bir

#endif
