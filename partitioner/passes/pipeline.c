/* The order the passes run in when a plan is built. */
#include "passes.h"

int bd_passes_run(bd_graph *g, const bd_backend *backend, bd_error *err)
{
    int rc;
    if ((rc = bd_pass_fold_batchnorm(g, err)) < 0 || (rc = bd_pass_gelu(g, err)) < 0 ||
        (rc = bd_pass_layernorm(g, err)) < 0 || (rc = bd_pass_fuse_postops(g, backend, err)) < 0)
        return rc;
    return bd_graph_validate(g, err);
}
