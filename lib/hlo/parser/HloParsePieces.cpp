//===- HloParsePieces.cpp - The HLO parser's threaded piece driver --------===//
//
// With HloParseOptions::threads > 1 a large module is parsed in pieces of
// whole computations on several threads and joined in text order; any
// piece that does not parse on its own sends the whole text after the
// header to the sequential parser, so results and errors never depend on
// the thread count (docs/hlo-text-format.md, "Parsing on several threads").
//
//===----------------------------------------------------------------------===//
#include "HloParserInternal.h"

#include "loom/support/Parallel.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstring>

namespace loom::hlo::hlo_parser {

// Where the pieces of the text after the header start: the first at cur_,
// the others at lines that look like the start of a computation
// (`[ENTRY] [%]name (` or `... {`), spread evenly over the text. A guess
// may be wrong (the line may sit inside a comment or a string, or be an
// instruction written at the start of a line); TryParsePieces then finds
// that some piece does not parse and reads the module sequentially.
std::vector<const char *> Parser::PieceStarts(unsigned threads) const {
  std::vector<const char *> starts;
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
  auto looks_like_computation = [&](const char *p) {
    const char *line_end = p;
    while (line_end < end_ && *line_end != '\n')
      ++line_end;
    llvm::StringRef line(p, line_end - p);
    if (line.consume_front("ENTRY"))
      line = line.ltrim(" \t");
    line.consume_front("%");
    size_t name = 0;
    while (name < line.size() && IsNameChar(line[name]))
      ++name;
    if (name == 0)
      return false;
    line = line.drop_front(name).ltrim(" \t");
    return !line.empty() && (line[0] == '(' || line[0] == '{');
  };
  for (size_t i = 1; i < wanted; ++i) {
    const char *p = std::max(cur_ + rest / wanted * i, starts.back() + 1);
    // The first line that starts at or after p.
    while (p < end_) {
      if (p[-1] != '\n') {
        const void *eol = std::memchr(p, '\n', end_ - p);
        if (!eol)
          return starts;
        p = static_cast<const char *>(eol) + 1;
        continue;
      }
      char c = *p;
      if ((c == '%' || c == 'E' || IsNameChar(c)) && looks_like_computation(p))
        break;
      ++p;
    }
    if (p >= end_)
      break;
    starts.push_back(p);
  }
  if (starts.size() < 2)
    starts.clear();
  return starts;
}

// Parses the computations in pieces, each on its own into a module of its
// own, and joins them in text order. A piece reads exactly what the
// sequential parser reads from the same position (it starts where a
// computation would and must end at the next piece's start), so the join
// is the sequential result, provided the pieces do not clash: the state
// that crosses pieces (computation names, the ENTRY mark, instruction
// names, shapes inferred from earlier callees) is checked here or makes a
// piece fail. On any failure nothing is kept and the caller parses
// sequentially, so errors are exactly the sequential ones.
bool Parser::TryParsePieces() {
  unsigned threads = resolveThreadCount(options_.threads);
  if (threads <= 1)
    return false;
  std::vector<const char *> starts = PieceStarts(threads);
  if (starts.empty())
    return false;
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
    if (!piece->ParseComputations())
      abandon.store(true, std::memory_order_relaxed);
    pieces[i] = std::move(piece);
  });
  if (abandon.load(std::memory_order_relaxed))
    return false;
  // What the sequential parser would refuse across pieces.
  NameMap<HloComputation *> by_name;
  HloComputation *entry = nullptr;
  for (const auto &piece : pieces) {
    if (piece->entry_) {
      if (entry)
        return false;
      entry = piece->entry_;
    }
    for (const auto &[name, computation] : piece->computations_by_name_)
      if (!by_name.try_emplace(name, computation).second)
        return false;
  }
  computations_by_name_ = std::move(by_name);
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
