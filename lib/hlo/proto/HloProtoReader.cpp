//===- HloProtoReader.cpp - Serialized HloModuleProto -> HloModule --------===//
//
//   computations { name: "e" id: 1 root_id: 2         ENTRY %e (p: f32[2]) -> f32[2] {
//     instructions { name: "p" opcode: "parameter"  ->   %p = f32[2]{0} parameter(0)
//                    id: 1 ... }                         ROOT %n = f32[2]{0} negate(%p)
//     instructions { name: "n" opcode: "negate"        }
//                    id: 2 operand_ids: [1] } }
//
// The bytes are parsed by protobuf; then every id is resolved and checked
// before the module is built: operands and control predecessors name
// earlier instructions of the same computation, called computations exist
// and call no cycle, shapes agree with their layouts. Errors name the file,
// the computation and the instruction.
//
//===----------------------------------------------------------------------===//

#include "loom/hlo/proto/HloProto.h"

#include "HloProtoInternal.h"

#include "loom/hlo/parser/HloParser.h"
#include "loom/support/Error.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include <mutex>

namespace loom::hlo {

using namespace proto_internal;

namespace {

// protobuf reports why a parse failed (invalid UTF-8 in a string, ...) to
// its log, which would go to stderr; the reader puts it in its error.
thread_local std::string *protobuf_log_sink = nullptr;
void CaptureProtobufLog(google::protobuf::LogLevel, const char *, int, const std::string &msg) {
  if (protobuf_log_sink && protobuf_log_sink->empty())
    *protobuf_log_sink = msg;
}

template <typename Message>
llvm::Error ParseMessage(llvm::StringRef bytes, Message *out, llvm::StringRef what) {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(CaptureProtobufLog); });
  std::string log;
  protobuf_log_sink = &log;
  bool ok = bytes.size() <= static_cast<size_t>(INT32_MAX) &&
            out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  protobuf_log_sink = nullptr;
  if (ok)
    return llvm::Error::success();
  std::string reason = log.empty() ? "truncated or malformed protobuf data" : log;
  return makeError("not a valid " + what + ": " + reason);
}

// A field of our schema that arrived with another wire type lands among the
// unknown fields; protobuf accepts it silently, the reader refuses it.
llvm::Error CheckWireTypes(const google::protobuf::Message &message, std::string &path,
                           int depth) {
  const google::protobuf::Reflection *reflection = message.GetReflection();
  const google::protobuf::Descriptor *descriptor = message.GetDescriptor();
  const google::protobuf::UnknownFieldSet &unknown = reflection->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &u = unknown.field(i);
    if (const google::protobuf::FieldDescriptor *f = descriptor->FindFieldByNumber(u.number()))
      return makeError(path + descriptor->name() + "." + f->name() + " (field " +
                       llvm::Twine(u.number()) + ") has the wrong wire type");
  }
  if (depth > kMaxProtoDepth)
    return llvm::Error::success();
  std::vector<const google::protobuf::FieldDescriptor *> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor *f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    if (f->is_repeated()) {
      int n = reflection->FieldSize(message, f);
      for (int j = 0; j < n; ++j)
        if (llvm::Error err =
                CheckWireTypes(reflection->GetRepeatedMessage(message, f, j), path, depth + 1))
          return err;
    } else if (llvm::Error err =
                   CheckWireTypes(reflection->GetMessage(message, f), path, depth + 1)) {
      return err;
    }
  }
  return llvm::Error::success();
}

// Whether `bytes` starts with field 1 holding a message that is itself a
// module with computations: then it is one of the two wrappers, whose
// field 1 is the module, and not a module, whose field 1 is its name.
bool StartsWithWrappedModule(llvm::StringRef bytes) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            static_cast<int>(std::min<size_t>(bytes.size(), INT32_MAX)));
  uint32_t tag = in.ReadTag();
  if (tag != ((1u << 3) | 2u))
    return false;
  uint32_t length;
  if (!in.ReadVarint32(&length) || length > bytes.size())
    return false;
  const void *data;
  int size;
  if (!in.GetDirectBufferPointer(&data, &size) || static_cast<uint32_t>(size) < length)
    return false;
  xla::HloModuleProto probe;
  std::string log;
  protobuf_log_sink = &log;
  bool ok = probe.ParseFromArray(data, static_cast<int>(length));
  protobuf_log_sink = nullptr;
  return ok && probe.computations_size() > 0;
}

// "negate-start" is XLA's async sugar for async-start wrapping negate
// (docs/hlo-text-format.md), as the parser reads it.
bool ParseOpcode(llvm::StringRef text, HloOpcode &opcode, std::optional<HloOpcode> &wrapped) {
  wrapped.reset();
  if (std::optional<HloOpcode> op = StringToHloOpcode(text)) {
    opcode = *op;
    return true;
  }
  static const std::pair<llvm::StringRef, HloOpcode> kSuffixes[] = {
      {"-start", HloOpcode::kAsyncStart},
      {"-update", HloOpcode::kAsyncUpdate},
      {"-done", HloOpcode::kAsyncDone}};
  for (const auto &[suffix, async] : kSuffixes) {
    if (!text.endswith(suffix))
      continue;
    if (std::optional<HloOpcode> op = StringToHloOpcode(text.drop_back(suffix.size()))) {
      opcode = async;
      wrapped = *op;
      return true;
    }
  }
  return false;
}

// Names as the text form spells them (alnum, '_', '.', '-'), so that a
// module read from a proto prints to text that parses back.
bool IsTextName(llvm::StringRef name, bool allow_dot = true) {
  if (name.empty())
    return false;
  for (char ch : name)
    if (!llvm::isAlnum(ch) && ch != '_' && ch != '-' && !(allow_dot && ch == '.'))
      return false;
  return true;
}

class Reader {
public:
  Reader(llvm::StringRef file_name) : file_(file_name) {}

  llvm::Expected<std::unique_ptr<HloModule>> Read(const xla::HloModuleProto &proto) {
    if (proto.name().empty())
      return Fail("the module has no name");
    if (!IsTextName(proto.name()))
      return Fail("the module name '" + proto.name() +
                  "' has characters other than letters, digits, '_', '.' and '-'");
    auto module = std::make_unique<HloModule>(proto.name());
    if (proto.computations_size() == 0)
      return Fail("module '" + proto.name() + "' has no computations");

    // Computations first: instructions call them by id, in any order.
    for (const xla::HloComputationProto &cp : proto.computations()) {
      if (cp.name().empty())
        return Fail("a computation of module '" + proto.name() + "' has no name");
      if (!IsTextName(cp.name()))
        return Fail("the computation name '" + cp.name() +
                    "' has characters other than letters, digits, '_', '.' and '-'");
      if (module->GetComputationWithName(cp.name()))
        return Fail("two computations are named '" + cp.name() + "'");
      if (!computations_.insert({cp.id(), nullptr}).second)
        return Fail("computation '" + cp.name() + "': id " + llvm::Twine(cp.id()) +
                    " is the id of another computation too");
      auto c = std::make_unique<HloComputation>(cp.name());
      c->set_unique_id(cp.id());
      computations_[cp.id()] = module->AddComputation(std::move(c));
    }
    if (llvm::Error err = CheckCalls(proto))
      return err;
    for (const xla::HloComputationProto &cp : proto.computations())
      if (llvm::Error err = ReadComputation(cp, *computations_[cp.id()]))
        return err;

    HloComputation *entry = nullptr;
    if (auto it = computations_.find(proto.entry_computation_id());
        it != computations_.end() && (proto.entry_computation_id() != 0 ||
                                      proto.entry_computation_name().empty() ||
                                      it->second->name() == proto.entry_computation_name()))
      entry = it->second;
    else if (!proto.entry_computation_name().empty())
      entry = module->GetComputationWithName(proto.entry_computation_name());
    else if (proto.entry_computation_id() == 0)
      entry = computations_[proto.computations(proto.computations_size() - 1).id()];
    if (!entry)
      return Fail("the entry computation (id " + llvm::Twine(proto.entry_computation_id()) +
                  ", name '" + proto.entry_computation_name() + "') is not in the module");
    module->set_entry_computation(entry);

    if (proto.loom_header_verbatim() || proto.loom_header_attributes_size()) {
      for (const xla::LoomHeaderAttribute &a : proto.loom_header_attributes())
        module->mutable_header_attributes().push_back({a.name(), a.value()});
    } else {
      for (auto &[name, value] : DeriveHeader(proto))
        module->mutable_header_attributes().push_back({name, value});
    }
    module->set_stack_frame_index(proto.loom_stack_frame_index_text());
    return module;
  }

private:
  llvm::Error Fail(const llvm::Twine &message) { return makeError(file_ + ": " + message); }
  llvm::Error Fail(const xla::HloComputationProto &c, const xla::HloInstructionProto &i,
                   const llvm::Twine &message) {
    return Fail("computation '" + c.name() + "', instruction '" + i.name() + "' (id " +
                llvm::Twine(i.id()) + "): " + message);
  }

  // Every called id exists, and no computation reaches itself.
  llvm::Error CheckCalls(const xla::HloModuleProto &proto) {
    llvm::DenseMap<int64_t, int> index;
    for (int i = 0; i < proto.computations_size(); ++i)
      index[proto.computations(i).id()] = i;
    for (const xla::HloComputationProto &cp : proto.computations())
      for (const xla::HloInstructionProto &ip : cp.instructions()) {
        for (int64_t id : ip.called_computation_ids())
          if (!index.count(id))
            return Fail(cp, ip, "calls computation id " + llvm::Twine(id) +
                                    ", which the module does not have");
        for (const xla::LoomAttribute &a : ip.loom_attributes())
          for (int64_t id : a.computation_ids())
            if (!index.count(id))
              return Fail(cp, ip, "attribute '" + a.name() + "' names computation id " +
                                      llvm::Twine(id) + ", which the module does not have");
      }
    // Depth-first with an explicit stack: 0 unvisited, 1 on the path, 2 done.
    std::vector<int> state(proto.computations_size(), 0);
    struct Frame {
      int computation, instruction, call;
    };
    for (int root = 0; root < proto.computations_size(); ++root) {
      if (state[root])
        continue;
      std::vector<Frame> stack{{root, 0, 0}};
      state[root] = 1;
      while (!stack.empty()) {
        Frame &f = stack.back();
        const xla::HloComputationProto &cp = proto.computations(f.computation);
        if (f.instruction >= cp.instructions_size()) {
          state[f.computation] = 2;
          stack.pop_back();
          continue;
        }
        const xla::HloInstructionProto &ip = cp.instructions(f.instruction);
        if (f.call >= ip.called_computation_ids_size()) {
          ++f.instruction;
          f.call = 0;
          continue;
        }
        int callee = index[ip.called_computation_ids(f.call++)];
        if (state[callee] == 1)
          return Fail(cp, ip, "calls computation '" + proto.computations(callee).name() +
                                  "', which calls '" + cp.name() +
                                  "' (a computation cycle)");
        if (state[callee] == 0) {
          state[callee] = 1;
          stack.push_back({callee, 0, 0});
        }
      }
    }
    return llvm::Error::success();
  }

  llvm::Error ReadComputation(const xla::HloComputationProto &cp, HloComputation &c) {
    if (cp.instructions_size() == 0)
      return Fail("computation '" + cp.name() + "' has no instructions");
    llvm::DenseMap<int64_t, HloInstruction *> by_id;
    std::vector<HloInstruction *> made;
    for (const xla::HloInstructionProto &ip : cp.instructions()) {
      llvm::Expected<HloInstruction *> inst = ReadInstruction(cp, ip, c, by_id);
      if (!inst)
        return inst.takeError();
      made.push_back(*inst);
    }
    // Control edges may point forward: resolved once all are made.
    for (int i = 0; i < cp.instructions_size(); ++i) {
      const xla::HloInstructionProto &ip = cp.instructions(i);
      for (int64_t id : ip.control_predecessor_ids()) {
        auto it = by_id.find(id);
        if (it == by_id.end())
          return Fail(cp, ip, "control predecessor id " + llvm::Twine(id) +
                                  " is not an instruction of computation '" + cp.name() + "'");
        if (it->second == made[i])
          return Fail(cp, ip, "is its own control predecessor");
        it->second->AddControlDependencyTo(made[i]);
      }
    }
    auto root = by_id.find(cp.root_id());
    if (root == by_id.end())
      return Fail("computation '" + cp.name() + "': root id " + llvm::Twine(cp.root_id()) +
                  " is not one of its instructions");
    c.set_root_instruction(root->second);
    if (!cp.loom_trailer().empty())
      c.set_trailer(cp.loom_trailer());
    else if (!cp.execution_thread().empty() && cp.execution_thread() != "main")
      c.set_trailer(", execution_thread=" + Quote(cp.execution_thread()));
    return llvm::Error::success();
  }

  llvm::Expected<HloInstruction *>
  ReadInstruction(const xla::HloComputationProto &cp, const xla::HloInstructionProto &ip,
                  HloComputation &c, llvm::DenseMap<int64_t, HloInstruction *> &by_id) {
    HloOpcode opcode;
    std::optional<HloOpcode> wrapped;
    if (!ParseOpcode(ip.opcode(), opcode, wrapped))
      return Fail(cp, ip, "unknown opcode '" + ip.opcode() + "'");
    if (!ip.name().empty() && !IsTextName(ip.name()))
      return Fail(cp, ip, "the name has characters other than letters, digits, '_', '.' and '-'");
    if (by_id.count(ip.id()))
      return Fail(cp, ip, "id " + llvm::Twine(ip.id()) +
                              " is the id of another instruction of the computation too");
    llvm::Expected<Shape> shape = ShapeFromProto(ip.shape());
    if (!shape)
      return Fail(cp, ip, "shape: " + llvm::toString(shape.takeError()));
    llvm::SmallVector<HloInstruction *, 4> operands;
    for (int i = 0; i < ip.operand_ids_size(); ++i) {
      auto it = by_id.find(ip.operand_ids(i));
      if (it == by_id.end())
        return Fail(cp, ip, "operand " + llvm::Twine(i) + " has id " +
                                llvm::Twine(ip.operand_ids(i)) +
                                ", which no earlier instruction of computation '" + cp.name() +
                                "' has");
      operands.push_back(it->second);
    }
    std::unique_ptr<HloInstruction> inst =
        HloInstruction::Create(opcode, std::move(*shape), operands, ip.name());
    inst->set_async_wrapped_opcode(wrapped);
    inst->set_unique_id(ip.id());
    if (opcode == HloOpcode::kParameter) {
      // The number indexes the computation's parameter table.
      if (ip.parameter_number() < 0 || ip.parameter_number() >= cp.instructions_size())
        return Fail(cp, ip, "parameter number " + llvm::Twine(ip.parameter_number()) +
                                " is out of range for a computation of " +
                                llvm::Twine(cp.instructions_size()) + " instructions");
      inst->set_parameter_number(ip.parameter_number());
    }
    if (opcode == HloOpcode::kConstant) {
      if (!ip.loom_literal_text().empty()) {
        inst->set_literal_text(HloText(ip.loom_literal_text()));
      } else if (ip.has_literal()) {
        llvm::Expected<std::string> text = LiteralTextFromProto(ip.literal(), inst->shape());
        if (!text)
          return Fail(cp, ip, "literal: " + llvm::toString(text.takeError()));
        inst->set_literal_text(HloText(*text));
      } else {
        return Fail(cp, ip, "a constant without a literal");
      }
    }
    if (llvm::Error err = ReadAttributes(cp, ip, opcode, operands, *inst))
      return err;
    HloInstruction *added = c.AddInstruction(std::move(inst));
    by_id[ip.id()] = added;
    return added;
  }

  llvm::Error ReadAttributes(const xla::HloComputationProto &cp,
                             const xla::HloInstructionProto &ip, HloOpcode opcode,
                             llvm::ArrayRef<HloInstruction *> operands, HloInstruction &inst) {
    DeriveContext context{opcode, opcode == HloOpcode::kConditional && !operands.empty() &&
                                      operands[0]->shape().element_type() == PrimitiveType::PRED};
    std::vector<DerivedAttribute> derived = DeriveAttributes(ip, context);
    auto &attributes = inst.mutable_attributes();
    auto add = [&](llvm::StringRef name, HloInstruction::AttributeKind kind,
                   llvm::StringRef value, llvm::ArrayRef<int64_t> ids) {
      HloInstruction::Attribute a;
      a.name = name;
      a.kind = kind;
      if (kind == HloInstruction::AttributeKind::kText)
        a.value = value;
      for (int64_t id : ids)
        a.computations.push_back(computations_[id]);
      attributes.push_back(std::move(a));
    };
    if (!ip.loom_attributes_verbatim() && ip.loom_attributes_size() == 0) {
      for (const DerivedAttribute &d : derived)
        add(d.name, d.kind, d.value, d.computation_ids);
      return llvm::Error::success();
    }
    using Kind = HloInstruction::AttributeKind;
    for (const xla::LoomAttribute &la : ip.loom_attributes()) {
      if (!IsTextName(la.name(), /*allow_dot=*/false))
        return Fail(cp, ip, "attribute name '" + la.name() + "' is not one the text form takes");
      switch (la.kind()) {
      case xla::LoomAttribute::TEXT: {
        if (la.has_value()) {
          add(la.name(), Kind::kText, la.value(), {});
          break;
        }
        const DerivedAttribute *found = nullptr;
        for (const DerivedAttribute &d : derived)
          if (d.kind == Kind::kText && d.name == la.name())
            found = &d;
        if (!found)
          return Fail(cp, ip, "attribute '" + la.name() +
                                  "' has no value and none of the fields gives one");
        add(la.name(), Kind::kText, found->value, {});
        break;
      }
      case xla::LoomAttribute::COMPUTATION:
      case xla::LoomAttribute::COMPUTATION_LIST: {
        llvm::SmallVector<int64_t, 2> ids(la.computation_ids().begin(),
                                          la.computation_ids().end());
        if (ids.empty())
          return Fail(cp, ip, "attribute '" + la.name() + "' names no computation");
        add(la.name(),
            la.kind() == xla::LoomAttribute::COMPUTATION ? Kind::kComputation
                                                         : Kind::kComputationList,
            "", ids);
        break;
      }
      case xla::LoomAttribute::CONTROL_PREDECESSORS:
        add(la.name(), Kind::kControlPredecessors, "", {});
        break;
      default:
        return Fail(cp, ip, "attribute '" + la.name() + "' has an unknown kind " +
                                llvm::Twine(static_cast<int>(la.kind())));
      }
    }
    return llvm::Error::success();
  }

  std::string file_;
  llvm::DenseMap<int64_t, HloComputation *> computations_;
};

} // namespace

llvm::Expected<std::unique_ptr<HloModule>>
ParseHloModuleProto(llvm::StringRef bytes, llvm::StringRef file_name, HloProtoReadInfo *info) {
  HloProtoReadInfo local;
  HloProtoReadInfo &out_info = info ? *info : local;
  xla::HloModuleProtoWithConfig wrapper;
  const xla::HloModuleProto *module_proto = nullptr;
  xla::HloModuleProto bare;
  std::string path;
  auto located = [&](llvm::Error err) {
    return makeError(file_name + ": " + llvm::toString(std::move(err)));
  };
  if (StartsWithWrappedModule(bytes)) {
    if (llvm::Error err = ParseMessage(bytes, &wrapper, "HloProto or HloModuleProtoWithConfig"))
      return located(std::move(err));
    if (llvm::Error err = CheckWireTypes(wrapper, path, 0))
      return located(std::move(err));
    out_info.kind = wrapper.has_config() ? HloProtoKind::kModuleWithConfig : HloProtoKind::kHloProto;
    module_proto = &wrapper.hlo_module();
  } else {
    if (llvm::Error err = ParseMessage(bytes, &bare, "HloModuleProto"))
      return located(std::move(err));
    if (llvm::Error err = CheckWireTypes(bare, path, 0))
      return located(std::move(err));
    module_proto = &bare;
    out_info.kind = HloProtoKind::kModule;
  }
  llvm::Expected<std::unique_ptr<HloModule>> module = Reader(file_name).Read(*module_proto);
  if (!module)
    return module.takeError();
  HloModule &m = **module;
  out_info.launch_size_source.clear();
  if (m.FindHeaderAttribute("replica_count") || m.FindHeaderAttribute("num_partitions"))
    out_info.launch_size_source =
        module_proto->loom_header_verbatim() ? "header" : "device assignment";
  // The launch size: the config of an HloModuleProtoWithConfig wins over
  // the device assignment; without either the tools' flags decide
  // (docs/hlo-proto.md, "The launch size").
  if (out_info.kind == HloProtoKind::kModuleWithConfig) {
    const xla::HloModuleConfigProto &config = wrapper.config();
    bool any = false;
    auto apply = [&](llvm::StringRef name, int64_t value) {
      if (value < 1)
        return;
      if (value != 1 || m.FindHeaderAttribute(name))
        m.SetHeaderAttribute(name, std::to_string(value));
      any = true;
    };
    apply("replica_count", config.replica_count());
    apply("num_partitions", config.num_partitions());
    if (any)
      out_info.launch_size_source = "config";
  }
  // What a proto holds as text (loom's verbatim fields, and XLA's string
  // fields the text form prints unquoted: directions, fusion kinds, frontend
  // attribute keys, ...) may be anything; the module must still be one the
  // text form can carry: printed and parsed back, it must print the same.
  std::string text = m.ToString();
  llvm::Expected<std::unique_ptr<HloModule>> reparsed =
      ParseHloModule(text, (file_name + " (as text)").str());
  if (!reparsed)
    return makeError(file_name + ": the module's text form does not parse: " +
                     llvm::toString(reparsed.takeError()));
  if ((*reparsed)->ToString() != text)
    return makeError(file_name +
                     ": the module's text form reads back as another module (an attribute "
                     "value that is not one value of the text form?)");
  return module;
}

bool LooksLikeHloText(llvm::StringRef bytes) {
  while (true) {
    bytes = bytes.ltrim(" \t\r\n");
    if (bytes.consume_front("//")) {
      bytes = bytes.drop_until([](char ch) { return ch == '\n'; });
    } else if (bytes.consume_front("/*")) {
      size_t end = bytes.find("*/");
      if (end == llvm::StringRef::npos)
        return false;
      bytes = bytes.drop_front(end + 2);
    } else {
      return bytes.startswith("HloModule");
    }
  }
}

bool LooksLikeHloProto(llvm::StringRef file_name, llvm::StringRef bytes) {
  if (LooksLikeHloText(bytes))
    return false;
  if (file_name.endswith(".pb"))
    return true;
  // A serialized module starts with field 1 (its name, or the wrapped
  // module), 2 or 3, each length-delimited: 0x0a, 0x12 or 0x1a; and its
  // tags and lengths soon give control characters no HLO text has.
  if (bytes.empty() || (bytes[0] != 0x0a && bytes[0] != 0x12 && bytes[0] != 0x1a))
    return false;
  llvm::StringRef head = bytes.take_front(4096);
  return llvm::any_of(head, [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
  });
}

} // namespace loom::hlo
