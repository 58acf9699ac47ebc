#!/usr/bin/python3
"""Decode the ModelInferResponses test_proto_wire.c encoded and check every field with the
real protobuf runtime. Usage: check_infer_response.py RAW_RESPONSE... [--typed TYPED]
Exit status 0 when all match; the first mismatch is printed."""
import struct
import sys

import inference_pb2 as pb
from wire_patterns import OUTPUT_Y0, OUTPUT_Y1, pattern


def check_raw(path):
    resp = pb.ModelInferResponse.FromString(open(path, "rb").read())
    assert resp.model_name == "resnet" and resp.model_version == "3", resp.model_name
    assert resp.id == "req-7", resp.id
    assert resp.parameters["sequence_end"].bool_param is True
    outs = (OUTPUT_Y0, OUTPUT_Y1)
    assert [o.name for o in resp.outputs] == [o[0] for o in outs]
    assert len(resp.raw_output_contents) == len(outs), len(resp.raw_output_contents)
    for o, want, raw in zip(resp.outputs, outs, resp.raw_output_contents):
        name, dtype, shape, mul, add = want
        assert o.datatype == dtype and list(o.shape) == shape, (o.datatype, o.shape)
        n = 1
        for d in shape:
            n *= d
        expect = pattern(n * 4, mul, add)
        assert raw == expect, "%s: raw_output_contents differ (%d vs %d bytes)" % (name, len(raw), len(expect))


def check_typed(path):
    resp = pb.ModelInferResponse.FromString(open(path, "rb").read())
    assert len(resp.raw_output_contents) == 0
    f, i, s = resp.outputs
    assert list(f.contents.fp32_contents) == [0.25, -8.0, 1e6], list(f.contents.fp32_contents)
    assert list(i.contents.int64_contents) == [-5, 0, 1 << 50], list(i.contents.int64_contents)
    assert list(s.contents.bytes_contents) == [b"ab", b"", b"xyz"], list(s.contents.bytes_contents)
    # packed on the wire, as every protobuf runtime writes proto3 repeated scalars
    raw = open(path, "rb").read()
    assert struct.pack("<f", 0.25) + struct.pack("<f", -8.0) in raw


if __name__ == "__main__":
    args = sys.argv[1:]
    try:
        while args:
            if args[0] == "--typed":
                check_typed(args[1])
                args = args[2:]
            else:
                check_raw(args[0])
                args = args[1:]
    except AssertionError as e:
        print("check_infer_response: mismatch:", e, file=sys.stderr)
        sys.exit(1)
    print("check_infer_response: ok")
