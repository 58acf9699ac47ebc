#!/usr/bin/python3
"""Export the benchmark zoo (public architectures, deterministic random weights) to ONNX.

    /usr/bin/python3 bench/zoo/gen_zoo.py [--out DIR] [--only NAME ...] [--force] [--list]

Run it with Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14, onnx 1.12); nothing is
downloaded: every model is built from its torchvision or hand-written definition with
weights from a fixed seed. BatchNorm layers get non-trivial statistics (a few train-mode
passes on random data after a random affine), so BatchNorm folding is exercised.

For each model NAME it writes into DIR (default $BRAID_ZOO_DIR, else ~/.cache/braid/zoo):
    NAME.onnx           opset 17, batch 1, static shapes (checked with onnx.checker)
    NAME.in<k>.npy      input k (signature order); token ids are int64
    NAME.ref<k>.npy     PyTorch's FP32 output k on those inputs (the reference)
    manifest.json       one entry per model: inputs and outputs (name, dtype, shape, file),
                        GFLOP (2 per multiply-add, counted in PyTorch over every
                        convolution and matrix product), the op histogram of the exported
                        graph, a description and the generator hash

A model whose manifest entry carries the current generator hash (its builder's source, the
shared export code, torch/torchvision/onnx versions) and whose files exist is skipped, so a
second run is cheap and editing one builder regenerates only that model. Files are written
under temporary names and renamed; the manifest entry is written last, so an interrupted
run never marks partial files as done. Concurrent runs on one DIR serialize on DIR/.lock.

Exit status: 0 when every requested model is up to date, 1 if any export failed (the others
are still generated), 2 on bad arguments.
"""

import argparse
import collections
import fcntl
import hashlib
import inspect
import json
import math
import os
import sys
import time
import traceback
import warnings
import zlib

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision
import torchvision.models as tvm
from torch.utils._python_dispatch import TorchDispatchMode

OPSET = 17
SEED = 20240611


def default_dir():
    return os.environ.get("BRAID_ZOO_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "braid", "zoo")


# ----------------------------------------------------------------------------- shared helpers

def _gen(name, offset=0):
    return torch.Generator().manual_seed(SEED + zlib.crc32(name.encode()) + offset)


def _randomize_norms(m, gen):
    """Mild random affine for every BatchNorm/LayerNorm (defaults are gamma 1, beta 0)."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm)):
                if getattr(mod, "weight", None) is not None:
                    mod.weight.copy_(0.8 + 0.4 * torch.rand(mod.weight.shape, generator=gen))
                if getattr(mod, "bias", None) is not None:
                    mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=gen))


def _calibrate_bn(m, shape, gen, batches=3):
    """Give BatchNorm running statistics that match the network: cumulative averages over a
    few train-mode forward passes on random batches of 2 (no gradients)."""
    bns = [mod for mod in m.modules() if isinstance(mod, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None                       # cumulative moving average
    m.train()
    with torch.no_grad():
        for _ in range(batches):
            m(torch.randn(2, *shape[1:], generator=gen))
    m.eval()


def _vision(name, ctor, desc, size=224, prepare=None):
    """A torchvision classifier with random weights, input 'image' [1,3,SIZE,SIZE]."""
    torch.manual_seed(SEED + zlib.crc32(name.encode()))
    m = ctor(weights=None)
    if prepare:
        prepare(m, _gen(name, 3))
    _randomize_norms(m, _gen(name, 1))
    shape = (1, 3, size, size)
    _calibrate_bn(m, shape, _gen(name, 2))
    m.eval()
    x = torch.randn(*shape, generator=_gen(name, 4))
    return m, [("image", x)], ["logits"], desc


# ------------------------------------------------------------------------ transformer blocks

# BERT (post-LN, separate Q/K/V, erf GELU, padding mask) and GPT-2 (pre-LN, fused QKV, tanh
# GELU, causal mask built in forward with tril + masked_fill). Fixed integers in every view()
# keep the Reshape shapes constant in a static export.
class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.h, self.nh, self.hd, self.s = hidden, heads, hidden // heads, seq
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def _heads(self, t):
        return t.view(1, self.s, self.nh, self.hd).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = (self._heads(f(x)) for f in (self.query, self.key, self.value))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd) + ext_mask
        ctx = torch.matmul(torch.softmax(w, dim=-1), v)
        return ctx.permute(0, 2, 1, 3).reshape(1, self.s, self.h)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, seq, ffn, eps=1e-12):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads, seq)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()
        self.output = nn.Linear(ffn, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)

    def forward(self, x, ext_mask):
        a = self.attn_norm(self.attn_out(self.attention(x, ext_mask)) + x)
        return self.out_norm(self.output(self.gelu(self.intermediate(a))) + a)


class Bert(nn.Module):
    """BERT-base: token/position/type embeddings, 12 post-LN layers, tanh pooler."""
    def __init__(self, vocab=30522, hidden=768, heads=12, layers=12, ffn=3072, seq=128,
                 max_pos=512):
        super().__init__()
        self.s = seq
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.tok_type = nn.Embedding(2, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, seq, ffn) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))
        self.register_buffer("token_type_ids", torch.zeros(1, seq, dtype=torch.long))

    def forward(self, input_ids, attention_mask):
        x = self.word(input_ids) + self.pos(self.position_ids)
        x = self.emb_norm(x + self.tok_type(self.token_type_ids))
        ext = (1.0 - attention_mask.view(1, 1, 1, self.s).to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


class GptAttention(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.h, self.nh, self.hd, self.s = hidden, heads, hidden // heads, seq
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)

    def _heads(self, t):
        return t.view(1, self.s, self.nh, self.hd).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(self.h, dim=2)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        causal = torch.tril(torch.ones(self.s, self.s, dtype=torch.bool))
        w = w.masked_fill(~causal, torch.finfo(torch.float32).min)
        ctx = torch.matmul(torch.softmax(w, dim=-1), v)
        return self.c_proj(ctx.permute(0, 2, 1, 3).reshape(1, self.s, self.h))


class GptBlock(nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = GptAttention(hidden, heads, seq)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.act = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(self.act(self.fc(self.ln_2(x))))


class Gpt2(nn.Module):
    """GPT-2 small shape: 12 pre-LN blocks, hidden 768, 12 heads; LM head tied to the
    token embedding over a reduced vocabulary."""
    def __init__(self, vocab=8192, hidden=768, heads=12, layers=12, seq=128):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(seq, hidden)
        self.blocks = nn.ModuleList(GptBlock(hidden, heads, seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))

    def forward(self, input_ids):
        x = self.wte(input_ids) + self.wpe(self.position_ids)
        for b in self.blocks:
            x = b(x)
        return torch.matmul(self.ln_f(x), self.wte.weight.t())


class LstmTagger(nn.Module):
    """Embedding + one bidirectional LSTM layer + a linear tag classifier per token."""
    def __init__(self, vocab=5000, emb=128, hidden=256, tags=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, input_ids):
        h, _ = self.lstm(self.emb(input_ids))
        return self.out(h)


def _init_transformer(m, gen):
    """GPT-2/BERT initializer: N(0, 0.02) weights and embeddings, small random biases."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                mod.weight.copy_(0.02 * torch.randn(mod.weight.shape, generator=gen))
            if isinstance(mod, nn.Linear) and mod.bias is not None:
                mod.bias.copy_(0.02 * torch.randn(mod.bias.shape, generator=gen))
    _randomize_norms(m, gen)


# ------------------------------------------------------------------------------------ models

def build_mobilenet_v2():
    return _vision("mobilenet_v2", tvm.mobilenet_v2, "torchvision MobileNetV2, 224x224")


def build_mobilenet_v3_small():
    return _vision("mobilenet_v3_small", tvm.mobilenet_v3_small,
                   "torchvision MobileNetV3-Small (hardswish, SE), 224x224")


def build_mobilenet_v3_large():
    return _vision("mobilenet_v3_large", tvm.mobilenet_v3_large,
                   "torchvision MobileNetV3-Large (hardswish, SE), 224x224")


def build_shufflenet_v2_x0_5():
    return _vision("shufflenet_v2_x0_5", tvm.shufflenet_v2_x0_5,
                   "torchvision ShuffleNetV2 x0.5 (channel shuffle, split), 224x224")


def build_shufflenet_v2_x1_0():
    return _vision("shufflenet_v2_x1_0", tvm.shufflenet_v2_x1_0,
                   "torchvision ShuffleNetV2 x1.0 (channel shuffle, split), 224x224")


def build_efficientnet_b0():
    return _vision("efficientnet_b0", tvm.efficientnet_b0,
                   "torchvision EfficientNet-B0 (SiLU, SE, depthwise), 224x224")


def build_squeezenet1_1():
    return _vision("squeezenet1_1", tvm.squeezenet1_1,
                   "torchvision SqueezeNet 1.1 (no BatchNorm, concat), 224x224")


def build_resnet18():
    return _vision("resnet18", tvm.resnet18, "torchvision ResNet-18, 224x224")


def build_resnet50():
    return _vision("resnet50", tvm.resnet50, "torchvision ResNet-50, 224x224")


def build_convnext_tiny():
    def layer_scale(m, gen):
        # torchvision starts layer_scale at 1e-6, which silences every residual branch:
        # give the branches weight so they count in the output.
        with torch.no_grad():
            for n, p in m.named_parameters():
                if n.endswith("layer_scale"):
                    p.copy_(0.05 + 0.15 * torch.rand(p.shape, generator=gen))
    return _vision("convnext_tiny", tvm.convnext_tiny,
                   "torchvision ConvNeXt-Tiny (7x7 depthwise, channels-last LayerNorm, GELU), "
                   "224x224", prepare=layer_scale)


def build_vit_b_16():
    def head(m, gen):
        # torchvision zero-initialises the classifier: every logit would be 0.
        with torch.no_grad():
            m.heads.head.weight.copy_(0.02 * torch.randn(m.heads.head.weight.shape, generator=gen))
            m.heads.head.bias.copy_(0.02 * torch.randn(m.heads.head.bias.shape, generator=gen))
    return _vision("vit_b_16", tvm.vit_b_16,
                   "torchvision ViT-B/16 (12 layers, hidden 768, 197 tokens), 224x224",
                   prepare=head)


def build_bert_base():
    torch.manual_seed(SEED)
    m = Bert()
    _init_transformer(m, _gen("bert_base", 1))
    m.eval()
    ids = torch.randint(0, 30522, (1, 128), generator=_gen("bert_base", 2))
    mask = torch.ones(1, 128, dtype=torch.long)
    mask[:, 112:] = 0
    return (m, [("input_ids", ids), ("attention_mask", mask)],
            ["last_hidden_state", "pooler_output"],
            "BERT-base encoder with embeddings (vocab 30522, 12 layers, hidden 768, 12 heads, "
            "erf GELU), seq 128, int64 input_ids + attention_mask")


def build_gpt2():
    torch.manual_seed(SEED)
    m = Gpt2()
    _init_transformer(m, _gen("gpt2", 1))
    m.eval()
    ids = torch.randint(0, 8192, (1, 128), generator=_gen("gpt2", 2))
    return (m, [("input_ids", ids)], ["logits"],
            "GPT-2-style decoder (12 pre-LN layers, hidden 768, 12 heads, tanh GELU, causal "
            "mask from tril + masked_fill), seq 128, tied LM head over 8192 tokens")


def build_lstm_tagger():
    torch.manual_seed(SEED)
    m = LstmTagger().eval()
    ids = torch.randint(0, 5000, (1, 64), generator=_gen("lstm_tagger", 1))
    return (m, [("input_ids", ids)], ["logits"],
            "sequence tagger: embedding (vocab 5000, 128) + bidirectional LSTM (hidden 256) + "
            "linear (32 tags), seq 64, int64 input_ids")


# Code a model's hash covers beside its builder (see generator_hash).
TRANSFORMER_CODE = (BertSelfAttention, BertLayer, Bert, GptAttention, GptBlock, Gpt2,
                    _init_transformer)
CODE_OF = {"bert_base": TRANSFORMER_CODE, "gpt2": TRANSFORMER_CODE, "lstm_tagger": (LstmTagger,)}

# name -> builder; the order is the benchmark's order (small to large, CNNs first).
MODELS = collections.OrderedDict([
    ("squeezenet1_1", build_squeezenet1_1),
    ("shufflenet_v2_x0_5", build_shufflenet_v2_x0_5),
    ("shufflenet_v2_x1_0", build_shufflenet_v2_x1_0),
    ("mobilenet_v3_small", build_mobilenet_v3_small),
    ("mobilenet_v3_large", build_mobilenet_v3_large),
    ("mobilenet_v2", build_mobilenet_v2),
    ("efficientnet_b0", build_efficientnet_b0),
    ("resnet18", build_resnet18),
    ("resnet50", build_resnet50),
    ("convnext_tiny", build_convnext_tiny),
    ("vit_b_16", build_vit_b_16),
    ("bert_base", build_bert_base),
    ("gpt2", build_gpt2),
    ("lstm_tagger", build_lstm_tagger),
])


# ----------------------------------------------------------------------------- FLOP counting

# aten op -> multiply-adds from (args, result). Linear, matmul, einsum, LSTM cells and
# attention all reach these after PyTorch's decompositions; everything else is negligible.
def _macs_of(name, args, out):
    def numel(t):
        n = 1
        for d in t.shape:
            n *= d
        return n
    if name == "convolution":    # out * Cin/groups * kernel; transposed: in * Cout/groups * kernel
        w = args[1]
        return (numel(args[0]) if args[6] else numel(out)) * (numel(w) // w.shape[0])
    if name in ("mm", "bmm"):                      # [.., M, K] x [.., K, N]
        return numel(out) * args[0].shape[-1]
    if name in ("addmm", "baddbmm", "addbmm"):
        return numel(out) * args[1].shape[-1]
    if name in ("mv", "addmv"):
        return numel(out) * args[-1].shape[-1]
    return 0


def count_macs(module, args):
    """Multiply-adds of one inference of MODULE on ARGS, counted at the aten level (a
    TorchDispatchMode sees every convolution and matrix product after decomposition).
    Runs with autograd on so fused inference fast paths (nn.MultiheadAttention's) decompose
    into the products they compute. Returns (macs, {aten op: macs})."""

    per_op = collections.Counter()

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, a=(), kw=None):
            out = func(*a, **(kw or {}))
            name = func.overloadpacket.__name__
            macs = _macs_of(name, a, out)
            if macs:
                per_op[name] += macs
            return out

    with torch.enable_grad(), Count():
        module(*args)
    return sum(per_op.values()), dict(per_op)


# ---------------------------------------------------------------------------------- generate

def _helpers_source():
    """Source of the shared code every model depends on (part of every model's hash)."""
    fns = [_gen, _randomize_norms, _calibrate_bn, _vision, _macs_of, count_macs, export_model]
    return "".join(inspect.getsource(f) for f in fns) + repr((OPSET, SEED))


def generator_hash(name):
    h = hashlib.sha256()
    h.update(_helpers_source().encode())
    h.update(inspect.getsource(MODELS[name]).encode())
    for obj in CODE_OF.get(name, ()):
        h.update(inspect.getsource(obj).encode())
    h.update(("%s torch=%s torchvision=%s onnx=%s" % (
        name, torch.__version__, torchvision.__version__, onnx.__version__)).encode())
    return h.hexdigest()


def is_fresh(out, entry, digest):
    if not entry or entry.get("generator") != digest:
        return False
    files = [entry["onnx"]] + [t["file"] for t in entry["inputs"] + entry["outputs"]]
    return all(os.path.isfile(os.path.join(out, f)) for f in files)


def _save_npy(path, array):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        np.save(f, np.ascontiguousarray(array))
    return tmp


def export_model(out, name, digest):
    """Build, export, check and run model NAME; returns its manifest entry."""
    t0 = time.time()
    module, inputs, out_names, desc = MODELS[name]()
    in_names = [n for n, _ in inputs]
    args = tuple(t for _, t in inputs)
    renames = []                                        # (tmp, final), renamed at the end

    onnx_path = os.path.join(out, name + ".onnx")
    # Traced with autograd on: under no_grad, nn.MultiheadAttention (ViT) takes its fused
    # inference fast path, aten::_native_multi_head_attention, which has no ONNX export.
    with torch.enable_grad():
        torch.onnx.export(module, args, onnx_path + ".tmp", input_names=in_names,
                          output_names=out_names, opset_version=OPSET, do_constant_folding=True)
    renames.append((onnx_path + ".tmp", onnx_path))
    onnx.checker.check_model(onnx_path + ".tmp")
    model = onnx.load(onnx_path + ".tmp", load_external_data=False)
    macs, macs_by_op = count_macs(module, args)
    hist = collections.Counter(n.op_type for n in model.graph.node)

    with torch.no_grad():
        res = module(*args)
    if isinstance(res, torch.Tensor):
        res = (res,)
    entry_in, entry_out = [], []
    for k, (n, t) in enumerate(inputs):
        a = t.numpy()
        f = "%s.in%d.npy" % (name, k)
        renames.append((_save_npy(os.path.join(out, f), a), os.path.join(out, f)))
        entry_in.append({"name": n, "dtype": str(a.dtype), "shape": list(a.shape), "file": f})
    for k, (n, t) in enumerate(zip(out_names, res)):
        a = t.numpy()
        if not np.all(np.isfinite(a)) or float(np.abs(a).max()) == 0.0:
            raise RuntimeError("%s: output %r is degenerate (non-finite or all zero)" % (name, n))
        f = "%s.ref%d.npy" % (name, k)
        renames.append((_save_npy(os.path.join(out, f), a), os.path.join(out, f)))
        entry_out.append({"name": n, "dtype": str(a.dtype), "shape": list(a.shape), "file": f,
                          "max_abs": float(np.abs(a).max())})
    for tmp, final in renames:
        os.replace(tmp, final)
    return {
        "name": name, "description": desc, "onnx": name + ".onnx", "opset": OPSET,
        "inputs": entry_in, "outputs": entry_out,
        "gflop": round(2.0 * macs / 1e9, 4),
        "gmacs_by_op": {op: round(v / 1e9, 4) for op, v in sorted(macs_by_op.items())},
        "params_m": round(sum(p.numel() for p in module.parameters()) / 1e6, 2),
        "onnx_bytes": os.path.getsize(onnx_path),
        "ops": dict(sorted(hist.items())),
        "export_seconds": round(time.time() - t0, 1),
        "generator": digest,
    }


def read_manifest(out):
    try:
        with open(os.path.join(out, "manifest.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"models": {}}


def write_manifest(out, man):
    man["models"] = collections.OrderedDict(
        (n, man["models"][n]) for n in list(MODELS) + sorted(man["models"])
        if n in man["models"])
    tmp = os.path.join(out, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump(man, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(out, "manifest.json"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=default_dir(), help="cache directory (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="generate only these models")
    ap.add_argument("--force", action="store_true", help="regenerate even when up to date")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(MODELS))
        return 0
    names = args.only or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error("unknown model(s): %s (known: %s)" % (", ".join(unknown), ", ".join(MODELS)))

    # The exporter warns about every traced constant and shape it could not infer; the
    # checker and the reference comparison (check.py) are what tell a good export.
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    os.makedirs(args.out, exist_ok=True)
    failed = []
    with open(os.path.join(args.out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)      # another run may be writing the same files
        man = read_manifest(args.out)
        for name in names:
            digest = generator_hash(name)
            if not args.force and is_fresh(args.out, man["models"].get(name), digest):
                print("gen_zoo: %-19s up to date" % name, flush=True)
                continue
            try:
                entry = export_model(args.out, name, digest)
            except Exception:                  # report, go on with the next model
                traceback.print_exc()
                for f in os.listdir(args.out):
                    if f.startswith(name + ".") and f.endswith(".tmp"):
                        os.remove(os.path.join(args.out, f))
                print("gen_zoo: %-19s FAILED" % name, flush=True)
                failed.append(name)
                continue
            man["models"][name] = entry
            write_manifest(args.out, man)
            print("gen_zoo: %-19s %6.2f GFLOP, %5.1f MB, %5.1fs  [%d ops: %s]" % (
                name, entry["gflop"], entry["onnx_bytes"] / 1e6, entry["export_seconds"],
                sum(entry["ops"].values()), " ".join("%s:%d" % kv for kv in entry["ops"].items())),
                flush=True)
    if failed:
        print("gen_zoo: failed: %s" % " ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
