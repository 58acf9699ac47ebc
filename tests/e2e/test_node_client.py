#!/usr/bin/python3
"""A client in a second language: Node.js with @grpc/grpc-js (npm, pinned; installed by
scripts/fetch_node_client.sh), its stubs loaded at run time from braid's own
proto/inference.proto by @grpc/proto-loader. tests/e2e/node/infer_client.js calls health,
metadata and ModelInfer (binary and typed tensors, 16 at once, two errors) against a live
braidd; this test checks what it printed against the demo model's PyTorch reference
(tests/fixtures/demo). Skipped (exit 77, saying why) only when Node.js or the packages are
absent."""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from braidd_fixture import SOURCE_ROOT, BraiddTestCase, run_tests

DEMO = "tinycnn"
NODE_MODULES = os.path.expanduser("~/.cache/braid/node-client/node_modules")
GRPC_NOT_FOUND, GRPC_INVALID_ARGUMENT = 5, 3


def fixture(name):
    return np.load(os.path.join(SOURCE_ROOT, "tests", "fixtures", "demo", name + ".npy"))


class NodeClient(BraiddTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.image, cls.probs = fixture("image"), fixture("probabilities")
        cls.tmp = tempfile.mkdtemp(prefix="braid-node-")
        raw = os.path.join(cls.tmp, "image.f32")
        cls.image.astype("<f4").tofile(raw)
        job = os.path.join(cls.tmp, "job.json")
        with open(job, "w") as f:
            json.dump({"address": "127.0.0.1:%d" % cls.d.grpc_port,
                       "proto": os.path.join(SOURCE_ROOT, "proto", "inference.proto"),
                       "model": DEMO,
                       "input": {"name": "image", "shape": list(cls.image.shape), "raw": raw}}, f)
        run = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "node", "infer_client.js"), job],
                             env=dict(os.environ, NODE_PATH=NODE_MODULES), capture_output=True,
                             text=True, timeout=120)
        if run.returncode != 0:
            raise AssertionError("infer_client.js failed (%d):\n%s" % (run.returncode, run.stderr))
        cls.result = json.loads(run.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def check_probabilities(self, answer, request_id):
        self.assertNotIn("error", answer)
        self.assertEqual((answer["id"], answer["model_name"]), (request_id, DEMO))
        out = answer["outputs"]["probabilities"]
        self.assertEqual((out["datatype"], out["shape"]), ("FP32", list(self.probs.shape)))
        got = np.frombuffer(base64.b64decode(out["raw"]), "<f4").reshape(out["shape"])
        np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-6)

    def test_health_and_metadata(self):
        r = self.result
        self.assertEqual((r["live"]["live"], r["ready"]["ready"], r["model_ready"]["ready"]),
                         (True, True, True))
        self.assertEqual(r["server_metadata"]["name"], "braid")
        self.assertIn("model_repository", r["server_metadata"]["extensions"])
        mm = r["model_metadata"]
        self.assertEqual([(t["name"], t["datatype"]) for t in mm["inputs"]], [("image", "FP32")])
        self.assertEqual([int(d) for d in mm["inputs"][0]["shape"]][1:], list(self.image.shape)[1:])
        self.assertEqual(mm["outputs"][0]["name"], "probabilities")

    def test_infer_binary_and_typed_tensors(self):
        self.check_probabilities(self.result["raw_infer"], "node-raw")
        self.check_probabilities(self.result["typed_infer"], "node-typed")

    def test_concurrent_calls_each_get_their_own_answer(self):
        answers = self.result["concurrent"]
        self.assertEqual(len(answers), 16)
        for i, a in enumerate(answers):
            self.check_probabilities(a, "node-%d" % i)

    def test_errors_are_grpc_status_codes(self):
        e = self.result["unknown_model"]["error"]
        self.assertEqual(e["code"], GRPC_NOT_FOUND)
        self.assertIn("no_such_model", e["details"])
        e = self.result["bad_shape"]["error"]
        self.assertEqual(e["code"], GRPC_INVALID_ARGUMENT)
        self.assertIn("image", e["details"])

    def test_bidirectional_stream(self):
        r = self.result["stream"]
        self.assertNotIn("error", r)
        self.assertEqual(len(r["responses"]), 8)
        for i, a in enumerate(r["responses"]):
            if i == 3:
                self.assertEqual(a["id"], "node-stream-3")
                self.assertIn("no_such_model", a["error"])
            else:
                self.check_probabilities(a, "node-stream-%d" % i)


if __name__ == "__main__":
    if not shutil.which("node") or not os.path.isdir(os.path.join(NODE_MODULES, "@grpc", "grpc-js")):
        print("SKIP: Node.js or @grpc/grpc-js missing: run scripts/fetch_node_client.sh "
              "(scripts/setup.sh does)")
        sys.exit(77)
    run_tests()
