#!/usr/bin/python3
"""Write the ONNX models test_onnx_import.c reads into OUTDIR (run by the build).

Valid models exercise each importer feature; invalid ones are built at the protobuf level
(no onnx.checker) so each carries exactly one defect."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8, value_info=(), name="g"):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits),
                     value_info=list(value_info))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def save(m, fname):
    with open(os.path.join(out, fname), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, dt, shape):
    return h.make_tensor_value_info(name, dt, shape)


rng = np.random.default_rng(0)

# basic: raw and typed initializers, symbolic dims, a node without a name, an omitted
# optional input, a folded Constant, attributes of every supported type.
W = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
B = np.array([0.5, -0.5], np.float32)
Wt = nh.from_array(W, "W")                     # raw_data
Bt = h.make_tensor("B", TP.FLOAT, [2], B.tolist())   # float_data
shape_c = h.make_tensor("shape_c", TP.INT64, [2], [-1, 32])
attr_t = h.make_tensor("", TP.INT32, [3], [1, 2, 3])
nodes = [
    h.make_node("Conv", ["X", "W", "B"], ["Y"], name="conv0", kernel_shape=[3, 3],
                pads=[1, 1, 1, 1], strides=[1, 1]),
    h.make_node("Relu", ["Y"], ["Z"]),                       # no name: invented
    h.make_node("Constant", [], ["C"], name="const0", value=shape_c),
    h.make_node("Reshape", ["Z", "C"], ["R"], name="reshape0"),
    h.make_node("Clip", ["R", "", "maxv"], ["Q"], name="clip0"),
    h.make_node("AllAttrs", ["Q"], ["OUT"], name="attrs0", domain="braid.test",
                f=1.5, i=-7, s="hello", t=attr_t, fs=[0.25, 0.5], is_=[4, 5, 6],
                ss=["a", "bc"]),
]
# make_node turns is_ into an attribute named 'is_': rename to a plain name
for a in nodes[-1].attribute:
    if a.name == "is_":
        a.name = "ints"
m = model(nodes,
          [vi("X", TP.FLOAT, ["batch", 3, 4, 4])],
          [vi("OUT", TP.FLOAT, ["batch", None])],
          inits=[Wt, Bt, h.make_tensor("maxv", TP.FLOAT, [], [6.0])],
          value_info=[vi("Y", TP.FLOAT, ["batch", 2, 4, 4])])
m.opset_import.append(h.make_opsetid("braid.test", 1))
save(m, "basic.onnx")

# typed: every typed field and the int32_data narrowing rules.
typed = [
    h.make_tensor("t_i8", TP.INT8, [3], [-1, 2, -128]),
    h.make_tensor("t_u8", TP.UINT8, [2], [255, 7]),
    h.make_tensor("t_i16", TP.INT16, [2], [-300, 300]),
    h.make_tensor("t_u16", TP.UINT16, [1], [65535]),
    h.make_tensor("t_bool", TP.BOOL, [3], [True, False, True]),
    h.make_tensor("t_f16", TP.FLOAT16, [2], np.array([1.0, -2.0], np.float16)),
    h.make_tensor("t_i32", TP.INT32, [2], [-5, 123456]),
    h.make_tensor("t_i64", TP.INT64, [2], [-(2**40), 2**40]),
    h.make_tensor("t_f64", TP.DOUBLE, [1], [3.25]),
    h.make_tensor("t_u32", TP.UINT32, [1], [4000000000]),
    h.make_tensor("t_u64", TP.UINT64, [1], [2**63 + 5]),
    h.make_tensor("t_f32", TP.FLOAT, [2, 2], [1, 2, 3, 4]),
    h.make_tensor("t_empty", TP.FLOAT, [0, 3], []),
]
bf = TP()
bf.name, bf.data_type = "t_bf16", TP.BFLOAT16
bf.dims.append(1)
bf.int32_data.append(0x3FC0)   # 1.5 in bfloat16
typed.append(bf)
m = model([h.make_node("Identity", ["x"], ["y"], name="id")],
          [vi("x", TP.FLOAT, [1])], [vi("y", TP.FLOAT, [1]), vi("t_i8", TP.INT8, [3])],
          inits=typed)
save(m, "typed.onnx")

# constants: every foldable Constant attribute.
cn = [
    h.make_node("Constant", [], ["cf"], value_float=2.5),
    h.make_node("Constant", [], ["cfs"], value_floats=[1.0, 2.0, 3.0]),
    h.make_node("Constant", [], ["ci"], value_int=42),
    h.make_node("Constant", [], ["cis"], value_ints=[7, 8]),
    h.make_node("Add", ["x", "cf"], ["y"], name="add"),
]
save(model(cn, [vi("x", TP.FLOAT, [3])],
           [vi("y", TP.FLOAT, [3]), vi("cfs", TP.FLOAT, [3]), vi("ci", TP.INT64, []),
            vi("cis", TP.INT64, [2])], opset=13), "constants.onnx")
save(model([h.make_node("Constant", [], ["s"], value_string="x")], [],
           [vi("s", TP.STRING, [])]), "const_string.onnx")

# old IR: the initializer is also listed as a graph input (a default, not fed).
m = model([h.make_node("Add", ["x", "w"], ["y"], name="add")],
          [vi("x", TP.FLOAT, [2]), vi("w", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])],
          inits=[h.make_tensor("w", TP.FLOAT, [2], [1, 2])], opset=7, ir=3)
save(m, "old_ir.onnx")

# versions
add = [h.make_node("Add", ["x", "x"], ["y"], name="add")]
io = ([vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])])
save(model(add, *io, opset=6), "opset6.onnx")
save(model(add, *io, opset=1, ir=3), "opset1.onnx")
save(model(add, *io, opset=18), "opset18.onnx")
save(model(add, *io, opset=27), "opset27.onnx")
save(model(add, *io, ir=9), "ir9.onnx")
save(model(add, *io, ir=12), "ir12.onnx")
save(model(add, *io, ir=2), "ir2.onnx")

# external data: two tensors in one file, one at an offset.
E1 = np.arange(6, dtype=np.float32)
E2 = np.arange(4, dtype=np.int64) * 10
with open(os.path.join(out, "weights.bin"), "wb") as f:
    f.write(b"\0" * 16 + E1.tobytes() + E2.tobytes())


def ext_tensor(name, dt, dims, location, offset, length):
    t = TP()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    t.data_location = TP.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def ext_model(location, offset=16, nbytes=24):
    return model([h.make_node("Add", ["x", "e1"], ["y"], name="add")],
                 [vi("x", TP.FLOAT, [6])], [vi("y", TP.FLOAT, [6])],
                 inits=[ext_tensor("e1", TP.FLOAT, [6], location, offset, nbytes),
                        ext_tensor("e2", TP.INT64, [4], location, 16 + 24, 32)])


save(ext_model("weights.bin"), "external.onnx")
save(ext_model("../weights.bin"), "external_dotdot.onnx")
save(ext_model("sub/../../weights.bin"), "external_dotdot2.onnx")
save(ext_model("/etc/passwd"), "external_abs.onnx")
save(ext_model("weights.bin", offset=60), "external_oob.onnx")
save(ext_model("missing.bin"), "external_missing.onnx")
m = ext_model("weights.bin")
for e in m.graph.initializer[1].external_data:      # e2: the same file under another name
    if e.key == "location":
        e.value = "./weights.bin"
save(m, "external_alias.onnx")

# a node with 6,000 attributes (an 89 KB file that once took 1.7 GB to import)
save(model([h.make_node("Relu", ["x"], ["y"], name="relu", **{"attr_%d" % i: i for i in range(6000)})],
           [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])]), "many_attrs.onnx")
dup = h.make_node("Relu", ["x"], ["y"], name="relu", alpha=1, beta=2)
dup.attribute.append(h.make_attribute("alpha", 3))
save(model([dup], [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])]), "dup_attrs.onnx")


# defects in one initializer
def bad_init(t, fname):
    save(model([h.make_node("Add", ["x", t.name], ["y"], name="add")],
               [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])], inits=[t]), fname)


t = nh.from_array(np.zeros(4, np.float32), "w")
t.raw_data = t.raw_data[:10]
bad_init(t, "bad_rawlen.onnx")
t = h.make_tensor("w", TP.FLOAT, [2], [1, 2])
t.dims[0] = -2
bad_init(t, "neg_dims.onnx")
t = h.make_tensor("w", TP.FLOAT, [1] * 9, [1])
bad_init(t, "big_rank.onnx")
t = TP()
t.name, t.data_type = "w", TP.FLOAT
t.dims.extend([2**40, 2**40])
t.raw_data = b"\0" * 8
bad_init(t, "overflow_dims.onnx")
t = h.make_tensor("w", TP.FLOAT, [2], [1, 2])
t.dims[0] = 3
bad_init(t, "typed_count.onnx")
t = h.make_tensor("w", TP.FLOAT, [2], [1, 2])
t.int64_data.extend([1, 2])
bad_init(t, "typed_wrong_field.onnx")
t = TP()
t.name, t.data_type = "w", 99
t.dims.append(1)
bad_init(t, "bad_dtype.onnx")

# a subgraph attribute (If) and a sequence-typed input
then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", TP.FLOAT, [2])])
else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", TP.FLOAT, [2])])
save(model([h.make_node("If", ["c"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)],
           [vi("c", TP.BOOL, []), vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2])]),
     "subgraph.onnx")
# nested bodies: a Loop whose body holds an If; the If's branches read the loop body's own
# value (b), the loop's carried input (v_in) and two values of the main graph (w, z), one of
# them (z) only from the inner If; "" is an omitted input, not a name
inner_then = h.make_graph([h.make_node("Add", ["b", "w"], ["it"])], "ithen", [], [vi("it", TP.FLOAT, [2])])
inner_else = h.make_graph([h.make_node("Sub", ["v_in", "z"], ["ie"])], "ielse", [], [vi("ie", TP.FLOAT, [2])])
body = h.make_graph(
    [h.make_node("Identity", ["v_in"], ["b"]),
     h.make_node("If", ["cond_in"], ["v_out"], then_branch=inner_then, else_branch=inner_else),
     h.make_node("Identity", ["cond_in"], ["cond_out"])],
    "body", [vi("i", TP.INT64, []), vi("cond_in", TP.BOOL, []), vi("v_in", TP.FLOAT, [2])],
    [vi("cond_out", TP.BOOL, []), vi("v_out", TP.FLOAT, [2])])
save(model([h.make_node("Loop", ["n", "", "v0"], ["v"], name="loop", body=body)],
           [vi("n", TP.INT64, []), vi("v0", TP.FLOAT, [2]), vi("w", TP.FLOAT, [2]),
            vi("z", TP.FLOAT, [2])], [vi("v", TP.FLOAT, [2])]),
     "nested_subgraph.onnx")
seq = h.make_tensor_sequence_value_info("s", TP.FLOAT, [2])
save(model([h.make_node("SequenceLength", ["s"], ["n"], name="len")], [seq],
           [vi("n", TP.INT64, [])]), "sequence_input.onnx")

# structure errors the validator reports
save(model([h.make_node("Add", ["x", "nowhere"], ["y"], name="add")], *io), "dangling.onnx")

# a medium model for truncation sweeps: a 64 KiB weight and a few nodes
Wm = rng.standard_normal((128, 128)).astype(np.float32)
m = model([h.make_node("MatMul", ["x", "Wm"], ["h"], name="mm"),
           h.make_node("Relu", ["h"], ["y"], name="relu")],
          [vi("x", TP.FLOAT, ["n", 128])], [vi("y", TP.FLOAT, ["n", 128])],
          inits=[nh.from_array(Wm, "Wm")])
save(m, "medium.onnx")

# node names: duplicates and missing names made unique; an omitted optional output
m = model([h.make_node("Relu", ["x"], ["a"], name="n"),
           h.make_node("Relu", ["a"], ["b"], name="n"),
           h.make_node("Relu", ["b"], ["c"]),
           h.make_node("Relu", ["c"], ["d"], name="Relu_2"),
           h.make_node("Relu", ["d"], ["e"], name="L" * 2000),
           h.make_node("Relu", ["e"], ["f"], name="L" * 2000),
           h.make_node("Two", ["f"], ["", "y"], name="two" * 100, domain="braid.test"),
           h.make_node("Two", ["f"], ["", "y2"], name="two" * 100, domain="braid.test")],
          [vi("x", TP.FLOAT, [2])], [vi("y", TP.FLOAT, [2]), vi("y2", TP.FLOAT, [2])])
m.opset_import.append(h.make_opsetid("braid.test", 1))
save(m, "names.onnx")
