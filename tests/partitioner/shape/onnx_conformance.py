#!/usr/bin/python3
"""Shape inference against ONNX's own node tests (Debian's libonnx-testdata): for every test
whose ops all have a braid shape rule (opsets 7-17), integer and scalar inputs become
initializers (as exporters write shapes and axes), the model is imported and inferred with
static shapes required, and each output's dtype and dims must equal the reference output's.
Usage: onnx_conformance.py SHAPE_DUMP_EXE"""
import collections, glob, os, subprocess, sys, tempfile

import onnx

OPS = set("""Conv MaxPool AveragePool GlobalAveragePool GlobalMaxPool MatMul Gemm Relu LeakyRelu
Sigmoid Tanh Erf Gelu Sqrt Exp Log Neg Abs Reciprocal Elu HardSigmoid HardSwish Softplus Not
Clip Dropout Add Sub Mul Div Pow Equal Less Greater Where ReduceMean ReduceSum ReduceMax
ReduceMin ReduceProd BatchNormalization LayerNormalization Softmax LogSoftmax Reshape Flatten
Transpose Squeeze Unsqueeze Concat Identity Cast Gather Slice Shape Constant ConstantOfShape
Range Expand Split Tile TopK Size ArgMax ArgMin GatherElements Acos Acosh Asin Asinh Atan Atanh
Cos Cosh Sin Sinh Tan Ceil Floor Round Sign Softsign Mish Celu Selu Shrink ThresholdedRelu IsInf
IsNaN CastLike Mod BitShift LessOrEqual GreaterOrEqual And Or Xor Sum Mean Max Min ReduceL1
ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare CumSum Hardmax DepthToSpace SpaceToDepth
ReverseSequence Trilu EyeLike OneHot GatherND ScatterND ScatterElements Scatter Einsum
ConvTranspose MaxUnpool LpPool GlobalLpPool LRN InstanceNormalization MeanVarianceNormalization
LpNormalization LSTM GRU RNN NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss GridSample
RoiAlign QuantizeLinear DequantizeLinear DynamicQuantizeLinear PRelu""".split())
# Compress, Unique and NonZero are left out: their output sizes follow the data.
# Cases whose output sizes follow values shape inference does not fold: the window functions'
# expansions Range over a size Cast to FLOAT (the plan's constant pass folds those, on the
# native engine; inference folds integer shape arithmetic only).
DYNAMIC = {"test_%swindow%s_expanded" % (w, s) for w in ("blackman", "hamming", "hann")
           for s in ("", "_symmetric")}
DATA = "/usr/share/libonnx-testdata/data/node"
# ONNX's test data stores BFLOAT16 results as UINT16 words.
SAME_TYPE = {(16, 4)}


def main():
    dump = sys.argv[1]
    if not os.path.isdir(DATA):
        print("libonnx-testdata is not installed: skipping")
        return 77
    stats, fails = collections.Counter(), []
    tmp = tempfile.mkdtemp(prefix="braid-shape-")
    for d in sorted(glob.glob(os.path.join(DATA, "test_*"))):
        try:
            m = onnx.load(os.path.join(d, "model.onnx"))
        except Exception:
            continue
        if os.path.basename(d) in DYNAMIC:
            continue
        if not m.graph.node or any(n.op_type not in OPS or n.domain not in ("", "ai.onnx")
                                   for n in m.graph.node):
            continue
        opset = max([o.version for o in m.opset_import if o.domain in ("", "ai.onnx")] or [0])
        if not 7 <= opset <= 17:
            continue
        ds = os.path.join(d, "test_data_set_0")
        inits = []
        for i, vi in enumerate(m.graph.input):
            tt = vi.type.tensor_type
            scalar = tt.HasField("shape") and len(tt.shape.dim) == 0
            pb = os.path.join(ds, "input_%d.pb" % i)
            if (tt.elem_type in (6, 7) or scalar) and os.path.exists(pb):
                t = onnx.TensorProto()
                t.ParseFromString(open(pb, "rb").read())
                t.name = vi.name
                inits.append(t)
        if any(vi.type.WhichOneof("value") != "tensor_type" for vi in m.graph.input):
            continue
        if inits:
            names = {t.name for t in inits}
            keep = [vi for vi in m.graph.input if vi.name not in names]
            del m.graph.input[:]
            m.graph.input.extend(keep)
            m.graph.initializer.extend(inits)
        path = os.path.join(tmp, "model.onnx")
        onnx.save(m, path)
        res = subprocess.run([dump, path], capture_output=True, text=True, timeout=60)
        out, name = res.stdout, os.path.basename(d)
        if res.returncode != 0:
            stats["failed"] += 1
            fails.append("%s: shape_dump exited %d: %s" % (name, res.returncode, res.stderr[-2000:]))
            continue
        if out.startswith(("import:", "infer:")):
            stats["failed"] += 1
            fails.append("%s: %s" % (name, out.strip()))
            continue
        mine = {}
        for line in out.strip().split("\n"):
            v, dt, s = line.split("\t")
            mine[v] = (int(dt), s)
        ok = True
        for i, o in enumerate(m.graph.output):
            pb = os.path.join(ds, "output_%d.pb" % i)
            if not os.path.exists(pb):
                continue
            t = onnx.TensorProto()
            t.ParseFromString(open(pb, "rb").read())
            want = "[" + ",".join(str(x) for x in t.dims) + "]"
            got = mine.get(o.name)
            if got is None or got[1] != want or (got[0] != t.data_type and
                                                 (got[0], t.data_type) not in SAME_TYPE):
                ok = False
                fails.append("%s: output '%s': got %s, want dtype %d %s" %
                             (name, o.name, got, t.data_type, want))
        stats["ok" if ok else "failed"] += 1
    for f in fails:
        print("FAIL", f)
    print("%d passed, %d failed" % (stats["ok"], stats["failed"]))
    return 1 if stats["failed"] or stats["ok"] < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
