#!/usr/bin/python3
"""One Keras model of tests/runtime/keras, as braid loads its SavedModel, against TensorFlow.

    test_keras_savedmodel.py --braid PATH MODEL [--expect match|fails]

gen_keras.py (tests/runtime/keras, run with the TensorFlow venv; cached in $BRAID_KERAS_DIR,
default ~/.cache/braid/keras) writes MODEL's SavedModel (savedmodel/), its seeded inputs and
TensorFlow's outputs. braid runs the SavedModel directory, inputs and outputs named by the
signature's keys, every engine allowed (TensorFlow from $BRAID_LIBTENSORFLOW or the venv);
each float output must be within 1e-4 of TensorFlow's (relative to its largest magnitude),
integer outputs identical. --expect fails: braid refuses the model today (the reason is
printed); the test fails if braid crashes, answers wrongly, or starts to match (then the
expectation in meson.build must become "match"). Exit 77 only without TensorFlow.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import savedmodels as sm  # noqa: E402

KERAS_GEN = os.path.join(HERE, "..", "keras", "gen_keras.py")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--braid", required=True)
    ap.add_argument("--expect", choices=("match", "fails"), default="match")
    ap.add_argument("model")
    a = ap.parse_args()
    sm.require_tensorflow("keras SavedModel %s" % a.model)
    root = os.environ.get("BRAID_KERAS_DIR") or os.path.join(sm.CACHE, "keras")
    gen = subprocess.run([sm.tf_python(), KERAS_GEN, "--out", root, "--only", a.model],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1200)
    if gen.returncode:
        print(gen.stdout)
        print("keras %s: the generator failed" % a.model)
        return 1
    cache = os.path.join(root, a.model)
    with open(os.path.join(cache, "meta.json")) as f:
        meta = json.load(f)
    with tempfile.TemporaryDirectory(prefix="braid-keras-sm-") as out:
        args = [a.braid, "run", os.path.join(cache, "savedmodel"), "--output", out, "--threads", "1",
                "--tf-threads", "1"]
        for i in meta["inputs"]:
            args += ["--input", "%s=%s" % (i["name"], os.path.join(cache, i["file"]))]
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        text = "\n".join(l for l in r.stdout.splitlines() if not l.startswith(("WARNING", "I0000", "W0000")))
        if r.returncode < 0:
            print(text)
            print("keras %s SavedModel: braid died of signal %d" % (a.model, -r.returncode))
            return 1
        if r.returncode:
            print(text)
            if a.expect == "fails":
                print("KNOWN FAILURE: keras %s SavedModel does not run on braid yet" % a.model)
                return 0
            return 1
        ok = True
        for o in meta["outputs"]:
            ref = np.load(os.path.join(cache, o["file"]))
            got = np.load(os.path.join(out, o["name"] + ".npy"))
            if got.shape != ref.shape:
                print("%-8s FAIL: shape %s, TensorFlow %s" % (o["name"], got.shape, ref.shape))
                ok = False
            elif np.issubdtype(ref.dtype, np.floating):
                err = sm.rel_err(got, ref) if ref.size else 0.0
                good = err <= sm.TOL and not np.isnan(got).any()
                print("%-8s %-4s %s rel err %.2e" % (o["name"], "ok" if good else "FAIL", list(ref.shape), err))
                ok &= good
            else:
                good = np.array_equal(got, ref)
                print("%-8s %-4s %s %s" % (o["name"], "ok" if good else "FAIL", list(ref.shape),
                                           "identical" if good else "differ"))
                ok &= good
        if not ok:
            print("keras %s SavedModel: braid's outputs differ from TensorFlow's" % a.model)
            return 1
        if a.expect == "fails":
            print("keras %s SavedModel now matches TensorFlow: set its expectation to 'match' in "
                  "tests/runtime/savedmodel/meson.build" % a.model)
            return 1
        print("keras %s SavedModel: braid matches TensorFlow" % a.model)
        return 0


if __name__ == "__main__":
    sys.exit(main())
