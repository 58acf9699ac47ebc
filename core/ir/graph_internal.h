/* Internal to core/ir: what validate.c needs from graph.c beyond the public graph.h. */
#ifndef BD_CORE_IR_GRAPH_INTERNAL_H
#define BD_CORE_IR_GRAPH_INTERNAL_H

#include "core/ir/graph.h"

/* Put G's nodes in ORDER (a permutation of them) and renumber their indexes. */
void graph_set_node_order(bd_graph *g, bd_node **order);

#endif
