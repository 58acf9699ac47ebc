#!/usr/bin/python3
"""braidd with the REAL TensorFlow engine (found by its default search, as in production):

- live_check (x -> CheckNumerics): a finite input is served; a NaN makes TensorFlow fail at
  run time, and the client gets INTERNAL carrying TensorFlow's own message; the server keeps
  serving and the next request succeeds;
- live_ops (Relu on braid, Unique and Cumsum/Abs on TensorFlow, run-time-shaped outputs):
  served and checked against numpy;
- live_rejected (a node whose op no TensorFlow registers): TensorFlow refuses the graph;
  braidd reports INVALID_ARGUMENT naming the node and its op, never a crash.

The GraphDefs are tests/backends/tf/fixtures/live_*.pbtxt, encoded by meson (TF_LIVE_FIXTURES
names the directory). Without TensorFlow installed it prints SKIPPED and exits 77.
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import numpy as np  # noqa: E402


def tensorflow_or_skip():
    """The library the engine's default search finds (backends/tf/tfb_runtime.h), or SKIP."""
    lib = os.environ.get("BRAID_LIBTENSORFLOW")
    if lib:
        return lib
    venv = os.environ.get("BRAID_TF_VENV") or os.path.join(os.path.expanduser("~"), ".cache", "braid", "tf-venv")
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3.*", "site-packages", "tensorflow",
                                          "libtensorflow_cc.so.2")))
    if not found:
        print("SKIPPED: tf_daemon: NO TENSORFLOW INSTALLED (nothing in %s; scripts/fetch_tf.sh "
              "installs it): braidd's live TensorFlow engine is NOT tested" % venv)
        sys.exit(77)
    return found[0]


if __name__ == "__main__":
    print("TensorFlow: %s" % tensorflow_or_skip())

from braidd_fixture import BraiddTestCase, pb, run_tests, status_of  # noqa: E402
from tensors import infer_request, response_outputs  # noqa: E402

FIXTURES = os.environ.get("TF_LIVE_FIXTURES", "")


def write_model(repo, name, fixture):
    d = os.path.join(repo, name, "1")
    os.makedirs(d)
    with open(os.path.join(FIXTURES, fixture + ".pb"), "rb") as src, open(os.path.join(d, "model.pb"), "wb") as dst:
        dst.write(src.read())


class LiveTensorFlow(BraiddTestCase):

    # live_rejected never becomes ready, so the server never says ServerReady.
    wait_for_ready = False
    wait_states = (("live_check", "READY"), ("live_ops", "READY"))

    @classmethod
    def prepare_repository(cls, repo):
        write_model(repo, "live_check", "live_check")
        write_model(repo, "live_ops", "live_ops")
        write_model(repo, "live_rejected", "live_rejected")

    def infer(self, name, x):
        return status_of(self.stub.ModelInfer, infer_request(name, {"x": x}), timeout=60)

    def test_run_time_error_is_internal_with_tensorflows_message(self):
        x = np.array([1, 2, 3, 4], np.float32)
        code, resp = self.infer("live_check", x)
        self.assertEqual(code.name, "OK", resp)
        np.testing.assert_array_equal(next(iter(response_outputs(resp).values())), x)

        code, details = self.infer("live_check", np.array([1, np.nan, 3, 4], np.float32))
        print("NaN request: %s: %s" % (code.name, details))
        self.assertEqual(code.name, "INTERNAL")
        self.assertIn("braid-live-check : Tensor had NaN values", details)

        code, resp = self.infer("live_check", x)      # still serving
        self.assertEqual(code.name, "OK", resp)

    def test_run_time_shaped_outputs_from_tensorflow(self):
        for x in (np.array([1, -2, 3, 0, 3, 5], np.float32), np.array([2, 2, -1, 7, 0.5, 7, -3], np.float32)):
            code, resp = self.infer("live_ops", x)
            self.assertEqual(code.name, "OK", resp)
            outs = response_outputs(resp)
            r = np.maximum(x, 0)
            _, first = np.unique(r, return_index=True)
            np.testing.assert_array_equal(outs["u"], r[np.sort(first)])
            excl_rev = np.cumsum(r[::-1])[::-1] - r
            np.testing.assert_allclose(outs["a"], np.abs(excl_rev), rtol=1e-6)

    def test_graphdef_tensorflow_rejects_names_the_node(self):
        code, details = status_of(self.stub.RepositoryModelLoad,
                                  pb.RepositoryModelLoadRequest(model_name="live_rejected"), timeout=60)
        print("load: %s: %s" % (code.name, details))
        self.assertEqual(code.name, "INVALID_ARGUMENT")
        self.assertIn("TensorFlow rejects node 'bogus' (BraidNoSuchOp)", details)
        code, details = self.infer("live_rejected", np.ones(4, np.float32))
        self.assertNotEqual(code.name, "OK")


if __name__ == "__main__":
    run_tests()
