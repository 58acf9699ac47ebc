#!/usr/bin/python3
"""braidd's HTTP/REST port (KServe v2 REST, docs/protocol.md "HTTP/REST") with curl and raw
sockets: JSON errors with Triton's status codes, a JSON infer checked against the demo model's
PyTorch reference, HTTP/1.1 itself (keep-alive, pipelining, chunked request bodies), and
hostile bytes — a huge Content-Length, bad and deeply nested JSON, shape/data mismatches,
binary sizes beyond the body, a gzip bomb, oversized heads — each answered with a 4xx while
braidd keeps serving."""

import gzip
import unittest
import json
import os
import re
import socket
import subprocess
import zlib

import numpy as np

import tempfile
import time

import e2e_models
from braidd_fixture import SOURCE_ROOT, Braidd, BraiddTestCase, run_tests

DEMO = "tinycnn"


def fixture(name):
    return np.load(os.path.join(SOURCE_ROOT, "tests", "fixtures", "demo", name + ".npy"))


def read_response(sock):
    """One HTTP/1.1 response from SOCK: (status, headers, body)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed before a response head: %r" % buf)
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, v = line.split(":", 1)
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:n], rest[n:]


def http_request(port, method, path, body=b"", headers=None, sock=None):
    """One request on SOCK (or a new connection to PORT): (status, headers, body)."""
    own = sock is None
    if own:
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    h = {"Host": "x", "Content-Length": str(len(body))}
    h.update(headers or {})
    head = "%s %s HTTP/1.1\r\n%s\r\n" % (method, path,
                                         "".join("%s: %s\r\n" % kv for kv in h.items()))
    sock.sendall(head.encode() + body)
    status, hdrs, data, _ = read_response(sock)
    if own:
        sock.close()
    return status, hdrs, data


# name, ONNX type, numpy type, JSON values: each through Identity, JSON in and out
TYPED = [
    ("i64", "INT64", np.int64, [-(2 ** 40), 0, 2 ** 40 + 3]),
    ("i32", "INT32", np.int32, [-7, 2 ** 31 - 1, 5]),
    ("i8", "INT8", np.int8, [-128, 0, 127]),
    ("u8", "UINT8", np.uint8, [0, 200, 255]),
    ("f64", "DOUBLE", np.float64, [0.1, -1e300, 3.0]),
    ("b", "BOOL", np.bool_, [True, False, True]),
]


def typed_identity_model():
    from onnx import TensorProto, helper
    ins, outs, nodes = [], [], []
    for name, onnx_type, _, _ in TYPED:
        t = getattr(TensorProto, onnx_type)
        ins.append(helper.make_tensor_value_info(name, t, [3]))
        outs.append(helper.make_tensor_value_info(name + "_out", t, [3]))
        nodes.append(helper.make_node("Identity", [name], [name + "_out"], name="id_" + name))
    return e2e_models._model(helper.make_graph(nodes, "typed", ins, outs))


class Rest(BraiddTestCase):

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "typed", typed_identity_model())

    def setUp(self):
        self.port = self.d.rest_port
        self.image = fixture("image")
        self.probs = fixture("probabilities")

    def request(self, method, path, body=b"", headers=None, sock=None):
        return http_request(self.port, method, path, body, headers, sock)

    def infer_body(self, data=None, shape=None):
        x = self.image
        return json.dumps({"inputs": [{"name": "image", "datatype": "FP32",
                                       "shape": shape or list(x.shape),
                                       "data": data if data is not None else x.ravel().tolist()}],
                           "outputs": [{"name": "probabilities"}]}).encode()

    def assert_error(self, status, data, want_status, want_text=None):
        self.assertEqual(status, want_status, data)
        err = json.loads(data)["error"]
        if want_text:
            self.assertIn(want_text, err)
        return err

    def assert_serving(self):
        status, _, data = self.request("POST", "/v2/models/%s/infer" % DEMO, self.infer_body())
        self.assertEqual(status, 200, data)
        got = np.array(json.loads(data)["outputs"][0]["data"], np.float32).reshape(self.probs.shape)
        np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-6)

    # ---- curl, as a user would ----------------------------------------------------------------

    def curl(self, *args):
        p = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}"] + list(args),
                           capture_output=True, text=True, timeout=60)
        body, _, code = p.stdout.rpartition("\n")
        return int(code), body

    def test_curl_json_infer_and_errors(self):
        base = "http://127.0.0.1:%d" % self.port
        code, body = self.curl(base + "/v2/health/ready")
        self.assertEqual(code, 200)
        code, body = self.curl("-X", "POST", "-H", "Content-Type: application/json",
                               "--data-binary", self.infer_body().decode(),
                               base + "/v2/models/%s/infer" % DEMO)
        self.assertEqual(code, 200, body)
        out = json.loads(body)["outputs"][0]
        self.assertEqual((out["name"], out["datatype"], out["shape"]), ("probabilities", "FP32", [1, 10]))
        np.testing.assert_allclose(np.array(out["data"]).reshape(1, 10), self.probs, rtol=1e-4, atol=1e-6)
        code, body = self.curl(base + "/v2/models/no_such_model")
        self.assert_error(code, body, 404, "no_such_model")
        code, body = self.curl(base + "/v2/models/%s/ready" % "no_such_model")
        self.assertEqual(code, 400)
        code, body = self.curl(base + "/v3/nothing")
        self.assert_error(code, body, 404)
        code, body = self.curl("-X", "DELETE", base + "/v2/models/%s" % DEMO)
        self.assert_error(code, body, 405)
        code, body = self.curl("-X", "POST", "--data-binary", "{", base + "/v2/models/%s/infer" % DEMO)
        self.assert_error(code, body, 400, "JSON")
        code, body = self.curl(base + "/v2/models/%s/versions/9" % DEMO)
        self.assertIn(code, (404, 503))
        # chunked request body (curl sends Transfer-Encoding: chunked when told to)
        code, body = self.curl("-X", "POST", "-H", "Transfer-Encoding: chunked",
                               "--data-binary", self.infer_body().decode(),
                               base + "/v2/models/%s/infer" % DEMO)
        self.assertEqual(code, 200, body)
        # the load/unload routes need the admin role only with tokens; without: uploads are off
        code, body = self.curl("-X", "POST", "--data-binary",
                               '{"parameters": {"file:1/model.onnx": "AAAA"}}',
                               base + "/v2/repository/models/up/load")
        self.assert_error(code, body, 400, "allow-uploads")

    def test_every_json_datatype_round_trips(self):
        wire = {"INT64": "INT64", "INT32": "INT32", "INT8": "INT8", "UINT8": "UINT8",
                "DOUBLE": "FP64", "BOOL": "BOOL"}
        body = {"inputs": [{"name": n, "datatype": wire[t], "shape": [3], "data": v}
                           for n, t, _, v in TYPED]}
        status, _, data = self.request("POST", "/v2/models/typed/infer", json.dumps(body).encode())
        self.assertEqual(status, 200, data)
        got = {o["name"]: o for o in json.loads(data)["outputs"]}
        for name, t, np_type, values in TYPED:
            o = got[name + "_out"]
            self.assertEqual((o["datatype"], o["shape"]), (wire[t], [3]))
            np.testing.assert_array_equal(np.array(o["data"], np_type), np.array(values, np_type))
        # the same outputs as binary data, checked against numpy's bytes
        body["parameters"] = {"binary_data_output": True}
        status, h, data = self.request("POST", "/v2/models/typed/infer", json.dumps(body).encode())
        self.assertEqual(status, 200, data)
        n = int(h["inference-header-content-length"])
        meta, blob = json.loads(data[:n]), data[n:]
        off = 0
        for o, (name, _, np_type, values) in zip(meta["outputs"], TYPED):
            size = o["parameters"]["binary_data_size"]
            self.assertEqual(blob[off:off + size], np.array(values, np_type).tobytes())
            off += size
        self.assertEqual(off, len(blob))
        # values a datatype cannot hold are refused, naming the input
        for name, dt, bad in (("i8", "INT8", 128), ("u8", "UINT8", -1), ("i32", "INT32", 1.5),
                              ("b", "BOOL", 1)):
            b2 = json.loads(json.dumps(body))
            del b2["parameters"]
            for i in b2["inputs"]:
                if i["name"] == name:
                    i["data"] = [bad, bad, bad]
            status, _, data = self.request("POST", "/v2/models/typed/infer", json.dumps(b2).encode())
            self.assert_error(status, data, 400, "'%s'" % name)

    def test_timeout_parameter_is_the_deadline(self):
        body = json.loads(self.infer_body())
        body["parameters"] = {"timeout": 1}          # 1 us: passed before a worker takes it
        status, _, data = self.request("POST", "/v2/models/%s/infer" % DEMO, json.dumps(body).encode())
        self.assert_error(status, data, 504, "deadline")
        body["parameters"] = {"timeout": 60 * 10 ** 6}
        status, _, data = self.request("POST", "/v2/models/%s/infer" % DEMO, json.dumps(body).encode())
        self.assertEqual(status, 200, data)
        body["parameters"] = {"timeout": "soon"}
        status, _, data = self.request("POST", "/v2/models/%s/infer" % DEMO, json.dumps(body).encode())
        self.assert_error(status, data, 400, "timeout")

    # ---- HTTP/1.1 -----------------------------------------------------------------------------

    def test_keep_alive_and_pipelining(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        for _ in range(3):
            status, _, data = self.request("POST", "/v2/models/%s/infer" % DEMO, self.infer_body(), sock=s)
            self.assertEqual(status, 200)
        # two requests in one write: two answers, in order
        a = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
        body = self.infer_body()
        b = (b"POST /v2/models/%s/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" %
             (DEMO.encode(), len(body))) + body
        c = b"GET /v2 HTTP/1.1\r\nHost: x\r\n\r\n"
        s.sendall(a + b + c)
        st1, _, _, rest = read_response(s)
        self.assertEqual(st1, 200)
        st2, _, d2 = self.request_continue(s, rest)
        self.assertEqual(st2, 200, d2)
        self.assertIn("outputs", json.loads(d2))
        s.close()

    def request_continue(self, s, rest):
        """Read the remaining pipelined responses (after REST bytes already read)."""
        class Pre:
            def __init__(self, s, pre):
                self.s, self.pre = s, pre

            def recv(self, n):
                if self.pre:
                    p, self.pre = self.pre, b""
                    return p
                return self.s.recv(n)
        st, h, d, rest2 = read_response(Pre(s, rest))
        st3, _, d3, _ = read_response(Pre(s, rest2))
        self.assertEqual(st3, 200)
        self.assertEqual(json.loads(d3)["name"], "braid")
        return st, h, d

    def test_expect_100_continue(self):
        # curl sends Expect: 100-continue for bodies over 1 KiB and waits up to a second
        body = self.infer_body()
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.sendall(b"POST /v2/models/%s/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
                  b"Expect: 100-continue\r\n\r\n" % (DEMO.encode(), len(body)))
        interim = b""
        while b"\r\n\r\n" not in interim:
            interim += s.recv(4096)
        self.assertTrue(interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"), interim)
        s.sendall(body)

        class Pre:
            def __init__(self, pre):
                self.pre = pre

            def recv(self, n):
                if self.pre:
                    p, self.pre = self.pre, b""
                    return p
                return s.recv(n)
        status, _, data, _ = read_response(Pre(interim[len(b"HTTP/1.1 100 Continue\r\n\r\n"):]))
        self.assertEqual(status, 200, data)
        s.close()

    def test_binary_and_compressed_by_hand(self):
        raw = self.image.astype(np.float32).tobytes()
        header = json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                         "parameters": {"binary_data_size": len(raw)}}],
                             "outputs": [{"name": "probabilities",
                                          "parameters": {"binary_data": True}}]}).encode()
        body = gzip.compress(header + raw)
        status, h, data = self.request("POST", "/v2/models/%s/infer" % DEMO, body,
                                       {"Inference-Header-Content-Length": str(len(header)),
                                        "Content-Encoding": "gzip", "Accept-Encoding": "deflate"})
        self.assertEqual(status, 200, data)
        self.assertEqual(h["content-encoding"], "deflate")
        data = zlib.decompress(data)
        n = int(h["inference-header-content-length"])
        meta = json.loads(data[:n])
        self.assertEqual(meta["outputs"][0]["parameters"]["binary_data_size"], 40)
        got = np.frombuffer(data[n:], np.float32).reshape(1, 10)
        np.testing.assert_allclose(got, self.probs, rtol=1e-4, atol=1e-6)

    # ---- hostile bytes ------------------------------------------------------------------------

    def test_hostile_requests_get_4xx_and_braidd_keeps_serving(self):
        path = "/v2/models/%s/infer" % DEMO
        # a body larger than max_message_bytes, declared: refused before it is read
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999\r\n\r\n" % path.encode())
        status, _, data, _ = read_response(s)
        self.assertEqual(status, 413)
        self.assertIn("error", json.loads(data))
        s.close()
        cases = [
            (b"{", None, 400, "JSON"),
            (b"[1, 2]", None, 400, "inputs"),
            (b"[" * 100000 + b"]" * 100000, None, 400, "nests deeper"),
            (b'{"inputs": [' + b"1," * 3000000 + b"1]}", None, 400, "values"),
            (self.infer_body(data=[1.0] * 5), None, 400, "elements"),
            (self.infer_body(data=["a"] * 3072), None, 400, "not a number"),
            (self.infer_body(shape=[1, 3, 32, -32]), None, 400, "dim"),
            (self.infer_body(shape=[2 ** 40, 2 ** 40, 3, 32]), None, 400, "too many elements"),
            (json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                     "parameters": {"binary_data_size": 12288}}]}).encode() + b"abc",
             None, 400, None),
            (json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                     "parameters": {"binary_data_size": 10 ** 15}}]}).encode() + b"abcd",
             "exact", 400, "bytes left"),
            (b'{"inputs": []}abc', "7", 400, None),
            (b'{"inputs": []}', "99999", 400, "Inference-Header-Content-Length"),
            (json.dumps({"inputs": [{"name": "image", "datatype": "NOPE", "shape": [1],
                                     "data": [1]}]}).encode(), None, 400, "datatype"),
            (json.dumps({"inputs": [{"name": "image", "datatype": "FP32", "shape": [1, 3, 32, 32],
                                     "data": self.image.ravel().tolist()}],
                         "outputs": [{"name": "probabilities", "parameters": {"x": 1}}]}).encode(),
             None, 400, "unknown parameter"),
        ]
        for body, hlen, want, text in cases:
            headers = {}
            if hlen == "exact":
                headers["Inference-Header-Content-Length"] = str(len(body) - 4)
            elif hlen:
                headers["Inference-Header-Content-Length"] = hlen
            status, _, data = self.request("POST", path, body, headers)
            self.assert_error(status, data, want, text)
        # a gzip bomb: inflates past max_message_bytes (1 GiB of zeros, ~1 MB compressed)
        bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
        z = b"".join(bomb.compress(b"\0" * (1 << 24)) for _ in range(64)) + bomb.flush()
        status, _, data = self.request("POST", path, z, {"Content-Encoding": "gzip"})
        self.assert_error(status, data, 413, "over the limit")
        status, _, data = self.request("POST", path, b"not gzip", {"Content-Encoding": "gzip"})
        self.assert_error(status, data, 400, "corrupt")
        status, _, data = self.request("POST", path, b"{}", {"Content-Encoding": "br"})
        self.assert_error(status, data, 400, "Content-Encoding")
        # an oversized head
        status, _, data = self.request("GET", "/v2", b"", {"X-Big": "a" * 70000})
        self.assertEqual(status, 431)
        # garbage instead of HTTP
        s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        s.sendall(b"\x16\x03\x01 not http at all\r\n\r\n")
        status, _, _, _ = read_response(s)
        self.assertEqual(status, 400)
        s.close()
        self.assert_serving()
        self.d.assert_running()


class RestCancel(BraiddTestCase):
    """A client that closes its connection while its request is queued cancels it (one worker,
    two long requests ahead of it): counted as a CANCELED failure, as a gRPC cancellation."""

    braidd_args = ("--workers", "1")

    @classmethod
    def prepare_repository(cls, repo):
        e2e_models.write_repository_model(repo, "slow", e2e_models.slow_matmul(depth=48))

    def metric(self, pattern):
        _, body, _ = self.d.http_get("/metrics")
        m = re.search(pattern, body.decode())
        return int(float(m.group(1))) if m else 0

    def test_closed_connection_cancels_its_queued_request(self):
        port = self.d.rest_port
        raw = np.ones((256, 1024), np.float32).tobytes()
        hdr = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [256, 1024],
                                      "parameters": {"binary_data_size": len(raw)}}],
                          "outputs": [{"name": "y", "parameters": {"binary_data": True}}]}).encode()
        req = (b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
               b"Inference-Header-Content-Length: %d\r\n\r\n" % (len(hdr) + len(raw), len(hdr))) + hdr + raw
        held = lambda: self.metric(r'braid_(?:queued)_requests\{[^}]*model="slow"[^}]*\} (\d+)') + \
            self.metric(r'braid_(?:inflight)_requests\{[^}]*model="slow"[^}]*\} (\d+)')
        socks = []
        for want in (1, 2, 3):                       # two ahead, then the one to cancel
            s = socket.create_connection(("127.0.0.1", port), timeout=120)
            s.sendall(req)
            socks.append(s)
            deadline = time.monotonic() + 60
            while held() < want and time.monotonic() < deadline:
                time.sleep(0.005)
            self.assertEqual(held(), want, "request %d did not reach braidd" % want)
        socks[2].close()                             # the queued one's client goes away
        for s in socks[:2]:
            status, _, _, _ = read_response(s)
            self.assertEqual(status, 200)
            s.close()
        deadline = time.monotonic() + 60
        cancelled = r'nv_inference_request_failure\{model="slow",reason="CANCELED",version="1"\} (\d+)'
        while self.metric(cancelled) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertEqual(self.metric(cancelled), 1)
        self.assertEqual(self.metric(r'nv_inference_request_success\{model="slow",version="1"\} (\d+)'), 2)


class RestTokens(unittest.TestCase):
    """The REST port with --auth-token-file: health open, infer needs a token, load the admin
    role (401 without a token, 403 with an inference token)."""

    INFERENCE = "inference-token-" + "a1" * 16
    ADMIN = "admin-token-" + "b2" * 16

    def test_roles(self):
        tmp = tempfile.mkdtemp(prefix="braid-rest-tokens-")
        path = os.path.join(tmp, "tokens")
        with open(path, "w") as f:
            f.write("inference %s\nadmin %s\n" % (self.INFERENCE, self.ADMIN))
        os.chmod(path, 0o600)
        with Braidd(args=["--auth-token-file", path]) as d:
            def req(method, p, body=b"", token=None):
                h = {"Authorization": "Bearer " + token} if token else {}
                return http_request(d.rest_port, method, p, body, h)
            deadline = time.monotonic() + 60
            while req("GET", "/v2/health/ready")[0] != 200 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.assertEqual(req("GET", "/v2/health/ready")[0], 200)
            self.assertEqual(req("GET", "/v2/models/" + DEMO)[0], 401)
            self.assertEqual(req("GET", "/v2/models/" + DEMO, token="wrong" * 5)[0], 401)
            self.assertEqual(req("GET", "/v2/models/" + DEMO, token=self.INFERENCE)[0], 200)
            self.assertEqual(req("POST", "/v2/repository/models/%s/unload" % DEMO,
                                 token=self.INFERENCE)[0], 403)
            self.assertEqual(req("POST", "/v2/repository/models/%s/load" % DEMO,
                                 token=self.ADMIN)[0], 200)


if __name__ == "__main__":
    run_tests()
