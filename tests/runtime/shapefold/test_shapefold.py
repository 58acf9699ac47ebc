#!/usr/bin/python3
"""Shapes the graph computes are folded at plan time: run gen_shapefold.py's models through
the braid CLI and check that no node is left to ONNX Runtime, that the initializer-only
subexpression has no step in the plan, and that the outputs match the numpy references,
at two batch sizes (two plans) and with the engines limited to dnnl,native (a node whose
shape stayed unknown could not load there).

    test_shapefold.py BRAID
"""

import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen_shapefold.py")
MODELS = ["pad_swin", "consumers", "resize_sizes", "range_where", "init_only"]
TOL = 1e-5


def sh(*args):
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise AssertionError("%s failed (%d): %s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r.stdout


def check_plan(braid, d, name):
    out = sh(braid, "inspect", os.path.join(d, name + ".onnx"))
    plan = out[out.index("plan ("):]
    m = re.search(r"^\s*ort\s+(\d+) of (\d+) nodes", plan, re.M)
    assert m and m.group(1) == "0", "%s: nodes left to ONNX Runtime:\n%s" % (name, plan)
    assert "inputs : (none)" not in plan, "%s: a step reads only constants:\n%s" % (name, plan)
    if name == "init_only":
        # Relu(W1 @ W2) + Gather(T, idx) folds at plan time: only x + (constant) is left
        assert "MatMul" not in plan and "1 nodes after fusion" in plan, "%s:\n%s" % (name, plan)


def check_outputs(braid, d, name, engine):
    outs = [o.name for o in onnx.load(os.path.join(d, name + ".onnx")).graph.output]
    od = os.path.join(d, "%s.%s" % (name, engine.replace(",", "_")))
    sh(braid, "run", os.path.join(d, name + ".onnx"), "--input", os.path.join(d, name + ".in.npy"),
       "--output", od, "--threads", "1", "--engine", engine)
    for k, o in enumerate(outs):
        ref = np.load(os.path.join(d, "%s.out%d.npy" % (name, k)))
        got = np.load(os.path.join(od, o + ".npy"))
        assert got.shape == ref.shape, "%s output %d: shape %s, expected %s" % (name, k, got.shape, ref.shape)
        err = float(np.max(np.abs(got - ref))) / max(float(np.max(np.abs(ref))), 1e-30)
        print("  %-13s %-12s out%d %-14s rel err %.2e" % (name, engine, k, str(ref.shape), err))
        assert err <= TOL, "%s output %d: relative error %.3g above %g" % (name, k, err, TOL)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    braid = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="braid-shapefold-") as tmp:
        for batch in (2, 3):
            d = os.path.join(tmp, "b%d" % batch)
            sh("/usr/bin/python3", GEN, d, str(batch))
            for name in MODELS:
                if batch == 2:
                    check_plan(braid, d, name)
                for engine in ("auto", "dnnl,native"):
                    check_outputs(braid, d, name, engine)
    print("ok")


if __name__ == "__main__":
    main()
