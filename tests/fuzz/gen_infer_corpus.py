#!/usr/bin/python3
"""Write the seed corpus of tests/fuzz/fuzz_infer.c: encoded ModelInferRequests, valid and
hostile, for the harness's two signatures (see fuzz_infer.c). Small files only (the hostile
shapes need no big payload to reach their paths).

    gen_infer_corpus.py [OUTDIR]      default: tests/fuzz/corpus/infer next to this script

Needs the Python stubs of proto/inference.proto: $BRAID_PROTO_PY, else they are generated
with protoc into a temporary directory (as tests/e2e/braidd_fixture.py does).
"""

import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def load_pb():
    d = os.environ.get("BRAID_PROTO_PY")
    tmp = None
    if not d or not os.path.isfile(os.path.join(d, "inference_pb2.py")):
        tmp = d = tempfile.mkdtemp(prefix="braid-fuzz-stubs-")
        subprocess.run(["protoc", "-I", os.path.join(ROOT, "proto"), "--python_out=" + d,
                        os.path.join(ROOT, "proto", "inference.proto")], check=True)
    sys.path.insert(0, d)
    import inference_pb2
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return inference_pb2


def f32(*vals):
    return struct.pack("<%df" % len(vals), *vals)


def main():
    pb = load_pb()
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus", "infer")
    os.makedirs(out, exist_ok=True)
    seeds = {}

    def req(**kw):
        return pb.ModelInferRequest(model_name="m", **kw)

    # valid, narrow signature: raw, misaligned raw, typed, requested outputs
    r = req(id="a")
    r.inputs.add(name="x", datatype="FP32", shape=[2, 4])
    r.raw_input_contents.append(f32(*range(8)))
    r.outputs.add(name="z")
    r.outputs.add(name="y")
    seeds["narrow_raw"] = r
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[1, 4]).contents.fp32_contents.extend([1, 2, 3, 4])
    seeds["narrow_typed"] = r
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[8, 4]).contents.fp32_contents.extend(range(32))
    seeds["narrow_typed_8"] = r
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[0, 4])
    r.raw_input_contents.append(b"")
    seeds["narrow_empty"] = r

    # valid, wide signature: every datatype, typed where it can be
    r = req()
    r.parameters["p"].int64_param = 3
    r.inputs.add(name="x", datatype="FP32", shape=[1, 4]).contents.fp32_contents.extend([0.5] * 4)
    r.inputs.add(name="ids", datatype="INT64", shape=[12]).contents.int64_contents.extend(
        [-1, 0, 2 ** 40, 2 ** 63 - 1, -2 ** 63] + list(range(7)))
    r.inputs.add(name="mask", datatype="BOOL", shape=[2, 3]).contents.bool_contents.extend([True, False] * 3)
    r.inputs.add(name="small", datatype="INT8", shape=[2, 2]).contents.int_contents.extend([-128, 127, 0, 5])
    r.inputs.add(name="u16", datatype="UINT16", shape=[4]).contents.uint_contents.extend([0, 1, 65535, 7])
    r.inputs.add(name="h", datatype="FP16", shape=[0])
    r.inputs.add(name="d", datatype="FP64", shape=[2, 1]).contents.fp64_contents.extend([1.5, -2.0])
    r.inputs.add(name="u64", datatype="UINT64", shape=[1]).contents.uint64_contents.append(2 ** 63)
    r.inputs.add(name="u32", datatype="UINT32", shape=[2]).contents.uint_contents.extend([1, 2 ** 32 - 1])
    r.inputs.add(name="i16", datatype="INT16", shape=[3]).contents.int_contents.extend([-32768, 0, 32767])
    seeds["wide_typed"] = r
    r = req()
    r.inputs.add(name="s", datatype="BYTES", shape=[1]).contents.bytes_contents.append(b"hi")
    seeds["text_typed"] = r
    def wide_raw(small_shape=(1, 3), small_data=b"abc"):
        r = req()
        for name, dt, shape, data in [
                ("x", "FP32", [1, 4], f32(1, 2, 3, 4)), ("ids", "INT64", [1], b"\0" * 8),
                ("mask", "BOOL", [2, 3], b"\1" * 6), ("small", "INT8", list(small_shape), small_data),
                ("u16", "UINT16", [4], b"\0" * 8), ("h", "FP16", [2], b"\0" * 4),
                ("d", "FP64", [], b"\0" * 8), ("u64", "UINT64", [0], b""),
                ("u32", "UINT32", [1], b"\0" * 4), ("i16", "INT16", [3], b"\0" * 6)]:
            r.inputs.add(name=name, datatype=dt, shape=shape)
            r.raw_input_contents.append(data)
        return r
    seeds["wide_raw"] = wide_raw()
    seeds["empty_huge_dims"] = wide_raw((0, 2 ** 62), b"")

    # requests that once crashed braidd or were silently misread, at small scale
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[4611686018427387903 // 4, 4]).contents.fp32_contents.extend([1.0] * 64)
    seeds["wrap_fp32"] = r
    r = req()
    r.inputs.add(name="ids", datatype="INT64", shape=[2 ** 61 + 1]).contents.int64_contents.extend(range(64))
    seeds["wrap_varint"] = r
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[1, 4])
    r.raw_input_contents.append(f32(1, 2, 3, 4))
    for _ in range(8):
        r.outputs.add(name="y")
    seeds["duplicate_outputs"] = r
    r = req()
    r.inputs.add(name="x\0z", datatype="FP32\0", shape=[1, 4])
    r.raw_input_contents.append(f32(1, 2, 3, 4))
    seeds["nul_strings"] = r
    r = req()
    t = r.inputs.add(name="x", datatype="FP32", shape=[1, 4])
    t.contents.fp32_contents.extend([1, 2, 3, 4])
    t.contents.int64_contents.extend([1, 2, 3, 4])
    seeds["two_content_fields"] = r
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[1, 4])
    r.raw_input_contents.extend([f32(1, 2, 3, 4), b"extra"])
    seeds["raw_count_mismatch"] = r

    # shared memory: the harness registers region "r" (4096 bytes)
    def shm(params, region, size, offset=None):
        params["shared_memory_region"].string_param = region
        params["shared_memory_byte_size"].int64_param = size
        if offset is not None:
            params["shared_memory_offset"].int64_param = offset
    r = req()
    shm(r.inputs.add(name="x", datatype="FP32", shape=[2, 4]).parameters, "r", 32, 8)
    shm(r.outputs.add(name="y").parameters, "r", 32, 64)
    seeds["shm_input_output"] = r
    r = req()
    shm(r.inputs.add(name="x", datatype="FP32", shape=[2, 4]).parameters, "r", 32, 4090)
    seeds["shm_past_end"] = r
    r = req()
    shm(r.inputs.add(name="x", datatype="FP32", shape=[1, 4]).parameters, "r", 16, 2)
    seeds["shm_misaligned"] = r
    r = req()
    r.inputs.add(name="x", datatype="FP32", shape=[1, 4])
    shm(r.inputs.add(name="ids", datatype="INT64", shape=[2]).parameters, "r", 16)
    r.raw_input_contents.append(f32(1, 2, 3, 4))
    seeds["shm_mixed_raw"] = r

    for name, msg in sorted(seeds.items()):
        data = msg.SerializeToString()
        assert len(data) < 4096, name
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(data)
    # hand-made wire: a varint longer than 10 bytes in int64_contents, a zero tag, a group
    contents = b"\x1a\x0b" + b"\xff" * 10 + b"\x01"
    tensor = b"\x0a\x03ids\x12\x05INT64\x1a\x01\x01\x2a" + bytes([len(contents)]) + contents
    raw = {"long_varint": b"\x0a\x01m\x2a" + bytes([len(tensor)]) + tensor,
           "zero_tag": b"\x0a\x01m\x00\x00",
           "group": b"\x0b\x0c"}
    for name, data in raw.items():
        with open(os.path.join(out, name + ".pb"), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(seeds) + len(raw), out))


if __name__ == "__main__":
    main()
