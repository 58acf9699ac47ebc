#!/usr/bin/python3
"""/metrics after real traffic, read as Prometheus reads it (python3-prometheus-client's own
parser): Triton's nv_inference_* families move exactly as Triton's do (requests counted once,
inferences by batch, durations in microseconds, failures under Triton's reason labels), and
braid's per-phase latency histograms count the same requests.

One braidd with one worker and a queue of 2, so requests queue behind a slow model and the
queue overflows on demand."""

import concurrent.futures
import time

import grpc
import numpy as np

import e2e_models
from braidd_fixture import BraiddTestCase, run_tests, status_of
from tensors import infer_request

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:                               # scripts/setup.sh installs it
    text_string_to_metric_families = None

DEMO = "tinycnn"
REASONS = ("REJECTED", "CANCELED", "BACKEND", "OTHER")
# Triton's families and types (triton-inference-server/core src/metrics.cc)
TRITON_FAMILIES = {
    "nv_inference_request_success": "counter", "nv_inference_request_failure": "counter",
    "nv_inference_count": "counter", "nv_inference_exec_count": "counter",
    "nv_inference_request_duration_us": "counter", "nv_inference_queue_duration_us": "counter",
    "nv_inference_compute_input_duration_us": "counter",
    "nv_inference_compute_infer_duration_us": "counter",
    "nv_inference_compute_output_duration_us": "counter",
    "nv_inference_pending_request_count": "gauge", "nv_model_load_duration_secs": "gauge",
}


class Scrape:
    """One /metrics scrape, parsed: value(family, model, **labels)."""

    def __init__(self, daemon):
        status, body, headers = daemon.http_get("/metrics")
        assert status == 200, status
        self.text = body.decode()
        self.families = {f.name: f for f in text_string_to_metric_families(self.text)}

    def value(self, family, model, sample_suffix="", **labels):
        fam = self.families[family]
        want = dict(labels, model=model)
        hits = [s.value for s in fam.samples
                if (not sample_suffix or s.name == family + sample_suffix)
                and all(s.labels.get(k) == v for k, v in want.items())]
        assert len(hits) == 1, (family, want, hits)
        return hits[0]


class TritonMetrics(BraiddTestCase):

    braidd_args = ("--workers", "1", "--queue-limit", "2")

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "slow", e2e_models.slow_matmul(depth=48))
        # a request that holds the one worker long enough (~0.5 s alone on a Zen 4 core pair)
        # for the others to queue behind it however loaded the machine is
        e2e_models.write_repository_model(repo, "blocker", e2e_models.slow_matmul(depth=200))
        e2e_models.write_repository_model(repo, "batched", e2e_models.batch_add_one())
        e2e_models.write_model_config(repo, "batched", {"max_batch_size": 8})

    def setUp(self):
        if text_string_to_metric_families is None:
            self.skipTest("python3-prometheus-client not installed (scripts/setup.sh)")

    def scrape(self):
        return Scrape(self.d)

    def slow_request(self, model="slow"):
        return infer_request(model, {"x": np.ones((256, 1024), np.float32)})

    def test_families_have_tritons_types_and_help(self):
        s = self.scrape()
        for name, kind in TRITON_FAMILIES.items():
            self.assertIn(name, s.families, name)
            self.assertEqual(s.families[name].type, kind, name)
            self.assertTrue(s.families[name].documentation, name)
        # every loaded model has all four failure series, and a load time
        for model in (DEMO, "slow", "blocker", "batched"):
            for reason in REASONS:
                s.value("nv_inference_request_failure", model, reason=reason, version="1")
            self.assertGreater(s.value("nv_model_load_duration_secs", model, version="1"), 0)

    def test_counts_and_durations_follow_requests(self):
        image = e2e_models.demo_fixture("image")
        before = self.scrape()
        n = 5
        for _ in range(n):
            self.stub.ModelInfer(infer_request(DEMO, {"image": image}), timeout=30)
        # one request with the wrong shape: refused before it runs (Triton's reason OTHER)
        bad = infer_request(DEMO, {"image": np.zeros((1, 2, 3), np.float32)})
        code, details = status_of(self.stub.ModelInfer, bad, timeout=30)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, details)
        after = self.scrape()

        def delta(family, suffix="", **labels):
            return (after.value(family, DEMO, suffix, **labels)
                    - before.value(family, DEMO, suffix, **labels))

        self.assertEqual(delta("nv_inference_request_success"), n)
        self.assertEqual(delta("nv_inference_count"), n)
        self.assertEqual(delta("nv_inference_exec_count"), n)
        self.assertEqual(delta("nv_inference_request_failure", reason="OTHER"), 1)
        for reason in ("REJECTED", "CANCELED", "BACKEND"):
            self.assertEqual(delta("nv_inference_request_failure", reason=reason), 0, reason)
        for family in ("nv_inference_request_duration_us", "nv_inference_compute_infer_duration_us"):
            self.assertGreater(delta(family), 0, family)
        for family in ("nv_inference_queue_duration_us", "nv_inference_compute_input_duration_us",
                       "nv_inference_compute_output_duration_us"):
            self.assertGreaterEqual(delta(family), 0, family)
        # the parts never exceed the whole
        parts = sum(after.value(f, DEMO) for f in (
            "nv_inference_queue_duration_us", "nv_inference_compute_input_duration_us",
            "nv_inference_compute_infer_duration_us", "nv_inference_compute_output_duration_us"))
        self.assertLessEqual(parts, after.value("nv_inference_request_duration_us", DEMO) + 4)
        # the same numbers as braid's own families
        self.assertEqual(after.value("nv_inference_request_success", DEMO),
                         after.value("braid_requests", DEMO, outcome="success"))
        self.assertEqual(after.value("nv_inference_request_failure", DEMO, reason="OTHER"),
                         sum(after.value("braid_requests", DEMO, outcome=o)
                             for o in ("invalid", "not_found", "unavailable")))
        # the per-phase histograms count the same requests
        for phase in ("queue", "compute", "total"):
            d = delta("braid_request_duration_seconds", "_count", phase=phase)
            self.assertEqual(d, n, phase)
            inf = after.value("braid_request_duration_seconds", DEMO, "_bucket", phase=phase,
                              le="+Inf")
            self.assertEqual(inf, after.value("braid_request_duration_seconds", DEMO, "_count",
                                              phase=phase), phase)
        self.assertGreater(delta("braid_request_duration_seconds", "_sum", phase="total"), 0)
        self.assertGreater(delta("braid_request_duration_seconds", "_sum", phase="compute"), 0)
        # total time in the histogram and in Triton's counter agree (seconds vs microseconds)
        total_s = delta("braid_request_duration_seconds", "_sum", phase="total")
        self.assertAlmostEqual(total_s * 1e6, delta("nv_inference_request_duration_us"),
                               delta=2 * n)

    def test_batch_counts_inferences_not_requests(self):
        before = self.scrape()
        x = np.zeros((3, 4), np.float32)
        self.stub.ModelInfer(infer_request("batched", {"x": x}), timeout=30)
        after = self.scrape()
        for family, want in (("nv_inference_request_success", 1), ("nv_inference_exec_count", 1),
                             ("nv_inference_count", 3)):
            self.assertEqual(after.value(family, "batched") - before.value(family, "batched"),
                             want, family)

    def test_pending_count_while_requests_wait(self):
        """One worker: one slow request runs, two more wait; the gauge shows them, then 0."""
        seen = 0
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            # the first on the worker before the others arrive, so the queue (2) holds them
            futures = [pool.submit(status_of, self.stub.ModelInfer, self.slow_request("blocker"),
                                   timeout=120)]
            self.wait_pending("blocker", 0, running=True)
            futures += [pool.submit(status_of, self.stub.ModelInfer, self.slow_request("blocker"),
                                    timeout=120) for _ in range(2)]
            while not all(f.done() for f in futures):
                seen = max(seen, self.scrape().value("nv_inference_pending_request_count", "blocker"))
                time.sleep(0.005)
            codes = [f.result()[0] for f in futures]
        self.assertEqual(codes, [grpc.StatusCode.OK] * 3)
        self.assertEqual(seen, 2)
        self.assertEqual(self.scrape().value("nv_inference_pending_request_count", "blocker"), 0)
        after = self.scrape()
        self.assertGreater(after.value("nv_inference_queue_duration_us", "blocker"), 0)

    def test_queue_full_cancel_and_deadline_reasons(self):
        """Queue full and a deadline passed in the queue are REJECTED; a request cancelled
        while it waits is CANCELED; each counted once."""
        before = self.scrape()
        req = self.slow_request()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = [c for c, _ in pool.map(lambda _: status_of(self.stub.ModelInfer, req,
                                                                timeout=120), range(8))]
        full = codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertGreater(full, 0, codes)
        self.assertEqual(full + codes.count(grpc.StatusCode.OK), 8, codes)

        # one running (the blocker), one cancelled as it waits, and one whose deadline passes
        # as it waits: long enough to reach the queue, a third of the blocker's run
        blocker = self.slow_request("blocker")
        t0 = time.monotonic()
        self.stub.ModelInfer(blocker, timeout=120)
        late_timeout = (time.monotonic() - t0) / 3
        self.assertGreater(late_timeout, 0.05, "the blocker runs too fast to queue behind it")
        running = self.stub.ModelInfer.future(blocker, timeout=120)
        self.wait_pending("blocker", 0, running=True)
        cancelled = self.stub.ModelInfer.future(blocker, timeout=120)
        self.wait_pending("blocker", 1)
        late = self.stub.ModelInfer.future(blocker, timeout=late_timeout)
        self.wait_pending("blocker", 2)
        cancelled.cancel()
        self.assertEqual(late.exception().code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        running.result()
        self.wait_pending("blocker", 0)
        after = self.scrape()

        def delta(reason):
            return (after.value("nv_inference_request_failure", "slow", reason=reason)
                    - before.value("nv_inference_request_failure", "slow", reason=reason)
                    + after.value("nv_inference_request_failure", "blocker", reason=reason)
                    - before.value("nv_inference_request_failure", "blocker", reason=reason))
        deadline_s = 10
        t0 = time.monotonic()
        while delta("CANCELED") + delta("REJECTED") < full + 2 and time.monotonic() - t0 < deadline_s:
            time.sleep(0.05)
            after = self.scrape()
        self.assertEqual(delta("REJECTED"), full + 1)
        self.assertEqual(delta("CANCELED"), 1)
        self.assertEqual(delta("BACKEND"), 0)
        self.assertEqual(delta("OTHER"), 0)

    def wait_pending(self, model, want, running=False, timeout=30):
        """Until MODEL has WANT requests queued (and, with RUNNING, one on the worker)."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            s = self.scrape()
            inflight = s.value("braid_inflight_requests", model)
            if (s.value("nv_inference_pending_request_count", model) == want
                    and (not running or inflight == 1)):
                return
            time.sleep(0.005)
        self.fail("model %s: never %d pending%s" % (model, want, " with one running" if running else ""))


if __name__ == "__main__":
    run_tests()
