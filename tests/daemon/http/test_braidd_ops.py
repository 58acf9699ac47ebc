#!/usr/bin/python3
"""braidd as systemd and Prometheus meet it: a real braidd on free loopback ports with the
demo repository.

- sd_notify: with $NOTIFY_SOCKET (a datagram socket this test owns) braidd sends READY=1,
  WATCHDOG=1 at half of $WATCHDOG_USEC, RELOADING=1 then READY=1 again on SIGHUP, and
  STOPPING=1 on SIGTERM, then exits 0.
- /metrics parses with the Prometheus project's own parser (python3-prometheus-client), every
  family has HELP and TYPE, histograms are cumulative and end with +Inf == _count.
- /v2/status has the schema docs/operations.md documents.

usage: test_braidd_ops.py BRAIDD SOURCE_ROOT
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

BRAIDD = None
SOURCE_ROOT = None
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer")

FAMILIES = {
    "braid_up": "gauge", "braid_process_start_time_seconds": "gauge",
    "braid_process_resident_memory_bytes": "gauge", "braid_process_virtual_memory_bytes": "gauge",
    "braid_rpc": "counter", "braid_rpc_unimplemented": "counter",
    "braid_model_loads": "counter", "braid_unloads": "counter",
    "braid_models_loaded": "gauge", "braid_model_state": "gauge",
    "braid_requests": "counter", "braid_request_duration_seconds": "histogram",
    "braid_inference_count": "counter", "braid_execution_count": "counter",
    "braid_inflight_requests": "gauge", "braid_queued_requests": "gauge",
    "braid_backend_seconds": "counter",
    "braid_plan_cache_plans": "gauge", "braid_plan_cache_bytes": "gauge",
    "braid_plan_compiles": "counter", "braid_plan_evictions": "counter",
    # Triton's names (daemon/stats/prometheus_triton.c); tests/e2e/test_metrics.py checks their values
    "nv_inference_request_success": "counter", "nv_inference_request_failure": "counter",
    "nv_inference_count": "counter", "nv_inference_exec_count": "counter",
    "nv_inference_request_duration_us": "counter", "nv_inference_queue_duration_us": "counter",
    "nv_inference_compute_input_duration_us": "counter",
    "nv_inference_compute_infer_duration_us": "counter",
    "nv_inference_compute_output_duration_us": "counter",
    "nv_inference_pending_request_count": "gauge", "nv_model_load_duration_secs": "gauge",
}


class Daemon:
    """braidd on 127.0.0.1:0 with a copy of the demo repository and a notify socket."""

    def __init__(self, watchdog_usec=400000):
        self.tmp = tempfile.mkdtemp(prefix="braid-ops-")
        self.repo = os.path.join(self.tmp, "models")
        shutil.copytree(os.path.join(SOURCE_ROOT, "daemon", "demo-repository"), self.repo)
        self.sock_path = os.path.join(self.tmp, "notify.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.sock_path)
        self.sock.settimeout(0.2)
        self.port_file = os.path.join(self.tmp, "ports")
        self.log_path = os.path.join(self.tmp, "braidd.log")
        env = dict(os.environ, NOTIFY_SOCKET=self.sock_path, WATCHDOG_USEC=str(watchdog_usec))
        env.pop("WATCHDOG_PID", None)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [BRAIDD, "--repository", self.repo, "--grpc-address", "127.0.0.1:0",
             "--http-address", "127.0.0.1:0", "--rest-address", "127.0.0.1:0", "--port-file", self.port_file],
            env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.messages = []
        deadline = time.monotonic() + 30
        while not os.path.exists(self.port_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("braidd did not start:\n" + self.logtext())
            time.sleep(0.02)
        with open(self.port_file) as f:
            self.grpc_port, self.http_port, self.rest_port = map(int, f.read().split())

    def logtext(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def wait_message(self, key, timeout=30):
        """Collect notify datagrams until one holds KEY (e.g. "READY=1"); return it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            self.messages.append(msg)
            if key in msg.split("\n"):
                return msg
        raise AssertionError(f"no {key} from braidd within {timeout}s; got {self.messages}\n"
                             + self.logtext())

    def get(self, path, method="GET"):
        req = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}", method=method)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def stop(self, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = "timeout"
        self.sock.close()
        self.log.close()
        log = self.logtext()
        for marker in SANITIZER_MARKERS:
            if marker in log:          # a sanitizer build of braidd reported a problem
                return f"sanitizer report ({marker})"
        return rc

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


class BraiddOps(unittest.TestCase):

    def setUp(self):
        self.d = Daemon()
        self.addCleanup(self.d.cleanup)

    def test_sd_notify_lifecycle(self):
        d = self.d
        ready = d.wait_message("READY=1")
        self.assertIn("STATUS=", ready)
        # WATCHDOG_USEC=400000: a keep-alive at least every 200 ms
        t0 = time.monotonic()
        for _ in range(3):
            d.wait_message("WATCHDOG=1", timeout=5)
        self.assertLess(time.monotonic() - t0, 3.0)
        d.proc.send_signal(signal.SIGHUP)
        d.wait_message("RELOADING=1")
        d.wait_message("READY=1")
        d.proc.send_signal(signal.SIGTERM)
        d.wait_message("STOPPING=1")
        self.assertEqual(d.stop(), 0, d.logtext())

    def test_metrics_parse_with_prometheus_parser(self):
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError:
            self.skipTest("python3-prometheus-client not installed (scripts/setup.sh)")
        d = self.d
        d.wait_message("READY=1")
        status, body, headers = d.get("/metrics")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        text = body.decode()
        families = {f.name: f for f in text_string_to_metric_families(text)}
        for name, kind in FAMILIES.items():
            self.assertIn(name, families, f"family {name} missing")
            self.assertEqual(families[name].type, kind, name)
            self.assertTrue(families[name].documentation, f"{name} has no HELP")
        # every sample line belongs to a family announced by HELP and TYPE just before it
        announced = set()
        for line in text.splitlines():
            if line.startswith("# TYPE "):
                announced.add(line.split()[2])
            elif not line.startswith("#"):
                name = line.split("{")[0].split(" ")[0]
                base = name
                for suffix in ("_bucket", "_sum", "_count"):
                    if name.endswith(suffix) and name[:-len(suffix)] in announced:
                        base = name[:-len(suffix)]
                self.assertIn(base, announced, line)

        state = {(s.labels["model"], s.labels["state"]): s.value
                 for s in families["braid_model_state"].samples}
        self.assertEqual(state[("tinycnn", "READY")], 1)
        self.assertEqual(state[("tinycnn", "LOADING")], 0)
        self.assertEqual(families["braid_models_loaded"].samples[0].value, 1)
        self.assertEqual(families["braid_up"].samples[0].value, 1)
        rss = families["braid_process_resident_memory_bytes"].samples[0].value
        self.assertGreater(rss, 1e6)
        start = families["braid_process_start_time_seconds"].samples[0].value
        self.assertLess(abs(start - time.time()), 120)

        outcomes = {s.labels["outcome"] for s in families["braid_requests"].samples
                    if s.labels["model"] == "tinycnn"}
        self.assertEqual(outcomes, {"success", "invalid", "not_found", "unavailable",
                                    "queue_full", "deadline", "cancelled", "internal"})
        backends = {s.labels["backend"] for s in families["braid_backend_seconds"].samples}
        self.assertIn("dnnl", backends)

        hist = families["braid_request_duration_seconds"]
        series = {}
        for s in hist.samples:
            key = (s.labels["model"], s.labels["version"], s.labels["phase"])
            series.setdefault(key, {"buckets": [], "count": None})
            if s.name.endswith("_bucket"):
                series[key]["buckets"].append((float(s.labels["le"]), s.value))
            elif s.name.endswith("_count"):
                series[key]["count"] = s.value
        self.assertEqual({k[2] for k in series}, {"queue", "compute", "total"})
        for key, h in series.items():
            les = [le for le, _ in h["buckets"]]
            vals = [v for _, v in h["buckets"]]
            self.assertEqual(les, sorted(les), key)
            self.assertEqual(les[-1], float("inf"), key)
            self.assertEqual(vals, sorted(vals), f"{key}: buckets not cumulative")
            self.assertEqual(vals[-1], h["count"], f"{key}: +Inf != _count")
        self.assertEqual(d.stop(), 0, d.logtext())

    def test_status_schema(self):
        d = self.d
        d.wait_message("READY=1")
        status, body, headers = d.get("/v2/status")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"], "application/json")
        doc = json.loads(body)
        srv = doc["server"]
        for key, kind in {"name": str, "version": str, "uptime_s": (int, float), "ready": bool,
                          "rpc_total": (int, float), "rpc_unimplemented": (int, float),
                          "loads": dict, "unloads": (int, float), "memory": dict,
                          "threads": (int, float)}.items():
            self.assertIsInstance(srv[key], kind, key)
        self.assertEqual(srv["name"], "braid")
        self.assertTrue(srv["ready"])
        self.assertGreater(srv["memory"]["rss_bytes"], 0)
        self.assertEqual(set(srv["loads"]), {"ok", "failed"})
        (m,) = doc["models"]
        self.assertEqual(set(m), {"name", "version", "state", "reason", "platform", "partition",
                                  "queue", "stats", "plan_cache", "batch_ladder"})
        self.assertEqual(m["batch_ladder"], [])                   # tinycnn does not batch
        self.assertEqual(set(m["plan_cache"]), {"plans", "bytes", "max_plans", "max_bytes", "hits",
                                                "compiles", "evictions", "weights_bytes",
                                                "weights_shared", "weights_shared_bytes"})
        self.assertGreaterEqual(m["plan_cache"]["plans"], 1)      # the warm-up's plan
        self.assertEqual((m["name"], m["version"], m["state"], m["platform"]),
                         ("tinycnn", "1", "READY", "onnx"))
        self.assertEqual(set(m["partition"]), {"nodes_imported", "nodes_planned", "steps",
                                               "fused_composites", "backends", "load_ms",
                                               "kernel_steps", "reorders", "reorder_bytes",
                                               "ref_kernels", "products", "int8_products",
                                               "subgraphs", "fallback_nodes"})
        (sub,) = m["partition"]["subgraphs"]          # the demo runs as one oneDNN subgraph
        self.assertEqual(sub["backend"], "dnnl")
        # its steps are the subgraph's, at least one per planned node that is no view
        self.assertEqual(sub["kernel_steps"], m["partition"]["kernel_steps"])
        self.assertGreaterEqual(sub["kernel_steps"], 1)
        self.assertEqual(sub["reorders"], m["partition"]["reorders"])
        self.assertGreaterEqual(sub["reorder_bytes"], 0)
        # the cliff guard: no reference kernel, and the implementations named with counts
        self.assertEqual((sub["ref_kernels"], m["partition"]["ref_kernels"]), (0, 0))
        # the FP32 demo's convolutions and its classifier, none in int8
        self.assertGreaterEqual(sub["products"], 2)
        self.assertEqual((sub["products"], sub["int8_products"]),
                         (m["partition"]["products"], m["partition"]["int8_products"]))
        self.assertEqual(sub["int8_products"], 0)
        self.assertRegex(sub["implementations"], r"^[^,]+ x\d+(, [^,]+ x\d+)*$")
        self.assertNotIn("ref", sub["implementations"])
        self.assertEqual(m["partition"]["fallback_nodes"], [])
        self.assertEqual(set(m["queue"]), {"queued", "in_flight", "limit"})
        st = m["stats"]
        for key in ("success", "fail", "queue", "compute_input", "compute_infer",
                    "compute_output"):
            self.assertEqual(set(st[key]), {"count", "ns"}, key)
        self.assertEqual(set(st["failures"]), {"invalid", "not_found", "unavailable",
                                               "queue_full", "deadline", "cancelled",
                                               "internal"})
        self.assertIn("dnnl", st["backend_ns"])
        # HEAD answers the same headers without a body
        status, body, headers = d.get("/v2/status", method="HEAD")
        self.assertEqual((status, body), (200, b""))
        self.assertEqual(d.stop(), 0, d.logtext())


def main():
    global BRAIDD, SOURCE_ROOT
    BRAIDD, SOURCE_ROOT = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0]], verbosity=2)


if __name__ == "__main__":
    main()
