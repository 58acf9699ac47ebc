"""Reference PyTorch models for braid's model tests and benchmarks.

    import torch_models
    module, inputs, input_names, output_names, dynamic_axes = torch_models.build("bert2")

`build(name)` returns an eval-mode module with deterministic random weights, a dict of
deterministic example inputs (name -> torch.Tensor, in signature order), the ONNX input and
output names, and the dynamic axes to export with (None for a static export).

Models:
  mlp       3 Linear layers (ReLU, GELU), input x [batch, 64], batch dynamic
  resnet18  torchvision resnet18, random weights, input [1,3,224,224]
  resnet50  torchvision resnet50, same (benchmarks)
  bert2     2-layer BERT encoder written out by hand (hidden 768, 12 heads, seq 128,
            intermediate 3072, erf GELU, post-LN with eps 1e-12); inputs are the already
            embedded `hidden` [1,128,768] and an FP32 0/1 `attention_mask` [1,128]
  bert12    the same with 12 layers (benchmarks)
  mobile_blocks  one ShuffleNetV2 unit (channel split, depthwise branch, concat, channel
            shuffle), one EfficientNet MBConv (SiLU, squeeze-excitation, residual) and one
            MobileNetV3 unit (hard-swish, hard-sigmoid squeeze-excitation); [1,3,32,32] in
  gpt_block one GPT-2-style decoder layer: token and position embeddings (Gather), causal
            mask by masked_fill(-inf), tanh GELU, tied LM head; int64 ids [1,16] in
  rnn_block a tagger: embedding, bidirectional LSTM, GRU (PyTorch's: linear_before_reset),
            a plain tanh RNN, linear head; int64 ids [1,12] in

The BERT encoder uses fixed integers in every view() so a static export has constant
Reshape shapes and no Shape/Gather/Cast/ConstantOfShape nodes.
"""

import math

import torch
import torch.nn as nn

SEED = 20240611

NAMES = ("mlp", "resnet18", "resnet50", "bert2", "bert12", "mobile_blocks", "gpt_block", "rnn_block")


def _generator(offset=0):
    return torch.Generator().manual_seed(SEED + offset)


# ---------------------------------------------------------------------------------------- mlp

class MLP(nn.Module):
    def __init__(self, d_in=64, d_hidden=256, d_out=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.act2 = nn.GELU()
        self.fc3 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc3(self.act2(self.fc2(self.act1(self.fc1(x)))))


def mlp_inputs(batch):
    """Inputs for the mlp at a given batch size (deterministic per batch size)."""
    return {"x": torch.randn(batch, 64, generator=_generator(100 + batch))}


def _build_mlp():
    torch.manual_seed(SEED)
    m = MLP().eval()
    dyn = {"x": {0: "batch"}, "y": {0: "batch"}}
    return m, mlp_inputs(1), ["x"], ["y"], dyn


# ------------------------------------------------------------------------------------- resnet

def _randomize_batchnorm(m, gen):
    # Default BatchNorm statistics are the identity (mean 0, var 1, gamma 1, beta 0); give
    # them mild random values so folding BN into Conv is actually exercised.
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            c = mod.num_features
            with torch.no_grad():
                mod.running_mean.copy_(0.1 * torch.randn(c, generator=gen))
                mod.running_var.copy_(0.5 + torch.rand(c, generator=gen))
                mod.weight.copy_(0.8 + 0.4 * torch.rand(c, generator=gen))
                mod.bias.copy_(0.1 * torch.randn(c, generator=gen))


def _build_resnet(depth):
    import torchvision.models as tvm
    torch.manual_seed(SEED)
    ctor = {18: tvm.resnet18, 50: tvm.resnet50}[depth]
    m = ctor(weights=None)
    _randomize_batchnorm(m, _generator(1))
    m.eval()
    x = torch.randn(1, 3, 224, 224, generator=_generator(2))
    return m, {"input": x}, ["input"], ["logits"], None


# --------------------------------------------------------------------------------------- bert

class BertConfig:
    def __init__(self, layers, hidden=768, heads=12, seq=128, intermediate=3072, batch=1,
                 eps=1e-12):
        assert hidden % heads == 0
        self.layers, self.hidden, self.heads = layers, hidden, heads
        self.head_dim = hidden // heads
        self.seq, self.intermediate, self.batch, self.eps = seq, intermediate, batch, eps


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)
        self.scale = math.sqrt(c.head_dim)

    def _heads(self, t):
        # [B,S,H] -> [B,heads,S,head_dim]; fixed ints keep the Reshape shape a constant.
        c = self.c
        return t.view(c.batch, c.seq, c.heads, c.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        c = self.c
        q = self._heads(self.query(x))
        k = self._heads(self.key(x))
        v = self._heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / self.scale
        scores = scores + ext_mask
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)                          # [B,heads,S,head_dim]
        return ctx.permute(0, 2, 1, 3).reshape(c.batch, c.seq, c.hidden)


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertSelfAttention(c)
        self.attn_out = nn.Linear(c.hidden, c.hidden)
        self.attn_norm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.intermediate = nn.Linear(c.hidden, c.intermediate)
        self.gelu = nn.GELU()                                 # erf form (the default)
        self.output = nn.Linear(c.intermediate, c.hidden)
        self.out_norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, x, ext_mask):
        a = self.attn_norm(self.attn_out(self.attention(x, ext_mask)) + x)   # post-LN
        h = self.output(self.gelu(self.intermediate(a)))
        return self.out_norm(h + a)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.layers = nn.ModuleList(BertLayer(c) for _ in range(c.layers))

    def forward(self, hidden, attention_mask):
        c = self.c
        # BERT's extended mask: 0 where attended, -10000 where masked, broadcast over heads
        # and query positions.
        ext = (1.0 - attention_mask).view(c.batch, 1, 1, c.seq) * -10000.0
        x = hidden
        for layer in self.layers:
            x = layer(x, ext)
        return x


def _init_bert(m, gen):
    # BERT's initializer: N(0, 0.02) weights, zero biases, unit LayerNorm; LayerNorm gets a
    # mild random affine so its scale/shift are exercised.
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.Linear):
                mod.weight.copy_(0.02 * torch.randn(mod.weight.shape, generator=gen))
                mod.bias.copy_(0.02 * torch.randn(mod.bias.shape, generator=gen))
            elif isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(0.9 + 0.2 * torch.rand(mod.weight.shape, generator=gen))
                mod.bias.copy_(0.05 * torch.randn(mod.bias.shape, generator=gen))


def bert_inputs(c, masked=16):
    hidden = torch.randn(c.batch, c.seq, c.hidden, generator=_generator(3))
    mask = torch.ones(c.batch, c.seq)
    mask[:, c.seq - masked:] = 0.0
    return {"hidden": hidden, "attention_mask": mask}


def _build_bert(layers):
    c = BertConfig(layers)
    m = BertEncoder(c)
    _init_bert(m, _generator(4))
    m.eval()
    return m, bert_inputs(c), ["hidden", "attention_mask"], ["output"], None


# ------------------------------------------------------------------------ mobile blocks, gpt

def _bn(c):
    bn = nn.BatchNorm2d(c)
    g = _generator(7 + c)
    bn.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
    bn.running_var.copy_(torch.rand(c, generator=g) + 0.5)
    bn.weight.data.copy_(torch.rand(c, generator=g) + 0.5)
    bn.bias.data.copy_(torch.randn(c, generator=g) * 0.1)
    return bn


class MobileBlocks(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        import torchvision
        h, e = c // 2, 4 * c
        self.c = c
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1, bias=False), _bn(c), nn.ReLU())
        self.branch = nn.Sequential(
            nn.Conv2d(h, h, 1, bias=False), _bn(h), nn.ReLU(),
            nn.Conv2d(h, h, 3, 1, 1, groups=h, bias=False), _bn(h),
            nn.Conv2d(h, h, 1, bias=False), _bn(h), nn.ReLU())
        self.mb = nn.Sequential(
            nn.Conv2d(c, e, 1, bias=False), _bn(e), nn.SiLU(),
            nn.Conv2d(e, e, 3, 1, 1, groups=e, bias=False), _bn(e), nn.SiLU(),
            torchvision.ops.SqueezeExcitation(e, c // 4, activation=nn.SiLU),
            nn.Conv2d(e, c, 1, bias=False), _bn(c))
        self.v3 = nn.Sequential(
            nn.Conv2d(c, e, 1, bias=False), _bn(e), nn.Hardswish(),
            nn.Conv2d(e, e, 5, 2, 2, groups=e, bias=False), _bn(e), nn.Hardswish(),
            torchvision.ops.SqueezeExcitation(e, c // 4, scale_activation=nn.Hardsigmoid),
            nn.Conv2d(e, c, 1, bias=False), _bn(c))
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)                                   # [1, 32, 16, 16]
        a, b = x[:, :self.c // 2], x[:, self.c // 2:]     # constant Slices (chunk exports Shape)
        x = torch.cat([a, self.branch(b)], dim=1)
        x = x.view(1, 2, self.c // 2, 16, 16).transpose(1, 2).contiguous().view(1, self.c, 16, 16)
        x = x + self.mb(x)
        x = self.v3(x)                                     # [1, 32, 8, 8]
        return self.fc(x.mean((2, 3)))


def _build_mobile_blocks():
    torch.manual_seed(SEED + 3)
    m = MobileBlocks().eval()
    x = torch.randn(1, 3, 32, 32, generator=_generator(300))
    return m, {"image": x}, ["image"], ["logits"], None


class GPTBlock(nn.Module):
    def __init__(self, vocab=100, d=64, heads=4, seq=16):
        super().__init__()
        self.heads, self.dh, self.seq = heads, d // heads, seq
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("pos", torch.arange(seq).unsqueeze(0))
        self.register_buffer("causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, ids):
        s, h, dh = self.seq, self.heads, self.dh
        x = self.wte(ids) + self.wpe(self.pos)
        q, k, v = self.qkv(self.ln1(x)).split(h * dh, dim=2)
        q = q.view(1, s, h, dh).transpose(1, 2)
        k = k.view(1, s, h, dh).transpose(1, 2)
        v = v.view(1, s, h, dh).transpose(1, 2)
        att = (q @ k.transpose(2, 3)) / math.sqrt(dh)
        att = att.masked_fill(~self.causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).contiguous().view(1, s, h * dh)
        x = x + self.proj(y)
        x = x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))
        return self.lnf(x) @ self.wte.weight.t()


def _build_gpt_block():
    torch.manual_seed(SEED + 4)
    m = GPTBlock().eval()
    ids = torch.randint(0, 100, (1, 16), generator=_generator(400))
    return m, {"input_ids": ids}, ["input_ids"], ["logits"], None


class RNNBlock(nn.Module):
    def __init__(self, vocab=50, d=24, h=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, h, bidirectional=True)
        self.gru = nn.GRU(2 * h, h)
        self.rnn = nn.RNN(h, h, nonlinearity="tanh")
        self.out = nn.Linear(h, 5)
        # initial states as constants (PyTorch's default zeros export as Shape arithmetic)
        g = _generator(501)
        self.register_buffer("h0", torch.randn(2, 1, h, generator=g) * 0.1)
        self.register_buffer("c0", torch.randn(2, 1, h, generator=g) * 0.1)
        self.register_buffer("g0", torch.zeros(1, 1, h))

    def forward(self, ids):
        x = self.emb(ids).transpose(0, 1)                  # [T, 1, d]: ONNX layout 0
        x, _ = self.lstm(x, (self.h0, self.c0))
        x, _ = self.gru(x, self.g0)
        x, _ = self.rnn(x, self.g0)
        return self.out(x.transpose(0, 1))


def _build_rnn_block():
    torch.manual_seed(SEED + 5)
    m = RNNBlock().eval()
    ids = torch.randint(0, 50, (1, 12), generator=_generator(500))
    return m, {"input_ids": ids}, ["input_ids"], ["logits"], None


# -------------------------------------------------------------------------------------- entry

def build(name):
    """(module, inputs, input_names, output_names, dynamic_axes) for NAME (see NAMES)."""
    if name == "mlp":
        return _build_mlp()
    if name == "resnet18":
        return _build_resnet(18)
    if name == "resnet50":
        return _build_resnet(50)
    if name == "bert2":
        return _build_bert(2)
    if name == "bert12":
        return _build_bert(12)
    if name == "mobile_blocks":
        return _build_mobile_blocks()
    if name == "gpt_block":
        return _build_gpt_block()
    if name == "rnn_block":
        return _build_rnn_block()
    raise ValueError("unknown model %r (known: %s)" % (name, ", ".join(NAMES)))


def export(name, path, opset, module=None, inputs=None):
    """Export model NAME to PATH with OPSET (builds it unless MODULE/INPUTS are given).
    Returns the build tuple."""
    built = build(name)
    m, ins, in_names, out_names, dyn = built
    if module is not None:
        m = module
    if inputs is not None:
        ins = inputs
    with torch.no_grad():
        torch.onnx.export(m, tuple(ins.values()), path, input_names=in_names,
                          output_names=out_names, dynamic_axes=dyn, opset_version=opset,
                          do_constant_folding=True)
    return built
