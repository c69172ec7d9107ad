//===- HloParsePieces.cpp - The HLO parser's threaded piece driver --------===//
//
// With HloParseOptions::threads > 1 a large module is parsed in pieces on
// several threads and joined in text order. A piece starts at a computation
// or at an instruction inside one (a module may be one computation of a
// million instructions), so a computation may span pieces: each piece
// parses its part into a computation of its own, leaves the operands it
// does not define for the join, and the join moves the parts into one
// computation and finds those operands among the earlier parts' names. Any
// piece that does not parse on its own, and anything the join cannot
// settle, sends the whole text after the header to the sequential parser,
// so results and errors never depend on the thread count
// (docs/hlo-text-format.md, "Parsing on several threads").
//
//===----------------------------------------------------------------------===//
#include "HloParserInternal.h"

#include "loom/support/Parallel.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstring>

namespace loom::hlo::hlo_parser {

// Where the pieces of the text after the header start: the first at cur_,
// the others at lines that look like the start of a computation
// (`[ENTRY] [%]name (` or `... {`) or of an instruction (`[ROOT] [%]name =`,
// then `inside` is 1), spread evenly over the text. A guess may be wrong
// (the line may sit inside a comment, a string or a computation written in
// place, or an instruction be written at the start of a line); then some
// piece does not parse or the pieces do not fit together, and
// TryParsePieces reads the module sequentially.
std::vector<const char *> Parser::PieceStarts(unsigned threads, bool instructions,
                                              std::vector<uint8_t> &inside) const {
  std::vector<const char *> starts;
  inside.clear();
  size_t rest = end_ - cur_;
  size_t min_bytes = std::max<size_t>(options_.min_chunk_bytes, 1);
  // Many pieces per thread: computations differ in size, and the thread
  // that takes the last piece works alone while it reads it. At 1M
  // instructions 32 per thread cut the lone tail from about 50 ms (8 per
  // thread) to a few ms (docs/performance.md, "Threads").
  constexpr size_t kPiecesPerThread = 32;
  size_t wanted = std::min<size_t>(rest / min_bytes, size_t(threads) * kPiecesPerThread);
  if (wanted < 2)
    return starts;
  starts.push_back(cur_);
  inside.push_back(0);
  // 0: a computation starts on the line, 1: an instruction, -1: neither.
  // Only the line's first few dozen bytes are read.
  auto kind_of_line = [&](const char *p) {
    const char *line_end = p;
    while (line_end < end_ && *line_end != '\n')
      ++line_end;
    llvm::StringRef line(p, line_end - p);
    line = line.ltrim(" \t");
    size_t indent = static_cast<size_t>(line_end - p) - line.size();
    bool entry = line.consume_front("ENTRY");
    bool root = !entry && line.consume_front("ROOT");
    if (entry || root)
      line = line.ltrim(" \t");
    line.consume_front("%");
    size_t name = 0;
    while (name < line.size() && IsNameChar(line[name]))
      ++name;
    if (name == 0)
      return -1;
    line = line.drop_front(name).ltrim(" \t");
    if (line.empty())
      return -1;
    if (!root && indent == 0 && (line[0] == '(' || line[0] == '{'))
      return 0;
    // Dumps indent the instructions of a computation by two; deeper ones
    // are likely in a computation written in place, where a piece cannot
    // start.
    if (!entry && indent <= 2 && line[0] == '=')
      return 1;
    return -1;
  };
  for (size_t i = 1; i < wanted; ++i) {
    const char *p = std::max(cur_ + rest / wanted * i, starts.back() + 1);
    // The first line that starts at or after p.
    while (p < end_) {
      if (p[-1] != '\n') {
        const void *eol = std::memchr(p, '\n', end_ - p);
        if (!eol) {
          p = end_;
          break;
        }
        p = static_cast<const char *>(eol) + 1;
        continue;
      }
      char c = *p;
      if (c == '%' || c == ' ' || c == '\t' || IsNameChar(c)) {
        int kind = kind_of_line(p);
        if (kind == 0 || (kind == 1 && instructions)) {
          inside.push_back(static_cast<uint8_t>(kind));
          break;
        }
      }
      ++p;
    }
    if (p >= end_)
      break;
    starts.push_back(p);
  }
  if (starts.size() < 2) {
    starts.clear();
    inside.clear();
  }
  return starts;
}

// The start of a piece that starts inside a computation: its instructions
// up to the computation's '}' (and the text after it, as ParseComputation
// reads it), or to the piece's end. They go into a computation of their
// own, which, when the '}' is in this piece, stands in the piece's module
// where the whole computation goes at the join.
bool Parser::ParsePieceHead() {
  head_.computation = std::make_unique<HloComputation>("");
  if (!ParseInstructions(*head_.computation, cur_, 1, /*head=*/true))
    return false;
  if (stopped_open_)
    return true;
  head_ends_ = true;
  SkipTrivia();
  if (Peek(',')) {
    const char *begin = cur_;
    if (!ScanBalanced(kStopAtNewline))
      return false;
    head_.computation->set_trailer(llvm::StringRef(begin, cur_ - begin).rtrim().str());
  }
  head_closed_ = module_->AddComputation(std::move(head_.computation), /*names_reserved=*/true);
  last_top_level_ = head_closed_;
  return true;
}

// Finds every operand the piece left for the join among `earlier`, the
// names of the earlier parts of the computation in text order: the part
// just before first (operands are mostly recent values), then the first
// part (where a dump declares its parameters), then the others backwards.
// False when one is missing or written with another shape than its
// definition's text (the sequential parser decides those).
bool Parser::ResolveCrossOperands(llvm::ArrayRef<const ScopeNames *> earlier) {
  for (CrossOperand &cross : cross_) {
    const ScopeNames *names = nullptr;
    uint32_t found = ScopeNames::kNone;
    for (size_t k = 0; k < earlier.size() && found == ScopeNames::kNone; ++k) {
      size_t part = k == 0 ? earlier.size() - 1 : k == 1 ? 0 : earlier.size() - k;
      names = earlier[part];
      found = names->Find(cross.name);
    }
    if (found == ScopeNames::kNone || !names->instruction(found))
      return false;
    if (!cross.written_shape.empty() && !SameText(cross.written_shape, names->shape_text(found)))
      return false;
    cross.definition = names->instruction(found);
  }
  return true;
}

// Parses the text in pieces, each on its own into a module of its own, and
// joins them in text order. A piece reads exactly what the sequential
// parser reads from the same position (it starts where a computation or an
// instruction would and must end at the next piece's start, between two
// computations or two instructions of a top-level computation), so the
// join is the sequential result, provided the pieces fit together: a piece
// that starts inside a computation follows one that ends inside it, and
// the state that crosses pieces (computation names, the ENTRY mark, the
// ROOT of a computation in several pieces, instruction names, operands
// defined in an earlier piece, shapes inferred from earlier callees) is
// checked here or makes a piece fail. On any failure nothing is kept and
// the caller parses sequentially, so errors are exactly the sequential ones.
bool Parser::TryParsePieces() {
  unsigned threads = resolveThreadCount(options_.threads);
  if (threads <= 1)
    return false;
  std::vector<uint8_t> inside;
  std::vector<const char *> starts = PieceStarts(threads, /*instructions=*/true, inside);
  if (starts.empty())
    return false;
  if (TryParsePieces(threads, starts, inside))
    return true;
  // A guess inside a computation may have been wrong where one at
  // computations only is right (an instruction line in a computation
  // written in place): the pieces of whole computations get their chance.
  if (llvm::none_of(inside, [](uint8_t i) { return i != 0; }))
    return false;
  starts = PieceStarts(threads, /*instructions=*/false, inside);
  return !starts.empty() && TryParsePieces(threads, starts, inside);
}

bool Parser::TryParsePieces(unsigned threads, llvm::ArrayRef<const char *> starts,
                            llvm::ArrayRef<uint8_t> inside) {
  size_t count = starts.size();
  std::vector<std::unique_ptr<Parser>> pieces(count);
  std::atomic<bool> abandon{false};
  // Largest first: a large piece taken last (the entry computation of a
  // dump is often the largest and comes last) would leave the other
  // threads idle. Which thread parses which piece changes nothing else.
  auto piece_end = [&](size_t i) { return i + 1 < count ? starts[i + 1] : end_; };
  std::vector<size_t> by_size(count);
  for (size_t i = 0; i < count; ++i)
    by_size[i] = i;
  llvm::stable_sort(by_size, [&](size_t a, size_t b) {
    return piece_end(a) - starts[a] > piece_end(b) - starts[b];
  });
  parallelFor(threads, count, [&](size_t k) {
    size_t i = by_size[k];
    if (abandon.load(std::memory_order_relaxed))
      return;
    auto module = std::make_unique<HloModule>("");
    module->IndexInstructionNames();
    const char *end = piece_end(i);
    std::unique_ptr<Parser> piece(
        new Parser(std::move(module), buffer_, file_name_, starts[i], end, &abandon));
    if (!piece->ParseComputations(inside[i]))
      abandon.store(true, std::memory_order_relaxed);
    pieces[i] = std::move(piece);
  });
  if (abandon.load(std::memory_order_relaxed))
    return false;

  // What the sequential parser would refuse across pieces, checked before
  // anything is moved. `open` is the piece whose computation is still open.
  NameMap<HloComputation *> by_name;
  HloComputation *entry = nullptr;
  bool entry_seen = false;
  Parser *open = nullptr;
  std::vector<const ScopeNames *> parts;
  // The parts of every computation in several pieces.
  std::vector<std::vector<const ScopeNames *>> splits;
  const HloInstruction *open_root = nullptr;
  bool open_has_instructions = false;
  for (size_t i = 0; i < count; ++i) {
    Parser &piece = *pieces[i];
    if (inside[i]) {
      if (!open || !piece.ResolveCrossOperands(parts))
        return false;
      if (piece.head_.root) {
        if (open_root)
          return false;
        open_root = piece.head_.root;
      }
      parts.push_back(piece.head_.names.get());
      open_has_instructions |= piece.head_.last != nullptr;
      if (piece.head_ends_) {
        if (!open_has_instructions)
          return false;
        splits.push_back(parts);
        HloComputation *whole = open->tail_.computation.get();
        if (!by_name.try_emplace(NameKey(whole->name()), whole).second)
          return false;
        if (open->tail_.is_entry) {
          if (entry_seen)
            return false;
          entry_seen = true;
        }
        open = nullptr;
        parts.clear();
        open_root = nullptr;
      }
    } else if (open) {
      return false;
    }
    if (piece.entry_) {
      if (entry_seen)
        return false;
      entry_seen = true;
      entry = piece.entry_;
    }
    for (const auto &[name, computation] : piece.computations_by_name_)
      if (!by_name.try_emplace(name, computation).second)
        return false;
    if (piece.tail_.computation) {
      if (open)
        return false;
      open = &piece;
      parts.assign(1, piece.tail_.names.get());
      open_root = piece.tail_.root;
      open_has_instructions = piece.tail_.last != nullptr;
    }
  }
  // The last piece ends inside a computation: unterminated.
  if (open)
    return false;
  // A name taken twice in one computation is an error the sequential
  // parser reports, and the pieces' name tables only say whether some name
  // is taken twice somewhere (merging them costs a word per 64 names of a
  // base). Only then are the parts of each computation in several pieces
  // compared name by name.
  if (!splits.empty()) {
    HloNameTable names;
    bool distinct = true;
    for (const auto &piece : pieces)
      distinct &= !piece->has_duplicate_names_ &&
                  names.Merge(piece->module_->instruction_names());
    for (size_t s = 0; !distinct && s < splits.size(); ++s) {
      llvm::DenseSet<HloName, HloNameKeyInfo> seen;
      for (const ScopeNames *part : splits[s])
        for (uint32_t i = 0; i < part->size(); ++i)
          if (!seen.insert(NameKey(part->name(i))).second)
            return false;
    }
  }

  // The join: the parts of each split computation move into the computation
  // the first part opened, which takes the placeholder's place in the
  // module order; the operands left for the join are linked in text order,
  // so every user list is the sequential one.
  HloComputation *whole = nullptr;
  HloInstruction *root = nullptr, *last = nullptr;
  for (size_t i = 0; i < count; ++i) {
    Parser &piece = *pieces[i];
    if (inside[i]) {
      HloComputation *head =
          piece.head_ends_ ? piece.head_closed_ : piece.head_.computation.get();
      whole->AppendInstructionsOf(*head);
      for (const CrossOperand &cross : piece.cross_)
        cross.user->SetMissingOperand(cross.operand, cross.definition);
      if (piece.head_.root)
        root = piece.head_.root;
      if (piece.head_.last)
        last = piece.head_.last;
      if (piece.head_ends_) {
        Parser &owner = *pieces[std::find_if(pieces.begin(), pieces.end(),
                                             [&](const std::unique_ptr<Parser> &p) {
                                               return p->tail_.computation.get() == whole;
                                             }) -
                                pieces.begin()];
        whole->set_trailer(head->trailer());
        whole->set_root_instruction(root ? root : last);
        std::unique_ptr<HloComputation> placeholder =
            piece.module_->ReplaceComputation(head, std::move(owner.tail_.computation));
        computations_by_name_[NameKey(whole->name())] = whole;
        by_position_.push_back({owner.tail_.open, whole});
        if (owner.tail_.is_entry)
          entry = whole;
        if (piece.last_top_level_ == head)
          piece.last_top_level_ = whole;
        whole = nullptr;
      }
    }
    if (piece.tail_.computation) {
      whole = piece.tail_.computation.get();
      root = piece.tail_.root;
      last = piece.tail_.last;
    }
  }
  for (auto &[name, computation] : by_name)
    computations_by_name_.try_emplace(name, computation);
  entry_ = entry;
  for (const auto &piece : pieces) {
    if (!module_->AppendPiece(*piece->module_))
      has_duplicate_names_ = true;
    has_duplicate_names_ |= piece->has_duplicate_names_;
    if (piece->last_top_level_)
      last_top_level_ = piece->last_top_level_;
    pending_.insert(pending_.end(), piece->pending_.begin(), piece->pending_.end());
    inline_.insert(inline_.end(), piece->inline_.begin(), piece->inline_.end());
    unnamed_.insert(unnamed_.end(), piece->unnamed_.begin(), piece->unnamed_.end());
    by_position_.insert(by_position_.end(), piece->by_position_.begin(),
                        piece->by_position_.end());
  }
  cur_ = end_;
  if (options_.pieces_joined)
    *options_.pieces_joined = count;
  return true;
}

} // namespace loom::hlo::hlo_parser
