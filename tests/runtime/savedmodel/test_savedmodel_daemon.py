#!/usr/bin/python3
"""braidd serves TensorFlow SavedModels from its repository, in Triton's layout
(<name>/<version>/model.savedmodel/, platform "tensorflow_savedmodel"), over the real gRPC
wire: ModelMetadata names the signature's keys as inputs and outputs, ModelConfig says the
platform, inference matches TensorFlow's outputs (<= 1e-4), config.json's "signature" picks
another SignatureDef, a SavedModel uploaded file by file over RepositoryModelLoad loads, and
broken SavedModels are refused with a message naming the problem while braidd keeps serving.

Needs the TensorFlow venv (savedmodels.py); prints SKIPPED and exits 77 without it.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
sys.path.insert(0, HERE)
import savedmodels as sm  # noqa: E402

if __name__ == "__main__":
    sm.require_tensorflow("savedmodel daemon")     # braidd inherits BRAID_LIBTENSORFLOW
    MODELS = sm.ensure_models()

from braidd_fixture import BraiddTestCase, load_request, pb, run_tests, status_of  # noqa: E402
from tensors import infer_request, response_outputs  # noqa: E402


def add_savedmodel(repo, name, src, config=None):
    d = os.path.join(repo, name, "1")
    os.makedirs(d)
    shutil.copytree(src, os.path.join(d, "model.savedmodel"))
    if config is not None:
        with open(os.path.join(repo, name, "config.json"), "w") as f:
            json.dump(config, f)


def savedmodel_files(src, prefix="1/model.savedmodel/"):
    files = {}
    for dirpath, _, names in os.walk(src):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                files[prefix + os.path.relpath(p, src)] = f.read()
    return files


class SavedModelServing(BraiddTestCase):

    braidd_args = ("--allow-uploads",)

    @classmethod
    def prepare_repository(cls, repo):
        add_savedmodel(repo, "sm_two_io", os.path.join(MODELS, "two_io"))
        add_savedmodel(repo, "sm_scores", os.path.join(MODELS, "nondefault"),
                       {"platform": "tensorflow_savedmodel", "signature": "scores"})
        add_savedmodel(repo, "sm_keras", os.path.join(MODELS, "dense_conv"))

    def metadata(self, name):
        return self.stub.ModelMetadata(pb.ModelMetadataRequest(name=name), timeout=10)

    def assert_matches(self, name, ref_name):
        _, ins, outs = sm.reference(ref_name)
        resp = self.stub.ModelInfer(infer_request(name, ins), timeout=120)
        got = response_outputs(resp)
        self.assertEqual(sorted(got), sorted(outs))
        for k, ref in outs.items():
            self.assertEqual(got[k].shape, ref.shape, k)
            err = sm.rel_err(got[k], ref)
            print("%s %s: rel err %.2e" % (name, k, err))
            self.assertLessEqual(err, sm.TOL, "%s output %s" % (name, k))

    def test_metadata_names_the_signature_keys(self):
        md = self.metadata("sm_two_io")
        self.assertEqual(md.platform, "tensorflow_savedmodel")
        self.assertEqual([t.name for t in md.inputs], ["a", "b"])
        self.assertEqual([(t.datatype, list(t.shape)) for t in md.inputs], [("FP32", [-1, 6]), ("FP32", [-1, 3])])
        self.assertEqual([t.name for t in md.outputs], ["hidden", "total"])
        cfg = self.stub.ModelConfig(pb.ModelConfigRequest(name="sm_two_io"), timeout=10).config
        self.assertEqual(cfg.platform, "tensorflow_savedmodel")

    def test_inference_matches_tensorflow(self):
        self.assert_matches("sm_two_io", "two_io")
        self.assert_matches("sm_keras", "dense_conv")

    def test_config_picks_another_signature(self):
        md = self.metadata("sm_scores")
        self.assertEqual([t.name for t in md.inputs], ["features"])
        self.assertEqual([t.name for t in md.outputs], ["best", "probabilities"])
        self.assert_matches("sm_scores", "nondefault")

    def test_upload_a_savedmodel(self):
        req = load_request("sm_uploaded", savedmodel_files(os.path.join(MODELS, "two_io")),
                           {"platform": "tensorflow_savedmodel"})
        code, details = status_of(self.stub.RepositoryModelLoad, req, timeout=180)
        self.assertEqual(code.name, "OK", details)
        self.assert_matches("sm_uploaded", "two_io")

    def assert_refused(self, name, files, config, *needles, code_name="INVALID_ARGUMENT"):
        code, details = status_of(self.stub.RepositoryModelLoad, load_request(name, files, config),
                                  timeout=180)
        self.assertEqual(code.name, code_name, "%s: %s" % (name, details))
        print("%s: %s %s" % (name, code.name, details))
        for n in needles:
            self.assertIn(n, details, name)
        self.assert_matches("sm_two_io", "two_io")          # still serving

    def test_broken_savedmodels_are_refused(self):
        files = savedmodel_files(os.path.join(MODELS, "two_io"))
        pb_key = "1/model.savedmodel/saved_model.pb"
        trunc = dict(files)
        trunc[pb_key] = files[pb_key][:len(files[pb_key]) // 3]
        self.assert_refused("sm_truncated", trunc, None, "saved_model.pb", "malformed")
        self.assert_refused("sm_missing_tensor", savedmodel_files(os.path.join(MODELS, "bad_missing_tensor")),
                            None, "nope:0")
        self.assert_refused("sm_tf_refuses", savedmodel_files(os.path.join(MODELS, "bad_unknown_op")),
                            None, "TensorFlow cannot load", "NoSuchOp")
        self.assert_refused("sm_no_signature", files, {"signature": "nope"}, "no signature 'nope'",
                            "serving_default", code_name="NOT_FOUND")
        self.assert_refused("sm_wrong_platform", files, {"platform": "tensorflow_graphdef"},
                            "tensorflow_savedmodel")

    @unittest.skipUnless(os.environ.get("BRAID_CLI"), "BRAID_CLI not set")
    def test_braid_load_uploads_a_savedmodel_directory(self):
        r = subprocess.run([os.environ["BRAID_CLI"], "load", "sm_cli", "--file", os.path.join(MODELS, "two_io"),
                            "--server", "127.0.0.1:%d" % self.d.grpc_port],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loaded 'sm_cli'", r.stdout)
        self.assertEqual(self.metadata("sm_cli").platform, "tensorflow_savedmodel")
        self.assert_matches("sm_cli", "two_io")

    def test_variables_symlinked_out_of_the_version_folder(self):
        d = os.path.join(self.d.repo, "sm_escape", "1", "model.savedmodel")
        shutil.copytree(os.path.join(MODELS, "two_io"), d)
        outside = os.path.join(self.d.tmp, "outside-variables")
        shutil.move(os.path.join(d, "variables"), outside)
        os.symlink(outside, os.path.join(d, "variables"))
        self.assert_refused("sm_escape", None, None, "variables", "outside the model's directory")

    def test_status_reports_the_platform(self):
        code, body, _ = self.d.http_get("/v2/status")
        self.assertEqual(code, 200)
        m = next(m for m in json.loads(body)["models"] if m["name"] == "sm_two_io")
        self.assertEqual((m["state"], m["platform"]), ("READY", "tensorflow_savedmodel"), m)


if __name__ == "__main__":
    run_tests()
