# The configure-time probe behind cmake/ClangLibstdcxxJson.cmake, shared with
# projects that use an installed loom (loomConfig.cmake includes this file).
#
# LLVM 14's llvm/Support/JSON.h does not compile as C++20 with clang 14 and
# libstdc++ 12 (llvm/llvm-project#55780; docs/robustness.md). A translation
# unit that includes it, directly or through loom/bir/json/*.h, then has to
# be compiled as C++17.
#
#   loom_json_needs_cxx17(<var>)       sets <var> ON when this toolchain has
#                                      the problem (cached as
#                                      LOOM_JSON_NEEDS_CXX17), OFF otherwise.
#   loom_json_cxx17_sources(<src>...)  compiles the given sources of the
#                                      current directory as C++17 when needed.

include_guard(GLOBAL)

function(loom_json_needs_cxx17 out)
  if(NOT DEFINED LOOM_JSON_NEEDS_CXX17)
    if(NOT LLVM_INCLUDE_DIRS)
      find_package(LLVM 14 REQUIRED CONFIG)
    endif()
    set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/LoomJsonProbe)
    file(WRITE ${dir}/probe.cpp
      "#include \"llvm/Support/JSON.h\"\nint main() { llvm::json::Array A; A.push_back(1); return A.size() == 1 ? 0 : 1; }\n")
    # Compile only: the probe needs no LLVM library.
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
    try_compile(ok ${dir}
      SOURCES ${dir}/probe.cpp
      CMAKE_FLAGS "-DINCLUDE_DIRECTORIES=${LLVM_INCLUDE_DIRS}"
      CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
    if(ok)
      set(LOOM_JSON_NEEDS_CXX17 OFF CACHE BOOL "Compile JSON.h users as C++17")
    else()
      set(LOOM_JSON_NEEDS_CXX17 ON CACHE BOOL "Compile JSON.h users as C++17")
    endif()
    message(STATUS "llvm/Support/JSON.h compiles as C++20: ${ok}")
  endif()
  set(${out} ${LOOM_JSON_NEEDS_CXX17} PARENT_SCOPE)
endfunction()

function(loom_json_cxx17_sources)
  loom_json_needs_cxx17(needed)
  if(needed)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "-std=c++17")
  endif()
endfunction()
