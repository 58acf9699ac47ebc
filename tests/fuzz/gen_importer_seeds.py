#!/usr/bin/python3
"""Write the seed corpora of the importer fuzz harnesses (onnx, graphdef, tfjs) into
tests/fuzz/corpus/: small valid models plus hostile inputs that once crashed braidd or made
it allocate gigabytes (each a regression). Run once by hand when the seeds change; the output is
committed. Usage: gen_importer_seeds.py [CORPUS_DIR]"""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus")
# Inputs that allocate tens of MiB on purpose go to tests/partitioner/tf's fixtures instead: in a fuzz
# corpus they would slow every mutation of them down to a crawl.
TF_FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "partitioner", "tf",
                           "fixtures")


def put(sub, name, data):
    d = os.path.join(out, sub) if sub != "tf-fixtures" else TF_FIXTURES
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- ONNX --------------------------------------------------------------------------------
def onnx_model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
b = numpy_helper.from_array(np.zeros(4, np.float32), "b")
put("onnx", "conv_relu.onnx", onnx_model(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["r"]),
     helper.make_node("GlobalAveragePool", ["r"], ["p"]),
     helper.make_node("Flatten", ["p"], ["y"])], [x], [y], [w, b]))
xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
put("onnx", "shape_ops.onnx", onnx_model(
    [helper.make_node("Shape", ["x"], ["s"]),
     helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.array([3, 4], np.int64))),
     helper.make_node("Reshape", ["x", "k"], ["r"]),
     helper.make_node("ConstantOfShape", ["s"], ["z"]),
     helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
     helper.make_node("MatMul", ["t", "r"], ["y"])], [xs], [y]))
# 300 attributes on one node (a 6,000-attribute node once took 1.7 GB; scaled down to a seed)
put("onnx", "many_attrs.onnx", onnx_model(
    [helper.make_node("Relu", ["x"], ["y"], **{"a%d" % i: i for i in range(300)})], [xs], [y]))
# 200 nodes listed in reverse order: the topological sort must place them all
chain = [helper.make_node("Relu", ["v%d" % i if i else "x"], ["v%d" % (i + 1) if i < 199 else "y"],
                          name="n%d" % i) for i in range(200)]
put("onnx", "reversed_chain.onnx", onnx_model(chain[::-1], [xs], [y]))
# ConstantOfShape with a huge constant shape: shape folding must not expand it
big = numpy_helper.from_array(np.array([1 << 30, 1 << 30], np.int64), "big")
put("onnx", "constant_of_huge_shape.onnx", onnx_model(
    [helper.make_node("ConstantOfShape", ["big"], ["y"])], [], [y], [big]))
# an initializer whose dims overflow when multiplied
t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 31, 1 << 31, 1 << 31])
put("onnx", "overflow_dims.onnx", onnx_model([helper.make_node("Relu", ["w"], ["y"])], [], [y], [t]))

# Control flow: bodies are graphs inside attributes, imported by the shape rules
# (partitioner/shape/shape_control.c); mutations of them reach a second importer pass.
F1 = helper.make_tensor_value_info
cond_in = F1("cond", TensorProto.BOOL, [])
then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [F1("t", TensorProto.FLOAT, None)])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [F1("e", TensorProto.FLOAT, None)])
put("onnx", "if_outer_scope.onnx", onnx_model(
    [helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)], [cond_in, xs], [y]))
# Loop: a counter, a condition, a carried value and a scan output; the body reads x from outside
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
     helper.make_node("Mul", ["acc_out", "acc_out"], ["sq"])], "body",
    [F1("i", TensorProto.INT64, []), F1("c_in", TensorProto.BOOL, []), F1("acc_in", TensorProto.FLOAT, [2, 6])],
    [F1("c_out", TensorProto.BOOL, []), F1("acc_out", TensorProto.FLOAT, [2, 6]), F1("sq", TensorProto.FLOAT, [2, 6])])
trip = numpy_helper.from_array(np.array(3, np.int64), "M")
ztrue = numpy_helper.from_array(np.array(True), "C")
put("onnx", "loop_carried_scan.onnx", onnx_model(
    [helper.make_node("Loop", ["M", "C", "x"], ["y", "ys"], body=body)], [xs],
    [y, F1("ys", TensorProto.FLOAT, None)], [trip, ztrue]))
# Scan (opset 9+): a running sum over the first axis of x
sbody = helper.make_graph(
    [helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["o"])],
    "sbody", [F1("s_in", TensorProto.FLOAT, [6]), F1("row", TensorProto.FLOAT, [6])],
    [F1("s_out", TensorProto.FLOAT, [6]), F1("o", TensorProto.FLOAT, [6])])
s0 = numpy_helper.from_array(np.zeros(6, np.float32), "s0")
put("onnx", "scan_running_sum.onnx", onnx_model(
    [helper.make_node("Scan", ["s0", "x"], ["y", "os"], body=sbody, num_scan_inputs=1)], [xs],
    [y, F1("os", TensorProto.FLOAT, None)], [s0]))
# a Loop inside an If's branch, and a body whose outputs disagree with its Loop (hostile)
inner = helper.make_node("Loop", ["M", "C", "x"], ["t", "ts"], body=body)
nested_then = helper.make_graph([inner], "then", [], [F1("t", TensorProto.FLOAT, None)])
put("onnx", "if_nested_loop.onnx", onnx_model(
    [helper.make_node("If", ["cond"], ["y"], then_branch=nested_then, else_branch=else_g)],
    [cond_in, xs], [y], [trip, ztrue]))
short = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"])], "short",
                          [F1("i", TensorProto.INT64, []), F1("c_in", TensorProto.BOOL, [])],
                          [F1("c_out", TensorProto.BOOL, [])])
put("onnx", "loop_body_too_few_outputs.onnx", onnx_model(
    [helper.make_node("Loop", ["M", "C", "x"], ["y"], body=short)], [xs], [y], [trip, ztrue]))

# Quantized models: the QDQ format (a pair on the activation, int8 weights and an int32 bias
# behind DequantizeLinear) and the QOperator format (QLinearConv -> Reshape on the integers ->
# QLinearMatMul), which the fast path's qlinear and qdq passes rewrite; and a QLinearConv with
# its weight scale omitted (hostile: the rewrite must leave it alone).
x4 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])
qi = [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
      numpy_helper.from_array(np.array(128, np.uint8), "z"),
      numpy_helper.from_array(np.full((4, 4, 3, 3), 3, np.int8), "wq"),
      numpy_helper.from_array(np.full(4, 0.01, np.float32), "ws"),
      numpy_helper.from_array(np.zeros(4, np.int8), "wz"),
      numpy_helper.from_array(np.arange(4, dtype=np.int32), "bq"),
      numpy_helper.from_array(np.full(4, 0.0005, np.float32), "bs"),
      numpy_helper.from_array(np.zeros(4, np.int32), "bz")]
put("onnx", "qdq_conv.onnx", onnx_model(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
     helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], axis=0),
     helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["b"], axis=0),
     helper.make_node("Conv", ["d", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["r"]),
     helper.make_node("QuantizeLinear", ["r", "s", "z"], ["q2"]),
     helper.make_node("DequantizeLinear", ["q2", "s", "z"], ["y"])], [x4], [y], qi, opset=13))
qm = [numpy_helper.from_array(np.full((4, 3), 2, np.int8), "mq"),
      numpy_helper.from_array(np.full(3, 0.02, np.float32), "ms"),
      numpy_helper.from_array(np.zeros(3, np.int8), "mz"),
      numpy_helper.from_array(np.array([-1, 4], np.int64), "shp")]
put("onnx", "qlinear_chain.onnx", onnx_model(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     helper.make_node("QLinearConv", ["q", "s", "z", "wq", "ws", "wz", "s", "z", "bq"], ["c"],
                      pads=[1, 1, 1, 1]),
     helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
     helper.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),
     helper.make_node("Reshape", ["t", "shp"], ["rows"]),
     helper.make_node("QLinearMatMul", ["rows", "s", "z", "mq", "ms", "mz", "s", "z"], ["m"]),
     helper.make_node("DequantizeLinear", ["m", "s", "z"], ["y"])], [x4], [y], qi + qm, opset=13))
# com.microsoft's quantized ops (shape rules and their QDQ rewrite): QLinearAdd, the pool, QGemm
def onnx_ms_model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m.SerializeToString()


qg = [numpy_helper.from_array(np.full((4, 3), 2, np.int8), "gq"),
      numpy_helper.from_array(np.array(0.02, np.float32), "gs"),
      numpy_helper.from_array(np.array(0, np.int8), "gz"),
      numpy_helper.from_array(np.arange(3, dtype=np.int32), "gc")]
put("onnx", "qoperator_com_microsoft.onnx", onnx_ms_model(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     helper.make_node("QLinearAdd", ["q", "s", "z", "q", "s", "z", "s", "z"], ["a"], domain="com.microsoft"),
     helper.make_node("QLinearGlobalAveragePool", ["a", "s", "z", "s", "z"], ["p"], domain="com.microsoft",
                      channels_last=0),
     helper.make_node("Flatten", ["p"], ["f"]),
     helper.make_node("QGemm", ["f", "s", "z", "gq", "gs", "gz", "gc", "s", "z"], ["m"], domain="com.microsoft"),
     helper.make_node("DequantizeLinear", ["m", "s", "z"], ["y"])], [x4], [y], qi[:2] + qg))
put("onnx", "qlinear_conv_no_scale.onnx", onnx_model(
    [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
     helper.make_node("QLinearConv", ["q", "s", "z", "wq", "", "wz", "s", "z"], ["c"]),
     helper.make_node("DequantizeLinear", ["c", "s", "z"], ["y"])], [x4], [y], qi, opset=13))

# ---- GraphDef ------------------------------------------------------------------------------
# Written by hand (field numbers of tensorflow/core/framework/*.proto): no TensorFlow needed.
def varint(n):
    b = bytearray()
    while True:
        c = n & 0x7F
        n >>= 7
        b.append(c | (0x80 if n else 0))
        if not n:
            return bytes(b)


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def shape(dims):
    return b"".join(field(2, 2, field(1, 0, varint(d & (2**64 - 1)))) for d in dims)


def tensor(dtype, dims, extra=b""):
    return field(1, 0, varint(dtype)) + field(2, 2, shape(dims)) + extra


def attr(key, value):     # NodeDef.attr map entry
    return field(5, 2, field(1, 2, key.encode()) + field(2, 2, value))


def node(name, op, inputs=(), attrs=b""):
    b = field(1, 2, name.encode()) + field(2, 2, op.encode())
    for i in inputs:
        b += field(3, 2, i.encode())
    return field(1, 2, b + attrs)


DT_FLOAT, DT_INT32, DT_STRING = 1, 3, 7
type_attr = lambda t: field(6, 0, varint(t))             # AttrValue.type
tensor_attr = lambda t: field(8, 2, t)                    # AttrValue.tensor
shape_attr = lambda dims: field(7, 2, shape(dims))        # AttrValue.shape
ph = node("x", "Placeholder", attrs=attr("dtype", type_attr(DT_FLOAT)) + attr("shape", shape_attr([-1, 4])))
c = node("c", "Const", attrs=attr("dtype", type_attr(DT_FLOAT)) +
         attr("value", tensor_attr(tensor(DT_FLOAT, [4], field(4, 2, struct.pack("<4f", 1, 2, 3, 4))))))
put("graphdef", "add.pb", ph + c + node("y", "AddV2", ["x", "c"], attr("T", type_attr(DT_FLOAT))))
put("graphdef", "relu_fallback.pb", ph + node("r", "Relu", ["x"], attr("T", type_attr(DT_FLOAT))) +
    node("e", "Erf", ["r"], attr("T", type_attr(DT_FLOAT))))
# one float fills 2^28 elements: 1 GiB once expanded (from a 140-byte GraphDef)
put("graphdef", "fill_1gib.pb", node("c", "Const", attrs=attr("dtype", type_attr(DT_FLOAT)) +
    attr("value", tensor_attr(tensor(DT_FLOAT, [1 << 14, 1 << 14], field(5, 5, struct.pack("<f", 1)))))))
# under the cap: one float fills 4 MiB, which braid expands as TensorFlow does
put("tf-fixtures", "fill_4mib.pb", ph + node("c", "Const", attrs=attr("dtype", type_attr(DT_FLOAT)) +
    attr("value", tensor_attr(tensor(DT_FLOAT, [1 << 14, 64], field(5, 5, struct.pack("<f", 1)))))) +
    node("y", "AddV2", ["x", "c"], attr("T", type_attr(DT_FLOAT))))
# two fills of 48 MiB each: each under the cap, together over it (the cap is per model)
fill48 = lambda name: node(name, "Const", attrs=attr("dtype", type_attr(DT_FLOAT)) +
                           attr("value", tensor_attr(tensor(DT_FLOAT, [3, 1 << 22], field(5, 5, struct.pack("<f", 1))))))
put("tf-fixtures", "fill_2x48mib.pb", ph + fill48("c1") + fill48("c2") +
    node("a", "AddV2", ["c1", "c2"], attr("T", type_attr(DT_FLOAT))))
# one string fills 2^60 elements
put("graphdef", "string_fill.pb", node("c", "Const", attrs=attr("dtype", type_attr(DT_STRING)) +
    attr("value", tensor_attr(tensor(DT_STRING, [1 << 60], field(8, 2, b"abc"))))))
# an input naming output 65535 of a node: 65536 values for a few bytes
put("graphdef", "high_port.pb", ph + node("y", "Relu", ["x:65535"], attr("T", type_attr(DT_FLOAT))))
# dims whose product overflows
put("graphdef", "overflow_dims.pb", node("c", "Const", attrs=attr("dtype", type_attr(DT_FLOAT)) +
    attr("value", tensor_attr(tensor(DT_FLOAT, [1 << 40, 1 << 40])))))


# ---- TF.js ---------------------------------------------------------------------------------
def tfjs(model, shard=b""):
    j = json.dumps(model, separators=(",", ":")).encode()
    return struct.pack("<I", len(j)) + j + shard


def topo(nodes, weights=None, sig=True):
    m = {"format": "graph-model", "modelTopology": {"node": nodes, "versions": {"producer": 1}}}
    if weights is not None:
        m["weightsManifest"] = [{"paths": ["w.bin"], "weights": weights}]
    if sig:
        m["signature"] = {"inputs": {"x:0": {"name": "x:0"}}, "outputs": {"y:0": {"name": "y:0"}}}
    return m


shp = lambda dims: {"dim": [{"size": str(d)} for d in dims]}
ph_j = {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"}, "shape": {"shape": shp([-1, 2])}}}
const_j = lambda name, dtype, dims, **kw: {"name": name, "op": "Const", "attr": {
    "dtype": {"type": dtype}, "value": {"tensor": dict({"dtype": dtype, "tensorShape": shp(dims)}, **kw)}}}
add_j = {"name": "y", "op": "AddV2", "input": ["x", "w"], "attr": {"T": {"type": "DT_FLOAT"}}}
put("tfjs", "add.bin", tfjs(topo([ph_j, const_j("w", "DT_FLOAT", [2]), add_j],
                                 [{"name": "w", "shape": [2], "dtype": "float32"}]), struct.pack("<2f", 1, 2)))
put("tfjs", "quantized.bin", tfjs(topo([ph_j, const_j("w", "DT_FLOAT", [2]), add_j],
    [{"name": "w", "shape": [2], "dtype": "float32",
      "quantization": {"dtype": "uint8", "scale": 0.5, "min": -1}}]), bytes([0, 4])))
put("tfjs", "erf_fallback.bin", tfjs(topo([ph_j, {"name": "y", "op": "Erf", "input": ["x"],
                                               "attr": {"T": {"type": "DT_FLOAT"}}}])))
# a 497-byte model.json: a string Const of shape [2^60]
put("tfjs", "string_const_2p60.bin", tfjs(topo([ph_j, const_j("s", "DT_STRING", [1 << 60], stringVal=["YWJj"]),
                                                {"name": "y", "op": "Identity", "input": ["x"]}])))
# a string weight of shape [2^60 + 1]
put("tfjs", "string_weight_2p60p1.bin", tfjs(topo([ph_j, const_j("s", "DT_STRING", [(1 << 60) + 1]),
                                                   {"name": "y", "op": "Identity", "input": ["x"]}],
                                                  [{"name": "s", "shape": [(1 << 60) + 1], "dtype": "string"}]),
                                             b"\x03\x00\x00\x00abc"))
# a 481-byte constant fill: one value for 2^28 floats
put("tfjs", "fill_1gib.bin", tfjs(topo([ph_j, const_j("w", "DT_FLOAT", [1 << 14, 1 << 14], floatVal=[1.0]),
                                        {"name": "y", "op": "Identity", "input": ["x"]}])))
# a weight whose shape overflows
put("tfjs", "overflow_weight.bin", tfjs(topo([ph_j, const_j("w", "DT_FLOAT", [1 << 40, 1 << 40]), add_j],
                                             [{"name": "w", "shape": [1 << 40, 1 << 40], "dtype": "float32"}]),
                                        b"\0" * 8))
# a shard path leaving the directory
m = topo([ph_j, const_j("w", "DT_FLOAT", [2]), add_j], [{"name": "w", "shape": [2], "dtype": "float32"}])
m["weightsManifest"][0]["paths"] = ["../../etc/passwd"]
put("tfjs", "shard_escape.bin", tfjs(m))
# the same shard listed twice
m = topo([ph_j, const_j("w", "DT_FLOAT", [4]), add_j], [{"name": "w", "shape": [4], "dtype": "float32"}])
m["weightsManifest"][0]["paths"] = ["w.bin", "./w.bin"]
put("tfjs", "shard_twice.bin", tfjs(m, struct.pack("<2f", 1, 2)))
