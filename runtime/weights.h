/* Internal to runtime/: a model's large weights are held once, not twice. oneDNN copies every
 * weight it uses into a layout of its own when a plan compiles, so after the compile the
 * model file's bytes of those weights are read by nothing: they are given back to the system
 * (madvise), and read back from the model file — checked against a hash taken when they were
 * given back — only while another plan compiles. A weight any plan reads at run time (an
 * embedding table a native Gather reads in place, a constant a fallback engine is fed) stays
 * in memory for good. docs/architecture.md, "Memory", says why and what it costs.
 *
 * All functions are thread-safe; model.c calls them around every plan build. */
#ifndef BD_RUNTIME_WEIGHTS_H
#define BD_RUNTIME_WEIGHTS_H

#include "core/error.h"
#include "core/ir/graph.h"
#include "runtime/plan.h"

typedef struct weights weights;

/* Give every large weight of G (at least 64 KiB, read from a recorded file) that sits
 * misaligned in the file's bytes (raw_data lands anywhere in a protobuf) a 64-byte aligned
 * buffer of its own, with its file source recorded, and give the old bytes' pages back:
 * kernels then read every weight aligned and in place, with no copy of their own. Call it
 * before anything points into G's constants. BD_ENOMEM only. */
int  weights_align(bd_graph *g, bd_error *err);

/* The weights of G (initializers of at least 1 MiB read from a recorded model file,
 * bd_graph_source_of). G must outlive W. BD_ENOMEM only. */
int  weights_create(const bd_graph *g, weights **out, bd_error *err);
void weights_destroy(weights *w);                    /* NULL is allowed */
/* Before a plan build: every weight is in memory. A weight read back whose bytes no longer
 * match (the file changed on disk since the model was loaded) is BD_EIO naming the file. */
int  weights_acquire(weights *w, bd_error *err);
/* After that build (P its plan, NULL when it failed): the weights P reads at run time are
 * kept from now on; when no other build runs, every other weight is given back. */
void weights_release(weights *w, const bd_plan *p);
/* Bytes of weights given back now (for tests and the status document). */
size_t weights_released_bytes(weights *w);

#endif
