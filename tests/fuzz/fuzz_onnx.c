/* Fuzz the ONNX importer: bytes -> bd_onnx_import_memory, then what the daemon does with an
 * imported model at load (validation, shape inference), and on a clone with every dynamic
 * input dim fixed what a request's shapes do at plan time: shape inference, then the fast
 * path's composite passes (fusions, folds) judged by oneDNN's supports(), without compiling
 * kernels. No external data (no base directory): the harness touches no file. */
#include <stddef.h>
#include <stdint.h>

#include "backends/dnnl/dnnl_backend.h"
#include "partitioner/onnx/onnx_import.h"
#include "partitioner/passes/passes.h"
#include "partitioner/shape/shape_infer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bd_graph *g = NULL;
    bd_error err = { 0 };
    if (bd_onnx_import_memory(data, size, NULL, &g, &err) != 0)
        return 0;
    if (bd_graph_validate(g, &err) == 0 && bd_shape_infer(g, false, &err) == 0) {
        bd_graph *c = bd_graph_clone(g);
        for (size_t i = 0; c && i < bd_graph_num_inputs(c); i++) {
            bd_value *v = bd_graph_input(c, i);
            for (int d = 0; d < v->shape.rank && d < BD_MAX_RANK; d++)
                if (v->shape.dims[d] < 0) {
                    v->shape.dims[d] = 2;
                    v->shape.sym[d] = NULL;
                }
        }
        bd_fuse_target target = { .backend = &bd_dnnl_backend };
        if (c && bd_shape_infer(c, false, &err) == 0)
            bd_passes_run(c, &target, &err);
        bd_graph_destroy(c);
    }
    bd_graph_destroy(g);
    return 0;
}
