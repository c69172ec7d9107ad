#include "loom/bir/json/JsonPrinter.h"

#include "llvm/Support/JSON.h"

#include <cassert>
#include <charconv>
#include <cstdio>

namespace loom::bir {

namespace {

constexpr size_t LineWidth = 120;
/// Out is handed to the stream when it grows past this.
constexpr size_t FlushSize = 1 << 20;

void appendInteger(std::string &S, int64_t V) {
  char Buf[24];
  S.append(Buf, std::to_chars(Buf, Buf + sizeof(Buf), V).ptr);
}

void appendUnsigned(std::string &S, uint64_t V) {
  char Buf[24];
  S.append(Buf, std::to_chars(Buf, Buf + sizeof(Buf), V).ptr);
}

/// Whether S needs more than quotes: an escape, or a check of its UTF-8.
bool needsCare(llvm::StringRef S) {
  for (unsigned char C : S)
    if (C < 0x20 || C == '"' || C == '\\' || C >= 0x80)
      return true;
  return false;
}

/// llvm::json's escapes: \" and \\, \t \n \r, \u00XX for the other
/// control characters; everything else as is, after invalid UTF-8 is
/// replaced as llvm::json::Value does.
void appendQuoted(std::string &S, llvm::StringRef Text) {
  S += '"';
  if (!needsCare(Text)) {
    S.append(Text.data(), Text.size());
    S += '"';
    return;
  }
  std::string Fixed;
  if (!llvm::json::isUTF8(Text)) {
    Fixed = llvm::json::fixUTF8(Text);
    Text = Fixed;
  }
  for (unsigned char C : Text) {
    if (C >= 0x20 && C != '"' && C != '\\') {
      S += static_cast<char>(C);
      continue;
    }
    S += '\\';
    switch (C) {
    case '"':
    case '\\':
      S += static_cast<char>(C);
      break;
    case '\t':
      S += 't';
      break;
    case '\n':
      S += 'n';
      break;
    case '\r':
      S += 'r';
      break;
    default: {
      const char Hex[] = "0123456789abcdef";
      S += "u00";
      S += Hex[C >> 4];
      S += Hex[C & 15];
    }
    }
  }
  S += '"';
}

} // namespace

JsonPrinter::JsonPrinter(llvm::raw_ostream &OS, Layout L) : OS(OS), L(L) {}

JsonPrinter::~JsonPrinter() { flush(); }

void JsonPrinter::flush() {
  assert(!Measuring && "flush during a fit check");
  OS << Out;
  Out.clear();
  LineStart = 0;
}

void JsonPrinter::newLine(unsigned Indent) {
  if (Out.size() > FlushSize)
    flush();
  Out += '\n';
  LineStart = Out.size();
  Out.append(Indent, ' ');
}

void JsonPrinter::beginValue() {
  if (Stack.empty() || Stack.back().IsObject)
    return; // The key wrote what goes before the value.
  Level &Top = Stack.back();
  if (Top.Expanded) {
    if (!Top.First)
      Out += ',';
    newLine(Top.Indent + 2);
  } else if (!Top.First) {
    Out += ',';
  }
  Top.First = false;
}

void JsonPrinter::key(llvm::StringRef K) {
  if (full())
    return;
  assert(!Stack.empty() && Stack.back().IsObject && "a key outside an object");
  Level &Top = Stack.back();
  if (!Top.First)
    Out += ',';
  if (Top.Expanded)
    newLine(Top.Indent + 2);
  appendQuoted(Out, K);
  Out += Top.Expanded ? ": " : ":";
  Top.First = false;
}

void JsonPrinter::integer(int64_t V) {
  if (full())
    return;
  beginValue();
  appendInteger(Out, V);
}

void JsonPrinter::unsignedInteger(uint64_t V) {
  if (full())
    return;
  beginValue();
  appendUnsigned(Out, V);
}

void JsonPrinter::real(double V) {
  if (full())
    return;
  beginValue();
  char Buf[40];
  int N = std::snprintf(Buf, sizeof(Buf), "%.17g", V);
  Out.append(Buf, N);
}

void JsonPrinter::boolean(bool V) {
  if (full())
    return;
  beginValue();
  Out += V ? "true" : "false";
}

void JsonPrinter::null() {
  if (full())
    return;
  beginValue();
  Out += "null";
}

void JsonPrinter::string(llvm::StringRef S) {
  if (full())
    return;
  beginValue();
  appendQuoted(Out, S);
}

void JsonPrinter::array(llvm::function_ref<void()> Body) {
  container(false, Body);
}

void JsonPrinter::object(llvm::function_ref<void()> Body) {
  container(true, Body);
}

void JsonPrinter::compactContainer(bool IsObject,
                                   llvm::function_ref<void()> Body) {
  Out += IsObject ? '{' : '[';
  Stack.push_back({IsObject, /*Expanded=*/false, true, 0});
  Body();
  Stack.pop_back();
  if (!full())
    Out += IsObject ? '}' : ']';
}

void JsonPrinter::container(bool IsObject, llvm::function_ref<void()> Body) {
  if (full())
    return;
  beginValue();
  if (L == Layout::Compact || Measuring) {
    compactContainer(IsObject, Body);
    if (L == Layout::Compact && Out.size() > FlushSize)
      flush();
    return;
  }

  // Does the compact form fit in the rest of the line? It is written in
  // place, and taken back if not.
  size_t Start = Out.size();
  size_t Column = Start - LineStart;
  Measuring = true;
  MeasureEnd = Start + (Column < LineWidth ? LineWidth - Column : 0);
  compactContainer(IsObject, Body);
  Measuring = false;
  if (Out.size() <= MeasureEnd)
    return;
  Out.resize(Start);

  unsigned Indent = Stack.empty() ? 0 : Stack.back().Indent + 2;
  Out += IsObject ? '{' : '[';
  Stack.push_back({IsObject, /*Expanded=*/true, true, Indent});
  Body();
  Stack.pop_back();
  newLine(Indent);
  Out += IsObject ? '}' : ']';
}

} // namespace loom::bir
