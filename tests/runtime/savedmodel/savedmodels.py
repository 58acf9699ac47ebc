"""The test SavedModels and TensorFlow, for test_savedmodel.py and test_savedmodel_daemon.py.

TensorFlow comes from the venv scripts/setup.sh makes (~/.cache/braid/tf-venv, or
$BRAID_TF_VENV): its python makes the SavedModels (gen_savedmodels.py, once, into
~/.cache/braid/savedmodel-v3) and its libtensorflow_cc.so.2 is the library braid reads the
variables with (unless BRAID_LIBTENSORFLOW names one). Without the venv the tests print
SKIPPED and exit 77: braid needs TensorFlow to freeze a SavedModel's variables.
"""
import glob
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.expanduser("~/.cache/braid")
VENV = os.environ.get("BRAID_TF_VENV") or os.path.join(CACHE, "tf-venv")
MODELS_DIR = os.path.join(CACHE, "savedmodel-v3")   # bump when gen_savedmodels.py changes
TOL = 1e-4          # relative to the reference's largest magnitude (issue 11: <= 1e-4 on float models)

# name -> signature served (the ones the generator writes)
MODELS = {"dense_conv": "serving_default", "two_io": "serving_default", "nondefault": "scores",
          "tf1": "serving_default", "embed": "serving_default", "novars": "serving_default"}


def tf_python():
    return os.path.join(VENV, "bin", "python")


def tf_library():
    if os.environ.get("BRAID_LIBTENSORFLOW"):
        return os.environ["BRAID_LIBTENSORFLOW"]
    libs = glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "tensorflow",
                                  "libtensorflow_cc.so.2"))
    return libs[0] if libs else None


def require_tensorflow(what):
    lib = tf_library()
    if not os.path.exists(tf_python()) or not lib or not os.path.exists(lib):
        print("SKIPPED: %s: no TensorFlow venv at %s (scripts/setup.sh makes it); braid needs "
              "TensorFlow to read a SavedModel's variables" % (what, VENV))
        sys.exit(77)
    os.environ["BRAID_LIBTENSORFLOW"] = lib
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return lib


def ensure_models():
    """The generated SavedModels' directory (made once)."""
    if not os.path.exists(os.path.join(MODELS_DIR, "done")):
        subprocess.run([tf_python(), os.path.join(HERE, "gen_savedmodels.py"), MODELS_DIR],
                       check=True, stdout=subprocess.DEVNULL)
    return MODELS_DIR


def reference(name):
    """(signature, {input key: array}, {output key: array}) the generator saved for NAME."""
    ref = os.path.join(MODELS_DIR, name + ".ref")
    with open(os.path.join(ref, "signature.txt")) as f:
        sig = f.read().strip()
    ins, outs = {}, {}
    for p in sorted(glob.glob(os.path.join(ref, "*.npy"))):
        base = os.path.basename(p)[:-4]
        (ins if base.startswith("in_") else outs)[base[3:] if base.startswith("in_") else base[4:]] = np.load(p)
    return sig, ins, outs


def rel_err(got, ref):
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(got - ref))) / max(1e-6, float(np.max(np.abs(ref))))
