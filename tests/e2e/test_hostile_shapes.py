#!/usr/bin/python3
"""Hostile shapes against a live braidd:

  - zero-size inputs (legal in ONNX) are answered with correctly shaped empty outputs, never
    handed to a oneDNN primitive (which died of SIGFPE on an empty batch), over the wire and
    offline with `braid run`;
  - a model's plan cache stays within --plan-cache-max-plans however many distinct shapes
    clients send, and braidd's memory with it;
  - what a compile frees is given back: braidd's resident memory after a load stays near
    the model's weights;
  - config.json "input_shapes" ranges are enforced before any plan is compiled;
  - a request for a cached shape is answered while another shape's compile is in progress
    (debug builds hold that compile with the BRAID_TEST_COMPILE_GATE hook)."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import grpc
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import e2e_models
from braidd_fixture import Braidd, BraiddTestCase, pb, run_tests, status_of
from tensors import infer_request, response_outputs

DEMO = "tinycnn"
INVALID = grpc.StatusCode.INVALID_ARGUMENT
W = np.arange(12, dtype=np.float32).reshape(4, 3)


def _model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="braid-e2e")
    m.ir_version = 7
    onnx.checker.check_model(m)
    return m.SerializeToString()


def one_op(op):
    """x[n,4] -> y[n,3] through one MatMul or Gemm with a constant weight."""
    return _model([helper.make_node(op, ["x", "W"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])],
                  [numpy_helper.from_array(W, "W")])


ROW = np.arange(4, dtype=np.float32).reshape(1, 4)


def concat_row():
    """x[n,4] -> y[n+1,4] = x with a constant row appended: non-empty output from an empty input."""
    return _model([helper.make_node("Concat", ["x", "row"], ["y"], axis=0)],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", 4])],
                  [numpy_helper.from_array(ROW, "row")])


def flatten_relu():
    """x[a,b,c] -> Relu(Flatten(x)): multiplies the caller's dims together."""
    return _model([helper.make_node("Flatten", ["x"], ["f"], axis=1), helper.make_node("Relu", ["f"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b", "c"])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "bc"])])


def add_two():
    """x[n] + y[m]: only equal (or broadcastable) n and m fit."""
    return _model([helper.make_node("Add", ["x", "y"], ["z"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
                   helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m"])],
                  [helper.make_tensor_value_info("z", TensorProto.FLOAT, ["k"])])


def dynamic_relu():
    """x[1,n] -> Relu: one node, one plan per distinct n."""
    return _model([helper.make_node("Relu", ["x"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "n"])])


def write_config(repo, name, cfg):
    with open(os.path.join(repo, name, "config.json"), "w") as f:
        json.dump(cfg, f)


def model_status(d, name):
    doc = json.loads(d.http_get("/v2/status")[1])
    return [m for m in doc["models"] if m["name"] == name][0]


def vm_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/%d/status" % pid)


def braid_cli():
    return os.environ.get("BRAID_CLI") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(os.environ.get("BRAIDD", "build/daemon/braidd")))),
        "cli", "braid")


class ZeroSize(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        for op in ("MatMul", "Gemm"):
            e2e_models.write_repository_model(repo, op.lower(), one_op(op))
        e2e_models.write_repository_model(repo, "concat_row", concat_row())
        e2e_models.write_repository_model(repo, "concat_row_dnnl", concat_row())
        with open(os.path.join(repo, "concat_row_dnnl", "config.json"), "w") as f:
            json.dump({"engine": "dnnl"}, f)
        e2e_models.write_repository_model(repo, "flatten", flatten_relu())
        e2e_models.write_repository_model(repo, "add_two", add_two())

    def infer(self, model, inputs, raw=True):
        return response_outputs(self.stub.ModelInfer(infer_request(model, inputs, raw=raw), timeout=60))

    def test_demo_empty_batch(self):
        image = e2e_models.demo_fixture("image")
        want = self.infer(DEMO, {"image": image})["probabilities"].shape[1:]
        for raw in (True, False):
            out = self.infer(DEMO, {"image": np.zeros((0, 3, 32, 32), np.float32)}, raw=raw)
            self.assertEqual(out["probabilities"].shape, (0,) + want, "raw=%s" % raw)
        # and the model still computes a real batch after the empty one
        probs = self.infer(DEMO, {"image": image})["probabilities"]
        np.testing.assert_allclose(probs, e2e_models.demo_fixture("probabilities"), rtol=1e-4, atol=1e-5)

    def test_matmul_and_gemm_empty_rows(self):
        x = np.zeros((0, 4), np.float32)
        for model in ("matmul", "gemm"):
            for raw in (True, False):
                y = self.infer(model, {"x": x}, raw=raw)["y"]
                self.assertEqual(y.shape, (x @ W).shape, "%s raw=%s" % (model, raw))
            x2 = np.arange(8, dtype=np.float32).reshape(2, 4)
            np.testing.assert_allclose(self.infer(model, {"x": x2})["y"], x2 @ W, rtol=1e-5)

    def test_empty_input_with_non_empty_output(self):
        # oneDNN alone cannot run a model on an empty tensor: INVALID_ARGUMENT naming both
        x = np.zeros((0, 4), np.float32)
        code, details = status_of(self.stub.ModelInfer, infer_request("concat_row_dnnl", {"x": x}), timeout=60)
        self.assertEqual(code, INVALID, details)
        self.assertIn("input 'x' [0,4] is empty", details)
        self.assertIn("output 'y' would be [1,4]", details)
        # with the fallback engine (when this machine has it) the answer is computed: the row
        code, resp = status_of(self.stub.ModelInfer, infer_request("concat_row", {"x": x}), timeout=60)
        if code == grpc.StatusCode.OK:
            np.testing.assert_array_equal(response_outputs(resp)["y"], ROW)
        else:
            self.assertEqual(code, INVALID, resp)
            self.assertIn("input 'x' [0,4] is empty", resp)
        x = np.ones((3, 4), np.float32)
        np.testing.assert_allclose(self.infer("concat_row_dnnl", {"x": x})["y"], np.concatenate([x, ROW]))

    def raw_request(self, model, shapes):
        req = pb.ModelInferRequest(model_name=model)
        for name, shape in shapes.items():
            req.inputs.add(name=name, datatype="FP32", shape=shape)
            req.raw_input_contents.append(b"\0" * (4 * int(np.prod(shape, dtype=object))))
        return status_of(self.stub.ModelInfer, req, timeout=60)

    def test_empty_tensor_with_huge_dims(self):
        # 0 bytes carry dims no non-empty tensor could have: refused before shape inference
        # multiplies them (it reported an int64 overflow as INTERNAL before)
        for shape in ([0, 1 << 40, 1 << 40], [1 << 62, 0, 1 << 62]):
            code, details = self.raw_request("flatten", {"x": shape})
            self.assertEqual(code, INVALID, details)
            self.assertIn("too large", details)
        # the request check counts a 0 dim as 1: no shape may describe more than 2^31-1
        # elements, empty or not (docs/protocol.md, "Limits on a request")
        code, details = self.raw_request("flatten", {"x": [0, 1 << 20, 1 << 20]})
        self.assertEqual(code, INVALID, details)
        code, resp = self.raw_request("flatten", {"x": [0, 1 << 15, 1 << 15]})
        self.assertEqual(code, grpc.StatusCode.OK, resp)
        self.assertEqual(list(resp.outputs[0].shape), [0, 1 << 30])

    def test_shapes_that_do_not_fit_the_model_are_invalid(self):
        code, details = self.raw_request("add_two", {"x": [3], "y": [4]})
        self.assertEqual(code, INVALID, details)
        self.assertIn("do not fit", details)
        code, resp = self.raw_request("add_two", {"x": [3], "y": [3]})
        self.assertEqual(code, grpc.StatusCode.OK, resp)

    def test_braid_run_offline(self):
        cli = braid_cli()
        if not os.path.exists(cli):
            self.skipTest("braid CLI not found at %s" % cli)
        with tempfile.TemporaryDirectory() as tmp:
            cases = [(e2e_models.demo_model_path(), np.zeros((0, 3, 32, 32), np.float32), "probabilities",
                      (0, 10))]
            for op in ("MatMul", "Gemm"):
                path = os.path.join(tmp, op + ".onnx")
                with open(path, "wb") as f:
                    f.write(one_op(op))
                cases.append((path, np.zeros((0, 4), np.float32), "y", (0, 3)))
            for i, (model, x, out, shape) in enumerate(cases):
                inp, outdir = os.path.join(tmp, "in%d.npy" % i), os.path.join(tmp, "out%d" % i)
                np.save(inp, x)
                r = subprocess.run([cli, "run", model, "-i", inp, "-o", outdir], capture_output=True,
                                   timeout=120)
                self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
                self.assertEqual(np.load(os.path.join(outdir, out + ".npy")).shape, shape)


def outer_product():
    """x[n,1] -> y[n,n] = x @ x^T: n floats in, n^2 floats out."""
    return _model([helper.make_node("Transpose", ["x"], ["xt"]), helper.make_node("MatMul", ["x", "xt"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 1])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "n"])])


class RunMemory(BraiddTestCase):
    """Legal shapes that would need more memory than braidd may use are refused before
    anything is compiled or allocated (the OOM killer would answer otherwise)."""

    braidd_args = ("--max-run-memory-bytes", str(64 << 20))

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "outer", outer_product())

    def test_outer_product_over_the_limit_is_refused(self):
        x = np.arange(1000, dtype=np.float32).reshape(1000, 1)      # 4 MB out: fine
        y = response_outputs(self.stub.ModelInfer(infer_request("outer", {"x": x}), timeout=60))["y"]
        np.testing.assert_allclose(y, x @ x.T, rtol=1e-6)
        for n in (100000, 1 << 22):                                  # 40 GB, 64 TB
            code, details = self.raw_request(n)
            self.assertEqual(code, INVALID, details)
            self.assertIn("max_run_memory_bytes", details)
        np.testing.assert_allclose(                                   # and it keeps serving
            response_outputs(self.stub.ModelInfer(infer_request("outer", {"x": x}), timeout=60))["y"],
            x @ x.T, rtol=1e-6)

    def test_default_limit_is_half_the_memory(self):
        # no flag: half of RAM (or of the cgroup's memory.max); 40 GB is over it on any
        # machine these tests run on, 4 MB is under
        d = Braidd()
        try:
            e2e_models.write_repository_model(d.repo, "outer", outer_product())
            d.start()
            d.wait_state("outer", "READY")
            stub = d.stub()
            code, details = status_of(stub.ModelInfer, self.request(100000), timeout=60)
            self.assertEqual(code, INVALID, details)
            self.assertIn("max_run_memory_bytes", details)
            code, _ = status_of(stub.ModelInfer, self.request(1000), timeout=60)
            self.assertEqual(code, grpc.StatusCode.OK)
            self.assertEqual(d.stop(), 0)
        finally:
            d.cleanup()

    @staticmethod
    def request(n):
        req = pb.ModelInferRequest(model_name="outer")
        req.inputs.add(name="x", datatype="FP32", shape=[n, 1])
        req.raw_input_contents.append(b"\0" * (4 * n))
        return req

    def raw_request(self, n):
        return status_of(self.stub.ModelInfer, self.request(n), timeout=60)


def conv_chain(channels=512, layers=6, size=7):
    """LAYERS 3x3 convolutions of CHANNELS in and out (9.4 MB of weights each at 512), with
    seeded weights: what oneDNN lays out at compile, through Winograd on AVX-512 machines."""
    rng = np.random.default_rng(20261126)
    nodes, inits, prev = [], [], "x"
    for i in range(layers):
        w = (rng.standard_normal((channels, channels, 3, 3)) * 0.01).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w%d" % i))
        out = "y" if i == layers - 1 else "h%d" % i
        nodes += [helper.make_node("Conv", [prev, "w%d" % i], ["c%d" % i], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c%d" % i], [out])]
        prev = out
    shape = [1, channels, size, size]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)


class HeapAfterLoad(BraiddTestCase):
    """What a compile frees goes back to the system: glibc keeps freed heap pages resident
    (its mmap threshold rises with the first large free), and a compile allocates and frees
    hundreds of MB. Loading 57 MB of convolution weights (97 MiB in oneDNN's Winograd layout)
    grew a debug braidd by 148 MiB before runtime/model.c trimmed the heap after each
    compile, by 102 MiB after: what the kernel holds, and little more."""

    def test_load_grows_memory_by_the_weights_held(self):
        with open("/proc/%d/maps" % self.d.proc.pid) as f:
            if "libasan" in f.read():
                self.skipTest("ASan's allocator keeps freed memory in its own quarantine")
        model = conv_chain()
        path = os.path.join(self.d.repo, "convs", "1", "model.onnx")
        e2e_models.write_repository_model(self.d.repo, "convs", model)
        # the weights the compiled kernel holds, as `braid inspect` reports them
        out = subprocess.run([braid_cli(), "inspect", path], capture_output=True, text=True,
                             timeout=120, check=True).stdout
        held_mib = sum(float(w) for w in re.findall(r"weights ([0-9.]+) MB in its layout", out)) * 1e6 / (1 << 20)
        self.assertGreater(held_mib, 50, out)
        rss0 = vm_rss_kib(self.d.proc.pid) / 1024.0
        code, details = status_of(self.stub.RepositoryModelLoad,
                                  pb.RepositoryModelLoadRequest(model_name="convs"), timeout=120)
        self.assertEqual(code, grpc.StatusCode.OK, details)
        grown_mib = vm_rss_kib(self.d.proc.pid) / 1024.0 - rss0
        print("loading %.0f MB of weights (%.0f MiB in the kernel's layout) grew braidd by %.0f MiB" %
              (len(model) / 1e6, held_mib, grown_mib))
        self.assertLess(grown_mib, held_mib + 30)
        x = np.ones((1, 512, 7, 7), dtype=np.float32)               # and it serves
        y = response_outputs(self.stub.ModelInfer(infer_request("convs", {"x": x}), timeout=60))["y"]
        self.assertEqual(y.shape, (1, 512, 7, 7))
        self.assertTrue(np.all(y >= 0))


class PlanCache(BraiddTestCase):

    braidd_args = ("--plan-cache-max-plans", "8", "--workers", "2")
    MAX_PLANS = 8

    @classmethod
    def setUpClass(cls):
        # RSS should tell what braidd holds, not what its allocator caches: glibc's dynamic
        # mmap threshold would keep freed ~800 KB buffers in the heap (reused, not returned),
        # and ASan's quarantine holds freed memory for a while; fix the one, shrink the other.
        cls.d = Braidd(args=cls.braidd_args, env={
            "MALLOC_MMAP_THRESHOLD_": "131072",
            "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=0:abort_on_error=0:quarantine_size_mb=16"})
        repo = cls.d.repo
        e2e_models.write_repository_model(repo, "dyn", dynamic_relu())
        e2e_models.write_repository_model(repo, "dyn4", dynamic_relu())
        write_config(repo, "dyn4", {"plan_cache_max_plans": 4})
        e2e_models.write_repository_model(repo, "ranged", one_op("MatMul"))
        write_config(repo, "ranged", {"input_shapes": {"x": {"min": [1, 4], "max": [16, 4]}}})
        e2e_models.write_repository_model(repo, "bad_range", one_op("MatMul"))
        write_config(repo, "bad_range", {"input_shapes": {"x": {"min": [1], "max": [16]}}})
        cls.d.start()
        for name, state in (("dyn", "READY"), ("dyn4", "READY"), ("ranged", "READY"),
                            ("bad_range", "UNAVAILABLE")):
            cls.d.wait_state(name, state)
        cls.stub = cls.d.stub()

    def relu(self, model, n, base=0.0):
        x = (np.arange(n, dtype=np.float32) - n / 2 + base).reshape(1, n)
        y = response_outputs(self.stub.ModelInfer(infer_request(model, {"x": x}), timeout=60))["y"]
        np.testing.assert_array_equal(y, np.maximum(x, 0))

    def test_cache_and_memory_stay_bounded(self):
        # ~800 KB per shape: unbounded, these 224 shapes grew RSS by ~180 MiB; bounded to 8
        # plans, by ~2 MiB
        base = 200000
        for n in range(base, base + 16):
            self.relu("dyn", n)
        rss0 = vm_rss_kib(self.d.proc.pid)
        for i, n in enumerate(range(base + 16, base + 240)):
            self.relu("dyn", n)
            if i % 40 == 0:
                self.assertLessEqual(model_status(self.d, "dyn")["plan_cache"]["plans"], self.MAX_PLANS)
        cache = model_status(self.d, "dyn")["plan_cache"]
        self.assertLessEqual(cache["plans"], self.MAX_PLANS, cache)
        self.assertEqual(cache["max_plans"], self.MAX_PLANS)
        self.assertGreaterEqual(cache["evictions"], 240 - self.MAX_PLANS, cache)
        grown_mib = (vm_rss_kib(self.d.proc.pid) - rss0) / 1024.0
        self.assertLess(grown_mib, 48, "RSS grew %.1f MiB over 224 distinct shapes" % grown_mib)
        # a shape evicted long ago compiles again and still answers right
        self.relu("dyn", base)
        metrics = self.d.http_get("/metrics")[1]
        metrics = metrics.decode() if isinstance(metrics, bytes) else metrics
        self.assertIn('braid_plan_cache_plans{model="dyn"', metrics)

    def test_per_model_config_bound(self):
        for n in range(3, 23):
            self.relu("dyn4", n)
        cache = model_status(self.d, "dyn4")["plan_cache"]
        self.assertEqual(cache["max_plans"], 4)
        self.assertLessEqual(cache["plans"], 4, cache)

    def test_input_range_checked_before_planning(self):
        before = model_status(self.d, "ranged")["plan_cache"]["compiles"]
        for shape, dim, got in (((17, 4), 0, 17), ((0, 4), 0, 0)):
            code, details = status_of(self.stub.ModelInfer,
                                      infer_request("ranged", {"x": np.zeros(shape, np.float32)}), timeout=60)
            self.assertEqual(code, INVALID, details)
            for m in ("'x'", "dim %d" % dim, "is %d" % got, "[1, 16]"):
                self.assertIn(m, details)
        self.assertEqual(model_status(self.d, "ranged")["plan_cache"]["compiles"], before)
        x = np.ones((16, 4), np.float32)
        y = response_outputs(self.stub.ModelInfer(infer_request("ranged", {"x": x}), timeout=60))["y"]
        np.testing.assert_allclose(y, x @ W, rtol=1e-5)

    def test_bad_range_fails_the_load(self):
        self.assertIn("input_shapes", model_status(self.d, "bad_range")["reason"])


class CompileOutsideTheLock(BraiddTestCase):
    """A compile held by the debug-build gate does not stop a cached shape of the same model;
    a second request for the shape being compiled waits for that compile (one compile)."""

    braidd_args = ("--workers", "4")

    @classmethod
    def setUpClass(cls):
        cls.gate_dir = tempfile.mkdtemp(prefix="braid-gate-")
        cls.gate = os.path.join(cls.gate_dir, "gate")
        cls.d = Braidd(args=cls.braidd_args, env={"BRAID_TEST_COMPILE_GATE": cls.gate})
        e2e_models.write_repository_model(cls.d.repo, "dyn", dynamic_relu())
        cls.d.start()
        cls.d.wait_state("dyn", "READY")
        cls.stub = cls.d.stub()

    @classmethod
    def tearDownClass(cls):
        if os.path.exists(cls.gate):
            os.unlink(cls.gate)
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.gate_dir, ignore_errors=True)

    def req(self, n):
        return infer_request("dyn", {"x": np.ones((1, n), np.float32)})

    def cache(self):
        return model_status(self.d, "dyn")["plan_cache"]

    def wait_for(self, what, pred, future=None):
        for _ in range(3000):               # at most ~30 s
            if pred():
                return True
            if future is not None and future.done():
                return False
            time.sleep(0.01)
        self.fail("timed out waiting for " + what)

    def test_cached_shape_answered_while_another_compiles(self):
        self.stub.ModelInfer(self.req(5), timeout=60)           # shape A: cached
        start = self.cache()
        open(self.gate, "w").close()
        try:
            slow1 = self.stub.ModelInfer.future(self.req(7), timeout=120)   # shape B: compiles
            if not self.wait_for("the gated compile", lambda: os.path.exists(self.gate + ".waiting"), slow1):
                self.skipTest("braidd built without test hooks (not a debug build)")
            slow2 = self.stub.ModelInfer.future(self.req(7), timeout=120)   # B again: waits
            self.wait_for("the second request to wait", lambda: self.cache()["hits"] > start["hits"])
            # A is answered while B's compile is still held
            self.stub.ModelInfer(self.req(5), timeout=60)
            self.assertFalse(slow1.done(), "the gated compile finished early")
            self.assertFalse(slow2.done())
            self.assertEqual(self.cache()["compiles"], start["compiles"] + 1)
        finally:
            os.unlink(self.gate)
        slow1.result()
        slow2.result()
        self.assertEqual(self.cache()["compiles"], start["compiles"] + 1, "shape B compiled twice")


if __name__ == "__main__":
    run_tests()
