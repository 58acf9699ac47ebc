#!/usr/bin/python3
"""Triton's model_warmup (config.json, daemon/registry/warmup.h) against a live braidd.

A version with warm-up samples runs them at load, before it turns ready: the log names each
sample and its runs, the plan cache holds the warmed shapes (a real request of a warmed batch
size is a cache hit, no compile), and a sample from a file in <model>/warmup/ runs on those
bytes. Every malformed or hostile sample (unknown keys, wrong type or rank, a missing input,
a file of the wrong size, a link out of the folder, '..') fails that load naming the sample,
and braidd keeps serving the other models."""

import json
import os
import shutil
import time

import grpc
import numpy as np

import e2e_models
from braidd_fixture import BraiddTestCase, load_request, pb, run_tests
from tensors import infer_request, response_outputs

DEMO = "tinycnn"


def sample(name, data, batch=1, count=1, dtype="TYPE_FP32", dims=(1, 3, 32, 32), input_name="image"):
    """A warm-up sample of the demo model; DIMS without the batch dim (all of them when the
    model does not batch, as Triton counts them)."""
    return {"name": name, "batch_size": batch, "count": count,
            "inputs": {input_name: dict({"data_type": dtype, "dims": list(dims)}, **data)}}


class Warmup(BraiddTestCase):

    braidd_args = ("--allow-uploads",)

    @classmethod
    def prepare_repository(cls, repo):
        cls.repo = repo
        demo = os.path.join(repo, DEMO)
        # the same model as 'warm', batching up to 8, with three samples
        warm = os.path.join(repo, "warm")
        shutil.copytree(demo, warm)
        os.makedirs(os.path.join(warm, "warmup"))
        e2e_models.demo_fixture("image").astype("<f4").tofile(os.path.join(warm, "warmup", "image.raw"))
        with open(os.path.join(warm, "config.json"), "w") as f:
            json.dump({"max_batch_size": 8, "model_warmup": [
                sample("batch8", {"random_data": True}, batch=8, count=3, dims=(3, 32, 32)),
                sample("batch3", {"zero_data": True}, batch=3, dims=(3, 32, 32)),
                sample("from_file", {"input_data_file": "image.raw"}, dims=(3, 32, 32)),
            ]}, f)

    def model_status(self, name):
        doc = json.loads(self.d.http_get("/v2/status")[1])
        return [m for m in doc["models"] if m["name"] == name][0]

    def load(self, name, config=None):
        return self.stub.RepositoryModelLoad(load_request(name, config=config), timeout=120)

    def test_samples_run_before_ready_and_warm_the_plan_cache(self):
        self.load("warm")
        log = self.d.log_text()
        self.assertIn("warm-up 'batch8' (batch 8): 3 run(s)", log)
        self.assertIn("warm-up 'batch3' (batch 3): 1 run(s)", log)
        self.assertIn("warm-up 'from_file' (batch 1): 1 run(s)", log)
        # every sample ran before the version served (its "loaded" line ends the load)
        done = log.index("model=warm version=1 loaded", log.rindex("model=warm reloading"))
        self.assertLess(log.rindex("warm-up 'from_file'"), done)
        cache = self.model_status("warm")["plan_cache"]
        compiles = cache["compiles"]
        self.assertGreaterEqual(cache["plans"], 3)          # batch 1, 3 and 8
        # a real request of a warmed batch size compiles nothing
        image = e2e_models.demo_fixture("image")
        batch = np.concatenate([image] * 8)
        out = response_outputs(self.stub.ModelInfer(infer_request("warm", {"image": batch}), timeout=60))
        for row in out["probabilities"]:
            np.testing.assert_allclose(row, e2e_models.demo_fixture("probabilities")[0], rtol=1e-4, atol=1e-6)
        self.assertEqual(self.model_status("warm")["plan_cache"]["compiles"], compiles)
        # a batch size no sample warmed compiles one plan
        response_outputs(self.stub.ModelInfer(infer_request("warm", {"image": np.concatenate([image] * 5)}), timeout=60))
        self.assertEqual(self.model_status("warm")["plan_cache"]["compiles"], compiles + 1)

    def bad(self, samples, want, config_extra=None, files=None):
        """A load of a copy of the demo model with SAMPLES fails naming WANT; braidd serves on."""
        name = "bad%d" % self.n_bad
        Warmup.n_bad += 1
        shutil.copytree(os.path.join(self.repo, DEMO), os.path.join(self.repo, name))
        for path, data in (files or {}).items():
            full = os.path.join(self.repo, name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if callable(data):
                data(full)
            else:
                with open(full, "wb") as f:
                    f.write(data)
        cfg = dict({"model_warmup": samples}, **(config_extra or {}))
        with open(os.path.join(self.repo, name, "config.json"), "w") as f:
            json.dump(cfg, f)
        with self.assertRaises(grpc.RpcError) as e:
            self.load(name)
        self.assertIn(want, e.exception.details())
        self.assertIn(e.exception.code(), (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL))
        ready = self.stub.ModelReady(pb.ModelReadyRequest(name=DEMO), timeout=10)
        self.assertTrue(ready.ready)
        return e.exception.details()

    n_bad = 0

    def test_hostile_samples_fail_the_load_clearly(self):
        z = {"zero_data": True}
        self.bad([sample("t", z, dtype="TYPE_INT64")], "data_type INT64, but the model takes FP32")
        self.bad([sample("t", z, dtype="TYPE_STRING")], "numeric Triton type")
        self.bad([sample("t", z, dtype="FP32")], "numeric Triton type")
        self.bad([sample("t", z, dims=(3, 32, 32))], "3 dims, but the model's input has rank 4")
        self.bad([sample("t", z, dims=(1, 3, 31, 32))], "dim 2 is 31")
        self.bad([sample("t", z, input_name="nope")], "no sample for the model's input 'image'")
        self.bad([sample("t", z, batch=2)], "does not batch (max_batch_size 0)")
        self.bad([sample("t", z, batch=9, dims=(3, 32, 32))], "exceeds max_batch_size 8",
                 {"max_batch_size": 8})
        self.bad([sample("t", z, count=1001)], "count")
        self.bad([sample("t", {"zero_data": True, "random_data": True})], "exactly one of")
        self.bad([dict(sample("t", z), extra=1)], "unknown key 'extra'")
        self.bad([sample("t", {"input_data_file": "../config.json"})], "no '/'")
        self.bad([sample("t", {"input_data_file": ".."})], "no '/'")
        self.bad([sample("t", {"input_data_file": "missing.raw"})], "cannot open")
        self.bad([sample("t", {"input_data_file": "short.raw"})], "holds 12 bytes; one sample",
                 files={"warmup/short.raw": b"\0" * 12})
        self.bad([sample("t", {"input_data_file": "link.raw"})], "outside the model's directory",
                 files={"warmup/link.raw": lambda p: os.symlink("/etc/passwd", p)})
        self.bad([sample("t", {"input_data_file": "x.raw"})], "outside the model's directory",
                 files={"../warm_outside/x.raw": b"\0" * 12288,    # beside the model's folder
                        "warmup": lambda p: os.symlink(
                            os.path.join(os.path.dirname(os.path.dirname(p)), "warm_outside"), p)})
        self.bad([sample("t", z, dims=(1 << 20, 1 << 20, 1, 1))], "MiB")
        self.bad([sample("s%d" % i, z) for i in range(33)], "at most 32 samples")

    def test_upload_with_warmup_config(self):
        """A config uploaded with RepositoryModelLoad warms up the same way (zero data)."""
        with open(e2e_models.demo_model_path(), "rb") as f:
            model = f.read()
        cfg = {"model_warmup": [sample("up", {"zero_data": True}, count=2)]}
        req = load_request("uploaded", files={"1/model.onnx": model}, config=cfg)
        try:
            self.stub.RepositoryModelLoad(req, timeout=120)
        except grpc.RpcError as e:
            if "--allow-uploads" in e.details():
                self.skipTest("uploads are off in this braidd")
            raise
        self.assertIn("warm-up 'up' (batch 1): 2 run(s)", self.d.log_text())


if __name__ == "__main__":
    run_tests()
