# lit configuration for loom's pass and tool tests.
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
    if os.path.isdir(os.path.join(config.loom_shared_dir, "corpus")):
        config.available_features.add("shared-corpus")

# Tests must not see the environment knobs of the passes unless they set them.
for var in list(os.environ):
    if var.startswith("NEURON_"):
        config.environment.pop(var, None)
for var in ["NEURON_COLLECTIVE_MATMUL_NXD", "NEURON_COLLECTIVE_PERMUTE_AGGRESSIVE",
            "NEURON_COLLECTIVE_MATMUL_SB_TO_SB_THRESHOLD_IN_MB"]:
    config.environment.pop(var, None)
