#!/usr/bin/env python3
"""The `braid` CLI as a user meets it: help, exit codes, errors that say what to do, and the
demo model's output against its PyTorch reference (tests/runtime/models/gen_demo.py)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BRAID = os.environ.get("BRAID_CLI") or sys.argv.pop(1)
# a TensorFlow GraphDef whose GatherTree only the TensorFlow engine runs (tests/tf/fixtures)
TF_FALLBACK = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1].endswith(".pb") else None
ROOT = os.environ["BRAID_SOURCE_ROOT"]
DEMO = os.path.join(ROOT, "daemon", "demo-repository", "tinycnn", "1", "model.onnx")
FIX = os.path.join(ROOT, "tests", "fixtures", "demo")


def braid(*args, timeout=120):
    return subprocess.run([BRAID, *args], capture_output=True, text=True, timeout=timeout)


class Cli(unittest.TestCase):
    def test_help_everywhere(self):
        for cmd in ([], ["run"], ["inspect"], ["bench"]):
            r = braid(*cmd, "--help")
            self.assertEqual(r.returncode, 0, cmd)
            self.assertIn("usage: braid", r.stdout)

    def test_version(self):
        for flag in ("--version", "-V"):
            r = braid(flag)
            self.assertEqual(r.returncode, 0, flag)
            self.assertRegex(r.stdout, r"^braid \d+\.\d+\.\d+\n$")

    def test_usage_errors_exit_2(self):
        self.assertEqual(braid().returncode, 2)
        r = braid("frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", r.stderr)
        self.assertEqual(braid("run").returncode, 2)
        r = braid("bench", DEMO, "--iters", "zero")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--iters expects a positive integer", r.stderr)

    def test_missing_input_names_it(self):
        r = braid("run", DEMO)
        self.assertEqual(r.returncode, 2)
        self.assertIn("input 'image' is missing", r.stderr)

    def test_unknown_input_lists_inputs(self):
        r = braid("run", DEMO, "--input", "nope=" + os.path.join(FIX, "image.npy"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("'nope' is not an input", r.stderr)
        self.assertIn("'image'", r.stderr)

    def test_wrong_shape_is_explained(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.npy")
            np.save(bad, np.zeros((1, 3, 32), np.float32))
            r = braid("run", DEMO, "--input", "image=" + bad)
            self.assertEqual(r.returncode, 1)
            self.assertIn("input 'image'", r.stderr)
            self.assertIn("expected", r.stderr)

    def test_bad_model_file_fails_cleanly(self):
        with tempfile.TemporaryDirectory() as d:
            junk = os.path.join(d, "junk.onnx")
            with open(junk, "wb") as f:
                f.write(b"\x0a\xff\xff\xff\xff\x0f not a model")
            r = braid("run", junk, "--input", os.path.join(FIX, "image.npy"))
            self.assertEqual(r.returncode, 1)
            self.assertIn("cannot load the model", r.stderr)
            r = braid("inspect", os.path.join(d, "absent.onnx"))
            self.assertEqual(r.returncode, 1)

    def test_run_matches_pytorch(self):
        with tempfile.TemporaryDirectory() as d:
            r = braid("run", DEMO, "--input", "image=" + os.path.join(FIX, "image.npy"), "--output", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = np.load(os.path.join(d, "probabilities.npy"))
            want = np.load(os.path.join(FIX, "probabilities.npy"))
            self.assertEqual(got.shape, want.shape)
            err = float(np.max(np.abs(got - want)))
            print(f"demo max abs error vs PyTorch: {err:.3g}", file=sys.stderr)
            self.assertLessEqual(err, 1e-5 * float(np.max(np.abs(want))))

    def test_run_dynamic_batch(self):
        with tempfile.TemporaryDirectory() as d:
            img = np.load(os.path.join(FIX, "image.npy"))
            batch = os.path.join(d, "batch.npy")
            np.save(batch, np.concatenate([img, img, img]))
            r = braid("run", DEMO, "--input", batch, "--output", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = np.load(os.path.join(d, "probabilities.npy"))
            want = np.load(os.path.join(FIX, "probabilities.npy"))
            self.assertEqual(got.shape, (3, 10))
            self.assertLessEqual(float(np.max(np.abs(got - want))), 1e-5)

    def test_inspect_reports_fusion_and_coverage(self):
        r = braid("inspect", DEMO)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("image", r.stdout)
        self.assertIn("Conv+Relu", r.stdout)
        self.assertRegex(r.stdout, r"dnnl +7 of 7 nodes")
        # the cliff guard's report: no reference kernel, the implementations with counts
        self.assertRegex(r.stdout, r"per run: .*, 0 reference kernel\(s\)")
        self.assertRegex(r.stdout, r"\n +implementations: [^,\n]+ x\d+")
        self.assertNotIn("REFERENCE", r.stdout)

    def test_inspect_and_bench_say_where_loading_went(self):
        # one line: open (import, prepare), then the plan's phases, each in ms, adding up
        num = r"(\d+\.\d)"
        line = (r"load %s ms: open %s \(import %s, prepare %s\), plan %s \(weights read back %s, "
                r"infer %s, fold %s, rewrite %s, partition %s, compile %s \(weights %s\), release %s\)"
                % ((num,) * 13))
        for args in (("inspect", DEMO, "--threads", "1"), ("bench", DEMO, "--iters", "2", "--warmup", "1")):
            r = braid(*args)
            self.assertEqual(r.returncode, 0, r.stderr)
            m = re.search(line, r.stdout)
            self.assertIsNotNone(m, r.stdout)
            v = [float(x) for x in m.groups()]
            self.assertAlmostEqual(v[0], v[1] + v[4], delta=0.15)        # load = open + plan
            self.assertAlmostEqual(v[1], v[2] + v[3], delta=0.15)        # open = import + prepare
            self.assertLessEqual(sum(v[5:11]) + v[12], v[4] + 0.35)      # phases within the plan
            self.assertLessEqual(v[11], v[10] + 0.05)                    # weights within compile

    def test_engine_library_flags_reach_the_engines(self):
        # the path given is the one each engine tried (it does not exist, so the plan fails)
        ort = "/nonexistent/braid-cli/libonnxruntime.so.1"
        r = braid("run", DEMO, "--engine", "ort", "--ort-library", ort, "--ort-threads", "2",
                  "--input", "image=" + os.path.join(FIX, "image.npy"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not found at '%s'" % ort, r.stderr)
        r = braid("inspect", DEMO, "--ort-threads", "none")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--ort-threads expects a positive integer", r.stderr)
        r = braid("inspect", DEMO, "--tf-threads", "none")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--tf-threads expects a positive integer", r.stderr)
        if TF_FALLBACK is None:
            self.skipTest("no TensorFlow GraphDef fixture given")
        tf = "/nonexistent/braid-cli/libtensorflow.so.2"
        r = braid("inspect", TF_FALLBACK, "--tf-library", tf, "--tf-threads", "2")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("GatherTree", r.stderr)
        self.assertIn("not found at '%s'" % tf, r.stderr)

    def test_bench_prints_percentiles(self):
        r = braid("bench", DEMO, "--iters", "5", "--warmup", "1", "--threads", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("median", r.stdout)
        self.assertIn("p99", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
