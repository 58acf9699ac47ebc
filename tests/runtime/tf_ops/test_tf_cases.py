#!/usr/bin/env python3
"""TensorFlow ops braid translates, against TensorFlow itself, with no framework engine.

    test_tf_cases.py --braid PATH GROUP

1. gen_tf_cases.py (under the tf-venv python: ~/.cache/braid/tf-venv, or $BRAID_TF_PYTHON)
   writes one GraphDef per case of GROUP with TensorFlow's outputs, into a temporary dir;
2. `braid run model.pb --engine dnnl,native` on each (the translation must run without
   TensorFlow: a node left to TensorFlow fails the case);
3. every output compared: integers and booleans exactly, floats by
   max|braid - tf| / max(1, max|tf|) <= 1e-4.
Skips (77) when the TensorFlow venv is absent.
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
TOL = 1e-4
SKIP = 77


def tf_python():
    p = os.environ.get("BRAID_TF_PYTHON") or os.path.expanduser("~/.cache/braid/tf-venv/bin/python")
    return p if os.path.isfile(p) else None


def run_case(braid, d):
    refs = json.load(open(os.path.join(d, "refs.json")))
    out = os.path.join(d, "braid")
    cmd = [braid, "run", os.path.join(d, "model.pb"), "-o", out, "--engine", "dnnl,native",
           "--threads", "1"]
    for i in refs["inputs"]:
        cmd += ["-i", "%s=%s" % (i["name"], os.path.join(d, i["file"]))]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if r.returncode != 0:
        return False, "braid run failed: " + r.stderr.strip()[-1500:]
    got = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(.*) -> (.*\.npy)$", line)
        if m:
            got[m.group(1)] = np.load(m.group(2))
    worst, bad = 0.0, []
    for o in refs["outputs"]:
        ref = np.load(os.path.join(d, o["file"]))
        # braid names an output after the Identity, or after its input when others read that.
        y = got.get(o["name"], got.get(o.get("src", "")))
        if y is None:
            bad.append("%s missing" % o["name"])
            continue
        if y.shape != ref.shape:
            bad.append("%s: shape %s, TensorFlow %s" % (o["name"], y.shape, ref.shape))
            continue
        if ref.dtype.kind in "iub":
            if not np.array_equal(y.astype(np.int64), ref.astype(np.int64)):
                bad.append("%s: integers differ (%s vs %s)" % (o["name"], y.ravel()[:8], ref.ravel()[:8]))
            continue
        if ref.size == 0:
            continue
        e = float(np.max(np.abs(y.astype(np.float64) - ref))) / max(1.0, float(np.max(np.abs(ref))))
        if not e <= TOL:
            bad.append("%s: rel %.2e" % (o["name"], e))
        worst = max(worst, e)
    return not bad, ("%d outputs, worst rel %.1e" % (len(refs["outputs"]), worst)) if not bad else "; ".join(bad[:12])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--braid", required=True)
    ap.add_argument("group")
    ap.add_argument("--keep", default="", help="write the cases here instead of a temporary dir")
    a = ap.parse_args()
    py = tf_python()
    if not py:
        print("SKIPPED: tf_cases %s: no TensorFlow venv (scripts/setup.sh makes ~/.cache/braid/tf-venv)" % a.group)
        return SKIP
    with tempfile.TemporaryDirectory() as tmp:
        outdir = a.keep or tmp
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        g = subprocess.run([py, os.path.join(HERE, "gen_tf_cases.py"), outdir, a.group], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        if g.returncode != 0:
            print("tf_cases %s: generator failed:\n%s" % (a.group, g.stderr[-3000:]))
            return 1
        failed = 0
        for line in g.stdout.splitlines():
            name = line.split()[0]
            ok, msg = run_case(a.braid, os.path.join(outdir, name))
            print("%-44s %s  %s" % (name, "ok  " if ok else "FAIL", msg), flush=True)
            failed += not ok
        print("%s: %d case(s) failed" % (a.group, failed) if failed else "%s: all passed" % a.group)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
