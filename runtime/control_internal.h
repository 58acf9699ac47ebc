/* Internal to runtime/control*.c: running a control-flow body (control_body.c) for the engine
 * (control.c). A body runs against slots, one per body value: the tensor the value holds in the
 * current iteration (a view of the memory of whoever made it: an input, a constant, a plan's
 * arena), valid until that maker runs again. */
#ifndef BD_RUNTIME_CONTROL_INTERNAL_H
#define BD_RUNTIME_CONTROL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "core/ir/graph.h"
#include "runtime/plan.h"

/* One-node plans kept per body node: more distinct input shapes than this evict the least
 * recently used (and plan again when it comes back). */
#define CF_NODE_PLANS 8
/* Whole-body plans kept per body (by the shapes of all its inputs), the same way. */
#define CF_BODY_PLANS 4

/* Body nodes reading at most this many elements run on the native engine when it takes them
 * (control_body.c, plan_node, says why). */
#define CF_SMALL_NODE 16384

/* Plans one run of a control node may build (a body whose shapes change at every iteration
 * plans at every iteration: a growing carried value); past it the run fails, so a hostile
 * loop costs at most this many plan builds. */
#define CF_MAX_BUILDS_PER_RUN 4096

/* A body imported once per compiled node (control.c). */
typedef struct cf_body {
    bd_graph *g;
    size_t    n_formals;   /* the body's own inputs come first */
    size_t   *outer;       /* per body input past the formals: the node input that feeds it */
    const char *kind;      /* what errors call it: NULL "body" (control flow), or "region" */
} cf_body;

/* ---- run-time state ------------------------------------------------------------------- */

typedef struct slot {
    DLTensor t;
    int64_t  dims[BD_MAX_RANK];
    int      dtype;            /* bd_dtype (DLPack has no BOOL of its own) */
} slot;

typedef struct growbuf {
    void  *p;
    size_t cap;
} growbuf;

typedef struct node_plan {
    int64_t  *key;             /* per non-constant input: rank then dims */
    size_t    key_len;
    bd_graph *g;               /* the one-node graph the plan was built from */
    bd_plan  *plan;
    bd_exec  *exec;
    uint64_t  used;
} node_plan;

/* A plan of the whole body for one set of its inputs' shapes, or the finding that such a plan
 * would leave shapes to the run (then the body runs node by node for those shapes). */
typedef struct body_plan {
    int64_t  *key;             /* per body input: rank then dims */
    size_t    key_len;
    bd_plan  *plan;            /* NULL: node by node */
    bd_exec  *exec;
    uint64_t  used;
} body_plan;

typedef struct body_ctx {
    const cf_body *b;
    slot          *slots;      /* per body value */
    body_plan      whole[CF_BODY_PLANS];
    size_t         n_whole;
    DLTensor      *ins;        /* scratch: the body's inputs, for a whole-body plan */
    size_t         builds;     /* plans built in the current run of the node */
    int64_t       *in_key;
    node_plan    (*plans)[CF_NODE_PLANS];
    size_t        *n_plans;
    uint64_t       tick;
    DLTensor      *args;       /* scratch: a node's inputs */
    const bd_value **argv;
    int64_t       *key;        /* scratch: their shapes */
} body_ctx;

/* ---- slots and buffers ----------------------------------------------------------------- */

int64_t     cf_numel(const DLTensor *t);
size_t      cf_bytes(const slot *s);                          /* numel x dtype size */
/* S handed to the caller's OUT: S's shape and memory when OUT has none, else copied into it
 * (its shape must be S's; BD_EINVAL "WHAT 'NAME' is ..." otherwise). */
int         cf_slot_deliver(const slot *s, DLTensor *out, const char *what, const char *name,
                            bd_error *err);
/* Append a copy of node N to graph M: its inputs found in M by name, or, for a constant
 * (data set), added sharing its bytes (BD_EBACKEND for any other); its outputs added; its
 * attrs copied. IO: scratch room for N's inputs and outputs. */
int         cf_copy_node(bd_graph *m, const bd_node *n, bd_value **io, bd_error *err);
/* S views DATA as a row-major tensor of DTYPE shaped NDIM/DIMS (dims copied into S). */
void        cf_slot_view(slot *s, int dtype, void *data, int ndim, const int64_t *dims);
void        cf_slot_copy(slot *dst, const slot *src);          /* the same view */
/* Room for BYTES in B (64-byte aligned), keeping its first KEEP bytes; BD_ENOMEM. */
int         cf_grow(growbuf *b, size_t bytes, size_t keep);

/* ---- one body per execution context (control_body.c) ------------------------------------ */

/* BC for body B: slots (constants set), plan caches empty. BD_ENOMEM (free BC either way). */
int         cf_body_init(body_ctx *bc, const cf_body *b);
void        cf_body_free(body_ctx *bc);                       /* a zeroed BC is allowed */
slot       *cf_body_in(body_ctx *bc, size_t i);               /* the slot of body input I */
const slot *cf_body_out(body_ctx *bc, size_t i);              /* the slot of body output I */
/* A new run of the node: bind the outer values the body reads to IN (the node's input slots,
 * implicit ones included) and reset the run's plan-build count. */
void        cf_body_bind(body_ctx *bc, slot *const *in);
/* Run the body once on the inputs' slots (the caller sets them; outputs land in their slots):
 * as one plan for these input shapes when such a plan knows every shape, else node by node,
 * planning with OPTS what was not planned before (CF_MAX_BUILDS_PER_RUN per run). */
int         cf_body_run(const bd_model_options *opts, body_ctx *bc, bd_error *err);

#endif
