/* Region merging: union nodes of one backend along data edges, refusing any merge that would
 * put a path through another region between the two halves (that would make the regions
 * depend on each other both ways, and no order of subgraphs could run them). */
#include <stdlib.h>
#include <string.h>

#include "partitioner/passes/partition.h"

typedef struct merge_state {
    const bd_graph *g;
    size_t  n;
    int    *parent;       /* union-find over node indices */
    size_t *succ_start;   /* consumers of node i: succ[succ_start[i] .. succ_start[i+1]) */
    int    *succ;
    int    *stack;
    unsigned *seen;       /* visit stamps, so each check needs no clearing */
    unsigned  stamp;
} merge_state;

static int find(int *parent, int i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

/* Consumer lists (a node reading a value twice is listed twice: harmless). */
static int build_succ(merge_state *s)
{
    size_t n = s->n, edges = 0;
    s->succ_start = calloc(n + 1, sizeof *s->succ_start);
    if (!s->succ_start)
        return BD_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const bd_node *c = bd_graph_node(s->g, i);
        for (size_t k = 0; k < c->n_inputs; k++)
            if (c->inputs[k] && c->inputs[k]->producer) {
                s->succ_start[c->inputs[k]->producer->index + 1]++;
                edges++;
            }
    }
    for (size_t i = 0; i < n; i++)
        s->succ_start[i + 1] += s->succ_start[i];
    size_t *fill = calloc(n + 1, sizeof *fill);
    s->succ = malloc((edges ? edges : 1) * sizeof *s->succ);
    if (!fill || !s->succ) {
        free(fill);
        return BD_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const bd_node *c = bd_graph_node(s->g, i);
        for (size_t k = 0; k < c->n_inputs; k++)
            if (c->inputs[k] && c->inputs[k]->producer) {
                int p = c->inputs[k]->producer->index;
                s->succ[s->succ_start[p] + fill[p]++] = (int)i;
            }
    }
    free(fill);
    return 0;
}

/* Is there a path from region RA to region RB that leaves RA into a third region first? */
static bool path_through_other(merge_state *s, int ra, int rb)
{
    size_t top = 0;
    s->stamp++;
    for (size_t i = 0; i < s->n; i++) {
        if (find(s->parent, (int)i) != ra)
            continue;
        for (size_t e = s->succ_start[i]; e < s->succ_start[i + 1]; e++) {
            int x = s->succ[e], rx = find(s->parent, x);
            if (rx != ra && rx != rb && s->seen[x] != s->stamp) {
                s->seen[x] = s->stamp;
                s->stack[top++] = x;
            }
        }
    }
    while (top > 0) {
        int x = s->stack[--top];
        for (size_t e = s->succ_start[x]; e < s->succ_start[x + 1]; e++) {
            int y = s->succ[e];
            if (find(s->parent, y) == rb)
                return true;
            if (s->seen[y] != s->stamp) {
                s->seen[y] = s->stamp;
                s->stack[top++] = y;
            }
        }
    }
    return false;
}

/* One sweep over the edges in topological order; returns the number of merges. */
static size_t sweep(merge_state *s)
{
    size_t merges = 0;
    for (size_t i = 0; i < s->n; i++) {
        const bd_node *c = bd_graph_node(s->g, i);
        for (size_t k = 0; k < c->n_inputs; k++) {
            const bd_node *p = c->inputs[k] ? c->inputs[k]->producer : NULL;
            if (!p || p->backend != c->backend)
                continue;
            int rp = find(s->parent, p->index), rc = find(s->parent, (int)i);
            if (rp == rc || path_through_other(s, rp, rc))
                continue;
            s->parent[rc] = rp;
            merges++;
        }
    }
    return merges;
}

int bd_region_merge(const bd_graph *g, int *region, size_t *n_regions, bd_error *err)
{
    merge_state s = { .g = g, .n = bd_graph_num_nodes(g) };
    size_t n = s.n ? s.n : 1;
    s.parent = malloc(n * sizeof *s.parent);
    s.stack  = malloc(n * sizeof *s.stack);
    s.seen   = calloc(n, sizeof *s.seen);
    int rc = s.parent && s.stack && s.seen ? build_succ(&s) : BD_ENOMEM;
    if (rc == 0) {
        for (size_t i = 0; i < s.n; i++)
            s.parent[i] = (int)i;
        /* a merge can enable another (a node between two halves joins one of them), so
         * sweep until nothing changes; every sweep but the last merges, so this ends */
        for (size_t round = 0; round <= s.n && sweep(&s) > 0; round++)
            ;
        /* number the regions by their first node */
        size_t r = 0;
        for (size_t i = 0; i < s.n; i++)
            region[i] = -1;
        for (size_t i = 0; i < s.n; i++) {
            int root = find(s.parent, (int)i);
            if (region[root] < 0)
                region[root] = (int)r++;
            region[i] = region[root];
        }
        *n_regions = r;
    }
    free(s.parent);
    free(s.stack);
    free(s.seen);
    free(s.succ_start);
    free(s.succ);
    return rc ? bd_error_set(err, rc, "out of memory merging regions") : 0;
}
