#!/usr/bin/python3
"""The repository extension over RPC: RepositoryIndex, RepositoryModelLoad (by name, with
uploaded file:<version>/<name> bytes and a config JSON, hot reload, failed reload), Unload,
and uploads that try to escape the model's directory."""

import json
import os

import grpc
import numpy as np

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests, status_of, load_request
from tensors import infer_request, response_outputs

DEMO = "tinycnn"


class Repository(BraiddTestCase):

    braidd_args = ("--allow-uploads",)

    def setUp(self):
        self.image = e2e_models.demo_fixture("image")
        self.probs = e2e_models.demo_fixture("probabilities")

    def index(self):
        r = self.stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
        return {m.name: m for m in r.models}

    def not_ready(self, name):
        """ModelReady says false, or NOT_FOUND for a model the server no longer knows."""
        code, r = status_of(self.stub.ModelReady, pb.ModelReadyRequest(name=name), timeout=10)
        if code == grpc.StatusCode.OK:
            return not r.ready
        return code == grpc.StatusCode.NOT_FOUND

    def load(self, *args, **kwargs):
        return status_of(self.stub.RepositoryModelLoad, load_request(*args, **kwargs), timeout=120)

    def demo_infer(self, name=DEMO):
        resp = self.stub.ModelInfer(infer_request(name, {"image": self.image}), timeout=30)
        return resp.model_version, response_outputs(resp)["probabilities"]

    def test_load_uploaded_model_with_config(self):
        cfg = {"name": "uploaded", "platform": "onnx", "queue_limit": 16, "max_batch_size": 0}
        code, details = self.load("uploaded", {"1/model.onnx": e2e_models.two_outputs()}, cfg)
        self.assertEqual(code, grpc.StatusCode.OK, details)
        self.assertTrue(os.path.isfile(os.path.join(self.d.repo, "uploaded", "1", "model.onnx")))
        with open(os.path.join(self.d.repo, "uploaded", "config.json")) as f:
            self.assertEqual(json.load(f), cfg)
        self.assertEqual(self.index()["uploaded"].state, "READY")
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="uploaded"), timeout=10).ready)
        x = np.array([[1, 2, 3, 4]], np.float32)
        out = response_outputs(self.stub.ModelInfer(infer_request("uploaded", {"x": x}), timeout=30))
        np.testing.assert_array_equal(out["times_two"], x * 2)

    def test_load_with_bad_config_rejected(self):
        code, details = self.load("badconfig", {"1/model.onnx": e2e_models.two_outputs()},
                                  {"no_such_key": 1})
        self.assertNotEqual(code, grpc.StatusCode.OK)
        self.assertIn("no_such_key", details)
        self.assertTrue(self.not_ready("badconfig"))

    def test_unload_then_load_by_name(self):
        code, details = status_of(self.stub.RepositoryModelLoad,
                                  load_request("byname_a", {"1/model.onnx": e2e_models.two_outputs()}),
                                  timeout=120)
        self.assertEqual(code, grpc.StatusCode.OK, details)
        self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="byname_a"),
                                        timeout=60)
        x = np.ones((1, 4), np.float32)
        code, _ = status_of(self.stub.ModelInfer, infer_request("byname_a", {"x": x}), timeout=30)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        self.assertTrue(self.not_ready("byname_a"))
        entry = self.index().get("byname_a")
        self.assertIsNotNone(entry, "an unloaded model is still in the repository's index")
        self.assertEqual(entry.state, "UNAVAILABLE")
        # Load by name only: braidd reads <repo>/byname_a/1/model.onnx again.
        code, details = self.load("byname_a")
        self.assertEqual(code, grpc.StatusCode.OK, details)
        out = response_outputs(self.stub.ModelInfer(infer_request("byname_a", {"x": x}), timeout=30))
        np.testing.assert_array_equal(out["plus_one"], x + 1)

    def test_cheap_reads_follow_unload_and_reload_at_once(self):
        # ModelReady, ModelMetadata and health Check(model) are answered on braidd's cq thread
        # from its served-version table once a model is known there: an unload or a new
        # version must be seen by the very next call, never one late.
        import health_pb2
        health = self.d.health_stub()
        name, x = "fastread", np.ones((1, 4), np.float32)

        def ready(version=""):
            return self.stub.ModelReady(pb.ModelReadyRequest(name=name, version=version),
                                        timeout=10).ready

        def check():
            return status_of(health.Check, health_pb2.HealthCheckRequest(service=name), timeout=10)

        code, details = self.load(name, {"1/model.onnx": e2e_models.two_outputs()})
        self.assertEqual(code, grpc.StatusCode.OK, details)
        for cycle in range(12):
            for _ in range(3):              # the first call fills the table, the rest use it
                self.assertTrue(ready(), cycle)
                self.assertEqual(check()[1].status, health_pb2.HealthCheckResponse.SERVING)
                md = self.stub.ModelMetadata(pb.ModelMetadataRequest(name=name), timeout=10)
                self.assertEqual(list(md.versions), ["1"])
                out = response_outputs(self.stub.ModelInfer(infer_request(name, {"x": x}), timeout=30))
                np.testing.assert_array_equal(out["plus_one"], x + 1)
            self.stub.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name=name),
                                            timeout=60)
            self.assertFalse(ready(), "ModelReady true right after the unload (cycle %d)" % cycle)
            code, _ = status_of(self.stub.ModelMetadata, pb.ModelMetadataRequest(name=name), timeout=10)
            self.assertEqual(code, grpc.StatusCode.NOT_FOUND, cycle)
            code, r = check()
            self.assertTrue(code == grpc.StatusCode.NOT_FOUND or
                            r.status == health_pb2.HealthCheckResponse.NOT_SERVING, (cycle, code))
            code, details = self.load(name)
            self.assertEqual(code, grpc.StatusCode.OK, details)
            self.assertTrue(ready(), "ModelReady false right after the load (cycle %d)" % cycle)
        # A new version: the table's old entry must not answer for it.
        code, details = self.load(name, {"2/model.onnx": e2e_models.two_outputs()})
        self.assertEqual(code, grpc.StatusCode.OK, details)
        self.assertEqual(list(self.stub.ModelMetadata(pb.ModelMetadataRequest(name=name),
                                                      timeout=10).versions), ["2"])
        self.assertTrue(ready("2"))
        self.assertFalse(ready("1"))
        self.assertTrue(ready("2"))

    def test_hot_reload(self):
        # 1. A new version directory written next to the old one, then load by name.
        e2e_models.write_repository_model(self.d.repo, DEMO, e2e_models.demo_variant(1.0), "2")
        code, details = self.load(DEMO)
        self.assertEqual(code, grpc.StatusCode.OK, details)
        version, out = self.demo_infer()
        self.assertEqual(version, "2")
        np.testing.assert_allclose(out, self.probs + 1.0, rtol=1e-4, atol=1e-5)
        # 2. Uploaded bytes for version 3.
        code, details = self.load(DEMO, {"3/model.onnx": e2e_models.demo_variant(0.5)})
        self.assertEqual(code, grpc.StatusCode.OK, details)
        version, out = self.demo_infer()
        self.assertEqual(version, "3")
        np.testing.assert_allclose(out, self.probs + 0.5, rtol=1e-4, atol=1e-5)
        md = self.stub.ModelMetadata(pb.ModelMetadataRequest(name=DEMO), timeout=10)
        self.assertIn("3", md.versions)
        self.assertEqual(self.index()[DEMO].version, "3")
        # The retired version no longer answers by number.
        code, _ = status_of(self.stub.ModelInfer, infer_request(DEMO, {"image": self.image},
                                                                version="1"), timeout=30)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_failed_reload_keeps_previous_version(self):
        code, details = self.load("flaky", {"1/model.onnx": e2e_models.demo_variant(0.0)})
        self.assertEqual(code, grpc.StatusCode.OK, details)
        code, details = self.load("flaky", {"2/model.onnx": b"\x08\x07garbage, not a model"})
        self.assertNotEqual(code, grpc.StatusCode.OK)
        self.assertTrue(details)
        version, out = self.demo_infer("flaky")
        self.assertEqual(version, "1")
        np.testing.assert_allclose(out, self.probs, rtol=1e-4, atol=1e-5)
        entry = self.index()["flaky"]
        self.assertEqual(entry.state, "READY")
        self.assertEqual(entry.version, "1")
        self.assertTrue(entry.reason, "the failed reload's reason is reported")
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name="flaky"), timeout=10).ready)

    def test_concurrent_loads_of_one_model(self):
        # Four reloads of one model at once: each ends (OK, or refused while another runs),
        # none crashes the server, and the model ends READY on one of the new versions.
        import concurrent.futures
        reqs = [load_request("racy", {"%d/model.onnx" % v: e2e_models.demo_variant(float(v))})
                for v in range(1, 5)]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            codes = list(pool.map(lambda r: status_of(self.stub.RepositoryModelLoad, r, timeout=120),
                                  reqs))
        self.assertIn(grpc.StatusCode.OK, [c for c, _ in codes], codes)
        for c, details in codes:
            self.assertIn(c, (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE,
                              grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED),
                          details)
        self.d.wait_state("racy", "READY")
        version, out = self.demo_infer("racy")
        np.testing.assert_allclose(out, self.probs + float(version), rtol=1e-4, atol=1e-5)

    def test_sighup_rescans_repository(self):
        import signal
        e2e_models.write_repository_model(self.d.repo, "arrived", e2e_models.two_outputs())
        self.d.send_signal(signal.SIGHUP)
        self.d.wait_state("arrived", "READY")
        x = np.ones((1, 4), np.float32)
        out = response_outputs(self.stub.ModelInfer(infer_request("arrived", {"x": x}), timeout=30))
        np.testing.assert_array_equal(out["times_two"], x * 2)

    def test_unload_unknown_model_not_found(self):
        code, _ = status_of(self.stub.RepositoryModelUnload,
                            pb.RepositoryModelUnloadRequest(model_name="never_heard_of"), timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_load_unknown_model_fails(self):
        code, _ = self.load("not_in_repository")
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_upload_path_escapes_rejected(self):
        outside = os.path.join(self.d.tmp, "outside")
        os.makedirs(outside)
        os.makedirs(os.path.join(self.d.repo, "linked"))
        os.symlink(outside, os.path.join(self.d.repo, "linked", "1"))
        data = e2e_models.two_outputs()
        cases = [("escape", "../x"), ("escape", "../../x"), ("escape", "1/../../x"),
                 ("escape", "1/../../../outside/model.onnx"), ("escape", "/tmp/braid-e2e-x"),
                 ("escape", "1/./../../x"), ("escape", ""), ("escape", "1/"),
                 ("escape", "1//model.onnx"), ("linked", "1/model.onnx"),
                 ("../escape", "1/model.onnx"), ("/abs", "1/model.onnx")]
        for name, path in cases:
            code, details = self.load(name, {path: data})
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT,
                             "model %r file %r: %r" % (name, path, details))
        self.assertEqual(os.listdir(outside), [])
        self.assertFalse(os.path.exists("/tmp/braid-e2e-x"))
        for leaked in ("x", "model.onnx"):
            self.assertFalse(os.path.exists(os.path.join(self.d.tmp, leaked)))
            self.assertFalse(os.path.exists(os.path.join(self.d.repo, leaked)))
        self.assertFalse(os.path.exists(os.path.join(self.d.tmp, "abs")))
        self.demo_infer()


class UploadsDisabled(BraiddTestCase):
    """Without --allow-uploads, RepositoryModelLoad writes nothing."""

    def test_upload_refused(self):
        code, details = status_of(self.stub.RepositoryModelLoad,
                                  load_request("up", {"1/model.onnx": e2e_models.two_outputs()}),
                                  timeout=60)
        self.assertIn(code, (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.FAILED_PRECONDITION,
                             grpc.StatusCode.INVALID_ARGUMENT), details)
        self.assertFalse(os.path.exists(os.path.join(self.d.repo, "up")))

    def test_load_by_name_still_works(self):
        code, details = status_of(self.stub.RepositoryModelLoad, load_request(DEMO), timeout=120)
        self.assertEqual(code, grpc.StatusCode.OK, details)
        self.assertTrue(self.stub.ModelReady(pb.ModelReadyRequest(name=DEMO), timeout=10).ready)


if __name__ == "__main__":
    run_tests()
