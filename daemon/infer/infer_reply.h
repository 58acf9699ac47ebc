/* One answer to a bound request (infer_bind.h), the same for both ports: the outputs the
 * request asked for (or all), each with its name, datatype, shape and bytes, taken straight
 * from the run (no copy), classified where the request asked for classes (infer_classify.h),
 * and written to system shared memory where it asked for that. The gRPC port encodes it as a
 * ModelInferResponse, the REST port as JSON (and binary data).
 *
 *   bd_infer_reply_build   the outputs of a finished run, then the shared memory ones written
 *                          (bd_infer_shm_outputs: checked, copied unless the run wrote them in
 *                          place, their bytes left out of the answer)
 *   bd_infer_reply_free    what the answer owns (the classified outputs' strings) */
#ifndef BD_DAEMON_INFER_INFER_REPLY_H
#define BD_DAEMON_INFER_INFER_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#include "core/error.h"
#include "daemon/infer/infer_bind.h"
#include "daemon/infer/labels.h"
#include "runtime/plan.h"

typedef struct bd_infer_reply_output {
    const char *name;                   /* the graph output's (lives with the model) */
    const char *datatype;               /* Triton's name; "BYTES" when classified */
    int         ndim;
    int64_t     shape[BD_MAX_RANK];
} bd_infer_reply_output;

/* The answer. Zero-initialize; free with bd_infer_reply_free. Its bytes are views into the
 * run's outputs: valid while the execution context they came from is held. */
typedef struct bd_infer_reply {
    const char            *model, *version, *id;    /* the caller's: the version served, the
                                                       request's id (NULL = none) */
    size_t                 n;           /* the binding's response outputs */
    bd_infer_reply_output *out;
    bd_wire_span          *data;        /* per output: its bytes (empty when sent to shm) */
    uint8_t              **classified;  /* per output: owned classification strings, or NULL */
    uint64_t               shm_in_place, shm_copied;   /* output bytes to shared memory */
    bd_infer_reply_output  out_small[BD_INFER_SMALL];
    bd_wire_span           data_small[BD_INFER_SMALL];
    uint8_t               *classified_small[BD_INFER_SMALL];
} bd_infer_reply;

/* How classified outputs are answered (infer_classify.h). */
typedef struct bd_infer_classify_opts {
    bool   batched;                     /* the model's max_batch_size > 0 */
    size_t limit;                       /* bytes a classified output may take */
    const bd_labels *(*labels)(const void *arg, size_t graph_output);   /* NULL: none */
    const void *labels_arg;
} bd_infer_classify_opts;

/* R = the answer to B (bound to G) from a finished run: its outputs are OUTS_BY_GRAPH[graph
 * output] when given (a request's rows of a batch), else EXEC's. BD_EBACKEND when the run
 * produced an invalid tensor, a classification's or shared memory's BD_EINVAL, BD_ENOMEM;
 * R must be freed either way (its shm counters are right either way). */
int  bd_infer_reply_build(bd_infer_reply *r, const bd_infer_binding *b, const bd_graph *g,
                          const bd_exec *exec, const DLTensor *outs_by_graph,
                          const bd_infer_classify_opts *opts, bd_error *err);
void bd_infer_reply_free(bd_infer_reply *r);                /* NULL is allowed; R is zeroed */

#endif
