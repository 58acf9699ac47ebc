#!/usr/bin/python3
"""No kernel reads client-shared memory (docs/security.md, "Shared memory"), tested as the
audit attacked it: a second process rewrites the integer inputs of braid's native index
kernels in a registered region — valid values and hostile ones, alternating as fast as it can
— while requests name that region. Before the rule, Gather validated its indices in one pass
and read them again from the client's mapping in the next (SIGSEGV, or braidd's memory copied
into the output). Now every input is copied out of the region once before the run, and an
output that a later step reads is never placed in a region, so each answer is the reference
for some values the client wrote, or INVALID_ARGUMENT — never a crash, never an out-of-bounds
read (the sanitizer build of CI runs this too: a report fails the test).

The model: Gather, GatherElements, GatherND, ScatterElements, OneHot and RoiAlign, each fed by
its own INT64 input; and ArgMax whose output is both a graph output (written to shared memory)
and the indices of a Gather."""
import multiprocessing
import os
import time
import unittest
from multiprocessing import shared_memory

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests
from test_shm import add_output, new_shm, shm_params

import grpc

MODEL = "indexers"
ROUNDS = 400                 # requests under mutation (bounded)
MUTATE_SECONDS = 120         # the mutator's own bound

# input name, shape, a valid value, the hostile values the mutator mixes in
I64 = np.int64
VALID = {
    "g_idx":   (np.arange(16384, dtype=I64) % 64),      # long: a wide window between passes
    "ge_idx":  (np.tile(np.arange(16, dtype=I64) % 4, (4, 1))),
    "gnd_idx": (np.array([[0, 1], [7, 7], [3, 4], [-1, 0], [2, 2]], I64)),
    "se_idx":  (np.array([[0, 1, 2, 3]] * 4, I64)),
    "oh_idx":  (np.array([0, 3, 9, -1, 5, 4], I64)),
    "roi_bi":  (np.array([0, 1, 1], I64)),
}
HOSTILE = [2 ** 62, -(2 ** 62), 2 ** 31, -(2 ** 31) - 1, 64, -65, 1 << 40, 4096]   # out of range everywhere


def indexers_model():
    g_data = numpy_helper.from_array(np.arange(64 * 16, dtype=np.float32).reshape(64, 16), "g_data")
    ge_data = numpy_helper.from_array(np.arange(4 * 16, dtype=np.float32).reshape(4, 16), "ge_data")
    gnd_data = numpy_helper.from_array(np.arange(8 * 8 * 3, dtype=np.float32).reshape(8, 8, 3),
                                       "gnd_data")
    se_data = numpy_helper.from_array(np.zeros((4, 16), np.float32), "se_data")
    se_upd = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4) + 1, "se_upd")
    oh_depth = numpy_helper.from_array(np.array([10], I64), "oh_depth")
    oh_values = numpy_helper.from_array(np.array([0, 1], np.float32), "oh_values")
    roi_x = numpy_helper.from_array(np.arange(2 * 1 * 8 * 8, dtype=np.float32).reshape(2, 1, 8, 8),
                                    "roi_x")
    roi_boxes = numpy_helper.from_array(np.array([[0, 0, 4, 4], [1, 1, 6, 6], [2, 0, 7, 3]],
                                                 np.float32), "roi_boxes")
    am_table = numpy_helper.from_array(np.arange(16 * 5, dtype=np.float32).reshape(16, 5), "am_table")
    nodes = [
        helper.make_node("Gather", ["g_data", "g_idx"], ["g_out"], axis=0),
        helper.make_node("GatherElements", ["ge_data", "ge_idx"], ["ge_out"], axis=0),
        helper.make_node("GatherND", ["gnd_data", "gnd_idx"], ["gnd_out"]),
        helper.make_node("ScatterElements", ["se_data", "se_idx", "se_upd"], ["se_out"], axis=1),
        helper.make_node("OneHot", ["oh_idx", "oh_depth", "oh_values"], ["oh_out"], axis=-1),
        helper.make_node("RoiAlign", ["roi_x", "roi_boxes", "roi_bi"], ["roi_out"],
                         output_height=2, output_width=2, sampling_ratio=2, spatial_scale=1.0),
        # argmax: an output (to shared memory) that a later step also reads
        helper.make_node("ArgMax", ["am_x"], ["am_idx"], axis=1, keepdims=0),
        helper.make_node("Gather", ["am_table", "am_idx"], ["am_rows"], axis=0),
    ]
    ins = [helper.make_tensor_value_info(n, TensorProto.INT64, list(v.shape)) for n, v in VALID.items()]
    ins.append(helper.make_tensor_value_info("am_x", TensorProto.FLOAT, [4, 16]))
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
            for n in ("g_out", "ge_out", "gnd_out", "se_out", "oh_out", "roi_out", "am_rows")]
    outs.append(helper.make_tensor_value_info("am_idx", TensorProto.INT64, [4]))
    graph = helper.make_graph(nodes, "indexers", ins, outs,
                              [g_data, ge_data, gnd_data, se_data, se_upd, oh_depth, oh_values,
                               roi_x, roi_boxes, am_table])
    # opset 16: RoiAlign-16 runs on braid's own kernel (at 13, on ONNX Runtime)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], producer_name="braid-e2e")
    m.ir_version = 7
    return m.SerializeToString()


def layout():
    """Byte offsets of each input in the region (64-byte aligned), and the total."""
    at, offsets = 0, {}
    for name, v in VALID.items():
        offsets[name] = at
        at += (v.nbytes + 63) // 64 * 64
    offsets["am_x"] = at
    at += 4 * 16 * 4
    offsets["am_idx"] = at          # the output
    at += 64
    return offsets, at


def mutate(key, seconds, stop, started):
    """The attacker: rewrite every index input in the region, all valid then all hostile, in
    turn as fast as it can (a kernel that reads twice sees both)."""
    s = shared_memory.SharedMemory(name=key.lstrip("/"))
    try:
        offsets, _ = layout()
        rng = np.random.default_rng(7)
        views = {n: np.ndarray(v.shape, I64, s.buf, offsets[n]) for n, v in VALID.items()}
        end = time.monotonic() + seconds
        while not stop.is_set() and time.monotonic() < end:
            for n, v in VALID.items():
                views[n][...] = v
                views[n][...] = HOSTILE[rng.integers(0, len(HOSTILE))]
            started.set()
        del views
    finally:
        s.close()


class SharedMemoryMutation(BraiddTestCase):
    braidd_args = ("--allow-shared-memory",)

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, MODEL, indexers_model())

    def request(self, region):
        offsets, _ = layout()
        req = pb.ModelInferRequest(model_name=MODEL)
        for name, v in VALID.items():
            t = req.inputs.add(name=name, datatype="INT64", shape=list(v.shape))
            shm_params(t.parameters, region, v.nbytes, offsets[name])
        t = req.inputs.add(name="am_x", datatype="FP32", shape=[4, 16])
        shm_params(t.parameters, region, 4 * 16 * 4, offsets["am_x"])
        for name in ("g_out", "ge_out", "gnd_out", "se_out", "oh_out", "roi_out", "am_rows"):
            add_output(req, name)
        add_output(req, "am_idx", region, 4 * 8, offsets["am_idx"])
        return req

    def test_rewriting_index_inputs_during_runs_never_crashes(self):
        offsets, size = layout()
        s, key = new_shm(size)
        try:
            for name, v in VALID.items():
                np.ndarray(v.shape, I64, s.buf, offsets[name])[...] = v
            am_x = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
            np.ndarray((4, 16), np.float32, s.buf, offsets["am_x"])[...] = am_x
            self.stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="mut", key=key, byte_size=size), timeout=10)
            req = self.request("mut")
            # valid values, no mutation: the model's answer against numpy
            r = self.stub.ModelInfer(req, timeout=60)
            outs = {o.name: np.frombuffer(raw, np.float32)
                    for o, raw in zip(r.outputs, r.raw_output_contents) if o.name != "am_idx"}
            g_data = np.arange(64 * 16, dtype=np.float32).reshape(64, 16)
            np.testing.assert_array_equal(outs["g_out"], g_data[VALID["g_idx"]].reshape(-1))
            am = np.argmax(am_x, axis=1)
            np.testing.assert_array_equal(np.ndarray((4,), I64, s.buf, offsets["am_idx"]), am)
            table = np.arange(16 * 5, dtype=np.float32).reshape(16, 5)
            np.testing.assert_array_equal(outs["am_rows"], table[am].reshape(-1))

            ctx = multiprocessing.get_context("spawn")
            stop, started = ctx.Event(), ctx.Event()
            p = ctx.Process(target=mutate, args=(key, MUTATE_SECONDS, stop, started), daemon=True)
            p.start()
            self.assertTrue(started.wait(60), "the mutator did not start")
            ok = refused = 0
            try:
                for _ in range(ROUNDS):
                    try:
                        r = self.stub.ModelInfer(req, timeout=60)
                    except grpc.RpcError as e:
                        code, msg = e.code(), e.details()
                        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
                        refused += 1
                    else:
                        # the region held all-valid or all-hostile indices and hostile ones are
                        # refused: an answer is the valid one, never the bytes of a torn read
                        got = np.frombuffer(r.raw_output_contents[0], np.float32)
                        np.testing.assert_array_equal(got, g_data[VALID["g_idx"]].reshape(-1))
                        ok += 1
                    self.d.assert_running()
            finally:
                stop.set()
                p.join(30)
            self.assertEqual(ok + refused, ROUNDS)
            self.assertGreater(refused, 0, "the mutator never landed a hostile value")
            # and still right afterwards
            for name, v in VALID.items():
                np.ndarray(v.shape, I64, s.buf, offsets[name])[...] = v
            r = self.stub.ModelInfer(req, timeout=60)
            got = np.frombuffer(r.raw_output_contents[0], np.float32)
            np.testing.assert_array_equal(got, g_data[VALID["g_idx"]].reshape(-1))
            self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(),
                                                   timeout=10)
        finally:
            s.close()
            s.unlink()


if __name__ == "__main__":
    run_tests()
