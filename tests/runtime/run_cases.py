"""What the command-line tests of tests/runtime/control and tests/runtime/dynamic share: small
ONNX graphs written with onnx.helper, saved into a case folder, run with `braid run`, and their
outputs compared with references computed by the tests (numpy, PyTorch)."""
import os
import subprocess
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
TOL = 1e-5      # relative to max(1, max |reference|)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def model(name, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(work, name, engine, m):
    """M saved as WORK/NAME_ENGINE/model.onnx: (its folder, its path, the case's label)."""
    d = os.path.join(work, name + "_" + (engine or "auto").replace(",", "_"))
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    return d, path, f"{name} [{engine or 'auto'}]"


def run(braid, path, feeds, outdir, engine, env=None):
    """`braid run PATH` on FEEDS (saved as .npy into OUTDIR, where its outputs go too), with
    --engine ENGINE unless None, in ENV (None: this one); (the finished process, seconds). At
    most 60 s."""
    args = [braid, "run", path, "--output", outdir]
    if engine:
        args += ["--engine", engine]
    for k, v in feeds.items():
        np.save(os.path.join(outdir, "in_" + k + ".npy"), v)
        args += ["--input", f"{k}={os.path.join(outdir, 'in_' + k + '.npy')}"]
    t0 = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    return p, time.monotonic() - t0


def compare(m, outdir, refs, label):
    """M's outputs in OUTDIR against REFS: (the worst relative error, None) or (None, a FAIL
    line)."""
    worst = 0.0
    for out, ref in zip(m.graph.output, refs):
        got = np.load(os.path.join(outdir, out.name + ".npy"))
        if got.shape != np.shape(ref):
            return None, f"FAIL {label}: output {out.name} has shape {got.shape}, reference {np.shape(ref)}"
        if got.size:
            err = float(np.max(np.abs(got.astype(np.float64) - ref)))
            worst = max(worst, err / max(1.0, float(np.max(np.abs(ref)))))
    if worst > TOL:
        return None, f"FAIL {label}: max relative error {worst:.3g} > {TOL}"
    return worst, None


def run_and_compare(braid, work, name, m, feeds, refs, engine):
    """M saved, run and its outputs compared with REFS: (its path, the case's label, the worst
    relative error, None) or (path, label, None, a FAIL line)."""
    d, path, label = save(work, name, engine, m)
    p, _ = run(braid, path, feeds, d, engine)
    if p.returncode != 0:
        return path, label, None, f"FAIL {label}: braid run failed: {p.stderr.strip()[-400:]}"
    worst, failed = compare(m, d, refs, label)
    return path, label, worst, failed


def work_dir(argv, prefix):
    """Where the cases go: --keep DIR from ARGV, else a new temporary directory."""
    return argv[argv.index("--keep") + 1] if "--keep" in argv else tempfile.mkdtemp(prefix=prefix)


def check_error(braid, work, name, m, feeds, engine, want):
    """M must be refused (an error naming WANT), promptly: a hostile case."""
    d, path, label = save(work, name, engine, m)
    try:
        p, secs = run(braid, path, feeds, d, engine)
    except subprocess.TimeoutExpired:
        return f"FAIL {label}: still running after 60 s"
    if p.returncode == 0:
        return f"FAIL {label}: braid ran it"
    if want not in p.stderr:
        return f"FAIL {label}: error without '{want}': {p.stderr.strip()[-300:]}"
    return f"ok   {label}: refused in {secs:.1f} s: {p.stderr.strip().splitlines()[-1][-200:]}"
