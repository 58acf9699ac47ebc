#!/usr/bin/python3
"""braidd under concurrent load: hot reloads with zero failed requests, unload while
requests run, and SIGTERM with zero lost requests. Every loop is bounded in count and time."""

import json
import signal
import threading
import time
import unittest

import grpc
import numpy as np

import e2e_models
from braidd_fixture import Braidd, pb, run_tests, status_of
from tensors import infer_request, response_outputs

DEMO = "tinycnn"
CLIENTS = 8
REQUESTS_PER_CLIENT = 2000
RELOADS = 20
TIME_LIMIT_S = 120.0


def offset_of(version):
    """The output offset of each hot-reloaded demo version: even versions add 1."""
    return 1.0 if int(version) % 2 == 0 else 0.0


class Load(unittest.TestCase):

    def setUp(self):
        self.image = e2e_models.demo_fixture("image")
        self.probs = e2e_models.demo_fixture("probabilities")
        self.d = None

    def tearDown(self):
        if self.d is not None:
            self.d.kill()

    def start(self, args=(), models=None):
        self.d = Braidd(args=args)
        for name, data in (models or {}).items():
            e2e_models.write_repository_model(self.d.repo, name, data)
        self.d.start()
        self.d.wait_ready()
        return self.d

    def test_hot_reload_under_concurrent_load(self):
        d = self.start(["--allow-uploads"])
        variants = {0.0: e2e_models.demo_variant(0.0), 1.0: e2e_models.demo_variant(1.0)}
        req = infer_request(DEMO, {"image": self.image})
        stop_at = time.monotonic() + TIME_LIMIT_S
        reloads_done = threading.Event()
        lock = threading.Lock()
        failures, mismatches, versions = [], [], {}
        counts = [0] * CLIENTS

        def client(i):
            channel = d.new_channel()
            stub = d.stub(channel)
            try:
                while time.monotonic() < stop_at and (counts[i] < REQUESTS_PER_CLIENT
                                                      or not reloads_done.is_set()):
                    code, resp = status_of(stub.ModelInfer, req, timeout=60)
                    counts[i] += 1
                    if code != grpc.StatusCode.OK:
                        with lock:
                            failures.append((code, resp))
                        continue
                    v = resp.model_version
                    out = response_outputs(resp)["probabilities"]
                    if not np.allclose(out, self.probs + offset_of(v), rtol=1e-4, atol=1e-5):
                        with lock:
                            mismatches.append((v, out))
                    with lock:
                        versions[v] = versions.get(v, 0) + 1
            finally:
                channel.close()

        reload_errors = []

        def reloader():
            stub = d.stub(d.new_channel())
            try:
                time.sleep(0.2)                   # the clients are running
                for v in range(2, 2 + RELOADS):
                    if time.monotonic() > stop_at:
                        break
                    lr = pb.RepositoryModelLoadRequest(model_name=DEMO)
                    lr.parameters["file:%d/model.onnx" % v].bytes_param = variants[offset_of(v)]
                    code, details = status_of(stub.RepositoryModelLoad, lr, timeout=120)
                    if code != grpc.StatusCode.OK:
                        reload_errors.append((v, code, details))
                    time.sleep(0.1)
            finally:
                reloads_done.set()

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        threads.append(threading.Thread(target=reloader))
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIME_LIMIT_S + 180)
        elapsed = time.monotonic() - t0
        self.assertFalse(any(t.is_alive() for t in threads), "client threads did not finish")
        total = sum(counts)
        print("hot reload: %d requests in %.1f s (%.0f/s), versions served: %s"
              % (total, elapsed, total / elapsed, dict(sorted(versions.items(), key=lambda kv: int(kv[0])))))
        self.assertEqual(reload_errors, [])
        self.assertEqual(failures[:5], [], "%d of %d requests failed" % (len(failures), total))
        self.assertEqual(len(mismatches), 0,
                         "%d responses do not match their version (first: %s)"
                         % (len(mismatches), mismatches[:1]))
        self.assertGreaterEqual(min(counts), REQUESTS_PER_CLIENT if elapsed < TIME_LIMIT_S else 1)
        # The reloads happened while requests ran: several versions answered.
        self.assertGreaterEqual(len(versions), 5, versions)
        final = self.d.stub().ModelInfer(req, timeout=30)
        self.assertEqual(final.model_version, str(1 + RELOADS))
        d.stop_clean()

    def in_flight(self, name):
        doc = json.loads(self.d.http_get("/v2/status")[1])
        m = [m for m in doc["models"] if m["name"] == name]
        return m[0]["queue"]["in_flight"] + m[0]["queue"]["queued"] if m and m[0]["queue"] else 0

    def test_unload_while_requests_run(self):
        d = self.start(models={"slow": e2e_models.slow_matmul(depth=48)})
        x = np.ones((256, 1024), np.float32)
        req = infer_request("slow", {"x": x})
        futures = [d.stub().ModelInfer.future(req, timeout=120) for _ in range(4)]
        deadline = time.monotonic() + 30
        while self.in_flight("slow") < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        self.assertGreaterEqual(self.in_flight("slow"), 2, "requests never reached the model")
        d.stub().RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="slow"),
                                       timeout=120)
        code, details = status_of(d.stub().ModelInfer, req, timeout=60)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND, details)
        for f in futures:
            code, resp = status_of(f.result)
            self.assertEqual(code, grpc.StatusCode.OK, "a request accepted before the unload: %s" % (resp,))
            self.assertEqual(response_outputs(resp)["y"].shape, (256, 1024))
        code, _ = status_of(d.stub().ModelInfer, req, timeout=60)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, r = status_of(d.stub().ModelReady, pb.ModelReadyRequest(name="slow"), timeout=10)
        self.assertTrue(code == grpc.StatusCode.NOT_FOUND or (code == grpc.StatusCode.OK and not r.ready))
        # The other model is untouched.
        d.stub().ModelInfer(infer_request(DEMO, {"image": self.image}), timeout=30)
        d.stop_clean()

    def test_sigterm_during_load_loses_nothing(self):
        d = self.start(models={"slow": e2e_models.slow_matmul(depth=8)})
        x = np.ones((256, 1024), np.float32)
        req = infer_request("slow", {"x": x})
        n_clients = 16
        sigterm_at = [None]
        records = [[] for _ in range(n_clients)]     # (start, end, code, details)
        hard_stop = time.monotonic() + 90

        def client(i):
            channel = d.new_channel()
            stub = d.stub(channel)
            try:
                for _ in range(100000):
                    if time.monotonic() > hard_stop:
                        break
                    t = time.monotonic()
                    code, resp = status_of(stub.ModelInfer, req, timeout=60)
                    records[i].append((t, time.monotonic(), code,
                                       "" if code == grpc.StatusCode.OK else resp))
                    if sigterm_at[0] is not None and code != grpc.StatusCode.OK:
                        break              # shutting down: this client has seen the end
                    if sigterm_at[0] is not None and d.proc.poll() is not None:
                        break
            finally:
                channel.close()

        threads = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
        for t in threads:
            t.start()
        time.sleep(1.5)
        sigterm_at[0] = time.monotonic()
        d.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(120)
        self.assertFalse(any(t.is_alive() for t in threads))
        code = d.stop(timeout=60)
        self.assertEqual(code, 0, d.log_tail())
        d.assert_gone()
        d.check_log()

        t_sig = sigterm_at[0]
        flat = [r for rs in records for r in rs]
        in_flight = [r for r in flat if r[0] < t_sig < r[1]]
        completed_after = [r for r in in_flight if r[2] == grpc.StatusCode.OK]
        # Accepted = sent clearly before the signal (50 ms: far more than a loopback hop).
        lost = [r for r in flat if r[2] != grpc.StatusCode.OK
                and (r[0] < t_sig - 0.05 or r[2] != grpc.StatusCode.UNAVAILABLE)]
        refused = [r for r in flat if r[2] == grpc.StatusCode.UNAVAILABLE and r not in lost]
        print("sigterm: %d requests, %d in flight at SIGTERM (%d of them completed OK), "
              "%d refused after, %d lost" % (len(flat), len(in_flight), len(completed_after),
                                             len(refused), len(lost)))
        self.assertGreaterEqual(len(in_flight), 4, "too few requests in flight to mean anything")
        self.assertEqual([(r[2], r[3], round(t_sig - r[0], 3)) for r in lost][:5], [],
                         "%d accepted requests failed" % len(lost))


if __name__ == "__main__":
    run_tests()
