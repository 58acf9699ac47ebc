#!/usr/bin/python3
"""NVIDIA's Triton Python client over HTTP/REST (PyPI tritonclient 2.73, tritonclient.http,
unchanged; scripts/fetch_tritonclient.sh installs it in ~/.cache/braid/clients-venv) against a
live braidd's REST port (--rest-address): health, server and model metadata, model config,
inference with JSON tensors and with Triton's binary tensor extension (each way), gzip and
deflate bodies, classification, repository index, load with a base64 upload and unload,
statistics, and bad input answered as the client's exception. Results are checked against the
demo model's PyTorch reference (tests/fixtures/demo) and numpy.

Run by Debian's python3 (meson), it re-executes itself in the client venv. Skipped (exit 77,
saying why) only when that venv is absent."""

from client_venv import in_client_venv

in_client_venv()
import tritonclient.http as th                  # noqa: E402
from tritonclient.utils import InferenceServerException   # noqa: E402

import numpy as np                             # noqa: E402

from braidd_fixture import run_tests          # noqa: E402
from triton_client_case import DEMO, TritonClientCase, triton_classes   # noqa: E402


class TritonHttpClient(TritonClientCase):
    client_module = th

    def setUp(self):
        super().setUp()
        self.client = th.InferenceServerClient("127.0.0.1:%d" % self.d.rest_port)

    def demo_inputs(self, binary=True):
        x = th.InferInput("image", list(self.image.shape), "FP32")
        x.set_data_from_numpy(self.image, binary_data=binary)
        return [x]

    def test_health(self):
        self.assertTrue(self.client.is_server_live())
        self.assertTrue(self.client.is_server_ready())
        self.assertTrue(self.client.is_model_ready(DEMO))
        self.assertTrue(self.client.is_model_ready(DEMO, "1"))
        self.assertFalse(self.client.is_model_ready("no_such_model"))
        self.assertFalse(self.client.is_model_ready(DEMO, "7"))

    def test_metadata_and_config(self):
        sm = self.client.get_server_metadata()
        self.assertEqual(sm["name"], "braid")
        for ext in ("model_repository", "statistics", "classification", "model_configuration",
                    "binary_tensor_data"):
            self.assertIn(ext, sm["extensions"])
        mm = self.client.get_model_metadata(DEMO)
        self.assertEqual(mm["name"], DEMO)
        self.assertEqual(mm["versions"], ["1"])
        self.assertEqual([(t["name"], t["datatype"]) for t in mm["inputs"]], [("image", "FP32")])
        self.assertEqual(mm["outputs"][0]["name"], "probabilities")
        self.assertEqual(self.client.get_model_metadata(DEMO, "1")["name"], DEMO)
        cfg = self.client.get_model_config("batched")
        self.assertEqual(cfg["max_batch_size"], 8)
        self.assertEqual(cfg["input"][0]["dims"], [4])
        self.assertEqual(cfg["input"][0]["data_type"], "TYPE_FP32")
        with self.assertRaises(InferenceServerException) as e:
            self.client.get_model_metadata("no_such_model")
        self.assertEqual(e.exception.status(), "404")

    def test_infer_each_encoding_matches_pytorch(self):
        # JSON in / JSON out, binary in / binary out, and the two mixed
        for bin_in in (False, True):
            for bin_out in (False, True):
                out = th.InferRequestedOutput("probabilities", binary_data=bin_out)
                r = self.client.infer(DEMO, self.demo_inputs(bin_in), outputs=[out],
                                      request_id="r-%d%d" % (bin_in, bin_out))
                np.testing.assert_allclose(r.as_numpy("probabilities"), self.probs,
                                           rtol=1e-4, atol=1e-6)
                self.assertEqual(r.get_response()["id"], "r-%d%d" % (bin_in, bin_out))
                self.assertEqual(r.get_response()["model_name"], DEMO)
        # no outputs named: every output, in binary (binary_data_output)
        r = self.client.infer(DEMO, self.demo_inputs())
        np.testing.assert_allclose(r.as_numpy("probabilities"), self.probs, rtol=1e-4, atol=1e-6)

    def test_compressed_bodies(self):
        for req in ("gzip", "deflate", None):
            for rsp in ("gzip", "deflate", None):
                r = self.client.infer(DEMO, self.demo_inputs(req != "deflate"),
                                      outputs=[th.InferRequestedOutput("probabilities",
                                                                       binary_data=rsp == "gzip")],
                                      request_compression_algorithm=req,
                                      response_compression_algorithm=rsp)
                np.testing.assert_allclose(r.as_numpy("probabilities"), self.probs,
                                           rtol=1e-4, atol=1e-6)

    def test_async_infer(self):
        reqs = [self.client.async_infer(DEMO, self.demo_inputs()) for _ in range(4)]
        for q in reqs:
            np.testing.assert_allclose(q.get_result().as_numpy("probabilities"), self.probs,
                                       rtol=1e-4, atol=1e-6)

    def test_batched_model_int_and_json(self):
        x = np.arange(24, dtype=np.float32).reshape(6, 4)
        for binary in (True, False):
            i = th.InferInput("x", [6, 4], "FP32")
            i.set_data_from_numpy(x, binary_data=binary)
            r = self.client.infer("batched", [i])
            np.testing.assert_array_equal(r.as_numpy("y"), x + 1)

    def test_classification(self):
        out = th.InferRequestedOutput("probabilities", class_count=3)
        r = self.client.infer(DEMO, self.demo_inputs(), outputs=[out])
        self.assert_classes([bytes(s) for s in r.as_numpy("probabilities").ravel()], 3)
        want = triton_classes([float(v) for v in self.probs.ravel()], 3)
        # the same as JSON strings
        out = th.InferRequestedOutput("probabilities", binary_data=False, class_count=2)
        r = self.client.infer(DEMO, self.demo_inputs(), outputs=[out])
        got = [s.encode() if isinstance(s, str) else bytes(s) for s in r.as_numpy("probabilities").ravel()]
        self.assertEqual([g.split(b":")[1] for g in got], [w.split(b":")[1] for w in want[:2]])

    def test_load_with_upload_and_unload(self):
        self.check_upload_infer_unload(self.client.get_model_repository_index)
        with self.assertRaises(InferenceServerException) as e:
            self.client.load_model("bad_upload", config='{}', files={"file:1/model.onnx": b"junk"})
        self.assertEqual(e.exception.status(), "500")   # the model fails to import (INTERNAL)

    def test_statistics(self):
        before = self.client.get_inference_statistics(DEMO)["model_stats"][0]
        n0 = int(before["inference_stats"]["success"]["count"])
        for _ in range(3):
            self.client.infer(DEMO, self.demo_inputs())
        after = self.client.get_inference_statistics(DEMO, "1")["model_stats"][0]
        self.assertEqual(after["name"], DEMO)
        self.assertEqual(after["version"], "1")
        self.assertGreaterEqual(int(after["inference_stats"]["success"]["count"]), n0 + 3)
        self.assertGreater(int(after["inference_stats"]["compute_infer"]["ns"]), 0)
        every = self.client.get_inference_statistics()["model_stats"]
        self.assertIn(DEMO, [m["name"] for m in every])

    def test_bad_input_is_an_exception_not_a_crash(self):
        x = th.InferInput("image", [1, 3, 32, 31], "FP32")
        x.set_data_from_numpy(np.zeros((1, 3, 32, 31), np.float32))
        with self.assertRaises(InferenceServerException) as e:
            self.client.infer(DEMO, [x])
        self.assertIn("image", str(e.exception))
        self.assertEqual(e.exception.status(), "400")
        with self.assertRaises(InferenceServerException) as e:
            self.client.infer("no_such_model", self.demo_inputs())
        self.assertEqual(e.exception.status(), "404")
        self.assertTrue(self.client.is_server_live())


if __name__ == "__main__":
    run_tests()
