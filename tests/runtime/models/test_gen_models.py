#!/usr/bin/python3
"""gen_models.py: generates a model with its manifest and references, skips it when fresh,
regenerates it when a file is missing, and refuses unknown names."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

GEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_models.py")


def gen(out, *args):
    return subprocess.run([sys.executable, GEN, "--out", out, *args], capture_output=True,
                          text=True)


def main():
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        print("%s %s" % ("ok  " if ok else "FAIL", what))
        passed, failed = passed + bool(ok), failed + (not ok)

    with tempfile.TemporaryDirectory(prefix="braid-gen-") as d:
        r = gen(d, "--only", "mlp")
        check(r.returncode == 0 and "opset 13" in r.stdout, "first run generates mlp: " + r.stdout.strip())
        man = json.load(open(os.path.join(d, "mlp.json")))
        check(man["inputs"] == ["x"] and man["outputs"] == ["y"] and man["opset"] == 13,
              "manifest names the signature")
        check([c["name"] for c in man["cases"]] == ["default", "b5"], "mlp has a batch-5 case")
        x = np.load(os.path.join(d, "mlp.b5.in.x.npy"))
        y = np.load(os.path.join(d, "mlp.b5.out.y.npy"))
        check(x.shape == (5, 64) and y.shape == (5, 10) and y.dtype == np.float32,
              "b5 input/reference shapes")
        check(man["ops"].get("Gemm") == 3, "op histogram recorded")

        r = gen(d, "--only", "mlp")
        check(r.returncode == 0 and "up to date" in r.stdout, "second run is a no-op")

        os.remove(os.path.join(d, "mlp.out.y.npy"))
        r = gen(d, "--only", "mlp")
        check(r.returncode == 0 and "up to date" not in r.stdout
              and os.path.isfile(os.path.join(d, "mlp.out.y.npy")), "a missing file regenerates")
        check(not [f for f in os.listdir(d) if f.endswith(".tmp")], "no temporary files left")

        r = gen(d, "--only", "nope")
        check(r.returncode == 2 and "unknown model" in r.stderr, "unknown names are refused")
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
