#!/usr/bin/python3
"""Write the requests test_proto_wire.c decodes, encoded by the real protobuf runtime from
the generated stubs: OUT_RAW (ModelInferRequest with two 1 MiB raw_input_contents and
parameter maps), OUT_TYPED (typed InferTensorContents) and OUT_LOAD (RepositoryModelLoad
with a JSON config and an uploaded 200 kB model file).
Usage: make_infer_request.py OUT_RAW OUT_TYPED OUT_LOAD"""
import sys

import inference_pb2 as pb
from wire_patterns import INPUT_A, INPUT_B, LOAD_FILE_BYTES, pattern


def raw_request():
    req = pb.ModelInferRequest(model_name="resnet", model_version="3", id="req-7")
    req.parameters["priority"].int64_param = 3
    req.parameters["note"].string_param = "hi"
    req.parameters["sequence_start"].bool_param = True
    req.parameters["ratio"].double_param = 0.5
    req.parameters["budget"].uint64_param = 1 << 40
    for name, dtype, shape, mul, add in (INPUT_A, INPUT_B):
        t = req.inputs.add(name=name, datatype=dtype, shape=shape)
        data = pattern(_count(shape) * ELEMENT_SIZE[dtype], mul, add)
        t.parameters["binary_data_size"].int64_param = len(data)
        req.raw_input_contents.append(data)
    out = req.outputs.add(name="y0")
    out.parameters["binary_data"].bool_param = True
    return req


def typed_request():
    req = pb.ModelInferRequest(model_name="typed", id="t-1")
    t = req.inputs.add(name="f", datatype="FP32", shape=[3])
    t.contents.fp32_contents.extend([1.5, -2.0, 3.25])
    t = req.inputs.add(name="i", datatype="INT64", shape=[3])
    t.contents.int64_contents.extend([-1, 2, 1 << 40])
    t = req.inputs.add(name="s", datatype="BYTES", shape=[2])
    t.contents.bytes_contents.extend([b"hello", b""])
    return req


ELEMENT_SIZE = {"FP32": 4, "UINT8": 1}


def load_request():
    req = pb.RepositoryModelLoadRequest(model_name="resnet")
    req.parameters["config"].string_param = '{"backend": "onnxruntime", "max_batch_size": 8}'
    req.parameters["file:1/model.onnx"].bytes_param = pattern(LOAD_FILE_BYTES, 7, 1)
    req.parameters["poll"].bool_param = False     # sent, with the default value
    return req


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


if __name__ == "__main__":
    for path, req in zip(sys.argv[1:4], (raw_request(), typed_request(), load_request())):
        with open(path, "wb") as f:
            f.write(req.SerializeToString())
