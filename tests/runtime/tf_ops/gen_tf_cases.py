#!/usr/bin/env python3
"""Per-op GraphDefs made and computed by TensorFlow itself (run with the tf-venv python).

    gen_tf_cases.py OUTDIR GROUP

Writes OUTDIR/<case>/model.pb (a GraphDef: Placeholders, the op under test, Identity outputs
named out_<k>), in_<i>.npy (seeded inputs) and refs.json ({inputs: [{name, file}], outputs:
[{name, file}]}) with TensorFlow's outputs in out_<k>.npy. GROUP is one of the keys of GROUPS
(math, array, strided_slice, deconv). Cases TensorFlow itself rejects (an invalid random
StridedSlice spec) are left out. test_tf_cases.py runs braid on them.
"""
import json
import os
import sys
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

v1 = tf.compat.v1


class Case:
    def __init__(self, name):
        self.name = name
        self.graph = tf.Graph()
        self.feeds = {}
        self.outputs = []
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    def ph(self, shape, dtype=np.float32, lo=-2.0, hi=2.0, name=None, value=None):
        name = name or "in_%d" % len(self.feeds)
        with self.graph.as_default():
            p = v1.placeholder(tf.as_dtype(dtype), shape=shape, name=name)
        if value is not None:
            x = np.asarray(value, dtype=dtype)
        elif np.issubdtype(dtype, np.integer):
            x = self.rng.integers(int(lo), int(hi), size=shape).astype(dtype)
        elif dtype == np.bool_:
            x = self.rng.random(shape) < 0.5
        else:
            x = self.rng.uniform(lo, hi, size=shape).astype(dtype)
        self.feeds[p] = x
        return p

    def out(self, t):
        with self.graph.as_default():
            self.outputs.append(tf.identity(t, name="out_%d" % len(self.outputs)))

    def write(self, outdir):
        d = os.path.join(outdir, self.name)
        os.makedirs(d, exist_ok=True)
        with v1.Session(graph=self.graph) as s:
            vals = s.run(self.outputs, feed_dict=self.feeds)
        gd = self.graph.as_graph_def()
        with open(os.path.join(d, "model.pb"), "wb") as f:
            f.write(gd.SerializeToString())
        ins, outs = [], []
        for i, (p, x) in enumerate(self.feeds.items()):
            np.save(os.path.join(d, "in_%d.npy" % i), x)
            ins.append({"name": p.op.name, "file": "in_%d.npy" % i})
        for k, (t, v) in enumerate(zip(self.outputs, vals)):
            np.save(os.path.join(d, "out_%d.npy" % k), np.asarray(v))
            src = t.op.inputs[0].name
            outs.append({"name": t.op.name, "file": "out_%d.npy" % k,
                         "src": src[:-2] if src.endswith(":0") else src})
        with open(os.path.join(d, "refs.json"), "w") as f:
            json.dump({"inputs": ins, "outputs": outs}, f)


def case(name, build):
    c = Case(name)
    with c.graph.as_default():
        build(c)
    return c


# ---- element-wise math, comparisons, reductions, casts -----------------------------------

def math_cases():
    cs = []
    un = {"Abs": tf.abs, "Neg": tf.negative, "Sqrt": tf.sqrt, "Rsqrt": tf.math.rsqrt, "Exp": tf.exp,
          "Log": tf.math.log, "Log1p": tf.math.log1p, "Erfc": tf.math.erfc, "Floor": tf.floor, "Ceil": tf.math.ceil,
          "Round": tf.round, "Sin": tf.sin, "Cos": tf.cos, "Tan": tf.tan, "Atan": tf.atan,
          "Sinh": tf.sinh, "Cosh": tf.cosh, "Erf": tf.math.erf, "Sign": tf.sign,
          "Softplus": tf.nn.softplus, "Softsign": tf.nn.softsign, "Reciprocal": tf.math.reciprocal,
          "Square": tf.square, "Selu": tf.nn.selu, "Tanh": tf.tanh}
    for op, fn in un.items():
        pos = op in ("Sqrt", "Rsqrt", "Log", "Log1p", "Reciprocal")
        cs.append(case("u_" + op, lambda c, fn=fn, pos=pos:
                       c.out(fn(c.ph([2, 3, 4], lo=0.1 if pos else -3, hi=3)))))
    cs.append(case("u_Round_halves", lambda c: c.out(tf.round(
        c.ph([7], value=[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.4])))))
    cs.append(case("u_Abs_int", lambda c: c.out(tf.abs(c.ph([5, 3], np.int32, -9, 9)))))
    cs.append(case("u_Square_int", lambda c: c.out(tf.square(c.ph([5, 3], np.int32, -9, 9)))))
    bi = {"SquaredDifference": tf.math.squared_difference, "Pow": tf.pow, "FloorDiv": tf.math.floordiv,
          "FloorMod": tf.math.floormod, "Atan2": tf.atan2, "Div": tf.raw_ops.Div,
          "Maximum": tf.maximum, "Minimum": tf.minimum}
    for op, fn in bi.items():
        def b(c, fn=fn, op=op):
            lo = 0.2 if op == "Pow" else -4
            x = c.ph([3, 4], lo=lo, hi=4)
            y = c.ph([4], lo=0.5, hi=3) if op in ("Pow", "FloorDiv", "FloorMod", "Div") else c.ph([4], lo=-4, hi=4)
            if op in ("FloorDiv", "FloorMod", "Div"):
                y = y * tf.constant([1, -1, 1, -1], tf.float32)
            c.out(fn(x, y) if op != "Div" else fn(x=x, y=y))
        cs.append(case("b_" + op, b))
    for op, fn in {"FloorDiv": tf.math.floordiv, "FloorMod": tf.math.floormod,
                   "TruncateDiv": tf.truncatediv, "Add": tf.add, "Sub": tf.subtract, "Mul": tf.multiply,
                   "Maximum": tf.maximum}.items():
        def bi_int(c, fn=fn):
            x = c.ph([4, 5], np.int32, -20, 20)
            y = tf.constant([3, -3, 7, -2, 5], tf.int32)
            c.out(fn(x, y))
        cs.append(case("b_int_" + op, bi_int))
    cmp_ = {"Equal": tf.equal, "NotEqual": tf.not_equal, "Less": tf.less, "LessEqual": tf.less_equal,
            "Greater": tf.greater, "GreaterEqual": tf.greater_equal}
    for op, fn in cmp_.items():
        def cm(c, fn=fn):
            x = c.ph([3, 4], np.int32, -3, 3)
            y = c.ph([4], np.int32, -3, 3)
            c.out(tf.cast(fn(x, y), tf.int32))
            xf, yf = tf.cast(x, tf.float32), tf.cast(y, tf.float32)
            c.out(tf.cast(fn(xf, yf), tf.float32))
        cs.append(case("c_" + op, cm))

    def logical(c):
        a = c.ph([3, 4], np.bool_)
        b = c.ph([3, 4], np.bool_)
        c.out(tf.cast(tf.logical_and(a, b), tf.int32))
        c.out(tf.cast(tf.logical_or(a, b), tf.int32))
        c.out(tf.cast(tf.logical_not(a), tf.int32))
    cs.append(case("logical", logical))

    def select(c):
        cond = c.ph([3, 4], np.bool_)
        x, y = c.ph([3, 4]), c.ph([3, 4])
        c.out(tf.raw_ops.SelectV2(condition=cond, t=x, e=y))
        c.out(tf.raw_ops.SelectV2(condition=cond, t=x, e=tf.constant(0.0)))
        c.out(tf.raw_ops.Select(condition=cond, x=x, y=y))
        # Select (v1) picking rows with a vector condition, the ranks unknown to the
        # translator (the Adds hide them).
        rows = c.ph([3], np.bool_)
        xr, yr = c.ph([3, 4, 2]) + 0.0, c.ph([3, 4, 2]) + 0.0
        c.out(tf.raw_ops.Select(condition=tf.logical_not(rows), x=xr, y=yr))
        c.out(tf.raw_ops.Select(condition=tf.logical_not(cond), x=x + 0.0, y=y + 0.0))
    cs.append(case("select", select))

    def add_n(c):
        c.out(tf.add_n([c.ph([2, 3]), c.ph([2, 3]), c.ph([2, 3]), c.ph([2, 3])]))
    cs.append(case("add_n", add_n))

    def cast(c):
        x = c.ph([3, 5], lo=-5, hi=5)
        c.out(tf.cast(x, tf.int32))
        c.out(tf.cast(tf.cast(x, tf.int32), tf.float32))
        c.out(tf.cast(tf.cast(x, tf.bool), tf.float32))
        c.out(tf.cast(tf.cast(x, tf.int64), tf.int32))
    cs.append(case("cast", cast))

    for op, fn in {"Sum": tf.reduce_sum, "Max": tf.reduce_max, "Min": tf.reduce_min,
                   "Prod": tf.reduce_prod, "Mean": tf.reduce_mean}.items():
        def red(c, fn=fn):
            x = c.ph([2, 3, 4], lo=0.5, hi=1.5)
            c.out(fn(x, axis=1))
            c.out(fn(x, axis=[0, 2], keepdims=True))
            c.out(fn(x, axis=-1))
            c.out(fn(x, axis=[]))
            c.out(fn(x, axis=[0, 1, 2]))
        cs.append(case("r_" + op, red))

    def red_int(c):
        x = c.ph([3, 4], np.int32, -5, 5)
        c.out(tf.reduce_sum(x, axis=0))
        c.out(tf.reduce_max(x, axis=1, keepdims=True))
        c.out(tf.reduce_min(x, axis=-1))
        c.out(tf.reduce_prod(x, axis=0))
    cs.append(case("r_int", red_int))

    def all_any(c):
        b = c.ph([3, 4], np.bool_)
        c.out(tf.cast(tf.reduce_all(b, axis=1), tf.int32))
        c.out(tf.cast(tf.reduce_any(b, axis=0, keepdims=True), tf.int32))
    cs.append(case("r_all_any", all_any))

    def argmax(c):
        x = c.ph([3, 4, 5])
        c.out(tf.argmax(x, axis=1))
        c.out(tf.argmax(x, axis=-1, output_type=tf.int32))
        c.out(tf.argmin(x, axis=0))
    cs.append(case("argmax", argmax))

    def int_matmul(c):
        a = c.ph([5, 3], np.int32, -4, 4)
        b = c.ph([3, 4], np.int32, -4, 4)
        c.out(tf.matmul(a, b))
        c.out(tf.matmul(b, a, transpose_a=True, transpose_b=True))
    cs.append(case("int_matmul", int_matmul))

    def batch_matmul_adj(c):
        # The Adds hide the operands' ranks from the translator (no _output_shapes): adj_x/adj_y
        # then become an Einsum over the batch dims.
        a = c.ph([2, 4, 3]) + 0.0
        b = c.ph([2, 5, 3]) + 0.0
        b2 = c.ph([2, 5, 4]) + 0.0
        c.out(tf.linalg.matmul(a, b, transpose_b=True))
        c.out(tf.linalg.matmul(a, a, transpose_a=True))
        c.out(tf.linalg.matmul(a, b2, transpose_a=True, transpose_b=True))
    cs.append(case("batch_matmul_adj", batch_matmul_adj))

    def softmaxes(c):
        x = c.ph([2, 5], lo=-3, hi=3)
        c.out(tf.nn.log_softmax(x))
        c.out(tf.clip_by_value(x, -1.0, 0.5))
    cs.append(case("logsoftmax_clip", softmaxes))
    return cs


# ---- array ops ---------------------------------------------------------------------------

def array_cases():
    cs = []

    def shape_size(c):
        x = c.ph([2, 3, 4])
        c.out(tf.shape(x))
        c.out(tf.shape(x, out_type=tf.int64))
        c.out(tf.size(x))
        c.out(tf.reshape(x, tf.stack([tf.shape(x)[0], -1])))
        c.out(tf.reshape(x, tf.concat([tf.shape(x)[:1], [12]], 0)))
    cs.append(case("shape_size", shape_size))

    def pack_unpack(c):
        a, b, d = c.ph([3, 4]), c.ph([3, 4]), c.ph([3, 4])
        c.out(tf.stack([a, b, d], axis=0))
        c.out(tf.stack([a, b, d], axis=1))
        c.out(tf.stack([a, b], axis=-1))
        u = tf.unstack(a, axis=1)
        c.out(u[0])
        c.out(u[3])
        c.out(tf.unstack(b, axis=0)[2])
    cs.append(case("pack_unpack", pack_unpack))

    def split(c):
        x = c.ph([4, 6, 2])
        p = tf.split(x, 3, axis=1)
        c.out(p[0])
        c.out(p[2])
        q = tf.split(x, [1, -1, 2], axis=1)
        c.out(q[1])
        c.out(q[2])
        r = tf.split(x, [1, 3], axis=0)
        c.out(r[1])
    cs.append(case("split", split))

    def slice_(c):
        x = c.ph([4, 5, 6])
        c.out(tf.slice(x, [1, 0, 2], [2, -1, 3]))
        c.out(tf.slice(x, [0, 4, 0], [-1, 1, -1]))
    cs.append(case("slice", slice_))

    def fill_tile(c):
        x = c.ph([2, 3])
        c.out(tf.tile(x, [2, 3]))
        c.out(tf.tile(x, tf.stack([tf.shape(x)[0], 1])))
        c.out(tf.fill(tf.shape(x), 2.5))
        c.out(tf.fill([2, 4], 7))
        c.out(tf.zeros_like(x))
        c.out(tf.ones_like(x))
        c.out(tf.broadcast_to(tf.reshape(x, [2, 1, 3]), [2, 4, 3]))
        c.out(tf.range(0, 10, 3))
        c.out(tf.range(1.0, 2.0, 0.25))
        # A float range over a size (inference folds the cast): movenet-multipose's meshgrid.
        c.out(tf.range(0.0, tf.cast(tf.shape(x)[1], tf.float32), 1.0))
    cs.append(case("fill_tile_range", fill_tile))

    def resize_computed(c):
        img = c.ph([1, 4, 5, 3])
        size = tf.shape(img)[1:3] * 2
        c.out(tf.raw_ops.ResizeBilinear(images=img, size=size, half_pixel_centers=True))
    cs.append(case("resize_computed_size", resize_computed))

    def sparse_to_dense_empty(c):
        x = c.ph([2, 5])
        d = tf.raw_ops.SparseToDense(sparse_indices=tf.zeros([0, 1], tf.int64),
                                     output_shape=tf.constant([5], tf.int64),
                                     sparse_values=tf.zeros([0], tf.float32),
                                     default_value=tf.constant(1.5))
        c.out(x + d)
    cs.append(case("sparse_to_dense_empty", sparse_to_dense_empty))

    def gather(c):
        x = c.ph([5, 4, 3])
        c.out(tf.gather(x, [4, 0, 2], axis=0))
        c.out(tf.gather(x, [[1, 3], [0, 0]], axis=1))
        c.out(tf.gather(x, [-1 + 3, 1], axis=-1))
        c.out(tf.gather_nd(x, [[0, 1], [4, 3]]))
        c.out(tf.gather_nd(x, [[[0, 1, 2]], [[4, 3, 0]]]))
        xi = c.ph([6], np.int32, 0, 6)
        c.out(tf.gather(tf.constant(np.arange(60, dtype=np.float32).reshape(6, 10)), xi))
    cs.append(case("gather", gather))

    def topk(c):
        x = c.ph([3, 10])
        v, i = tf.math.top_k(x, k=4)
        c.out(v)
        c.out(i)
    cs.append(case("topk", topk))

    def d2s(c):
        x = c.ph([1, 3, 4, 12])
        c.out(tf.nn.depth_to_space(x, 2))
        y = c.ph([2, 4, 6, 3])
        c.out(tf.nn.space_to_depth(y, 2))
    cs.append(case("depth_space", d2s))

    def mirror(c):
        x = c.ph([1, 4, 5, 2])
        c.out(tf.pad(x, [[0, 0], [2, 1], [1, 3], [0, 0]], mode="REFLECT"))
    cs.append(case("mirror_pad", mirror))

    def einsum(c):
        a, b = c.ph([2, 3, 4]), c.ph([2, 4, 5])
        c.out(tf.einsum("bij,bjk->bik", a, b))
        c.out(tf.einsum("bij->bji", a))
        # Keras MultiHeadAttention's two products (as a Transpose/MatMul/Transpose).
        q, kk = c.ph([2, 5, 3, 4]), c.ph([2, 6, 3, 4])
        c.out(tf.einsum("BTNH,BSNH->BNTS", q, kk))
        p_ = c.ph([2, 3, 5, 6])
        c.out(tf.einsum("BNTS,BSNH->BTNH", p_, kk))
        c.out(tf.einsum("ij,jk->ik", c.ph([3, 4]), c.ph([4, 5])))
    cs.append(case("einsum", einsum))
    return cs


# ---- StridedSlice: random specs over all five masks ----------------------------------------

def strided_slice_cases(n=400):
    """Random StridedSlice specs on a [4, 5, 6] and a [3, 1, 4, 2] input; TF keeps the valid ones.
    The rank-4 input goes through an Add first, so the translator does not know its rank (the
    ellipsis and the dims after it are numbered from the back); there a backward slice whose
    begin lies before the front (which braid clamps only knowing the dim) is not drawn."""
    rng = np.random.default_rng(7)
    cases = []
    for shape, tag in (([4, 5, 6], "r3"), ([3, 1, 4, 2], "r4")):
        c = Case("strided_slice_" + tag)
        with c.graph.as_default():
            x = c.ph(shape)
            unknown_rank = len(shape) == 4
            if unknown_rank:
                x = x + 0.0
            kept = 0
            for _ in range(n):
                k = int(rng.integers(1, len(shape) + 2))
                begin = rng.integers(-7, 8, size=k).tolist()
                end = rng.integers(-7, 8, size=k).tolist()
                strides = rng.choice([-3, -2, -1, 1, 1, 2, 3], size=k).tolist()
                bits = lambda p: int(sum(1 << i for i in range(k) if rng.random() < p))
                bm, em, nm, sm = bits(0.3), bits(0.3), bits(0.15), bits(0.25)
                el = (1 << int(rng.integers(0, k))) if rng.random() < 0.35 else 0
                for i in range(k):
                    if sm >> i & 1:
                        strides[i] = 1
                        begin[i] = int(rng.integers(-2, 2))
                    if unknown_rank and strides[i] < 0 and begin[i] < -1:
                        begin[i] = -1
                try:
                    y = tf.raw_ops.StridedSlice(input=x, begin=tf.constant(begin, tf.int32),
                                                end=tf.constant(end, tf.int32),
                                                strides=tf.constant(strides, tf.int32),
                                                begin_mask=bm, end_mask=em, ellipsis_mask=el,
                                                new_axis_mask=nm, shrink_axis_mask=sm)
                    with v1.Session(graph=c.graph) as s:
                        s.run(y, feed_dict=c.feeds)
                except Exception:
                    continue
                c.out(y)
                kept += 1
        cases.append(c)

    # A few hand-picked ones the models use: x[:, k], x[..., 0], x[None, 1:], x[::-1], x[-1].
    def picks(c):
        x = c.ph([4, 5, 6])
        c.out(x[:, 2])
        c.out(x[..., 0])
        c.out(x[tf.newaxis, 1:])
        c.out(x[::-1])
        c.out(x[-1])
        c.out(x[1:3, ..., ::2])
        c.out(x[..., tf.newaxis, -2])
        c.out(x[-10::-1])
        c.out(x[:, -1:-6:-2, 1])
    cases.append(case("strided_slice_picks", picks))
    return cases


# ---- transposed convolution --------------------------------------------------------------

def deconv_cases():
    cs = []
    for (h, w, k, s, pad, oh, ow) in [(4, 4, 3, 2, "SAME", 8, 8), (4, 5, 3, 2, "SAME", 7, 9),
                                      (3, 3, 4, 2, "VALID", 8, 8), (5, 5, 3, 1, "SAME", 5, 5),
                                      (3, 4, 2, 2, "SAME", 6, 8), (3, 3, 3, 3, "VALID", 9, 9)]:
        def b(c, h=h, w=w, k=k, s=s, pad=pad, oh=oh, ow=ow):
            x = c.ph([1, h, w, 5])
            f = tf.constant(c.rng.standard_normal([k, k, 3, 5]).astype(np.float32))
            c.out(tf.nn.conv2d_transpose(x, f, [1, oh, ow, 3], strides=s, padding=pad))
        cs.append(case("deconv_%dx%d_k%d_s%d_%s_%dx%d" % (h, w, k, s, pad, oh, ow), b))
    # input_sizes computed from the input's shape, as Keras' Conv2DTranspose freezes it.
    for (k, s, pad) in [(4, 2, "SAME"), (3, 2, "SAME"), (1, 2, "SAME"), (3, 2, "VALID"), (1, 3, "VALID")]:
        def kb(c, k=k, s=s, pad=pad):
            x = c.ph([1, 5, 6, 4])
            f = tf.constant(c.rng.standard_normal([k, k, 3, 4]).astype(np.float32))
            sh = tf.shape(x)
            extra = max(k - s, 0) if pad == "VALID" else 0
            sizes = tf.stack([sh[0], sh[1] * s + extra, sh[2] * s + extra, 3])
            c.out(tf.nn.conv2d_transpose(x, f, sizes, strides=s, padding=pad))
        cs.append(case("deconv_keras_k%d_s%d_%s" % (k, s, pad), kb))
    return cs


GROUPS = {"math": math_cases, "array": array_cases, "strided_slice": strided_slice_cases,
          "deconv": deconv_cases}


def main():
    outdir, group = sys.argv[1], sys.argv[2]
    for c in GROUPS[group]():
        c.write(outdir)
        print(c.name, len(c.outputs))


if __name__ == "__main__":
    main()
