#!/usr/bin/python3
"""Export the zoo's second set of families (issue 24): architectures people serve that the
first 14 models do not cover, each with a dynamic batch axis (transformers also a dynamic
sequence axis) and references at more than one shape.

    /usr/bin/python3 bench/zoo/gen_zoo_families.py [--out DIR] [--only NAME ...] [--force]
                                                   [--list] [--list-checks]

Same rules as gen_zoo.py, whose helpers it imports (Debian's /usr/bin/python3 with torch
1.13, torchvision 0.14, onnx 1.12; opset 17; weights from fixed seeds; nothing downloaded;
BatchNorm statistics from a few train-mode passes). What differs:

- NAME.onnx is exported with dynamic axes (torch.onnx.export's dynamic_axes): the batch
  axis always, the sequence axis for the text transformers, the past length for the decoder
  step. Shapes inside the graph are therefore computed from Shape ops, as in any serving
  export.
- Besides the base shape (batch 1) a model has variants: other shapes of the same file,
  each with its own inputs and PyTorch references, written as manifest entries
  "NAME.VARIANT" (e.g. regnety_400mf.b8) whose "onnx" is NAME.onnx. check.py checks an
  entry of either kind unchanged: `check.py --braid B regnety_400mf regnety_400mf.b8`.
  --list-checks prints every entry name (base and variants).

Entries go into the same DIR/manifest.json as gen_zoo.py's (under DIR/.lock), with
"family", "variant_of" and "dynamic_axes" added. Exit status as gen_zoo.py's.
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
import zlib

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.models as tvm
from torchvision.models import swin_transformer as tv_swin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_zoo as gz  # noqa: E402  (shared helpers: seeds, norms, BN calibration, FLOPs, manifest)

OPSET = gz.OPSET
SEED = gz.SEED


def _seed_module(name):
    torch.manual_seed(SEED + zlib.crc32(name.encode()))


def _init_linear(m, gen, std=0.02):
    """N(0, STD) weights and small biases for every Linear/Embedding/EmbeddingBag (transformer
    and recommender style), then a mild random affine on the norms."""
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding, nn.EmbeddingBag)):
                mod.weight.copy_(std * torch.randn(mod.weight.shape, generator=gen))
            if isinstance(mod, nn.Linear) and mod.bias is not None:
                mod.bias.copy_(std * torch.randn(mod.bias.shape, generator=gen))
    gz._randomize_norms(m, gen)


def _randomize_groupnorms(m, gen):
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.GroupNorm) and mod.affine:
                mod.weight.copy_(0.8 + 0.4 * torch.rand(mod.weight.shape, generator=gen))
                mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=gen))


# ------------------------------------------------------------------- shared transformer block

class PreLnAttention(nn.Module):
    """Multi-head self-attention whose every reshape takes batch and length from the input
    (x.shape), so a dynamic-axes export computes them with Shape/Gather/Concat."""
    def __init__(self, hidden, heads):
        super().__init__()
        self.nh, self.hd = heads, hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)

    def forward(self, x, ext_mask=None):
        b, s, h = x.shape
        def heads(t):
            return t.view(b, s, self.nh, self.hd).transpose(1, 2)
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd)
        if ext_mask is not None:
            w = w + ext_mask
        ctx = torch.matmul(torch.softmax(w, dim=-1), v)
        return self.o(ctx.transpose(1, 2).reshape(b, s, h))


class PreLnLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden, eps=1e-5)
        self.attn = PreLnAttention(hidden, heads)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-5)
        self.fc1 = nn.Linear(hidden, ffn)
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x, ext_mask=None):
        x = x + self.attn(self.ln1(x), ext_mask)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


# ------------------------------------------------------------------------------------ models

def build_regnety_400mf():
    """torchvision RegNetY-400MF: stage widths 48/104/208/440, grouped 3x3 convs of group
    width 8, squeeze-excitation (ratio 0.25) in every block; 224x224."""
    name = "regnety_400mf"
    _seed_module(name)
    m = tvm.regnet_y_400mf(weights=None)
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m, (1, 3, 224, 224), gz._gen(name, 2))
    m.eval()
    img = lambda n, off: torch.randn(n, 3, 224, 224, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("image", img(1, 4))], outputs=["logits"],
                dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                variants={"b8": [("image", img(8, 5))]},
                desc="torchvision RegNetY-400MF (grouped 3x3 convs, group width 8, SE on "
                     "48/104/208/440 channels), 224x224, dynamic batch")


def build_densenet_mini():
    """torchvision DenseNet with DenseNet-121's growth rate (32), bottleneck (4x) and stem,
    half its depth: dense blocks of 4/8/12/8 layers; every layer concatenates."""
    name = "densenet_mini"
    _seed_module(name)
    m = torchvision.models.DenseNet(growth_rate=32, block_config=(4, 8, 12, 8),
                                    num_init_features=64, num_classes=1000)
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m, (1, 3, 224, 224), gz._gen(name, 2))
    m.eval()
    img = lambda n, off: torch.randn(n, 3, 224, 224, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("image", img(1, 4))], outputs=["logits"],
                dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                variants={"b8": [("image", img(8, 5))]},
                desc="DenseNet (growth 32, blocks 4/8/12/8, pre-activation BN-ReLU-conv, "
                     "concat-heavy), 224x224, dynamic batch")


class PreLnEncoder(nn.Module):
    """Text encoder, pre-LN: token + position embeddings (positions from arange(seq)), 4
    layers of hidden 256, 4 heads, FFN 1024, erf GELU, padding mask added to the scores."""
    def __init__(self, vocab=8000, hidden=256, heads=4, layers=4, ffn=1024, max_pos=512):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.layers = nn.ModuleList(PreLnLayer(hidden, heads, ffn) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.word(input_ids) + self.pos(pos)
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        return self.ln_f(x)


def build_preln_encoder():
    name = "preln_encoder"
    _seed_module(name)
    m = PreLnEncoder()
    _init_linear(m, gz._gen(name, 1))
    m.eval()

    def feed(b, s, off):
        ids = torch.randint(0, 8000, (b, s), generator=gz._gen(name, off))
        mask = torch.ones(b, s, dtype=torch.long)
        for r in range(b):                     # row r: the last 16*r tokens are padding
            if r:
                mask[r, s - 16 * r:] = 0
        mask[0, s - 8:] = 0
        return [("input_ids", ids), ("attention_mask", mask)]
    ax = {0: "batch", 1: "seq"}
    return dict(module=m, inputs=feed(1, 128, 2), outputs=["last_hidden_state"],
                dynamic_axes={"input_ids": ax, "attention_mask": ax, "last_hidden_state": ax},
                variants={"b4": feed(4, 128, 3), "s384": feed(1, 384, 4)},
                desc="pre-LN transformer encoder (vocab 8000, 4 layers, hidden 256, 4 heads, "
                     "FFN 1024, padding mask), int64 input_ids + attention_mask, dynamic batch "
                     "and sequence; base (1,128), variants (4,128) and (1,384)")


def _zero_symbolic(g, self):
    """aten::zero (Swin-V2 zeroes the key third of a clone of the qkv bias with .zero_()) has
    no ONNX symbolic in torch 1.13: x * 0 (the bias is finite)."""
    return g.op("Mul", self, g.op("Constant", value_t=torch.tensor(0.0)))


def build_swin_v2_mini():
    """torchvision Swin-V2 (shifted windows, cosine attention, continuous position bias MLP)
    at a quarter of Swin-V2-T's width: embed 48, depths 2/2/2/2, window 8, on 224x224, so
    the 28x28 and 14x14 stages are padded by F.pad with pads computed from the shape."""
    name = "swin_v2_mini"
    _seed_module(name)
    m = tv_swin.SwinTransformer(patch_size=[4, 4], embed_dim=48, depths=[2, 2, 2, 2],
                                num_heads=[3, 6, 12, 24], window_size=[8, 8],
                                stochastic_depth_prob=0.0, num_classes=1000,
                                block=tv_swin.SwinTransformerBlockV2,
                                downsample_layer=tv_swin.PatchMergingV2)
    gz._randomize_norms(m, gz._gen(name, 1))
    m.eval()
    torch.onnx.register_custom_op_symbolic("aten::zero", _zero_symbolic, OPSET)
    img = lambda n, off: torch.randn(n, 3, 224, 224, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("image", img(1, 4))], outputs=["logits"],
                dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                variants={"b8": [("image", img(8, 5))]},
                desc="torchvision Swin-V2 (embed 48, depths 2/2/2/2, heads 3/6/12/24, window "
                     "8, computed F.pad, torch.roll, position-bias MLP), 224x224, dynamic batch")


def _conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


class UNetMini(nn.Module):
    """UNet: 4 levels (16/32/64/128 channels), skip concatenations; upsampling by
    ConvTranspose2d (2x2, stride 2) twice and by bilinear Resize once."""
    def __init__(self, classes=3):
        super().__init__()
        self.e1, self.e2 = _conv_bn_relu(3, 16), _conv_bn_relu(16, 32)
        self.e3, self.mid = _conv_bn_relu(32, 64), _conv_bn_relu(64, 128)
        self.up3 = nn.ConvTranspose2d(128, 64, 2, stride=2)
        self.d3 = _conv_bn_relu(128, 64)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.d2 = _conv_bn_relu(64, 32)
        self.red1 = nn.Conv2d(32, 16, 1)
        self.d1 = _conv_bn_relu(32, 16)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        x1 = self.e1(x)
        x2 = self.e2(F.max_pool2d(x1, 2))
        x3 = self.e3(F.max_pool2d(x2, 2))
        y = self.mid(F.max_pool2d(x3, 2))
        y = self.d3(torch.cat([self.up3(y), x3], 1))
        y = self.d2(torch.cat([self.up2(y), x2], 1))
        y = F.interpolate(self.red1(y), scale_factor=2.0, mode="bilinear", align_corners=False)
        y = self.d1(torch.cat([y, x1], 1))
        return self.head(y)


def build_unet_mini():
    name = "unet_mini"
    _seed_module(name)
    m = UNetMini()
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m, (1, 3, 128, 128), gz._gen(name, 2))
    m.eval()
    img = lambda n, off: torch.randn(n, 3, 128, 128, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("image", img(1, 4))], outputs=["mask_logits"],
                dynamic_axes={"image": {0: "batch"}, "mask_logits": {0: "batch"}},
                variants={"b8": [("image", img(8, 5))]},
                desc="UNet segmentation (16/32/64/128 channels, skip concats, 2 ConvTranspose "
                     "2x2/2 + 1 bilinear Resize), 3 classes, 128x128, dynamic batch")


class AudioFrontEnd(nn.Module):
    """wav2vec2-style: 7 Conv1d (kernels 10,3,3,3,3,2,2, strides 5,2,2,2,2,2,2; 128
    channels, no bias) with GroupNorm(128 groups) after the first and GELU after each, then
    LayerNorm + a 128->192 projection and 2 pre-LN transformer layers (4 heads, FFN 768)."""
    def __init__(self, ch=128, hidden=192):
        super().__init__()
        ks, ss = (10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2)
        self.convs = nn.ModuleList(nn.Conv1d(1 if i == 0 else ch, ch, k, stride=s, bias=False)
                                   for i, (k, s) in enumerate(zip(ks, ss)))
        self.gn = nn.GroupNorm(ch, ch)
        self.ln = nn.LayerNorm(ch)
        self.proj = nn.Linear(ch, hidden)
        self.layers = nn.ModuleList(PreLnLayer(hidden, 4, 4 * hidden) for _ in range(2))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, waveform):
        x = waveform.unsqueeze(1)
        for i, conv in enumerate(self.convs):
            x = conv(x)
            if i == 0:
                x = self.gn(x)
            x = F.gelu(x)
        x = self.proj(self.ln(x.transpose(1, 2)))
        for layer in self.layers:
            x = layer(x)
        return self.ln_f(x)


def build_audio_frontend():
    name = "audio_frontend"
    _seed_module(name)
    m = AudioFrontEnd()
    _init_linear(m, gz._gen(name, 1))
    _randomize_groupnorms(m, gz._gen(name, 2))
    m.eval()
    wav = lambda n, off: 0.3 * torch.randn(n, 16000, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("waveform", wav(1, 4))], outputs=["features"],
                dynamic_axes={"waveform": {0: "batch"}, "features": {0: "batch"}},
                variants={"b8": [("waveform", wav(8, 5))]},
                desc="audio front end (7 Conv1d, GroupNorm, GELU, 128 ch; 2 pre-LN transformer "
                     "layers, hidden 192), 1 s of 16 kHz audio -> 49 frames, dynamic batch")


class GptDecoderStep(nn.Module):
    """One decoding step of a GPT-style decoder (4 pre-LN layers, hidden 256, 4 heads, tanh
    GELU, vocab 4096): the new token attends to the KV cache and to itself; the caches come
    in as past_key_i/past_value_i [B,4,P,64] and go out as present_* [B,4,P+1,64]."""
    def __init__(self, vocab=4096, hidden=256, heads=4, layers=4, max_pos=1024):
        super().__init__()
        self.nh, self.hd, self.nl = heads, hidden // heads, layers
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_pos, hidden)
        self.ln1 = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.qkv = nn.ModuleList(nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.o = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.ln2 = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(layers))
        self.fc1 = nn.ModuleList(nn.Linear(hidden, 4 * hidden) for _ in range(layers))
        self.fc2 = nn.ModuleList(nn.Linear(4 * hidden, hidden) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, input_ids, *past):
        b, s = input_ids.shape
        p = past[0].shape[2]
        pos = torch.arange(p, p + s, device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        presents = []
        for i in range(self.nl):
            q, k, v = self.qkv[i](self.ln1[i](x)).split(x.shape[-1], dim=2)
            q, k, v = (t.view(b, s, self.nh, self.hd).transpose(1, 2) for t in (q, k, v))
            k = torch.cat([past[2 * i], k], dim=2)
            v = torch.cat([past[2 * i + 1], v], dim=2)
            presents += [k, v]
            w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.hd), dim=-1)
            ctx = torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1)
            x = x + self.o[i](ctx)
            x = x + self.fc2[i](F.gelu(self.fc1[i](self.ln2[i](x)), approximate="tanh"))
        logits = torch.matmul(self.ln_f(x), self.wte.weight.t())
        return (logits, *presents)


def decoder_step_entry(name, m, vocab, past, variants, desc):
    """The entry of decoder step M (a GptDecoderStep made right after _seed_module(NAME)): its
    weights, one token of VOCAB per batch row with a KV cache of PAST positions as the base
    inputs, VARIANTS {key: (batch, past)}, dynamic batch and past axes."""
    _init_linear(m, gz._gen(name, 1))
    m.eval()

    def feed(b, p, off):
        g = gz._gen(name, off)
        ins = [("input_ids", torch.randint(0, vocab, (b, 1), generator=g))]
        for i in range(m.nl):
            for kv in ("key", "value"):
                ins.append(("past_%s_%d" % (kv, i), torch.randn(b, m.nh, p, m.hd, generator=g)))
        return ins
    base = feed(1, past, 2)
    outs = ["logits"] + ["present_%s_%d" % (kv, i) for i in range(m.nl) for kv in ("key", "value")]
    axes = {"input_ids": {0: "batch"}, "logits": {0: "batch"}}
    for n, _ in base[1:]:
        axes[n] = {0: "batch", 2: "past"}
    for n in outs[1:]:
        axes[n] = {0: "batch", 2: "past_plus_1"}
    return dict(module=m, inputs=base, outputs=outs, dynamic_axes=axes,
                variants={k: feed(b, p, 3 + i) for i, (k, (b, p)) in enumerate(variants.items())},
                desc=desc)


def build_gpt_decoder_step():
    name = "gpt_decoder_step"
    _seed_module(name)
    return decoder_step_entry(
        name, GptDecoderStep(), 4096, 127, {"b4": (4, 127), "b8": (8, 127)},
        "GPT-style decoder step (4 pre-LN layers, hidden 256, 4 heads, tied LM head over 4096 "
        "tokens) with KV cache in/out; dynamic batch and past length; base (1, past 127), "
        "variants batch 4 and 8")


class DlrmMini(nn.Module):
    """DLRM-style recommender: bottom MLP on 13 dense features, 8 sum-pooled
    nn.EmbeddingBag tables (dim 32, bags of 4 ids), pairwise dot interaction (bmm + the
    strictly lower triangle), top MLP to a logit and its click probability."""
    ROWS = (1000, 500, 2000, 100, 3000, 50, 800, 1500)

    def __init__(self, dim=32):
        super().__init__()
        self.bot = nn.Sequential(nn.Linear(13, 64), nn.ReLU(), nn.Linear(64, dim), nn.ReLU())
        self.emb = nn.ModuleList(nn.EmbeddingBag(r, dim, mode="sum") for r in self.ROWS)
        n = len(self.ROWS) + 1
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 64), nn.ReLU(),
                                 nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, sparse_ids):
        d = self.bot(dense)
        feats = [d] + [e(sparse_ids[:, t, :]) for t, e in enumerate(self.emb)]
        z = torch.stack(feats, dim=1)
        zz = torch.bmm(z, z.transpose(1, 2))
        inter = zz[:, self.li, self.lj]
        logit = self.top(torch.cat([d, inter], dim=1))
        return logit, torch.sigmoid(logit)


def build_dlrm_mini():
    name = "dlrm_mini"
    _seed_module(name)
    m = DlrmMini()
    _init_linear(m, gz._gen(name, 1), std=0.1)
    with torch.no_grad():                        # embeddings of unit scale, as trained ones
        for e in m.emb:
            e.weight.mul_(10.0)
    m.eval()

    def feed(b, off):
        g = gz._gen(name, off)
        ids = torch.stack([torch.randint(0, r, (b, 4), generator=g) for r in DlrmMini.ROWS], 1)
        return [("dense", torch.randn(b, 13, generator=g)), ("sparse_ids", ids)]
    ax = {0: "batch"}
    return dict(module=m, inputs=feed(1, 2), outputs=["logit", "click_prob"],
                dynamic_axes={"dense": ax, "sparse_ids": ax, "logit": ax, "click_prob": ax},
                variants={"b8": feed(8, 3), "b16": feed(16, 4)},
                desc="DLRM-style recommender (13 dense features, 8 EmbeddingBag tables of "
                     "50-3000 rows x 32, bags of 4, dot interaction), dynamic batch")


class GruClassifier(nn.Module):
    """Text classifier: embedding (vocab 5000, 128), 2-layer GRU (hidden 192, batch_first),
    linear over the last layer's final state to 10 classes."""
    def __init__(self, vocab=5000, emb=128, hidden=192, classes=10):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=2, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, input_ids):
        h, h_n = self.gru(self.emb(input_ids))
        return self.out(h_n[-1]), h


def build_gru_classifier():
    name = "gru_classifier"
    _seed_module(name)
    m = GruClassifier().eval()
    feed = lambda b, s, off: [("input_ids", torch.randint(0, 5000, (b, s),
                                                          generator=gz._gen(name, off)))]
    ax = {0: "batch", 1: "seq"}
    return dict(module=m, inputs=feed(1, 64, 2), outputs=["logits", "states"],
                dynamic_axes={"input_ids": ax, "logits": {0: "batch"}, "states": ax},
                variants={"b8": feed(8, 64, 3), "b4s128": feed(4, 128, 4)},
                desc="GRU text classifier (embedding 128, 2-layer GRU hidden 192, 10 classes), "
                     "int64 input_ids, dynamic batch and sequence; base (1,64), variants "
                     "(8,64) and (4,128)")


class DetectMini(nn.Module):
    """Single-shot detector, one image: 4 stride-2 conv-BN-ReLU stages (16/32/64/96) to a
    16x16 grid, a head of 3 anchors x (4 box deltas + 5 class logits), box decoding
    (exp on sizes), TopK 200 on the best class score, then NonMaxSuppression (IoU 0.5)
    through torchvision.ops.nms; outputs the kept boxes and scores (data-dependent count)."""
    def __init__(self, classes=5, anchors=3, grid=16, size=256):
        super().__init__()
        chans, layers, cin = (16, 32, 64, 96), [], 3
        for c in chans:
            layers += [nn.Conv2d(cin, c, 3, stride=2, padding=1, bias=False),
                       nn.BatchNorm2d(c), nn.ReLU(inplace=True)]
            cin = c
        self.backbone = nn.Sequential(*layers)
        self.head = nn.Conv2d(cin, anchors * (4 + classes), 3, padding=1)
        self.c, self.a = classes, anchors
        ys, xs = torch.meshgrid(torch.arange(grid), torch.arange(grid), indexing="ij")
        step = size / grid
        cx = ((xs + 0.5) * step).reshape(-1, 1).repeat(1, anchors).reshape(-1)
        cy = ((ys + 0.5) * step).reshape(-1, 1).repeat(1, anchors).reshape(-1)
        wh = torch.tensor([24.0, 48.0, 96.0]).repeat(grid * grid)
        self.register_buffer("anchors", torch.stack([cx, cy, wh, wh], 1))

    def forward(self, image):
        p = self.head(self.backbone(image))                       # [1, A*(4+C), G, G]
        p = p.permute(0, 2, 3, 1).reshape(-1, 4 + self.c)        # [G*G*A, 4+C]
        a = self.anchors
        ctr = a[:, :2] + p[:, :2] * a[:, 2:]
        half = 0.5 * a[:, 2:] * torch.exp(p[:, 2:4].clamp(max=4.0))
        boxes = torch.cat([ctr - half, ctr + half], 1)
        scores = torch.sigmoid(p[:, 4:]).max(1)[0]
        top_scores, top = scores.topk(200)
        top_boxes = boxes[top]
        keep = torchvision.ops.nms(top_boxes, top_scores, 0.5)
        return top_boxes[keep], top_scores[keep]


def build_detect_mini():
    name = "detect_mini"
    _seed_module(name)
    m = DetectMini()
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m.backbone, (1, 3, 256, 256), gz._gen(name, 2))   # forward is batch 1
    m.eval()
    img = torch.randn(1, 3, 256, 256, generator=gz._gen(name, 4))
    return dict(module=m, inputs=[("image", img)], outputs=["boxes", "scores"],
                dynamic_axes={"boxes": {0: "kept"}, "scores": {0: "kept"}}, variants={},
                desc="single-shot detector (4 conv stages, 16x16 grid x 3 anchors, 5 classes, "
                     "box decode, TopK 200, NonMaxSuppression IoU 0.5), 256x256, batch 1")


TRANSFORMER_CODE = (PreLnAttention, PreLnLayer)
CODE_OF = {
    "preln_encoder": TRANSFORMER_CODE + (PreLnEncoder,),
    "swin_v2_mini": (_zero_symbolic,),
    "unet_mini": (_conv_bn_relu, UNetMini),
    "audio_frontend": TRANSFORMER_CODE + (AudioFrontEnd, _randomize_groupnorms),
    "gpt_decoder_step": (GptDecoderStep, decoder_step_entry),
    "dlrm_mini": (DlrmMini,),
    "gru_classifier": (GruClassifier,),
    "detect_mini": (DetectMini,),
}

MODELS = collections.OrderedDict([
    ("regnety_400mf", build_regnety_400mf),
    ("densenet_mini", build_densenet_mini),
    ("unet_mini", build_unet_mini),
    ("swin_v2_mini", build_swin_v2_mini),
    ("preln_encoder", build_preln_encoder),
    ("audio_frontend", build_audio_frontend),
    ("gpt_decoder_step", build_gpt_decoder_step),
    ("dlrm_mini", build_dlrm_mini),
    ("gru_classifier", build_gru_classifier),
    ("detect_mini", build_detect_mini),
])


# ---------------------------------------------------------------------------------- generate

def generator_hash(name):
    h = hashlib.sha256()
    h.update(gz._helpers_source().encode())
    for fn in (_seed_module, _init_linear, export_family, _entry_for):
        h.update(inspect.getsource(fn).encode())
    h.update(inspect.getsource(MODELS[name]).encode())
    for obj in CODE_OF.get(name, ()):
        h.update(inspect.getsource(obj).encode())
    h.update(("%s torch=%s torchvision=%s onnx=%s" % (
        name, torch.__version__, torchvision.__version__, onnx.__version__)).encode())
    return h.hexdigest()


def _entry_for(out, module, key, onnx_file, inputs, out_names, renames):
    """Write KEY's inputs and PyTorch's outputs on them; returns the manifest fields."""
    args = tuple(t for _, t in inputs)
    macs, macs_by_op = gz.count_macs(module, args)
    with torch.no_grad():
        res = module(*args)
    if isinstance(res, torch.Tensor):
        res = (res,)
    entry_in, entry_out = [], []
    for k, (n, t) in enumerate(inputs):
        a = t.numpy()
        f = "%s.in%d.npy" % (key, k)
        renames.append((gz._save_npy(os.path.join(out, f), a), os.path.join(out, f)))
        entry_in.append({"name": n, "dtype": str(a.dtype), "shape": list(a.shape), "file": f})
    for k, (n, t) in enumerate(zip(out_names, res)):
        a = t.numpy()
        if not np.all(np.isfinite(a)) or float(np.abs(a).max()) == 0.0:
            raise RuntimeError("%s: output %r is degenerate (non-finite or all zero)" % (key, n))
        f = "%s.ref%d.npy" % (key, k)
        renames.append((gz._save_npy(os.path.join(out, f), a), os.path.join(out, f)))
        entry_out.append({"name": n, "dtype": str(a.dtype), "shape": list(a.shape), "file": f,
                          "max_abs": float(np.abs(a).max())})
    return {"onnx": onnx_file, "opset": OPSET, "inputs": entry_in, "outputs": entry_out,
            "gflop": round(2.0 * macs / 1e9, 4),
            "gmacs_by_op": {op: round(v / 1e9, 4) for op, v in sorted(macs_by_op.items())}}


def export_family(out, name, digest):
    """Build and export model NAME with its dynamic axes; returns {entry key: entry} for the
    base shape (key NAME) and every variant (key NAME.VARIANT)."""
    t0 = time.time()
    spec = MODELS[name]()
    module, inputs, out_names = spec["module"], spec["inputs"], spec["outputs"]
    in_names = [n for n, _ in inputs]
    renames = []
    onnx_path = os.path.join(out, name + ".onnx")
    with torch.enable_grad():       # as gen_zoo.py: no fused inference fast paths in the trace
        torch.onnx.export(module, tuple(t for _, t in inputs), onnx_path + ".tmp",
                          input_names=in_names, output_names=out_names, opset_version=OPSET,
                          do_constant_folding=True, dynamic_axes=spec["dynamic_axes"])
    renames.append((onnx_path + ".tmp", onnx_path))
    onnx.checker.check_model(onnx_path + ".tmp")
    model = onnx.load(onnx_path + ".tmp", load_external_data=False)
    hist = collections.Counter(n.op_type for n in model.graph.node)
    common = {"family": name, "description": spec["desc"],
              "dynamic_axes": {k: {str(a): v for a, v in d.items()}
                               for k, d in spec["dynamic_axes"].items()},
              "params_m": round(sum(p.numel() for p in module.parameters()) / 1e6, 2),
              "ops": dict(sorted(hist.items())), "generator": digest}
    entries = collections.OrderedDict()
    for key, ins in [(name, inputs)] + [("%s.%s" % (name, v), ins)
                                        for v, ins in spec.get("variants", {}).items()]:
        if [n for n, _ in ins] != in_names:
            raise RuntimeError("%s: variant inputs %s differ from %s" % (key, ins, in_names))
        e = {"name": key}
        e.update(common)
        e.update(_entry_for(out, module, key, name + ".onnx", ins, out_names, renames))
        if key != name:
            e["variant_of"] = name
        entries[key] = e
    for tmp, final in renames:
        os.replace(tmp, final)
    size = os.path.getsize(onnx_path)
    for e in entries.values():
        e["onnx_bytes"] = size
        e["export_seconds"] = round(time.time() - t0, 1)
    return entries


def check_names(out, own=None):
    """Every manifest entry of the families OWN (default: all) in DIR (base shapes and
    variants), in order."""
    man = gz.read_manifest(out)["models"]
    return [k for n in (own or MODELS) for k, e in man.items() if e.get("family") == n]


def main(argv=None, own=None, doc=None, tag="gen_zoo_families"):
    """The command line; OWN: the model names this generator owns (default: all of MODELS;
    gen_zoo_more.py adds its builders to MODELS and passes its own names, DOC and TAG)."""
    own = list(own or MODELS)
    ap = argparse.ArgumentParser(description=(doc or __doc__).splitlines()[0])
    ap.add_argument("--out", default=gz.default_dir(), help="cache directory (default: %(default)s)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="generate only these models")
    ap.add_argument("--force", action="store_true", help="regenerate even when up to date")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    ap.add_argument("--list-checks", action="store_true",
                    help="print the manifest entries generated so far (base shapes and variants) and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(own))
        return 0
    if args.list_checks:
        print("\n".join(check_names(args.out, own)))
        return 0
    names = args.only or own
    unknown = [n for n in names if n not in own]
    if unknown:
        ap.error("unknown model(s): %s (known: %s)" % (", ".join(unknown), ", ".join(own)))
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    os.makedirs(args.out, exist_ok=True)
    failed = []
    with open(os.path.join(args.out, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        man = gz.read_manifest(args.out)
        for name in names:
            digest = generator_hash(name)
            old = [e for e in man["models"].values() if e.get("family") == name]
            if not args.force and old and all(gz.is_fresh(args.out, e, digest) for e in old):
                print("%s: %-17s up to date" % (tag, name), flush=True)
                continue
            try:
                entries = export_family(args.out, name, digest)
            except Exception:
                traceback.print_exc()
                for f in os.listdir(args.out):
                    if f.startswith(name + ".") and f.endswith(".tmp"):
                        os.remove(os.path.join(args.out, f))
                print("%s: %-17s FAILED" % (tag, name), flush=True)
                failed.append(name)
                continue
            for k in [k for k, e in man["models"].items() if e.get("family") == name]:
                del man["models"][k]
            man["models"].update(entries)
            gz.write_manifest(args.out, man)
            e = entries[name]
            print("%s: %-17s %6.2f GFLOP, %5.1f MB, %5.1fs  [%s]  [%d ops: %s]" % (
                tag, name, e["gflop"], e["onnx_bytes"] / 1e6, e["export_seconds"],
                " ".join(entries), sum(e["ops"].values()),
                " ".join("%s:%d" % kv for kv in e["ops"].items())), flush=True)
    if failed:
        print("%s: failed: %s" % (tag, " ".join(failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
