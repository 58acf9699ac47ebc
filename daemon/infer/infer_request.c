/* The neutral request's tensor arrays (infer_request.h). */
#include "daemon/infer/infer_request.h"

#include <stdlib.h>
#include <string.h>

bool bd_infer_request_alloc(bd_infer_request *r, size_t n_inputs, size_t n_outputs)
{
    r->inputs = n_inputs <= BD_INFER_SMALL ? r->inputs_small : calloc(n_inputs, sizeof *r->inputs);
    r->outputs = n_outputs <= BD_INFER_SMALL ? r->outputs_small
                                             : calloc(n_outputs, sizeof *r->outputs);
    if (!r->inputs || !r->outputs) {
        bd_infer_request_free(r);
        return false;
    }
    memset(r->inputs, 0, n_inputs * sizeof *r->inputs);
    memset(r->outputs, 0, n_outputs * sizeof *r->outputs);
    r->n_inputs = n_inputs;
    r->n_outputs = n_outputs;
    return true;
}

void bd_infer_request_free(bd_infer_request *r)
{
    if (!r)
        return;
    if (r->inputs != r->inputs_small)
        free(r->inputs);
    if (r->outputs != r->outputs_small)
        free(r->outputs);
    memset(r, 0, sizeof *r);
}
