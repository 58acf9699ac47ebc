#!/usr/bin/python3
"""The batching benchmark's models with a dynamic batch dimension (issue 13): torchvision's
MobileNetV2 (image [N,3,224,224]) and a 2-layer BERT encoder (input_ids [N,128] int64, hidden
768, 12 heads, erf GELU), both exported by torch.onnx with dim 0 named "N" and deterministic
random weights (nothing downloaded). Each export is checked first: in PyTorch, a batch of 3 equals
its three rows run one by one (the model really batches row by row).

    gen_models.py OUT_DIR        writes OUT_DIR/mobilenet_v2_dyn.onnx, bert2_dyn.onnx (cached)
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torchvision.models as tvm

SEED = 20261126


class Encoder(nn.Module):
    """BERT-style post-LN encoder over token ids, batch-agnostic (no hard-coded batch 1)."""

    def __init__(self, vocab=30522, hidden=768, heads=12, layers=2, ffn=3072, seq=128):
        super().__init__()
        self.h, self.nh, self.s = hidden, heads, seq
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(0.02 * torch.randn(1, seq, hidden))
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.qkv = nn.ModuleList(nn.Linear(hidden, 3 * hidden) for _ in range(layers))
        self.proj = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.n1 = nn.ModuleList(nn.LayerNorm(hidden, eps=1e-12) for _ in range(layers))
        self.up = nn.ModuleList(nn.Linear(hidden, ffn) for _ in range(layers))
        self.down = nn.ModuleList(nn.Linear(ffn, hidden) for _ in range(layers))
        self.n2 = nn.ModuleList(nn.LayerNorm(hidden, eps=1e-12) for _ in range(layers))

    def forward(self, input_ids):
        x = self.emb_norm(self.word(input_ids) + self.pos)
        hd = self.h // self.nh
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](x).split(self.h, dim=-1)
            heads = lambda t: t.reshape(-1, self.s, self.nh, hd).permute(0, 2, 1, 3)
            w = torch.softmax(heads(q) @ heads(k).transpose(-1, -2) / math.sqrt(hd), dim=-1)
            ctx = (w @ heads(v)).permute(0, 2, 1, 3).reshape(-1, self.s, self.h)
            x = self.n1[i](self.proj[i](ctx) + x)
            x = self.n2[i](self.down[i](nn.functional.gelu(self.up[i](x))) + x)
        return x


def export(module, example, name, in_name, out_name, path):
    module.eval()
    with torch.no_grad():
        one = torch.cat([module(example[i:i + 1]) for i in range(example.shape[0])])
        batched = module(example)
    err = float((one - batched).abs().max() / batched.abs().max())
    if err > 1e-4:
        sys.exit("%s: batch rows differ from single rows (%.2g)" % (name, err))
    with torch.enable_grad():
        torch.onnx.export(module, (example,), path + ".tmp", input_names=[in_name],
                          output_names=[out_name], opset_version=17,
                          dynamic_axes={in_name: {0: "N"}, out_name: {0: "N"}})
    os.replace(path + ".tmp", path)
    print("wrote %s (%.1f MB)" % (path, os.path.getsize(path) / 1e6))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    mnv2 = os.path.join(out, "mobilenet_v2_dyn.onnx")
    if not os.path.exists(mnv2):
        torch.manual_seed(SEED)
        m = tvm.mobilenet_v2(weights=None)
        with torch.no_grad():                     # non-trivial batch-norm statistics
            for mod in m.modules():
                if isinstance(mod, nn.BatchNorm2d):
                    mod.running_mean.uniform_(-0.1, 0.1)
                    mod.running_var.uniform_(0.5, 1.5)
        export(m, torch.rand(3, 3, 224, 224), "mobilenet_v2", "image", "logits", mnv2)
    bert = os.path.join(out, "bert2_dyn.onnx")
    if not os.path.exists(bert):
        torch.manual_seed(SEED)
        export(Encoder(), torch.randint(0, 30522, (3, 128)), "bert2", "input_ids", "hidden", bert)


if __name__ == "__main__":
    main()
