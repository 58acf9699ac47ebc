"""What the tritonclient tests (gRPC: test_tritonclient.py, REST: test_tritonclient_http.py)
share: a braidd with uploads allowed, the demo model and a batched model (max_batch_size 8),
the demo's PyTorch reference, and Triton's classification strings."""
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
    """Subclasses set self.client in setUp (after calling this one's)."""

    braidd_args = ("--allow-uploads",)

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
