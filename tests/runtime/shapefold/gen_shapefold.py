#!/usr/bin/python3
"""Write the shape-folding models: small ONNX graphs (opset 13, a dynamic batch axis 'N')
whose consumers' shapes are computed by the graph from Shape, the way dynamic-axis exports do,
with numpy references computed from the inputs (not by any ONNX runtime).

    gen_shapefold.py DIR [BATCH]

Writes, per model NAME: NAME.onnx, NAME.in.npy (the one input, batch BATCH, default 2) and
NAME.out<K>.npy (the reference of output K). Needs onnx (Debian's python3-onnx 1.12) and numpy.

Models:
  pad_swin         x[N,5,7,4] -> Pad whose pads come through F.pad's chain: Shape -> Gather ->
                   Mod/Sub/Mod -> Unsqueeze -> Concat -> Cast -> Concat(ConstantOfShape) ->
                   Reshape[-1,2] -> Slice(step -1) -> Transpose -> Reshape[-1] -> Cast
  consumers        x[N,4,6] -> Reshape, Expand, Tile and Slice, each fed by Shape arithmetic
  resize_sizes     x[N,2,3,3] -> Resize(sizes) where sizes = Cast(Floor(Cast(Shape)*2)):
                   a float chain, folded by running it, that inference then reads
  range_where      x[N,4,6] -> Gather(Range(0, Min(d2, 4))), Expand to Where(Equal(s, 1), ...),
                   Reshape to Max(s, [1,1,1]) arithmetic
  init_only        x[2,8] + Relu(W1 @ W2) + Gather(T, idx): the right-hand side reads only
                   initializers
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
RNG = np.random.default_rng(2417)


class G:
    """A graph under construction: nodes, initializers, unique names."""

    def __init__(self):
        self.nodes, self.inits, self.k = [], [], 0

    def const(self, value, dtype=np.int64):
        self.k += 1
        name = "c%d" % self.k
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type, *inputs, **attrs):
        self.k += 1
        out = "t%d" % self.k
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name="n%d_%s" % (self.k, op_type), **attrs))
        return out

    def dim(self, shape, i):
        """Shape[i] as a 1-element INT64 tensor (Gather of a scalar index, then Unsqueeze)."""
        return self.op("Unsqueeze", self.op("Gather", shape, self.const(i), axis=0), self.const([0]))

    def model(self, x_shape, outputs, name):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
        outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        graph = helper.make_graph(self.nodes, name, [x], outs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        m.ir_version = 7
        return m


def pad_swin():
    """F.pad(x, (0, 0, 0, pad_w, 0, pad_h)) on NHWC x with window 4, as torch exports it."""
    g, win = G(), 4
    s = g.op("Shape", "x")
    pads = []
    for axis in (1, 2):                                   # pad_h, pad_w = (win - d % win) % win
        d = g.op("Gather", s, g.const(axis), axis=0)
        p = g.op("Mod", g.op("Sub", g.const(win), g.op("Mod", d, g.const(win))), g.const(win))
        pads.append(g.op("Unsqueeze", p, g.const([0])))
    # torch's list (0, 0, 0, pad_w, 0, pad_h): last dim first, (begin, end) per dim
    lst = g.op("Cast", g.op("Concat", g.const([0, 0, 0]), pads[1], g.const([0]), pads[0], axis=0), to=TensorProto.INT64)
    zeros = g.op("ConstantOfShape", g.op("Sub", g.const([8]), g.op("Shape", lst)),
                 value=numpy_helper.from_array(np.zeros([1], np.int64)))
    full = g.op("Concat", lst, zeros, axis=0)
    pairs = g.op("Reshape", full, g.const([-1, 2]))
    rev = g.op("Slice", pairs, g.const([-1]), g.const([-(2 ** 63)]), g.const([0]), g.const([-1]))
    onnx_pads = g.op("Cast", g.op("Reshape", g.op("Transpose", rev, perm=[1, 0]), g.const([-1])), to=TensorProto.INT64)
    y = g.op("Pad", "x", onnx_pads, g.const(0.0, np.float32))
    x = RNG.standard_normal((BATCH, 5, 7, 4)).astype(np.float32)
    ph, pw = (win - 5 % win) % win, (win - 7 % win) % win
    return g.model(["N", 5, 7, 4], [y], "pad_swin"), x, [np.pad(x, ((0, 0), (0, ph), (0, pw), (0, 0)))]


def consumers():
    g = G()
    s = g.op("Shape", "x")
    n, c, w = g.dim(s, 0), g.dim(s, 1), g.dim(s, 2)
    flat = g.op("Reshape", "x", g.op("Concat", n, g.op("Mul", c, w), axis=0))                   # [N,24]
    ones = g.const(RNG.standard_normal((1, 1, 6)), np.float32)
    exp = g.op("Add", g.op("Expand", ones, g.op("Concat", n, c, w, axis=0)), "x")             # [N,4,6]
    tile = g.op("Tile", "x", g.op("Concat", g.const([1]), g.op("Div", c, g.const([2])), g.const([1]), axis=0))  # [N,8,6]
    sl = g.op("Slice", "x", g.const([1]), g.op("Sub", w, g.const([1])), g.const([2]))        # [N,4,4]
    x = RNG.standard_normal((BATCH, 4, 6)).astype(np.float32)
    e = numpy_helper.to_array(g.inits[[i.name for i in g.inits].index(ones)])
    refs = [x.reshape(BATCH, 24), np.broadcast_to(e, x.shape) + x, np.tile(x, (1, 2, 1)), x[:, :, 1:5]]
    return g.model(["N", 4, 6], [flat, exp, tile, sl], "consumers"), x, refs


def resize_sizes():
    g = G()
    s = g.op("Shape", "x")
    hw = g.op("Slice", s, g.const([2]), g.const([4]))
    big = g.op("Cast", g.op("Floor", g.op("Mul", g.op("Cast", hw, to=TensorProto.FLOAT), g.const([2.0], np.float32))),
               to=TensorProto.INT64)
    sizes = g.op("Concat", g.op("Slice", s, g.const([0]), g.const([2])), big, axis=0)
    y = g.op("Resize", "x", "", "", sizes, mode="nearest", nearest_mode="floor",
             coordinate_transformation_mode="asymmetric")
    y = g.op("Relu", y)
    x = RNG.standard_normal((BATCH, 2, 3, 3)).astype(np.float32)
    ref = np.maximum(x.repeat(2, axis=2).repeat(2, axis=3), 0)
    return g.model(["N", 2, 3, 3], [y], "resize_sizes"), x, [ref]


def range_where():
    g = G()
    s = g.op("Shape", "x")
    d2 = g.dim(s, 2)
    stop = g.op("Squeeze", g.op("Min", d2, g.const([4])), g.const([0]))
    idx = g.op("Range", g.const(0), stop, g.const(1))
    first4 = g.op("Gather", "x", idx, axis=2)                                            # [N,4,4]
    # Expand a [N,1,6] slice back to Where(Equal(s, 1), ..., s) = s: no 1s in [N,4,6] at N=2
    col = g.op("Slice", "x", g.const([0]), g.const([1]), g.const([1]))                   # [N,1,6]
    target = g.op("Where", g.op("Equal", s, g.const([1])), g.const([7, 7, 7]), s)
    wide = g.op("Expand", col, target)                                                   # [N,4,6]
    # Reshape to [N, Max(s[1] * s[2] / 8, 1), 8]
    rows = g.op("Max", g.op("Div", g.op("Mul", g.dim(s, 1), d2), g.const([8])), g.const([1]))
    r = g.op("Reshape", "x", g.op("Concat", g.dim(s, 0), rows, g.const([8]), axis=0))     # [N,3,8]
    x = RNG.standard_normal((BATCH, 4, 6)).astype(np.float32)
    refs = [x[:, :, :4], np.broadcast_to(x[:, :1, :], x.shape), x.reshape(BATCH, 3, 8)]
    return g.model(["N", 4, 6], [first4, wide, r], "range_where"), x, refs


def init_only():
    g = G()
    w1 = RNG.standard_normal((2, 16)).astype(np.float32)
    w2 = RNG.standard_normal((16, 8)).astype(np.float32)
    t = RNG.standard_normal((5, 8)).astype(np.float32)
    bias = g.op("Relu", g.op("MatMul", g.const(w1, np.float32), g.const(w2, np.float32)))   # [2,8]
    row = g.op("Gather", g.const(t, np.float32), g.const([3, 1]), axis=0)                 # [2,8]
    y = g.op("Add", "x", g.op("Add", bias, row))
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    return g.model([2, 8], [y], "init_only"), x, [x + (np.maximum(w1 @ w2, 0) + t[[3, 1]])]


MODELS = [pad_swin, consumers, resize_sizes, range_where, init_only]

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out = sys.argv[1]
    BATCH = int(sys.argv[2]) if len(sys.argv) == 3 else 2
    os.makedirs(out, exist_ok=True)
    for make in MODELS:
        m, x, refs = make()
        onnx.save(m, os.path.join(out, make.__name__ + ".onnx"))
        np.save(os.path.join(out, make.__name__ + ".in.npy"), x)
        for k, r in enumerate(refs):
            np.save(os.path.join(out, "%s.out%d.npy" % (make.__name__, k)), np.ascontiguousarray(r, np.float32))
        print(make.__name__, [r.shape for r in refs])
