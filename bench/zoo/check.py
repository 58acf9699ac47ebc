#!/usr/bin/python3
"""Check braid's outputs on zoo models against PyTorch's, before any timing.

    /usr/bin/python3 bench/zoo/check.py --braid build-bench/cli/braid [--zoo DIR]
                                        [--tol 1e-3] [--threads N] [--engine LIST]
                                        NAME [NAME ...]

For each model NAME of DIR/manifest.json (written by gen_zoo.py; DIR defaults to
$BRAID_ZOO_DIR, else ~/.cache/braid/zoo) it runs

    braid run DIR/NAME.onnx --input <name>=DIR/NAME.in<k>.npy ... --output TMP/

and compares each output TMP/<name>.npy with DIR/NAME.ref<k>.npy: max abs diff, and the
relative error max|braid - ref| / max|ref|, which must be <= --tol (default 1e-3, for FP32),
or the entry's own "tol" when it has one (the int8 entries of gen_zoo_int8.py). An int8 entry
(one with "quantization") must also keep a classifier's top-1 (a 2-D output of 10 classes or
more): on every row whose reference winner leads the runner-up by more than a tenth of the
row's largest magnitude, braid's winner is the same.
The zoo's TF.js models are checked the same way against TensorFlow.js's outputs: their
DIR (BRAID_ZOO_DIR/tfjs/NAME, written by tfjs_bench.js --write) has a manifest.json of the
same schema whose entry names the model file under "model" (a TF.js model.json) instead of
"onnx".
It prints one line per output and, last for each model, a machine-readable line

    CHECK model=NAME result=ok|MISMATCH|FAILED maxabs=X maxrel=Y error=<first error line>

(FAILED: braid could not load or run the model, or an output is missing or misshapen; the
error is braid's own message, with spaces kept). Exit status: 0 if every model passed, 1 if
any failed or mismatched, 2 on bad arguments or a missing manifest entry.

--engine passes braid run's --engine: `--engine dnnl,native` checks that every model runs
and matches with no framework fallback at all (ONNX Runtime and TensorFlow not loaded).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def default_dir():
    return os.environ.get("BRAID_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "braid", "zoo")


def out_file(outdir, name):
    """braid run's file name for output NAME (cli/cmd_run.c: '/', ':', '\\' become '_')."""
    return os.path.join(outdir, "".join("_" if c in "/:\\" else c for c in name) + ".npy")


def check_model(args, entry):
    """Returns (result, maxabs, maxrel, error)."""
    zoo = args.zoo
    model = entry.get("model") or entry["onnx"]   # "model": a TF.js model.json (tfjs_bench.js)
    cmd = [args.braid, "run", os.path.join(zoo, model), "--threads", str(args.threads)]
    if args.engine:
        cmd += ["--engine", args.engine]
    for t in entry["inputs"]:
        cmd += ["--input", "%s=%s" % (t["name"], os.path.join(zoo, t["file"]))]
    with tempfile.TemporaryDirectory(prefix="braid-zoo-check.") as tmp:
        cmd += ["--output", tmp]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return "FAILED", None, None, "braid run timed out after %ds" % args.timeout
        if p.returncode != 0:
            lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
            err = next((ln for ln in lines if "error" in ln.lower() or "braid" in ln.lower()),
                       lines[-1] if lines else "exit status %d" % p.returncode)
            for ln in lines[-5:]:
                print("  braid: %s" % ln)
            return "FAILED", None, None, err
        worst_abs, worst_rel, result, error = 0.0, 0.0, "ok", ""
        tol = entry.get("tol", args.tol)        # an int8 entry carries its own budget
        for t in entry["outputs"]:
            ref = np.load(os.path.join(zoo, t["file"]))
            path = out_file(tmp, t["name"])
            if not os.path.isfile(path):
                print("  output %-20s missing from braid's outputs" % t["name"])
                return "FAILED", None, None, "output '%s' missing" % t["name"]
            got = np.load(path)
            if got.shape != ref.shape:
                print("  output %-20s shape %s, expected %s" % (t["name"], got.shape, ref.shape))
                return "FAILED", None, None, "output '%s': shape %s, expected %s" % (
                    t["name"], list(got.shape), list(ref.shape))
            diff = np.abs(got.astype(np.float64) - ref.astype(np.float64))
            maxabs = float(np.nanmax(diff)) if np.all(np.isfinite(got)) else float("inf")
            scale = float(np.abs(ref).max())
            rel = maxabs / scale if scale > 0 else maxabs
            good = rel <= tol
            flips = top1_flips(got, ref) if "quantization" in entry else 0
            good = good and flips == 0
            print("  output %-20s %-12s max abs diff %.3g, max |ref| %.3g, rel %.3g  %s" % (
                t["name"], "x".join(map(str, ref.shape)), maxabs, scale, rel,
                "ok" if good else "MISMATCH"))
            worst_abs, worst_rel = max(worst_abs, maxabs), max(worst_rel, rel)
            if flips:
                print("  output %-20s top-1 differs on %d row(s) where the reference's leads "
                      "clearly" % (t["name"], flips))
            if not good:
                result = "MISMATCH"
                error = ("output '%s' rel error %.3g > %g" % (t["name"], rel, tol) if rel > tol else
                         "output '%s': top-1 differs on %d clear row(s)" % (t["name"], flips))
        return result, worst_abs, worst_rel, error


# The int8 rule's "clear" winner: it leads the runner-up by this share of the row's largest
# magnitude (one or two quantization steps of a logit are far less).
TOP1_CLEAR_LEAD = 0.1


def top1_flips(got, ref):
    """Rows of a classifier's output (2-D, 10 classes or more) whose reference winner leads
    clearly, where braid's winner differs (the int8 rule; 0 for other outputs)."""
    if ref.ndim != 2 or ref.shape[1] < 10:
        return 0
    top2 = np.sort(ref, axis=1)[:, -2:]
    lead = top2[:, 1] - top2[:, 0]
    clear = lead > TOP1_CLEAR_LEAD * np.max(np.abs(ref), axis=1)
    return int(np.sum(clear & (np.argmax(got, axis=1) != np.argmax(ref, axis=1))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--braid", required=True, help="the braid CLI (build-bench/cli/braid)")
    ap.add_argument("--zoo", default=default_dir(), help="zoo directory (default: %(default)s)")
    ap.add_argument("--tol", type=float, default=1e-3,
                    help="max relative error, max|diff| / max|ref| (default: %(default)g)")
    ap.add_argument("--threads", type=int, default=1, help="braid's threads (default: 1)")
    ap.add_argument("--engine", default=None,
                    help="braid run --engine LIST, e.g. dnnl,native (default: braid's auto)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per model (default: 600)")
    ap.add_argument("models", nargs="+", metavar="NAME")
    args = ap.parse_args(argv)
    try:
        with open(os.path.join(args.zoo, "manifest.json")) as f:
            manifest = json.load(f)["models"]
    except (OSError, ValueError, KeyError) as e:
        print("check: cannot read %s/manifest.json (%s); run gen_zoo.py" % (args.zoo, e),
              file=sys.stderr)
        return 2
    missing = [n for n in args.models if n not in manifest]
    if missing:
        print("check: not in the manifest: %s" % " ".join(missing), file=sys.stderr)
        return 2
    status = 0
    for name in args.models:
        print("check %s" % name, flush=True)
        result, maxabs, maxrel, error = check_model(args, manifest[name])
        fmt = lambda v: "-" if v is None else "%.3g" % v
        print("CHECK model=%s result=%s maxabs=%s maxrel=%s error=%s" % (
            name, result, fmt(maxabs), fmt(maxrel), error.replace("\n", " ")), flush=True)
        if result != "ok":
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
