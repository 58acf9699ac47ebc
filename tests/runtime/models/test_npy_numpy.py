#!/usr/bin/python3
"""Interop of core/npy.c with numpy itself: files numpy writes are read back by braid and
written out again; numpy must load the copy unchanged, and for format 1.0 the copy must be
byte-identical to numpy's own file.

    test_npy_numpy.py PATH/TO/test_npy
"""
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    exe = sys.argv[1]
    rng = np.random.default_rng(7)
    arrays = {
        "f4": rng.standard_normal((2, 3, 4)).astype("<f4"),
        "f8": rng.standard_normal((5,)).astype("<f8"),
        "f2": rng.standard_normal((3, 3)).astype("<f2"),
        "i8": rng.integers(-2**62, 2**62, (4, 1), dtype="<i8"),
        "i4": rng.integers(-2**31, 2**31 - 1, (7,), dtype="<i4"),
        "i2": rng.integers(-300, 300, (2, 2), dtype="<i2"),
        "i1": rng.integers(-128, 127, (9,), dtype="i1"),
        "u8": rng.integers(0, 2**63, (3,), dtype="<u8"),
        "u4": rng.integers(0, 2**32 - 1, (3,), dtype="<u4"),
        "u2": rng.integers(0, 2**16 - 1, (3,), dtype="<u2"),
        "u1": rng.integers(0, 255, (1, 2, 3), dtype="u1"),
        "b1": rng.integers(0, 2, (10,)).astype(bool),
        "scalar": np.array(3.25, dtype="<f4"),
        "empty": np.zeros((3, 0, 2), dtype="<f4"),
        "rank8": rng.standard_normal((1, 2, 1, 2, 1, 2, 1, 2)).astype("<f4"),
    }
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="braid-npy-numpy-") as d:
        cases = [(k, a, None) for k, a in arrays.items()]
        cases += [("f4_v2", arrays["f4"], (2, 0)), ("f4_v3", arrays["f4"], (3, 0))]
        for name, a, version in cases:
            src, dst = os.path.join(d, name + ".npy"), os.path.join(d, name + ".out.npy")
            with open(src, "wb") as f:
                np.lib.format.write_array(f, a, version=version)
            r = subprocess.run([exe, "--copy", src, dst], capture_output=True, text=True)
            ok = r.returncode == 0
            if ok:
                b = np.load(dst)
                ok = b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)
                if ok and version is None:
                    ok = open(src, "rb").read() == open(dst, "rb").read()
            print("%s %s %s" % ("ok  " if ok else "FAIL", name, r.stderr.strip()))
            passed, failed = passed + ok, failed + (not ok)

        # Arrays braid must refuse, with a message.
        refuse = {
            "fortran": np.asfortranarray(arrays["f4"]),
            "bigendian": arrays["f4"].astype(">f4"),
            "complex": np.zeros(3, dtype="<c8"),
            "structured": np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]),
        }
        for name, a in refuse.items():
            src = os.path.join(d, name + ".npy")
            np.save(src, a)
            r = subprocess.run([exe, "--copy", src, os.path.join(d, "x.npy")],
                               capture_output=True, text=True)
            ok = r.returncode == 1 and "EUNSUPPORTED" in r.stderr and name + ".npy" in r.stderr
            print("%s refuse %s: %s" % ("ok  " if ok else "FAIL", name, r.stderr.strip()))
            passed, failed = passed + ok, failed + (not ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
