#!/usr/bin/python3
"""Every RPC of braidd's GRPCInferenceService and grpc.health.v1.Health, driven from Python
the way any Open Inference Protocol client would, against a real braidd."""

import os

import grpc
import numpy as np

import e2e_models
from braidd_fixture import BraiddTestCase, health_pb2, pb, run_tests, status_of
from tensors import bytes_elements, infer_request, response_outputs

DEMO = "tinycnn"


class Rpc(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "two_outputs", e2e_models.two_outputs())
        e2e_models.write_repository_model(repo, "big", e2e_models.big_add_one())
        # Triton's batching convention from config.json: a dynamic first dim is the batch.
        e2e_models.write_repository_model(repo, "batched", e2e_models.batch_add_one())
        e2e_models.write_model_config(repo, "batched", {"max_batch_size": 4,
                                                        "labels": {"y": "labels.txt"}})
        with open(os.path.join(repo, "batched", "labels.txt"), "w") as f:
            f.write("zero\none\ntwo\n")             # class 3 has no label: Triton omits it
        e2e_models.write_repository_model(repo, "tiny", e2e_models.tiny_add())
        e2e_models.write_repository_model(repo, "bad_labels", e2e_models.tiny_add())
        e2e_models.write_model_config(repo, "bad_labels", {"labels": {"nope": "labels.txt"}})
        # ... which a fixed first dim cannot be: this one must fail to load, saying why.
        e2e_models.write_repository_model(repo, "fixed_batched", e2e_models.batch_add_one(2))
        e2e_models.write_model_config(repo, "fixed_batched", {"max_batch_size": 2})

    def setUp(self):
        self.image = e2e_models.demo_fixture("image")
        self.probs = e2e_models.demo_fixture("probabilities")

    # ---- health --------------------------------------------------------------------------

    def test_server_live(self):
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live)

    def test_server_ready(self):
        self.assertTrue(self.stub.ServerReady(pb.ServerReadyRequest(), timeout=10).ready)

    def test_model_ready(self):
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name=DEMO), timeout=10).ready)
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name=DEMO, version="1"),
                                             timeout=10).ready)

    def test_model_ready_is_false_for_unknown(self):
        # Triton answers ready=false (status OK) for what it does not serve; tritonclient's
        # is_model_ready relies on it.
        for req in (pb.ModelReadyRequest(name="no_such_model"),
                    pb.ModelReadyRequest(name=DEMO, version="99")):
            self.assertFalse(self.stub.ModelReady(req, timeout=10).ready, req)

    def test_grpc_health_check(self):
        h = self.d.health_stub()
        for service in ("", "inference.GRPCInferenceService"):
            r = h.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING, service)

    def test_grpc_health_check_unknown_service(self):
        # grpc/grpc doc/health-checking.md: an unknown service fails with NOT_FOUND.
        code, _ = status_of(self.d.health_stub().Check,
                            health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    # ---- metadata and config -------------------------------------------------------------

    def test_server_metadata(self):
        r = self.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10)
        self.assertTrue(r.name)
        self.assertTrue(r.version)
        for ext in ("model_repository", "statistics", "binary_tensor_data", "classification"):
            self.assertIn(ext, r.extensions)

    def test_model_metadata(self):
        r = self.stub.ModelMetadata(pb.ModelMetadataRequest(name=DEMO), timeout=10)
        self.assertEqual(r.name, DEMO)
        self.assertIn("1", r.versions)
        self.assertEqual(r.platform, "onnx")
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in r.inputs],
                         [("image", "FP32", [-1, 3, 32, 32])])
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in r.outputs],
                         [("probabilities", "FP32", [-1, 10])])

    def test_model_metadata_two_outputs(self):
        r = self.stub.ModelMetadata(pb.ModelMetadataRequest(name="two_outputs", version="1"),
                                    timeout=10)
        self.assertEqual([t.name for t in r.outputs], ["plus_one", "times_two"])
        self.assertEqual([list(t.shape) for t in r.outputs], [[1, 4], [1, 4]])

    def test_model_config(self):
        c = self.stub.ModelConfig(pb.ModelConfigRequest(name=DEMO), timeout=10).config
        self.assertEqual(c.name, DEMO)
        # Triton's ModelConfig spells ONNX "onnxruntime_onnx"; ModelMetadata says "onnx".
        self.assertIn(c.platform, ("onnx", "onnxruntime_onnx"))
        self.assertEqual([(i.name, i.data_type) for i in c.input], [("image", pb.TYPE_FP32)])
        self.assertEqual([(o.name, o.data_type) for o in c.output],
                         [("probabilities", pb.TYPE_FP32)])
        # Triton's convention: with max_batch_size > 0 dims omit the batch dimension.
        if c.max_batch_size > 0:
            self.assertEqual(list(c.input[0].dims), [3, 32, 32])
        else:
            self.assertEqual(list(c.input[0].dims), [-1, 3, 32, 32])

    def test_model_config_max_batch_size(self):
        c = self.stub.ModelConfig(pb.ModelConfigRequest(name="batched"), timeout=10).config
        self.assertEqual(c.max_batch_size, 4)
        self.assertEqual(list(c.input[0].dims), [4])      # without the batch dim, as Triton
        self.assertEqual(list(c.output[0].dims), [4])
        meta = self.stub.ModelMetadata(pb.ModelMetadataRequest(name="batched"), timeout=10)
        self.assertEqual(list(meta.inputs[0].shape), [-1, 4])   # metadata: full shapes
        for batch in (1, 4):
            x = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4)
            r = self.stub.ModelInfer(infer_request("batched", {"x": x}), timeout=30)
            np.testing.assert_array_equal(response_outputs(r)["y"], x + 1)
        x = np.zeros((5, 4), np.float32)
        code, details = status_of(self.stub.ModelInfer, infer_request("batched", {"x": x}),
                                  timeout=30)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("max_batch_size of 4", details)

    def test_max_batch_size_needs_a_dynamic_batch_dim(self):
        self.assertFalse(self.stub.ModelReady(pb.ModelReadyRequest(name="fixed_batched"),
                                              timeout=10).ready)
        r = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
        m = {m.name: m for m in r.models}["fixed_batched"]
        self.assertNotEqual(m.state, "READY")
        self.assertIn("dynamic first (batch) dim", m.reason)

    # ---- Triton's classification extension ---------------------------------------------

    @staticmethod
    def classify(values, k, labels=()):
        """Triton's strings for one list of VALUES: highest first, ties in index order."""
        order = sorted(range(len(values)), key=lambda i: (-values[i], i))[:k]
        return [("%f:%d" % (values[i], i) + (":" + labels[i] if i < len(labels) else "")).encode()
                for i in order]

    def classify_request(self, model, x, k):
        req = infer_request(model, {"x": x})
        out = req.outputs.add(name="y")
        out.parameters["classification"].int64_param = k
        return req

    def test_classification_batched_with_labels(self):
        x = np.array([[0.5, -1, 2, 0.5], [3, 3, 1, 7]], np.float32)
        r = self.stub.ModelInfer(self.classify_request("batched", x, 3), timeout=30)
        self.assertEqual(r.outputs[0].datatype, "BYTES")
        self.assertEqual(list(r.outputs[0].shape), [2, 3])
        got = bytes_elements(r.raw_output_contents[0])
        want = [s for row in x + 1 for s in self.classify(list(row), 3, ["zero", "one", "two"])]
        self.assertEqual(got, want)

    def test_classification_whole_tensor_and_k_over_classes(self):
        x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)[:, ::-1].copy()
        c = np.arange(1, 17, dtype=np.float32)            # tiny_add's constant
        # tiny_add is loaded as "tiny": a model without max_batch_size classifies its whole
        # output as one list, shape [K'] with K' = min(K, elements).
        req = infer_request("tiny", {"x": x})
        req.outputs.add(name="y").parameters["classification"].int64_param = 100
        r = self.stub.ModelInfer(req, timeout=30)
        self.assertEqual(list(r.outputs[0].shape), [16])
        self.assertEqual(bytes_elements(r.raw_output_contents[0]),
                         self.classify(list((x + c).ravel()), 100))

    def test_classification_bad_parameters(self):
        x = np.zeros((1, 4), np.float32)
        for k in (0, -3):
            code, details = status_of(self.stub.ModelInfer, self.classify_request("batched", x, k),
                                      timeout=30)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("classification", details)
        req = infer_request("batched", {"x": x})
        req.outputs.add(name="y").parameters["shared_memory_region"].string_param = "r"
        code, details = status_of(self.stub.ModelInfer, req, timeout=30)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("shared_memory_region", details)

    def test_labels_for_an_unknown_output_fail_the_load(self):
        r = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
        m = {m.name: m for m in r.models}["bad_labels"]
        self.assertNotEqual(m.state, "READY")
        self.assertIn("no output 'nope'", m.reason)

    # ---- inference -----------------------------------------------------------------------

    def check_demo(self, resp):
        out = response_outputs(resp)
        self.assertEqual(list(out), ["probabilities"])
        self.assertEqual(resp.outputs[0].datatype, "FP32")
        self.assertEqual(list(resp.outputs[0].shape), [1, 10])
        np.testing.assert_allclose(out["probabilities"], self.probs, rtol=1e-4, atol=1e-5)

    def test_infer_raw(self):
        resp = self.stub.ModelInfer(infer_request(DEMO, {"image": self.image}, raw=True),
                                    timeout=30)
        self.assertEqual(resp.model_name, DEMO)
        self.assertEqual(resp.model_version, "1")
        self.assertEqual(len(resp.raw_output_contents), 1, "outputs travel as raw_output_contents")
        self.check_demo(resp)

    def test_infer_typed_contents(self):
        resp = self.stub.ModelInfer(infer_request(DEMO, {"image": self.image}, raw=False),
                                    timeout=30)
        self.check_demo(resp)

    def test_infer_batch_of_three(self):
        batch = np.concatenate([self.image, self.image * 0.5, self.image])
        out = response_outputs(self.stub.ModelInfer(infer_request(DEMO, {"image": batch}),
                                                    timeout=30))["probabilities"]
        self.assertEqual(out.shape, (3, 10))
        np.testing.assert_allclose(out[0], self.probs[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out[2], self.probs[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out.sum(axis=1), np.ones(3), rtol=1e-4)

    def test_infer_explicit_version(self):
        resp = self.stub.ModelInfer(infer_request(DEMO, {"image": self.image}, version="1"),
                                    timeout=30)
        self.assertEqual(resp.model_version, "1")
        self.check_demo(resp)

    def test_infer_id_echoed(self):
        for rid in ("req-42", "ünïcode-id-%s" % ("x" * 300)):
            resp = self.stub.ModelInfer(
                infer_request(DEMO, {"image": self.image}, request_id=rid), timeout=30)
            self.assertEqual(resp.id, rid)

    def test_infer_all_outputs_in_model_order(self):
        x = np.array([[1, 2, 3, 4]], np.float32)
        out = response_outputs(self.stub.ModelInfer(infer_request("two_outputs", {"x": x}),
                                                    timeout=30))
        self.assertEqual(list(out), ["plus_one", "times_two"])
        np.testing.assert_array_equal(out["plus_one"], x + 1)
        np.testing.assert_array_equal(out["times_two"], x * 2)

    def test_infer_requested_output_filtering(self):
        x = np.array([[1, -2, 3.5, 4]], np.float32)
        for wanted in (["times_two"], ["plus_one"], ["times_two", "plus_one"]):
            resp = self.stub.ModelInfer(infer_request("two_outputs", {"x": x}, outputs=wanted),
                                        timeout=30)
            out = response_outputs(resp)
            self.assertEqual(sorted(out), sorted(wanted))
            self.assertEqual(len(resp.raw_output_contents), len(wanted))
            if "plus_one" in out:
                np.testing.assert_array_equal(out["plus_one"], x + 1)
            if "times_two" in out:
                np.testing.assert_array_equal(out["times_two"], x * 2)

    def test_infer_typed_two_outputs(self):
        x = np.array([[0.25, 0.5, -1, 8]], np.float32)
        out = response_outputs(self.stub.ModelInfer(
            infer_request("two_outputs", {"x": x}, raw=False, outputs=["plus_one"]), timeout=30))
        np.testing.assert_array_equal(out["plus_one"], x + 1)

    def test_infer_large_message(self):
        # 16 MiB each way: past gRPC's 4 MiB default receive limit on both sides.
        x = np.random.default_rng(3).standard_normal((1, 4 * 1024 * 1024)).astype(np.float32)
        resp = self.stub.ModelInfer(infer_request("big", {"x": x}), timeout=120)
        np.testing.assert_array_equal(response_outputs(resp)["y"], x + 1)

    # ---- statistics --------------------------------------------------------------------

    def stats(self, name, version=""):
        r = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name=name, version=version),
                                      timeout=10)
        mine = [s for s in r.model_stats if s.name == name]
        self.assertEqual(len(mine), 1, "one entry for %s: %s" % (name, r))
        return mine[0]

    def test_model_statistics_counters_increase(self):
        before = self.stats(DEMO)
        self.assertEqual(before.version, "1")
        n = 5
        for _ in range(n):
            self.stub.ModelInfer(infer_request(DEMO, {"image": self.image}), timeout=30)
        after = self.stats(DEMO, "1")
        self.assertEqual(after.inference_count - before.inference_count, n)
        self.assertEqual(after.execution_count - before.execution_count, n)
        s0, s1 = before.inference_stats, after.inference_stats
        self.assertEqual(s1.success.count - s0.success.count, n)
        self.assertGreater(s1.success.ns, s0.success.ns)
        for field in ("queue", "compute_input", "compute_infer", "compute_output"):
            self.assertEqual(getattr(s1, field).count - getattr(s0, field).count, n, field)
        self.assertGreater(s1.compute_infer.ns, s0.compute_infer.ns)
        self.assertGreater(after.last_inference, 0)

    def test_model_statistics_failures_counted(self):
        before = self.stats(DEMO).inference_stats.fail.count
        bad = infer_request(DEMO, {"image": self.image[:, :2]})     # wrong shape
        with self.assertRaises(Exception):
            self.stub.ModelInfer(bad, timeout=30)
        self.assertEqual(self.stats(DEMO).inference_stats.fail.count - before, 1)

    def test_model_statistics_unknown_model(self):
        code, _ = status_of(self.stub.ModelStatistics, pb.ModelStatisticsRequest(name="nope"),
                            timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_model_statistics_all_models(self):
        r = self.stub.ModelStatistics(pb.ModelStatisticsRequest(), timeout=10)
        names = {s.name for s in r.model_stats}
        self.assertLessEqual({DEMO, "two_outputs"}, names)

    # ---- repository ------------------------------------------------------------------

    def test_repository_index(self):
        r = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
        by_name = {m.name: m for m in r.models}
        self.assertEqual(by_name[DEMO].state, "READY")
        self.assertEqual(by_name[DEMO].version, "1")
        self.assertEqual(by_name["two_outputs"].state, "READY")
        ready = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(ready=True), timeout=10)
        self.assertTrue(all(m.state == "READY" for m in ready.models))


if __name__ == "__main__":
    run_tests()
