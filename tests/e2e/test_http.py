#!/usr/bin/python3
"""The HTTP status port as curl (or Prometheus, or Kubernetes) meets it."""

import json
import re
import socket

import e2e_models
from braidd_fixture import BraiddTestCase, pb, run_tests
from tensors import infer_request

DEMO = "tinycnn"


def samples(text, name):
    """{frozenset(labels): value} of the Prometheus samples of NAME in TEXT."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'^%s\{(.*)\} (\S+)$' % re.escape(name), line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
            out[labels] = float(m.group(2))
    return out


class Http(BraiddTestCase):

    def test_health_live(self):
        status, body, _ = self.d.http_get("/v2/health/live")
        self.assertEqual(status, 200, body)

    def test_health_ready(self):
        status, body, _ = self.d.http_get("/v2/health/ready")
        self.assertEqual(status, 200, body)

    def test_metrics(self):
        image = e2e_models.demo_fixture("image")
        for _ in range(3):
            self.stub.ModelInfer(infer_request(DEMO, {"image": image}), timeout=30)
        status, body, headers = self.d.http_get("/metrics")
        self.assertEqual(status, 200)
        self.assertTrue(headers.get("Content-Type", "").startswith("text/plain"), headers)
        text = body.decode()
        self.assertIn("# TYPE braid_requests_total counter", text)
        ok = [v for labels, v in samples(text, "braid_requests_total").items()
              if ("model", DEMO) in labels and ("outcome", "success") in labels]
        self.assertEqual(len(ok), 1, text)
        self.assertGreaterEqual(ok[0], 3)
        self.assertIn("braid_request_duration_seconds_bucket{", text)
        for family in ("braid_inflight_requests", "braid_queued_requests", "braid_models_loaded",
                       "braid_backend_seconds_total", "braid_process_resident_memory_bytes"):
            self.assertIn(family, text)

    def test_status_json(self):
        status, body, headers = self.d.http_get("/v2/status")
        self.assertEqual(status, 200)
        self.assertIn("application/json", headers.get("Content-Type", ""))
        doc = json.loads(body)
        self.assertEqual(doc["server"]["name"], "braid")
        models = {m["name"]: m for m in doc["models"]}
        demo = models[DEMO]
        self.assertEqual(demo["state"], "READY")
        self.assertEqual(demo["version"], "1")
        part = demo["partition"]
        self.assertGreater(part["steps"], 0)
        self.assertGreater(part["nodes_imported"], 0)
        self.assertGreater(sum(part["backends"].values()), 0)
        self.assertIn("queued", demo["queue"])

    def test_status_counts_requests(self):
        def count():
            doc = json.loads(self.d.http_get("/v2/status")[1])
            return [m for m in doc["models"] if m["name"] == DEMO][0]["stats"]["success"]["count"]
        before = count()
        self.stub.ModelInfer(infer_request(DEMO, {"image": e2e_models.demo_fixture("image")}),
                             timeout=30)
        self.assertEqual(count() - before, 1)

    def test_unknown_path_404(self):
        self.assertEqual(self.d.http_get("/v2/nope")[0], 404)

    def test_post_405(self):
        import urllib.request
        import urllib.error
        req = urllib.request.Request("http://127.0.0.1:%d/metrics" % self.d.http_port,
                                     data=b"x", method="POST")
        try:
            urllib.request.urlopen(req, timeout=10)
            code = 200
        except urllib.error.HTTPError as e:
            code = e.code
        self.assertEqual(code, 405)

    def test_garbage_request_then_still_serving(self):
        with socket.create_connection(("127.0.0.1", self.d.http_port), timeout=10) as s:
            s.sendall(b"\x00\xff NOT HTTP \r\n\r\n" * 4)
            try:
                s.recv(4096)
            except OSError:
                pass
        self.assertEqual(self.d.http_get("/v2/health/live")[0], 200)
        self.assertTrue(self.stub.ServerLive(pb.ServerLiveRequest(), timeout=10).live)


if __name__ == "__main__":
    run_tests()
