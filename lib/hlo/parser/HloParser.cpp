//===- HloParser.cpp - Recursive-descent parser for XLA's HLO text --------===//
//
// The module: header, stack frame index, computations, instructions,
// operands, attributes, the shapes the text leaves out, and at the end the
// computation references resolved and the instruction names made unique;
// and the entry points. The module keeps the text as its source, and
// names, attribute values and literals stay views into it in the IR
// (HloText); instructions that write the same shape text share one parsed
// Shape. Nothing is allocated per token; an instruction is one heap block
// in the common case. The tokens are HloLexer.cpp's, the shapes
// HloShapeParser.cpp's, the pieces of a threaded parse HloParsePieces.cpp's
// (HloParserInternal.h).
//
//===----------------------------------------------------------------------===//
#include "loom/hlo/parser/HloParser.h"

#include "HloParserInternal.h"

#include "loom/hlo/ir/HloAttributeNames.h"
#include "loom/hlo/ir/HloInstructionArena.h"
#include "loom/hlo/ir/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"

#include <cstring>

namespace loom::hlo {
namespace hlo_parser {
namespace {

/// Attributes whose values name other IR objects and so are kept as pointers.
enum class ReferenceKind { kNone, kComputation, kComputationList, kControlPredecessors };

ReferenceKind ClassifyAttribute(llvm::StringRef name) {
  // Runs for every attribute: most (metadata=, dimensions=, ...) start with
  // a letter no reference attribute starts with.
  switch (name.empty() ? '\0' : name[0]) {
  case 't': case 'c': case 'b': case 's': case 'f':
    break;
  default:
    return ReferenceKind::kNone;
  }
  if (name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
      name == "select" || name == "scatter" || name == "true_computation" ||
      name == "false_computation")
    return ReferenceKind::kComputation;
  if (name == "branch_computations" || name == "called_computations")
    return ReferenceKind::kComputationList;
  if (name == "control-predecessors")
    return ReferenceKind::kControlPredecessors;
  return ReferenceKind::kNone;
}

// A typo is refused rather than kept verbatim and ignored
// (loom/hlo/ir/HloAttributeNames.h).
std::string UnknownAttributeMessage(llvm::StringRef what, llvm::StringRef name,
                                    llvm::ArrayRef<llvm::StringRef> known) {
  return ("unknown " + what + " '" + name + "'; did you mean '" + ClosestKnownName(name, known) +
          "'?")
      .str();
}

} // namespace

bool Parser::ParseHeader() {
  SkipTrivia();
  if (!ConsumeKeyword("HloModule"))
    return Fail(cur_, "expected 'HloModule'");
  SkipTrivia();
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(cur_, "expected the module name");
  // Old dumps wrote `HloModule name:`.
  if (Peek(':'))
    ++cur_;
  module_->SetName(name.str());
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (!Peek(','))
      return true;
    ++cur_;
    SkipTrivia();
    const char *at = cur_;
    llvm::StringRef attribute = LexWhile(IsAttributeNameChar);
    if (attribute.empty())
      return Fail(at, "expected a module attribute name");
    if (!IsKnownModuleAttribute(attribute))
      return Fail(at, UnknownAttributeMessage("module attribute", attribute,
                                              KnownModuleAttributeNames()));
    if (!Expect('=', "'=' after module attribute '" + attribute + "'"))
      return false;
    llvm::StringRef value;
    if (!ScanAttributeValue(attribute, value))
      return false;
    module_->mutable_header_attributes().push_back({attribute.str(), value.str()});
  }
}

static bool IsStackFrameKeyword(llvm::StringRef word) {
  return word == "FileNames" || word == "FunctionNames" || word == "FileLocations" ||
         word == "StackFrames";
}

// The tables are lines of a keyword or of `<id> <entry>`; they are kept
// verbatim up to the first line that is neither.
bool Parser::ParseStackFrameIndex() {
  SkipTrivia();
  const char *begin = cur_;
  const char *last_end = cur_;
  while (cur_ < end_) {
    while (cur_ < end_ && IsSpace(*cur_))
      ++cur_;
    const char *line = cur_;
    bool is_table_line = cur_ < end_ && IsDigit(*cur_);
    if (!is_table_line) {
      llvm::StringRef word = LexWhile(IsAlnum);
      SkipHorizontalSpace();
      is_table_line = IsStackFrameKeyword(word) && (cur_ == end_ || *cur_ == '\n' || *cur_ == '\r');
    }
    if (!is_table_line) {
      cur_ = line;
      break;
    }
    const void *eol = std::memchr(cur_, '\n', end_ - cur_);
    cur_ = eol ? static_cast<const char *>(eol) : end_;
    last_end = cur_;
  }
  if (last_end != begin)
    module_->set_stack_frame_index(llvm::StringRef(begin, last_end - begin).rtrim().str());
  cur_ = last_end;
  return true;
}

bool Parser::ParseSignature() {
  ++cur_;
  bool ok = ParseSeparatedList(')', "',' or ')' in the computation signature", [&] {
    llvm::StringRef name;
    if (!LexName(name))
      return Fail(cur_, "expected a parameter name in the computation signature");
    SkipTrivia();
    if (!Expect(':', "':' after parameter '" + name + "'"))
      return false;
    SkipTrivia();
    return ParseShapeAt(nullptr, nullptr, 0);
  });
  if (!ok)
    return false;
  SkipTrivia();
  if (!(Peek('-') && cur_ + 1 < end_ && cur_[1] == '>'))
    return Fail(cur_, "expected '->' in the computation signature");
  cur_ += 2;
  SkipTrivia();
  return ParseShapeAt(nullptr, nullptr, 0);
}

bool Parser::ParseComputation() {
  const char *at = cur_;
  bool is_entry = ConsumeKeyword("ENTRY");
  SkipTrivia();
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(cur_, "expected a computation name");
  SkipTrivia();
  if (Peek('(') && !ParseSignature())
    return false;
  SkipTrivia();
  const char *open = cur_;
  if (!ExpectAfter('{', "'{' to open computation '", name))
    return false;
  if (computations_by_name_.count(NameKey(name)))
    return Fail(at, "duplicate computation name '" + name + "'");
  auto owned = std::make_unique<HloComputation>(name.str());
  if (!ParseInstructions(*owned, open, 1))
    return false;
  if (stopped_open_) {
    // The piece ends inside it (HloParsePieces.cpp).
    tail_.computation = std::move(owned);
    tail_.at = at;
    tail_.open = open;
    tail_.is_entry = is_entry;
    return true;
  }
  // `}, execution_thread="host"` and the like stay with the computation.
  SkipTrivia();
  if (Peek(',')) {
    const char *begin = cur_;
    if (!ScanBalanced(kStopAtNewline))
      return false;
    owned->set_trailer(llvm::StringRef(begin, cur_ - begin).rtrim().str());
  }
  HloComputation *computation =
      module_->AddComputation(std::move(owned), /*names_reserved=*/true);
  computations_by_name_[NameKey(computation->name())] = computation;
  by_position_.push_back({open, computation});
  last_top_level_ = computation;
  if (!is_entry)
    return true;
  if (entry_)
    return Fail(at, "computation '" + name + "' is marked ENTRY but '" + entry_->name() +
                        "' already is");
  entry_ = computation;
  return true;
}

bool Parser::ParseInstructions(HloComputation &computation, const char *open, int depth,
                               bool head) {
  // One map per level of computations written in place, kept from one
  // computation to the next: clearing keeps its buckets, where a new map
  // per computation grew them again every time.
  if (scope_maps_.size() <= open_scopes_)
    scope_maps_.push_back(std::make_unique<ScopeNames>(buffer_.data()));
  ScopeNames &names = *scope_maps_[open_scopes_];
  names.clear();
  ++open_scopes_;
  auto close = llvm::make_scope_exit([&] { --open_scopes_; });
  Scope scope{&computation, names};
  scope.defer_unknown = head;
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (cur_ == end_) {
      // A piece may end between two instructions of a top-level
      // computation; the next one goes on with it (HloParsePieces.cpp).
      if (abandon_ && open_scopes_ == 1) {
        stopped_open_ = true;
        OpenPart &part = head ? head_ : tail_;
        part.names = std::move(scope_maps_[0]);
        scope_maps_[0] = std::make_unique<ScopeNames>(buffer_.data());
        part.root = scope.root;
        part.last = scope.last;
        return true;
      }
      return Fail(open, "unterminated computation: expected '}' to match this '{'");
    }
    if (*cur_ == '}') {
      ++cur_;
      break;
    }
    if (!ParseInstruction(scope, depth))
      return false;
  }
  if (head) {
    // Its root is decided at the join, with the rest of the computation.
    head_.names = std::move(scope_maps_[0]);
    scope_maps_[0] = std::make_unique<ScopeNames>(buffer_.data());
    head_.root = scope.root;
    head_.last = scope.last;
    return true;
  }
  if (!scope.last)
    return Fail(open, "computation '" + computation.name() + "' has no instructions");
  computation.set_root_instruction(scope.root ? scope.root : scope.last);
  return true;
}

bool Parser::ParseOpcode(HloOpcode &opcode, std::optional<HloOpcode> &wrapped) {
  const char *at = cur_;
  llvm::StringRef text = LexWhile(IsAttributeNameChar);
  if (text.empty())
    return Fail(at, Context() + "expected an opcode");
  if (std::optional<HloOpcode> op = LookupOpcode(text)) {
    opcode = *op;
    return true;
  }
  // XLA's async sugar: `negate-start` wraps negate in an async computation.
  static constexpr std::pair<llvm::StringLiteral, HloOpcode> kSuffixes[] = {
      {"-start", HloOpcode::kAsyncStart},
      {"-update", HloOpcode::kAsyncUpdate},
      {"-done", HloOpcode::kAsyncDone},
  };
  for (const auto &[suffix, async_opcode] : kSuffixes) {
    if (!text.endswith(suffix))
      continue;
    if (std::optional<HloOpcode> base = LookupOpcode(text.drop_back(suffix.size()))) {
      opcode = async_opcode;
      wrapped = *base;
      return true;
    }
  }
  return Fail(at, Context() + "unknown opcode '" + text + "'");
}

bool Parser::ParseOperands(Scope &scope, int depth,
                           llvm::SmallVectorImpl<HloInstruction *> &operands) {
  SkipTrivia();
  if (Peek(')')) {
    ++cur_;
    return true;
  }
  while (true) {
    SkipTrivia();
    const char *operand_begin = cur_;
    const char *shape_end = nullptr;
    // Dump text writes an operand's shape as its definition wrote it, and
    // the definition's text was parsed: the same bytes need no second look.
    // Only the extent is found first; any other text is parsed (for its
    // syntax errors, reported as before) before it is used.
    bool shape_checked = true;
    if (AtShape()) {
      if (const char *end = ShapeTextEnd()) {
        cur_ = shape_end = end;
        shape_checked = false;
      } else if (!ParseShapeAt(nullptr, nullptr, 0)) {
        return false;
      } else {
        shape_end = cur_;
      }
      SkipTrivia();
    }
    auto check_shape = [&] {
      if (shape_checked)
        return true;
      shape_checked = true;
      const char *resume = cur_;
      cur_ = operand_begin;
      if (!ParseShapeAt(nullptr, nullptr, 0))
        return false;
      cur_ = resume;
      return true;
    };
    const char *at = cur_;
    llvm::StringRef name;
    if (!LexName(name)) {
      if (!check_shape())
        return false;
      return Fail(at, Context() + "expected an operand name");
    }
    SkipTrivia();
    HloInstruction *operand = nullptr;
    if (Peek('(')) {
      // An operand written as an instruction in place:
      // `add(x, s32[] constant(1))`.
      if (depth + 1 >= kMaxNestingDepth)
        return Fail(at, Context() + "operands nested deeper than " +
                            llvm::Twine(kMaxNestingDepth) + " levels");
      cur_ = operand_begin;
      if (!ParseInstructionBody(scope, "", depth + 1, operand))
        return false;
    } else {
      uint32_t found = scope.instructions.Find(name);
      if (found == ScopeNames::kNone && scope.defer_unknown) {
        // Defined in an earlier piece, or nowhere: the join decides.
        cross_.push_back({nullptr, static_cast<uint32_t>(operands.size()), name,
                          llvm::StringRef(operand_begin,
                                          shape_end ? shape_end - operand_begin : 0)});
        operands.push_back(nullptr);
        SkipTrivia();
        if (Peek(',')) {
          ++cur_;
          continue;
        }
        return ExpectAfter(')', "',' or ')' after operand '", name);
      }
      if (found == ScopeNames::kNone || !scope.instructions.instruction(found)) {
        if (!check_shape())
          return false;
        return Fail(at, Context() + "unknown operand '" + name +
                            "' (operands must be defined earlier in computation '" +
                            scope.computation->name() + "')");
      }
      operand = scope.instructions.instruction(found);
      // The same bytes as the definition's parse to the same shape; other
      // text is checked, then parsed again to compare.
      llvm::StringRef written(operand_begin, shape_end ? shape_end - operand_begin : 0);
      bool same = !shape_end || SameText(written, scope.instructions.shape_text(found));
      if (!same && !check_shape())
        return false;
      if (!same &&
          !ShapeTextMatches(operand_begin, shape_end, operand->shape()))
        return Fail(operand_begin, Context() + "operand '" + name + "' is written as '" +
                                       llvm::StringRef(operand_begin, shape_end - operand_begin) +
                                       "' but its shape is " + operand->shape().ToString());
    }
    operands.push_back(operand);
    SkipTrivia();
    if (Peek(',')) {
      ++cur_;
      continue;
    }
    return ExpectAfter(')', "',' or ')' after operand '", name);
  }
}

bool Parser::LooksLikeInlineComputation() {
  const char *saved = cur_;
  ++cur_;
  SkipTrivia();
  bool result = ConsumeKeyword("ROOT");
  llvm::StringRef name;
  if (!result && LexName(name)) {
    SkipTrivia();
    result = Peek('=');
  }
  cur_ = saved;
  return result;
}

bool Parser::ParseComputationReference(llvm::StringRef instruction, llvm::StringRef attribute,
                                       int depth, llvm::SmallVectorImpl<Attribute> &attributes) {
  SkipHorizontalSpace();
  size_t index = attributes.size();
  // `calls={ a = ... }`: a computation written in place.
  if (Peek('{') && LooksLikeInlineComputation()) {
    if (depth + 1 >= kMaxNestingDepth)
      return Fail(cur_, "computations nested deeper than " + llvm::Twine(kMaxNestingDepth) +
                            " levels");
    const char *open = cur_++;
    auto owned = std::make_unique<HloComputation>("");
    llvm::StringRef saved_instruction = current_instruction_;
    bool ok = ParseInstructions(*owned, open, depth + 1);
    current_instruction_ = saved_instruction;
    if (!ok)
      return false;
    HloComputation *computation =
      module_->AddComputation(std::move(owned), /*names_reserved=*/true);
    inline_.push_back({computation, instruction, attribute});
    by_position_.push_back({open, computation});
    attributes.push_back(
        {HloText::View(attribute), HloText(), AttributeKind::kComputation, {computation}});
    return true;
  }
  if (Peek('{')) {
    ++cur_;
    attributes.push_back(
        {HloText::View(attribute), HloText(), AttributeKind::kComputationList, {}});
    return ParseSeparatedList('}', "',' or '}' in '" + attribute + "'", [&] {
      const char *at = cur_;
      llvm::StringRef name;
      if (!LexName(name))
        return Fail(at, Context() + "expected a computation name in '" + attribute + "'");
      pending_.push_back({nullptr, index, attributes[index].computations.size(), name, at});
      attributes[index].computations.push_back(nullptr);
      return true;
    });
  }
  const char *at = cur_;
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(at, Context() + "expected a computation name after '" + attribute + "='");
  pending_.push_back({nullptr, index, 0, name, at});
  attributes.push_back(
      {HloText::View(attribute), HloText(), AttributeKind::kComputation, {nullptr}});
  return true;
}

bool Parser::ParseControlPredecessors(Scope &scope,
                                      llvm::SmallVectorImpl<HloInstruction *> &preds) {
  SkipHorizontalSpace();
  if (!Expect('{', "'{' after 'control-predecessors='"))
    return false;
  return ParseSeparatedList('}', "',' or '}' in 'control-predecessors'", [&] {
    const char *at = cur_;
    llvm::StringRef name;
    if (!LexName(name))
      return Fail(at, Context() + "expected an instruction name in 'control-predecessors'");
    uint32_t found = scope.instructions.Find(name);
    if (found == ScopeNames::kNone || !scope.instructions.instruction(found))
      return Fail(at, Context() + "unknown control predecessor '" + name + "'");
    preds.push_back(scope.instructions.instruction(found));
    return true;
  });
}

bool Parser::ParseAttributes(Scope &scope, llvm::StringRef instruction, int depth,
                             llvm::SmallVectorImpl<Attribute> &attributes,
                             llvm::SmallVectorImpl<HloInstruction *> &control_predecessors) {
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (!Peek(','))
      return true;
    ++cur_;
    SkipTrivia();
    const char *at = cur_;
    llvm::StringRef name = LexWhile(IsAttributeNameChar);
    if (name.empty())
      return Fail(at, Context() + "expected an attribute name");
    if (!IsKnownInstructionAttribute(name))
      return Fail(at, Context() + UnknownAttributeMessage("attribute", name,
                                                          KnownInstructionAttributeNames()));
    if (!ExpectAfter('=', "'=' after attribute '", name))
      return false;
    ReferenceKind kind = ClassifyAttribute(name);
    SkipTrivia();
    // A quoted value of a reference-named attribute is plain text.
    if (kind != ReferenceKind::kNone && Peek('"'))
      kind = ReferenceKind::kNone;
    switch (kind) {
    case ReferenceKind::kComputation:
    case ReferenceKind::kComputationList:
      if (!ParseComputationReference(instruction, name, depth, attributes))
        return false;
      continue;
    case ReferenceKind::kControlPredecessors:
      if (!ParseControlPredecessors(scope, control_predecessors))
        return false;
      attributes.push_back(
          {HloText::View(name), HloText(), AttributeKind::kControlPredecessors, {}});
      continue;
    case ReferenceKind::kNone:
      break;
    }
    llvm::StringRef value;
    if (!ScanAttributeValue(name, value))
      return false;
    attributes.push_back(
        {HloText::View(name), HloText::View(value), AttributeKind::kText, {}});
  }
}

// What XLA's parser fills in or refuses, so the module prints as XLA prints
// it: a broadcast of a scalar without `dimensions=` has `dimensions={}`;
// `api_version=` takes only XLA's enum names (the printer leaves the
// default, API_VERSION_ORIGINAL, implicit).
bool Parser::NormalizeAttributes(HloInstruction &inst, size_t first_pending, const char *at) {
  if (inst.opcode() == HloOpcode::kBroadcast && !inst.HasAttribute("dimensions") &&
      inst.operand_count() == 1 && !inst.operand(0))
    return Fail(at, "the operand is in an earlier piece"); // HloParsePieces.cpp
  if (inst.opcode() == HloOpcode::kBroadcast && !inst.HasAttribute("dimensions") &&
      inst.operand_count() == 1 && inst.operand(0)->shape().IsArray() &&
      inst.operand(0)->shape().rank() == 0) {
    // First, where XLA prints it (before sharding, metadata, ...). A valid
    // broadcast refers to no computation, but the verifier only refuses one
    // that does later: its references move one attribute on.
    HloInstruction::Attribute dims;
    dims.name = HloText::View("dimensions");
    dims.value = HloText::View("{}");
    inst.mutable_attributes().insert(inst.mutable_attributes().begin(), std::move(dims));
    for (size_t i = first_pending; i < pending_.size(); ++i)
      ++pending_[i].attribute;
  }
  if (const HloText *version = inst.FindAttribute("api_version")) {
    llvm::StringRef v = *version;
    // The names of XLA's CustomCallApiVersion enum (torch-neuronx dumps
    // write API_VERSION_UNSPECIFIED); no numbers, no other spelling.
    if (v != "API_VERSION_UNSPECIFIED" && v != "API_VERSION_ORIGINAL" &&
        v != "API_VERSION_STATUS_RETURNING" && v != "API_VERSION_STATUS_RETURNING_UNIFIED" &&
        v != "API_VERSION_TYPED_FFI")
      return Fail(at, Context() + "unknown api_version '" + v +
                          "'; expected API_VERSION_ORIGINAL, API_VERSION_STATUS_RETURNING, "
                          "API_VERSION_STATUS_RETURNING_UNIFIED, API_VERSION_TYPED_FFI or "
                          "API_VERSION_UNSPECIFIED");
  }
  return true;
}

// XLA lets tests leave out shapes that follow from the operands; the rules
// are ShapeInference's. Called computations written earlier in the text are
// resolved for the rule (a reduce's or call's shape comes from its callee).
bool Parser::InferShape(HloInstruction &inst, size_t first_pending, const char *at) {
  for (size_t i = first_pending; i < pending_.size(); ++i) {
    const PendingReference &ref = pending_[i];
    auto it = computations_by_name_.find(NameKey(ref.name));
    if (it != computations_by_name_.end())
      inst.mutable_attributes()[ref.attribute].computations[ref.slot] = it->second;
  }
  for (const Attribute &attribute : inst.attributes())
    for (const HloComputation *callee : attribute.computations)
      if (!callee)
        return Fail(at, Context() + "cannot infer the shape (computation '" +
                            attribute.name + "' is defined later in the text); write it");
  llvm::Expected<Shape> shape = ShapeInference::InferInstructionShape(inst);
  if (!shape)
    return Fail(at, Context() + "cannot infer the shape (" + llvm::toString(shape.takeError()) +
                        "); write it");
  *inst.mutable_shape() = std::move(*shape);
  return true;
}

bool Parser::ParseInstruction(Scope &scope, int depth) {
  const char *start = cur_;
  bool is_root = ConsumeKeyword("ROOT");
  if (is_root)
    SkipTrivia();
  const char *name_at = cur_;
  llvm::StringRef name;
  if (!LexName(name))
    return Fail(name_at, "expected an instruction name");
  current_instruction_ = name;
  // Entered now (one lookup per name); the instruction is filled in once
  // read, and an operand naming it before then is unknown.
  auto [slot, inserted] = scope.instructions.Insert(name);
  if (!inserted)
    return Fail(name_at, "duplicate instruction name '" + name + "' in computation '" +
                             scope.computation->name() + "'");
  // Reserved in the module now, while the name is in cache; a name another
  // computation took first is renamed at the end.
  if (!module_->ReserveInstructionName(name))
    has_duplicate_names_ = true;
  SkipTrivia();
  if (!ExpectAfter('=', "'=' after instruction name '", name))
    return false;
  SkipTrivia();
  HloInstruction *inst = nullptr;
  if (!ParseInstructionBody(scope, name, depth, inst))
    return false;
  scope.instructions.Define(slot, inst, body_shape_text_);
  scope.last = inst;
  current_instruction_ = "";
  if (!is_root)
    return true;
  if (scope.root)
    return Fail(start, "computation '" + scope.computation->name() + "' has two ROOT "
                       "instructions: '" + scope.root->name() + "' and '" + name + "'");
  scope.root = inst;
  return true;
}

// `[shape] opcode(operands), attributes` after `name =`. With an empty name
// it is an operand written in place, which takes no attributes (they would
// belong to its user) and is named once the module is read.
bool Parser::ParseInstructionBody(Scope &scope, llvm::StringRef name, int depth,
                                  HloInstruction *&result) {
  bool nested = name.empty();
  Shape shape;
  const Shape *shared_shape = nullptr;
  bool has_shape = AtShape();
  const char *shape_begin = cur_;
  if (has_shape && !ParseInstructionShape(shape, shared_shape))
    return false;
  llvm::StringRef shape_text(shape_begin, has_shape ? cur_ - shape_begin : 0);
  SkipTrivia();
  const char *opcode_at = cur_;
  HloOpcode opcode;
  std::optional<HloOpcode> wrapped;
  if (!ParseOpcode(opcode, wrapped))
    return false;
  SkipTrivia();
  if (!Expect('(', "'(' after the opcode"))
    return false;

  llvm::SmallVector<HloInstruction *, 8> operands;
  size_t first_cross = cross_.size();
  llvm::StringRef literal;
  int64_t parameter_number = -1;
  if (opcode == HloOpcode::kConstant) {
    const char *begin = cur_;
    if (!ScanBalanced(kStopAtCloser))
      return false;
    literal = llvm::StringRef(begin, cur_ - begin);
    if (!Expect(')', "')' after the constant's literal"))
      return false;
  } else if (opcode == HloOpcode::kParameter) {
    SkipTrivia();
    const char *at = cur_;
    if (!LexNonNegativeInt(parameter_number, "a parameter number"))
      return false;
    // Parameter numbers index a vector; one per input byte is a safe bound.
    if (parameter_number >= static_cast<int64_t>(buffer_.size()))
      return Fail(at, Context() + "parameter number " + llvm::Twine(parameter_number) +
                          " is out of range");
    SkipTrivia();
    if (!Expect(')', "')' after the parameter number"))
      return false;
  } else if (!ParseOperands(scope, depth, operands)) {
    return false;
  }
  // An operand left for the join must not decide anything here: the users
  // it gets at the join are in text order only for whole instructions, and
  // the rules below read operand shapes.
  if (cross_.size() > first_cross && (nested || !has_shape))
    return Fail(opcode_at, "an operand is in an earlier piece");

  // Made before its attributes are read, which go into it in place; it
  // joins the computation only once it is complete.
  std::unique_ptr<HloInstruction> owned =
      shared_shape ? HloInstruction::CreateWithSharedShape(opcode, shared_shape, operands)
                   : HloInstruction::Create(opcode, std::move(shape), operands);
  llvm::SmallVector<HloInstruction *, 2> control_predecessors;
  size_t first_pending = pending_.size();
  // Read beside the instruction and moved in at their exact count: grown
  // one push_back at a time, a list of five attributes would hold room for
  // seven and have been copied twice (docs/performance.md).
  llvm::SmallVector<Attribute, 4> attributes;
  if (!nested && !ParseAttributes(scope, name, depth, attributes, control_predecessors))
    return false;
  if (!attributes.empty()) {
    llvm::SmallVectorImpl<Attribute> &into = owned->mutable_attributes();
    into.reserve(attributes.size());
    for (Attribute &attribute : attributes)
      into.push_back(std::move(attribute));
  }
  owned->SetNameView(name);
  owned->set_async_wrapped_opcode(wrapped);
  if (opcode == HloOpcode::kConstant)
    owned->set_literal_text(HloText::View(literal));
  owned->set_parameter_number(parameter_number);
  if (!NormalizeAttributes(*owned, first_pending, opcode_at))
    return false;
  if (!has_shape && !InferShape(*owned, first_pending, opcode_at))
    return false;
  result = scope.computation->AddInstruction(std::move(owned));
  for (size_t i = first_pending; i < pending_.size(); ++i)
    pending_[i].instruction = result;
  for (size_t i = first_cross; i < cross_.size(); ++i)
    cross_[i].user = result;
  for (HloInstruction *pred : control_predecessors)
    pred->AddControlDependencyTo(result);
  if (nested)
    unnamed_.push_back(result);
  body_shape_text_ = shape_text;
  return true;
}

bool Parser::Finish() {
  if (module_->computation_count() == 0)
    return Fail(cur_, "module '" + module_->name() + "' has no computations");
  for (const InlineComputation &ic : inline_) {
    std::string base = (ic.instruction + "." + ic.attribute).str();
    std::string name = base;
    for (int n = 1; computations_by_name_.count(NameKey(name)); ++n)
      name = base + "." + std::to_string(n);
    ic.computation->SetName(std::move(name));
    computations_by_name_[NameKey(ic.computation->name())] = ic.computation;
  }
  for (const PendingReference &ref : pending_) {
    auto it = computations_by_name_.find(NameKey(ref.name));
    if (it == computations_by_name_.end())
      return Fail(ref.at, "instruction '" + ref.instruction->name() +
                              "' refers to unknown computation '" + ref.name + "'");
    ref.instruction->mutable_attributes()[ref.attribute].computations[ref.slot] = it->second;
  }
  // As in XLA: without an ENTRY marker the last computation is the entry.
  module_->set_entry_computation(entry_ ? entry_ : last_top_level_);
  UniquifyInstructionNames();
  return true;
}

// XLA makes instruction names unique across the module when it builds one,
// and passes rely on it; tests often reuse `p0` in every computation. The
// first definition in the text keeps its name, later ones get `name.N`.
void Parser::UniquifyInstructionNames() {
  // Every written name is reserved in the module by now, so names given to
  // in-place operands cannot take one that appears in the text.
  for (HloInstruction *inst : unnamed_)
    inst->SetNameView(module_->UniqueInstructionName(HloOpcodeString(inst->opcode())));
  // Every written name reserved once: nothing to rename.
  if (!has_duplicate_names_)
    return;
  llvm::sort(by_position_, [](const auto &a, const auto &b) { return a.first < b.first; });
  llvm::DenseSet<HloName, HloNameKeyInfo> seen;
  seen.reserve(static_cast<unsigned>(module_->instruction_count()));
  std::vector<HloInstruction *> duplicates;
  for (const auto &[open, computation] : by_position_)
    for (HloInstruction *inst : computation->instructions())
      if (!seen.insert(NameKey(inst->name())).second)
        duplicates.push_back(inst);
  // Every parsed name is reserved in the module already, so the new names
  // cannot take one that is written somewhere in the text.
  for (HloInstruction *inst : duplicates)
    inst->SetNameView(module_->UniqueInstructionName(inst->name()));
}

bool Parser::ParseComputations(bool inside) {
  // The instructions read here live in the module's slabs, not one heap
  // block each (HloInstructionArena.h).
  HloInstructionArenaScope arena(&module_->instruction_arena());
  if (inside && !ParsePieceHead())
    return false;
  while (true) {
    SkipTrivia();
    if (failed_)
      return false;
    if (cur_ == end_)
      return true;
    if (abandon_ && abandon_->load(std::memory_order_relaxed))
      return Fail(cur_, "abandoned");
    if (!ParseComputation())
      return false;
  }
}

llvm::Expected<std::unique_ptr<HloModule>> Parser::ParseModule() {
  // The module's name table is filled as names are read (ParseInstruction).
  module_->IndexInstructionNames();
  if (!ParseHeader() || !ParseStackFrameIndex())
    return TakeError();
  if (options_.pieces_joined)
    *options_.pieces_joined = 0;
  if (TryParsePieces() || ParseComputations())
    Finish();
  if (failed_)
    return TakeError();
  return std::move(module_);
}

} // namespace hlo_parser

using hlo_parser::Parser;

llvm::Expected<std::unique_ptr<HloModule>> ParseHloModule(llvm::StringRef text,
                                                          llvm::StringRef file_name) {
  return ParseHloModuleOwned(text.str(), file_name);
}

llvm::Expected<std::unique_ptr<HloModule>> ParseHloModuleOwned(std::string text,
                                                               llvm::StringRef file_name) {
  return ParseHloModuleOwned(std::move(text), file_name, HloParseOptions());
}

llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef file_name) {
  return ParseHloModuleOwned(std::move(buffer), file_name, HloParseOptions());
}

llvm::Expected<std::unique_ptr<HloModule>> ParseHloModuleOwned(std::string text,
                                                               llvm::StringRef file_name,
                                                               const HloParseOptions &options) {
  // Names and texts are 32-bit views (HloText).
  if (text.size() > UINT32_MAX)
    return makeError(file_name + ": input of 4 GiB or more is not supported");
  auto module = std::make_unique<HloModule>("");
  module->set_source(std::move(text));
  return Parser(std::move(module), file_name, options).ParseModule();
}

llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleOwned(std::unique_ptr<llvm::MemoryBuffer> buffer, llvm::StringRef file_name,
                    const HloParseOptions &options) {
  if (buffer->getBufferSize() > UINT32_MAX)
    return makeError(file_name + ": input of 4 GiB or more is not supported");
  auto module = std::make_unique<HloModule>("");
  module->set_source(std::move(buffer));
  return Parser(std::move(module), file_name, options).ParseModule();
}

} // namespace loom::hlo
