/* For the TensorFlow graph fuzzers (fuzz_graphdef, fuzz_tfjs, fuzz_savedmodel): the fallback
 * GraphDef (backends/tf/tfb_subgraph_def.h) of every node of an imported graph that carries a
 * TensorFlow NodeDef — what the TF engine would import if all of them fell back — is built
 * and freed. A refusal must say why; nothing may crash, leak or read out of bounds. */
#ifndef BD_TESTS_FUZZ_FUZZ_TF_FALLBACK_H
#define BD_TESTS_FUZZ_FUZZ_TF_FALLBACK_H

#include <stdlib.h>

#include "backends/tf/tfb_subgraph_def.h"

static void fuzz_tf_fallback(const bd_graph *g)
{
    size_t n = 0, total = bd_graph_num_nodes(g);
    bd_node **nodes = malloc((total ? total : 1) * sizeof *nodes);
    if (!nodes)
        return;
    for (size_t i = 0; i < total; i++)
        if (bd_graph_node(g, i)->origin)
            nodes[n++] = bd_graph_node(g, i);
    if (n) {
        int64_t producer = bd_graph_opset(g);
        tfb_graphdef gd = { 0 };
        bd_error err = { 0 };
        int p = producer > 0 && producer < INT32_MAX ? (int)producer : BD_TFB_DEFAULT_PRODUCER;
        int rc = tfb_graphdef_build(g, nodes, n, p, &gd, &err);
        if (rc && !err.msg[0])
            abort();                    /* a refusal always says why */
        if (!rc && (!gd.bytes || !gd.len || gd.n_nodes != n))
            abort();
        tfb_graphdef_free(&gd);
    }
    free(nodes);
}

#endif
