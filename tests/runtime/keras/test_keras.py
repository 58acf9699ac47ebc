#!/usr/bin/env python3
"""One Keras model made by TensorFlow, as braid runs its frozen GraphDef, against TensorFlow.

    test_keras.py --braid PATH MODEL [--expect match|fails] [--shapes]

1. gen_keras.py --only MODEL, with TensorFlow's own Python (~/.cache/braid/tf-venv, or
   $BRAID_TF_PYTHON): the frozen GraphDef, the seeded input and TensorFlow's outputs, cached
   in $BRAID_KERAS_DIR (default ~/.cache/braid/keras); instant when up to date.
2. `braid run model.pb --input NAME=FILE.npy --output DIR` (--shapes: model_shapes.pb, the
   same graph carrying TensorFlow's `_output_shapes`) with every engine allowed, the
   TensorFlow fallback loaded from $BRAID_LIBTENSORFLOW (default: the venv's
   libtensorflow_cc.so.2), and each output compared with TensorFlow's:
     float: max |braid - tf| / max |tf| <= 1e-4   (relative to the output's own scale)
     integer (indices): identical; a run-time-sized output must have TensorFlow's shape.
3. The same run with `--engine dnnl,native` (no framework at all), reported, never failing
   the test unless braid crashes: the line "NO-TF ok" or "NO-TF blocked: <first node braid
   could not place, its op and why>; unplaced ops: ..." is the list the op-coverage work reads.

--expect fails: the model does not run on braid yet (docs/tensorflow.md says why). The test
then passes when braid refuses it with an error, and fails if braid crashes, gives a wrong
answer, or now matches TensorFlow (then its expectation in meson.build must become "match").

Exit status: 0 pass, 1 fail, 77 skipped (meson's SKIP) only when TensorFlow is genuinely
absent: no venv Python or no libtensorflow_cc.so.2 (scripts/setup.sh installs both).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
TOL = 1e-4
VENV = os.path.join(os.path.expanduser("~"), ".cache", "braid", "tf-venv")


def tf_python():
    return os.environ.get("BRAID_TF_PYTHON") or os.path.join(VENV, "bin", "python")


def tf_library():
    """libtensorflow_cc.so.2 from $BRAID_LIBTENSORFLOW or the venv's tensorflow package."""
    lib = os.environ.get("BRAID_LIBTENSORFLOW")
    if lib:
        return lib
    import glob
    hits = sorted(glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "tensorflow",
                                         "libtensorflow_cc.so.2")))
    return hits[-1] if hits else None


def skipped(model, why):
    print("SKIPPED: keras %s: %s" % (model, why), flush=True)
    sys.exit(SKIP)


def output_file(outdir, tensor):
    """The .npy braid wrote for GraphDef tensor "node:0" (braid names an output by its node)."""
    node = tensor[:-2] if tensor.endswith(":0") else tensor
    for cand in (node, tensor):
        p = os.path.join(outdir, cand.replace("/", "_").replace(":", "_") + ".npy")
        if os.path.isfile(p):
            return p
    return None


def compare(meta, cache, outdir, label):
    """Compares every output; prints one line each; returns True if all match."""
    ok = True
    for o in meta["outputs"]:
        ref = np.load(os.path.join(cache, o["file"]))
        p = output_file(outdir, o["tensor"])
        if p is None:
            print("%s %-8s FAIL: no file for %s among %s" % (label, o["name"], o["tensor"], sorted(os.listdir(outdir))))
            ok = False
            continue
        got = np.load(p)
        if got.shape != ref.shape:
            print("%s %-8s FAIL: shape %s, TensorFlow %s" % (label, o["name"], list(got.shape), list(ref.shape)))
            ok = False
            continue
        if np.issubdtype(ref.dtype, np.floating):
            err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
            scale = float(np.max(np.abs(ref))) if ref.size else 1.0
            rel = err / max(scale, 1e-30)
            good = rel <= TOL and not np.isnan(got).any()
            print("%s %-8s %-4s %s max|err| %.2e max|tf| %.3g rel %.2e" % (
                label, o["name"], "ok" if good else "FAIL", list(ref.shape), err, scale, rel))
        else:
            good = got.dtype.kind == ref.dtype.kind and np.array_equal(got, ref)
            print("%s %-8s %-4s %s %s %s" % (label, o["name"], "ok" if good else "FAIL", list(ref.shape),
                                             ref.dtype, "identical" if good else "differ (got %s)" % got.dtype))
        ok &= good
    return ok


def run_braid(braid, cache, graph, meta, outdir, extra, env):
    args = [braid, "run", os.path.join(cache, graph), "--output", outdir, "--threads", "1"]
    for i in meta["inputs"]:
        args += ["--input", "%s=%s" % (i["tensor"][:-2] if i["tensor"].endswith(":0") else i["tensor"],
                                       os.path.join(cache, i["file"]))]
    return subprocess.run(args + extra, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=900, env=env)


def blocker(text):
    """From braid's planning error: the first node it could not place and why, and the ops."""
    first = re.search(r"node '([^']+)' \(([^)]+)\): ([^;]*)", text)
    ops = re.search(r"have no backend \(ops ([^)]*)\)", text)
    if not first:
        return text.strip().splitlines()[-1][:300] if text.strip() else "(no message)"
    return "first %s '%s': %s; unplaced ops: %s" % (first.group(2), first.group(1), first.group(3).strip(),
                                                    ops.group(1) if ops else "?")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--braid", required=True)
    ap.add_argument("--expect", choices=("match", "fails"), default="match")
    ap.add_argument("--shapes", action="store_true", help="run model_shapes.pb (with _output_shapes)")
    ap.add_argument("model")
    a = ap.parse_args()
    graph = "model_shapes.pb" if a.shapes else "model.pb"
    what = "%s (%s)" % (a.model, graph)

    py, lib = tf_python(), tf_library()
    if not os.access(py, os.X_OK):
        skipped(a.model, "no TensorFlow Python at %s (scripts/setup.sh makes the venv; or set BRAID_TF_PYTHON)" % py)
    if not lib or not os.path.isfile(lib):
        skipped(a.model, "no libtensorflow_cc.so.2 (%s; scripts/setup.sh installs tensorflow-cpu, "
                         "or set BRAID_LIBTENSORFLOW)" % (lib or "not in %s" % VENV))

    cache_root = os.environ.get("BRAID_KERAS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "braid", "keras")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", BRAID_KERAS_DIR=cache_root)
    gen = subprocess.run([py, os.path.join(HERE, "gen_keras.py"), "--out", cache_root, "--only", a.model],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1200, env=env)
    if gen.returncode != 0:
        print(gen.stdout + gen.stderr)
        print("keras %s: the generator failed (status %d)" % (a.model, gen.returncode))
        return 1
    print("\n".join(l for l in gen.stdout.splitlines() if l.startswith(a.model)))
    cache = os.path.join(cache_root, a.model)
    with open(os.path.join(cache, "meta.json")) as f:
        meta = json.load(f)
    env["BRAID_LIBTENSORFLOW"] = lib

    with tempfile.TemporaryDirectory(prefix="braid-keras-") as tmp:
        # No framework at all: informative only.
        r = run_braid(a.braid, cache, graph, meta, os.path.join(tmp, "notf"), ["--engine", "dnnl,native"], env)
        if r.returncode < 0:
            print(r.stdout)
            print("keras %s: braid --engine dnnl,native died of signal %d" % (a.model, -r.returncode))
            return 1
        if r.returncode == 0:
            notf = compare(meta, cache, os.path.join(tmp, "notf"), "NO-TF")
            print("NO-TF %s: runs without TensorFlow%s" % ("ok" if notf else "WRONG",
                                                           "" if notf else ", but does not match it"))
        else:
            print("NO-TF blocked: %s" % blocker(r.stdout))

        r = run_braid(a.braid, cache, graph, meta, os.path.join(tmp, "out"), ["--tf-threads", "1"], env)
        if r.returncode < 0:
            print(r.stdout)
            print("keras %s: braid died of signal %d" % (a.model, -r.returncode))
            return 1
        if r.returncode != 0:
            print(r.stdout.strip())
            if a.expect == "fails":
                print("KNOWN FAILURE: keras %s does not run on braid yet (expected; docs/tensorflow.md): %s"
                      % (what, blocker(r.stdout)))
                return 0
            print("keras %s: braid run failed (status %d)" % (what, r.returncode))
            return 1
        ok = compare(meta, cache, os.path.join(tmp, "out"), "braid")
        if not ok:
            print("keras %s: braid's outputs differ from TensorFlow's" % what)
            return 1
        if a.expect == "fails":
            print("keras %s now matches TensorFlow: set its expectation to 'match' in "
                  "tests/runtime/keras/meson.build (and update docs/tensorflow.md)" % what)
            return 1
        print("keras %s: braid matches TensorFlow" % what)
        return 0


if __name__ == "__main__":
    sys.exit(main())
