#!/usr/bin/python3
"""Issue 24's shapes for gen_zoo.py's 14 models: a second export of each with dynamic axes,
and its variant entries.

    /usr/bin/python3 bench/zoo/gen_zoo_dynamic.py [--out DIR] [--only NAME ...] [--force]
                                                  [--list] [--list-checks]

gen_zoo.py exports its 14 models at batch 1 with static shapes (NAME.onnx, entry NAME: the
zoo's first table, unchanged). Issue 24 asks for each CNN also exported with a dynamic batch
axis and timed at batch 8, and each transformer with dynamic batch and sequence axes timed at
(1, 128), (4, 128) and (1, 384). For each model this writes NAME.dyn.onnx (the same module,
the same weights: gen_zoo.py's builder, from its seeds) and manifest entries NAME.VARIANT
with "variant_of": NAME and "onnx": NAME.dyn.onnx:

    the 11 image models      b8     image 8x3x224x224
    bert_base                dyn    (1, 128) on the dynamic export; b4 (4, 128); s384 (1, 384)
    gpt2                     dyn    (1, 128); b4 (4, 128) -- no s384: its position table has
                                    128 rows, as gen_zoo.py built it
    lstm_tagger              b8     (8, 64); b4s128 (4, 128)

BERT and GPT-2 in gen_zoo.py write their sequence length into every view(); their dynamic
exports go through BertDynamic / Gpt2Dynamic, which run the same submodules (the same
weights) with every shape taken from the input. Inputs, PyTorch references, GFLOP and the
cache (a hash of gen_zoo.py's builder and this file's code) work as in gen_zoo_families.py,
whose per-entry writer this uses. --list prints the 14 names, --list-checks the entries
written so far. Exit status as gen_zoo.py's.
"""

import argparse
import collections
import fcntl
import hashlib
import inspect
import math
import os
import sys
import time
import traceback
import warnings

import onnx
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_zoo as gz  # noqa: E402
import gen_zoo_families as gzf  # noqa: E402


class BertDynamic(nn.Module):
    """gen_zoo.Bert's submodules and weights, every shape from the input: positions from
    arange(seq), token types zeros_like(input_ids), views by (batch, seq)."""
    def __init__(self, bert):
        super().__init__()
        self.m = bert

    def forward(self, input_ids, attention_mask):
        m, (b, s) = self.m, input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = m.emb_norm(m.word(input_ids) + m.pos(pos) + m.tok_type(torch.zeros_like(input_ids)))
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in m.layers:
            a = layer.attention
            heads = lambda t: t.view(b, s, a.nh, a.hd).permute(0, 2, 1, 3)  # noqa: E731
            q, k, v = heads(a.query(x)), heads(a.key(x)), heads(a.value(x))
            w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(a.hd) + ext
            ctx = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).reshape(b, s, a.h)
            at = layer.attn_norm(layer.attn_out(ctx) + x)
            x = layer.out_norm(layer.output(layer.gelu(layer.intermediate(at))) + at)
        return x, torch.tanh(m.pooler(x[:, 0]))


class Gpt2Dynamic(nn.Module):
    """gen_zoo.Gpt2's submodules and weights, every shape from the input; the causal mask
    from tril(ones(seq, seq)) + masked_fill, as gen_zoo.py's."""
    def __init__(self, gpt):
        super().__init__()
        self.m = gpt

    def forward(self, input_ids):
        m, (b, s) = self.m, input_ids.shape
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = m.wte(input_ids) + m.wpe(pos)
        causal = torch.tril(torch.ones(s, s, dtype=torch.bool))
        for blk in m.blocks:
            a = blk.attn
            heads = lambda t: t.view(b, s, a.nh, a.hd).permute(0, 2, 1, 3)  # noqa: E731
            q, k, v = a.c_attn(blk.ln_1(x)).split(a.h, dim=2)
            q, k, v = heads(q), heads(k), heads(v)
            w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(a.hd)
            w = w.masked_fill(~causal, torch.finfo(torch.float32).min)
            ctx = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).reshape(b, s, a.h)
            x = x + a.c_proj(ctx)
            x = x + blk.proj(blk.act(blk.fc(blk.ln_2(x))))
        return torch.matmul(m.ln_f(x), m.wte.weight.t())


def _text(name, vocab, b, s, off, mask=True):
    ids = torch.randint(0, vocab, (b, s), generator=gz._gen(name, off))
    if not mask:
        return [("input_ids", ids)]
    m = torch.ones(b, s, dtype=torch.long)
    m[0, s - 16:] = 0                       # gen_zoo.py's bert_base pads its last 16 tokens
    for r in range(1, b):
        m[r, s - 16 * (r + 1):] = 0
    return [("input_ids", ids), ("attention_mask", m)]


def twin(name, module, inputs):
    """(module to export, dynamic_axes, {variant: inputs}) for gen_zoo.py's model NAME."""
    if name == "bert_base":
        ax = {0: "batch", 1: "seq"}
        return (BertDynamic(module),
                {"input_ids": ax, "attention_mask": ax, "last_hidden_state": ax,
                 "pooler_output": {0: "batch"}},
                {"dyn": inputs, "b4": _text(name, 30522, 4, 128, 11),
                 "s384": _text(name, 30522, 1, 384, 12)})
    if name == "gpt2":
        ax = {0: "batch", 1: "seq"}
        return (Gpt2Dynamic(module), {"input_ids": ax, "logits": ax},
                {"dyn": inputs, "b4": _text(name, 8192, 4, 128, 11, mask=False)})
    if name == "lstm_tagger":
        ax = {0: "batch", 1: "seq"}
        return (module, {"input_ids": ax, "logits": ax},
                {"b8": _text(name, 5000, 8, 64, 11, mask=False),
                 "b4s128": _text(name, 5000, 4, 128, 12, mask=False)})
    shape = list(inputs[0][1].shape)
    return (module, {"image": {0: "batch"}, "logits": {0: "batch"}},
            {"b8": [("image", torch.randn(8, *shape[1:], generator=gz._gen(name, 11)))]})


VARIANTS = {"bert_base": ("dyn", "b4", "s384"), "gpt2": ("dyn", "b4"),
            "lstm_tagger": ("b8", "b4s128")}


def variants_of(name):
    return VARIANTS.get(name, ("b8",))


def generator_hash(name):
    h = hashlib.sha256(gz.generator_hash(name).encode())
    for obj in (BertDynamic, Gpt2Dynamic, _text, twin, export_twin, gzf._entry_for):
        h.update(inspect.getsource(obj).encode())
    return h.hexdigest()


def export_twin(out, name, digest):
    """Export NAME.dyn.onnx and reference its variants; returns {entry key: entry}."""
    t0 = time.time()
    module, inputs, out_names, desc = gz.MODELS[name]()
    dyn, axes, variants = twin(name, module, inputs)
    dyn.eval()
    in_names = [n for n, _ in inputs]
    onnx_file = name + ".dyn.onnx"
    path = os.path.join(out, onnx_file)
    renames = [(path + ".tmp", path)]
    with torch.enable_grad():           # as gen_zoo.py: no fused inference fast paths
        torch.onnx.export(dyn, tuple(t for _, t in inputs), path + ".tmp", input_names=in_names,
                          output_names=out_names, opset_version=gz.OPSET,
                          do_constant_folding=True, dynamic_axes=axes)
    onnx.checker.check_model(path + ".tmp")
    model = onnx.load(path + ".tmp", load_external_data=False)
    hist = collections.Counter(n.op_type for n in model.graph.node)
    entries = collections.OrderedDict()
    for v, ins in variants.items():
        key = "%s.%s" % (name, v)
        e = {"name": key, "variant_of": name,
             "description": desc + "; exported with dynamic axes (%s)" % onnx_file,
             "dynamic_axes": {k: {str(a): n for a, n in d.items()} for k, d in axes.items()},
             "params_m": round(sum(p.numel() for p in dyn.parameters()) / 1e6, 2),
             "ops": dict(sorted(hist.items())), "generator": digest}
        e.update(gzf._entry_for(out, dyn, key, onnx_file, ins, out_names, renames))
        entries[key] = e
    for tmp, final in renames:
        os.replace(tmp, final)
    for e in entries.values():
        e["onnx_bytes"] = os.path.getsize(path)
        e["export_seconds"] = round(time.time() - t0, 1)
    return entries


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=gz.default_dir(), help="cache directory (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these of gen_zoo.py's models")
    ap.add_argument("--force", action="store_true", help="regenerate even when up to date")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--list-checks", action="store_true",
                    help="print the variant entries generated so far and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(gz.MODELS))
        return 0
    if args.list_checks:
        man = gz.read_manifest(args.out)["models"]
        print("\n".join("%s.%s" % (n, v) for n in gz.MODELS for v in variants_of(n)
                        if "%s.%s" % (n, v) in man))
        return 0
    names = args.only or list(gz.MODELS)
    unknown = [n for n in names if n not in gz.MODELS]
    if unknown:
        ap.error("unknown model(s): %s (known: %s)" % (", ".join(unknown), ", ".join(gz.MODELS)))
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    os.makedirs(args.out, exist_ok=True)
    failed = []
    with open(os.path.join(args.out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        man = gz.read_manifest(args.out)
        for name in names:
            digest = generator_hash(name)
            keys = ["%s.%s" % (name, v) for v in variants_of(name)]
            if not args.force and all(gz.is_fresh(args.out, man["models"].get(k), digest)
                                      for k in keys):
                print("gen_zoo_dynamic: %-19s up to date" % name, flush=True)
                continue
            try:
                entries = export_twin(args.out, name, digest)
            except Exception:
                traceback.print_exc()
                for f in os.listdir(args.out):
                    if f.startswith(name + ".") and f.endswith(".tmp"):
                        os.remove(os.path.join(args.out, f))
                print("gen_zoo_dynamic: %-19s FAILED" % name, flush=True)
                failed.append(name)
                continue
            man["models"].update(entries)
            gz.write_manifest(args.out, man)
            print("gen_zoo_dynamic: %-19s %s  [%s]" % (
                name, ", ".join("%s %.2f GFLOP" % (k, e["gflop"]) for k, e in entries.items()),
                "%.1f MB, %.1fs" % (next(iter(entries.values()))["onnx_bytes"] / 1e6,
                                     next(iter(entries.values()))["export_seconds"])), flush=True)
    if failed:
        print("gen_zoo_dynamic: failed: %s" % " ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
