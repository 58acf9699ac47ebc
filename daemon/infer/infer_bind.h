/* Binding a request (infer_request.h, from either port) to a model's signature: every check
 * of what a client sent that needs no server (no registry, no port, no plan), so
 * tests/fuzz/fuzz_infer.c runs exactly the code braidd runs.
 *
 *   bd_infer_bind           match inputs by name; check datatype, shape, byte or value count;
 *                           point a DLTensor at each input's data (in the request, or in an
 *                           aligned / converted copy the binding owns); resolve the requested
 *                           outputs to graph output indexes (none twice) and read their
 *                           "classification" parameter
 *   bd_infer_output_bytes   the tensor bytes a response will carry for shapes known before
 *                           the run (a plan's graph), to refuse an oversized response early
 *   bd_infer_shm_dest       before the run: the shared memory each output may be written
 *                           into directly (bd_exec_run_into, runtime/plan.h)
 *   bd_infer_shm_outputs    after the run: copy the outputs a request sends to system shared
 *                           memory that the run did not write there itself into their regions
 *                           (shm_region.h), and check that no region the request used shrank
 *                           meanwhile
 *
 * Shared memory (Triton's extension): an input or requested output with a shm reference
 * (a region, its byte size, an optional offset) takes its bytes from / gives them to that
 * region. An input in a region is copied into memory the binding owns, read once (the client
 * may rewrite its region at any time, and no kernel may read memory that changes under it:
 * docs/security.md). The binding holds a reference on each region it uses until it is
 * released.
 *
 * Hostile input: every count and size below is checked before anything is allocated, and
 * every product is overflow-checked. A shape may describe at most BD_INFER_MAX_ELEMENTS
 * elements even when it holds none (a 0 dim): no later stage sees a dim product that
 * overflows. Typed `contents` are counted before their buffer is allocated, so a buffer is
 * never larger than the values the message carries. All errors are BD_EINVAL naming the
 * tensor and what was expected (BD_ENOMEM when out of memory). */
#ifndef BD_DAEMON_INFER_INFER_BIND_H
#define BD_DAEMON_INFER_INFER_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "core/ir/graph.h"
#include "daemon/infer/infer_request.h"
#include "daemon/infer/shm_region.h"
#include "runtime/plan.h"

/* Elements one input shape may describe, 0 dims counted as 1: 2^31 - 1, more than a
 * message of gRPC's largest size (max_message_bytes <= 2^31 - 1) can carry. */
#define BD_INFER_MAX_ELEMENTS INT64_C(2147483647)

/* N elements of SIZE bytes: SMALL (room for BD_INFER_SMALL of them) zeroed when N fits, else
 * zeroed heap memory (NULL when out of memory). Release with bd_infer_free_unless(p, SMALL). */
void *bd_infer_small_or_calloc(void *small, size_t n, size_t size);
void  bd_infer_free_unless(void *p, void *small);            /* frees P unless it is SMALL */

/* Where a response output goes in shared memory; REGION NULL = in the response. */
typedef struct bd_infer_shm_out {
    bd_shm_region *region;                  /* one of the binding's shm references */
    uint64_t       offset, size;
} bd_infer_shm_out;

/* The request bound to the graph. Zero-initialize; release with bd_infer_binding_release. */
typedef struct bd_infer_binding {
    size_t     n_inputs;
    DLTensor  *inputs;                      /* one per graph input, in signature order */
    int64_t  (*shapes)[BD_MAX_RANK];        /* inputs[i].shape points here */
    void     **owned;                       /* realigned / converted copies */
    size_t     n_owned;
    size_t    *out_idx;                     /* graph output of each response output */
    uint32_t  *classify;                    /* per response output: Triton's "classification"
                                               count, 0 = the tensor itself (infer_classify.h) */
    size_t     n_out;
    uint64_t   batch;                       /* inferences the request counts for */
    bd_shm_region **shm;                    /* shared memory regions used (one reference each) */
    size_t     n_shm;
    uint64_t   shm_copy_limit;              /* set before binding: bytes of shared memory inputs
                                               that may be copied in (0 = no limit) */
    uint64_t   shm_copied;                  /* ... copied so far */
    bd_infer_shm_out *shm_out;              /* per response output; NULL when none uses shm */
    /* Storage for the common case: no allocation per request. */
    DLTensor   inputs_small[BD_INFER_SMALL];
    int64_t    shapes_small[BD_INFER_SMALL][BD_MAX_RANK];
    size_t     out_idx_small[BD_INFER_SMALL];
    uint32_t   classify_small[BD_INFER_SMALL];
} bd_infer_binding;

/* Bind REQ to G's signature (inputs and outputs only are read). The bytes REQ points at
 * must outlive B (raw inputs are used in place). On failure returns BD_EINVAL / BD_ENOMEM
 * with ERR naming the tensor; B must be released either way. */
int  bd_infer_bind(bd_infer_binding *b, const bd_infer_request *req, const bd_graph *g,
                   bd_error *err);
/* Free what bd_infer_bind allocated; B is zeroed again. NULL is allowed. */
void bd_infer_binding_release(bd_infer_binding *b);

/* Tensor bytes of G's outputs OUT_IDX[0..N_OUT) (G: a plan's graph, whose shapes are static
 * unless they depend on the data) into *BYTES. false when a shape is not known yet (then
 * only the response itself can tell). Saturates at UINT64_MAX. */
bool bd_infer_output_bytes(const bd_graph *g, const size_t *out_idx, size_t n_out, uint64_t *bytes);

/* bd_infer_output_bytes of the outputs B's response carries: those sent to shared memory
 * carry no bytes, so they never count against the send limit. */
bool bd_infer_response_bytes(const bd_infer_binding *b, const bd_graph *g, uint64_t *bytes);

/* Before the run: DEST[o] (N_GRAPH_OUT entries, one per graph output o) = the span of the
 * region that the response output naming o sends to shared memory, {NULL, 0} for every other
 * output. A span that does not resolve is left {NULL, 0}: bd_infer_shm_outputs reports it. */
void bd_infer_shm_dest(const bd_infer_binding *b, bd_exec_dest *dest, size_t n_graph_out);

/* After the run, SPANS[k] (the bytes of response output k; G the bound graph): copy those B
 * sends to shared memory into their regions unless the run wrote them there already (the
 * span IS the region's bytes), and leave their span empty (the response carries no bytes for
 * them). Adds the bytes found in place and the bytes copied to *IN_PLACE and *COPIED.
 * BD_EINVAL when an output needs more bytes than its shared_memory_byte_size, or when a
 * region the request used (inputs included) shrank during it (the SIGBUS guard:
 * shm_guard.h). */
int  bd_infer_shm_outputs(const bd_infer_binding *b, const bd_graph *g, bd_wire_span *spans,
                          uint64_t *in_place, uint64_t *copied, bd_error *err);

#endif
