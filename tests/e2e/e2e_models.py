"""Small ONNX models the end-to-end suite and the daemon benchmark serve, built with
onnx.helper and numpy (deterministic; nothing is downloaded or cached).

    demo_variant(offset)   the bundled demo model (tinycnn) with OFFSET added to its output,
                           so a response tells which of two versions computed it
    two_outputs()          x[1,4] -> plus_one = x + 1, times_two = x * 2 (output filtering)
    big_add_one(n)         x[1,N] + 1 with N = 4 Mi floats: 16 MiB requests and responses
    slow_matmul(...)       x[R,N] through DEPTH MatMuls with one shared N x N weight: a model
                           that takes tens of milliseconds (queues, deadlines, cancellation)
    tiny_add(n)            x[1,N] + [1..N]: the cheapest useful model (RPC latency benchmark)
    batch_mlp()            x[N,8], s[N,3] -> h = relu(x W + b) [N,6], t = s * 2 [N,3] (INT32 s):
                           a batchable model with two inputs of two dtypes (dynamic batching)
    batch_gram()           x[N,4] -> x^T x [4,4]: an output that mixes the batch's rows and
                           whose dim 0 does not follow the batch
    batch_softmax0()       x[N,4] -> Softmax over dim 0 [N,4]: mixes the rows, keeps the shape

Run as a script to write them into a directory: e2e_models.py OUTDIR.
"""

import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 7


def _model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="braid-e2e")
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    return m.SerializeToString()


def source_root():
    return os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def demo_model_path():
    return os.path.join(source_root(), "daemon", "demo-repository", "tinycnn", "1", "model.onnx")


def demo_fixture(name):
    """The demo's reference input ('image') or output ('probabilities') as numpy."""
    return np.load(os.path.join(source_root(), "tests", "fixtures", "demo", name + ".npy"))


def demo_variant(offset):
    """The demo model whose 'probabilities' output is shifted by OFFSET (a float)."""
    with open(demo_model_path(), "rb") as f:
        m = onnx.load_from_string(f.read())
    g = m.graph
    out = g.output[0].name
    inner = out + "_before_offset"
    for node in g.node:
        node.output[:] = [inner if o == out else o for o in node.output]
    g.initializer.append(numpy_helper.from_array(np.array([offset], np.float32), "e2e_offset"))
    g.node.append(helper.make_node("Add", [inner, "e2e_offset"], [out], name="e2e_add_offset"))
    return m.SerializeToString()


def two_outputs():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y1 = helper.make_tensor_value_info("plus_one", TensorProto.FLOAT, [1, 4])
    y2 = helper.make_tensor_value_info("times_two", TensorProto.FLOAT, [1, 4])
    inits = [numpy_helper.from_array(np.array([1.0], np.float32), "one"),
             numpy_helper.from_array(np.array([2.0], np.float32), "two")]
    nodes = [helper.make_node("Add", ["x", "one"], ["plus_one"], name="add"),
             helper.make_node("Mul", ["x", "two"], ["times_two"], name="mul")]
    return _model(helper.make_graph(nodes, "two_outputs", [x], [y1, y2], inits))


def slow_matmul(rows=256, n=1024, depth=24):
    """About 2*rows*n*n*depth FLOP (256x1024x1024x24: 12.9 GFLOP, tens of ms on 2 cores).
    The weight is orthogonal so values neither blow up nor vanish along the chain."""
    rng = np.random.default_rng(7)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = numpy_helper.from_array(q.astype(np.float32), "w")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, n])
    nodes, prev = [], "x"
    for i in range(depth):
        cur = "y" if i == depth - 1 else "h%d" % i
        nodes.append(helper.make_node("MatMul", [prev, "w"], [cur], name="mm%d" % i))
        prev = cur
    return _model(helper.make_graph(nodes, "slow_matmul", [x], [y], [w]))


def big_add_one(elements=4 * 1024 * 1024):
    """x[1,ELEMENTS] + 1: megabytes in and out (messages past gRPC's 4 MiB default)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, elements])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, elements])
    one = numpy_helper.from_array(np.array([1.0], np.float32), "one")
    node = helper.make_node("Add", ["x", "one"], ["y"], name="add")
    return _model(helper.make_graph([node], "big_add_one", [x], [y], [one]))


def tiny_add(n=16):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])
    c = numpy_helper.from_array(np.arange(1, n + 1, dtype=np.float32).reshape(1, n), "c")
    node = helper.make_node("Add", ["x", "c"], ["y"], name="add")
    return _model(helper.make_graph([node], "tiny_add", [x], [y], [c]))


def batch_add_one(batch="N", n=4):
    """x[BATCH,N] + 1; BATCH a symbolic name (dynamic) or a number (fixed)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, n])
    one = numpy_helper.from_array(np.array([1.0], np.float32), "one")
    node = helper.make_node("Add", ["x", "one"], ["y"], name="add")
    return _model(helper.make_graph([node], "batch_add_one", [x], [y], [one]))


BATCH_MLP_W = np.arange(48, dtype=np.float32).reshape(8, 6) / 47.0 - 0.5
BATCH_MLP_B = np.linspace(-1, 1, 6).astype(np.float32)


def batch_mlp():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])
    s = helper.make_tensor_value_info("s", TensorProto.INT32, ["N", 3])
    h = helper.make_tensor_value_info("h", TensorProto.FLOAT, ["N", 6])
    t = helper.make_tensor_value_info("t", TensorProto.INT32, ["N", 3])
    inits = [numpy_helper.from_array(BATCH_MLP_W, "w"), numpy_helper.from_array(BATCH_MLP_B, "b"),
             numpy_helper.from_array(np.array([2], np.int32), "two")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xw"], name="mm"),
             helper.make_node("Add", ["xw", "b"], ["pre"], name="bias"),
             helper.make_node("Relu", ["pre"], ["h"], name="relu"),
             helper.make_node("Mul", ["s", "two"], ["t"], name="mul")]
    return _model(helper.make_graph(nodes, "batch_mlp", [x, s], [h, t], inits))


def batch_mlp_reference(x, s):
    return np.maximum(x @ BATCH_MLP_W + BATCH_MLP_B, 0), s * 2


def batch_gram():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0], name="t"),
             helper.make_node("MatMul", ["xt", "x"], ["y"], name="gram")]
    return _model(helper.make_graph(nodes, "batch_gram", [x], [y]))


def batch_softmax0():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    node = helper.make_node("Softmax", ["x"], ["y"], axis=0, name="softmax")
    return _model(helper.make_graph([node], "batch_softmax0", [x], [y]))


def write_model_config(repo, name, config):
    """Write CONFIG (a dict) as <repo>/<name>/config.json."""
    d = os.path.join(repo, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)


def write_repository_model(repo, name, data, version="1"):
    """Write DATA as <repo>/<name>/<version>/model.onnx."""
    d = os.path.join(repo, name, str(version))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(data)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for name, data in [("demo_plus1", demo_variant(1.0)), ("two_outputs", two_outputs()),
                       ("slow_matmul", slow_matmul()), ("tiny_add", tiny_add()),
                       ("batch_add_one", batch_add_one())]:
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(data)
        print(os.path.join(out, name + ".onnx"), len(data))
