#!/usr/bin/python3
"""braidd's lifecycle under hostile timing, against a live braidd:

  1. readiness follows the drain: after SIGTERM, with requests still in flight, ServerReady
     and GET /v2/health/ready both say not ready (one source of truth);
  2. SIGTERM while loads run: loads are cancelled (none completes after the signal), every
     load request gets a clear status, braidd exits 0 within its exit timeout, no leak;
  3. loads are bounded: 40 concurrent loads of one model get RESOURCE_EXHAUSTED naming
     load_queue_limit past the bound, uploads past max_pending_upload_bytes likewise, and the
     server stays ready throughout (a load after start-up never makes the server unready).

No pass/fail decision depends on timing: the order of events is read from braidd's own log
(one loop thread writes it) or from the state the server reports. Every loop is bounded in
count and time."""

import json
import re
import signal
import threading
import time
import unittest

import grpc
import numpy as np

import e2e_models
from braidd_fixture import Braidd, pb, run_tests, status_of, load_request
from tensors import infer_request

TIME_LIMIT_S = 120.0
CLOSE_MARGIN_S = 10.0      # braidd's hard stop comes this long after the exit timeout


def log_lines_after(text, marker):
    """The lines of TEXT after the first line containing MARKER (None if it never appears)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if marker in line:
            return lines[i + 1:]
    return None


class Lifecycle(unittest.TestCase):

    def setUp(self):
        self.d = None

    def tearDown(self):
        if self.d is not None:
            self.d.kill()

    def start(self, args=(), models=None, wait_ready=True):
        self.d = Braidd(args=args)
        for name, data in (models or {}).items():
            e2e_models.write_repository_model(self.d.repo, name, data)
        self.d.start()
        if wait_ready:
            self.d.wait_ready()
        return self.d

    def http_ready(self):
        status, body, _ = self.d.http_get("/v2/health/ready")
        return status, body.decode("utf-8", "replace")

    def grpc_ready(self, stub):
        return stub.ServerReady(pb.ServerReadyRequest(), timeout=10).ready

    # ---- 1. readiness during the drain ---------------------------------------------------

    def test_sigterm_readiness_false_on_both_probes_while_requests_drain(self):
        # The exit timeout is not under test here, and a busy machine drains 48 of these
        # slowly: it is set far above what the drain needs, so only a lost request can fail.
        d = self.start(args=("--exit-timeout-secs", "300"),
                       models={"slow": e2e_models.slow_matmul(depth=48)})
        stub = d.stub()
        self.assertTrue(self.grpc_ready(stub))
        self.assertEqual(self.http_ready()[0], 200)
        req = infer_request("slow", {"x": np.ones((256, 1024), np.float32)})
        n = 48                                   # below the default queue_limit (64)
        lock = threading.Lock()
        done = []                                # (monotonic end time, status code)
        started = threading.Barrier(n + 1, timeout=60)

        def client():
            channel = d.new_channel()
            try:
                s = d.stub(channel)
                started.wait()
                code, _ = status_of(s.ModelInfer, req, timeout=TIME_LIMIT_S)
                with lock:
                    done.append((time.monotonic(), code))
            finally:
                channel.close()

        threads = [threading.Thread(target=client) for _ in range(n)]
        for t in threads:
            t.start()
        started.wait()
        # Until every request reached braidd: finished (counted first, so no request is
        # counted twice) plus held by braidd now (queued + running, its gauges). Bounded.
        deadline = time.monotonic() + 60
        seen = 0
        while time.monotonic() < deadline and seen < n:
            with lock:
                finished = len(done)
            _, body, _ = d.http_get("/metrics")
            held = sum(int(v) for v in re.findall(
                r'braid_(?:queued|inflight)_requests\{[^}]*model="slow"[^}]*\} (\d+)', body.decode()))
            seen = finished + held
            time.sleep(0.005)
        self.assertEqual(seen, n, "not every request reached braidd before the signal")
        d.send_signal(signal.SIGTERM)
        # gRPC first (until the signal is handled), then HTTP at once, then gRPC again.
        grpc_ready = True
        for _ in range(2000):
            grpc_ready = self.grpc_ready(stub)
            if not grpc_ready:
                break
            time.sleep(0.005)
        http_status, http_body = self.http_ready()
        grpc_again = self.grpc_ready(stub)
        import health_pb2                        # answered on the cq thread, as ServerReady
        health_again = d.health_stub().Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        probed_at = time.monotonic()
        for t in threads:
            t.join(TIME_LIMIT_S)
        self.assertFalse(any(t.is_alive() for t in threads))
        code = d.stop(timeout=300)
        self.assertFalse(grpc_ready, "ServerReady stayed true after SIGTERM")
        self.assertEqual(http_status, 503, "GET /v2/health/ready during the drain: %s" % http_body)
        self.assertIn("shutting down", http_body)
        self.assertFalse(grpc_again)
        self.assertEqual(health_again.status, health_pb2.HealthCheckResponse.NOT_SERVING)
        self.assertEqual(code, 0, d.log_tail())
        d.assert_gone()
        d.check_log()
        # The probes ran while the drain was open: requests completed after them.
        after = [c for (t, c) in done if t > probed_at]
        self.assertGreater(len(after), 0, "the drain was over before the probes: nothing proven")
        # Every request accepted before SIGTERM completed (none refused or lost).
        self.assertEqual([c for (_, c) in done if c != grpc.StatusCode.OK], [])
        print("drain: %d requests, %d completed after both probes said not ready" % (len(done), len(after)))

    # ---- 2. SIGTERM while loads run --------------------------------------------------------

    def test_sigterm_cancels_running_and_waiting_loads(self):
        models = 4
        per_model = 5                            # 1 running + 4 waiting (load_queue_limit 4)
        exit_timeout = 30
        d = self.start(["--no-load-at-start", "--exit-timeout-secs", str(exit_timeout)],
                       models={"big%d" % i: e2e_models.slow_matmul(depth=96) for i in range(models)})
        results = []
        lock = threading.Lock()

        def loader(name):
            channel = d.new_channel()
            try:
                code, details = status_of(d.stub(channel).RepositoryModelLoad, load_request(name),
                                          timeout=TIME_LIMIT_S)
                with lock:
                    results.append((name, code, details))
            finally:
                channel.close()

        threads = [threading.Thread(target=loader, args=("big%d" % (i % models),))
                   for i in range(models * per_model)]
        for t in threads:
            t.start()
        # Until every model is LOADING (bounded), so the signal meets running loads.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            idx = d.stub().RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10).models
            if sum(1 for m in idx if m.state == "LOADING") == models:
                break
            time.sleep(0.01)
        t_sig = time.monotonic()
        d.send_signal(signal.SIGTERM)
        # Exit 0 within the exit timeout plus the ports' close, never by the hard stop.
        code = d.stop(timeout=exit_timeout + CLOSE_MARGIN_S)
        took = time.monotonic() - t_sig
        for t in threads:
            t.join(TIME_LIMIT_S)
        self.assertFalse(any(t.is_alive() for t in threads))
        self.assertEqual(code, 0, d.log_tail())
        d.assert_gone()
        d.check_log()
        log = d.log_text()
        self.assertNotIn("exiting now", log)              # not the hard stop
        after = log_lines_after(log, "SIGTERM: shutting down")
        self.assertIsNotNone(after, d.log_tail())
        loaded_after = [line for line in after if "loaded in" in line]
        self.assertEqual(loaded_after, [], "loads completed after SIGTERM")
        self.assertTrue(any("load cancelled" in line for line in after), d.log_tail())
        # Every load got an answer: OK (done before the signal) or UNAVAILABLE saying why.
        self.assertEqual(len(results), models * per_model)
        bad = [r for r in results if r[1] not in (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE)]
        self.assertEqual(bad, [])
        unavailable = [r for r in results if r[1] == grpc.StatusCode.UNAVAILABLE]
        self.assertGreater(len(unavailable), 0)
        for r in unavailable:
            self.assertIn("shutting down", r[2])
        print("sigterm with %d loads: exit after %.2f s, %d answered UNAVAILABLE, %d OK before the signal"
              % (len(results), took, len(unavailable), len(results) - len(unavailable)))

    def test_exit_timeout_abandons_loads_and_drops_queued_requests(self):
        """At the exit timeout (0 s here) nothing is waited for: queued requests and running
        loads are answered UNAVAILABLE at once, the loads' results are discarded when their
        step ends, and braidd still exits 0 with nothing leaked."""
        d = self.start(["--exit-timeout-secs", "0"],
                       models={"slow": e2e_models.slow_matmul(depth=48),
                               "big": e2e_models.slow_matmul(depth=96)})
        d.stub().RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="big"), timeout=30)
        req = infer_request("slow", {"x": np.ones((256, 1024), np.float32)})
        n = 24
        results = []
        lock = threading.Lock()

        def call(fn):
            channel = d.new_channel()
            try:
                r = fn(d.stub(channel))
                with lock:
                    results.append(r)
            finally:
                channel.close()

        infer = lambda s: ("infer",) + status_of(s.ModelInfer, req, timeout=TIME_LIMIT_S)
        load = lambda s: ("load",) + status_of(s.RepositoryModelLoad, load_request("big"),
                                               timeout=TIME_LIMIT_S)
        threads = [threading.Thread(target=call, args=(infer,)) for _ in range(n)]
        threads.append(threading.Thread(target=call, args=(load,)))
        for t in threads:
            t.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            idx = {m.name: m.state for m in
                   d.stub().RepositoryIndex(pb.RepositoryIndexRequest(), timeout=10).models}
            _, body, _ = d.http_get("/metrics")
            held = sum(int(v) for v in re.findall(
                r'braid_(?:queued|inflight)_requests\{[^}]*model="slow"[^}]*\} (\d+)', body.decode()))
            if idx.get("big") == "LOADING" and held >= n // 2:
                break
            time.sleep(0.01)
        d.send_signal(signal.SIGTERM)
        code = d.stop(timeout=CLOSE_MARGIN_S + 30)
        for t in threads:
            t.join(TIME_LIMIT_S)
        self.assertFalse(any(t.is_alive() for t in threads))
        self.assertEqual(code, 0, d.log_tail())
        d.assert_gone()
        d.check_log()
        log = d.log_text()
        self.assertNotIn("exiting now", log)
        self.assertIn("exit timeout (0 ms)", log)
        after = log_lines_after(log, "SIGTERM: shutting down")
        self.assertEqual([line for line in after if "loaded in" in line], [])
        self.assertEqual(len(results), n + 1)
        bad = [r for r in results if r[1] not in (grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE)]
        self.assertEqual(bad, [], "every request gets OK or a clear UNAVAILABLE")
        load_result = [r for r in results if r[0] == "load"][0]
        self.assertEqual(load_result[1], grpc.StatusCode.UNAVAILABLE, load_result)
        self.assertIn("shutting down", load_result[2])

    def test_hard_stop_ends_a_load_stuck_in_one_step(self):
        """A load inside one long step (here a warm-up of ~1.6 TFLOP) outlives the exit
        timeout: its caller is answered UNAVAILABLE, and braidd exits 0 by itself at the
        latest exit timeout + 10 s, before systemd's TimeoutStopSec would SIGKILL it."""
        exit_timeout = 1
        d = self.start(["--no-load-at-start", "--exit-timeout-secs", str(exit_timeout)],
                       models={"huge": e2e_models.slow_matmul(depth=3000)})
        result = []

        def loader():
            channel = d.new_channel()
            try:
                result.append(status_of(d.stub(channel).RepositoryModelLoad, load_request("huge"),
                                        timeout=TIME_LIMIT_S))
            finally:
                channel.close()

        t = threading.Thread(target=loader)
        t.start()
        d.wait_state("huge", "LOADING")
        d.send_signal(signal.SIGTERM)
        code = d.stop(timeout=exit_timeout + CLOSE_MARGIN_S + 5)
        t.join(TIME_LIMIT_S)
        self.assertFalse(t.is_alive())
        self.assertEqual(code, 0, d.log_tail())
        d.assert_gone()
        d.check_log()
        self.assertEqual(result[0][0], grpc.StatusCode.UNAVAILABLE, result)
        self.assertIn("shutting down", result[0][1])
        log = d.log_text()
        self.assertNotIn("huge version=1 loaded in", log)
        print("hard stop: %s" % ("fired" if "exiting now" in log else "not needed (the step ended first)"))

    def test_exit_timeout_flags_and_deprecated_alias(self):
        d = self.start(["--drain-timeout-ms", "1500"], models={})
        self.assertEqual(d.stop(timeout=30), 0)
        self.assertIn("up to 1500 ms", d.log_text())
        d = self.start(["--drain-timeout-ms", "1500", "--exit-timeout-secs", "7"], models={})
        self.assertEqual(d.stop(timeout=30), 0)
        self.assertIn("up to 7000 ms", d.log_text())

    # ---- 3. bounded loads; readiness is not a load's business ------------------------------

    def test_concurrent_loads_are_bounded_and_server_stays_ready(self):
        queue = 2
        d = self.start(["--load-queue-limit", str(queue)],
                       models={"big": e2e_models.slow_matmul(depth=96)})
        n = 40
        results = []
        lock = threading.Lock()
        barrier = threading.Barrier(n, timeout=60)
        stop_probe = threading.Event()
        probes = []                              # (grpc ready, http status)

        def loader():
            channel = d.new_channel()
            try:
                s = d.stub(channel)
                barrier.wait()
                code, details = status_of(s.RepositoryModelLoad, load_request("big"), timeout=TIME_LIMIT_S)
                with lock:
                    results.append((code, details))
            finally:
                channel.close()

        def prober():
            stub = d.stub()
            for _ in range(100000):
                if stop_probe.is_set():
                    break
                probes.append((self.grpc_ready(stub), self.http_ready()[0]))
                time.sleep(0.005)

        p = threading.Thread(target=prober)
        p.start()
        threads = [threading.Thread(target=loader) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIME_LIMIT_S)
        stop_probe.set()
        p.join(30)
        self.assertFalse(any(t.is_alive() for t in threads) or p.is_alive())
        codes = [c for c, _ in results]
        ok = codes.count(grpc.StatusCode.OK)
        busy = [m for c, m in results if c == grpc.StatusCode.RESOURCE_EXHAUSTED]
        self.assertEqual(ok + len(busy), n, results)
        self.assertGreaterEqual(ok, 1)
        self.assertGreater(len(busy), 0, "40 concurrent loads all accepted: the queue is unbounded")
        for m in busy:
            self.assertIn("load_queue_limit %d" % queue, m)
        self.assertGreater(len(probes), 0)
        self.assertEqual([p for p in probes if p != (True, 200)], [],
                         "the server turned unready while a model loaded after start-up")
        # Still serving, and the model too.
        self.assertTrue(self.grpc_ready(d.stub()))
        d.wait_model("big")
        d.stop_clean()
        print("40 concurrent loads: %d OK, %d RESOURCE_EXHAUSTED; %d readiness probes all ready"
              % (ok, len(busy), len(probes)))

    def test_uploads_past_the_pending_bytes_bound_are_refused(self):
        limit = 1 << 20
        d = self.start(["--allow-uploads", "--max-pending-upload-bytes", str(limit),
                        "--load-queue-limit", "64"], models={})
        stub = d.stub()
        # One upload larger than the bound: refused at once, naming the bound.
        pad = b"\0" * (limit + 1)
        code, details = status_of(stub.RepositoryModelLoad,
                                  load_request("huge", {"1/model.onnx": e2e_models.tiny_add(),
                                                        "1/pad.bin": pad}), timeout=60)
        self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED, details)
        self.assertIn("max_pending_upload_bytes", details)
        # Concurrent uploads of 400 KiB each (a 256 KiB weight, slow to warm up): at most 2
        # fit under 1 MiB at once.
        model = e2e_models.slow_matmul(rows=64, n=256, depth=400)
        filler = b"\0" * max(0, 400 * 1024 - len(model))
        n = 24
        results = []
        lock = threading.Lock()
        barrier = threading.Barrier(n, timeout=60)

        def uploader(i):
            channel = d.new_channel()
            try:
                s = d.stub(channel)
                files = {"1/model.onnx": model, "1/filler.bin": filler}
                barrier.wait()
                code, details = status_of(s.RepositoryModelLoad, load_request("up%d" % (i % 3), files),
                                          timeout=TIME_LIMIT_S)
                with lock:
                    results.append((code, details))
            finally:
                channel.close()

        threads = [threading.Thread(target=uploader, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(TIME_LIMIT_S)
        self.assertFalse(any(t.is_alive() for t in threads))
        codes = [c for c, _ in results]
        busy = [m for c, m in results if c == grpc.StatusCode.RESOURCE_EXHAUSTED]
        self.assertEqual(codes.count(grpc.StatusCode.OK) + len(busy), n, results)
        self.assertGreaterEqual(codes.count(grpc.StatusCode.OK), 1)
        self.assertGreater(len(busy), 0, "uploads were never bounded")
        for m in busy:
            self.assertIn("max_pending_upload_bytes", m)
        self.assertTrue(self.grpc_ready(stub))
        d.stop_clean()
        print("%d concurrent uploads under a 1 MiB bound: %d OK, %d RESOURCE_EXHAUSTED"
              % (n, codes.count(grpc.StatusCode.OK), len(busy)))


if __name__ == "__main__":
    run_tests()
