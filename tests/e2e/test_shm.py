#!/usr/bin/python3
"""Triton's system shared memory extension against a real braidd (docs/protocol.md, "System
shared memory"), with braid's own gRPC stubs, raw REST and Python's
multiprocessing.shared_memory: register / status / unregister over both ports, inference with
inputs and outputs in shared memory against the numpy / PyTorch references, no tensor bytes
in the messages, and the hostile cases — ranges past the end or overflowing, unknown regions,
bad keys, limits, the disabled flag, unregister during use, and an object truncated under a
registered region (SIGBUS guarded: an error answer, braidd alive and serving)."""
import json
import os
import socket
import threading
import time
import unittest
import urllib.error
import urllib.request
from multiprocessing import shared_memory

import numpy as np

import e2e_models
from braidd_fixture import Braidd, BraiddTestCase, pb, run_tests, status_of

import grpc

# Every batch size planned is formed: the tests here expect exact ladders and batches, which
# measuring each size at load (measure_ladder, on by default) could trim on a busy machine.
FIXED_LADDER = {"measure_ladder": False}

DEMO = "tinycnn"
BIG = 4 * 1024 * 1024                   # big_add_one: 16 MiB in, 16 MiB out
SLOW_ROWS, SLOW_N = 256, 1024


def new_shm(size):
    """A fresh POSIX shared memory object of SIZE bytes; its key is '/' + name. Skips the test
    when /dev/shm (64 MiB in a default container) has no room for it: writing past a full
    tmpfs would kill this client with SIGBUS."""
    st = os.statvfs("/dev/shm")
    if st.f_bavail * st.f_frsize < size + (8 << 20):
        raise unittest.SkipTest("/dev/shm has %d bytes free, the test needs %d"
                                % (st.f_bavail * st.f_frsize, size + (8 << 20)))
    s = shared_memory.SharedMemory(create=True, size=size)
    return s, "/" + s.name


class CountingProxy:
    """A loopback TCP forwarder to PORT that counts the bytes each way, so a test sees what
    actually crosses the socket (HTTP/2 framing included)."""

    def __init__(self, port):
        self.up = self.down = 0
        self.lock = threading.Lock()
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.port = self.srv.getsockname()[1]
        self.target = port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pump, args=(c, u, "up"), daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, "down"), daemon=True).start()

    def _pump(self, a, b, way):
        try:
            while True:
                data = a.recv(1 << 16)
                if not data:
                    break
                with self.lock:
                    setattr(self, way, getattr(self, way) + len(data))
                b.sendall(data)
        except OSError:
            pass
        finally:
            for x in (a, b):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def counts(self):
        with self.lock:
            return self.up, self.down

    def close(self):
        self.srv.close()


def shm_params(p, region, size, offset=None):
    p["shared_memory_region"].string_param = region
    p["shared_memory_byte_size"].int64_param = size
    if offset is not None:
        p["shared_memory_offset"].int64_param = offset


def infer_request(model, name, dtype, shape, region=None, size=None, offset=None, data=None):
    req = pb.ModelInferRequest(model_name=model)
    t = req.inputs.add(name=name, datatype=dtype, shape=shape)
    if region is not None:
        shm_params(t.parameters, region, size, offset)
    if data is not None:
        req.raw_input_contents.append(data)
    return req


def add_output(req, name, region=None, size=None, offset=None):
    o = req.outputs.add(name=name)
    if region is not None:
        shm_params(o.parameters, region, size, offset)
    return o


class SharedMemoryTest(BraiddTestCase):
    braidd_args = ("--allow-shared-memory", "--shared-memory-max-regions", "6")

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "big", e2e_models.big_add_one(BIG))
        e2e_models.write_repository_model(repo, "slow", e2e_models.slow_matmul(SLOW_ROWS, SLOW_N, 8))
        e2e_models.write_repository_model(repo, "dbatched", e2e_models.batch_add_one("N", 4))
        e2e_models.write_model_config(repo, "dbatched", {
            "max_batch_size": 8, "dynamic_batching": {**FIXED_LADDER,
                                     "max_queue_delay_microseconds": 300000}})

    def setUp(self):
        self.shms = []
        self.image = e2e_models.demo_fixture("image")
        self.probs = e2e_models.demo_fixture("probabilities")

    def tearDown(self):
        self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(), timeout=10)
        for s in self.shms:
            s.close()
            try:
                s.unlink()
            except FileNotFoundError:
                pass
        super().tearDown()

    def shm(self, size):
        s, key = new_shm(size)
        self.shms.append(s)
        return s, key

    def register(self, name, key, size, offset=0):
        return self.stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
            name=name, key=key, offset=offset, byte_size=size), timeout=10)

    def rest(self, method, path, body=None):
        url = "http://127.0.0.1:%d%s" % (self.d.rest_port, path)
        data = json.dumps(body).encode() if body is not None else (b"" if method == "POST" else None)
        req = urllib.request.Request(url, data=data, method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                raw = r.read()
                return r.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    # ---- the extension's RPCs -------------------------------------------------------------

    def test_metadata_lists_the_extension(self):
        m = self.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10)
        self.assertIn("system_shared_memory", m.extensions)
        code, body = self.rest("GET", "/v2")
        self.assertEqual(code, 200)
        self.assertIn("system_shared_memory", body["extensions"])

    def test_register_status_unregister_grpc(self):
        s, key = self.shm(4096)
        self.register("r1", key, 1000, offset=24)
        st = self.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(), timeout=10)
        self.assertEqual(set(st.regions), {"r1"})
        r = st.regions["r1"]
        self.assertEqual((r.name, r.key, r.offset, r.byte_size), ("r1", key, 24, 1000))
        st = self.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(name="r1"), timeout=10)
        self.assertEqual(set(st.regions), {"r1"})
        code, msg = status_of(self.stub.SystemSharedMemoryStatus,
                              pb.SystemSharedMemoryStatusRequest(name="nope"), timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND, msg)
        code, msg = status_of(self.register, "r1", key, 10)
        self.assertEqual(code, grpc.StatusCode.ALREADY_EXISTS)
        self.assertIn("already registered", msg)
        self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="r1"), timeout=10)
        code, msg = status_of(self.stub.SystemSharedMemoryUnregister,
                              pb.SystemSharedMemoryUnregisterRequest(name="r1"), timeout=10)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND, msg)
        st = self.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(), timeout=10)
        self.assertEqual(len(st.regions), 0)

    def test_register_status_unregister_rest(self):
        s, key = self.shm(4096)
        code, body = self.rest("POST", "/v2/systemsharedmemory/region/h1/register",
                               {"key": key, "offset": 8, "byte_size": 64})
        self.assertEqual(code, 200, body)
        code, body = self.rest("GET", "/v2/systemsharedmemory/status")
        self.assertEqual((code, body), (200, [{"name": "h1", "key": key, "offset": 8, "byte_size": 64}]))
        code, body = self.rest("GET", "/v2/systemsharedmemory/region/h1/status")
        self.assertEqual(code, 200)
        self.assertEqual(body[0]["name"], "h1")
        code, body = self.rest("GET", "/v2/systemsharedmemory/region/zz/status")
        self.assertEqual(code, 404, body)
        code, body = self.rest("POST", "/v2/systemsharedmemory/region/h1/register", {"key": 3})
        self.assertEqual(code, 400, body)
        code, body = self.rest("POST", "/v2/systemsharedmemory/region/h1/unregister")
        self.assertEqual(code, 200, body)
        code, body = self.rest("POST", "/v2/systemsharedmemory/unregister")
        self.assertEqual(code, 200, body)
        code, body = self.rest("POST", "/v2/cudasharedmemory/region/c/register", {"key": "x"})
        self.assertEqual(code, 501, body)
        # CUDA shared memory (not declared in braid's proto): a raw call, Triton's method path
        ch = self.d.new_channel()
        for rpc in ("CudaSharedMemoryStatus", "CudaSharedMemoryRegister", "CudaSharedMemoryUnregister"):
            call = ch.unary_unary("/inference.GRPCInferenceService/" + rpc,
                                  request_serializer=lambda b: b, response_deserializer=lambda b: b)
            code, msg = status_of(call, b"", timeout=10)
            self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED, rpc)
            self.assertIn("CUDA shared memory is not supported", msg)
        ch.close()

    def test_register_refuses_hostile_ranges_and_keys(self):
        s, key = self.shm(4096)
        cases = [
            ("past", key, 4000, 100, "past the end"),
            ("overflow", key, 2**64 - 1, 2, "not a valid range"),
            ("zero", key, 0, 0, "not a valid range"),
            ("dots", "/..", 0, 8, "shm_open name"),
            ("slash", "/a/../b", 0, 8, "shm_open name"),
            ("noslash", key[1:], 0, 8, "shm_open name"),
            ("bad/name", key, 0, 8, "without '/'"),
            ("", key, 0, 8, "must be 1 to"),
        ]
        for name, k, off, size, want in cases:
            code, msg = status_of(self.register, name, k, size, off)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, (name, msg))
            self.assertIn(want, msg, name)
        code, msg = status_of(self.register, "missing", "/braid-no-such-object-%d" % os.getpid(), 8)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND, msg)
        st = self.stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(), timeout=10)
        self.assertEqual(len(st.regions), 0)

    def test_too_many_regions(self):
        s, key = self.shm(4096)
        for i in range(6):
            self.register("many%d" % i, key, 16, offset=16 * i)
        code, msg = status_of(self.register, "many6", key, 16)
        self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED, msg)
        self.assertIn("shared_memory_max_regions", msg)

    # ---- inference -------------------------------------------------------------------------

    def test_demo_inputs_and_outputs_in_shm(self):
        x = np.ascontiguousarray(self.image, np.float32)
        s, key = self.shm(x.nbytes + 4096)
        off_out = x.nbytes + 64                      # a second tensor in the same object
        self.register("io", key, x.nbytes + 4096)
        np.ndarray(x.shape, np.float32, s.buf, 0)[...] = x
        req = infer_request(DEMO, "image", "FP32", list(x.shape), "io", x.nbytes)
        add_output(req, "probabilities", "io", self.probs.nbytes, off_out)
        rsp = self.stub.ModelInfer(req, timeout=60)
        self.assertEqual(len(req.raw_input_contents), 0)
        self.assertEqual(rsp.outputs[0].name, "probabilities")
        self.assertEqual(list(rsp.outputs[0].shape), list(self.probs.shape))
        self.assertEqual(list(rsp.raw_output_contents), [b""])   # no bytes in the response
        got = np.ndarray(self.probs.shape, np.float32, s.buf, off_out).copy()
        np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-5)

    def shm_output_bytes(self, model):
        """braid_shm_output_bytes_total of MODEL: {"in_place": n, "copied": n}."""
        status, body, _ = self.d.http_get("/metrics")
        self.assertEqual(status, 200)
        got = {}
        for line in body.decode().splitlines():
            if line.startswith("braid_shm_output_bytes_total{") and 'model="%s"' % model in line:
                how = line.split('how="')[1].split('"')[0]
                got[how] = int(float(line.rsplit(" ", 1)[1]))
        self.assertEqual(set(got), {"in_place", "copied"}, body.decode()[-2000:])
        return got

    def test_outputs_written_in_place_unless_misaligned(self):
        """An output whose region span is 64-byte aligned is written there by the run itself
        (nothing copied); at offset 64 + 4 it is copied in. Same values either way."""
        x = np.ascontiguousarray(self.image, np.float32)
        s, key = self.shm(x.nbytes + 8192)
        self.register("inplace", key, x.nbytes + 8192)
        np.ndarray(x.shape, np.float32, s.buf, 0)[...] = x
        aligned = (x.nbytes + 63) // 64 * 64 + 64
        for offset, how in ((aligned, "in_place"), (aligned + 4, "copied")):
            s.buf[aligned - 64:aligned + 4096] = b"\xa5" * (4096 + 64)
            before = self.shm_output_bytes(DEMO)
            req = infer_request(DEMO, "image", "FP32", list(x.shape), "inplace", x.nbytes)
            add_output(req, "probabilities", "inplace", self.probs.nbytes, offset)
            rsp = self.stub.ModelInfer(req, timeout=60)
            self.assertEqual(list(rsp.raw_output_contents), [b""])
            got = np.ndarray(self.probs.shape, np.float32, s.buf, offset).copy()
            np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-5)
            after = self.shm_output_bytes(DEMO)
            other = "copied" if how == "in_place" else "in_place"
            self.assertEqual(after[how] - before[how], self.probs.nbytes, (offset, before, after))
            self.assertEqual(after[other], before[other], (offset, before, after))

    def test_rest_infer_with_shm(self):
        x = np.ascontiguousarray(self.image, np.float32)
        s, key = self.shm(x.nbytes + self.probs.nbytes)
        self.register("rest_io", key, x.nbytes + self.probs.nbytes)
        np.ndarray(x.shape, np.float32, s.buf, 0)[...] = x
        body = {"inputs": [{"name": "image", "datatype": "FP32", "shape": list(x.shape),
                            "parameters": {"shared_memory_region": "rest_io",
                                           "shared_memory_byte_size": x.nbytes}}],
                "outputs": [{"name": "probabilities",
                             "parameters": {"shared_memory_region": "rest_io",
                                            "shared_memory_offset": x.nbytes,
                                            "shared_memory_byte_size": self.probs.nbytes}}]}
        code, out = self.rest("POST", "/v2/models/%s/infer" % DEMO, body)
        self.assertEqual(code, 200, out)
        o = out["outputs"][0]
        self.assertNotIn("data", o)
        self.assertEqual(o["shape"], list(self.probs.shape))
        got = np.ndarray(self.probs.shape, np.float32, s.buf, x.nbytes).copy()
        np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-5)
        body["outputs"][0]["parameters"]["binary_data"] = True       # refused, as Triton
        code, out = self.rest("POST", "/v2/models/%s/infer" % DEMO, body)
        self.assertEqual(code, 400, out)
        self.assertIn("binary_data", out["error"])
        body["outputs"][0]["parameters"]["binary_data"] = False      # what tritonclient sends
        code, out = self.rest("POST", "/v2/models/%s/infer" % DEMO, body)
        self.assertEqual(code, 200, out)
        body["inputs"][0]["data"] = [0.0]
        code, out = self.rest("POST", "/v2/models/%s/infer" % DEMO, body)
        self.assertEqual(code, 400, out)

    def test_big_tensor_bytes_stay_out_of_the_messages(self):
        x = np.random.default_rng(3).standard_normal((1, BIG)).astype(np.float32)
        s, key = self.shm(2 * x.nbytes)
        self.register("big_io", key, 2 * x.nbytes)
        np.ndarray(x.shape, np.float32, s.buf, 0)[...] = x
        req = infer_request("big", "x", "FP32", [1, BIG], "big_io", x.nbytes)
        add_output(req, "y", "big_io", x.nbytes, x.nbytes)
        plain = infer_request("big", "x", "FP32", [1, BIG], data=x.tobytes())
        proxy = CountingProxy(self.d.grpc_port)
        ch = grpc.insecure_channel("127.0.0.1:%d" % proxy.port, options=[
            ("grpc.max_receive_message_length", 64 << 20), ("grpc.max_send_message_length", 64 << 20)])
        stub = type(self.stub)(ch)
        stub.ServerLive(pb.ServerLiveRequest(), timeout=10)     # connection set up first
        up0, down0 = proxy.counts()
        rsp = stub.ModelInfer(req, timeout=120)
        up1, down1 = proxy.counts()
        prsp = stub.ModelInfer(plain, timeout=120)
        up2, down2 = proxy.counts()
        ch.close()
        proxy.close()
        print("\nbytes on the socket, 16 MiB in/out: with shm %d up, %d down; without %d up, %d down"
              % (up1 - up0, down1 - down0, up2 - up1, down2 - down1))
        self.assertLess(up1 - up0, 4096)
        self.assertLess(down1 - down0, 4096)
        self.assertGreater(up2 - up1, x.nbytes)
        self.assertGreater(down2 - down1, x.nbytes)
        print("\nbig_add_one (16 MiB in/out): request %d bytes with shm, %d without; response %d "
              "bytes with shm, %d without" % (req.ByteSize(), plain.ByteSize(), rsp.ByteSize(),
                                               prsp.ByteSize()))
        times = {"shm": [], "message": []}
        for _ in range(9):                          # latency, reported (not asserted: noisy)
            for kind, r in (("shm", req), ("message", plain)):
                t = time.perf_counter()
                self.stub.ModelInfer(r, timeout=120)
                times[kind].append(time.perf_counter() - t)
        print("big_add_one median latency over 9 calls: %.1f ms with shm, %.1f ms in messages"
              % (1e3 * sorted(times["shm"])[4], 1e3 * sorted(times["message"])[4]))
        self.assertLess(req.ByteSize(), 256)
        self.assertGreater(plain.ByteSize(), x.nbytes)
        self.assertLess(rsp.ByteSize(), 256)
        got = np.ndarray(x.shape, np.float32, s.buf, x.nbytes)
        np.testing.assert_array_equal(got, x + np.float32(1))
        np.testing.assert_array_equal(np.frombuffer(prsp.raw_output_contents[0], np.float32),
                                      (x + np.float32(1)).ravel())

    def test_mixed_raw_and_shm_inputs_count_raw_entries(self):
        # one raw entry per input NOT in shared memory: none here, so an extra entry is refused
        x = np.ascontiguousarray(self.image, np.float32)
        s, key = self.shm(x.nbytes)
        self.register("mix", key, x.nbytes)
        req = infer_request(DEMO, "image", "FP32", list(x.shape), "mix", x.nbytes, data=x.tobytes())
        code, msg = status_of(self.stub.ModelInfer, req, timeout=60)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
        self.assertIn("raw_input_contents", msg)

    def test_infer_refuses_hostile_shm_parameters(self):
        x = np.ascontiguousarray(self.image, np.float32)
        s, key = self.shm(x.nbytes + 4096)
        self.register("h", key, x.nbytes)
        shape = list(x.shape)
        cases = [
            (infer_request(DEMO, "image", "FP32", shape, "h", x.nbytes, 4), "past the end"),
            (infer_request(DEMO, "image", "FP32", shape, "h", x.nbytes, 2**63 - 1), "past the end"),
            (infer_request(DEMO, "image", "FP32", shape, "h", 2**63 - 1, 8), "shared_memory_byte_size"),
            (infer_request(DEMO, "image", "FP32", shape, "h", x.nbytes - 4), "shared_memory_byte_size"),
            (infer_request(DEMO, "image", "FP32", shape, "h", -1), "non-negative"),
        ]
        only_region = infer_request(DEMO, "image", "FP32", shape)
        only_region.inputs[0].parameters["shared_memory_region"].string_param = "h"
        cases.append((only_region, "needs 'shared_memory_byte_size'"))
        only_size = infer_request(DEMO, "image", "FP32", shape, data=x.tobytes())
        only_size.inputs[0].parameters["shared_memory_byte_size"].int64_param = 8
        cases.append((only_size, "without 'shared_memory_region'"))
        small_out = infer_request(DEMO, "image", "FP32", shape, "h", x.nbytes)
        add_output(small_out, "probabilities", "h", 8)
        cases.append((small_out, "needs 40 bytes"))
        classified = infer_request(DEMO, "image", "FP32", shape, "h", x.nbytes)
        o = add_output(classified, "probabilities", "h", 40)
        o.parameters["classification"].int64_param = 3
        cases.append((classified, "cannot be combined"))
        out_past = infer_request(DEMO, "image", "FP32", shape, "h", x.nbytes)
        add_output(out_past, "probabilities", "h", 40, x.nbytes - 8)
        cases.append((out_past, "past the end"))
        for req, want in cases:
            code, msg = status_of(self.stub.ModelInfer, req, timeout=60)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, (want, msg))
            self.assertIn(want, msg)
        # an unknown region is NOT_FOUND, as Triton answers it
        code, msg = status_of(self.stub.ModelInfer,
                              infer_request(DEMO, "image", "FP32", shape, "nope", x.nbytes), timeout=60)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND, msg)
        self.assertIn("no shared memory region 'nope' is registered", msg)

    def test_dynamic_batch_with_one_truncated_region(self):
        """Four requests gathered into one batch, each with its own input and output region;
        one input object is truncated after registering: that request fails naming its region,
        the other three get x + 1 in their output regions."""
        regions = []
        for i in range(4):
            s, key = self.shm(32)
            np.ndarray((1, 4), np.float32, s.buf, 0)[...] = np.arange(4, dtype=np.float32) + 10 * i
            self.register("db%d" % i, key, 32)
            regions.append(s)
        os.ftruncate(regions[2]._fd, 0)
        results = [None] * 4

        def one(i):
            req = infer_request("dbatched", "x", "FP32", [1, 4], "db%d" % i, 16)
            add_output(req, "y", "db%d" % i, 16, 16)
            results[i] = status_of(self.stub.ModelInfer, req, timeout=60)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, (code, msg) in enumerate(results):
            if i == 2:
                self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
                self.assertIn("'db2' shrank", msg)
                continue
            self.assertEqual(code, grpc.StatusCode.OK, msg)
            np.testing.assert_array_equal(np.ndarray((1, 4), np.float32, regions[i].buf, 16),
                                          (np.arange(4, dtype=np.float32) + 10 * i + 1).reshape(1, 4))
        st = self.stub.ModelStatistics(pb.ModelStatisticsRequest(name="dbatched"), timeout=10)
        print("\ndynamic batch with shm: %d inferences in %d runs" %
              (st.model_stats[0].inference_count, st.model_stats[0].execution_count))
        self.assertLess(st.model_stats[0].execution_count, 4)

    def test_unregister_during_use(self):
        """Requests on a region that is unregistered (and registered again) meanwhile either
        finish with the right result from the mapping they started with, or are refused."""
        x = np.random.default_rng(5).standard_normal((SLOW_ROWS, SLOW_N)).astype(np.float32)
        s, key = self.shm(2 * x.nbytes)
        np.ndarray(x.shape, np.float32, s.buf, 0)[...] = x
        self.register("busy", key, 2 * x.nbytes)
        results, stop = [], threading.Event()

        def client():
            while not stop.is_set():
                req = infer_request("slow", "x", "FP32", list(x.shape), "busy", x.nbytes)
                add_output(req, "y", "busy", x.nbytes, x.nbytes)
                results.append(status_of(self.stub.ModelInfer, req, timeout=120)[0])

        threads = [threading.Thread(target=client) for _ in range(2)]
        for t in threads:
            t.start()
        deadline = time.time() + 6
        flips = 0
        while time.time() < deadline:
            time.sleep(0.05)
            self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="busy"),
                                                   timeout=10)
            time.sleep(0.05)
            self.register("busy", key, 2 * x.nbytes)
            flips += 1
        stop.set()
        for t in threads:
            t.join()
        self.assertTrue(results)
        self.assertTrue(set(results) <= {grpc.StatusCode.OK, grpc.StatusCode.NOT_FOUND}, set(results))
        self.assertIn(grpc.StatusCode.OK, results)
        print("\nunregister during use: %d flips, %d requests (%d OK)" %
              (flips, len(results), results.count(grpc.StatusCode.OK)))

    def test_truncated_object_is_an_error_not_a_crash(self):
        """ftruncate after register: the read of the mapping raises SIGBUS; braidd answers an
        error naming the region and keeps serving."""
        x = np.ascontiguousarray(self.image, np.float32)
        for model, name, out, shape, size in [(DEMO, "image", "probabilities", list(x.shape), x.nbytes),
                                              ("big", "x", "y", [1, BIG], BIG * 4)]:
            s, key = self.shm(size)
            self.register("trunc", key, size)
            os.ftruncate(s._fd, 0)
            req = infer_request(model, name, "FP32", shape, "trunc", size)
            code, msg = status_of(self.stub.ModelInfer, req, timeout=60)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
            self.assertIn("shrank", msg)
            self.d.assert_running()
            # the broken region stays refused until registered again
            code, msg = status_of(self.stub.ModelInfer, req, timeout=60)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
            self.assertIn("unregister and register it again", msg)
            # outputs: the write faults instead
            os.ftruncate(s._fd, size)
            self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="trunc"),
                                                   timeout=10)
            self.register("trunc", key, size)
            os.ftruncate(s._fd, 0)
            req = infer_request(DEMO, "image", "FP32", list(x.shape), data=x.tobytes())
            add_output(req, "probabilities", "trunc", 40)
            code, msg = status_of(self.stub.ModelInfer, req, timeout=60)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
            self.assertIn("shrank", msg)
            self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(name="trunc"),
                                                   timeout=10)
        # and still serving, shared memory included
        self.test_demo_inputs_and_outputs_in_shm()


class SharedMemoryPastMessageLimitTest(BraiddTestCase):
    """Tensors in shared memory do not count against max_message_bytes: 16 MiB in and out
    through a braidd whose messages are limited to 4 MiB."""
    braidd_args = ("--allow-shared-memory", "--max-message-bytes", str(4 * 1024 * 1024))

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "big", e2e_models.big_add_one(BIG))

    def test_big_tensors_past_the_message_limit(self):
        x = np.arange(BIG, dtype=np.float32).reshape(1, BIG)
        s, key = new_shm(2 * x.nbytes)
        try:
            self.stub.SystemSharedMemoryRegister(pb.SystemSharedMemoryRegisterRequest(
                name="lim", key=key, byte_size=2 * x.nbytes), timeout=10)
            np.ndarray(x.shape, np.float32, s.buf, 0)[...] = x
            req = infer_request("big", "x", "FP32", [1, BIG], "lim", x.nbytes)
            add_output(req, "y", "lim", x.nbytes, x.nbytes)
            self.stub.ModelInfer(req, timeout=120)
            np.testing.assert_array_equal(np.ndarray(x.shape, np.float32, s.buf, x.nbytes),
                                          x + np.float32(1))
            # the same output in the response is refused before the run
            req = infer_request("big", "x", "FP32", [1, BIG], "lim", x.nbytes)
            code, msg = status_of(self.stub.ModelInfer, req, timeout=120)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
            self.assertIn("max_message_bytes", msg)
            self.stub.SystemSharedMemoryUnregister(pb.SystemSharedMemoryUnregisterRequest(), timeout=10)
        finally:
            s.close()
            s.unlink()


class SharedMemoryDisabledTest(BraiddTestCase):
    """Without --allow-shared-memory: every shm call says how to enable it."""

    def test_disabled(self):
        m = self.stub.ServerMetadata(pb.ServerMetadataRequest(), timeout=10)
        self.assertNotIn("system_shared_memory", m.extensions)
        s, key = new_shm(4096)
        try:
            code, msg = status_of(self.stub.SystemSharedMemoryRegister,
                                  pb.SystemSharedMemoryRegisterRequest(name="r", key=key, byte_size=8),
                                  timeout=10)
            self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED, msg)    # Triton's code
            self.assertIn("--allow-shared-memory", msg)
            code, msg = status_of(self.stub.SystemSharedMemoryStatus,
                                  pb.SystemSharedMemoryStatusRequest(), timeout=10)
            self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED, msg)
            req = infer_request(DEMO, "image", "FP32", [1, 3, 32, 32], "r", 12288)
            code, msg = status_of(self.stub.ModelInfer, req, timeout=60)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
            self.assertIn("--allow-shared-memory", msg)
            url = "http://127.0.0.1:%d/v2/systemsharedmemory/region/r/register" % self.d.rest_port
            r = urllib.request.Request(url, data=json.dumps({"key": key, "offset": 0, "byte_size": 8}).encode(),
                                       method="POST")
            with self.assertRaises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(r, timeout=10)
            self.assertEqual(e.exception.code, 501)
            self.assertIn("--allow-shared-memory", e.exception.read().decode())
        finally:
            s.close()
            s.unlink()


if __name__ == "__main__":
    run_tests()
