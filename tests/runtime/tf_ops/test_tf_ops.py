#!/usr/bin/env python3
"""One TensorFlow op, as braid runs it from a frozen GraphDef, against numpy.

    test_tf_ops.py --braid PATH FIXTURE [FIXTURE ...]

For each FIXTURE (tests/runtime/tf_ops/fixtures/<FIXTURE>.pbtxt, a hand-written GraphDef in text
form):
  1. encode it with `protoc --encode=tensorflow.GraphDef` against braid's own schema
     (proto/tf_graph.proto) into model.pb,
  2. feed every Placeholder seeded normal values (the seed is the fixture's name) and compute
     the outputs with tf_ref.py, a numpy interpreter of TensorFlow's ops,
  3. run `braid run model.pb --input NAME=FILE.npy ... --output DIR`,
  4. compare each sink node's output: max |braid - numpy| / max(1, max |numpy|) <= 1e-4.
Prints one line per fixture with the error; exits 1 if any failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PROTO_DIR = os.path.join(ROOT, "proto")
PROTO = os.path.join(PROTO_DIR, "tf_graph.proto")
TOL = 1e-4

sys.path.insert(0, HERE)
import tf_ref  # noqa: E402


def load_schema(tmp):
    """braid's GraphDef schema as Python classes (protoc --python_out into TMP)."""
    subprocess.run(["protoc", "-I", PROTO_DIR, "--python_out=" + tmp, PROTO], check=True)
    sys.path.insert(0, tmp)
    import tf_graph_pb2
    return tf_graph_pb2


def run_fixture(braid, pb2, name, tmp):
    from google.protobuf import text_format
    src = os.path.join(HERE, "fixtures", name + ".pbtxt")
    with open(src) as f:
        text = f.read()
    work = os.path.join(tmp, name)
    os.makedirs(work)
    model = os.path.join(work, "model.pb")
    with open(src, "rb") as fin, open(model, "wb") as fout:
        subprocess.run(["protoc", "--encode=tensorflow.GraphDef", "-I", PROTO_DIR, PROTO],
                       stdin=fin, stdout=fout, check=True)
    graph = text_format.Parse(text, pb2.GraphDef())

    rng = np.random.default_rng(zlib.crc32(name.encode()))
    feeds, args = {}, []
    for n in graph.node:
        if n.op in ("Placeholder", "PlaceholderWithDefault"):
            shape = tf_ref.placeholder_shape(n)
            dt = tf_ref.placeholder_dtype(n)
            x = rng.standard_normal(shape).astype(dt)
            feeds[n.name] = x
            path = os.path.join(work, "in_%d.npy" % len(args))
            np.save(path, x)
            args += ["--input", "%s=%s" % (n.name, path)]
    values = tf_ref.evaluate(graph, feeds)
    outdir = os.path.join(work, "out")
    r = subprocess.run([braid, "run", model] + args + ["--output", outdir, "--threads", "1"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    if r.returncode != 0:
        print("%-32s FAIL: braid run exited %d:\n%s" % (name, r.returncode, r.stdout.strip()))
        return False
    ok = True
    for sink in tf_ref.sinks(graph):
        ref = values[sink + ":0"]
        got = None
        for cand in (sink, sink + ":0"):
            p = os.path.join(outdir, cand.replace("/", "_").replace(":", "_") + ".npy")
            if os.path.isfile(p):
                got = np.load(p)
                break
        if got is None:
            print("%-32s FAIL: no output '%s' among %s" % (name, sink, sorted(os.listdir(outdir))))
            ok = False
            continue
        if got.shape != ref.shape:
            print("%-32s FAIL: %s: shape %s, numpy %s" % (name, sink, got.shape, ref.shape))
            ok = False
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ref.size else 0.0
        scale = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
        rel = err / scale
        good = rel <= TOL and not np.isnan(got).any()
        print("%-32s %-5s %s %s max|err| %.2e rel %.2e" % (name, "ok" if good else "FAIL", sink,
                                                           list(ref.shape), err, rel))
        ok &= good
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--braid", required=True)
    ap.add_argument("fixtures", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="braid-tf-ops-") as tmp:
        pb2 = load_schema(tmp)
        results = [run_fixture(a.braid, pb2, f, tmp) for f in a.fixtures]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
