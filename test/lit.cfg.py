# lit configuration for loom's pass and tool tests.
#
# Every .hlo, .json and .test file under test/ is a test unless it sits in
# an Inputs/ folder. Tests find the built tools (hlo-opt, hlo-run, bir-opt)
# and LLVM's FileCheck and `not` on PATH, set up from lit.site.cfg.py, which
# CMake generates in <build>/test.
#
# Substitutions: %examples is the examples/ folder; %shared is ../shared;
# %hlo_proto_dir holds the HloModuleProto schema (hlo_module.proto).
# Features: shared-corpus when ../shared/corpus exists (a fresh clone has
# none, so tests that read it say `REQUIRES: shared-corpus`).
import os
import lit.formats

config.name = "loom"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hlo", ".json", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
if hasattr(config, "loom_obj_root"):
    config.test_exec_root = os.path.join(config.loom_obj_root, "test")
    config.environment["PATH"] = os.pathsep.join(
        [config.loom_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
    config.substitutions.append(("%examples", os.path.join(config.loom_src_root, "examples")))
    config.substitutions.append(("%shared", config.loom_shared_dir))
    # protoc reads loom's HloModuleProto schema from here (test/hlo/proto).
    config.substitutions.append(
        ("%hlo_proto_dir", os.path.join(config.loom_src_root, "lib", "hlo", "proto")))
    if os.path.isdir(os.path.join(config.loom_shared_dir, "corpus")):
        config.available_features.add("shared-corpus")

# Tests must not see the environment knobs of the passes (NEURON_*,
# LOOM_COLLECTIVE_MATMUL_PROVENANCE) unless
# they set them.
for var in list(config.environment):
    if var.startswith("NEURON_") or var == "LOOM_COLLECTIVE_MATMUL_PROVENANCE":
        del config.environment[var]
