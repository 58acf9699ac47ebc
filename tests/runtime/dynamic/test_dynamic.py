#!/usr/bin/python3
"""Regions of run-time shapes run by braid (runtime/dynamic_region.c) against numpy.

    test_dynamic.py BRAID [--keep DIR]

Writes each case's model (onnx.helper) and inputs into a temporary directory (--keep: into
DIR, kept) and runs it with `BRAID run`, once with the default engines and once with
`--engine dnnl,native` (no framework). The nodes after a NonMaxSuppression, NonZero,
Compress or Unique read values whose shapes only the run tells: they must run on braid
(`braid inspect` shows no node on ONNX Runtime, a large MatMul among them on oneDNN) and
match a reference computed here with numpy. A node no braid engine runs (ai.onnx.ml's
Binarizer) after such a value stays on ONNX Runtime, and `--engine dnnl,native` refuses the
model naming it; an Expand to a run-time shape of 10^12 elements is refused at run time,
never allocated. Needs Debian's python3-onnx (1.12) and numpy.

Exit status 0 when every case passed, 1 otherwise; one line per case.
"""
import os
import subprocess
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_cases import B, F, I64, check_error, const, model, run, run_and_compare, save, vi, work_dir  # noqa: E402,E501


# ---- references ---------------------------------------------------------------------------


def nms_ref(boxes, scores, max_out, iou_thr, score_thr):
    """ONNX NonMaxSuppression, one batch and class, corner boxes [y1, x1, y2, x2]."""
    def area(b):
        return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])

    def iou(a, b):
        a = [min(a[0], a[2]), min(a[1], a[3]), max(a[0], a[2]), max(a[1], a[3])]
        b = [min(b[0], b[2]), min(b[1], b[3]), max(b[0], b[2]), max(b[1], b[3])]
        h = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
        w = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
        inter = h * w
        union = area(a) + area(b) - inter
        return inter / union if union > 0 else 0.0

    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    keep = []
    for i in order:
        if scores[i] <= score_thr or len(keep) >= max_out:
            continue
        if all(iou(boxes[i], boxes[k]) <= iou_thr for k in keep):
            keep.append(i)
    return np.array(keep, np.int64)


# ---- the cases: (model, {input: array}, [reference outputs]) --------------------------------


def nms_tail(seed, thr=0.2):
    """NMS -> Gather of the box column -> Squeeze -> Gather of boxes and scores -> Mul, Add.
    THR 1: no box is kept, every tensor after the NMS is empty."""
    rng = np.random.default_rng(seed)
    n = 64
    c = rng.uniform(0, 10, (n, 2)).astype(np.float32)
    wh = rng.uniform(0.5, 3, (n, 2)).astype(np.float32)
    boxes = np.concatenate([c, c + wh], axis=1).astype(np.float32)
    scores = rng.uniform(0, 1, n).astype(np.float32)
    nodes = [
        helper.make_node("Unsqueeze", ["boxes", "ax0"], ["b3"]),
        helper.make_node("Unsqueeze", ["scores", "ax01"], ["s3"]),
        helper.make_node("NonMaxSuppression", ["b3", "s3", "max_out", "iou", "thr"], ["sel"]),
        helper.make_node("Gather", ["sel", "two"], ["col"], axis=1),
        helper.make_node("Squeeze", ["col", "ax1"], ["idx"]),
        helper.make_node("Gather", ["boxes", "idx"], ["kb"], axis=0),
        helper.make_node("Gather", ["scores", "idx"], ["ks"], axis=0),
        helper.make_node("Mul", ["kb", "scale"], ["kbs"]),
        helper.make_node("Add", ["kbs", "shift"], ["out_boxes"]),
        helper.make_node("Sqrt", ["ks"], ["out_scores"]),
    ]
    m = model("nms_tail", nodes, [vi("boxes", F, [n, 4]), vi("scores", F, [n])],
              [vi("out_boxes", F, None), vi("out_scores", F, None)],
              [const("ax0", np.array([0], np.int64)), const("ax01", np.array([0, 1], np.int64)),
               const("ax1", np.array([1], np.int64)), const("two", np.array([2], np.int64)),
               const("max_out", np.array([20], np.int64)), const("iou", np.array([0.3], np.float32)),
               const("thr", np.array([thr], np.float32)), const("scale", np.float32(2)),
               const("shift", np.array([1, 2, 3, 4], np.float32))])
    keep = nms_ref(boxes, scores, 20, 0.3, thr)
    return m, {"boxes": boxes, "scores": scores}, [boxes[keep] * 2 + np.array([1, 2, 3, 4], np.float32),
                                                   np.sqrt(scores[keep])]


def nonzero_gathernd():
    """NonZero -> Transpose -> GatherND of the nonzero elements -> Mul."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    x[x < 0.3] = 0
    nodes = [helper.make_node("NonZero", ["x"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "idx"], ["vals"]),
             helper.make_node("Mul", ["vals", "three"], ["y"])]
    m = model("nonzero_gathernd", nodes, [vi("x", F, [5, 7])], [vi("y", F, None)],
              [const("three", np.float32(3))])
    return m, {"x": x}, [x[np.nonzero(x)] * 3]


def compress_matmul(none=False):
    """Compress of rows by a run-time mask -> MatMul (large enough for oneDNN) -> Relu; NONE:
    the mask keeps no row."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((128, 512)).astype(np.float32)
    mask = rng.uniform(0, 1, 128) < (0 if none else 0.6)
    w = (rng.standard_normal((512, 256)) * 0.05).astype(np.float32)
    nodes = [helper.make_node("Compress", ["x", "mask"], ["rows"], axis=0),
             helper.make_node("MatMul", ["rows", "W"], ["mm"]),
             helper.make_node("Relu", ["mm"], ["y"])]
    m = model("compress_matmul", nodes, [vi("x", F, [128, 512]), vi("mask", B, [128])],
              [vi("y", F, None)], [const("W", w)])
    return m, {"x": x, "mask": mask}, [np.maximum(x[mask] @ w, 0)]


def unique_matmul():
    """Unique ids -> Gather of their embeddings -> MatMul (oneDNN-sized) -> Add."""
    rng = np.random.default_rng(4)
    ids = rng.integers(0, 300, 400).astype(np.int64)
    emb = rng.standard_normal((300, 256)).astype(np.float32)
    w = (rng.standard_normal((256, 128)) * 0.05).astype(np.float32)
    nodes = [helper.make_node("Unique", ["ids"], ["u"], sorted=1),
             helper.make_node("Gather", ["E", "u"], ["rows"], axis=0),
             helper.make_node("MatMul", ["rows", "W"], ["mm"]),
             helper.make_node("Add", ["mm", "one"], ["y"])]
    m = model("unique_matmul", nodes, [vi("ids", I64, [400])], [vi("y", F, None)],
              [const("E", emb), const("W", w), const("one", np.float32(1))])
    return m, {"ids": ids}, [emb[np.unique(ids)] @ w + 1]


def binarizer_after():
    """Compress -> ai.onnx.ml Binarizer (no braid engine runs it) -> Add: both stay on ONNX
    Runtime (braid has no shape rule for Binarizer, so the Add reads a value of unknown type)."""
    p = np.array([0.9, 0.1, 0.7, 0.6, 0.2, 0.8, 0.3, 0.4], np.float32)
    mask = np.array([1, 1, 0, 1, 1, 0, 1, 1], bool)
    nodes = [helper.make_node("Compress", ["p", "mask"], ["q"], axis=0),
             helper.make_node("Binarizer", ["q"], ["bin"], domain="ai.onnx.ml", threshold=0.5),
             helper.make_node("Add", ["bin", "half"], ["y"])]
    m = model("binarizer_after", nodes, [vi("p", F, [8]), vi("mask", B, [8])], [vi("y", F, None)],
              [const("half", np.float32(0.5))])
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 3))
    return m, {"p": p, "mask": mask}, [(p[mask] > 0.5).astype(np.float32) + 0.5]


def expand_huge():
    """Compress of a shape -> Expand to it: 10^6 x 10^6 floats (4 TB) at run time."""
    nodes = [helper.make_node("Compress", ["s", "mask"], ["shape"], axis=0),
             helper.make_node("Expand", ["x", "shape"], ["big"]),
             helper.make_node("ReduceSum", ["big"], ["y"], keepdims=0)]
    m = model("expand_huge", nodes, [vi("x", F, [1]), vi("s", I64, [3]), vi("mask", B, [3])],
              [vi("y", F, None)])
    return m, {"x": np.ones(1, np.float32), "s": np.array([1000000, 7, 1000000], np.int64),
               "mask": np.array([1, 0, 1], bool)}


# ---- running ------------------------------------------------------------------------------


def ort_nodes(braid, path, engine):
    args = [braid, "inspect", path] + (["--engine", engine] if engine else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "ort" and parts[2] == "of":
            return int(parts[1]), p.stdout
    return 0, p.stdout


def check(braid, work, name, m, feeds, refs, engine, want_ort=0):
    path, label, worst, failed = run_and_compare(braid, work, name, m, feeds, refs, engine)
    if failed:
        return failed
    n_ort, text = ort_nodes(braid, path, engine)
    if n_ort != want_ort:
        return f"FAIL {label}: {n_ort} node(s) on ONNX Runtime, expected {want_ort}:\n{text}"
    return f"ok   {label}: max relative error {worst:.3g}, {n_ort} node(s) on ONNX Runtime"


def check_onednn(braid, work, name, m, feeds, want):
    """The region's MatMul, large enough, runs as a oneDNN primitive (ONEDNN_VERBOSE shows its
    execution with the run-time row count WANT in its shapes)."""
    d, path, _ = save(work, name + "_verbose", "dnnl,native", m)
    p, _ = run(braid, path, feeds, d, "dnnl,native", env=dict(os.environ, ONEDNN_VERBOSE="1"))
    lines = [l for l in p.stdout.splitlines() if l.startswith("onednn_verbose,exec,cpu,matmul")]
    if p.returncode != 0 or not any(want in l for l in lines):
        return f"FAIL {name} [oneDNN]: no oneDNN matmul of {want} executed: {lines[:3]} {p.stderr[-300:]}"
    return f"ok   {name} [oneDNN]: {lines[0].split(',')[4]} {want}"


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    braid = argv[1]
    work = work_dir(argv, "braid-dynamic-")
    cases = [("nms_tail", lambda: nms_tail(1)), ("nms_tail_other_boxes", lambda: nms_tail(7)),
             ("nms_tail_none_kept", lambda: nms_tail(1, 1.0)),
             ("nonzero_gathernd", nonzero_gathernd), ("compress_matmul", compress_matmul),
             ("compress_matmul_none_kept", lambda: compress_matmul(True)),
             ("unique_matmul", unique_matmul)]
    lines = []
    for name, make in cases:
        m, feeds, refs = make()
        for engine in (None, "dnnl,native"):
            lines.append(check(braid, work, name, m, feeds, refs, engine))
            print(lines[-1], flush=True)
    m, feeds, refs = compress_matmul()
    lines.append(check_onednn(braid, work, "compress_matmul", m, feeds,
                              f"{int(feeds['mask'].sum())}x512:512x256"))
    print(lines[-1], flush=True)
    m, feeds, refs = binarizer_after()
    lines.append(check(braid, work, "binarizer_after", m, feeds, refs, None, want_ort=2))
    print(lines[-1], flush=True)
    lines.append(check_error(braid, work, "binarizer_after", m, feeds, "dnnl,native", "Binarizer"))
    print(lines[-1], flush=True)
    m, feeds = expand_huge()
    for engine in (None, "dnnl,native"):
        lines.append(check_error(braid, work, "expand_huge", m, feeds, engine, "run-time"))
        print(lines[-1], flush=True)
    failed = [l for l in lines if l.startswith("FAIL")]
    print(f"{len(lines) - len(failed)} of {len(lines)} run-time-shape cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
