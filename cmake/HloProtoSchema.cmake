# Generates the C++ of lib/hlo/proto/hlo_module.proto with Debian's protoc
# into <build>/generated/loom/hlo/proto/ and compiles it into LoomHloProto.
# The generated code is not ours: it is compiled without warnings (-w) and
# its folder is a SYSTEM include directory, so neither gcc -Werror nor the
# clang-14 sanitizer build reports on protobuf's code. Only the files of
# lib/hlo/proto include the generated header; the public headers of
# include/loom/hlo/proto do not, so users of loom need no protoc.
set(_loom_proto_src ${PROJECT_SOURCE_DIR}/lib/hlo/proto/hlo_module.proto)
set(_loom_proto_out ${CMAKE_BINARY_DIR}/generated/loom/hlo/proto)
file(MAKE_DIRECTORY ${_loom_proto_out})
add_custom_command(
  OUTPUT ${_loom_proto_out}/hlo_module.pb.cc ${_loom_proto_out}/hlo_module.pb.h
  COMMAND protobuf::protoc --cpp_out=${_loom_proto_out}
          -I${PROJECT_SOURCE_DIR}/lib/hlo/proto ${_loom_proto_src}
  DEPENDS ${_loom_proto_src} protobuf::protoc
  COMMENT "protoc hlo_module.proto"
  VERBATIM)
target_sources(LoomHloProto PRIVATE ${_loom_proto_out}/hlo_module.pb.cc)
set_source_files_properties(${_loom_proto_out}/hlo_module.pb.cc PROPERTIES COMPILE_OPTIONS "-w")
target_include_directories(LoomHloProto SYSTEM PRIVATE ${CMAKE_BINARY_DIR}/generated)
# The schema, for `protoc --decode=xla.HloModuleProto` (test/hlo/proto).
set(LOOM_HLO_PROTO_SCHEMA ${_loom_proto_src} CACHE INTERNAL "")
