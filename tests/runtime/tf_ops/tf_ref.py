"""A numpy interpreter of the TensorFlow ops braid maps to oneDNN: the reference for the
tf_ops fixtures. Written from TensorFlow's op documentation, independently of braid.

    outputs = evaluate(graph_def, feeds)      # {"node:0": np.ndarray, ...} for every node

Layouts are TensorFlow's: NHWC activations, HWIO Conv2D filters, HWCM depthwise filters.
Padding SAME follows TensorFlow: out = ceil(in / stride), the extra padding goes at the end.
"""
import math

import numpy as np

DTYPES = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8,
          9: np.int64, 10: np.bool_, 17: np.uint16, 19: np.float16}


# ------------------------------------------------------------------ GraphDef decoding

def attrs(node):
    return {e.key: e.value for e in node.attr}


def attr_s(a, key, default=None):
    return a[key].s.decode() if key in a and a[key].HasField("s") else default


def attr_i(a, key, default=None):
    return a[key].i if key in a and a[key].HasField("i") else default


def attr_f(a, key, default=None):
    return a[key].f if key in a and a[key].HasField("f") else default


def attr_b(a, key, default=False):
    return a[key].b if key in a and a[key].HasField("b") else default


def attr_ints(a, key, default=None):
    return list(a[key].list.i) if key in a and a[key].HasField("list") else default


def attr_strs(a, key):
    return [s.decode() for s in a[key].list.s] if key in a and a[key].HasField("list") else []


def tensor_value(t):
    """A TensorProto as an ndarray (tensor_content, or the typed fields with TensorFlow's
    rule that a short value list repeats its last element)."""
    dt = DTYPES[t.dtype]
    shape = [d.size for d in t.tensor_shape.dim]
    n = int(np.prod(shape)) if shape else 1
    if t.tensor_content:
        return np.frombuffer(t.tensor_content, dtype=np.dtype(dt).newbyteorder("<")).astype(dt).reshape(shape)
    if t.dtype == 19:
        vals = np.array(list(t.half_val), dtype=np.uint16).view(np.float16)
    elif t.dtype in (1,):
        vals = np.array(list(t.float_val), dtype=dt)
    elif t.dtype == 2:
        vals = np.array(list(t.double_val), dtype=dt)
    elif t.dtype == 9:
        vals = np.array(list(t.int64_val), dtype=dt)
    elif t.dtype == 10:
        vals = np.array(list(t.bool_val), dtype=dt)
    else:
        vals = np.array(list(t.int_val), dtype=dt)
    if vals.size == 0:
        vals = np.zeros(1, dtype=dt)
    if vals.size < n:
        vals = np.concatenate([vals, np.full(n - vals.size, vals[-1], dtype=dt)])
    return vals[:n].reshape(shape)


def placeholder_shape(node):
    a = attrs(node)
    return [d.size for d in a["shape"].shape.dim]


def placeholder_dtype(node):
    return DTYPES[attrs(node)["dtype"].type]


# ------------------------------------------------------------------ op helpers

def same_pads(size, k, stride, dilation):
    eff = (k - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


def spatial_pads(a, x_hw, k_hw, strides, dilations):
    padding = attr_s(a, "padding")
    if padding == "VALID":
        return [(0, 0), (0, 0)]
    if padding == "SAME":
        return [same_pads(x_hw[i], k_hw[i], strides[i], dilations[i]) for i in range(2)]
    if padding == "EXPLICIT":
        p = attr_ints(a, "explicit_paddings")          # NHWC pairs
        return [(p[2], p[3]), (p[4], p[5])]
    raise ValueError("padding %r" % padding)


def nhwc_attr(a, key, default):
    v = attr_ints(a, key, None)
    return [v[1], v[2]] if v else default


def check_nhwc(a):
    fmt = attr_s(a, "data_format", "NHWC")
    if fmt != "NHWC":
        raise ValueError("fixtures use NHWC only, got %s" % fmt)


def conv2d(x, w, a, depthwise=False):
    """x [N,H,W,C]; w HWIO [kh,kw,C,O] or HWCM [kh,kw,C,M]."""
    check_nhwc(a)
    strides = nhwc_attr(a, "strides", [1, 1])
    dil = nhwc_attr(a, "dilations", [1, 1])
    kh, kw = w.shape[0], w.shape[1]
    pads = spatial_pads(a, x.shape[1:3], (kh, kw), strides, dil)
    x = np.pad(x.astype(np.float64), [(0, 0), pads[0], pads[1], (0, 0)])
    n, h, wd, c = x.shape
    oh = (h - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (wd - (kw - 1) * dil[1] - 1) // strides[1] + 1
    w = w.astype(np.float64)
    if depthwise:
        m = w.shape[3]
        out = np.zeros((n, oh, ow, c, m))
    else:
        out = np.zeros((n, oh, ow, w.shape[3]))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i * dil[0]: i * dil[0] + (oh - 1) * strides[0] + 1: strides[0],
                      j * dil[1]: j * dil[1] + (ow - 1) * strides[1] + 1: strides[1], :]
            if depthwise:
                out += patch[..., None] * w[i, j][None, None, None]
            else:
                out += patch @ w[i, j]
    if depthwise:
        out = out.reshape(n, oh, ow, c * m)       # channel c*M + m
    return out.astype(np.float32)


def pool(x, a, kind):
    check_nhwc(a)
    k = nhwc_attr(a, "ksize", None)
    strides = nhwc_attr(a, "strides", None)
    pads = spatial_pads(a, x.shape[1:3], k, strides, [1, 1])
    n, h, w, c = x.shape
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x.astype(np.float64), [(0, 0), pads[0], pads[1], (0, 0)], constant_values=fill)
    ones = np.pad(np.ones((1, h, w, 1)), [(0, 0), pads[0], pads[1], (0, 0)])
    oh = (xp.shape[1] - k[0]) // strides[0] + 1
    ow = (xp.shape[2] - k[1]) // strides[1] + 1
    out = np.full((n, oh, ow, c), fill)
    cnt = np.zeros((1, oh, ow, 1))
    for i in range(k[0]):
        for j in range(k[1]):
            sl = (slice(None), slice(i, i + (oh - 1) * strides[0] + 1, strides[0]),
                  slice(j, j + (ow - 1) * strides[1] + 1, strides[1]))
            if kind == "max":
                out = np.maximum(out, xp[sl])
            else:
                out = out + xp[sl]
                cnt = cnt + ones[sl]
    if kind == "avg":
        out = out / cnt                          # TensorFlow excludes the padding
    return out.astype(np.float32)


def activation(name, x, alpha=0.2, extra=None):
    if name == "Relu":
        return np.maximum(x, 0)
    if name == "Relu6":
        return np.minimum(np.maximum(x, 0), 6)
    if name == "Elu":
        return np.where(x > 0, x, np.expm1(x)).astype(np.float32)
    if name == "Sigmoid":
        return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    if name == "Tanh":
        return np.tanh(x)
    if name == "LeakyRelu":
        return np.where(x >= 0, x, alpha * x).astype(np.float32)
    if name == "Prelu":
        return np.where(x >= 0, x, extra * x).astype(np.float32)
    raise ValueError("activation %s" % name)


def fused(x, args, a):
    """_FusedConv2D / _FusedMatMul / FusedDepthwiseConv2dNative post-ops."""
    ops = attr_strs(a, "fused_ops")
    k = 0
    for op in ops:
        if op == "BiasAdd":
            x = x + args[k]
            k += 1
        elif op == "FusedBatchNorm":
            scale, offset, mean, var = args[k:k + 4]
            k += 4
            eps = attr_f(a, "epsilon", 1e-4)
            x = (x - mean) / np.sqrt(var + eps) * scale + offset
        elif op == "Prelu":
            x = activation("Prelu", x, extra=args[k])
            k += 1
        elif op == "Add":
            x = x + args[k]
            k += 1
        else:
            x = activation(op, x, alpha=attr_f(a, "leakyrelu_alpha", 0.2))
    return x.astype(np.float32)


def resize(x, size, a, mode):
    align = attr_b(a, "align_corners")
    half = attr_b(a, "half_pixel_centers")
    n, h, w, c = x.shape
    oh, ow = int(size[0]), int(size[1])

    def scale(insz, outsz):
        return (insz - 1) / (outsz - 1) if align and outsz > 1 else insz / outsz

    sh, sw = scale(h, oh), scale(w, ow)
    if mode == "nearest":
        def idx(o, s, insz):
            v = (o + 0.5) * s if half else o * s
            i = np.round(v) if align else np.floor(v)
            return np.minimum(i.astype(np.int64), insz - 1)
        ys = idx(np.arange(oh), sh, h)
        xs = idx(np.arange(ow), sw, w)
        return x[:, ys][:, :, xs]
    def src(o, s):
        return (o + 0.5) * s - 0.5 if half else o * s
    out = np.zeros((n, oh, ow, c))
    for oy in range(oh):
        fy = src(oy, sh)
        y0 = int(math.floor(fy))
        dy = fy - y0
        y0c, y1c = min(max(y0, 0), h - 1), min(max(y0 + 1, 0), h - 1)
        for ox in range(ow):
            fx = src(ox, sw)
            x0 = int(math.floor(fx))
            dx = fx - x0
            x0c, x1c = min(max(x0, 0), w - 1), min(max(x0 + 1, 0), w - 1)
            top = x[:, y0c, x0c] * (1 - dx) + x[:, y0c, x1c] * dx
            bot = x[:, y1c, x0c] * (1 - dx) + x[:, y1c, x1c] * dx
            out[:, oy, ox] = top * (1 - dy) + bot * dy
    return out.astype(np.float32)


def matmul(x, y, ta, tb):
    if ta:
        x = np.swapaxes(x, -1, -2)
    if tb:
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)


# ------------------------------------------------------------------ the interpreter

def run_node(node, ins):
    a = attrs(node)
    op = node.op
    if op in ("Identity", "StopGradient"):
        return [ins[0]]
    if op == "Const":
        return [tensor_value(a["value"].tensor)]
    if op == "Conv2D":
        return [conv2d(ins[0], ins[1], a)]
    if op == "DepthwiseConv2dNative":
        return [conv2d(ins[0], ins[1], a, depthwise=True)]
    if op == "_FusedConv2D":
        return [fused(conv2d(ins[0], ins[1], a), ins[2:], a)]
    if op == "FusedDepthwiseConv2dNative":
        return [fused(conv2d(ins[0], ins[1], a, depthwise=True), ins[2:], a)]
    if op == "MatMul":
        return [matmul(ins[0], ins[1], attr_b(a, "transpose_a"), attr_b(a, "transpose_b"))]
    if op == "_FusedMatMul":
        return [fused(matmul(ins[0], ins[1], attr_b(a, "transpose_a"), attr_b(a, "transpose_b")), ins[2:], a)]
    if op == "BatchMatMulV2":
        return [matmul(ins[0], ins[1], attr_b(a, "adj_x"), attr_b(a, "adj_y"))]
    if op == "BiasAdd":
        check_nhwc(a)
        return [ins[0] + ins[1]]
    if op in ("Relu", "Relu6", "Elu", "Sigmoid", "Tanh"):
        return [activation(op, ins[0])]
    if op == "LeakyRelu":
        return [activation(op, ins[0], alpha=attr_f(a, "alpha", 0.2))]
    if op == "Prelu":
        return [activation(op, ins[0], extra=ins[1])]
    binary = {"Add": np.add, "AddV2": np.add, "Sub": np.subtract, "Mul": np.multiply,
              "RealDiv": np.divide, "Maximum": np.maximum, "Minimum": np.minimum}
    if op in binary:
        return [binary[op](ins[0], ins[1]).astype(ins[0].dtype)]
    if op == "FusedBatchNormV3":
        check_nhwc(a)
        if attr_b(a, "is_training", True):
            raise ValueError("%s: is_training must be false in a frozen graph" % node.name)
        x, scale, offset, mean, var = ins[:5]
        eps = attr_f(a, "epsilon", 1e-4)
        y = ((x - mean) / np.sqrt(var + eps) * scale + offset).astype(np.float32)
        return [y, mean, var, mean, var, var]
    if op == "MaxPool":
        return [pool(ins[0], a, "max")]
    if op == "AvgPool":
        return [pool(ins[0], a, "avg")]
    if op == "Mean":
        axes = tuple(int(v) for v in np.atleast_1d(ins[1]))
        return [np.mean(ins[0].astype(np.float64), axis=axes, keepdims=attr_b(a, "keep_dims")).astype(np.float32)]
    if op in ("Pad", "PadV2"):
        cv = ins[2].item() if op == "PadV2" else 0
        return [np.pad(ins[0], [tuple(int(v) for v in p) for p in ins[1]], constant_values=cv)]
    if op == "ConcatV2":
        return [np.concatenate(ins[:-1], axis=int(ins[-1]))]
    if op == "Reshape":
        return [ins[0].reshape([int(v) for v in ins[1]])]
    if op == "Squeeze":
        dims = attr_ints(a, "squeeze_dims", []) or None
        return [np.squeeze(ins[0], axis=tuple(dims) if dims else None)]
    if op == "ExpandDims":
        return [np.expand_dims(ins[0], int(np.atleast_1d(ins[1])[0]))]
    if op == "Transpose":
        return [np.transpose(ins[0], [int(v) for v in ins[1]])]
    if op == "Softmax":
        x = ins[0].astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return [(e / e.sum(axis=-1, keepdims=True)).astype(np.float32)]
    if op == "ResizeBilinear":
        return [resize(ins[0], ins[1], a, "linear")]
    if op == "ResizeNearestNeighbor":
        return [resize(ins[0], ins[1], a, "nearest")]
    raise ValueError("tf_ref: op %s (node %s) has no reference" % (op, node.name))


def evaluate(graph, feeds):
    """Every node's outputs, as {"name:i": array}, given FEEDS {placeholder name: array}."""
    nodes = {n.name: n for n in graph.node}
    values = {}

    def get(ref):
        name, _, port = ref.partition(":")
        port = int(port or 0)
        key = "%s:%d" % (name, port)
        if key not in values:
            compute(nodes[name])
        return values[key]

    def compute(node, depth=0):
        if depth > 10000:
            raise ValueError("graph too deep")
        if node.op in ("Placeholder", "PlaceholderWithDefault") and node.name in feeds:
            outs = [feeds[node.name]]
        else:
            ins = [get(i) for i in node.input if not i.startswith("^")]
            outs = run_node(node, ins)
        for k, v in enumerate(outs):
            values["%s:%d" % (node.name, k)] = v

    for n in graph.node:
        if n.op != "NoOp":
            get(n.name)
    return values


def sinks(graph):
    """The nodes whose output 0 nobody reads (the fixtures' outputs), in file order."""
    used = set()
    for n in graph.node:
        for i in n.input:
            used.add(i.lstrip("^").partition(":")[0])
    return [n.name for n in graph.node if n.name not in used and n.op not in ("Const", "NoOp")]
