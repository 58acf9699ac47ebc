#!/usr/bin/python3
"""NVIDIA's Triton Python client (PyPI tritonclient 2.73, unchanged; scripts/fetch_tritonclient.sh
installs it in ~/.cache/braid/clients-venv) against a live braidd, over gRPC: every API of
tritonclient.grpc that braidd serves — health, metadata, model config, sync and async
inference, streaming inference (start_stream / async_stream_infer / stop_stream),
classification, repository index, load with an upload and unload, statistics —
checked against the demo model's PyTorch reference (tests/fixtures/demo) and numpy.

Run by Debian's python3 (meson), it re-executes itself in the client venv. Skipped (exit 77,
saying why) only when that venv is absent. The HTTP flavour (tritonclient.http, against the
REST port) is test_tritonclient_http.py."""

from client_venv import in_client_venv

in_client_venv()
import tritonclient.grpc as tc                  # noqa: E402
from tritonclient.utils import InferenceServerException   # noqa: E402

import queue                                   # noqa: E402

import numpy as np                             # noqa: E402

from braidd_fixture import run_tests          # noqa: E402
from triton_client_case import DEMO, TritonClientCase   # noqa: E402


class TritonClient(TritonClientCase):
    client_module = tc

    def setUp(self):
        super().setUp()
        self.client = tc.InferenceServerClient("127.0.0.1:%d" % self.d.grpc_port)

    def demo_inputs(self):
        x = tc.InferInput("image", list(self.image.shape), "FP32")
        x.set_data_from_numpy(self.image)
        return [x]

    def test_health(self):
        self.assertTrue(self.client.is_server_live())
        self.assertTrue(self.client.is_server_ready())
        self.assertTrue(self.client.is_model_ready(DEMO))
        self.assertTrue(self.client.is_model_ready(DEMO, "1"))
        # Triton answers False (not an error) for what it does not serve
        self.assertFalse(self.client.is_model_ready("no_such_model"))

    def test_metadata_and_config(self):
        sm = self.client.get_server_metadata(as_json=True)
        self.assertEqual(sm["name"], "braid")
        for ext in ("model_repository", "statistics", "classification", "model_configuration"):
            self.assertIn(ext, sm["extensions"])
        mm = self.client.get_model_metadata(DEMO, as_json=True)
        self.assertEqual([(t["name"], t["datatype"]) for t in mm["inputs"]], [("image", "FP32")])
        self.assertEqual(mm["outputs"][0]["name"], "probabilities")
        cfg = self.client.get_model_config("batched", as_json=True)["config"]
        self.assertEqual(cfg["max_batch_size"], 8)
        self.assertEqual([int(d) for d in cfg["input"][0]["dims"]], [4])
        with self.assertRaises(InferenceServerException):
            self.client.get_model_metadata("no_such_model")

    def test_infer_sync_matches_pytorch(self):
        r = self.client.infer(DEMO, self.demo_inputs(),
                              outputs=[tc.InferRequestedOutput("probabilities")], request_id="r1")
        np.testing.assert_allclose(r.as_numpy("probabilities"), self.probs, rtol=1e-4, atol=1e-6)
        self.assertEqual(r.get_response().id, "r1")

    def test_async_infer(self):
        done = queue.Queue()
        for _ in range(4):
            self.client.async_infer(DEMO, self.demo_inputs(),
                                    callback=lambda result, error: done.put((result, error)))
        for _ in range(4):
            result, error = done.get(timeout=60)
            self.assertIsNone(error)
            np.testing.assert_allclose(result.as_numpy("probabilities"), self.probs,
                                       rtol=1e-4, atol=1e-6)

    def test_batched_model(self):
        x = np.arange(24, dtype=np.float32).reshape(6, 4)
        i = tc.InferInput("x", [6, 4], "FP32")
        i.set_data_from_numpy(x)
        r = self.client.infer("batched", [i])
        np.testing.assert_array_equal(r.as_numpy("y"), x + 1)

    def test_classification(self):
        out = tc.InferRequestedOutput("probabilities", class_count=3)
        r = self.client.infer(DEMO, self.demo_inputs(), outputs=[out])
        # the demo model has a fixed [1, 10] output and no max_batch_size: one list of 10
        self.assert_classes([bytes(s) for s in r.as_numpy("probabilities").ravel()], 3)

    def test_load_with_upload_and_unload(self):
        self.check_upload_infer_unload(
            lambda: self.client.get_model_repository_index(as_json=True)["models"])

    def test_statistics(self):
        before = self.client.get_inference_statistics(DEMO, as_json=True)["model_stats"][0]
        n0 = int(before["inference_stats"]["success"].get("count", 0))
        for _ in range(3):
            self.client.infer(DEMO, self.demo_inputs())
        after = self.client.get_inference_statistics(DEMO, as_json=True)["model_stats"][0]
        self.assertGreaterEqual(int(after["inference_stats"]["success"]["count"]), n0 + 3)
        self.assertGreater(int(after["inference_stats"]["compute_infer"]["ns"]), 0)

    def test_stream_infer(self):
        # Triton's bidirectional ModelStreamInfer: results come to the callback, matched by
        # request id; a bad request is an error in the callback and the stream goes on.
        done = queue.Queue()
        self.client.start_stream(callback=lambda result, error: done.put((result, error)),
                                 stream_timeout=120)
        want, bad = {}, 0
        for i in range(60):
            rid = "s%d" % i
            if i % 10 == 9:
                x = tc.InferInput("image", [1, 3, 32, 31], "FP32")
                x.set_data_from_numpy(np.zeros((1, 3, 32, 31), np.float32))
                self.client.async_stream_infer(DEMO, [x], request_id=rid)
                bad += 1
            elif i % 2:
                self.client.async_stream_infer(DEMO, self.demo_inputs(), request_id=rid)
                want[rid] = ("probabilities", self.probs)
            else:
                xb = np.full((2, 4), i, np.float32)
                x = tc.InferInput("x", [2, 4], "FP32")
                x.set_data_from_numpy(xb)
                self.client.async_stream_infer("batched", [x], request_id=rid)
                want[rid] = ("y", xb + 1)
        self.client.stop_stream()           # half-close: every response arrives first
        got, errors = {}, []
        while not done.empty():
            result, error = done.get()
            if error is not None:
                errors.append(str(error))
            else:
                got[result.get_response().id] = result
        self.assertEqual(len(errors), bad, errors)
        self.assertTrue(all("image" in e for e in errors), errors)
        self.assertEqual(sorted(got), sorted(want))
        for rid, (name, ref) in want.items():
            np.testing.assert_allclose(got[rid].as_numpy(name), ref, rtol=1e-4, atol=1e-6,
                                       err_msg=rid)

    def test_bad_input_is_an_exception_not_a_crash(self):
        x = tc.InferInput("image", [1, 3, 32, 31], "FP32")
        x.set_data_from_numpy(np.zeros((1, 3, 32, 31), np.float32))
        with self.assertRaises(InferenceServerException) as e:
            self.client.infer(DEMO, [x])
        self.assertIn("image", str(e.exception))


if __name__ == "__main__":
    run_tests()
