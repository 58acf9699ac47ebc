#!/usr/bin/python3
"""NVIDIA's tritonclient (PyPI 2.73, unchanged; scripts/fetch_tritonclient.sh) using Triton's
system shared memory extension against a braidd started with --allow-shared-memory, over
gRPC and HTTP: tritonclient.utils.shared_memory creates the regions,
register_system_shared_memory / get_system_shared_memory_status /
unregister_system_shared_memory manage them, InferInput.set_shared_memory and
InferRequestedOutput.set_shared_memory route the demo model's tensors through them, and the
output read back from the region matches the demo's PyTorch reference (tests/fixtures/demo).

Run by Debian's python3 (meson), it re-executes itself in the client venv; skipped (exit 77)
only when that venv is absent."""

import os

from client_venv import in_client_venv

in_client_venv()
import tritonclient.grpc as tg                  # noqa: E402  (before braidd_fixture: see there)
import tritonclient.http as th                  # noqa: E402
import tritonclient.utils.shared_memory as shm  # noqa: E402
from tritonclient.utils import InferenceServerException   # noqa: E402

import numpy as np                             # noqa: E402

from braidd_fixture import run_tests          # noqa: E402
from triton_client_case import DEMO, TritonClientCase   # noqa: E402


class SharedMemoryClients(TritonClientCase):
    braidd_args = ("--allow-uploads", "--allow-shared-memory")

    def setUp(self):
        super().setUp()
        self.client = tg.InferenceServerClient("127.0.0.1:%d" % self.d.grpc_port)
        self.http = th.InferenceServerClient("127.0.0.1:%d" % self.d.rest_port)
        tag = "%d_%s" % (os.getpid(), self._testMethodName[-12:])
        self.in_bytes = self.image.nbytes
        self.out_bytes = self.probs.nbytes
        self.h_in = shm.create_shared_memory_region("in_" + tag, "/braid_in_" + tag, self.in_bytes)
        self.h_out = shm.create_shared_memory_region("out_" + tag, "/braid_out_" + tag, self.out_bytes)
        self.keys = ("/braid_in_" + tag, "/braid_out_" + tag)
        shm.set_shared_memory_region(self.h_in, [np.ascontiguousarray(self.image, np.float32)])

    def tearDown(self):
        self.client.unregister_system_shared_memory()
        shm.destroy_shared_memory_region(self.h_in)
        shm.destroy_shared_memory_region(self.h_out)
        self.http.close()
        super().tearDown()

    def check_output(self, out_tensor_shape):
        self.assertEqual(list(out_tensor_shape), list(self.probs.shape))
        got = shm.get_contents_as_numpy(self.h_out, np.float32, self.probs.shape)
        np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-5)

    def test_grpc(self):
        self.assertIn("system_shared_memory", self.client.get_server_metadata().extensions)
        self.client.register_system_shared_memory("input_data", self.keys[0], self.in_bytes)
        self.client.register_system_shared_memory("output_data", self.keys[1], self.out_bytes)
        st = self.client.get_system_shared_memory_status(as_json=True)
        self.assertEqual(set(st["regions"]), {"input_data", "output_data"})
        self.assertEqual(int(st["regions"]["input_data"]["byte_size"]), self.in_bytes)
        self.assertEqual(st["regions"]["output_data"]["key"], self.keys[1])
        x = tg.InferInput("image", list(self.image.shape), "FP32")
        x.set_shared_memory("input_data", self.in_bytes)
        o = tg.InferRequestedOutput("probabilities")
        o.set_shared_memory("output_data", self.out_bytes)
        r = self.client.infer(DEMO, [x], outputs=[o])
        out = r.get_output("probabilities")
        self.assertEqual(out.datatype, "FP32")
        self.check_output(out.shape)
        # a too-small output region is the client's exception, not a crash
        o.set_shared_memory("output_data", 8)
        with self.assertRaises(InferenceServerException) as e:
            self.client.infer(DEMO, [x], outputs=[o])
        self.assertIn("needs 40 bytes", str(e.exception))
        with self.assertRaises(InferenceServerException) as e:
            self.client.get_cuda_shared_memory_status()
        self.assertIn("CUDA shared memory is not supported", str(e.exception))
        self.client.unregister_system_shared_memory("input_data")
        st = self.client.get_system_shared_memory_status(as_json=True)
        self.assertEqual(set(st["regions"]), {"output_data"})
        with self.assertRaises(InferenceServerException) as e:
            self.client.infer(DEMO, [x], outputs=[o])
        self.assertIn("input_data", str(e.exception))

    def test_grpc_stream(self):
        """ModelStreamInfer runs each request as ModelInfer: shared memory works there too."""
        import queue
        self.client.register_system_shared_memory("input_data", self.keys[0], self.in_bytes)
        self.client.register_system_shared_memory("output_data", self.keys[1], self.out_bytes)
        answers = queue.Queue()
        self.client.start_stream(callback=lambda result, error: answers.put((result, error)))
        x = tg.InferInput("image", list(self.image.shape), "FP32")
        x.set_shared_memory("input_data", self.in_bytes)
        o = tg.InferRequestedOutput("probabilities")
        o.set_shared_memory("output_data", self.out_bytes)
        self.client.async_stream_infer(DEMO, [x], outputs=[o], request_id="s1")
        bad = tg.InferInput("image", list(self.image.shape), "FP32")
        bad.set_shared_memory("no_such_region", self.in_bytes)
        self.client.async_stream_infer(DEMO, [bad], outputs=[o], request_id="s2")
        first, second = answers.get(timeout=60), answers.get(timeout=60)
        self.client.stop_stream()
        self.assertIsNone(first[1])
        self.check_output(first[0].get_output("probabilities").shape)
        self.assertIsNotNone(second[1])
        self.assertIn("no_such_region", str(second[1]))

    def test_http(self):
        self.assertIn("system_shared_memory", self.http.get_server_metadata()["extensions"])
        self.http.register_system_shared_memory("input_data", self.keys[0], self.in_bytes)
        self.http.register_system_shared_memory("output_data", self.keys[1], self.out_bytes)
        st = self.http.get_system_shared_memory_status()
        self.assertEqual(sorted(r["name"] for r in st), ["input_data", "output_data"])
        st = self.http.get_system_shared_memory_status("input_data")
        self.assertEqual([(r["name"], r["key"], r["byte_size"]) for r in st],
                         [("input_data", self.keys[0], self.in_bytes)])
        x = th.InferInput("image", list(self.image.shape), "FP32")
        x.set_shared_memory("input_data", self.in_bytes)
        o = th.InferRequestedOutput("probabilities", binary_data=True)
        o.set_shared_memory("output_data", self.out_bytes)
        r = self.http.infer(DEMO, [x], outputs=[o])
        out = r.get_output("probabilities")
        self.assertNotIn("data", out)
        self.check_output(out["shape"])
        with self.assertRaises(InferenceServerException):
            self.http.register_system_shared_memory("input_data", self.keys[0], self.in_bytes)
        self.http.unregister_system_shared_memory("output_data")
        self.http.unregister_system_shared_memory()
        self.assertEqual(self.http.get_system_shared_memory_status(), [])


if __name__ == "__main__":
    run_tests()
