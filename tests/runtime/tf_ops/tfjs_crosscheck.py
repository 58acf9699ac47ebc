#!/usr/bin/env python3
"""Checks tf_ref.py (the numpy reference of the tf_ops suite) against TensorFlow.js.

    tfjs_crosscheck.py [FIXTURE ...]        (default: every fixture)

Each fixture GraphDef is turned into a TF.js graph model in memory (modelTopology = the
GraphDef in protobuf-JSON form, Const values moved to the weights, as the TF.js converter
does), run by @tensorflow/tfjs's CPU backend in node (tfjs_run.js) on the same seeded inputs,
and compared with tf_ref.py: max |tfjs - numpy| / max(1, max |numpy|) <= 1e-5. Two independent
implementations agreeing is what makes the numpy reference trustworthy. Needs the cache of
scripts/fetch_tfjs.sh; prints SKIPPED and exits 77 without it. Ops tfjs lacks are reported and
skipped.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PROTO_DIR = os.path.join(ROOT, "proto")
sys.path.insert(0, HERE)
import tf_ref  # noqa: E402

TF_TO_TFJS = {1: "float32", 3: "int32"}


def to_tfjs(graph):
    """(modelTopology dict, weight specs, weight bytes) for GRAPH."""
    from google.protobuf import json_format
    nodes, specs, blobs = [], [], []
    for n in graph.node:
        d = json_format.MessageToDict(n)
        d["attr"] = {e["key"]: e.get("value", {}) for e in d.get("attr", [])}
        if "strides" in d["attr"] and "dilations" not in d["attr"] and n.op not in ("MaxPool", "AvgPool"):
            d["attr"]["dilations"] = {"list": {"i": ["1", "1", "1", "1"]}}   # TF's default; tfjs needs it
        if n.op == "Const":
            v = tf_ref.tensor_value(tf_ref.attrs(n)["value"].tensor)
            dt = TF_TO_TFJS[tf_ref.attrs(n)["value"].tensor.dtype]
            del d["attr"]["value"]
            specs.append({"name": n.name, "shape": list(v.shape), "dtype": dt})
            blobs.append(np.ascontiguousarray(v.astype(np.float32 if dt == "float32" else np.int32)).tobytes())
        nodes.append(d)
    return {"node": nodes, "versions": {"producer": 1286}}, specs, b"".join(blobs)


def main():
    tfjs = os.environ.get("BRAID_TFJS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "braid", "tfjs")
    if not os.path.isdir(os.path.join(tfjs, "node_modules", "@tensorflow", "tfjs")):
        r = subprocess.run([os.path.join(ROOT, "scripts", "fetch_tfjs.sh")], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            print("SKIPPED: tf_ops reference cross-check: @tensorflow/tfjs could not be fetched")
            sys.exit(77)
        tfjs = r.stdout.strip().splitlines()[-1]
    names = sys.argv[1:] or sorted(f[:-6] for f in os.listdir(os.path.join(HERE, "fixtures")))
    failed = 0
    with tempfile.TemporaryDirectory(prefix="braid-tfjs-xcheck-") as tmp:
        subprocess.run(["protoc", "-I", PROTO_DIR, "--python_out=" + tmp,
                        os.path.join(PROTO_DIR, "tf_graph.proto")], check=True)
        sys.path.insert(0, tmp)
        import tf_graph_pb2
        from google.protobuf import text_format
        jobs = []
        refs = {}
        for name in names:
            with open(os.path.join(HERE, "fixtures", name + ".pbtxt")) as f:
                g = text_format.Parse(f.read(), tf_graph_pb2.GraphDef())
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            feeds = {}
            for n in g.node:
                if n.op == "Placeholder":
                    feeds[n.name] = rng.standard_normal(tf_ref.placeholder_shape(n)).astype(np.float32)
            vals = tf_ref.evaluate(g, feeds)
            outs = tf_ref.sinks(g)
            refs[name] = [vals[o + ":0"] for o in outs]
            topo, specs, blob = to_tfjs(g)
            jobs.append({"name": name, "topology": topo, "specs": specs,
                         "weights": base64.b64encode(blob).decode(),
                         "feeds": {k: {"shape": list(v.shape), "data": v.ravel().tolist()} for k, v in feeds.items()},
                         "outputs": [o + ":0" for o in outs]})
        job_file = os.path.join(tmp, "jobs.json")
        with open(job_file, "w") as f:
            json.dump(jobs, f)
        r = subprocess.run(["node", os.path.join(HERE, "tfjs_run.js"), tfjs, job_file],
                           stdout=subprocess.PIPE, text=True, timeout=600)
        if r.returncode != 0:
            print("tfjs_run.js failed (status %d)" % r.returncode)
            sys.exit(1)
        results = json.loads(r.stdout)
    for name in names:
        res = results[name]
        if "error" in res:
            print("%-32s tfjs cannot run it: %s" % (name, res["error"][:120]))
            continue
        for ref, got in zip(refs[name], res["outputs"]):
            got = np.array(got["data"], dtype=np.float64).reshape(got["shape"])
            if got.shape != ref.shape:
                print("%-32s FAIL: tfjs shape %s, numpy %s" % (name, got.shape, ref.shape))
                failed += 1
                continue
            err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
            rel = err / max(1.0, float(np.max(np.abs(ref))))
            ok = rel <= 1e-5
            failed += not ok
            print("%-32s %-5s max|tfjs - numpy| %.2e rel %.2e" % (name, "ok" if ok else "FAIL", err, rel))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
