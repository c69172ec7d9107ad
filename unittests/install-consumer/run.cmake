# The install test (ctest -R install-consumer): installs the build tree into
# a fresh prefix, configures this folder's project against the prefix with a
# new cmake, builds it, and runs its two programs and the installed tools.
# Passed with -D: LOOM_BUILD_DIR, LOOM_SOURCE_DIR, WORK_DIR, CONSUMER_CC,
# CONSUMER_CXX, CONSUMER_C_FLAGS, CONSUMER_CXX_FLAGS, CONSUMER_LINKER_FLAGS,
# GENERATOR.
cmake_minimum_required(VERSION 3.20)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

function(expect_equal what actual expected)
  if(NOT actual STREQUAL expected)
    message(FATAL_ERROR "${what}:\n--- got\n${actual}\n--- expected\n${expected}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

run(${CMAKE_COMMAND} --install ${LOOM_BUILD_DIR} --prefix ${prefix})
foreach(f lib/cmake/loom/loomConfig.cmake lib/cmake/loom/loomConfigVersion.cmake
          lib/cmake/loom/loomTargets.cmake include/loom/hlo/parser/HloParser.h
          include/loom/bir/json/BirJson.h bin/hlo-opt bin/hlo-run bin/bir-opt bin/bir-sim)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()

# Only the prefix may provide loom: no package registry, no source tree.
run(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR} -B ${build} -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_C_COMPILER=${CONSUMER_CC}
  -DCMAKE_CXX_COMPILER=${CONSUMER_CXX}
  "-DCMAKE_C_FLAGS=${CONSUMER_C_FLAGS}"
  "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${CONSUMER_LINKER_FLAGS}")
file(STRINGS ${build}/CMakeCache.txt loom_dir REGEX "^loom_DIR:")
expect_equal("loom_DIR" "${loom_dir}" "loom_DIR:PATH=${prefix}/lib/cmake/loom")
file(READ ${build}/build.ninja ninja)
string(FIND "${ninja}" "${LOOM_SOURCE_DIR}/include" in_source)
if(NOT in_source EQUAL -1)
  message(FATAL_ERROR "the consumer compiles against ${LOOM_SOURCE_DIR}/include, not the prefix")
endif()
run(${CMAKE_COMMAND} --build ${build})

# The consumer prints the module as the installed hlo-opt does.
run(${build}/print-hlo)
set(printed "${out}")
file(WRITE ${WORK_DIR}/consumer.hlo "${printed}")
run(${prefix}/bin/hlo-opt ${WORK_DIR}/consumer.hlo)
expect_equal("print-hlo against hlo-opt" "${printed}" "${out}")
string(FIND "${printed}" "ROOT %sum = f32[2] add(f32[2] %x, f32[2] %y)" at)
if(at EQUAL -1)
  message(FATAL_ERROR "print-hlo printed:\n${printed}")
endif()

set(bir ${LOOM_SOURCE_DIR}/examples/bir/sendrecv_swap.json)
run(${build}/verify-bir ${bir})
expect_equal("verify-bir" "${out}" "verified 1 module(s): swap\n")
run(${prefix}/bin/bir-sim --help)
run(${prefix}/bin/hlo-run --help)
run(${prefix}/bin/bir-opt --help)
message(STATUS "installed into ${prefix}; the consumer built and ran")
