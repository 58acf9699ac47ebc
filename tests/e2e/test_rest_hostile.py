#!/usr/bin/python3
"""braidd's REST and status ports against the clients of the audit's "Security round 3"
(daemon/http/http_server.h), over the real wire:

- pipelined infer and metadata requests, in one write and in random splits with pauses, so
  bytes arrive while an inference runs on a worker and right after its answer: every request
  answered, in order, with its own result (the identity model echoes each request's values,
  the demo model's answer is checked against its PyTorch reference);
- a slow-body flood, 5 addresses x 64 connections on each port that send a complete head and
  trickle the body: a probe from a sixth address is answered within a second on both ports;
- a request head made of many short headers: served at exactly 16 KiB, 431 one byte over."""

import json
import os
import random
import socket
import time

import numpy as np
from onnx import TensorProto, helper

import e2e_models
from braidd_fixture import SOURCE_ROOT, BraiddTestCase, run_tests

DEMO = "tinycnn"
HEAD_LIMIT = 16 * 1024


def echo_model():
    x = helper.make_tensor_value_info("x", TensorProto.INT64, [3])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, [3])
    node = helper.make_node("Identity", ["x"], ["y"], name="echo")
    return e2e_models._model(helper.make_graph([node], "echo", [x], [y]))


def fixture(name):
    return np.load(os.path.join(SOURCE_ROOT, "tests", "fixtures", "demo", name + ".npy"))


class Responses:
    """HTTP/1.1 responses read one after another from a socket."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _more(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed; unparsed: %r" % self.buf[:200])
        self.buf += chunk

    def next(self):
        """(status, headers, body) of the next response."""
        while b"\r\n\r\n" not in self.buf:
            self._more()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(self.buf) < n:
            self._more()
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(lines[0].split()[1]), headers, body


def request(method, path, body=b""):
    head = "%s %s HTTP/1.1\r\nHost: x\r\n" % (method, path)
    if body:
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    return head.encode() + b"\r\n" + body


def head_of(length):
    """A GET head of exactly LENGTH bytes, made of 5-byte headers ("a:b\\r\\n")."""
    start = b"GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n"
    rest = length - len(start) - 2
    shorts = (rest - 5) // 5
    pad = rest - 5 * shorts
    h = start + b"a:b\r\n" * shorts + b"p:" + b"p" * (pad - 4) + b"\r\n\r\n"
    assert len(h) == length
    return h


class RestHostile(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "echo", echo_model())

    def setUp(self):
        self.image = fixture("image")
        self.probs = fixture("probabilities")

    def pipeline(self, n, rng):
        """N requests of five kinds: (wire bytes, [check(status, body)])."""
        wire, checks = b"", []
        image = self.image.ravel().tolist()
        for i in range(n):
            kind = rng.randrange(5)
            if kind == 0:                    # the identity model: its own values back
                values = [i, -i, 1000 * i]
                body = json.dumps({"id": "r%d" % i, "inputs": [
                    {"name": "x", "datatype": "INT64", "shape": [3], "data": values}]}).encode()
                wire += request("POST", "/v2/models/echo/infer", body)

                def check(status, data, i=i, values=values):
                    self.assertEqual(status, 200, data)
                    out = json.loads(data)
                    self.assertEqual(out["id"], "r%d" % i)
                    self.assertEqual(out["outputs"][0]["data"], values)
                checks.append(check)
            elif kind == 1:                  # the demo model (a 12 KB JSON body)
                body = json.dumps({"id": "r%d" % i, "inputs": [
                    {"name": "image", "datatype": "FP32", "shape": list(self.image.shape),
                     "data": image}], "outputs": [{"name": "probabilities"}]}).encode()
                wire += request("POST", "/v2/models/%s/infer" % DEMO, body)

                def check(status, data, i=i):
                    self.assertEqual(status, 200, data)
                    out = json.loads(data)
                    self.assertEqual(out["id"], "r%d" % i)
                    got = np.array(out["outputs"][0]["data"], np.float32).reshape(self.probs.shape)
                    np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-6)
                checks.append(check)
            elif kind == 2:
                wire += request("GET", "/v2/models/%s" % DEMO)
                checks.append(lambda status, data: (
                    self.assertEqual(status, 200, data),
                    self.assertEqual(json.loads(data)["name"], DEMO)))
            elif kind == 3:
                wire += request("GET", "/v2/models/echo/ready")
                checks.append(lambda status, data: self.assertEqual(status, 200, data))
            else:
                wire += request("GET", "/v2/models/echo")
                checks.append(lambda status, data: (
                    self.assertEqual(status, 200, data),
                    self.assertEqual(json.loads(data)["inputs"][0]["name"], "x")))
        return wire, checks

    def answered_in_order(self, sock, checks):
        r = Responses(sock)
        for k, check in enumerate(checks):
            status, _, data = r.next()
            with self.subTest(request=k):
                check(status, data)

    def test_pipelined_infer_and_metadata_in_one_write(self):
        wire, checks = self.pipeline(40, random.Random(1))
        with socket.create_connection(("127.0.0.1", self.d.rest_port), timeout=30) as s:
            s.sendall(wire)
            self.answered_in_order(s, checks)

    def test_pipelined_infer_and_metadata_in_random_splits(self):
        for seed in range(2, 6):
            rng = random.Random(seed)
            wire, checks = self.pipeline(30, rng)
            with socket.create_connection(("127.0.0.1", self.d.rest_port), timeout=30) as s:
                off = 0
                while off < len(wire):
                    n = rng.randint(1, 3000)
                    s.sendall(wire[off:off + n])
                    off += n
                    if rng.random() < 0.3:   # a pause: bytes land while an answer is computed
                        time.sleep(rng.random() * 0.004)
                self.answered_in_order(s, checks)

    def test_slow_body_flood_does_not_lock_out_probes(self):
        floods = []
        ports = [(self.d.rest_port, b"POST /v2/models/%s/infer HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: 100000\r\n\r\n{" % DEMO.encode()),
                 (self.d.http_port, b"POST /metrics HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: 60000\r\n\r\nx")]
        try:
            for port, head in ports:
                for peer in range(2, 7):     # 127.0.0.2 .. 127.0.0.6, 64 each: over 256
                    for _ in range(64):
                        s = socket.socket()
                        s.settimeout(5)
                        try:
                            s.bind(("127.0.0.%d" % peer, 0))
                            s.connect(("127.0.0.1", port))
                            s.sendall(head)
                        except OSError:
                            pass             # the server may close it at once
                        floods.append(s)
            for _ in range(2):               # the trickle: a byte now and then
                time.sleep(0.2)
                for s in floods:
                    try:
                        s.send(b" ", socket.MSG_DONTWAIT)
                    except OSError:
                        pass
            for port, path in ((self.d.http_port, "/v2/health/ready"),
                               (self.d.rest_port, "/v2/health/ready")):
                t0 = time.monotonic()
                with socket.socket() as p:
                    p.settimeout(1.0)
                    p.bind(("127.0.0.7", 0))
                    p.connect(("127.0.0.1", port))
                    p.sendall(request("GET", path))
                    status, _, data = Responses(p).next()
                self.assertEqual(status, 200, data)
                self.assertLess(time.monotonic() - t0, 1.0)
        finally:
            for s in floods:
                s.close()

    def test_head_of_many_short_headers_gets_431(self):
        for port in (self.d.rest_port, self.d.http_port):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(head_of(HEAD_LIMIT))
                status, _, data = Responses(s).next()
                self.assertEqual(status, 200, data)
            for length in (HEAD_LIMIT + 1, 40000, 64000):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                    try:
                        s.sendall(head_of(length))
                    except OSError:
                        pass                 # the server may stop reading at the limit
                    status, headers, _ = Responses(s).next()
                    self.assertEqual(status, 431, (port, length))
                    self.assertEqual(headers.get("connection"), "close")


if __name__ == "__main__":
    run_tests()
