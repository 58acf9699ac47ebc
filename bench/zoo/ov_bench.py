#!/usr/bin/env python3
"""Time OpenVINO (CPU) on one zoo entry: the zoo's second peer (issue 24), beside ONNX Runtime.

    PY=$(scripts/fetch_openvino.sh)
    $PY bench/zoo/ov_bench.py [--zoo DIR] [--threads N] [--runs R] [--warmup W]
                              [--shapes auto|static|dynamic] [--tol T] NAME

NAME is a manifest entry (gen_zoo.py's models, or a family model or variant of
gen_zoo_families.py / gen_zoo_more.py, e.g. minilm_l6.b4). Runs in the venv of
scripts/fetch_openvino.sh (openvino + numpy; no torch, no onnx package needed).

It reads DIR/<entry's onnx> with OpenVINO's ONNX frontend (core.read_model), fixes the
inputs' shapes to the entry's arrays (model.reshape; braid and ONNX Runtime also plan for
the shapes they are given; --shapes dynamic keeps the file's dynamic dims; --shapes auto,
the default: static, and if those outputs do not match PyTorch's, dynamic -- OpenVINO
2026.4.1 computes the T5 encoder's relative position bias wrong once the shapes are fixed,
rel error 0.6, and right with dynamic dims), and compiles it for the CPU with

    PERFORMANCE_HINT=LATENCY  NUM_STREAMS=1  INFERENCE_NUM_THREADS=N  INFERENCE_PRECISION_HINT=f32

(f32: OpenVINO would otherwise run bf16 on a CPU with AMX/AVX512-BF16 and f16 on ARM). One
infer request; the inputs are the entry's own .npy files (DIR/NAME.in<k>.npy, the bytes braid
and ONNX Runtime get), set once as tensors that share the arrays' memory. The first run's
outputs are compared with PyTorch's (DIR/NAME.ref<k>.npy; rel = max|ov - ref| / max|ref|,
as check.py, within --tol or the entry's own "tol" as for an int8 entry), then WARMUP untimed and RUNS timed runs of infer() (synchronous; the outputs
stay in OpenVINO's buffers, as braid's and ORT's do in braid-bench-ort). Last line:

    OV model=NAME threads=N runs=R median_ms=X p90_ms=Y min_ms=Z load_ms=L check=ok|MISMATCH
       maxrel=E shapes=static|dynamic version=V

load_ms: read, reshape, compile and the first run. Exit status: 0 when it ran (check=
MISMATCH included: the caller decides), 1 if OpenVINO could not load or run it, 2 on bad
arguments or a missing manifest entry.
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import openvino as ov


def default_dir():
    return os.environ.get("BRAID_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "braid", "zoo")


def onnx_name(port, names):
    """The name among NAMES that PORT carries (an OpenVINO port may carry several)."""
    hit = [n for n in port.get_names() if n in names]
    if not hit:
        raise RuntimeError("port %s is none of %s" % (sorted(port.get_names()), sorted(names)))
    return hit[0]


def config(threads):
    return {"PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": "1",
            "INFERENCE_NUM_THREADS": str(threads), "INFERENCE_PRECISION_HINT": "f32"}


def load(args, entry, feeds, shapes):
    """Read, reshape (SHAPES static), compile, set the inputs, run once: (compiled, request,
    load ms)."""
    t0 = time.perf_counter()
    core = ov.Core()
    model = core.read_model(os.path.join(args.zoo, entry["onnx"]))
    if shapes == "static":
        model.reshape({p: ov.PartialShape(list(feeds[onnx_name(p, feeds)].shape))
                       for p in model.inputs})
    compiled = core.compile_model(model, "CPU", config(args.threads))
    req = compiled.create_infer_request()
    for p in compiled.inputs:
        req.set_tensor(p, ov.Tensor(np.ascontiguousarray(feeds[onnx_name(p, feeds)]),
                                    shared_memory=True))
    req.infer()
    return compiled, req, (time.perf_counter() - t0) * 1e3


def compare(compiled, req, refs, tol):
    """Print each output's error against PyTorch's; returns the largest relative error."""
    # A port may carry several tensor names (the ONNX output's and an inner one's); its
    # ONNX name is among them. Ports keep the graph's output order: fall back on it.
    got = {n: p for p in compiled.outputs for n in p.get_names()}
    if len(compiled.outputs) == len(refs):
        for (n, _), p in zip(refs, compiled.outputs):
            got.setdefault(n, p)
    maxrel = 0.0
    for n, ref in refs:
        out = req.get_tensor(got[n]).data if n in got else None
        if out is None or tuple(out.shape) != ref.shape:
            print("  output %-20s %s, expected %s" % (n, "missing" if out is None else
                                                       list(out.shape), list(ref.shape)))
            maxrel = float("inf")
            continue
        diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
        scale = float(np.abs(ref).max())
        a = float(np.nanmax(diff)) if np.all(np.isfinite(out)) else float("inf")
        rel = a / scale if scale > 0 else a
        print("  output %-20s %-12s max abs diff %.3g, rel %.3g  %s" % (
            n, "x".join(map(str, ref.shape)), a, rel, "ok" if rel <= tol else "MISMATCH"))
        maxrel = max(maxrel, rel)
    return maxrel


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zoo", default=default_dir(), help="zoo directory (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--shapes", choices=("auto", "static", "dynamic"), default="auto",
                    help="fix the inputs' shapes to the entry's arrays, or keep the file's dynamic "
                         "dims; auto (default): static, and dynamic if static does not match")
    ap.add_argument("--tol", type=float, default=None,
                    help="max rel error (default: the entry's own tol, else 1e-3)")
    ap.add_argument("name", metavar="NAME")
    args = ap.parse_args(argv)
    try:
        with open(os.path.join(args.zoo, "manifest.json")) as f:
            entry = json.load(f)["models"][args.name]
    except (OSError, ValueError, KeyError) as e:
        print("ov_bench: no manifest entry %r in %s (%s)" % (args.name, args.zoo, e), file=sys.stderr)
        return 2
    if args.tol is None:
        args.tol = entry.get("tol", 1e-3)       # an int8 entry carries its own budget
    feeds = {t["name"]: np.load(os.path.join(args.zoo, t["file"])) for t in entry["inputs"]}
    refs = [(t["name"], np.load(os.path.join(args.zoo, t["file"]))) for t in entry["outputs"]]

    shapes = ["static", "dynamic"] if args.shapes == "auto" else [args.shapes]
    for k, mode in enumerate(shapes):
        try:
            compiled, req, load_ms = load(args, entry, feeds, mode)
        except Exception as e:   # OpenVINO raises RuntimeError with its own message
            msg = " ".join(str(e).split())
            # the frontend's report names the op after a long preamble: keep that part
            msg = msg[msg.find("Failed operations"):] if "Failed operations" in msg else msg
            print("ov_bench: %s: OpenVINO could not load or run it (shapes %s): %s" % (
                args.name, mode, msg[:300]), file=sys.stderr)
            return 1
        maxrel = compare(compiled, req, refs, args.tol)
        if maxrel <= args.tol or k == len(shapes) - 1:
            break
        print("  OpenVINO with the shapes fixed (model.reshape) differs from PyTorch (rel %.3g); "
              "again with the file's dynamic dims" % maxrel)
    check = "ok" if maxrel <= args.tol else "MISMATCH"
    try:
        for _ in range(args.warmup):
            req.infer()
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            req.infer()
            times.append((time.perf_counter() - t) * 1e3)
    except Exception as e:
        print("ov_bench: %s: infer failed: %s" % (args.name, " ".join(str(e).split())[:400]),
              file=sys.stderr)
        return 1
    ts = np.array(times)
    print("OV model=%s threads=%d runs=%d median_ms=%.3f p90_ms=%.3f min_ms=%.3f load_ms=%.1f "
          "check=%s maxrel=%.3g shapes=%s version=%s" % (
              args.name, args.threads, args.runs, float(np.median(ts)),
              float(np.percentile(ts, 90)), float(ts.min()), load_ms, check, maxrel, mode,
              ov.get_version().split("-")[0]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
