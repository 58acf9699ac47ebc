#!/usr/bin/python3
"""Export the zoo's third set (issue 24): more architectures people serve, each with dynamic
axes and references at several shapes, so the zoo has at least 40 distinct models.

    /usr/bin/python3 bench/zoo/gen_zoo_more.py [--out DIR] [--only NAME ...] [--force]
                                               [--list] [--list-checks]

Everything works as in gen_zoo_families.py, whose export, manifest and cache code this file
uses unchanged (it adds its builders to that module's MODELS and runs its main): Debian's
/usr/bin/python3 with torch 1.13, torchvision 0.14, onnx 1.12; opset 17; weights from fixed
seeds; nothing downloaded; BatchNorm statistics from a few train-mode passes; NAME.onnx with
a dynamic batch axis (and a dynamic sequence axis for the sequence models); manifest entries
NAME (batch 1) and NAME.VARIANT. The variants follow issue 24: every CNN at batch 8
(".b8"); every text transformer at (1, 128), (4, 128) (".b4") and (1, 384) (".s384"); the
recurrent, audio and decoder-step models at their own batched shapes. The two detectors
whose output count depends on the data (NonMaxSuppression) are batch 1 only.
"""

import collections
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.models as tvm
from torchvision.models import segmentation as tv_seg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_zoo as gz  # noqa: E402
import gen_zoo_families as gzf  # noqa: E402

_seed_module = gzf._seed_module
_init_linear = gzf._init_linear


def _cnn(name, m, size, desc, out="logits", chans=3, prepare=None):
    """The spec of an image CNN M on 1 x CHANS x SIZE x SIZE: random norms, BN statistics,
    dynamic batch, variant b8."""
    if prepare:
        prepare(m, gz._gen(name, 3))
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m, (1, chans, size, size), gz._gen(name, 2))
    m.eval()
    img = lambda n, off: torch.randn(n, chans, size, size, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("image", img(1, 4))], outputs=[out],
                dynamic_axes={"image": {0: "batch"}, out: {0: "batch"}},
                variants={"b8": [("image", img(8, 5))]}, desc=desc + ", dynamic batch")


def _text_feeds(name, vocab, pad=True):
    """input_ids + attention_mask at (1,128), and variants b4 (4,128), s384 (1,384); row r of
    a batch has its last 16*r (row 0: 8) tokens padded."""
    def feed(b, s, off):
        ids = torch.randint(0, vocab, (b, s), generator=gz._gen(name, off))
        mask = torch.ones(b, s, dtype=torch.long)
        if pad:
            for r in range(1, b):
                mask[r, s - 16 * r:] = 0
            mask[0, s - 8:] = 0
        return [("input_ids", ids), ("attention_mask", mask)]
    return feed(1, 128, 2), {"b4": feed(4, 128, 3), "s384": feed(1, 384, 4)}


# ------------------------------------------------------------------------------------- CNNs

def build_googlenet():
    """torchvision GoogLeNet (Inception v1): 9 Inception blocks, each a 4-way Concat."""
    name = "googlenet"
    _seed_module(name)
    m = tvm.GoogLeNet(num_classes=1000, aux_logits=False, transform_input=False,
                      init_weights=True)
    return _cnn(name, m, 224, "torchvision GoogLeNet / Inception v1 (9 Inception blocks of "
                "4 branches concatenated), 224x224")


def build_resnext_odd():
    """ResNeXt bottlenecks (torchvision ResNet class) with 5 groups of width 12, 24, 48, 96:
    grouped 3x3 convs on 60/120/240/480 channels (60 and 120 not multiples of 16)."""
    name = "resnext_odd"
    _seed_module(name)
    m = tvm.ResNet(tvm.resnet.Bottleneck, [1, 2, 2, 1], groups=5, width_per_group=12)
    return _cnn(name, m, 224, "ResNeXt (bottleneck blocks 1/2/2/1, 5 groups: grouped 3x3 "
                "convs on 60/120/240/480 channels), 224x224")


def build_mnasnet1_0():
    name = "mnasnet1_0"
    _seed_module(name)
    return _cnn(name, tvm.mnasnet1_0(weights=None), 224,
                "torchvision MNASNet 1.0 (inverted residuals, 3x3 and 5x5 depthwise), 224x224")


def build_deit_tiny():
    """DeiT-Tiny's shape in torchvision's VisionTransformer: patch 16, 12 layers, hidden 192,
    3 heads, MLP 768; class token expanded to the batch (dynamic)."""
    name = "deit_tiny"
    _seed_module(name)
    m = tvm.VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3,
                              hidden_dim=192, mlp_dim=768, num_classes=1000)

    def head(m, gen):
        with torch.no_grad():
            m.heads.head.weight.copy_(0.02 * torch.randn(m.heads.head.weight.shape, generator=gen))
            m.heads.head.bias.copy_(0.02 * torch.randn(m.heads.head.bias.shape, generator=gen))
    return _cnn(name, m, 224, "ViT in DeiT-Tiny's shape (patch 16, 12 layers, hidden 192, "
                "3 heads), 224x224", prepare=head)


class MixerBlock(nn.Module):
    def __init__(self, tokens, hidden, tok_mlp, ch_mlp):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.tok = nn.Sequential(nn.Linear(tokens, tok_mlp), nn.GELU(), nn.Linear(tok_mlp, tokens))
        self.ch = nn.Sequential(nn.Linear(hidden, ch_mlp), nn.GELU(), nn.Linear(ch_mlp, hidden))

    def forward(self, x):
        x = x + self.tok(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.ln2(x))


class MlpMixer(nn.Module):
    """MLP-Mixer: 16x16 patches of 224x224 (196 tokens), hidden 256, 8 blocks (token MLP
    128, channel MLP 1024), mean over tokens, linear to 1000 classes."""
    def __init__(self, hidden=256, blocks=8):
        super().__init__()
        self.stem = nn.Conv2d(3, hidden, 16, stride=16)
        self.blocks = nn.Sequential(*[MixerBlock(196, hidden, 128, 1024) for _ in range(blocks)])
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, 1000)

    def forward(self, image):
        x = self.stem(image).flatten(2).transpose(1, 2)
        return self.head(self.ln(self.blocks(x)).mean(1))


def build_mlp_mixer():
    name = "mlp_mixer"
    _seed_module(name)
    m = MlpMixer()
    _init_linear(m, gz._gen(name, 6))
    return _cnn(name, m, 224, "MLP-Mixer (patch 16, 196 tokens, hidden 256, 8 blocks, "
                "token MLP 128, channel MLP 1024), 224x224")


class DeepLabV3(nn.Module):
    """torchvision DeepLabV3 on MobileNetV3-Large: its dict output as one tensor."""
    def __init__(self):
        super().__init__()
        self.m = tv_seg.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                     num_classes=21, aux_loss=False)

    def forward(self, image):
        return self.m(image)["out"]


def build_deeplabv3_mbv3():
    name = "deeplabv3_mbv3"
    _seed_module(name)
    return _cnn(name, DeepLabV3(), 256, "torchvision DeepLabV3 on MobileNetV3-Large (ASPP "
                "with dilated convs and image pooling, bilinear Resize to the input size), "
                "21 classes, 256x256", out="mask_logits")


class Espcn(nn.Module):
    """ESPCN super-resolution x3: 5x5 conv 64, 3x3 conv 32, 3x3 conv to 3*9 channels, tanh,
    PixelShuffle(3) (ONNX DepthToSpace)."""
    def __init__(self, scale=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 64, 5, padding=2), nn.Tanh(),
                                  nn.Conv2d(64, 32, 3, padding=1), nn.Tanh(),
                                  nn.Conv2d(32, 3 * scale * scale, 3, padding=1))
        self.shuffle = nn.PixelShuffle(scale)

    def forward(self, image):
        return torch.sigmoid(self.shuffle(self.body(image)))


def build_espcn_x3():
    name = "espcn_x3"
    _seed_module(name)
    return _cnn(name, Espcn(), 128, "ESPCN super-resolution x3 (3 convs, tanh, PixelShuffle = "
                "DepthToSpace), 128x128 -> 384x384", out="upscaled")


class C3dMini(nn.Module):
    """Video classifier: Conv3d-BN-ReLU stages (32/64/128/192 channels, 3x3x3), MaxPool3d,
    global average pool, linear to 400 classes; clips of 8 frames of 112x112."""
    def __init__(self):
        super().__init__()
        layers, cin = [], 3
        for i, c in enumerate((32, 64, 128, 192)):
            layers += [nn.Conv3d(cin, c, 3, padding=1, bias=False), nn.BatchNorm3d(c),
                       nn.ReLU(inplace=True),
                       nn.MaxPool3d((1, 2, 2) if i == 0 else (2, 2, 2))]
            cin = c
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, 400)

    def forward(self, clip):
        return self.fc(self.features(clip).mean((2, 3, 4)))


def build_c3d_mini():
    name = "c3d_mini"
    _seed_module(name)
    m = C3dMini()
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m, (1, 3, 8, 112, 112), gz._gen(name, 2))
    m.eval()
    clip = lambda n, off: torch.randn(n, 3, 8, 112, 112, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("clip", clip(1, 4))], outputs=["logits"],
                dynamic_axes={"clip": {0: "batch"}, "logits": {0: "batch"}},
                variants={"b8": [("clip", clip(8, 5))]},
                desc="3D CNN video classifier (4 Conv3d-BN-ReLU stages 32/64/128/192, "
                     "MaxPool3d), 8x112x112 clips, dynamic batch")


class PointNet(nn.Module):
    """PointNet classifier: a T-Net predicts a 3x3 transform (bmm), shared MLPs as Conv1d
    k=1 + BN + ReLU (64, 128, 1024), max over the points, MLP to 40 classes."""
    def __init__(self, k=40):
        super().__init__()
        def mlp(*ch):
            return nn.Sequential(*[m for a, b in zip(ch, ch[1:]) for m in
                                   (nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU())])
        self.tnet = mlp(3, 64, 128, 512)
        self.tfc = nn.Sequential(nn.Linear(512, 128), nn.ReLU(), nn.Linear(128, 9))
        self.feat = mlp(3, 64, 128, 1024)
        self.head = nn.Sequential(nn.Linear(1024, 256), nn.BatchNorm1d(256), nn.ReLU(),
                                  nn.Linear(256, k))

    def forward(self, points):
        t = self.tfc(self.tnet(points).max(2)[0]).view(-1, 3, 3) + torch.eye(3)
        x = torch.bmm(t, points)
        return self.head(self.feat(x).max(2)[0])


def build_pointnet():
    name = "pointnet"
    _seed_module(name)
    m = PointNet()
    gz._randomize_norms(m, gz._gen(name, 1))
    gz._calibrate_bn(m, (1, 3, 1024), gz._gen(name, 2))
    m.eval()
    pts = lambda n, off: torch.randn(n, 3, 1024, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("points", pts(1, 4))], outputs=["logits"],
                dynamic_axes={"points": {0: "batch"}, "logits": {0: "batch"}},
                variants={"b8": [("points", pts(8, 5))]},
                desc="PointNet classifier (T-Net 3x3 transform by bmm, Conv1d k=1 MLPs to 1024, "
                     "max over 1024 points), dynamic batch")


class YoloMini(nn.Module):
    """YOLO-style one-image detector: a CSP-ish SiLU backbone (strides 8/16/32), a head per
    scale (3 anchors x (4 + 1 + 8 classes)), boxes decoded per grid cell, the three scales
    concatenated (80x80/40x40/20x20 at 640... here 320: 2100 cells x 3), TopK 300 on the
    class score, class-aware NMS (torchvision.ops.batched_nms, IoU 0.45)."""
    def __init__(self, classes=8, anchors=3):
        super().__init__()
        def cbs(a, b, s=1):
            return nn.Sequential(nn.Conv2d(a, b, 3, s, 1, bias=False), nn.BatchNorm2d(b), nn.SiLU())
        self.stem = nn.Sequential(cbs(3, 16, 2), cbs(16, 32, 2), cbs(32, 32))
        self.s8 = nn.Sequential(cbs(32, 48, 2), cbs(48, 48))
        self.s16 = nn.Sequential(cbs(48, 96, 2), cbs(96, 96))
        self.s32 = nn.Sequential(cbs(96, 160, 2), cbs(160, 160))
        self.c, self.a = classes, anchors
        self.heads = nn.ModuleList(nn.Conv2d(c, anchors * (5 + classes), 1) for c in (48, 96, 160))
        self.register_buffer("sizes", torch.tensor([[16.0, 32.0, 48.0], [48.0, 80.0, 112.0],
                                                    [112.0, 180.0, 260.0]]))

    def forward(self, image):
        x8 = self.s8(self.stem(image))
        x16 = self.s16(x8)
        x32 = self.s32(x16)
        preds = []
        for i, (f, stride) in enumerate(zip((x8, x16, x32), (8, 16, 32))):
            p = self.heads[i](f)
            g_h, g_w = p.shape[2], p.shape[3]
            p = p.view(self.a, 5 + self.c, g_h, g_w).permute(2, 3, 0, 1)   # [H, W, A, 5+C]
            ys = torch.arange(g_h, dtype=torch.float32).view(-1, 1, 1)
            xs = torch.arange(g_w, dtype=torch.float32).view(1, -1, 1)
            cx = (torch.sigmoid(p[..., 0]) * 2 - 0.5 + xs) * stride
            cy = (torch.sigmoid(p[..., 1]) * 2 - 0.5 + ys) * stride
            wh = (torch.sigmoid(p[..., 2:4]) * 2) ** 2 * self.sizes[i].view(1, 1, -1, 1)
            box = torch.stack([cx - wh[..., 0] / 2, cy - wh[..., 1] / 2,
                               cx + wh[..., 0] / 2, cy + wh[..., 1] / 2], -1)
            score = torch.sigmoid(p[..., 4:5]) * torch.sigmoid(p[..., 5:])
            preds.append(torch.cat([box, score], -1).reshape(-1, 4 + self.c))
        pred = torch.cat(preds, 0)
        best, cls = pred[:, 4:].max(1)
        top, idx = best.topk(300)
        boxes, labels = pred[idx, :4], cls[idx]
        keep = torchvision.ops.batched_nms(boxes, top, labels, 0.45)
        return boxes[keep], top[keep], labels[keep]


def build_yolo_mini():
    name = "yolo_mini"
    _seed_module(name)
    m = YoloMini()
    gz._randomize_norms(m, gz._gen(name, 1))
    seq = nn.Sequential(m.stem, m.s8, m.s16, m.s32)
    gz._calibrate_bn(seq, (1, 3, 320, 320), gz._gen(name, 2))
    m.eval()
    img = torch.randn(1, 3, 320, 320, generator=gz._gen(name, 4))
    return dict(module=m, inputs=[("image", img)], outputs=["boxes", "scores", "labels"],
                dynamic_axes={"boxes": {0: "kept"}, "scores": {0: "kept"}, "labels": {0: "kept"}},
                variants={},
                desc="YOLO-style detector (SiLU conv backbone, heads at strides 8/16/32, 3 "
                     "anchors x 8 classes, TopK 300, class-aware NonMaxSuppression), 320x320, "
                     "batch 1")


class DetrMini(nn.Module):
    """DETR-style detector, batched: a small conv backbone to a 16x16 map of 128 channels,
    learned 2-D position embeddings, 2 transformer encoder + 2 decoder layers (nn.Transformer
    layers, 4 heads), 32 object queries, class (9 + no-object) and box heads; per image the
    10 best queries by TopK with their boxes gathered."""
    def __init__(self, d=128, queries=32, classes=9):
        super().__init__()
        chans, layers, cin = (32, 64, 96, 128, d), [], 3
        for c in chans:
            layers += [nn.Conv2d(cin, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
            cin = c
        self.backbone = nn.Sequential(*layers)
        self.pos = nn.Parameter(torch.randn(1, 256, d) * 0.1)
        self.enc = nn.ModuleList(nn.TransformerEncoderLayer(d, 4, 4 * d, 0.0, batch_first=True)
                                 for _ in range(2))
        self.dec = nn.ModuleList(nn.TransformerDecoderLayer(d, 4, 4 * d, 0.0, batch_first=True)
                                 for _ in range(2))
        self.query = nn.Embedding(queries, d)
        self.cls = nn.Linear(d, classes + 1)
        self.box = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, image):
        mem = self.backbone(image).flatten(2).transpose(1, 2) + self.pos
        for layer in self.enc:
            mem = layer(mem)
        q = self.query.weight.unsqueeze(0).expand(image.shape[0], -1, -1)
        for layer in self.dec:
            q = layer(q, mem)
        prob = torch.softmax(self.cls(q), -1)[..., :-1]
        score, label = prob.max(-1)
        top, idx = score.topk(10, dim=1)
        boxes = torch.sigmoid(self.box(q))
        boxes = torch.gather(boxes, 1, idx.unsqueeze(-1).expand(-1, -1, 4))
        return boxes, top, torch.gather(label, 1, idx)


def build_detr_mini():
    name = "detr_mini"
    _seed_module(name)
    m = DetrMini()
    _init_linear(m, gz._gen(name, 6), std=0.05)
    return _cnn(name, m, 512, "DETR-style detector (5-stage conv backbone to 16x16x128, 2 "
                "encoder + 2 decoder transformer layers, 32 queries, TopK 10 per image), "
                "512x512", out="boxes") | {"outputs": ["boxes", "scores", "labels"],
                                          "dynamic_axes": {k: {0: "batch"} for k in
                                                           ("image", "boxes", "scores", "labels")}}


# -------------------------------------------------------------------------- sequence models

class TcnBlock(nn.Module):
    def __init__(self, ch, dilation, k=3):
        super().__init__()
        self.pad = (k - 1) * dilation
        self.c1 = nn.Conv1d(ch, ch, k, dilation=dilation)
        self.c2 = nn.Conv1d(ch, ch, k, dilation=dilation)

    def forward(self, x):
        y = F.relu(self.c1(F.pad(x, (self.pad, 0))))
        y = F.relu(self.c2(F.pad(y, (self.pad, 0))))
        return F.relu(x + y)


class Tcn(nn.Module):
    """Temporal convolutional network: 6 residual blocks of two causal dilated Conv1d (96
    channels, kernel 3, dilations 1..32, left padding), on 24 sensor channels x 1000 steps,
    a per-step linear to 8 outputs."""
    def __init__(self, cin=24, ch=96, out=8):
        super().__init__()
        self.inp = nn.Conv1d(cin, ch, 1)
        self.blocks = nn.Sequential(*[TcnBlock(ch, 2 ** i) for i in range(6)])
        self.out = nn.Conv1d(ch, out, 1)

    def forward(self, signal):
        return self.out(self.blocks(self.inp(signal)))


def build_tcn():
    name = "tcn"
    _seed_module(name)
    m = Tcn().eval()
    sig = lambda n, off: torch.randn(n, 24, 1000, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("signal", sig(1, 4))], outputs=["prediction"],
                dynamic_axes={"signal": {0: "batch", 2: "time"},
                              "prediction": {0: "batch", 2: "time"}},
                variants={"b8": [("signal", sig(8, 5))]},
                desc="TCN (6 residual blocks of causal dilated Conv1d, 96 channels, dilations "
                     "1-32), 24 x 1000 steps, dynamic batch and time")


class ResMlpTabular(nn.Module):
    """LayerNorm-heavy MLP for tabular data: 128 features -> 512, 8 pre-LN residual blocks
    (LayerNorm, 512 -> 1024 GELU -> 512), LayerNorm, 2 outputs."""
    def __init__(self, cin=128, h=512, blocks=8):
        super().__init__()
        self.inp = nn.Linear(cin, h)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(h), nn.Linear(h, 2 * h), nn.GELU(),
                                                  nn.Linear(2 * h, h)) for _ in range(blocks))
        self.ln = nn.LayerNorm(h)
        self.out = nn.Linear(h, 2)

    def forward(self, features):
        x = self.inp(features)
        for b in self.blocks:
            x = x + b(x)
        return self.out(self.ln(x))


def build_resmlp_tabular():
    name = "resmlp_tabular"
    _seed_module(name)
    m = ResMlpTabular()
    _init_linear(m, gz._gen(name, 1), std=0.05)
    m.eval()
    f = lambda n, off: torch.randn(n, 128, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("features", f(1, 2))], outputs=["logits"],
                dynamic_axes={"features": {0: "batch"}, "logits": {0: "batch"}},
                variants={"b8": [("features", f(8, 3))], "b64": [("features", f(64, 4))]},
                desc="residual MLP for tabular data (8 pre-LayerNorm blocks, 512 -> 1024 -> "
                     "512, GELU), 128 features, dynamic batch")


class DcnV2(nn.Module):
    """DCN-v2 recommender: 6 mean-pooled nn.EmbeddingBag tables (dim 16, bags of 3) and 13
    dense features concatenated (109 wide), 3 cross layers x0 * (W x + b) + x, a deep MLP
    (256, 128) in parallel, a logit from both."""
    ROWS = (400, 1200, 60, 2500, 800, 150)

    def __init__(self, dim=16):
        super().__init__()
        self.emb = nn.ModuleList(nn.EmbeddingBag(r, dim, mode="mean") for r in self.ROWS)
        w = 13 + dim * len(self.ROWS)
        self.cross = nn.ModuleList(nn.Linear(w, w) for _ in range(3))
        self.deep = nn.Sequential(nn.Linear(w, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU())
        self.out = nn.Linear(w + 128, 1)

    def forward(self, dense, sparse_ids):
        x0 = torch.cat([dense] + [e(sparse_ids[:, t, :]) for t, e in enumerate(self.emb)], 1)
        x = x0
        for c in self.cross:
            x = x0 * c(x) + x
        return torch.sigmoid(self.out(torch.cat([x, self.deep(x0)], 1)))


def build_dcn_v2():
    name = "dcn_v2"
    _seed_module(name)
    m = DcnV2()
    _init_linear(m, gz._gen(name, 1), std=0.08)
    with torch.no_grad():
        for e in m.emb:
            e.weight.mul_(10.0)
    m.eval()

    def feed(b, off):
        g = gz._gen(name, off)
        ids = torch.stack([torch.randint(0, r, (b, 3), generator=g) for r in DcnV2.ROWS], 1)
        return [("dense", torch.randn(b, 13, generator=g)), ("sparse_ids", ids)]
    ax = {0: "batch"}
    return dict(module=m, inputs=feed(1, 2), outputs=["click_prob"],
                dynamic_axes={"dense": ax, "sparse_ids": ax, "click_prob": ax},
                variants={"b8": feed(8, 3), "b64": feed(64, 4)},
                desc="DCN-v2 recommender (6 mean EmbeddingBag tables, 3 cross layers, deep MLP "
                     "256/128), dynamic batch")


class LstmEncoder(nn.Module):
    """Seq2seq encoder: embedding (vocab 6000, 256), 2-layer bidirectional LSTM (hidden
    256); outputs every step's states and the final hidden and cell states."""
    def __init__(self, vocab=6000, emb=256, hidden=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, input_ids):
        out, (h, c) = self.lstm(self.emb(input_ids))
        return out, h, c


def build_lstm_encoder():
    name = "lstm_encoder"
    _seed_module(name)
    m = LstmEncoder().eval()
    feed = lambda b, s, off: [("input_ids", torch.randint(0, 6000, (b, s),
                                                          generator=gz._gen(name, off)))]
    ax = {0: "batch", 1: "seq"}
    return dict(module=m, inputs=feed(1, 64, 2), outputs=["states", "h_n", "c_n"],
                dynamic_axes={"input_ids": ax, "states": ax, "h_n": {1: "batch"},
                              "c_n": {1: "batch"}},
                variants={"b8": feed(8, 64, 3), "b4s128": feed(4, 128, 4)},
                desc="seq2seq LSTM encoder (embedding 256, 2-layer bidirectional LSTM hidden "
                     "256, states + h_n + c_n), int64 input_ids, dynamic batch and sequence; "
                     "base (1,64), variants (8,64) and (4,128)")


class BiGruTagger(nn.Module):
    """Token tagger: embedding (vocab 4000, 96), 1-layer bidirectional GRU (hidden 128),
    linear to 17 tags per token (a part-of-speech tagger's shape)."""
    def __init__(self, vocab=4000, emb=96, hidden=128, tags=17):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, input_ids):
        return self.out(self.gru(self.emb(input_ids))[0])


def build_bigru_tagger():
    name = "bigru_tagger"
    _seed_module(name)
    m = BiGruTagger().eval()
    feed = lambda b, s, off: [("input_ids", torch.randint(0, 4000, (b, s),
                                                          generator=gz._gen(name, off)))]
    ax = {0: "batch", 1: "seq"}
    return dict(module=m, inputs=feed(1, 64, 2), outputs=["tag_logits"],
                dynamic_axes={"input_ids": ax, "tag_logits": ax},
                variants={"b8": feed(8, 64, 3), "b4s128": feed(4, 128, 4)},
                desc="bidirectional GRU tagger (embedding 96, hidden 128, 17 tags), int64 "
                     "input_ids, dynamic batch and sequence; base (1,64), variants (8,64) and "
                     "(4,128)")


class BertLayerDyn(nn.Module):
    """A post-LN BERT layer whose reshapes take batch and length from the input."""
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attn = gzf.PreLnAttention(hidden, heads)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.fc1, self.fc2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, ext):
        x = self.ln1(x + self.attn(x, ext))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class MiniLm(nn.Module):
    """all-MiniLM-L6's shape: BERT post-LN, vocab 30522, 6 layers, hidden 384, 12 heads, FFN
    1536, token-type embedding, masked mean pooling and L2 normalisation (a sentence
    embedding, as sentence-transformers serves it)."""
    def __init__(self, vocab=30522, hidden=384, heads=12, layers=6, ffn=1536, max_pos=512):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.tok_type = nn.Embedding(2, hidden)
        self.ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayerDyn(hidden, heads, ffn) for _ in range(layers))

    def forward(self, input_ids, attention_mask):
        s = input_ids.shape[1]
        pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.tok_type(torch.zeros_like(input_ids)))
        m = attention_mask.to(torch.float32)
        ext = (1.0 - m[:, None, None, :]) * -10000.0
        for layer in self.layers:
            x = layer(x, ext)
        pooled = (x * m.unsqueeze(-1)).sum(1) / m.sum(1, keepdim=True).clamp(min=1e-9)
        return x, F.normalize(pooled, p=2.0, dim=1)


def build_minilm_l6():
    name = "minilm_l6"
    _seed_module(name)
    m = MiniLm()
    _init_linear(m, gz._gen(name, 1))
    m.eval()
    base, variants = _text_feeds(name, 30522)
    ax = {0: "batch", 1: "seq"}
    return dict(module=m, inputs=base, outputs=["last_hidden_state", "sentence_embedding"],
                dynamic_axes={"input_ids": ax, "attention_mask": ax, "last_hidden_state": ax,
                              "sentence_embedding": {0: "batch"}},
                variants=variants,
                desc="sentence encoder in all-MiniLM-L6's shape (BERT post-LN, 6 layers, hidden "
                     "384, 12 heads, masked mean pooling, L2 norm), dynamic batch and sequence; "
                     "(1,128), (4,128), (1,384)")


class T5RmsNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class T5Encoder(nn.Module):
    """T5-style encoder: RMSNorm (no mean, no bias), no biases anywhere, relative position
    bias from 32 log-spaced buckets (max distance 128) computed from arange(seq) in the graph
    and shared by the layers, unscaled attention, gated-GELU FFN (T5 v1.1); 4 layers, d_model
    256, 4 heads of 64, d_ff 768."""
    def __init__(self, vocab=8000, d=256, heads=4, layers=4, ff=768, buckets=32, max_dist=128):
        super().__init__()
        self.nh, self.hd, self.nb, self.md = heads, d // heads, buckets, max_dist
        self.emb = nn.Embedding(vocab, d)
        self.rel = nn.Embedding(buckets, heads)
        self.qkv = nn.ModuleList(nn.Linear(d, 3 * d, bias=False) for _ in range(layers))
        self.o = nn.ModuleList(nn.Linear(d, d, bias=False) for _ in range(layers))
        self.wi0 = nn.ModuleList(nn.Linear(d, ff, bias=False) for _ in range(layers))
        self.wi1 = nn.ModuleList(nn.Linear(d, ff, bias=False) for _ in range(layers))
        self.wo = nn.ModuleList(nn.Linear(ff, d, bias=False) for _ in range(layers))
        self.n1 = nn.ModuleList(T5RmsNorm(d) for _ in range(layers))
        self.n2 = nn.ModuleList(T5RmsNorm(d) for _ in range(layers))
        self.nf = T5RmsNorm(d)

    def bucket(self, rel):
        """T5's bidirectional relative position bucket."""
        nb = self.nb // 2
        ret = (rel > 0).to(torch.long) * nb
        n = rel.abs()
        exact = nb // 2
        large = exact + (torch.log(n.float().clamp(min=1) / exact) / math.log(self.md / exact)
                         * (nb - exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, nb - 1))
        return ret + torch.where(n < exact, n, large)

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        pos = torch.arange(s, device=input_ids.device)
        bias = self.rel(self.bucket(pos[None, :] - pos[:, None])).permute(2, 0, 1).unsqueeze(0)
        bias = bias + (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -1e9
        x = self.emb(input_ids)
        for i in range(len(self.qkv)):
            q, k, v = self.qkv[i](self.n1[i](x)).view(b, s, 3, self.nh, self.hd).permute(2, 0, 3, 1, 4)
            w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) + bias, -1)
            x = x + self.o[i](torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1))
            h = self.n2[i](x)
            x = x + self.wo[i](F.gelu(self.wi0[i](h), approximate="tanh") * self.wi1[i](h))
        return self.nf(x)


def build_t5_encoder():
    name = "t5_encoder"
    _seed_module(name)
    m = T5Encoder()
    _init_linear(m, gz._gen(name, 1), std=0.05)
    with torch.no_grad():
        m.emb.weight.mul_(20.0)                   # T5's embeddings are of unit scale
        m.rel.weight.copy_(torch.randn(m.rel.weight.shape, generator=gz._gen(name, 5)))
    m.eval()
    base, variants = _text_feeds(name, 8000)
    ax = {0: "batch", 1: "seq"}
    return dict(module=m, inputs=base, outputs=["last_hidden_state"],
                dynamic_axes={"input_ids": ax, "attention_mask": ax, "last_hidden_state": ax},
                variants=variants,
                desc="T5-v1.1-style encoder (RMSNorm, no biases, relative position bias "
                     "buckets computed in the graph, gated-GELU FFN; 4 layers, d 256, 4 heads), "
                     "dynamic batch and sequence; (1,128), (4,128), (1,384)")


class WhisperEncoder(nn.Module):
    """Whisper-style audio encoder: log-mel 80 x T, two Conv1d (k 3; the second stride 2)
    with GELU, sinusoidal positions sliced to the length, 4 pre-LN transformer layers
    (hidden 256, 4 heads, FFN 1024), final LayerNorm."""
    def __init__(self, mels=80, d=256, layers=4, max_len=1500):
        super().__init__()
        self.c1 = nn.Conv1d(mels, d, 3, padding=1)
        self.c2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        t = torch.arange(max_len).float()[:, None]
        inv = torch.exp(-math.log(10000.0) * torch.arange(d // 2).float() / (d // 2 - 1))
        self.register_buffer("pos", torch.cat([torch.sin(t * inv), torch.cos(t * inv)], 1))
        self.layers = nn.ModuleList(gzf.PreLnLayer(d, 4, 4 * d) for _ in range(layers))
        self.ln = nn.LayerNorm(d)

    def forward(self, mel):
        x = F.gelu(self.c2(F.gelu(self.c1(mel)))).transpose(1, 2)
        x = x + self.pos[:x.shape[1]]
        for layer in self.layers:
            x = layer(x)
        return self.ln(x)


def build_whisper_encoder():
    name = "whisper_encoder"
    _seed_module(name)
    m = WhisperEncoder()
    _init_linear(m, gz._gen(name, 1))
    m.eval()
    mel = lambda b, t, off: torch.randn(b, 80, t, generator=gz._gen(name, off))
    return dict(module=m, inputs=[("mel", mel(1, 600, 2))], outputs=["features"],
                dynamic_axes={"mel": {0: "batch", 2: "frames"},
                              "features": {0: "batch", 1: "tokens"}},
                variants={"b4": [("mel", mel(4, 600, 3))], "t1000": [("mel", mel(1, 1000, 4))]},
                desc="Whisper-style audio encoder (2 Conv1d + GELU, sinusoidal positions, 4 "
                     "pre-LN layers, hidden 256), log-mel 80 x 600 frames (6 s) -> 300 tokens; "
                     "dynamic batch and frames; variants (4, 600) and (1, 1000)")


class ConformerBlock(nn.Module):
    """Conformer: half-step FFN (SiLU), MHSA, convolution module (pointwise conv to 2d, GLU,
    depthwise Conv1d k=15, BatchNorm, SiLU, pointwise), half-step FFN, LayerNorm."""
    def __init__(self, d, heads=4, k=15):
        super().__init__()
        self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln_att = nn.LayerNorm(d)
        self.att = gzf.PreLnAttention(d, heads)
        self.ln_conv = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(), nn.Linear(4 * d, d))
        self.ln = nn.LayerNorm(d)

    def forward(self, x, ext):
        x = x + 0.5 * self.ff1(x)
        x = x + self.att(self.ln_att(x), ext)
        c = F.glu(self.pw1(self.ln_conv(x).transpose(1, 2)), dim=1)
        x = x + self.pw2(F.silu(self.bn(self.dw(c)))).transpose(1, 2)
        x = x + 0.5 * self.ff2(x)
        return self.ln(x)


class Conformer(nn.Module):
    """Conformer encoder on 80-dim features: a linear to 176 (not a multiple of 16), 3
    blocks of 4 heads (44 per head), a frame mask added to the attention scores."""
    def __init__(self, feats=80, d=176, blocks=3):
        super().__init__()
        self.inp = nn.Linear(feats, d)
        self.blocks = nn.ModuleList(ConformerBlock(d) for _ in range(blocks))

    def forward(self, features, attention_mask):
        ext = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        x = self.inp(features)
        for b in self.blocks:
            x = b(x, ext)
        return x


def build_conformer():
    name = "conformer"
    _seed_module(name)
    m = Conformer()
    _init_linear(m, gz._gen(name, 1), std=0.05)
    with torch.no_grad():                                # BatchNorm statistics, set directly
        g = gz._gen(name, 2)
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm1d):
                mod.running_mean.copy_(0.1 * torch.randn(mod.num_features, generator=g))
                mod.running_var.copy_(0.5 + torch.rand(mod.num_features, generator=g))
    m.eval()

    def feed(b, s, off):
        g = gz._gen(name, off)
        mask = torch.ones(b, s, dtype=torch.long)
        for r in range(1, b):
            mask[r, s - 16 * r:] = 0
        return [("features", torch.randn(b, s, 80, generator=g)), ("attention_mask", mask)]
    ax = {0: "batch", 1: "frames"}
    return dict(module=m, inputs=feed(1, 128, 3), outputs=["encoded"],
                dynamic_axes={"features": ax, "attention_mask": ax, "encoded": ax},
                variants={"b4": feed(4, 128, 4), "s384": feed(1, 384, 5)},
                desc="Conformer encoder (3 blocks: half-step FFNs, MHSA, GLU + depthwise "
                     "Conv1d k=15 + BatchNorm + SiLU; d 176, 4 heads), 80-dim features, dynamic "
                     "batch and frames; (1,128), (4,128), (1,384)")


def build_gpt_decoder_step_h512():
    """gen_zoo_families' decoder step at another size: 6 layers, hidden 512, 8 heads, vocab
    8192, past 511 (a 512-token context)."""
    name = "gpt_decoder_step_h512"
    _seed_module(name)
    return gzf.decoder_step_entry(
        name, gzf.GptDecoderStep(vocab=8192, hidden=512, heads=8, layers=6), 8192, 511,
        {"b4": (4, 511), "p127": (1, 127)},
        "GPT-style decoder step (6 pre-LN layers, hidden 512, 8 heads, tied LM head over 8192 "
        "tokens), KV cache in/out, dynamic batch and past; base (1, past 511), variants batch 4 "
        "and past 127")


CODE_OF = {
    "googlenet": (_cnn,), "resnext_odd": (_cnn,), "mnasnet1_0": (_cnn,), "deit_tiny": (_cnn,),
    "mlp_mixer": (_cnn, MixerBlock, MlpMixer), "deeplabv3_mbv3": (_cnn, DeepLabV3),
    "espcn_x3": (_cnn, Espcn), "c3d_mini": (C3dMini,), "pointnet": (PointNet,),
    "yolo_mini": (YoloMini,), "detr_mini": (_cnn, DetrMini),
    "tcn": (TcnBlock, Tcn), "resmlp_tabular": (ResMlpTabular,), "dcn_v2": (DcnV2,),
    "lstm_encoder": (LstmEncoder,), "bigru_tagger": (BiGruTagger,),
    "minilm_l6": (_text_feeds, BertLayerDyn, MiniLm, gzf.PreLnAttention),
    "t5_encoder": (_text_feeds, T5RmsNorm, T5Encoder),
    "whisper_encoder": (WhisperEncoder, gzf.PreLnLayer, gzf.PreLnAttention),
    "conformer": (ConformerBlock, Conformer, gzf.PreLnAttention),
    "gpt_decoder_step_h512": (gzf.GptDecoderStep, gzf.decoder_step_entry),
}

MODELS = collections.OrderedDict([
    ("googlenet", build_googlenet),
    ("resnext_odd", build_resnext_odd),
    ("mnasnet1_0", build_mnasnet1_0),
    ("deit_tiny", build_deit_tiny),
    ("mlp_mixer", build_mlp_mixer),
    ("deeplabv3_mbv3", build_deeplabv3_mbv3),
    ("espcn_x3", build_espcn_x3),
    ("c3d_mini", build_c3d_mini),
    ("pointnet", build_pointnet),
    ("yolo_mini", build_yolo_mini),
    ("detr_mini", build_detr_mini),
    ("tcn", build_tcn),
    ("resmlp_tabular", build_resmlp_tabular),
    ("dcn_v2", build_dcn_v2),
    ("lstm_encoder", build_lstm_encoder),
    ("bigru_tagger", build_bigru_tagger),
    ("minilm_l6", build_minilm_l6),
    ("t5_encoder", build_t5_encoder),
    ("whisper_encoder", build_whisper_encoder),
    ("conformer", build_conformer),
    ("gpt_decoder_step_h512", build_gpt_decoder_step_h512),
])


def main(argv=None):
    gzf.MODELS.update(MODELS)
    gzf.CODE_OF.update(CODE_OF)
    return gzf.main(argv, own=list(MODELS), doc=__doc__, tag="gen_zoo_more")


if __name__ == "__main__":
    sys.exit(main())
