#!/usr/bin/python3
"""Export the mixed-placement models: graphs where oneDNN and the ONNX Runtime fallback take
turns several times, with PyTorch reference outputs.

    gen_mixed.py [--out DIR] [--only NAME ...] [--force] [--list]

Same cache and file layout as tests/runtime/models/gen_models.py (whose helpers it reuses):
DIR = ${BRAID_MODEL_CACHE:-~/.cache/braid/models}; NAME.onnx, NAME.in.<input>.npy,
NAME.out.<output>.npy, NAME.json (manifest), NAME.stamp (generator hash, written last).

Models (opset 13; what braid's oneDNN backend runs is marked D, the fallback F):
  mixed_topk   x[1,3,16,16] -> Conv+Relu (D) -> TopK k=32 over each channel's 256 pixels (F)
               -> MatMul 32x16 + Relu (D) -> TopK k=4 (F) -> Flatten + Linear 32->10 (D)
  mixed_where  x[1,4,12,12] -> Conv+Relu (D) -> Where(y > 0.5, y, -y) (F) -> Gather over
               channels (F) -> Conv (D) -> NonZero(y > 0), a run-time shape (F) -> the largest
               index per axis, summed (F) -> scales the next Conv's input (D)
  mixed_boundary  x[1,3,8,8] -> Conv+Relu = a (D) -> Where(a > 0.5, a, -a) = v (F) -> MatMul
               = y (D); outputs
               y, a and v, so the zero-copy test sees the boundary buffers
"""

import argparse
import fcntl
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))

import gen_models  # noqa: E402  (the shared cache helpers)

SEED = 4242
OPSET = 13


def _modules():
    import torch
    import torch.nn as nn

    class TopKChain(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.proj = nn.Parameter(torch.randn(32, 16) * 0.2)
            self.fc = nn.Linear(8 * 4, 10)

        def forward(self, x):
            y = torch.relu(self.conv(x))                      # [1,8,16,16]
            y = y.reshape(1, 8, 256)
            v, _ = torch.topk(y, 32, dim=-1)                  # [1,8,32]
            z = torch.relu(torch.matmul(v, self.proj))        # [1,8,16]
            w, _ = torch.topk(z, 4, dim=-1)                   # [1,8,4]
            return self.fc(w.reshape(1, 32))                  # [1,10]

    class WhereNonZero(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(4, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.conv3 = nn.Conv2d(8, 6, 1)
            self.register_buffer("perm", torch.tensor([7, 5, 3, 1, 0, 2, 4, 6]))

        def forward(self, x):
            y = torch.relu(self.conv1(x))                     # [1,8,12,12]
            y = torch.where(y > 0.5, y, -y)
            y = torch.index_select(y, 1, self.perm)           # Gather over channels
            y = self.conv2(y)
            nz = torch.nonzero(y > 0)                         # [N,4], N known at run time
            s = nz.max(dim=0).values.sum().to(torch.float32)  # static again: a scalar
            return self.conv3(y * (s / 32.0))                 # [1,6,12,12]

    class Boundary(nn.Module):
        """The zero-copy test's model: both boundary tensors are graph outputs too, so the
        test can see the buffers the executor holds them in. Only ops with static shape
        rules, so the plan returns to oneDNN after the fallback."""
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.proj = nn.Parameter(torch.randn(8, 8) * 0.3)

        def forward(self, x):
            a = torch.relu(self.conv(x))                      # [1,4,8,8]   oneDNN
            v = torch.where(a > 0.5, a, -a)                   # [1,4,8,8]   fallback
            y = torch.matmul(v, self.proj)                    # [1,4,8,8]   oneDNN
            return y, a, v

    return {"mixed_topk": (TopKChain, {"x": (1, 3, 16, 16)}, ["y"]),
            "mixed_where": (WhereNonZero, {"x": (1, 4, 12, 12)}, ["y"]),
            "mixed_boundary": (Boundary, {"x": (1, 3, 8, 8)}, ["y", "a", "v"])}


NAMES = ("mixed_topk", "mixed_where", "mixed_boundary")


def digest_of(name):
    import onnx
    import torch
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(("%s torch=%s onnx=%s" % (name, torch.__version__, onnx.__version__)).encode())
    return h.hexdigest()


def generate(out, name, digest):
    import collections
    import onnx
    import torch

    cls, in_shapes, out_names = _modules()[name]
    torch.manual_seed(SEED)
    module = cls().eval()
    gen = torch.Generator().manual_seed(SEED + 1)
    inputs = {n: torch.randn(*s, generator=gen) for n, s in in_shapes.items()}
    t0 = time.time()
    written = []
    onnx_tmp = os.path.join(out, name + ".onnx.tmp")
    with torch.no_grad():
        torch.onnx.export(module, tuple(inputs.values()), onnx_tmp, input_names=list(inputs),
                          output_names=out_names, opset_version=OPSET, do_constant_folding=True)
        res = module(*inputs.values())
    written.append((onnx_tmp, os.path.join(out, name + ".onnx")))
    onnx.checker.check_model(onnx_tmp)
    hist = collections.Counter(n.op_type for n in onnx.load(onnx_tmp).graph.node)
    if isinstance(res, torch.Tensor):
        res = (res,)
    in_files, out_files, in_desc, out_desc = {}, {}, [], []
    for n, t in inputs.items():
        in_files[n] = gen_models.save_npy(out, "%s.in.%s.npy" % (name, n), t.numpy(), written)
        in_desc.append(gen_models.tensor_desc(n, t.numpy()))
    for n, t in zip(out_names, res):
        out_files[n] = gen_models.save_npy(out, "%s.out.%s.npy" % (name, n), t.numpy(), written)
        out_desc.append(gen_models.tensor_desc(n, t.numpy()))
    manifest = {
        "name": name, "model": name, "opset": OPSET, "onnx": name + ".onnx",
        "inputs": list(inputs), "outputs": out_names, "dynamic_axes": None,
        "cases": [{"name": "default", "inputs": in_files, "outputs": out_files,
                   "input_desc": in_desc, "output_desc": out_desc}],
        "ops": dict(sorted(hist.items())), "onnx_bytes": os.path.getsize(onnx_tmp),
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
    ap.add_argument("--out", default=gen_models.default_dir())
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(NAMES))
        return 0
    names = args.only or list(NAMES)
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        ap.error("unknown model(s): %s (known: %s)" % (", ".join(unknown), ", ".join(NAMES)))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for name in names:
            digest = digest_of(name)
            if not args.force and gen_models.is_fresh(args.out, name, digest):
                print("gen_mixed: %-11s up to date" % name)
                continue
            secs, man = generate(args.out, name, digest)
            ops = " ".join("%s:%d" % kv for kv in man["ops"].items())
            print("gen_mixed: %-11s %.1fs  [%s]" % (name, secs, ops), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
