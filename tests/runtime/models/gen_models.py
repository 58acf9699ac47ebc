#!/usr/bin/python3
"""Export braid's reference models to ONNX with PyTorch reference inputs and outputs.

    gen_models.py [--out DIR] [--only NAME ...] [--bench] [--force] [--list]

For each model NAME it writes into DIR (default ${BRAID_MODEL_CACHE:-~/.cache/braid/models}):
    NAME.onnx                       the exported model (checked with onnx.checker)
    NAME.in.<input>.npy             each input of the default case
    NAME.out.<output>.npy           PyTorch's FP32 output for it (the reference)
    NAME.<case>.in/out.<x>.npy      extra cases (mlp: batch 5 as case "b5")
    NAME.json                       manifest: opset, inputs/outputs, cases, op histogram
    NAME.stamp                      generator hash, written last

A model whose stamp matches the current generator hash (this file, torch_models.py, the
model's spec, torch and onnx versions) is skipped, so running it again is cheap. Concurrent
runs on one DIR serialize on DIR/.lock. Files are written under temporary names and renamed,
so an interrupted run never leaves a stamp over partial files.
"""

import argparse
import collections
import fcntl
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# name -> (torch_models name, opset, extra cases). Extra cases: case name -> inputs builder.
MODELS = {
    "mlp":        ("mlp", 13, {"b5": lambda tm: tm.mlp_inputs(5)}),
    "resnet18":   ("resnet18", 13, {}),
    "bert2_op13": ("bert2", 13, {}),
    "bert2_op17": ("bert2", 17, {}),
    "mobile_blocks": ("mobile_blocks", 17, {}),
    "gpt_block":  ("gpt_block", 17, {}),
    "rnn_block":  ("rnn_block", 17, {}),
}
BENCH = {
    "resnet50":   ("resnet50", 13, {}),
    "bert12":     ("bert12", 17, {}),
}
# Ops a static export must not contain: they mean a shape computation leaked into the graph.
# An embedding lookup is a Gather of its own (gpt_block).
FORBIDDEN_STATIC = {"Shape", "Gather", "Cast", "ConstantOfShape"}
ALLOWED_STATIC = {"gpt_block": {"Gather"}, "rnn_block": {"Gather"}}


def default_dir():
    d = os.environ.get("BRAID_MODEL_CACHE")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "braid", "models")


def generator_hash(name, spec):
    import torch
    import onnx
    h = hashlib.sha256()
    for f in ("gen_models.py", "torch_models.py"):
        with open(os.path.join(HERE, f), "rb") as fh:
            h.update(fh.read())
    h.update(repr((name, spec[0], spec[1], sorted(spec[2]))).encode())
    h.update(("torch=%s onnx=%s" % (torch.__version__, onnx.__version__)).encode())
    return h.hexdigest()


def is_fresh(out, name, digest):
    try:
        with open(os.path.join(out, name + ".stamp")) as f:
            if f.read().strip() != digest:
                return False
        with open(os.path.join(out, name + ".json")) as f:
            man = json.load(f)
    except (OSError, ValueError):
        return False
    files = [man["onnx"]]
    for case in man["cases"]:
        files += list(case["inputs"].values()) + list(case["outputs"].values())
    return all(os.path.isfile(os.path.join(out, p)) for p in files)


def save_npy(out, fname, array, written):
    import numpy as np
    tmp = os.path.join(out, fname + ".tmp")
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(array))
    written.append((tmp, os.path.join(out, fname)))
    return fname


def tensor_desc(name, arr):
    return {"name": name, "dtype": str(arr.dtype), "shape": list(arr.shape)}


def generate(out, name, spec, digest):
    import numpy as np
    import onnx
    import torch
    import torch_models as tm

    tname, opset, extra = spec
    t0 = time.time()
    module, inputs, in_names, out_names, dyn = tm.build(tname)
    written = []   # (tmp, final) renamed at the end

    onnx_tmp = os.path.join(out, name + ".onnx.tmp")
    with torch.no_grad():
        torch.onnx.export(module, tuple(inputs.values()), onnx_tmp, input_names=in_names,
                          output_names=out_names, dynamic_axes=dyn, opset_version=opset,
                          do_constant_folding=True)
    written.append((onnx_tmp, os.path.join(out, name + ".onnx")))
    onnx.checker.check_model(onnx_tmp)    # path form: works past the 2 GiB proto limit
    graph = onnx.load(onnx_tmp, load_external_data=False).graph
    hist = collections.Counter(n.op_type for n in graph.node)
    if dyn is None:
        leaked = (FORBIDDEN_STATIC - ALLOWED_STATIC.get(name, set())) & set(hist)
        if leaked:
            raise SystemExit("gen_models: %s: static export contains %s; fix torch_models.py"
                             % (name, ", ".join(sorted(leaked))))

    cases = []
    for case, ins in [("default", inputs)] + [(c, f(tm)) for c, f in sorted(extra.items())]:
        prefix = name if case == "default" else "%s.%s" % (name, case)
        with torch.no_grad():
            res = module(*ins.values())
        if isinstance(res, torch.Tensor):
            res = (res,)
        in_files, out_files, in_desc, out_desc = {}, {}, [], []
        for n, t in zip(in_names, ins.values()):
            a = t.numpy()
            in_files[n] = save_npy(out, "%s.in.%s.npy" % (prefix, n), a, written)
            in_desc.append(tensor_desc(n, a))
        for n, t in zip(out_names, res):
            a = t.numpy()
            out_files[n] = save_npy(out, "%s.out.%s.npy" % (prefix, n), a, written)
            out_desc.append(tensor_desc(n, a))
        cases.append({"name": case, "inputs": in_files, "outputs": out_files,
                      "input_desc": in_desc, "output_desc": out_desc})

    manifest = {
        "name": name, "model": tname, "opset": opset, "onnx": name + ".onnx",
        "inputs": in_names, "outputs": out_names,
        "dynamic_axes": dyn, "cases": cases,
        "ops": dict(sorted(hist.items())),
        "onnx_bytes": os.path.getsize(onnx_tmp),
        "generator": digest,
    }
    man_tmp = os.path.join(out, name + ".json.tmp")
    with open(man_tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    written.append((man_tmp, os.path.join(out, name + ".json")))

    for tmp, final in written:
        os.replace(tmp, final)
    stamp_tmp = os.path.join(out, name + ".stamp.tmp")
    with open(stamp_tmp, "w") as f:
        f.write(digest + "\n")
    os.replace(stamp_tmp, os.path.join(out, name + ".stamp"))
    return time.time() - t0, manifest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=default_dir(), help="cache directory (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="generate only these models")
    ap.add_argument("--bench", action="store_true", help="also generate the benchmark models "
                    "(%s)" % ", ".join(BENCH))
    ap.add_argument("--force", action="store_true", help="regenerate even when fresh")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args(argv)

    table = dict(MODELS)
    if args.bench or (args.only and set(args.only) & set(BENCH)):
        table.update(BENCH)
    if args.list:
        print("\n".join(list(MODELS) + list(BENCH)))
        return 0
    names = args.only or list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        ap.error("unknown model(s): %s (known: %s)"
                 % (", ".join(unknown), ", ".join(list(MODELS) + list(BENCH))))

    os.makedirs(args.out, exist_ok=True)
    import torch
    torch.manual_seed(0)
    with open(os.path.join(args.out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)      # another run may be generating the same files
        for name in names:
            digest = generator_hash(name, table[name])
            if not args.force and is_fresh(args.out, name, digest):
                print("gen_models: %-11s up to date" % name)
                continue
            secs, man = generate(args.out, name, table[name], digest)
            ops = " ".join("%s:%d" % kv for kv in man["ops"].items())
            print("gen_models: %-11s opset %d, %.1f MB, %.1fs  [%s]"
                  % (name, man["opset"], man["onnx_bytes"] / 1e6, secs, ops), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
