# Building loom with clang 14 on libstdc++ 12 (Debian bookworm's pair).
#
# LLVM 14's llvm/Support/JSON.h defines the members of json::Array inside the
# class, while json::Value is still incomplete. libstdc++ 12 makes
# std::vector's members constexpr in C++20 and clang 14 instantiates them at
# that point, so every C++20 translation unit that includes JSON.h fails with
# "arithmetic on a pointer to an incomplete type 'llvm::json::Value'"
# (llvm/llvm-project#55780; LLVM 15 moved those members after Value). gcc
# instantiates later and is unaffected, and so is C++17, where the members are
# not constexpr.
#
# When (and only when) a probe shows this toolchain has the problem, every C++
# source that includes JSON.h, directly or through one of loom's headers, is
# compiled as C++17; everything else stays C++20. docs/robustness.md explains
# why this, rather than libc++ (Debian's LLVMSupport is built against
# libstdc++: a libc++ program that links it crashes) or a patched header.
#
# Use: include() it from the top-level CMakeLists.txt after project(), or
# pass -DCMAKE_PROJECT_INCLUDE=<this file> to cmake.

include_guard(GLOBAL)

include(${CMAKE_CURRENT_LIST_DIR}/LoomJsonCxx17.cmake)
loom_json_needs_cxx17(_loom_json_needs_cxx17)

# The headers under include/ that reach JSON.h, to a fixed point.
function(_loom_json_headers out)
  file(GLOB_RECURSE hdrs ${CMAKE_SOURCE_DIR}/include/*.h)
  set(pattern "llvm/Support/JSON\\.h")
  set(found "")
  set(grew TRUE)
  while(grew)
    set(grew FALSE)
    foreach(h ${hdrs})
      if(h IN_LIST found)
        continue()
      endif()
      file(STRINGS ${h} hits REGEX "#include [\"<](${pattern})[\">]")
      if(hits)
        list(APPEND found ${h})
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/include ${h})
        string(REPLACE "." "\\." rel ${rel})
        string(APPEND pattern "|${rel}")
        set(grew TRUE)
      endif()
    endforeach()
  endwhile()
  set(${out} "${pattern}" PARENT_SCOPE)
endfunction()

function(_loom_json_fixup_dir dir pattern)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(srcs ${t} SOURCES)
    get_target_property(tdir ${t} SOURCE_DIR)
    foreach(s ${srcs})
      if(NOT s MATCHES "\\.cpp$")
        continue()
      endif()
      if(NOT IS_ABSOLUTE ${s})
        set(s ${tdir}/${s})
      endif()
      file(STRINGS ${s} hits REGEX "#include [\"<](${pattern})[\">]")
      if(hits)
        set_source_files_properties(${s} DIRECTORY ${dir}
          PROPERTIES COMPILE_OPTIONS "-std=c++17")
      endif()
    endforeach()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _loom_json_fixup_dir(${sub} "${pattern}")
  endforeach()
endfunction()

function(_loom_json_fixup)
  _loom_json_headers(pattern)
  _loom_json_fixup_dir(${CMAKE_SOURCE_DIR} "${pattern}")
endfunction()

if(_loom_json_needs_cxx17)
  message(STATUS "clang + libstdc++: sources that include llvm/Support/JSON.h build as C++17")
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _loom_json_fixup)
endif()
