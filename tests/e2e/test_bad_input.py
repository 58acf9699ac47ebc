#!/usr/bin/python3
"""Every row of docs/protocol.md's bad-input table: the exact gRPC status code, a message
naming the tensor, and a server that keeps serving afterwards (BraiddTestCase.tearDown checks
ServerLive after each test; every test also runs a good inference at its end)."""

import concurrent.futures
import json
import time

import grpc
import numpy as np

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests, status_of
from tensors import infer_request, response_outputs

DEMO = "tinycnn"
INVALID = grpc.StatusCode.INVALID_ARGUMENT


class Common(BraiddTestCase):

    def setUp(self):
        self.image = e2e_models.demo_fixture("image")
        self.probs = e2e_models.demo_fixture("probabilities")

    def infer(self, req, timeout=30):
        return status_of(self.stub.ModelInfer, req, timeout=timeout)

    def assert_serving(self):
        resp = self.stub.ModelInfer(infer_request(DEMO, {"image": self.image}), timeout=30)
        np.testing.assert_allclose(response_outputs(resp)["probabilities"], self.probs,
                                   rtol=1e-4, atol=1e-5)

    def assert_status(self, req, code, *mentions):
        got, details = self.infer(req)
        self.assertEqual(got, code, "details: %r" % (details,))
        for m in mentions:
            self.assertIn(m, details, "the message should name %r" % m)
        self.assert_serving()
        return details

    def stats(self, name):
        r = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=name), timeout=10)
        return [s for s in r.model_stats if s.name == name][0]


class BadInput(Common):
    """Unknown and unavailable models, and malformed requests."""

    braidd_args = ("--allow-uploads",)
    wait_for_ready = False        # 'broken' fails to load: readiness is not the point here
    wait_states = ((DEMO, "READY"), ("broken", "UNAVAILABLE"))

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "broken", b"this is not an ONNX model\n")

    # ---- NOT_FOUND ---------------------------------------------------------------------

    def test_unknown_model_not_found(self):
        self.assert_status(infer_request("no_such_model", {"image": self.image}),
                           grpc.StatusCode.NOT_FOUND, "no_such_model")
        code, _ = status_of(self.stub.ModelMetadata, pb.ModelMetadataRequest(name="nope"),
                            timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, _ = status_of(self.stub.ModelConfig, pb.ModelConfigRequest(name="nope"), timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_unknown_version_not_found(self):
        self.assert_status(infer_request(DEMO, {"image": self.image}, version="99"),
                           grpc.StatusCode.NOT_FOUND, "99")
        code, _ = status_of(self.stub.ModelMetadata,
                            pb.ModelMetadataRequest(name=DEMO, version="99"), timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    # ---- UNAVAILABLE -------------------------------------------------------------------

    def test_model_whose_load_failed_unavailable(self):
        self.assert_status(infer_request("broken", {"image": self.image}),
                           grpc.StatusCode.UNAVAILABLE, "broken")
        self.assertFalse(self.stub.ModelReady(pb.ModelReadyRequest(name="broken"),
                                              timeout=10).ready)
        idx = {m.name: m for m in self.stub.RepositoryIndex(pb.RepositoryIndexRequest(),
                                                            timeout=10).models}
        self.assertEqual(idx["broken"].state, "UNAVAILABLE")
        self.assertTrue(idx["broken"].reason, "RepositoryIndex should say why it failed")
        doc = json.loads(self.d.http_get("/v2/status")[1])
        entry = [m for m in doc["models"] if m["name"] == "broken"][0]
        self.assertEqual(entry["state"], "UNAVAILABLE")
        self.assertEqual(entry["reason"], idx["broken"].reason)

    def test_model_loading_unavailable(self):
        # A model whose load takes a while (its warm-up run alone is ~100+ ms): while it
        # loads, inference answers UNAVAILABLE and RepositoryIndex says LOADING.
        data = e2e_models.slow_matmul(rows=512, depth=96)
        req = pb.RepositoryModelLoadRequest(model_name="loading")
        req.parameters["file:1/model.onnx"].bytes_param = data
        x = np.zeros((512, 1024), np.float32)
        load = self.stub.RepositoryModelLoad.future(req, timeout=120)
        codes, states = [], set()
        deadline = time.monotonic() + 120
        while not load.done() and time.monotonic() < deadline:
            code, _ = self.infer(infer_request("loading", {"x": x}), timeout=60)
            codes.append(code)
            for m in self.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10).models:
                if m.name == "loading":
                    states.add(m.state)
        load.result()
        seen = set(codes)
        self.assertIn(grpc.StatusCode.UNAVAILABLE, seen, "while loading: %s" % codes[:20])
        # NOT_FOUND only before the load request reached the server; OK only at the very end.
        self.assertLessEqual(seen, {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.NOT_FOUND,
                                    grpc.StatusCode.OK}, codes)
        first_unavailable = codes.index(grpc.StatusCode.UNAVAILABLE)
        self.assertNotIn(grpc.StatusCode.NOT_FOUND, codes[first_unavailable:])
        self.assertIn("LOADING", states)
        code, _ = self.infer(infer_request("loading", {"x": x}), timeout=60)
        self.assertEqual(code, grpc.StatusCode.OK)
        self.assert_serving()

    # ---- INVALID_ARGUMENT --------------------------------------------------------------

    def test_wrong_input_name(self):
        self.assert_status(infer_request(DEMO, {"pixels": self.image}), INVALID, "pixels")

    def test_wrong_dtype(self):
        self.assert_status(infer_request(DEMO, {"image": self.image.astype(np.float64)}),
                           INVALID, "image", "FP32")
        self.assert_status(infer_request(DEMO, {"image": self.image.astype(np.int64)}, raw=False),
                           INVALID, "image")

    def test_wrong_shape(self):
        self.assert_status(infer_request(DEMO, {"image": self.image[:, :, :16]}), INVALID, "image")
        self.assert_status(infer_request(DEMO, {"image": self.image[0]}), INVALID, "image")
        self.assert_status(infer_request(DEMO, {"image": self.image.reshape(1, 3, 32, 32, 1)}),
                           INVALID, "image")

    def test_negative_and_overflowing_dims(self):
        req = infer_request(DEMO, {"image": self.image})
        del req.inputs[0].shape[:]
        req.inputs[0].shape.extend([-1, 3, 32, 32])
        self.assert_status(req, INVALID, "image")
        req = infer_request(DEMO, {"image": self.image})
        del req.inputs[0].shape[:]
        req.inputs[0].shape.extend([1 << 40, 3, 1 << 40, 1 << 40])
        self.assert_status(req, INVALID, "image")

    def test_wrong_byte_count(self):
        req = infer_request(DEMO, {"image": self.image})
        req.raw_input_contents[0] = req.raw_input_contents[0][:-4]
        self.assert_status(req, INVALID, "image")
        req = infer_request(DEMO, {"image": self.image})
        req.raw_input_contents[0] += b"\0\0\0\0"
        self.assert_status(req, INVALID, "image")

    def test_wrong_typed_element_count(self):
        req = infer_request(DEMO, {"image": self.image}, raw=False)
        del req.inputs[0].contents.fp32_contents[-1]
        self.assert_status(req, INVALID, "image")

    def test_typed_contents_in_wrong_field(self):
        req = infer_request(DEMO, {"image": self.image}, raw=False)
        n = self.image.size
        req.inputs[0].contents.ClearField("fp32_contents")
        req.inputs[0].contents.int64_contents.extend([1] * n)
        self.assert_status(req, INVALID, "image")

    def test_missing_input(self):
        self.assert_status(pb.ModelInferRequest(model_name=DEMO), INVALID, "image")
        req = infer_request(DEMO, {"image": self.image})
        req.inputs[0].ClearField("datatype")
        self.assert_status(req, INVALID, "image")

    def test_input_without_data(self):
        req = infer_request(DEMO, {"image": self.image})
        req.ClearField("raw_input_contents")
        self.assert_status(req, INVALID, "image")

    def test_duplicate_input(self):
        req = infer_request(DEMO, {"image": self.image})
        req.inputs.add().CopyFrom(req.inputs[0])
        req.raw_input_contents.append(req.raw_input_contents[0])
        self.assert_status(req, INVALID, "image")

    def test_raw_contents_count_mismatch(self):
        req = infer_request(DEMO, {"image": self.image})
        req.raw_input_contents.append(b"\0" * 16)
        self.assert_status(req, INVALID)

    def test_raw_and_typed_contents_together(self):
        req = infer_request(DEMO, {"image": self.image})
        req.inputs[0].contents.fp32_contents.extend(self.image.ravel().tolist())
        self.assert_status(req, INVALID, "image")

    def test_unknown_datatype_string(self):
        req = infer_request(DEMO, {"image": self.image})
        req.inputs[0].datatype = "FLOAT32"
        self.assert_status(req, INVALID, "image")

    def test_unknown_requested_output(self):
        self.assert_status(infer_request(DEMO, {"image": self.image}, outputs=["logits"]),
                           INVALID, "logits")

    def test_malformed_message(self):
        call = self.d.channel.unary_unary("/inference.GRPCInferenceService/ModelInfer")
        for garbage in (b"\xff\xff\xff\xff", b"\x0a\x80\x80\x80\x80\x10",   # bad tag; huge length
                        b"\x2a\x05\x0a\x03ab",                               # truncated input
                        b"\x3a\xff\xff\xff\xff\x0f"):                       # raw length > message
            code, details = status_of(call, garbage, timeout=10)
            self.assertEqual(code, INVALID, "garbage %r: %r" % (garbage, details))
        self.assert_serving()

    def test_malformed_repository_request(self):
        call = self.d.channel.unary_unary("/inference.GRPCInferenceService/RepositoryModelLoad")
        code, details = status_of(call, b"\x1a\xff\xff\xff\x7f", timeout=10)
        self.assertEqual(code, INVALID, details)
        self.assert_serving()

    # ---- UNIMPLEMENTED -----------------------------------------------------------------

    def test_unknown_rpc_unimplemented(self):
        for method in ("/inference.GRPCInferenceService/NoSuchRpc", "/no.such.Service/Method",
                       "/grpc.health.v1.Health/NoSuchRpc"):
            call = self.d.channel.unary_unary(method)
            code, details = status_of(call, b"", timeout=10)
            self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED, "%s: %r" % (method, details))
            # the message names the method asked for, and only that one
            self.assertIn(method, details)
            self.assertNotIn("ModelStreamInfer", details)
        self.assert_serving()


class SingleWorker(Common):
    """One worker, a model that takes tens of milliseconds: deadlines and cancellation."""

    braidd_args = ("--workers", "1", "--queue-limit", "8")

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "slow", e2e_models.slow_matmul(depth=48))

    def slow_request(self):
        return infer_request("slow", {"x": np.ones((256, 1024), np.float32)})

    def assert_dropped(self, drop):
        """Run A (slow), then DROP(future-or-call) on B queued behind A; then C. A and C
        succeed and B never ran: execution_count grows by exactly 2."""
        before = self.stats("slow").execution_count
        a = self.stub.ModelInfer.future(self.slow_request(), timeout=60)
        time.sleep(0.02)
        code_b = drop()
        self.assertEqual(a.result().model_name, "slow")
        c = self.stub.ModelInfer(self.slow_request(), timeout=60)
        self.assertEqual(c.model_name, "slow")
        self.assertEqual(self.stats("slow").execution_count - before, 2,
                         "the dropped request must not run")
        self.assert_serving()
        return code_b

    def test_deadline_exceeded(self):
        def expire():
            return status_of(self.stub.ModelInfer, self.slow_request(), timeout=0.03)
        code, details = self.assert_dropped(expire)
        self.assertEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED, details)

    def test_deadline_already_past_on_arrival(self):
        code, _ = status_of(self.stub.ModelInfer, self.slow_request(), timeout=0.0005)
        self.assertEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED)
        self.assert_serving()

    def test_cancelled(self):
        def cancel():
            b = self.stub.ModelInfer.future(self.slow_request(), timeout=60)
            time.sleep(0.01)
            self.assertTrue(b.cancel(), "the call had already finished")
            return b.code()
        code = self.assert_dropped(cancel)
        self.assertEqual(code, grpc.StatusCode.CANCELLED)

    def test_cancel_while_running(self):
        b = self.stub.ModelInfer.future(self.slow_request(), timeout=60)
        time.sleep(0.01)
        self.assertTrue(b.cancel(), "the call had already finished")
        self.assertEqual(b.code(), grpc.StatusCode.CANCELLED)
        self.assert_serving()


    def test_client_disconnects_mid_request(self):
        # A client that vanishes with requests queued and running: its work is dropped and
        # the server serves the next client.
        channel = self.d.new_channel()
        stub = self.d.stub(channel)
        futures = [stub.ModelInfer.future(self.slow_request(), timeout=60) for _ in range(4)]
        time.sleep(0.03)
        channel.close()
        for f in futures:
            self.assertTrue(f.done())
        self.assert_serving()
        c = self.stub.ModelInfer(self.slow_request(), timeout=60)
        self.assertEqual(c.model_name, "slow")


class QueueFull(Common):
    """--queue-limit 1 --workers 1: one running, one queued, the rest RESOURCE_EXHAUSTED."""

    braidd_args = ("--workers", "1", "--queue-limit", "1")

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "slow", e2e_models.slow_matmul(depth=48))

    def test_queue_full_resource_exhausted(self):
        req = infer_request("slow", {"x": np.ones((256, 1024), np.float32)})
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(lambda _: status_of(self.stub.ModelInfer, req, timeout=60),
                                  range(8)))
        got = [c for c, _ in codes]
        self.assertIn(grpc.StatusCode.RESOURCE_EXHAUSTED, got)
        self.assertIn(grpc.StatusCode.OK, got)
        self.assertLessEqual(set(got), {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED},
                             codes)
        # The queue drains: the model serves again.
        code, _ = status_of(self.stub.ModelInfer, req, timeout=60)
        self.assertEqual(code, grpc.StatusCode.OK)
        self.assert_serving()


if __name__ == "__main__":
    run_tests()
