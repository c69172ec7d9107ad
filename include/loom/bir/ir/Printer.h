//===- Printer.h - The text form of BIR -------------------------*- C++ -*-===//
//
// A compact, line-oriented rendering for people and FileCheck tests: one
// line per module header, memory location, block and instruction. It is not
// parsed back; JSON is the interchange form. docs/bir.md describes it.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_BIR_IR_PRINTER_H
#define LOOM_BIR_IR_PRINTER_H

#include "loom/bir/ir/Module.h"

#include "llvm/Support/raw_ostream.h"

namespace loom::bir {

void printModule(llvm::raw_ostream &OS, const Module &M);
/// Modules separated by an empty line.
void printProgram(llvm::raw_ostream &OS, const Program &P);

} // namespace loom::bir

#endif
