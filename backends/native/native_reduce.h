/* The native engine's reduction family, internal to backends/native/: the ops that live in
 * their own files (native_softmax.c, native_topk.c, native_cumsum.c), which native_reduce.c's
 * op table lists, and the helpers the family shares. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_REDUCE_H
#define BD_BACKENDS_NATIVE_NATIVE_REDUCE_H

#include "backends/native/native_internal.h"

/* ---- helpers (native_reduce.c) ------------------------------------------------------------- */

/* A tensor seen around one axis: OUTER x N x INNER elements, row-major. */
typedef struct nv_split {
    size_t outer, n, inner;
} nv_split;

/* DIMS (RANK of them) around AXIS (in [0, RANK)). */
nv_split nv_split_at(const int64_t *dims, int rank, int axis);

/* Element I of an INT32 or INT64 tensor, loaded with memcpy: a constant's bytes sit wherever
 * its initializer was in the model file, not necessarily aligned for a typed load. */
int64_t nv_int_at(const void *data, int dtype, size_t i);

/* Kernels that work along an axis with INNER > 1 handle this many neighbouring columns at
 * once, with their running values in arrays on the stack (a run allocates nothing): each
 * step then reads NV_CHUNK contiguous elements instead of one element per INNER. */
#define NV_CHUNK 64

/* ---- ops in their own files --------------------------------------------------------------- */

bool nv_softmax_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_softmax_prepare(const bd_node *n, nv_step *s, bd_error *err);   /* and LogSoftmax, Hardmax */
bool nv_topk_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_topk_prepare(const bd_node *n, nv_step *s, bd_error *err);
bool nv_cumsum_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_cumsum_prepare(const bd_node *n, nv_step *s, bd_error *err);

#endif
