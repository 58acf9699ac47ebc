"""What the tritonclient tests (gRPC: test_tritonclient.py, REST: test_tritonclient_http.py)
share: a braidd with uploads allowed, the demo model and a batched model (max_batch_size 8),
the demo's PyTorch reference, Triton's classification strings and the checks both clients
make the same way (top-k classes, upload/infer/unload)."""
import os
import subprocess

import numpy as np

from braidd_fixture import SOURCE_ROOT, BraiddTestCase

DEMO = "tinycnn"


def fixture(name):
    return np.load(os.path.join(SOURCE_ROOT, "tests", "fixtures", "demo", name + ".npy"))


def triton_classes(values, k):
    """Triton's classification strings for one list of VALUES (no labels)."""
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))[:k]
    return [("%f:%d" % (values[i], i)).encode() for i in order]


class TritonClientCase(BraiddTestCase):
    """Subclasses set client_module (tritonclient.grpc or tritonclient.http) and self.client in
    setUp (after calling this one's)."""

    braidd_args = ("--allow-uploads",)
    client_module = None

    @classmethod
    def prepare_repository(cls, repo):
        # Models are written by Debian's python (it has onnx; the client venv does not).
        cls.models = os.path.join(repo, "..", "onnx-models")
        subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "e2e_models.py"),
                        cls.models], check=True, stdout=subprocess.DEVNULL)
        os.makedirs(os.path.join(repo, "batched", "1"))
        os.replace(os.path.join(cls.models, "batch_add_one.onnx"),
                   os.path.join(repo, "batched", "1", "model.onnx"))
        with open(os.path.join(repo, "batched", "config.json"), "w") as f:
            f.write('{"max_batch_size": 8}')

    def setUp(self):
        self.image = fixture("image")
        self.probs = fixture("probabilities")

    def tearDown(self):
        self.client.close()
        super().tearDown()

    def assert_classes(self, got, k):
        """GOT, Triton's "value:index" strings for the demo's output, are its top K classes."""
        want = triton_classes([float(v) for v in self.probs.ravel()], k)
        self.assertEqual([g.split(b":")[1] for g in got], [w.split(b":")[1] for w in want])
        for g, w in zip(got, want):
            self.assertAlmostEqual(float(g.split(b":")[0]), float(w.split(b":")[0]), places=4)

    def check_upload_infer_unload(self, repository_index):
        """Upload tiny_add as "uploaded", infer through it, see it READY in
        REPOSITORY_INDEX() (a list of the index's model entries), unload it."""
        with open(os.path.join(self.models, "tiny_add.onnx"), "rb") as f:
            model = f.read()
        self.client.load_model("uploaded", config='{"max_batch_size": 0}',
                               files={"file:1/model.onnx": model})
        self.assertTrue(self.client.is_model_ready("uploaded"))
        x = np.ones((1, 16), np.float32)
        i = self.client_module.InferInput("x", [1, 16], "FP32")
        i.set_data_from_numpy(x)
        r = self.client.infer("uploaded", [i])
        np.testing.assert_array_equal(r.as_numpy("y"), x + np.arange(1, 17, dtype=np.float32))
        index = {m["name"]: m for m in repository_index()}
        self.assertEqual(index["uploaded"]["state"], "READY")
        self.client.unload_model("uploaded")
        self.assertFalse(self.client.is_model_ready("uploaded"))
