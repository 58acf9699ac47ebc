/* The window of a pooling or convolution node (native_window.h). */
#include "backends/native/native_window.h"

#include <string.h>

/* INTS attribute NAME of COUNT values into V (DFLT each when absent); false when given with
 * another count or a value below LO. */
static bool window_ints(const bd_node *n, const char *name, int count, int64_t dflt, int64_t lo,
                        int64_t *v)
{
    const int64_t *a;
    size_t na = bd_node_attr_ints(n, name, &a);
    if (bd_node_attr(n, name) && na != (size_t)count)
        return false;
    for (int i = 0; i < count; i++) {
        v[i] = na ? a[i] : dflt;
        if (v[i] < lo)
            return false;
    }
    return true;
}

bool nv_window_resolve(const bd_node *n, const bd_shape *x, const int64_t *kernel, nv_window *w)
{
    memset(w, 0, sizeof *w);
    if (x->rank < 3 || x->rank > BD_MAX_RANK)
        return false;
    w->ns = x->rank - 2;
    for (int i = 0; i < w->ns; i++)
        w->in[i] = x->dims[2 + i];
    int64_t pads[2 * NV_SPATIAL], attr_k[NV_SPATIAL];
    bool has_k = bd_node_attr(n, "kernel_shape") != NULL;
    if (!window_ints(n, "kernel_shape", w->ns, 1, 1, attr_k) || (!kernel && !has_k) ||
        !window_ints(n, "strides", w->ns, 1, 1, w->st) ||
        !window_ints(n, "dilations", w->ns, 1, 1, w->dil) ||
        !window_ints(n, "pads", 2 * w->ns, 0, 0, pads))
        return false;
    for (int i = 0; i < w->ns; i++) {
        w->k[i] = kernel ? kernel[i] : attr_k[i];
        if (w->k[i] < 1 || (kernel && has_k && attr_k[i] != kernel[i]))
            return false;
    }
    const char *ap = bd_node_attr_string(n, "auto_pad", "NOTSET");
    bool same_up = !strcmp(ap, "SAME_UPPER"), same_lo = !strcmp(ap, "SAME_LOWER");
    bool valid = !strcmp(ap, "VALID"), ceil_mode = bd_node_attr_int(n, "ceil_mode", 0) != 0;
    if (!same_up && !same_lo && !valid && strcmp(ap, "NOTSET") && strcmp(ap, ""))
        return false;
    for (int i = 0; i < w->ns; i++) {
        int64_t in = w->in[i], s = w->st[i], dk;
        if (__builtin_mul_overflow(w->k[i] - 1, w->dil[i], &dk) || dk >= INT32_MAX ||
            s > INT32_MAX)
            return false;
        dk++;
        if (same_up || same_lo) {
            int64_t out = in / s + (in % s != 0), total = (out > 0 ? out - 1 : 0) * s + dk - in;
            total = total > 0 ? total : 0;
            w->pb[i] = same_up ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
            w->out[i] = out;
            continue;
        }
        w->pb[i] = valid ? 0 : pads[i];
        w->pe[i] = valid ? 0 : pads[w->ns + i];
        if (w->pb[i] > INT32_MAX || w->pe[i] > INT32_MAX || in + w->pb[i] + w->pe[i] < dk)
            return false;
        int64_t span = in + w->pb[i] + w->pe[i] - dk, out = span / s + 1;
        if (ceil_mode && !valid && span % s != 0 && out * s < in + w->pb[i])
            out++;                  /* the last window must start inside the input or left pad */
        w->out[i] = out;
    }
    return true;
}
