#!/usr/bin/python3
"""Inputs of the daemon benchmark (bench/daemon/run.sh).

    bench_inputs.py prepare OUTDIR [--resnet50 PATH]
        OUTDIR/repo/tiny_add/1/model.onnx      x[1,16] + [1..16]: the tiny model
        OUTDIR/repo/resnet50/1/model.onnx      a copy (hard link) of PATH (when given)
        OUTDIR/tiny_add.req, resnet50.req      serialized ModelInferRequests (seeded inputs)
    bench_inputs.py check OUTDIR HOST:PORT [MODEL...]
        send each request once and check the answer (tiny_add: exact; resnet50: the shape and
        a finite softmax-free output), so the benchmark never times wrong answers.

Stubs: $BRAID_PROTO_PY, else generated from proto/ (see tests/e2e/braidd_fixture.py).
"""

import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import numpy as np                                   # noqa: E402

import e2e_models                                    # noqa: E402
from braidd_fixture import grpc, inference_pb2_grpc  # noqa: E402
from tensors import infer_request, response_outputs  # noqa: E402


def tiny_input():
    return np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 16)


def resnet_input():
    return np.random.default_rng(1).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)


def prepare(out, resnet50=None):
    repo = os.path.join(out, "repo")
    e2e_models.write_repository_model(repo, "tiny_add", e2e_models.tiny_add(16))
    with open(os.path.join(out, "tiny_add.req"), "wb") as f:
        f.write(infer_request("tiny_add", {"x": tiny_input()}).SerializeToString())
    if resnet50:
        d = os.path.join(repo, "resnet50", "1")
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, "model.onnx")
        if os.path.lexists(dst):
            os.remove(dst)
        try:
            os.link(resnet50, dst)            # a real file: braidd may refuse symlinks
        except OSError:
            shutil.copyfile(resnet50, dst)
        with open(os.path.join(out, "resnet50.req"), "wb") as f:
            f.write(infer_request("resnet50", {"input": resnet_input()}).SerializeToString())


def check(out, target, models):
    from braidd_fixture import pb
    stub = inference_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(target))
    for m in models:
        with open(os.path.join(out, m + ".req"), "rb") as f:
            req = pb.ModelInferRequest.FromString(f.read())
        outs = response_outputs(stub.ModelInfer(req, timeout=120))
        if m == "tiny_add":
            want = tiny_input() + np.arange(1, 17, dtype=np.float32)
            np.testing.assert_allclose(outs["y"], want, rtol=1e-6)
        else:
            (y,) = outs.values()
            assert y.shape == (1, 1000) and np.isfinite(y).all(), y.shape
        print("check: %s answers correctly" % m)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        res = None
        if "--resnet50" in sys.argv:
            res = sys.argv[sys.argv.index("--resnet50") + 1]
        prepare(sys.argv[2], res)
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4:] or ["tiny_add"])
    else:
        sys.exit(__doc__)
