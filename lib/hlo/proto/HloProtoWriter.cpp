//===- HloProtoWriter.cpp - HloModule -> serialized HloModuleProto --------===//
//
//   HloModule m, replica_count=2          name: "m"  device_assignment { replica_count: 2 ... }
//   ENTRY %e (p: f32[2]) -> f32[2] {  ->  computations { name: "e" id: 1 root_id: 2
//     %p = f32[2]{0} parameter(0)           instructions { name: "p" opcode: "parameter" id: 1 ... }
//     ROOT %n = f32[2]{0} negate(%p)        instructions { name: "n" opcode: "negate" id: 2
//   }                                                      operand_ids: [1] } }
//
// Computations go callees first and instructions operands first, as XLA
// requires. Every part is encoded into XLA's fields; where the fields would
// not print back the same text, the text also goes to loom's own fields
// (docs/hlo-proto.md).
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/proto/HloProto.h"

#include "HloProtoInternal.h"

#include "loom/hlo/ir/HloAttributes.h"
#include "loom/hlo/parser/HloParser.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace loom::hlo {

using namespace proto_internal;

namespace {

// Ids: the ones the module has where they are unique, fresh ones after the
// largest otherwise, so a module read from a proto keeps its ids and one
// read from text gets 1, 2, 3, ...
template <typename T> class IdAssigner {
public:
  void Reserve(const T *object, int64_t id) {
    if (id >= 0 && used_.insert(id).second) {
      ids_[object] = id;
      next_ = std::max(next_, id + 1);
    }
  }
  int64_t Get(const T *object) {
    auto it = ids_.find(object);
    if (it != ids_.end())
      return it->second;
    int64_t id = next_++;
    ids_[object] = id;
    return id;
  }

private:
  llvm::DenseMap<const T *, int64_t> ids_;
  llvm::DenseSet<int64_t> used_;
  int64_t next_ = 1;
};

bool SameAttribute(const HloInstruction::Attribute &original, const DerivedAttribute &derived,
                   IdAssigner<HloComputation> &computation_ids) {
  if (original.name != llvm::StringRef(derived.name) || original.kind != derived.kind)
    return false;
  switch (original.kind) {
  case HloInstruction::AttributeKind::kText:
    return original.value == llvm::StringRef(derived.value);
  case HloInstruction::AttributeKind::kComputation:
  case HloInstruction::AttributeKind::kComputationList:
    if (original.computations.size() != derived.computation_ids.size())
      return false;
    for (size_t i = 0; i < original.computations.size(); ++i)
      if (computation_ids.Get(original.computations[i]) != derived.computation_ids[i])
        return false;
    return true;
  case HloInstruction::AttributeKind::kControlPredecessors:
    return true;
  }
  return false;
}

class Writer {
public:
  explicit Writer(HloProtoWriteStats *stats) : stats_(stats) {}

  void Write(const HloModule &module, xla::HloModuleProto *out) {
    std::vector<HloComputation *> computations = module.MakeComputationPostOrder();
    for (HloComputation *c : computations) {
      computation_ids_.Reserve(c, c->unique_id());
      for (HloInstruction *inst : c->instructions())
        instruction_ids_.Reserve(inst, inst->unique_id());
    }
    out->set_name(module.name());
    for (HloComputation *c : computations)
      WriteComputation(*c, out->add_computations());
    if (HloComputation *entry = module.entry_computation()) {
      out->set_entry_computation_name(entry->name());
      out->set_entry_computation_id(computation_ids_.Get(entry));
    }
    WriteHeader(module, computations, out);
    if (!module.stack_frame_index().empty())
      out->set_loom_stack_frame_index_text(module.stack_frame_index());
  }

private:
  void WriteComputation(const HloComputation &c, xla::HloComputationProto *out) {
    out->set_name(c.name());
    out->set_id(computation_ids_.Get(&c));
    for (HloInstruction *inst : c.MakeInstructionPostOrder())
      WriteInstruction(*inst, out->add_instructions());
    if (c.root_instruction())
      out->set_root_id(instruction_ids_.Get(c.root_instruction()));
    xla::ProgramShapeProto *ps = out->mutable_program_shape();
    for (HloInstruction *p : c.parameter_instructions()) {
      if (!p)
        continue;
      ShapeToProto(p->shape(), ps->add_parameters(), nullptr);
      ps->add_parameter_names(p->name().str());
    }
    if (c.root_instruction())
      ShapeToProto(c.root_instruction()->shape(), ps->mutable_result(), nullptr);
    // XLA's computations run on the "main" thread unless the text names
    // another one (`, execution_thread="host"`).
    llvm::StringRef trailer = c.trailer();
    std::string thread;
    llvm::StringRef rest = trailer;
    if (rest.consume_front(", execution_thread=")) {
      if (std::optional<std::string> t = UnquoteString(rest);
          t && Quote(*t) == rest && IsUtf8(*t))
        thread = *t;
    }
    if (trailer.empty()) {
      out->set_execution_thread("main");
    } else if (!thread.empty() && thread != "main") {
      out->set_execution_thread(thread);
    } else {
      out->set_execution_thread("main");
      out->set_loom_trailer(trailer.str());
    }
  }

  void WriteInstruction(const HloInstruction &inst, xla::HloInstructionProto *out) {
    if (stats_)
      ++stats_->instructions;
    HloOpcode opcode = inst.opcode();
    out->set_name(inst.name().str());
    out->set_opcode(inst.OpcodeText());
    ShapeToProto(inst.shape(), out->mutable_shape(), stats_ ? &stats_->verbatim_layouts : nullptr);
    out->set_id(instruction_ids_.Get(&inst));
    for (const HloInstruction *op : inst.operands())
      out->add_operand_ids(instruction_ids_.Get(op));
    for (const HloInstruction *pred : inst.control_predecessors())
      out->add_control_predecessor_ids(instruction_ids_.Get(pred));
    if (opcode == HloOpcode::kParameter)
      out->set_parameter_number(inst.parameter_number());
    if (opcode == HloOpcode::kConstant)
      WriteLiteral(inst, out);

    EncodeImplicitDefaults(opcode, out);
    std::vector<std::pair<llvm::StringRef, llvm::SmallVector<int64_t, 2>>> called;
    for (const HloInstruction::Attribute &a : inst.attributes()) {
      switch (a.kind) {
      case HloInstruction::AttributeKind::kText:
        EncodeAttribute(opcode, a.name, a.value, out);
        break;
      case HloInstruction::AttributeKind::kComputation:
      case HloInstruction::AttributeKind::kComputationList: {
        llvm::SmallVector<int64_t, 2> ids;
        for (HloComputation *c : a.computations)
          ids.push_back(computation_ids_.Get(c));
        called.push_back({a.name, std::move(ids)});
        break;
      }
      case HloInstruction::AttributeKind::kControlPredecessors:
        break;
      }
    }
    for (int64_t id : CalledComputationIds(opcode, called))
      out->add_called_computation_ids(id);

    DeriveContext context{opcode, IsPredicated(inst)};
    std::vector<DerivedAttribute> derived = DeriveAttributes(*out, context);
    llvm::ArrayRef<HloInstruction::Attribute> original = inst.attributes();
    bool same = derived.size() == original.size();
    for (size_t i = 0; same && i < original.size(); ++i)
      same = SameAttribute(original[i], derived[i], computation_ids_);
    if (same)
      return;
    // loom's list: the text order, each value taken from the fields where
    // they give it and kept verbatim where they do not.
    if (stats_)
      ++stats_->attribute_lists;
    out->set_loom_attributes_verbatim(true);
    for (const HloInstruction::Attribute &a : original) {
      xla::LoomAttribute *la = out->add_loom_attributes();
      la->set_name(a.name.str());
      switch (a.kind) {
      case HloInstruction::AttributeKind::kText: {
        la->set_kind(xla::LoomAttribute::TEXT);
        bool derivable = false;
        for (const DerivedAttribute &d : derived)
          derivable |= d.kind == a.kind && a.name == llvm::StringRef(d.name) &&
                       a.value == llvm::StringRef(d.value);
        if (!derivable) {
          la->set_has_value(true);
          la->set_value(a.value.str());
          if (stats_) {
            ++stats_->verbatim_attributes;
            stats_->verbatim_attribute_names.push_back(a.name.str());
          }
        }
        break;
      }
      case HloInstruction::AttributeKind::kComputation:
      case HloInstruction::AttributeKind::kComputationList:
        la->set_kind(a.kind == HloInstruction::AttributeKind::kComputation
                         ? xla::LoomAttribute::COMPUTATION
                         : xla::LoomAttribute::COMPUTATION_LIST);
        for (HloComputation *c : a.computations)
          la->add_computation_ids(computation_ids_.Get(c));
        break;
      case HloInstruction::AttributeKind::kControlPredecessors:
        la->set_kind(xla::LoomAttribute::CONTROL_PREDECESSORS);
        break;
      }
    }
  }

  static bool IsPredicated(const HloInstruction &inst) {
    return inst.opcode() == HloOpcode::kConditional && inst.operand_count() > 0 &&
           inst.operand(0)->shape().element_type() == PrimitiveType::PRED;
  }

  void WriteLiteral(const HloInstruction &inst, xla::HloInstructionProto *out) {
    llvm::StringRef text = inst.literal_text();
    xla::LiteralProto literal;
    if (LiteralToProto(inst.shape(), text, &literal)) {
      llvm::Expected<std::string> back = LiteralTextFromProto(literal, inst.shape());
      bool exact = back && *back == text;
      if (!back)
        llvm::consumeError(back.takeError());
      *out->mutable_literal() = std::move(literal);
      if (exact)
        return;
    }
    out->set_loom_literal_text(text.str());
    if (stats_)
      ++stats_->verbatim_literals;
  }

  void WriteHeader(const HloModule &module, llvm::ArrayRef<HloComputation *> computations,
                   xla::HloModuleProto *out) {
    HeaderState state;
    bool has_layout = false;
    for (const HloModule::HeaderAttribute &a : module.header_attributes()) {
      if (a.name == "entry_computation_layout") {
        has_layout = !out->has_host_program_shape() &&
                     EncodeEntryLayout(a.value, out->mutable_host_program_shape());
        if (!has_layout)
          out->clear_host_program_shape();
        continue;
      }
      EncodeHeaderAttribute(a.name, a.value, out, &state);
    }
    // XLA needs the entry's program shape: without a written layout, the
    // entry computation's own.
    if (!has_layout && module.entry_computation())
      *out->mutable_host_program_shape() =
          out->computations(ComputationIndex(module.entry_computation(), computations))
              .program_shape();
    if (state.replica_count || state.num_partitions) {
      int64_t replicas = state.replica_count.value_or(1);
      int64_t partitions = state.num_partitions.value_or(1);
      xla::DeviceAssignmentProto *da = out->mutable_device_assignment();
      da->set_replica_count(static_cast<int32_t>(replicas));
      da->set_computation_count(static_cast<int32_t>(partitions));
      // Device d is replica d / partitions, partition d % partitions
      // (docs/hlo-run.md); a launch too large to list keeps the counts.
      if (replicas * partitions <= (int64_t(1) << 16))
        for (int64_t p = 0; p < partitions; ++p) {
          xla::DeviceAssignmentProto::ComputationDevice *cd = da->add_computation_devices();
          for (int64_t r = 0; r < replicas; ++r)
            cd->add_replica_device_ids(r * partitions + p);
        }
    }
    if (state.scheduled) {
      std::vector<HloComputation *> nonfusion = module.MakeNonfusionComputations();
      for (HloComputation *c : nonfusion) {
        auto &sequence = (*out->mutable_schedule()->mutable_sequences())[computation_ids_.Get(c)];
        for (HloInstruction *inst : c->MakeInstructionPostOrder())
          sequence.add_instruction_ids(instruction_ids_.Get(inst));
      }
    }
    std::vector<std::pair<std::string, std::string>> derived = DeriveHeader(*out);
    llvm::ArrayRef<HloModule::HeaderAttribute> original = module.header_attributes();
    bool same = derived.size() == original.size();
    for (size_t i = 0; same && i < original.size(); ++i)
      same = derived[i].first == original[i].name && derived[i].second == original[i].value;
    if (same)
      return;
    if (stats_)
      stats_->verbatim_header = true;
    out->set_loom_header_verbatim(true);
    for (const HloModule::HeaderAttribute &a : original) {
      xla::LoomHeaderAttribute *h = out->add_loom_header_attributes();
      h->set_name(a.name);
      h->set_value(a.value);
    }
  }

  static int ComputationIndex(const HloComputation *c,
                              llvm::ArrayRef<HloComputation *> computations) {
    for (size_t i = 0; i < computations.size(); ++i)
      if (computations[i] == c)
        return static_cast<int>(i);
    return 0;
  }

  // `{(f32[2]{0}, s32[])->f32[2]{0}}`.
  static bool EncodeEntryLayout(llvm::StringRef text, xla::ProgramShapeProto *out);

  HloProtoWriteStats *stats_;
  IdAssigner<HloComputation> computation_ids_;
  IdAssigner<HloInstruction> instruction_ids_;
};

bool Writer::EncodeEntryLayout(llvm::StringRef text, xla::ProgramShapeProto *out) {
  text = text.trim();
  if (!text.consume_front("{") || !text.consume_back("}"))
    return false;
  // The parameters are written as a tuple shape's elements; the arrow
  // follows their closing parenthesis.
  if (!text.startswith("("))
    return false;
  int depth = 0;
  size_t close = llvm::StringRef::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(')
      ++depth;
    else if (text[i] == ')' && --depth == 0) {
      close = i;
      break;
    }
  }
  if (close == llvm::StringRef::npos || !text.substr(close + 1).startswith("->"))
    return false;
  llvm::Expected<Shape> params = ParseShape(text.substr(0, close + 1));
  llvm::Expected<Shape> result = ParseShape(text.substr(close + 3));
  if (!params || !result) {
    if (!params)
      llvm::consumeError(params.takeError());
    if (!result)
      llvm::consumeError(result.takeError());
    return false;
  }
  for (const Shape &p : params->tuple_shapes())
    ShapeToProto(p, out->add_parameters(), nullptr);
  ShapeToProto(*result, out->mutable_result(), nullptr);
  return true;
}

} // namespace

std::string SerializeHloModuleProto(const HloModule &module, HloProtoWriteStats *stats) {
  xla::HloModuleProto proto;
  Writer(stats).Write(module, &proto);
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    // Map entries (the schedule, frontend attributes) sorted by key: the
    // same module gives the same bytes.
    coded.SetSerializationDeterministic(true);
    proto.SerializeToCodedStream(&coded);
  }
  return bytes;
}

} // namespace loom::hlo
