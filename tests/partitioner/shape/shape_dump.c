/* shape_dump MODEL.onnx: import, infer with static shapes required, and print every value as
 * "name<TAB>dtype<TAB>[dims]" (used by onnx_conformance.py against ONNX's node tests). */
#include <stdio.h>

#include "partitioner/onnx/onnx_import.h"
#include "partitioner/shape/shape_infer.h"

int main(int argc, char **argv)
{
    bd_graph *g;
    bd_error err = { 0 };
    char buf[160];
    if (argc != 2) {
        fprintf(stderr, "usage: shape_dump MODEL.onnx\n");
        return 2;
    }
    if (bd_onnx_import_file(argv[1], &g, &err)) {
        printf("import: %s\n", err.msg);
        return 0;
    }
    if (bd_shape_infer(g, true, &err)) {
        printf("infer: %s\n", err.msg);
        bd_graph_destroy(g);
        return 0;
    }
    for (size_t i = 0; i < bd_graph_num_values(g); i++) {
        const bd_value *v = bd_graph_value(g, i);
        printf("%s\t%d\t%s\n", v->name, v->dtype, bd_shape_str(&v->shape, buf, sizeof buf));
    }
    bd_graph_destroy(g);
    return 0;
}
