#!/usr/bin/python3
"""Hostile model files against a live braidd: uploads
(RepositoryModelLoad with file:1/... bytes) and repository files that once crashed braidd or
made it allocate gigabytes must get a clean error naming the problem, and braidd keeps
serving. The inputs are the importer fuzz corpora's regression files (tests/fuzz/corpus),
so the bytes sent here are the bytes the fuzz harnesses replay.

  TF.js: a string Const of shape [2^60] (SIGSEGV), a string weight of shape [2^60+1] (heap
          corruption), one value filling 1 GiB; a weight shard that is a symlink out of the
          model's directory (its bytes were served);
  GraphDef: a 140-byte Const filling 1 GiB, a string fill of 2^60 elements;
  ONNX: a node with 6,000 attributes (1.7 GB at import), a long chain listed backwards
          (quadratic sort);
  a model file overwritten in place under a loaded model, then a request with a new shape
          (a new plan reads the weights: SIGBUS when they were mapped);
  a FIFO, a device, a symlink out of the model's folder and a directory planted where braidd
          or TensorFlow opens a file (an ONNX model and its external data, a GraphDef, a TF.js
          model.json and shard, a SavedModel's variables/variables.index, fingerprint.pb and
          an asset, config.json, a label file, a warm-up data file): each load fails within
          5 s naming the file (a FIFO as variables.index once hung the load inside TensorFlow,
          and with it unload and SIGTERM), braidd keeps serving, and a braidd whose
          repository holds such a SavedModel exits promptly on SIGTERM.
"""

import json
import os
import shutil
import signal
import struct
import time

import grpc
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import e2e_models
from braidd_fixture import Braidd, BraiddTestCase, pb, run_tests, status_of, load_request
from tensors import infer_request, response_outputs

CORPUS = os.path.join(e2e_models.source_root(), "tests", "fuzz", "corpus")


def corpus(sub, name):
    with open(os.path.join(CORPUS, sub, name), "rb") as f:
        return f.read()


def tfjs_files(name):
    """A fuzz_tfjs input split as the harness splits it: model.json and its one shard."""
    data = corpus("tfjs", name)
    n = struct.unpack("<I", data[:4])[0] % (len(data) - 4 + 1)
    return {"1/model.json": data[4:4 + n], "1/w.bin": data[4 + n:]}


def onnx_bytes(graph):
    """GRAPH as a model (opset 13) without onnx.checker: hostile models need not pass it."""
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m.SerializeToString()


def matmul_model(w):
    """x[N,K] @ W: W (K x M float32) is read when a plan for a new N is compiled."""
    k, m = w.shape
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", m])
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
    return e2e_models._model(helper.make_graph([node], "mm", [x], [y], [numpy_helper.from_array(w, "w")]))


def external_data_model():
    """y = x + w, w (2 floats) kept in the external file w.bin."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    w = numpy_helper.from_array(np.array([1, 2], np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    e = w.external_data.add()
    e.key, e.value = "location", "w.bin"
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return onnx_bytes(helper.make_graph([node], "ext", [x], [y], [w]))


def plant(path, kind):
    """Put KIND where the file PATH should be: "fifo", "device" (a character device made with
    mknod: root only; else a link to /dev/zero), "link_out" (a symlink to a file outside the
    model's folder) or "dir". Returns the text the refusal must carry."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        return "is a FIFO (named pipe), not a regular file"
    if kind == "device":
        try:
            os.mknod(path, 0o600 | __import__("stat").S_IFCHR, os.makedev(1, 3))
            return "is a character device, not a regular file"
        except PermissionError:
            os.symlink("/dev/zero", path)
            return "outside the model's directory"
    if kind == "link_out":
        os.symlink("/etc/hostname", path)
        return "outside the model's directory"
    os.makedirs(path)
    return "is a directory, not a regular file"


class HostileModels(BraiddTestCase):

    braidd_args = ("--allow-uploads",)

    def load(self, name, files=None, timeout=120):
        return status_of(self.stub.RepositoryModelLoad, load_request(name, files or {}),
                         timeout=timeout)

    def assert_refused(self, name, files, needle):
        code, details = self.load(name, files)
        self.assertNotEqual(code, grpc.StatusCode.OK, "%s: loaded" % name)
        self.assertIn(needle, details, name)
        self.assert_serving()

    def assert_serving(self):
        """braidd still answers, and still computes: the demo model's reference output."""
        self.d.assert_running()
        image = e2e_models.demo_fixture("image")
        resp = self.stub.ModelInfer(infer_request("tinycnn", {"image": image}), timeout=30)
        np.testing.assert_allclose(response_outputs(resp)["probabilities"],
                                   e2e_models.demo_fixture("probabilities"), rtol=1e-4, atol=1e-5)

    def test_tfjs_string_const_of_2p60_elements(self):
        self.assert_refused("tfjs_str", tfjs_files("string_const_2p60.bin"), "more than 64 MiB")

    def test_tfjs_string_weight_of_2p60_plus_1_elements(self):
        self.assert_refused("tfjs_strw", tfjs_files("string_weight_2p60p1.bin"), "strings cannot fit")

    def test_tfjs_constant_fill_of_1gib(self):
        self.assert_refused("tfjs_fill", tfjs_files("fill_1gib.bin"), "more than 64 MiB")

    def test_tfjs_shard_listed_twice(self):
        self.assert_refused("tfjs_twice", tfjs_files("shard_twice.bin"), "listed twice")

    def test_graphdef_constant_fill_of_1gib(self):
        self.assert_refused("gd_fill", {"1/model.pb": corpus("graphdef", "fill_1gib.pb")},
                            "more than 64 MiB")
        self.assert_refused("gd_sfill", {"1/model.pb": corpus("graphdef", "string_fill.pb")},
                            "more than 64 MiB")

    def test_tfjs_shard_symlink_out_of_the_model_directory(self):
        outside = os.path.join(self.d.tmp, "secret.bin")
        with open(outside, "wb") as f:
            f.write(struct.pack("<2f", 42.0, 43.0))
        d = os.path.join(self.d.repo, "tfjs_link", "1")
        os.makedirs(d)
        files = tfjs_files("add.bin")           # y = x + w, w: 2 floats from w.bin
        with open(os.path.join(d, "model.json"), "wb") as f:
            f.write(files["1/model.json"])
        os.symlink(outside, os.path.join(d, "w.bin"))
        self.assert_refused("tfjs_link", None, "outside the model's directory")
        # the same model with the shard in place loads and computes x + w
        os.unlink(os.path.join(d, "w.bin"))
        with open(os.path.join(d, "w.bin"), "wb") as f:
            f.write(files["1/w.bin"])
        code, details = self.load("tfjs_link")
        self.assertEqual(code, grpc.StatusCode.OK, details)
        x = np.array([[10, 20]], np.float32)
        out = response_outputs(self.stub.ModelInfer(infer_request("tfjs_link", {"x": x}), timeout=30))
        np.testing.assert_array_equal(out["Identity" if "Identity" in out else next(iter(out))],
                                      x + np.array([1, 2], np.float32))

    def test_onnx_node_with_6000_attributes(self):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
        node = helper.make_node("Relu", ["x"], ["y"], name="relu",
                                **{"attr_%d" % i: i for i in range(6000)})
        data = onnx_bytes(helper.make_graph([node], "attrs", [x], [y]))
        code, details = self.load("attrs6000", {"1/model.onnx": data})
        if code == grpc.StatusCode.OK:
            x = np.array([[-1, 2, -3, 4]], np.float32)
            out = response_outputs(self.stub.ModelInfer(infer_request("attrs6000", {"x": x}), timeout=30))
            np.testing.assert_array_equal(out["y"], np.maximum(x, 0))
        self.assert_serving()

    def test_onnx_long_chain_listed_backwards(self):
        n = 2000
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
        nodes = [helper.make_node("Neg", ["x" if i == 0 else "v%d" % i],
                                  ["y" if i == n - 1 else "v%d" % (i + 1)], name="n%d" % i)
                 for i in range(n)]
        data = onnx_bytes(helper.make_graph(nodes[::-1], "chain", [x], [y]))
        code, details = self.load("chain", {"1/model.onnx": data})
        self.assertEqual(code, grpc.StatusCode.OK, details)
        x = np.array([[1, -2, 3, -4]], np.float32)
        out = response_outputs(self.stub.ModelInfer(infer_request("chain", {"x": x}), timeout=60))
        np.testing.assert_array_equal(out["y"], x)          # an even number of negations
        self.assert_serving()

    def test_model_file_overwritten_under_a_loaded_model(self):
        w_old = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) / 65536.0
        d = os.path.join(self.d.repo, "rewritten", "1")
        os.makedirs(d)
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(matmul_model(w_old))
        code, details = self.load("rewritten")
        self.assertEqual(code, grpc.StatusCode.OK, details)
        x1 = np.ones((1, 256), np.float32)
        out = response_outputs(self.stub.ModelInfer(infer_request("rewritten", {"x": x1}), timeout=30))
        np.testing.assert_allclose(out["y"], x1 @ w_old, rtol=1e-5)
        # In place: same inode, truncated, then a much smaller, different model.
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(matmul_model(np.full((4, 4), 7.0, np.float32)))
        # A new batch size: a new plan, compiled from the loaded model's weights.
        x3 = np.arange(3 * 256, dtype=np.float32).reshape(3, 256) / 256.0
        out = response_outputs(self.stub.ModelInfer(infer_request("rewritten", {"x": x3}), timeout=60))
        np.testing.assert_allclose(out["y"], x3 @ w_old, rtol=1e-4)
        self.assert_serving()

    def model_folder(self, name, files):
        """A fresh model folder NAME in the repository holding FILES {relative path: bytes}."""
        d = os.path.join(self.d.repo, name)
        shutil.rmtree(d, ignore_errors=True)
        for rel, data in files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        return d

    def test_special_files_where_a_model_file_should_be(self):
        """Every file braidd or TensorFlow opens for a model, replaced by a FIFO, a device, a
        symlink out of the model's folder and a directory: the load fails fast (< 5 s, not a
        hang) with the file's name and why; braidd keeps serving."""
        with open(e2e_models.demo_model_path(), "rb") as f:
            demo = f.read()
        tfjs = tfjs_files("add.bin")
        sm = {"1/model.savedmodel/saved_model.pb": corpus("savedmodel", "two_io.pb"),
              "1/model.savedmodel/variables/variables.index": b"\0" * 16,
              "1/model.savedmodel/variables/variables.data-00000-of-00001": b"\0" * 16,
              "1/model.savedmodel/fingerprint.pb": b"",
              "1/model.savedmodel/assets/vocab.txt": b"a\n"}
        sample = {"name": "w", "batch_size": 1, "count": 1, "inputs": {"image": {
            "data_type": "TYPE_FP32", "dims": [1, 3, 32, 32], "input_data_file": "x.raw"}}}
        cases = [  # (what, the folder's files, the file planted)
            ("onnx", {"1/model.onnx": demo}, "1/model.onnx"),
            ("onnx_ext", {"1/model.onnx": external_data_model(),
                          "1/w.bin": struct.pack("<2f", 1, 2)}, "1/w.bin"),
            ("graphdef", {"1/model.pb": corpus("graphdef", "fill_1gib.pb")}, "1/model.pb"),
            ("tfjs_json", {"1/model.json": tfjs["1/model.json"], "1/w.bin": tfjs["1/w.bin"]},
             "1/model.json"),
            ("tfjs_shard", {"1/model.json": tfjs["1/model.json"], "1/w.bin": tfjs["1/w.bin"]},
             "1/w.bin"),
            ("sm_index", sm, "1/model.savedmodel/variables/variables.index"),
            ("sm_data", sm, "1/model.savedmodel/variables/variables.data-00000-of-00001"),
            ("sm_fingerprint", sm, "1/model.savedmodel/fingerprint.pb"),
            ("sm_asset", sm, "1/model.savedmodel/assets/vocab.txt"),
            ("config", {"1/model.onnx": demo, "config.json": b"{}"}, "config.json"),
            ("labels", {"1/model.onnx": demo, "labels.txt": b"a\n",
                        "config.json": json.dumps({"labels": {"probabilities": "labels.txt"}}).encode()},
             "labels.txt"),
            ("warmup", {"1/model.onnx": demo, "warmup/x.raw": b"\0" * 12288,
                        "config.json": json.dumps({"model_warmup": [sample]}).encode()},
             "warmup/x.raw"),
        ]
        for what, files, rel in cases:
            for kind in ("fifo", "device", "link_out", "dir"):
                if kind == "dir" and (rel.startswith("1/model.") or "assets/" in rel):
                    continue    # a directory there is another model kind, or a legal asset dir
                name = "special_%s_%s" % (what, kind)
                d = self.model_folder(name, files)
                says = plant(os.path.join(d, rel), kind)
                t0 = time.monotonic()
                code, details = self.load(name, timeout=20)
                took = time.monotonic() - t0
                self.assertNotEqual(code, grpc.StatusCode.OK, "%s: loaded" % name)
                self.assertLess(took, 5.0, "%s: the refusal took %.1f s" % (name, took))
                self.assertIn(os.path.basename(rel), details, name)
                self.assertIn(says, details, name)
                shutil.rmtree(d)
        self.assert_serving()

    def test_savedmodel_fifo_then_unload_and_sigterm(self):
        """The audit's case in full: a SavedModel whose variables/variables.index is a FIFO,
        in the repository when braidd starts. Its load fails with the reason, the other models
        serve, unload answers, and SIGTERM ends braidd promptly (it once waited inside
        TensorFlow for a writer, and then for the hard stop)."""
        b = Braidd()
        d = os.path.join(b.repo, "sm_fifo", "1", "model.savedmodel")
        os.makedirs(os.path.join(d, "variables"))
        with open(os.path.join(d, "saved_model.pb"), "wb") as f:
            f.write(corpus("savedmodel", "two_io.pb"))
        os.mkfifo(os.path.join(d, "variables", "variables.index"))
        b.start()
        try:
            b.wait_state("sm_fifo", "UNAVAILABLE", timeout=20)
            b.wait_state("tinycnn", "READY", timeout=60)
            stub = b.stub()
            index = stub.RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10)
            reason = [m.reason for m in index.models if m.name == "sm_fifo"][0]
            self.assertIn("variables/variables.index", reason)
            self.assertIn("FIFO", reason)
            image = e2e_models.demo_fixture("image")
            stub.ModelInfer(infer_request("tinycnn", {"image": image}), timeout=30)
            code, details = status_of(stub.RepositoryModelUnload,
                                      pb.RepositoryModelUnloadRequest(model_name="sm_fifo"), timeout=10)
            self.assertNotEqual(code, grpc.StatusCode.DEADLINE_EXCEEDED, details)
            t0 = time.monotonic()
            self.assertEqual(b.stop(signal.SIGTERM, timeout=20), 0)
            self.assertLess(time.monotonic() - t0, 10.0)
        finally:
            b.kill()
            b.cleanup()


if __name__ == "__main__":
    run_tests()
