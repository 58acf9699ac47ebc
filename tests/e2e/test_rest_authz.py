#!/usr/bin/python3
"""Security round 3 over the real REST socket of a live braidd with tokens and uploads on:

- an inference token never loads, unloads or replaces a model, whatever the spelling of the
  control path (the audit's trailing '/' and '%6Coad', and '//', '/./', '%2F', case, query
  strings, absolute-form targets): each answer is 400/403/404/405, the model keeps serving
  and its file is unchanged; the admin token still works on the canonical path;
- a JSON string holding a NUL (\\u0000) in an input name, datatype, output name, request id
  or parameter is refused with 400, not cut short and accepted."""

import base64
import hashlib
import json
import os
import shutil
import tempfile
import time
import unittest

import e2e_models
from braidd_fixture import Braidd, run_tests
from test_rest import DEMO, fixture, http_request

INFERENCE = "inference-token-" + "c3" * 16
ADMIN = "admin-token-" + "d4" * 16


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class RestAuthorization(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="braid-rest-authz-")
        tokens = os.path.join(cls.tmp, "tokens")
        with open(tokens, "w") as f:
            f.write("inference %s\nadmin %s\n" % (INFERENCE, ADMIN))
        os.chmod(tokens, 0o600)
        cls.d = Braidd(args=["--auth-token-file", tokens, "--allow-uploads"])
        cls.d.start()
        cls.d.wait_ready()
        cls.model_file = os.path.join(cls.d.repo, DEMO, "1", "model.onnx")

    @classmethod
    def tearDownClass(cls):
        cls.d.stop_clean()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def req(self, method, path, body=b"", token=INFERENCE, headers=None):
        h = {"Authorization": "Bearer " + token} if token else {}
        h.update(headers or {})
        return http_request(self.d.rest_port, method, path, body, h)

    def ready(self):
        return self.req("GET", "/v2/models/%s/ready" % DEMO)[0] == 200

    def test_inference_token_never_controls_a_model(self):
        before = digest(self.model_file)
        attacker = e2e_models.demo_fixture("image").tobytes()[:64]     # any bytes not a model
        upload = json.dumps({"parameters": {
            "file:2/model.onnx": base64.b64encode(attacker).decode()}}).encode()
        base = "/v2/repository/models/" + DEMO
        spellings = []
        for action in ("load", "unload"):
            p = base + "/" + action
            spellings += [
                p + "/", p + "//", base + "/%" + "%02X" % ord(action[0]) + action[1:],
                base + "/%" + "%02x" % ord(action[0]) + action[1:],
                "/v2//repository/models/%s/%s" % (DEMO, action),
                "/v2/repository/./models/%s/%s" % (DEMO, action),
                "/v2/repository/models/%s/x/../%s" % (DEMO, action),
                "/v2/repository/models/%s%%2F%s" % (DEMO, action),
                "/v2/repository%%2Fmodels/%s/%s" % (DEMO, action),
                base + "/" + action.upper(), p + "?x=1", p + "%3F", p + ";", p + "%00",
                "http://braidd%s" % p, "/v2/repository/models/%s/%s/." % (DEMO, action),
                "%%2Fv2/repository/models/%s/%s" % (DEMO, action),
            ]
        for path in spellings:
            for body in (b"", upload):
                status, _, data = self.req("POST", path, body)
                # 403: routed to the control operation itself, refused for the role
                self.assertIn(status, (400, 403, 404, 405), "%s -> %d %r" % (path, status, data))
        # nothing happened: the model serves, its file and version folders are as they were
        self.assertTrue(self.ready())
        self.assertEqual(digest(self.model_file), before)
        self.assertFalse(os.path.exists(os.path.join(self.d.repo, DEMO, "2")))
        status, _, body = self.req("POST", "/v2/repository/index")
        self.assertEqual(status, 200)
        self.assertEqual([m["state"] for m in json.loads(body) if m["name"] == DEMO], ["READY"])
        # the canonical path: 403 for the inference token, 200 for the admin token
        self.assertEqual(self.req("POST", base + "/load")[0], 403)
        self.assertEqual(self.req("POST", base + "/unload")[0], 403)
        self.assertEqual(self.req("POST", base + "/load", token=ADMIN)[0], 200)
        self.assertTrue(self.ready())

    def test_no_token_learns_nothing_about_routes(self):
        for path in ("/v2/repository/models/%s/load/" % DEMO, "/v2/nope", "/v2//models",
                     "/v2/models/%s/%%6Eope" % DEMO):
            self.assertEqual(self.req("POST", path, token=None)[0], 401, path)
        self.assertEqual(self.req("GET", "/v2/health/live", token=None)[0], 200)

    def test_nul_in_json_strings_is_refused(self):
        image = fixture("image")
        good = {"id": "r1", "inputs": [{"name": "image", "datatype": "FP32",
                                        "shape": list(image.shape),
                                        "data": image.flatten().tolist()}],
                "outputs": [{"name": "probabilities"}]}
        path = "/v2/models/%s/infer" % DEMO
        status, _, body = self.req("POST", path, json.dumps(good).encode())
        self.assertEqual(status, 200, body)

        def spoiled(where):
            r = json.loads(json.dumps(good))
            if where == "datatype":
                r["inputs"][0]["datatype"] = "FP32\u0000junk"
            elif where == "input":
                r["inputs"][0]["name"] = "image\u0000junk"
            elif where == "output":
                r["outputs"][0]["name"] = "probabilities\u0000junk"
            elif where == "id":
                r["id"] = "r1\u0000junk"
            elif where == "parameter":
                r["parameters"] = {"x\u0000y": 1}
            return json.dumps(r).encode()       # json.dumps writes the escape \u0000
        for where in ("datatype", "input", "output", "id", "parameter"):
            body = spoiled(where)
            self.assertIn(b"\\u0000", body)
            status, _, data = self.req("POST", path, body)
            self.assertEqual(status, 400, "%s: %d %r" % (where, status, data))
            self.assertIn(b"NUL", data)
        # a load's parameters and a register request: the same rule
        status, _, data = self.req("POST", "/v2/repository/models/%s/load" % DEMO,
                                   b'{"parameters": {"config": "{}\\u0000"}}', token=ADMIN)
        self.assertEqual(status, 400, data)
        self.assertTrue(self.ready())


if __name__ == "__main__":
    run_tests()
