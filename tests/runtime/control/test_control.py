#!/usr/bin/python3
"""Control flow run by braid (runtime/control.c): If, Loop and Scan graphs against references.

    test_control.py BRAID [--keep DIR]

Writes each case's model and inputs into a temporary directory (--keep: into DIR, kept), runs
`BRAID run MODEL --engine dnnl,native` (no framework: the bodies must run on braid's own
engines) and compares every output with a reference computed here independently: numpy
written out per case, or PyTorch for the EmbeddingBag exports. Hostile cases must fail with a
clear message within a few seconds, never hang. Needs Debian's python3-onnx (1.12) and numpy;
the EmbeddingBag cases need torch (skipped, with a line saying so, without it).

Exit status 0 when every case passed, 1 otherwise; one line per case.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from run_cases import B, F, I64, OPSET, check_error, const, model, run_and_compare, vi, work_dir  # noqa: E402

# ---- the cases: (name, model, {input: array}, [reference outputs]) ----------------------------


def loop_state_and_scan(early):
    """Loop M=6: x <- x * 0.5 + iter, scan out y = sum(x) per iteration; EARLY: cond_out is
    iter < 3, so it stops after 4 iterations."""
    body_nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=F),
        helper.make_node("Mul", ["x_in", "half"], ["xh"]),
        helper.make_node("Add", ["xh", "fi"], ["x_out"]),
        helper.make_node("ReduceSum", ["x_out"], ["y"], keepdims=0),
    ]
    if early:
        body_nodes.append(helper.make_node("Less", ["i", "three"], ["c_out"]))
    else:
        body_nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    body = helper.make_graph(
        body_nodes, "body",
        [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [2, 3])],
        [vi("c_out", B, []), vi("x_out", F, [2, 3]), vi("y", F, [])],
        initializer=[const("half", np.float32(0.5)), const("three", np.int64(3))])
    m = model("loop_state_scan" + ("_early" if early else ""),
              [helper.make_node("Loop", ["M", "cond", "x0"], ["x_final", "ys"], body=body)],
              [vi("x0", F, [2, 3])], [vi("x_final", F, [2, 3]), vi("ys", F, None)],
              [const("M", np.int64(6)), const("cond", np.bool_(True))])
    x0 = np.arange(6, dtype=np.float32).reshape(2, 3)
    x, ys = x0.copy(), []
    for i in range(6):
        x = x * 0.5 + i
        ys.append(x.sum())
        if early and not i < 3:
            break
    return m, {"x0": x0}, [x, np.array(ys, np.float32)]


def loop_rnn():
    """A recurrence as a Loop: h <- tanh(h @ W + b), 5 steps, every state kept as a scan
    output (a static body: one plan per iteration, its MatMul on oneDNN)."""
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((96, 96)) * 0.2).astype(np.float32)
    b = (rng.standard_normal(96) * 0.1).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["hw"]),
         helper.make_node("Add", ["hw", "b"], ["hb"]),
         helper.make_node("Tanh", ["hb"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["h_scan"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("h_in", F, [16, 96])],
        [vi("c_out", B, []), vi("h_out", F, [16, 96]), vi("h_scan", F, [16, 96])])
    m = model("loop_rnn", [helper.make_node("Loop", ["M", "", "h0"], ["h", "hs"], body=body)],
              [vi("h0", F, [16, 96])], [vi("h", F, [16, 96]), vi("hs", F, [5, 16, 96])],
              [const("M", np.int64(5)), const("W", w), const("b", b)])
    h = rng.standard_normal((16, 96)).astype(np.float32)
    h0, hs = h.copy(), []
    for _ in range(5):
        h = np.tanh(h @ w + b)
        hs.append(h)
    return m, {"h0": h0}, [h, np.stack(hs)]


def loop_growing(m):
    """A carried value that grows every iteration (x <- Concat(x, [iter])): a new shape per
    iteration, planned per iteration. M = 5 runs; a very long one is refused."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Reshape", ["fi", "one"], ["f1"]),
         helper.make_node("Concat", ["x_in", "f1"], ["x_out"], axis=0),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, ["n"])],
        [vi("c_out", B, []), vi("x_out", F, ["n1"])],
        initializer=[const("one", np.array([1], np.int64))])
    mdl = model("loop_growing", [helper.make_node("Loop", ["M", "", "x0"], ["x"], body=body)],
                [vi("x0", F, [1])], [vi("x", F, None)], [const("M", np.int64(m))])
    x0 = np.array([-1], np.float32)
    return mdl, {"x0": x0}, [np.concatenate([x0, np.arange(m, dtype=np.float32)])]


def if_branch_shapes(cond):
    """If whose branches give different shapes: then [6] (x flattened * 2), else [3] (x[0])."""
    then_g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "flat"], ["xf"]),
         helper.make_node("Mul", ["xf", "two"], ["t_out"])],
        "then", [], [vi("t_out", F, None)],
        initializer=[const("flat", np.array([-1], np.int64)), const("two", np.float32(2))])
    else_g = helper.make_graph(
        [helper.make_node("Gather", ["x", "zero"], ["e_out"], axis=0)],
        "else", [], [vi("e_out", F, None)], initializer=[const("zero", np.int64(0))])
    m = model("if_shapes", [helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                             else_branch=else_g)],
              [vi("c", B, []), vi("x", F, [2, 3])], [vi("y", F, None)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    ref = (x.reshape(-1) * 2) if cond else x[0]
    return m, {"c": np.array(cond), "x": x}, [ref]


def scan_axes():
    """Scan: state s <- s + row (reverse over axis 1 of x), scan out s * 2 stacked on axis 1."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "r"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "two"], ["o"])],
        "body", [vi("s_in", F, [2]), vi("r", F, [2])], [vi("s_out", F, [2]), vi("o", F, [2])],
        initializer=[const("two", np.float32(2))])
    m = model("scan_axes", [helper.make_node("Scan", ["s0", "x"], ["s", "os"], body=body,
                                             num_scan_inputs=1, scan_input_axes=[1],
                                             scan_input_directions=[1], scan_output_axes=[1])],
              [vi("s0", F, [2]), vi("x", F, [2, 5])], [vi("s", F, [2]), vi("os", F, None)])
    s0 = np.array([1, -1], np.float32)
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    s, outs = s0.copy(), []
    for t in reversed(range(5)):
        s = s + x[:, t]
        outs.append(s * 2)
    return m, {"s0": s0, "x": x}, [s, np.stack(outs, 1)]


def loop_in_if(cond):
    """If(c): then a Loop (trip count 3) that accumulates x; else x itself."""
    body = helper.make_graph(
        [helper.make_node("Add", ["a_in", "x"], ["a_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "lbody", [vi("i", I64, []), vi("c_in", B, []), vi("a_in", F, [3])],
        [vi("c_out", B, []), vi("a_out", F, [3])])
    then_g = helper.make_graph(
        [helper.make_node("Loop", ["three", "", "x"], ["t_out"], body=body)],
        "then", [], [vi("t_out", F, [3])], initializer=[const("three", np.int64(3))])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e_out"])], "else", [],
                               [vi("e_out", F, [3])])
    m = model("loop_in_if", [helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                              else_branch=else_g)],
              [vi("c", B, []), vi("x", F, [3])], [vi("y", F, [3])])
    x = np.array([1, 2, 3], np.float32)
    return m, {"c": np.array(cond), "x": x}, [x * 4 if cond else x]


def loop_trip_from_shape():
    """M = x.shape[0] (Shape -> Gather): a scan output of one row per row of x."""
    body = helper.make_graph(
        [helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
         helper.make_node("Mul", ["row", "row"], ["sq"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, [])], [vi("c_out", B, []), vi("sq", F, [4])])
    m = model("loop_trip_from_shape",
              [helper.make_node("Shape", ["x"], ["sh"]),
               helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
               helper.make_node("Loop", ["n", "t"], ["y"], body=body),
               helper.make_node("Relu", ["y"], ["z"])],
              [vi("x", F, ["rows", 4])], [vi("z", F, ["rows", 4])],
              [const("zero", np.int64(0)), const("t", np.bool_(True))])
    x = (np.arange(20, dtype=np.float32).reshape(5, 4) - 7)
    return m, {"x": x}, [np.maximum(x * x, 0)]


def embedding_bag(mode, weighted):
    import torch
    torch.manual_seed(0)
    bag = torch.nn.EmbeddingBag(40, 8, mode=mode)

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = bag

        def forward(self, ids, offsets, w=None):
            return self.bag(ids, offsets, per_sample_weights=w)

    ids = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 35, 8], dtype=torch.int64)
    offsets = torch.tensor([0, 2, 3, 7], dtype=torch.int64)       # bags of 2, 1, 4 and 5
    w = torch.linspace(0.5, 2.0, ids.numel()) if weighted else None
    args = (ids, offsets, w) if weighted else (ids, offsets)
    names = ["ids", "offsets"] + (["w"] if weighted else [])
    path = tempfile.mktemp(suffix=".onnx")
    torch.onnx.export(M(), args, path, input_names=names, output_names=["y"], opset_version=OPSET)
    m = onnx.load(path)
    os.unlink(path)
    if not any(n.op_type == "Loop" for n in m.graph.node):
        raise RuntimeError("the export has no Loop (torch exported EmbeddingBag otherwise)")
    with torch.no_grad():
        ref = M()(*args).numpy()
    feeds = {"ids": ids.numpy(), "offsets": offsets.numpy()}
    if weighted:
        feeds["w"] = w.numpy()
    return m, feeds, [ref]


# ---- hostile cases: (name, model, inputs, text the error must contain) ------------------------


def loop_forever(with_m):
    """No way out: M = 2^62 (or absent) and a cond that stays true."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
                             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [1])],
                             [vi("c_out", B, []), vi("x_in", F, [1])])
    m = model("loop_forever",
              [helper.make_node("Loop", ["M" if with_m else "", "c", "x"], ["y"], body=body)],
              [vi("c", B, []), vi("x", F, [1])], [vi("y", F, [1])],
              [const("M", np.int64(1 << 62))] if with_m else [])
    return m, {"c": np.array(True), "x": np.ones(1, np.float32)}, "iterations (braid's limit"


def loop_huge_m_scan():
    """M = 2^62 (a constant: inference makes the scan output [2^62, 4]) and cond always true."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Identity", ["x"], ["y"])], "body",
                             [vi("i", I64, []), vi("c_in", B, [])],
                             [vi("c_out", B, []), vi("y", F, [4])])
    m = model("loop_huge_m_scan", [helper.make_node("Loop", ["M", "c"], ["ys"], body=body)],
              [vi("x", F, [4])], [vi("ys", F, None)],
              [const("M", np.int64(1 << 62)), const("c", np.bool_(True))])
    return m, {"x": np.ones(4, np.float32)}, "iterations (braid's limit"


def loop_huge_m_stops_early():
    """M = 2^62 with a cond that turns false at iteration 3: a legal loop of 4 iterations."""
    body = helper.make_graph(
        [helper.make_node("Less", ["i", "three"], ["c_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"])],
        "body", [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [1])],
        [vi("c_out", B, []), vi("x_out", F, [1])], initializer=[const("three", np.int64(3)),
                                                               const("one", np.float32(1))])
    m = model("loop_huge_m", [helper.make_node("Loop", ["M", "c", "x"], ["y"], body=body)],
              [vi("c", B, []), vi("x", F, [1])], [vi("y", F, [1])],
              [const("M", np.int64(1 << 62))])
    return m, {"c": np.array(True), "x": np.zeros(1, np.float32)}, [np.full(1, 4, np.float32)]


def nested_growing(depth):
    """DEPTH Loops nested in each other's bodies, each growing its carried value: shape
    inference widens each level over a few rounds, which nested would multiply level by level;
    the model must load (or fail) within seconds. Run with M = 0: the initial value comes out."""
    inner = None
    for level in range(depth):
        nodes = [helper.make_node("Concat", ["x_in%d" % level, "x_in%d" % level], ["g%d" % level],
                                  axis=0)]
        if inner is not None:
            nodes.append(helper.make_node("Loop", ["zero", "", "g%d" % level], ["x_out%d" % level],
                                          body=inner))
        else:
            nodes.append(helper.make_node("Identity", ["g%d" % level], ["x_out%d" % level]))
        nodes.append(helper.make_node("Identity", ["c_in%d" % level], ["c_out%d" % level]))
        inner = helper.make_graph(
            nodes, "body%d" % level,
            [vi("i%d" % level, I64, []), vi("c_in%d" % level, B, []), vi("x_in%d" % level, F, [1])],
            [vi("c_out%d" % level, B, []), vi("x_out%d" % level, F, None)])
    m = model("nested_growing", [helper.make_node("Loop", ["zero", "", "x"], ["y"], body=inner)],
              [vi("x", F, [1])], [vi("y", F, None)], [const("zero", np.int64(0))])
    return m, {"x": np.ones(1, np.float32)}, [np.ones(1, np.float32)]


def body_output_count():
    """A Loop body with one output too many (no checker: the file is what a hostile user sends)."""
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]),
                              helper.make_node("Identity", ["x_in"], ["x_out"]),
                              helper.make_node("Identity", ["x_in"], ["extra"])], "body",
                             [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [1])],
                             [vi("c_out", B, []), vi("x_out", F, [1]), vi("extra", F, [1])])
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)], "bad",
                          [vi("x", F, [1])], [vi("y", F, [1])], initializer=[const("M", np.int64(2))])
    # y is the carried value; 'extra' would be a scan output, but the node declares only one
    # output: the body has 3 outputs, the node needs 1 + 1 + 0 = 2
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m, {"x": np.ones(1, np.float32)}, "output(s), the op needs"


# What shape inference makes of each case's outputs (partitioner/shape/shape_control.c), as
# `braid inspect` prints the control step's outputs (dynamic dims planned as 1): a constant trip
# count gives a static scan output, a cond that can stop the loop a dynamic one, If branches
# that disagree a dynamic dim of known rank, Scan's sequence length inserted at its axis.
SHAPES = {
    "loop_state_scan": "x_final [2,3], ys [6]",
    "loop_state_scan_early": "x_final [2,3], ys [?]",
    "loop_rnn": "h [16,96], hs [5,16,96]",
    "if_shapes_then": "y [?]",
    "scan_axes_reverse": "s [2], os [2,5]",
    "loop_trip_from_shape": "z [1,4]",
}

# ---- running ------------------------------------------------------------------------------


def check(braid, work, name, m, feeds, refs, engine="dnnl,native"):
    path, label, worst, failed = run_and_compare(braid, work, name, m, feeds, refs, engine)
    if failed:
        return failed
    if name in SHAPES:
        p = subprocess.run([braid, "inspect", path, "--engine", engine], capture_output=True,
                           text=True, timeout=60)
        if SHAPES[name] not in p.stdout:
            return f"FAIL {label}: inspect does not show '{SHAPES[name]}':\n{p.stdout}{p.stderr}"
    return f"ok   {label}: max relative error {worst:.3g}"


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    braid = argv[1]
    work = work_dir(argv, "braid-control-")
    cases = [
        ("loop_state_scan", lambda: loop_state_and_scan(False)),
        ("loop_state_scan_early", lambda: loop_state_and_scan(True)),
        ("loop_rnn", loop_rnn),
        ("loop_growing", lambda: loop_growing(5)),
        ("if_shapes_then", lambda: if_branch_shapes(True)),
        ("if_shapes_else", lambda: if_branch_shapes(False)),
        ("scan_axes_reverse", scan_axes),
        ("loop_in_if_then", lambda: loop_in_if(True)),
        ("loop_in_if_else", lambda: loop_in_if(False)),
        ("loop_trip_from_shape", loop_trip_from_shape),
        ("loop_huge_m_stops_early", loop_huge_m_stops_early),
        ("nested_growing_loops", lambda: nested_growing(30)),
    ]
    lines = []
    for name, make in cases:
        m, feeds, refs = make()
        lines.append(check(braid, work, name, m, feeds, refs))
        print(lines[-1], flush=True)
    try:
        import torch  # noqa: F401
        bags = [("embedding_bag_sum", lambda: embedding_bag("sum", False)),
                ("embedding_bag_mean", lambda: embedding_bag("mean", False)),
                ("embedding_bag_sum_weighted", lambda: embedding_bag("sum", True))]
    except ImportError:
        bags = []
        print("skip embedding_bag_*: no torch")
    for name, make in bags:
        m, feeds, refs = make()
        lines.append(check(braid, work, name, m, feeds, refs))
        print(lines[-1], flush=True)
    for name, make in [("loop_forever_huge_m", lambda: loop_forever(True)),
                       ("loop_forever_no_m", lambda: loop_forever(False)),
                       ("loop_huge_m_scan", loop_huge_m_scan),
                       ("loop_growing_long", lambda: loop_growing(100000)[:2] + ("shapes changed more than",)),
                       ("loop_body_output_count", body_output_count)]:
        m, feeds, want = make()
        lines.append(check_error(braid, work, name, m, feeds, "dnnl,native", want))
        print(lines[-1], flush=True)
    failed = [l for l in lines if l.startswith("FAIL")]
    print(f"{len(lines) - len(failed)} of {len(lines)} control-flow cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
