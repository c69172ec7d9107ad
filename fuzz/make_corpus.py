#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets (docs/robustness.md).

usage: make_corpus.py [--hlo-opt HLO_OPT] OUT_DIR

Seeds come from examples/, test/ and, when it exists, ../shared/corpus/; they
are copied into OUT_DIR/<Target>/ (normally build-fuzz/corpus/), never into
the source tree. Targets whose first input byte selects options get each seed
under a few option bytes. Every seed file is named after its content's hash,
so re-running the script adds nothing twice.

HloProtoFuzzer's seeds are binary HloModuleProtos: the modules of examples/
and test/hlo/proto/ and every eighth module of the shared corpus, written by
HLO_OPT (--emit=proto), and the XLA-style text protos of test/hlo/proto/Inputs
encoded by protoc. Without --hlo-opt (or protoc) those seeds are left out.
"""
import hashlib
import os
import shutil
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpus")


def files(dirs, suffixes):
    for d in dirs:
        if not os.path.isdir(d):
            continue
        for base, _, names in os.walk(d):
            for n in sorted(names):
                if n.endswith(suffixes):
                    yield os.path.join(base, n)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def put(out, target, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy(descr, shape, data, version=1):
    """A .npy file as NumPy writes it (header padded to 64 bytes)."""
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    size_len = 2 if version == 1 else 4
    pad = 64 - (10 + (size_len - 2) + len(header) + 1) % 64
    header = (header + " " * pad + "\n").encode("latin1")
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header + data


def proto_seeds(out, hlo_opt):
    """Binary HloModuleProtos for HloProtoFuzzer."""
    inputs = os.path.join(ROOT, "test", "hlo", "proto", "Inputs")
    sources = list(files([os.path.join(ROOT, "examples"), inputs], (".hlo",)))
    sources += list(files([SHARED], (".hlo",)))[::8]
    for p in sources:
        if not hlo_opt:
            break
        r = subprocess.run([hlo_opt, "--no-verify", "--emit=proto", p],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            put(out, "HloProtoFuzzer", r.stdout)
    protoc = shutil.which("protoc")
    schema = os.path.join(ROOT, "lib", "hlo", "proto")
    kinds = {"xla-module": "HloModuleProto", "xla-hloproto": "HloProto",
             "xla-with-config": "HloModuleProtoWithConfig"}
    for p in files([inputs], (".textproto",)):
        name = os.path.basename(p)[:-len(".textproto")]
        if not protoc:
            break
        with open(p, "rb") as f:
            r = subprocess.run([protoc, "-I", schema, "--encode=xla." + kinds.get(name, "HloModuleProto"),
                                "hlo_module.proto"], stdin=f, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
        if r.returncode == 0:
            put(out, "HloProtoFuzzer", r.stdout)


def main():
    args = sys.argv[1:]
    hlo_opt = None
    if len(args) == 3 and args[0] == "--hlo-opt":
        hlo_opt = args[1]
        args = args[2:]
    out = args[0]
    proto_seeds(out, hlo_opt)
    hlo_dirs = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "test"), SHARED]
    hlo = [read(p) for p in files(hlo_dirs, (".hlo",))]
    for text in hlo:
        put(out, "HloTextFuzzer", text)
        put(out, "HloEvalFuzzer", b"\x00" + text)
    passes_dirs = [os.path.join(ROOT, "test", "hlo", "passes"), os.path.join(ROOT, "examples")]
    for p in files(passes_dirs, (".hlo",)):
        text = read(p)
        for bits in (0x00, 0x01, 0x02, 0x04, 0x11, 0x21):
            put(out, "HloPassesFuzzer", bytes([bits]) + text)
    for p in files([SHARED], (".hlo",)):
        put(out, "HloPassesFuzzer", b"\x01" + read(p))
    # HloToBirFuzzer: the modules hlo-to-bir's tests lower, at lnc 1 and 2.
    codegen_dirs = [os.path.join(ROOT, "examples", "hlo"), os.path.join(ROOT, "test", "codegen")]
    for p in files(codegen_dirs, (".hlo",)):
        text = read(p)
        for bits in (0x00, 0x01):
            put(out, "HloToBirFuzzer", bytes([bits]) + text)

    bir_dirs = [os.path.join(ROOT, "examples", "bir"), os.path.join(ROOT, "test", "bir")]
    for p in files(bir_dirs, (".json",)):
        text = read(p)
        for bits in (0x00, 0x03, 0x0d, 0x20, 0x40, 0x60, 0x80):
            put(out, "BirJsonFuzzer", bytes([bits]) + text)
        for bits in (0x00, 0x08, 0x10, 0x20):
            put(out, "BirSimFuzzer", bytes([bits]) + text)

    arrays = [
        ("<f4", (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)),
        ("<f4", (), struct.pack("<f", 1.5)),
        ("<i4", (4,), struct.pack("<4i", 1, -2, 3, -4)),
        ("|u1", (2, 2), bytes([0, 1, 2, 255])),
        ("|b1", (3,), bytes([0, 1, 1])),
        ("<u2", (2,), struct.pack("<2H", 0x3f80, 0xbf80)),
        ("<f8", (1, 1), struct.pack("<d", -0.0)),
        ("<u4", (0,), b""),
        ("<f4", (3, 0, 2), b""),
        ("<c8", (1,), struct.pack("<2f", 1, 2)),
        ("<i8", (2,), struct.pack("<2q", 1, -1)),
    ]
    shapes = {"<f4": "f32", "<i4": "s32", "|u1": "u8", "|b1": "pred", "<u2": "bf16",
              "<f8": "f64", "<u4": "u32", "<c8": "c64", "<i8": "s64"}
    for descr, shape, data in arrays:
        for version in (1, 2, 3):
            put(out, "NpyFuzzer", npy(descr, shape, data, version))
        hlo_shape = "%s[%s]" % (shapes[descr], ",".join(str(s) for s in shape))
        put(out, "NpyFuzzer", hlo_shape.encode() + b"\n" + npy(descr, shape, data))
    put(out, "NpyFuzzer", b"f8e4m3fn[2]\n" + npy("|u1", (2,), b"\x38\xff"))
    put(out, "NpyFuzzer", b"s4[3]\n" + npy("|i1", (3,), b"\x01\xf9\x07"))

    for bits in range(0, 256, 17):
        for passes in (b"lnc_splitter", b"lnc_splitter,lower_local_collectives",
                       b"lnc_splitter,lower_local_collectives,insert_ptcom_flat",
                       b"insert_ptcom_flat,lnc_splitter", b"",
                       b"neuron_looped_einsum_replacer,hlo_dce",
                       b"neuron_looped_einsum_token_replacer,hlo_verifier",
                       b"no_such_pass"):
            put(out, "PipelineFuzzer", bytes([bits]) + passes)

    for t in sorted(os.listdir(out)):
        print("%-16s %5d seeds" % (t, len(os.listdir(os.path.join(out, t)))))


if __name__ == "__main__":
    main()
