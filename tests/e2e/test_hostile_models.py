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
          (a new plan reads the weights: SIGBUS when they were mapped).
"""

import os
import struct

import grpc
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests, status_of, load_request
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


class HostileModels(BraiddTestCase):

    braidd_args = ("--allow-uploads",)

    def load(self, name, files=None):
        return status_of(self.stub.RepositoryModelLoad, load_request(name, files or {}), timeout=120)

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


if __name__ == "__main__":
    run_tests()
