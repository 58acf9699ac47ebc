#!/usr/bin/env python3
"""The `braid` CLI's remote subcommands against a real braidd: models, load (by name and
from a file), unload, infer (.npy in and out, vs the PyTorch reference), status; --help
everywhere; exit codes 0/1/2; and what a user reads when the server is not there.

braidd is started by tests/e2e/braidd_fixture.py (free loopback ports, temporary copy of
daemon/demo-repository, uploads allowed) and stopped with SIGTERM (exit 0, no sanitizer report in its log)."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BRAID = os.environ.get("BRAID_CLI") or sys.argv.pop(1)
ROOT = os.environ["BRAID_SOURCE_ROOT"]
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from braidd_fixture import Braidd  # noqa: E402

FIX = os.path.join(ROOT, "tests", "fixtures", "demo")
DEMO_MODEL = os.path.join(ROOT, "daemon", "demo-repository", "tinycnn", "1", "model.onnx")
REMOTE = ("models", "load", "unload", "infer", "status")


def braid(*args, server=None, timeout=120, env=None):
    cmd = [BRAID, *args]
    if server:
        cmd += ["--server", server]
    e = dict(os.environ)
    e.pop("BRAID_SERVER", None)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)


class Offline(unittest.TestCase):
    """What needs no server."""

    def test_help_everywhere(self):
        for cmd in REMOTE:
            r = braid(cmd, "--help")
            self.assertEqual(r.returncode, 0, cmd)
            self.assertIn("usage: braid " + cmd, r.stdout)
            self.assertIn("--server HOST:PORT", r.stdout)
        self.assertIn("infer", braid("--help").stdout)

    def test_usage_errors_exit_2(self):
        for args in (["models", "extra"], ["load"], ["unload"], ["infer", "tinycnn"],
                     ["infer"], ["status", "extra"], ["load", "m", "--version", "2"],
                     ["models", "--timeout", "soon"], ["infer", "m", "--bogus"]):
            r = braid(*args)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
        r = braid("load", "m", "--file", DEMO_MODEL, "--version", "../x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--version expects a plain name", r.stderr)

    def test_unreachable_server_says_what_to_do(self):
        for args in (["models"], ["status"], ["unload", "m"], ["load", "m"],
                     ["infer", "m", "--input", "image=" + os.path.join(FIX, "image.npy")]):
            r = braid(*args, server="127.0.0.1:1")
            self.assertEqual(r.returncode, 1, args)
            self.assertIn("cannot reach braidd at 127.0.0.1:1", r.stderr)
            self.assertIn("is braidd running", r.stderr)

    def test_server_from_environment(self):
        r = braid("models", env={"BRAID_SERVER": "127.0.0.1:1"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("127.0.0.1:1", r.stderr)

    def test_default_server_is_named(self):
        r = braid("models", "--help")
        self.assertIn("127.0.0.1:8001", r.stdout)

    def test_bad_input_file_is_a_local_error(self):
        r = braid("infer", "m", "--input", "image=/nonexistent.npy", server="127.0.0.1:1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("/nonexistent.npy", r.stderr)
        self.assertNotIn("cannot reach", r.stderr)


def big_constant_model(path, megabytes):
    """y = x + c with c a [1, N] FP32 initializer of MEGABYTES MiB, written to PATH (ONNX)."""
    from onnx import TensorProto, helper, numpy_helper
    n = megabytes * (1 << 20) // 4
    c = numpy_helper.from_array(np.full((1, n), 0.5, np.float32), "c")
    g = helper.make_graph([helper.make_node("Add", ["x", "c"], ["y"], name="add")], "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


class Uploads(unittest.TestCase):
    """Uploads bigger than the old 256 MiB client limit go through when braidd's limit allows
    them; over braidd's limit the CLI says which flag to raise."""

    def test_upload_over_the_server_limit_says_what_to_do(self):
        d = Braidd(args=["--allow-uploads", "--max-message-bytes", "4096"]).start()
        try:
            d.wait_model("tinycnn")
            r = braid("load", "big", "--file", DEMO_MODEL, server="127.0.0.1:%d" % d.grpc_port)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("--max-message-bytes", r.stderr)
            self.assertIn("uploading", r.stderr)             # progress: what is happening
            d.stop_clean()
        finally:
            d.cleanup()

    def test_upload_larger_than_256_mib(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "big.onnx")
            big_constant_model(path, 260)
            size = os.path.getsize(path)
            self.assertGreater(size, 256 << 20)
            d = Braidd(args=["--allow-uploads", "--max-message-bytes", str(size + (4 << 20))]).start()
            try:
                d.wait_model("tinycnn")
                server = "127.0.0.1:%d" % d.grpc_port
                r = braid("load", "big", "--file", path, "--config", "{}", server=server, timeout=600)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("loaded 'big' version 1", r.stdout)
                self.assertIn("MB) to", r.stderr)
                d.stop_clean()
            finally:
                d.cleanup()


class Remote(unittest.TestCase):
    """Against one braidd for the whole class."""

    @classmethod
    def setUpClass(cls):
        cls.d = Braidd(args=["--allow-uploads"]).start()
        cls.d.wait_model("tinycnn")
        cls.server = "127.0.0.1:%d" % cls.d.grpc_port

    @classmethod
    def tearDownClass(cls):
        try:
            cls.d.stop_clean()      # SIGTERM: exit 0, nothing left, no sanitizer report
        finally:
            cls.d.cleanup()

    def run_ok(self, *args):
        r = braid(*args, server=self.server)
        self.assertEqual(r.returncode, 0, "%s\nstdout: %s\nstderr: %s" % (args, r.stdout, r.stderr))
        return r

    def check_probabilities(self, path):
        got = np.load(path)
        want = np.load(os.path.join(FIX, "probabilities.npy"))
        self.assertEqual(got.dtype, want.dtype)
        self.assertEqual(got.shape, want.shape)
        self.assertLessEqual(float(np.max(np.abs(got - want))), 1e-5)

    def test_models_lists_demo(self):
        r = self.run_ok("models")
        self.assertIn("MODEL", r.stdout)
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("tinycnn")]
        self.assertEqual(len(line), 1, r.stdout)
        self.assertIn("READY", line[0])
        self.assertIn("tinycnn", self.run_ok("models", "--ready").stdout)

    def test_infer_writes_npy_matching_pytorch(self):
        with tempfile.TemporaryDirectory() as out:
            r = self.run_ok("infer", "tinycnn", "--input", "image=" + os.path.join(FIX, "image.npy"),
                            "--output", out)
            self.assertIn("probabilities ->", r.stdout)
            self.check_probabilities(os.path.join(out, "probabilities.npy"))

    def test_infer_bare_file_and_summary(self):
        r = self.run_ok("infer", "tinycnn", "--input", os.path.join(FIX, "image.npy"), "--version", "1",
                        "--request-output", "probabilities")
        self.assertIn("probabilities: FP32 [", r.stdout)

    def test_infer_errors_name_the_problem(self):
        r = braid("infer", "tinycnn", "--input", "nope=" + os.path.join(FIX, "image.npy"), server=self.server)
        self.assertEqual(r.returncode, 1)
        self.assertIn("nope", r.stderr)
        r = braid("infer", "absent", "--input", "image=" + os.path.join(FIX, "image.npy"), server=self.server)
        self.assertEqual(r.returncode, 1)
        self.assertIn("absent", r.stderr)

    def test_load_file_infer_unload(self):
        r = self.run_ok("load", "cli_upload", "--file", DEMO_MODEL, "--version", "2", "--config", "{}")
        self.assertIn("loaded 'cli_upload' version 2", r.stdout)
        self.d.wait_model("cli_upload")
        with tempfile.TemporaryDirectory() as out:
            self.run_ok("infer", "cli_upload", "--input", "image=" + os.path.join(FIX, "image.npy"),
                        "--output", out)
            self.check_probabilities(os.path.join(out, "probabilities.npy"))
        self.assertIn("cli_upload", self.run_ok("models").stdout)
        self.run_ok("unload", "cli_upload")
        r = braid("infer", "cli_upload", "--input", "image=" + os.path.join(FIX, "image.npy"), server=self.server)
        self.assertEqual(r.returncode, 1)

    def test_load_by_name_and_config_file(self):
        self.run_ok("load", "tinycnn")
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "config.json")
            with open(cfg, "w") as f:
                f.write("{}")
            self.run_ok("load", "tinycnn", "--config", "@" + cfg)
            r = braid("load", "tinycnn", "--config", "@" + os.path.join(d, "absent.json"), server=self.server)
            self.assertEqual(r.returncode, 1)
            self.assertIn("absent.json", r.stderr)
        self.d.wait_model("tinycnn")
        r = braid("load", "no-such-model", server=self.server)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no-such-model", r.stderr)

    def test_status_shows_server_and_statistics(self):
        self.run_ok("infer", "tinycnn", "--input", os.path.join(FIX, "image.npy"))
        r = self.run_ok("status")
        self.assertIn("server:", r.stdout)
        self.assertIn("live, ready", r.stdout)
        self.assertIn("model_repository", r.stdout)
        rows = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("tinycnn")]
        self.assertTrue(rows, r.stdout)
        self.assertGreaterEqual(sum(int(row[2]) for row in rows), 1)   # INFER column


if __name__ == "__main__":
    unittest.main(verbosity=2)
