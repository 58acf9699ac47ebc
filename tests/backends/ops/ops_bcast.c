/* A binary op between a convolution's output and a per-channel operand, in the layouts
 * oneDNN's convolutions pick: channels-last (brgconv), where the oneDNN backend runs it on its
 * own kernel (backends/dnnl/dnnl_bcast.c), and channels blocked by 16 over 8 channels
 * (ConvTranspose), where the operand is put in the same blocking for oneDNN's jit binary and
 * the step does not run in place. The operand comes first (Sub(s, y), Max(s, y)) so the op
 * stays a node of its own instead of a post-op of the convolution. And plain tensors with a
 * last-axis operand, which take the same kernel. */
#include <math.h>
#include <stdlib.h>

#include "tests/backends/ops/ops_harness.h"

/* The convolution (REF) of the case's own inputs, then Y = S op Y with S the last input,
 * broadcast per channel. */
static void then_first(const op_case *c, const tensor *in, tensor *out, ref_fn ref)
{
    op_case own = *c;                 /* the op alone */
    own.n_in -= c->then_in;
    own.then = NULL;
    own.then_in = 0;
    ref(&own, in, out);
    const tensor *s = &in[c->n_in - 1];
    int64_t idx[BD_MAX_RANK];
    for (size_t j = 0; j < out->n; j++) {
        unravel(j, out->rank, out->dims, idx);
        double v = out->f[j], o = s->f[bcast(s, idx, out->rank)];
        if (!strcmp(c->then, "Sub"))
            out->f[j] = o - v;
        else if (!strcmp(c->then, "Max"))
            out->f[j] = o > v ? o : v;
        else
            abort();
    }
}

static void ref_conv_then(const op_case *c, const tensor *in, tensor *out)
{
    then_first(c, in, out, ref_conv);
}

static void ref_deconv_then(const op_case *c, const tensor *in, tensor *out)
{
    then_first(c, in, out, ref_conv_transpose);
}

static const op_case k_cases[] = {
    { "conv_then_channel_sub", "Conv", NULL, 3, { IN(1, 16, 14, 14), W(24, 16, 3, 3), W(1, 24, 1, 1) },
      { AINTS("pads", 1, 1, 1, 1) }, OUT(1, 24, 14, 14), ref_conv_then, .then = "Sub",
      .then_in = 1, .then_first = true },
    { "conv_then_channel_sub_fed", "Conv", NULL, 3, { IN(1, 8, 9, 9), W(40, 8, 1, 1), IN(40, 1, 1) },
      NO_ATTR, OUT(1, 40, 9, 9), ref_conv_then, .then = "Sub", .then_in = 1, .then_first = true },
    { "conv_then_channel_max_threads", "Conv", NULL, 3,
      { IN(1, 16, 56, 56), W(32, 16, 1, 1), W(1, 32, 1, 1) }, NO_ATTR, OUT(1, 32, 56, 56),
      ref_conv_then, .then = "Max", .then_in = 1, .then_first = true, .threads = 2 },
    { "add_last_axis", "Add", NULL, 2, { IN(2, 5, 24), IN(24) }, NO_ATTR, OUT(2, 5, 24),
      ref_binary },
    { "div_last_axis_const", "Div", NULL, 2, { IN(3, 4, 40), WR(0.5f, 2, 40) }, NO_ATTR,
      OUT(3, 4, 40), ref_binary },
    { "convtranspose_then_channel_sub_padded", "ConvTranspose", NULL, 3,
      { IN(1, 16, 8, 8), W(16, 8, 4, 4), W(1, 8, 1, 1) },
      { AINTS("strides", 2, 2), AINTS("pads", 1, 1, 1, 1) }, OUT(1, 8, 16, 16), ref_deconv_then,
      .then = "Sub", .then_in = 1, .then_first = true },
};

const case_table ops_bcast_table = { k_cases, sizeof k_cases / sizeof k_cases[0] };
