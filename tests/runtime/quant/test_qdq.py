#!/usr/bin/python3
"""Models in the QDQ format (QuantizeLinear -> DequantizeLinear on every activation, int8
weights behind a DequantizeLinear, as onnxruntime's quantizer writes them) run by braid
against numpy.

    test_qdq.py BRAID [--keep DIR]

Each case is a small CNN written here with onnx.helper: Conv (per-channel INT8 weights, an
INT32 bias), a residual Add, MaxPool, GlobalAveragePool and a Gemm, with UINT8 or INT8
activations. Its output is itself a QDQ pair's, so it lies on a quantization grid. braid must
run every node on oneDNN (`braid inspect`: each activation pair one FakeQuantize, fused into
the Conv before it; no node on the native engine), put every output on the grid, and match
numpy's exact QDQ arithmetic: at least 97% of the elements equal, none more than 2 steps
apart (a float sum in another order may round an intermediate to the next step). `--engine
native` (each Q and DQ as its own node) must match the same way. A MatMul whose INT8 weight
dequantizes past the plan's 64 MiB folding budget must still have it folded (one oneDNN node).
The cases with weight integers within +-64 (onnxruntime's reduce_range) must run both Convs on
oneDNN's int8 kernel (exact there on any CPU), and a projection MatMul (bias, Relu) likewise;
the full-range ones likewise on a CPU with VNNI (exact there), on FP32 elsewhere.
Needs Debian's python3-onnx and numpy.

Exit status 0 when every case passed, 1 otherwise; one line per case.
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_cases import F, const, model, run, save, vi, work_dir  # noqa: E402

U8, I8, I32 = TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32


# ---- exact QDQ arithmetic (numpy) -------------------------------------------------------------


def quant(x, s, z, qtype):
    lo, hi = (0, 255) if qtype == U8 else (-128, 127)
    q = np.rint(x.astype(np.float32) / np.float32(s)).astype(np.float64) + z
    return np.clip(q, lo, hi)


def fq(x, s, z, qtype):
    """QuantizeLinear then DequantizeLinear, in float32 as ONNX computes them."""
    return ((quant(x, s, z, qtype) - z).astype(np.float32) * np.float32(s)).astype(np.float32)


def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return (y + b.reshape(1, -1, 1, 1)).astype(np.float32)


def maxpool2(x):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


# ---- the model ------------------------------------------------------------------------------


class Builder:
    """Nodes, initializers and the running numpy value of a QDQ graph."""

    def __init__(self, qtype, rng, wmax):
        self.qtype, self.rng, self.wmax = qtype, rng, wmax
        self.nodes, self.inits, self.k = [], [], 0

    def name(self, base):
        self.k += 1
        return f"{base}{self.k}"

    def qdq(self, x, val, s):
        """x -> Q -> DQ with scale S and a zero point of the activation dtype; returns the
        DQ's output name and value."""
        z = 0 if self.qtype == I8 else 128 if val.min() < 0 else 0
        zt = np.array(z, dtype=np.uint8 if self.qtype == U8 else np.int8)
        sn, zn, q, y = self.name("s"), self.name("z"), self.name("q"), self.name("dq")
        self.inits += [const(sn, np.array(s, np.float32)), const(zn, zt)]
        self.nodes += [helper.make_node("QuantizeLinear", [x, sn, zn], [q]),
                       helper.make_node("DequantizeLinear", [q, sn, zn], [y])]
        return y, fq(val, s, z, self.qtype)

    def conv(self, x, val, cin, cout, s_in):
        """Conv with per-channel INT8 weights and an INT32 bias, both behind DequantizeLinear."""
        w = self.rng.normal(0, 0.3, (cout, cin, 3, 3)).astype(np.float32)
        ws = (np.abs(w).reshape(cout, -1).max(axis=1) / self.wmax).astype(np.float32)
        wq = np.clip(np.rint(w / ws.reshape(-1, 1, 1, 1)), -self.wmax, self.wmax).astype(np.int8)
        bs = (np.float32(s_in) * ws).astype(np.float32)
        bq = np.rint(self.rng.normal(0, 0.1, cout) / bs).astype(np.int32)
        names = [self.name(n) for n in ("wq", "ws", "wz", "w", "bq", "bs", "bz", "b", "c")]
        wq_n, ws_n, wz_n, w_n, bq_n, bs_n, bz_n, b_n, y = names
        self.inits += [const(wq_n, wq), const(ws_n, ws), const(wz_n, np.zeros(cout, np.int8)),
                       const(bq_n, bq), const(bs_n, bs), const(bz_n, np.zeros(cout, np.int32))]
        self.nodes += [helper.make_node("DequantizeLinear", [wq_n, ws_n, wz_n], [w_n], axis=0),
                       helper.make_node("DequantizeLinear", [bq_n, bs_n, bz_n], [b_n], axis=0),
                       helper.make_node("Conv", [x, w_n, b_n], [y], pads=[1, 1, 1, 1])]
        wf = (wq.astype(np.float32) * ws.reshape(-1, 1, 1, 1)).astype(np.float32)
        return y, conv(val, wf, (bq.astype(np.float32) * bs).astype(np.float32), 1)


def qdq_cnn(qtype, seed, wmax, s_x=0.03):
    """The case's model (weight integers within +-WMAX, the input's step S_X), its input and
    numpy's output."""
    rng = np.random.default_rng(seed)
    b = Builder(qtype, rng, wmax)
    x = rng.normal(0, 1, (2, 3, 16, 16)).astype(np.float32)
    s_a = 0.05
    h, v = b.qdq("x", x, s_x)
    h, v = b.conv(h, v, 3, 8, s_x)
    v = np.maximum(v, 0)
    r = b.name("relu")
    b.nodes.append(helper.make_node("Relu", [h], [r]))
    skip, skip_v = b.qdq(r, v, s_a)
    h, v = b.conv(skip, skip_v, 8, 8, s_a)
    h, v = b.qdq(h, v, s_a)
    a = b.name("add")
    b.nodes.append(helper.make_node("Add", [h, skip], [a]))
    h, v = b.qdq(a, v + skip_v, s_a)
    p = b.name("pool")
    b.nodes.append(helper.make_node("MaxPool", [h], [p], kernel_shape=[2, 2], strides=[2, 2]))
    h, v = b.qdq(p, maxpool2(v), s_a)
    g = b.name("gap")
    b.nodes.append(helper.make_node("GlobalAveragePool", [h], [g]))
    h, v = b.qdq(g, v.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32), 0.02)
    f = b.name("flat")
    b.nodes.append(helper.make_node("Flatten", [h], [f]))
    wg = rng.normal(0, 0.5, (8, 10)).astype(np.float32)
    b.inits.append(const("wg", wg))
    gm = b.name("gemm")
    b.nodes.append(helper.make_node("Gemm", [f, "wg"], [gm]))
    gv = (v.reshape(2, 8).astype(np.float64) @ wg).astype(np.float32)
    y, yv = b.qdq(gm, gv, 0.04)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    m = model("qdq_cnn", b.nodes, [vi("x", F, [2, 3, 16, 16])], [vi("y", F, [2, 10])], b.inits)
    return m, x, yv, 0.04


def qdq_chain(qtype, seed, wmax, plain_last, add_between=False):
    """x -> QDQ -> Conv -> Relu -> QDQ -> Conv -> QDQ -> Conv -> QDQ: each fake-quantized
    Conv output read only by the next Conv, so braid keeps it as u8 codes between int8 kernels.
    With PLAIN_LAST the last Conv's weights are plain floats (no int8 kernel for it: it reads
    the codes made f32 again). With ADD_BETWEEN the second Conv's output goes through
    Add(h, h) -> QDQ first: the Add's fake quantization writes the codes the last Conv reads."""
    rng = np.random.default_rng(seed)
    b = Builder(qtype, rng, wmax)
    x = rng.normal(0, 1, (2, 4, 12, 12)).astype(np.float32)
    s_x, s_a = 0.03, 0.05
    h, v = b.qdq("x", x, s_x)
    h, v = b.conv(h, v, 4, 16, s_x)
    r = b.name("relu")
    b.nodes.append(helper.make_node("Relu", [h], [r]))
    h, v = b.qdq(r, np.maximum(v, 0), s_a)
    h, v = b.conv(h, v, 16, 16, s_a)
    h, v = b.qdq(h, v, s_a)
    if add_between:
        a = b.name("add")
        b.nodes.append(helper.make_node("Add", [h, h], [a]))
        h, v = b.qdq(a, v + v, 2 * s_a)
    if plain_last:
        w = rng.normal(0, 0.1, (8, 16, 3, 3)).astype(np.float32)
        bias = rng.normal(0, 0.1, 8).astype(np.float32)
        b.inits += [const("wl", w), const("bl", bias)]
        c = b.name("c")
        b.nodes.append(helper.make_node("Conv", [h, "wl", "bl"], [c], pads=[1, 1, 1, 1]))
        h, v = c, conv(v, w, bias, 1)
    else:
        h, v = b.conv(h, v, 16, 8, s_a)
    y, yv = b.qdq(h, v, 0.04)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    m = model("qdq_chain", b.nodes, [vi("x", F, [2, 4, 12, 12])], [vi("y", F, [2, 8, 12, 12])], b.inits)
    return m, x, yv, 0.04


def qlinear_model(qtype, seed, wmax):
    """onnxruntime's QOperator format: x -> QuantizeLinear -> QLinearConv (per-channel INT8
    weights, INT32 bias) -> QLinearConv -> QLinearMatMul (per-column weights, on the flattened
    [N*H*W, C] rows) -> DequantizeLinear; the reference is the ops' integer definition (an
    exact INT32 sum, scaled by x_scale * w_scale / y_scale, rounded half to even)."""
    rng = np.random.default_rng(seed)
    qt, lo, hi = (np.uint8, 0, 255) if qtype == U8 else (np.int8, -128, 127)
    zp = 128 if qtype == U8 else 0
    x = rng.normal(0, 1, (2, 4, 8, 8)).astype(np.float32)
    inits, nodes = [], []

    def scal(name, v, dt=np.float32):
        inits.append(const(name, np.array(v, dt)))
        return name

    def requant(acc, mult, z):
        return np.clip(np.rint(acc.astype(np.float64) * mult) + z, lo, hi)

    s, z = 0.03, zp
    xq = np.clip(np.rint(x / np.float32(s)) + z, lo, hi)
    nodes.append(helper.make_node("QuantizeLinear", ["x", scal("s0", s), scal("z0", z, qt)], ["q0"]))
    h, hv = "q0", xq
    for k, (cin, cout) in enumerate(((4, 8), (8, 8)), 1):
        w = rng.normal(0, 0.3, (cout, cin, 3, 3))
        ws = (np.abs(w).reshape(cout, -1).max(axis=1) / wmax).astype(np.float32)
        wq = np.clip(np.rint(w / ws.reshape(-1, 1, 1, 1)), -wmax, wmax).astype(np.int8)
        bq = rng.integers(-200, 200, cout).astype(np.int32)
        s_out = 0.05 * k
        inits += [const(f"w{k}", wq), const(f"ws{k}", ws), const(f"wz{k}", np.zeros(cout, np.int8)),
                  const(f"b{k}", bq)]
        nodes.append(helper.make_node(
            "QLinearConv", [h, f"s{k - 1}", f"z{k - 1}", f"w{k}", f"ws{k}", f"wz{k}",
                            scal(f"s{k}", s_out), scal(f"z{k}", zp, qt), f"b{k}"], [f"q{k}"],
            pads=[1, 1, 1, 1]))
        acc = conv(hv - z, wq.astype(np.float64), bq.astype(np.float64), 1)
        mult = (np.float32(s) * ws).astype(np.float32).astype(np.float64) / np.float64(np.float32(s_out))
        hv = requant(acc, mult.reshape(1, -1, 1, 1), zp)
        h, s, z = f"q{k}", s_out, zp
    nodes += [helper.make_node("Transpose", [h], ["t"], perm=[0, 2, 3, 1]),
              helper.make_node("Reshape", ["t", "shp"], ["rows"])]
    inits.append(const("shp", np.array([-1, 8], np.int64)))
    rows = hv.transpose(0, 2, 3, 1).reshape(-1, 8)
    wm = rng.normal(0, 0.3, (8, 6))
    wms = (np.abs(wm).max(axis=0) / wmax).astype(np.float32)
    wmq = np.clip(np.rint(wm / wms), -wmax, wmax).astype(np.int8)
    inits += [const("wm", wmq), const("wms", wms), const("wmz", np.zeros(6, np.int8))]
    nodes.append(helper.make_node("QLinearMatMul", ["rows", f"s{2}", f"z{2}", "wm", "wms", "wmz",
                                                    scal("sm", 0.2), scal("zm", zp, qt)], ["qm"]))
    acc = (rows - zp) @ wmq.astype(np.float64)
    mult = (np.float32(s) * wms).astype(np.float32).astype(np.float64) / np.float64(np.float32(0.2))
    ym = requant(acc, mult.reshape(1, -1), zp)
    nodes.append(helper.make_node("DequantizeLinear", ["qm", "sm", "zm"], ["y"]))
    ref = ((ym - zp).astype(np.float32) * np.float32(0.2)).astype(np.float32)
    m = model("qlinear", nodes, [vi("x", F, [2, 4, 8, 8])], [vi("y", F, [128, 6])], inits)
    return m, x, ref, 0.2


def ms_qoperator_model(seed):
    """com.microsoft's quantized ops as onnxruntime's QOperator format writes them: x ->
    QuantizeLinear -> QLinearConv -> QLinearAdd (with itself, another output scale) ->
    QLinearGlobalAveragePool -> Flatten (UINT8) -> QGemm (per-tensor INT8 weights, INT32 bias,
    quantized output) -> DequantizeLinear; numpy computes each op's definition."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (2, 4, 6, 6)).astype(np.float32)
    f32 = np.float32

    def q(v, s, z):
        return np.clip(np.rint(v.astype(np.float32) / f32(s)) + z, 0, 255)

    w = rng.normal(0, 0.3, (8, 4, 3, 3))
    ws = (np.abs(w).reshape(8, -1).max(axis=1) / 64).astype(np.float32)
    wq = np.clip(np.rint(w / ws.reshape(-1, 1, 1, 1)), -64, 64).astype(np.int8)
    bq = rng.integers(-100, 100, 8).astype(np.int32)
    wg = rng.normal(0, 0.3, (8, 5))
    wgs = f32(np.abs(wg).max() / 64)
    wgq = np.clip(np.rint(wg / wgs), -64, 64).astype(np.int8)
    cg = rng.integers(-50, 50, 5).astype(np.int32)
    u8 = np.uint8
    inits = [const("s0", np.array(0.03, f32)), const("z0", np.array(128, u8)),
             const("w", wq), const("ws", ws), const("wz", np.zeros(8, np.int8)), const("b", bq),
             const("s1", np.array(0.05, f32)), const("z1", np.array(128, u8)),
             const("s2", np.array(0.08, f32)), const("z2", np.array(128, u8)),
             const("s3", np.array(0.02, f32)), const("z3", np.array(100, u8)),
             const("wg", wgq), const("wgs", np.array(wgs, f32)), const("wgz", np.array(0, np.int8)),
             const("cg", cg), const("s4", np.array(0.1, f32)), const("z4", np.array(128, u8))]
    ms = "com.microsoft"
    nodes = [helper.make_node("QuantizeLinear", ["x", "s0", "z0"], ["q0"]),
             helper.make_node("QLinearConv", ["q0", "s0", "z0", "w", "ws", "wz", "s1", "z1", "b"],
                              ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QLinearAdd", ["c", "s1", "z1", "c", "s1", "z1", "s2", "z2"], ["a"],
                              domain=ms),
             helper.make_node("QLinearGlobalAveragePool", ["a", "s2", "z2", "s3", "z3"], ["p"],
                              domain=ms, channels_last=0),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("QGemm", ["f", "s3", "z3", "wg", "wgs", "wgz", "cg", "s4", "z4"], ["g"],
                              domain=ms, alpha=1.0),
             helper.make_node("DequantizeLinear", ["g", "s4", "z4"], ["y"])]
    x0 = q(x, 0.03, 128)
    acc = conv(x0 - 128, wq.astype(np.float64), bq.astype(np.float64), 1)
    c = np.clip(np.rint(acc * ((f32(0.03) * ws).astype(np.float64) / np.float64(f32(0.05))).reshape(1, -1, 1, 1))
                + 128, 0, 255)
    cf = ((c - 128).astype(np.float32) * f32(0.05)).astype(np.float32)
    a = q(cf + cf, 0.08, 128)
    af = ((a - 128).astype(np.float32) * f32(0.08)).astype(np.float32)
    p = q(af.astype(np.float64).mean(axis=(2, 3)).astype(np.float32), 0.02, 100)
    acc = (p - 100) @ wgq.astype(np.float64) + cg
    g = np.clip(np.rint(acc * (np.float64(f32(f32(0.02) * wgs)) / np.float64(f32(0.1)))) + 128, 0, 255)
    ref = ((g - 128).astype(np.float32) * f32(0.1)).astype(np.float32)
    m = helper.make_model(helper.make_graph(nodes, "ms_qop", [vi("x", F, [2, 4, 6, 6])],
                                            [vi("y", F, [2, 5])], inits),
                          opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ms, 1)])
    m.ir_version = 8
    return m, x, ref, 0.1


def qlinear_runtime_weights(seed):
    """x -> QuantizeLinear -> QLinearConv whose weights are a graph input (computed at run time:
    the rewrite declines it) -> DequantizeLinear; numpy computes the op's integer definition."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 1, (1, 2, 5, 5)).astype(np.float32)
    wq = rng.integers(-60, 60, (3, 2, 3, 3)).astype(np.int8)
    ws = np.array([0.01, 0.02, 0.015], np.float32)
    inits = [const("s0", np.array(0.03, np.float32)), const("z0", np.array(128, np.uint8)),
             const("ws", ws), const("wz", np.zeros(3, np.int8)),
             const("s1", np.array(0.05, np.float32)), const("z1", np.array(128, np.uint8))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s0", "z0"], ["q0"]),
             helper.make_node("QLinearConv", ["q0", "s0", "z0", "w", "ws", "wz", "s1", "z1"], ["c"],
                              pads=[1, 1, 1, 1]),
             helper.make_node("DequantizeLinear", ["c", "s1", "z1"], ["y"])]
    xq = np.clip(np.rint(x / np.float32(0.03)) + 128, 0, 255)
    acc = conv(xq - 128, wq.astype(np.float64), np.zeros(3), 1)
    mult = (np.float32(0.03) * ws).astype(np.float64) / np.float64(np.float32(0.05))
    c = np.clip(np.rint(acc * mult.reshape(1, -1, 1, 1)) + 128, 0, 255)
    ref = ((c - 128).astype(np.float32) * np.float32(0.05)).astype(np.float32)
    m = model("qlinear_runtime_w", nodes, [vi("x", F, [1, 2, 5, 5]), vi("w", I8, [3, 2, 3, 3])],
              [vi("y", F, [1, 3, 5, 5])], inits)
    return m, x, wq, ref, 0.05


def steps_per_run(braid, path, env=None):
    out = subprocess.run([braid, "inspect", path], capture_output=True, text=True, timeout=60,
                         env=env).stdout
    for line in out.splitlines():
        if line.startswith("per run:"):
            return int(line.split()[2])
    return None


def qdq_matmul(qtype, seed, wmax):
    """x [2, 5, 16] -> QDQ -> MatMul with per-column INT8 weights [16, 24] -> Add(bias) -> Relu
    -> QDQ: a transformer's projection as onnxruntime quantizes it."""
    rng = np.random.default_rng(seed)
    b = Builder(qtype, rng, wmax)
    x = rng.normal(0, 1, (2, 5, 16)).astype(np.float32)
    s_x = 0.03
    h, v = b.qdq("x", x, s_x)
    w = rng.normal(0, 0.3, (16, 24)).astype(np.float32)
    ws = (np.abs(w).max(axis=0) / wmax).astype(np.float32)
    wq = np.clip(np.rint(w / ws), -wmax, wmax).astype(np.int8)
    bias = rng.normal(0, 0.2, 24).astype(np.float32)
    b.inits += [const("mwq", wq), const("mws", ws), const("mwz", np.zeros(24, np.int8)),
                const("mb", bias)]
    b.nodes += [helper.make_node("DequantizeLinear", ["mwq", "mws", "mwz"], ["mw"], axis=1),
                helper.make_node("MatMul", [h, "mw"], ["mm"]),
                helper.make_node("Add", ["mm", "mb"], ["mba"]),
                helper.make_node("Relu", ["mba"], ["mr"])]
    wf = (wq.astype(np.float32) * ws).astype(np.float32)
    mv = np.maximum((v.astype(np.float64) @ wf + bias).astype(np.float32), 0)
    y, yv = b.qdq("mr", mv, 0.05)
    b.nodes.append(helper.make_node("Identity", [y], ["y"]))
    m = model("qdq_matmul", b.nodes, [vi("x", F, [2, 5, 16])], [vi("y", F, [2, 5, 24])], b.inits)
    return m, x, yv, 0.05


def int8_matmul(braid, path, feeds, d):
    """Does braid run the model's MatMul on an int8 kernel (ONEDNN_VERBOSE: a u8 source)?"""
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    p, _ = run(braid, path, feeds, d, None, env=env)
    return any(",matmul," in line and "src_u8" in line for line in p.stdout.splitlines())


def big_weight():
    """A MatMul whose INT8 weight dequantizes to 71 MB of floats, past the 64 MiB a plan folds
    of other constant subexpressions: the DequantizeLinear of a model's own initializer is
    folded all the same (runtime/plan_fold.c), so no run dequantizes it again."""
    rng = np.random.default_rng(3)
    k, n = 4096, 4352
    wq = rng.integers(-127, 128, (k, n), dtype=np.int8)
    x = rng.normal(0, 1, (2, k)).astype(np.float32)
    inits = [const("wq", wq), const("ws", np.array(0.01, np.float32)),
             const("wz", np.array(0, np.int8))]
    nodes = [helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    m = model("big_weight", nodes, [vi("x", F, [2, k])], [vi("y", F, [2, n])], inits)
    ref = x.astype(np.float64) @ (wq.astype(np.float64) * np.float64(np.float32(0.01)))
    return m, x, ref


# ---- the cases --------------------------------------------------------------------------------


def check(got, ref, s):
    steps = np.rint(got.astype(np.float64) / s)
    if np.max(np.abs(steps * s - got)) > 1e-6 * max(1.0, float(np.max(np.abs(got)))):
        return "output not on the quantization grid"
    diff = np.abs(got.astype(np.float64) - ref) / s
    equal = float(np.mean(diff < 1e-3))
    if np.max(diff) > 2.001 or equal < 0.97:
        return f"{equal:.1%} of elements equal, worst {np.max(diff):.2f} steps apart"
    return None


def placement(braid, path, int8):
    """Every node on oneDNN, each Conv with its FakeQuantize; with INT8, both Convs on oneDNN's
    int8 kernel (exact there: weight integers within +-64, or a CPU with VNNI)."""
    p = subprocess.run([braid, "inspect", path], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        return f"inspect failed: {p.stderr.strip()[-300:]}"
    out = p.stdout
    if "native 0 of" not in out or "Conv+FakeQuantize" not in out:
        return "not every node on oneDNN, or no Conv+FakeQuantize:\n" + out[-1500:]
    # The Convs and the Gemm are the products; the Gemm reads an unquantized GAP output. The
    # kernel's name is oneDNN's to choose (jit_int8, or brgconv on a VNNI CPU), so the count
    # comes from braid's own precision line, which counts the primitives built on u8 data.
    want = "precision: 2 of 3" if int8 or int8_by_cpu() else "precision: 0 of 3"
    if want not in out:
        return f"inspect does not say '{want}':\n" + out[-800:]
    return None


def int8_by_cpu():
    """Does this CPU run full-range int8 weights on int8 kernels too (VNNI)? Then the
    full-range cases must be on int8 kernels as well."""
    with open("/proc/cpuinfo") as f:
        return any(("avx512_vnni" in line or "avx_vnni" in line) for line in f if line.startswith("flags"))


def run_checked(braid, work, name, engine, m, x, ref, s, env=None):
    """M saved as case NAME, run on input X (--engine ENGINE unless None) and its output y
    checked against REF on grid S: (its folder, its path, its label, the output, why it
    failed or None)."""
    d, path, label = save(work, name, engine, m)
    p, _ = run(braid, path, {"x": x}, d, engine, env=env)
    if p.returncode:
        return d, path, label, None, f"braid run failed: {p.stderr.strip()[-400:]}"
    got = np.load(os.path.join(d, "y.npy"))
    return d, path, label, got, check(got, ref, s)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    braid, work = sys.argv[1], work_dir(sys.argv, "braid_qdq_")
    failed = 0
    for qname, qtype, wmax in (("u8", U8, 127), ("i8", I8, 127), ("u8_7bit", U8, 64),
                               ("i8_7bit", I8, 63)):
        m, x, ref, s = qdq_cnn(qtype, 7 if qtype == U8 else 11, wmax)
        for engine in (None, "native"):
            d, path, label, _, why = run_checked(braid, work, f"qdq_cnn_{qname}", engine, m, x, ref, s)
            if not why and engine is None:
                why = placement(braid, path, wmax <= 64)
            print(f"FAIL {label}: {why}" if why else f"ok   {label}")
            failed += why is not None
    # u8 codes kept between int8 Convs: the same bits as with every Conv output made f32 and
    # converted back (BRAID_DNNL_INT8_CHAIN=0), and fewer steps where every Conv is int8
    off = dict(os.environ, BRAID_DNNL_INT8_CHAIN="0")
    for qname, qtype, wmax, plain_last, add in (
            ("u8_7bit", U8, 64, False, False), ("i8_7bit", I8, 63, False, False),
            ("u8", U8, 127, False, False), ("u8_7bit_f32_reader", U8, 64, True, False),
            ("u8_7bit_add", U8, 64, False, True), ("i8_7bit_add", I8, 63, False, True)):
        m, x, ref, s = qdq_chain(qtype, 13, wmax, plain_last, add)
        d, path, label, got, why = run_checked(braid, work, f"qdq_chain_{qname}", None, m, x, ref, s)
        if not why:
            d_off = d + "_chain_off"
            os.makedirs(d_off, exist_ok=True)
            p, _ = run(braid, path, {"x": x}, d_off, None, env=off)
            why = (f"braid run (chain off) failed: {p.stderr.strip()[-400:]}" if p.returncode else
                   None if np.array_equal(got, np.load(os.path.join(d_off, "y.npy"))) else
                   "not the same bits as with the codes made f32 between the Convs")
        if not why and (wmax <= 64 or int8_by_cpu()) and not plain_last:
            on, base = steps_per_run(braid, path), steps_per_run(braid, path, off)
            why = None if on is not None and base is not None and on < base else \
                f"the codes were not kept: {on} steps per run, {base} without"
        print(f"FAIL {label}: {why}" if why else f"ok   {label}")
        failed += why is not None
    # QLinearConv / QLinearMatMul: rewritten into the QDQ form, all on oneDNN, int8 where exact
    for qname, qtype, wmax in (("u8", U8, 127), ("u8_7bit", U8, 64), ("i8_7bit", I8, 63)):
        m, x, ref, s = qlinear_model(qtype, 17, wmax)
        for engine in (None, "native"):
            d, path, label, _, why = run_checked(braid, work, f"qlinear_{qname}", engine, m, x, ref, s)
            if not why and engine is None:
                out = subprocess.run([braid, "inspect", path], capture_output=True, text=True,
                                     timeout=60).stdout
                want = "precision: 3 of 3" if wmax <= 64 or int8_by_cpu() else "precision: 0 of 3"
                why = None if "native 0 of" in out and want in out else \
                    f"not all on oneDNN, or not '{want}':\n" + out[-1500:]
            print(f"FAIL {label}: {why}" if why else f"ok   {label}")
            failed += why is not None
    # a QLinearConv the rewrite declines (weights fed at run time) still runs, as one node
    m, x, w, ref, s = qlinear_runtime_weights(23)
    d, path, label = save(work, "qlinear_runtime_weights", None, m)
    p, _ = run(braid, path, {"x": x, "w": w}, d, None)
    why = f"braid run failed: {p.stderr.strip()[-400:]}" if p.returncode else \
        check(np.load(os.path.join(d, "y.npy")), ref, s)
    if not why:
        out = subprocess.run([braid, "inspect", path], capture_output=True, text=True, timeout=60).stdout
        why = None if "QLinearConv" in out.split("placement:")[-1] else \
            "the QLinearConv was rewritten, or is not listed off oneDNN:\n" + out[-1200:]
    print(f"FAIL {label}: {why}" if why else f"ok   {label}")
    failed += why is not None
    # com.microsoft's QLinearAdd, QLinearGlobalAveragePool, QGemm: all on oneDNN too
    m, x, ref, s = ms_qoperator_model(19)
    d, path, label, _, why = run_checked(braid, work, "qoperator_com_microsoft", None, m, x, ref, s)
    if not why:
        out = subprocess.run([braid, "inspect", path], capture_output=True, text=True, timeout=60).stdout
        # the Conv (7-bit weights) in int8; a Gemm has no int8 primitive in braid yet
        why = None if "native 0 of" in out and "ort    0 of" in out and "precision: 1 of 2" in out \
            else "not all on oneDNN, or the Conv not in int8:\n" + out[-1500:]
    print(f"FAIL {label}: {why}" if why else f"ok   {label}")
    failed += why is not None
    for qname, qtype, wmax in (("u8", U8, 127), ("i8_7bit", I8, 63)):
        m, x, ref, s = qdq_matmul(qtype, 5, wmax)
        d, path, label, _, why = run_checked(braid, work, f"qdq_matmul_{qname}", None, m, x, ref, s)
        if not why and (wmax <= 64 or int8_by_cpu()) and not int8_matmul(braid, path, {"x": x}, d):
            why = "the MatMul is not on an int8 kernel"
        print(f"FAIL {label}: {why}" if why else f"ok   {label}")
        failed += why is not None
    # hostile steps: a subnormal input step (1e-40: x / s overflows to inf, every input
    # saturates; the int8 kernels refuse it, their scales would not be normal floats) and a
    # huge one (1e30: every input rounds to the zero point); braid must run them, within one
    # output step of the native engine (a degenerate bias puts many sums on rounding ties)
    for qname, s_x in (("subnormal_step", 1e-40), ("huge_step", 1e30)):
        with np.errstate(over="ignore", invalid="ignore"):
            m, x, _, _ = qdq_cnn(U8, 3, 64, s_x=s_x)
        outs = {}
        for engine in (None, "native"):
            d, path, label = save(work, f"qdq_cnn_{qname}", engine, m)
            p, _ = run(braid, path, {"x": x}, d, engine)
            if p.returncode:
                outs = None
                print(f"FAIL {label}: braid run failed: {p.stderr.strip()[-400:]}")
                failed += 1
                break
            outs[engine] = np.load(os.path.join(d, "y.npy"))
        if outs is not None:
            steps = np.abs(outs[None].astype(np.float64) - outs["native"]) / 0.04
            why = f"{np.max(steps):.2f} steps apart" if not np.max(steps) <= 1.001 else None
            label = f"qdq_cnn_{qname} [auto against native]"
            print(f"FAIL {label}: {why}" if why else f"ok   {label}")
            failed += why is not None
    m, x, ref = big_weight()
    d, path, label = save(work, "big_weight", None, m)
    p, _ = run(braid, path, {"x": x}, d, None)
    why = f"braid run failed: {p.stderr.strip()[-400:]}" if p.returncode else None
    if not why:
        err = np.max(np.abs(np.load(os.path.join(d, "y.npy")) - ref)) / max(1.0, np.max(np.abs(ref)))
        why = f"max relative error {err:.3g}" if err > 1e-5 else None
    if not why:
        out = subprocess.run([braid, "inspect", path], capture_output=True, text=True, timeout=60).stdout
        why = None if "native 0 of" in out and "dnnl   1 of 1" in out else "not folded:\n" + out[-1200:]
    print(f"FAIL {label}: {why}" if why else f"ok   {label}")
    failed += why is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
