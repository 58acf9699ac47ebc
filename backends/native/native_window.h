/* The window of a pooling or convolution node, internal to backends/native/ (native_pool.c,
 * native_conv.c): kernel, strides, dilations and pads per spatial dim, resolved as shape
 * inference resolves them (partitioner/shape/shape_conv.c), so that the output's shape a
 * kernel checks is the one the plan has. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_WINDOW_H
#define BD_BACKENDS_NATIVE_NATIVE_WINDOW_H

#include "backends/native/native_internal.h"

#define NV_SPATIAL (BD_MAX_RANK - 2)

typedef struct nv_window {
    int     ns;                                  /* spatial dims: X's rank - 2 */
    int64_t in[NV_SPATIAL], out[NV_SPATIAL];
    int64_t k[NV_SPATIAL], st[NV_SPATIAL], dil[NV_SPATIAL];
    int64_t pb[NV_SPATIAL], pe[NV_SPATIAL];      /* pads before and after (auto_pad applied) */
} nv_window;

/* N's window over X (static, rank 3 to BD_MAX_RANK) into W: the kernel is KERNEL's NS values
 * (a weight's spatial dims; the kernel_shape attribute, when given, must equal them), or the
 * kernel_shape attribute when KERNEL is NULL. strides and dilations default to 1, pads to 0;
 * auto_pad SAME_UPPER/SAME_LOWER/VALID and ceil_mode apply as in ONNX. False when an attribute
 * is malformed (a count, a value below its minimum) or the window does not fit the padded
 * input. */
bool nv_window_resolve(const bd_node *n, const bd_shape *x, const int64_t *kernel, nv_window *w);

#endif
