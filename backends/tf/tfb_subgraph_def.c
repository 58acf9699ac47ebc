/* Building the fallback GraphDef (see tfb_subgraph_def.h) with the nanopb messages generated
 * from proto/tf_graph.proto: original NodeDefs are decoded, their attrs kept as
 * the raw bytes of each map entry, and everything is encoded back with pb_encode. */
#include "backends/tf/tfb_subgraph_def.h"

#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <pb_decode.h>
#include <pb_encode.h>

#include "backends/tf/tf_api.h"
#include "backends/tf/tfb_dtype.h"
#include "proto/tf_graph.pb.h"

/* ---- decoding an original NodeDef -------------------------------------------------------- */

typedef struct raw_slice { const uint8_t *p; size_t n; char *key; } raw_slice;  /* key malloc'd */

enum { MAX_UNFUSED = 3 };

typedef struct fb_node {
    const bd_node     *node;
    tensorflow_NodeDef nd;          /* decoded: name, op, inputs (pb_release'd at the end) */
    raw_slice         *attrs;       /* raw AttrEntry messages kept (all but _class) */
    size_t             n_attrs;
    char             **inputs;      /* rewritten input list */
    size_t             n_inputs;
    /* Written as the ops it fuses (see plan_unfused), else n_unfused = 0: op k is named
     * unfused_name[k] (the last one is nd.name; the others are malloc'd) and reads
     * unfused_in[k] (entries not owned: fb->inputs' strings or unfused_name[k - 1]). */
    size_t             n_unfused;
    const char        *unfused_op[MAX_UNFUSED];
    char              *unfused_name[MAX_UNFUSED];
    char             **unfused_in[MAX_UNFUSED];
    size_t             unfused_n_in[MAX_UNFUSED];
    float              unfused_alpha;   /* LeakyRelu's alpha */
} fb_node;

/* nanopb decode callback for NodeDef.attr: remember where each entry lies (the stream reads
 * straight from the origin buffer, so state is the entry's first byte), dropping _class. */
static bool keep_attr(pb_istream_t *s, const pb_field_t *f, void **arg)
{
    (void)f;
    fb_node *fb = *arg;
    raw_slice sl = { (const uint8_t *)s->state, s->bytes_left, NULL };
    pb_istream_t peek = *s;
    tensorflow_NodeDef_AttrEntry e = tensorflow_NodeDef_AttrEntry_init_zero;
    if (!pb_decode(&peek, tensorflow_NodeDef_AttrEntry_fields, &e))
        return false;
    bool drop = !e.key || strcmp(e.key, "_class") == 0;
    if (!drop) {
        raw_slice *a = realloc(fb->attrs, (fb->n_attrs + 1) * sizeof *a);
        if (!a) {
            pb_release(tensorflow_NodeDef_AttrEntry_fields, &e);
            return false;
        }
        sl.key = e.key;                     /* taken over from the decoded entry */
        e.key = NULL;
        a[fb->n_attrs++] = sl;
        fb->attrs = a;
    }
    pb_release(tensorflow_NodeDef_AttrEntry_fields, &e);
    return pb_read(s, NULL, s->bytes_left);
}

static int decode_nodedef(const void *origin, size_t len, tensorflow_NodeDef *nd,
                          pb_callback_t attr, bd_error *err, const char *who)
{
    *nd = (tensorflow_NodeDef)tensorflow_NodeDef_init_zero;
    nd->attr = attr;
    pb_istream_t is = pb_istream_from_buffer(origin, len);
    if (!pb_decode(&is, tensorflow_NodeDef_fields, nd)) {
        int rc = bd_error_set(err, BD_EMODEL, "node '%s': its NodeDef does not decode: %s",
                              who, PB_GET_ERROR(&is));
        pb_release(tensorflow_NodeDef_fields, nd);
        return rc;
    }
    if (!nd->name || !nd->name[0] || !nd->op || !nd->op[0]) {
        pb_release(tensorflow_NodeDef_fields, nd);
        return bd_error_set(err, BD_EMODEL, "node '%s': its NodeDef has no name or op", who);
    }
    return 0;
}

static size_t count_data_inputs(const tensorflow_NodeDef *nd)
{
    size_t n = 0;
    for (pb_size_t i = 0; i < nd->input_count; i++)
        n += nd->input[i] && nd->input[i][0] != '^';
    return n;
}

int tfb_nodedef_data_inputs(const void *origin, size_t len, size_t *n, bd_error *err)
{
    tensorflow_NodeDef nd;
    int rc = decode_nodedef(origin, len, &nd, (pb_callback_t){ .funcs.decode = NULL }, err, "?");
    if (rc)
        return rc;
    *n = count_data_inputs(&nd);
    pb_release(tensorflow_NodeDef_fields, &nd);
    return 0;
}

/* ---- choosing the nodes ------------------------------------------------------------------ */

int tfb_fallback_nodes(const bd_subgraph *sg, bd_node ***out, size_t *n, bd_error *err)
{
    int b = sg->n_nodes ? sg->nodes[0]->backend : -1;
    size_t total = b >= 0 ? bd_graph_num_nodes(sg->graph) : sg->n_nodes;
    bd_node **v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    size_t k = 0;
    if (b < 0) {
        for (size_t i = 0; i < sg->n_nodes; i++)
            v[k++] = sg->nodes[i];
    } else {
        for (size_t i = 0; i < total; i++) {
            bd_node *nd = bd_graph_node(sg->graph, i);
            if (nd->backend == b)
                v[k++] = nd;
        }
    }
    *out = v;
    *n = k;
    return 0;
}

/* ---- building ---------------------------------------------------------------------------- */

typedef enum { GEN_PLACEHOLDER = 1, GEN_CONST = 2, GEN_PIVOT = 3 } gen_kind;

typedef struct gen_node {           /* a node braid generates: Placeholder, Const, Identity */
    gen_kind        kind;
    const bd_value *v;              /* the value it holds (PIVOT: the value it reads) */
    char           *name;           /* owned by the graphdef's op_name table, or by framed */
    int             tfb_dtype;
    char           *input;          /* its one input (malloc'd) or NULL: CONST "^NODE" putting it
                                     * in NODE's loop frame, PIVOT the Switch output it reads */
} gen_node;

typedef struct builder {
    const bd_graph *g;
    fb_node        *fb;
    size_t          n_fb;
    gen_node       *gen;
    size_t          n_gen;
    struct hsearch_data names;      /* every node name in the GraphDef */
    tfb_graphdef *gd;
    int             producer;
    /* Loop frames (see frame_anchor): per value, the fallback node producing it (index into
     * fb, or -1); per fallback node, the loop depth of its inputs and of its outputs. */
    ssize_t        *producer_of;
    int            *in_depth, *out_depth;
    const char    **const_anchor;   /* per fallback Const: a node of its readers' frame */
    char          **framed;         /* names of the nodes made for loop frames (owned here) */
    size_t          n_framed;
} builder;

static bool name_taken(builder *b, const char *name)
{
    ENTRY e = { .key = (char *)name, .data = NULL }, *r = NULL;
    return hsearch_r(e, FIND, &r, &b->names) && r;
}

static int name_add(builder *b, char *name, bd_error *err)
{
    ENTRY e = { .key = name, .data = NULL }, *r = NULL;
    if (!hsearch_r(e, ENTER, &r, &b->names))
        return bd_error_set(err, BD_ENOMEM, "out of memory naming fallback nodes");
    return 0;
}

/* "PREFIX/<value name>" with characters TensorFlow does not allow in node names replaced,
 * made unique with "_<index>" if needed. Malloc'd. */
static char *gen_name(builder *b, const char *prefix, const bd_value *v)
{
    size_t n = strlen(prefix) + strlen(v->name) + 32;
    char *s = malloc(n);
    if (!s)
        return NULL;
    size_t k = (size_t)snprintf(s, n, "%s/", prefix);
    for (const char *c = v->name; *c; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                  *c == '_' || *c == '.' || *c == '/';
        s[k++] = ok ? *c : '_';
    }
    s[k] = '\0';
    if (name_taken(b, s))
        snprintf(s + k, n - k, "_%d", v->index);
    return s;
}

/* Output index of V among N's outputs: the ":<i>" suffix of V's name when it names N,
 * else its position. */
static int output_index(const bd_node *n, const char *tf_name, size_t pos, const bd_value *v)
{
    size_t ln = strlen(tf_name);
    const char *s = v->name;
    if (strncmp(s, tf_name, ln) == 0 && s[ln] == ':' && s[ln + 1]) {
        char *end;
        long i = strtol(s + ln + 1, &end, 10);
        if (*end == '\0' && i >= 0 && i < 1 << 20)
            return (int)i;
    }
    (void)n;
    return (int)pos;
}

static char *tensor_ref(const char *op, int index)
{
    size_t n = strlen(op) + 16;
    char *s = malloc(n);
    if (s) {
        if (index == 0)
            snprintf(s, n, "%s", op);
        else
            snprintf(s, n, "%s:%d", op, index);
    }
    return s;
}

/* Give boundary value V a Placeholder or Const in the GraphDef. */
static int add_generated(builder *b, const bd_value *v, const bd_node *reader, bd_error *err)
{
    bool is_const = v->data != NULL;
    int tf = tfb_dtype_from_ir(v->dtype);
    if (!tf)
        return bd_error_set(err, BD_EUNSUPPORTED, "node '%s': input '%s' has dtype %s, which "
                            "TensorFlow cannot take", reader->name, v->name, bd_dtype_name(v->dtype));
    if (tf == TF_STRING)
        return bd_error_set(err, BD_EUNSUPPORTED, "node '%s': input '%s' is a string tensor %s; "
                            "the TensorFlow fallback only takes numeric tensors from outside",
                            reader->name, v->name, is_const ? "constant" : "fed at run time");
    if (is_const) {
        int64_t numel = bd_shape_numel(&v->shape);
        if (numel < 0 || (uint64_t)numel * bd_dtype_size(v->dtype) != v->nbytes)
            return bd_error_set(err, BD_EMODEL, "constant '%s': %zu bytes do not match its "
                                "dtype and shape", v->name, v->nbytes);
    }
    char *name = gen_name(b, is_const ? "braid_const" : "braid_feed", v);
    if (!name)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    if (name_taken(b, name)) {
        int rc = bd_error_set(err, BD_EMODEL, "cannot name the %s for '%s': '%s' is taken",
                              is_const ? "Const" : "Placeholder", v->name, name);
        free(name);
        return rc;
    }
    b->gd->op_name[v->index] = name;
    b->gd->out_index[v->index] = 0;
    int rc = name_add(b, name, err);
    if (rc)
        return rc;
    b->gen[b->n_gen++] = (gen_node){ is_const ? GEN_CONST : GEN_PLACEHOLDER, v, name, tf, NULL };
    if (is_const)
        b->gd->n_consts++;
    else
        b->gd->n_placeholders++;
    return 0;
}

/* ---- loop frames ---------------------------------------------------------------------------
 * TensorFlow runs a while loop's body in a frame of its own, and a node there may only read
 * tensors of that frame (outside tensors come in through Enter). A Const in the body joins the
 * frame through a control input from a node inside it. braid folds such Consts into IR
 * constants, which come back here as generated Const nodes without it, and TensorFlow refuses
 * the graph ("has inputs from different frames"). So a constant read inside a loop gets a
 * copy of its Const with a control input from a node of the reader's frame. A Const the
 * fallback runs itself loses its control input too when that input named a node braid
 * dropped (NoOp): it gets one from its first reader inside a loop (find_const_anchors). */

static bool op_is(const fb_node *fb, const char *a, const char *b)
{
    return !strcmp(fb->nd.op, a) || !strcmp(fb->nd.op, b);
}

/* The loop depth of every fallback node's inputs and outputs, in graph (topological) order:
 * Enter's outputs are one frame deeper than its input, Exit's one shallower. */
static void compute_frames(builder *b)
{
    for (size_t i = 0; i < b->n_fb; i++) {
        const bd_node *node = b->fb[i].node;
        int d = 0;
        for (size_t j = 0; j < node->n_inputs; j++) {
            const bd_value *v = node->inputs[j];
            ssize_t p = v ? b->producer_of[v->index] : -1;
            if (p >= 0 && (size_t)p < i && b->out_depth[p] > d)
                d = b->out_depth[p];
        }
        b->in_depth[i] = d;
        if (op_is(&b->fb[i], "Enter", "RefEnter"))
            b->out_depth[i] = d + 1;
        else if (op_is(&b->fb[i], "Exit", "RefExit"))
            b->out_depth[i] = d > 0 ? d - 1 : 0;
        else
            b->out_depth[i] = d;
    }
}

static char gen_mark;               /* ENTRY.data of the names of the nodes made below */

/* Register NAME (malloc'd; taken over) for a node made for a loop frame. 1 and *OUT = the
 * name already registered when that node was made before; 0 and *OUT = NAME when new. */
static int claim_name(builder *b, char *name, char **out, bd_error *err)
{
    ENTRY e = { .key = name, .data = NULL }, *r = NULL;
    if (hsearch_r(e, FIND, &r, &b->names) && r) {
        int rc = r->data == &gen_mark ? 1 :
                 bd_error_set(err, BD_EMODEL, "cannot add node '%s' for a loop frame: the "
                              "model has a node of that name", name);
        *out = r->key;
        free(name);
        return rc;
    }
    e.data = &gen_mark;
    if (!hsearch_r(e, ENTER, &r, &b->names)) {
        free(name);
        return bd_error_set(err, BD_ENOMEM, "out of memory naming fallback nodes");
    }
    b->framed[b->n_framed++] = name;
    *out = name;
    return 0;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

/* An Identity of V, a Switch's output read in a loop body, to anchor Consts on: TensorFlow's
 * own "pivot" (a control input from the Switch itself would not follow the branch taken).
 * 0 and its name in *OUT; 1 when V's dtype cannot be told to TensorFlow; negative on error. */
static int pivot(builder *b, const bd_value *v, char **out, bd_error *err)
{
    int tf = tfb_dtype_from_ir(v->dtype);
    if (!tf)
        return 1;                           /* no type to give the Identity */
    char *ref = tensor_ref(b->gd->op_name[v->index], b->gd->out_index[v->index]);
    char *name = ref ? join3("braid_pivot/", ref, "") : NULL;
    char *p = name ? strchr(name + strlen("braid_pivot/"), ':') : NULL;
    if (p)
        *p = '/';                           /* ':' is not allowed in a node name */
    int rc = name ? claim_name(b, name, out, err) :
                    bd_error_set(err, BD_ENOMEM, "out of memory");
    if (rc == 0) {
        b->gen[b->n_gen++] = (gen_node){ GEN_PIVOT, v, *out, tf, ref };
        return 0;
    }
    free(ref);
    return rc == 1 ? 0 : rc;
}

/* In *OUT, a node of the frame fallback node I reads in, for a Const it reads to take a
 * control input from; NULL when I reads outside any loop (or is an Enter, which reads from
 * the frame outside) or when there is none. */
static int frame_anchor(builder *b, size_t i, const char **out, bd_error *err)
{
    const fb_node *fb = &b->fb[i];
    *out = NULL;
    if (b->in_depth[i] == 0 || op_is(fb, "Enter", "RefEnter"))
        return 0;
    /* I's own control inputs are in its frame (TensorFlow requires it) */
    for (pb_size_t k = 0; k < fb->nd.input_count; k++) {
        const char *in = fb->nd.input[k];
        if (in && in[0] == '^' && name_taken(b, in + 1)) {
            *out = in + 1;
            return 0;
        }
    }
    /* else the producer of a data input in the same frame; a pivot for a Switch's output */
    const bd_value *from_switch = NULL;
    for (size_t j = 0; j < fb->node->n_inputs; j++) {
        const bd_value *v = fb->node->inputs[j];
        ssize_t p = v ? b->producer_of[v->index] : -1;
        if (p < 0 || b->out_depth[p] != b->in_depth[i])
            continue;
        if (!op_is(&b->fb[p], "Switch", "RefSwitch")) {
            *out = b->fb[p].nd.name;
            return 0;
        }
        if (!from_switch)
            from_switch = v;
    }
    if (from_switch) {
        char *name = NULL;
        int rc = pivot(b, from_switch, &name, err);
        if (rc < 0)
            return rc;
        *out = rc == 0 ? name : NULL;       /* 1: no pivot possible, no anchor */
    }
    return 0;
}

/* Whether fallback node I has a control input naming a node of this GraphDef. */
static bool has_kept_control(builder *b, size_t i)
{
    const fb_node *fb = &b->fb[i];
    for (pb_size_t k = 0; k < fb->nd.input_count; k++)
        if (fb->nd.input[k] && fb->nd.input[k][0] == '^' && name_taken(b, fb->nd.input[k] + 1))
            return true;
    return false;
}

static int find_const_anchors(builder *b, bd_error *err)
{
    for (size_t i = 0; i < b->n_fb; i++) {
        const bd_node *node = b->fb[i].node;
        for (size_t j = 0; j < node->n_inputs; j++) {
            const bd_value *v = node->inputs[j];
            ssize_t p = v ? b->producer_of[v->index] : -1;
            if (p < 0 || b->const_anchor[p] || strcmp(b->fb[p].nd.op, "Const") ||
                has_kept_control(b, (size_t)p))
                continue;
            int rc = frame_anchor(b, i, &b->const_anchor[p], err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* In *OUT, the name of constant V's Const copy in ANCHOR's frame, made on first use. */
static int framed_const(builder *b, const bd_value *v, const char *anchor, char **out, bd_error *err)
{
    char *name = join3(b->gd->op_name[v->index], "/in_frame/", anchor);
    int rc = name ? claim_name(b, name, out, err) :
                    bd_error_set(err, BD_ENOMEM, "out of memory");
    if (rc)
        return rc == 1 ? 0 : rc;
    char *control = join3("^", anchor, "");
    if (!control)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    b->gen[b->n_gen++] = (gen_node){ GEN_CONST, v, *out, tfb_dtype_from_ir(v->dtype), control };
    b->gd->n_consts++;
    return 0;
}

/* ---- _FusedDepthwiseConv2dNative, written unfused ------------------------------------------
 * TensorFlow's _FusedDepthwiseConv2dNative (what TF.js's FusedDepthwiseConv2dNative is written
 * as, and what TensorFlow's own remapper leaves in an optimized GraphDef) has a working CPU
 * kernel only through oneDNN: TensorFlow's oneDNN layout pass rewrites the node into a oneDNN
 * op, and the kernel registered for the op itself is a placeholder that produces nothing.
 * TensorFlow turns oneDNN on by default only on CPUs with AVX512_VNNI, AVX512_BF16, AVX_VNNI
 * or AMX (TF_ENABLE_ONEDNN_OPTS overrides it); on the others (AVX2 only: AMD Zen 3, older
 * Xeons) the run fails with "Missing 0-th output from {{node ...}}". So the node is written as
 * the ops it fuses, which every build of TensorFlow runs: DepthwiseConv2dNative, BiasAdd and
 * the activation, the last one keeping the node's name (its output stays "<name>:0"); where
 * oneDNN is on, TensorFlow's remapper fuses them again. An epilogue with no single TensorFlow
 * op (Prelu, FusedBatchNorm, _FusedHardSwish, ...) stays fused: it runs where oneDNN is on. */

static const char *const unfused_acts[] = { "Relu", "Relu6", "Elu", "LeakyRelu", "Sigmoid", "Tanh" };

/* The ops FB is written as (DepthwiseConv2dNative, BiasAdd[, activation]) in OPS, and their
 * count; 0 when FB is written as it is. */
static size_t unfused_ops(const fb_node *fb, const char *ops[MAX_UNFUSED])
{
    if (strcmp(fb->nd.op, "_FusedDepthwiseConv2dNative") || fb->node->n_inputs != 3)
        return 0;
    const bd_attr *fo = bd_node_attr(fb->node, "fused_ops");
    if (!fo || fo->type != BD_ATTR_STRINGS || fo->n < 1 || fo->n > 2 || strcmp(fo->strings[0], "BiasAdd"))
        return 0;
    ops[0] = "DepthwiseConv2dNative";
    ops[1] = "BiasAdd";
    if (fo->n == 1)
        return 2;
    for (size_t k = 0; k < sizeof unfused_acts / sizeof *unfused_acts; k++)
        if (!strcmp(fo->strings[1], unfused_acts[k])) {
            ops[2] = unfused_acts[k];
            return 3;
        }
    return 0;
}

/* Decide whether FB is written unfused and name the ops it becomes (registered, so that no
 * generated node takes those names). */
static int plan_unfused(builder *b, fb_node *fb, bd_error *err)
{
    const char *ops[MAX_UNFUSED];
    size_t n = unfused_ops(fb, ops);
    if (n == 0)
        return 0;
    static const char *const suffix[MAX_UNFUSED - 1] = { "/braid_depthwise", "/braid_bias_add" };
    fb->n_unfused = n;
    for (size_t k = 0; k < n; k++) {
        fb->unfused_op[k] = ops[k];
        if (k + 1 == n) {
            fb->unfused_name[k] = fb->nd.name;
            break;
        }
        if (!(fb->unfused_name[k] = join3(fb->nd.name, suffix[k], "")))
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        if (name_taken(b, fb->unfused_name[k]))
            return bd_error_set(err, BD_EMODEL, "node '%s': cannot write it unfused as '%s': the "
                                "model has a node of that name", fb->nd.name, fb->unfused_name[k]);
        int rc = name_add(b, fb->unfused_name[k], err);
        if (rc)
            return rc;
    }
    const bd_attr *alpha = bd_node_attr(fb->node, "leakyrelu_alpha");
    fb->unfused_alpha = alpha && alpha->type == BD_ATTR_FLOAT ? alpha->f : 0.2f;   /* TF's default */
    return 0;
}

/* The input lists of FB's unfused ops, from its rewritten inputs: the convolution reads the
 * input and the filter (and takes FB's control inputs), BiasAdd the convolution and the bias,
 * the activation BiasAdd. */
static int unfused_inputs(fb_node *fb, bd_error *err)
{
    if (fb->n_unfused == 0)
        return 0;
    char *data[3];
    size_t n_data = 0, n_ctrl = 0;
    for (size_t k = 0; k < fb->n_inputs; k++) {
        if (fb->inputs[k][0] == '^')
            n_ctrl++;
        else if (n_data < 3)
            data[n_data++] = fb->inputs[k];
    }
    if (n_data != 3)
        return bd_error_set(err, BD_EMODEL, "node '%s': %zu data inputs, a fused depthwise "
                            "convolution with a bias has 3", fb->nd.name, n_data);
    for (size_t k = 0; k < fb->n_unfused; k++) {
        size_t cap = k == 0 ? 2 + n_ctrl : 2;
        if (!(fb->unfused_in[k] = malloc(cap * sizeof *fb->unfused_in[k])))
            return bd_error_set(err, BD_ENOMEM, "out of memory");
    }
    char **in = fb->unfused_in[0];
    size_t n = 0;
    in[n++] = data[0];
    in[n++] = data[1];
    for (size_t k = 0; k < fb->n_inputs; k++)
        if (fb->inputs[k][0] == '^')
            in[n++] = fb->inputs[k];
    fb->unfused_n_in[0] = n;
    fb->unfused_in[1][0] = fb->unfused_name[0];
    fb->unfused_in[1][1] = data[2];
    fb->unfused_n_in[1] = 2;
    if (fb->n_unfused == 3) {
        fb->unfused_in[2][0] = fb->unfused_name[1];
        fb->unfused_n_in[2] = 1;
    }
    return 0;
}

/* Rewrite FB's input list: data inputs from the IR node's inputs, control inputs kept only
 * when they name a node of this GraphDef. */
static int rewrite_inputs(builder *b, fb_node *fb, bd_error *err)
{
    const bd_node *n = fb->node;
    fb->inputs = calloc(fb->nd.input_count + 1u, sizeof *fb->inputs);   /* + a frame anchor */
    if (!fb->inputs)
        return bd_error_set(err, BD_ENOMEM, "out of memory");
    size_t data = 0;
    for (pb_size_t i = 0; i < fb->nd.input_count; i++) {
        const char *in = fb->nd.input[i];
        char *s;
        if (in && in[0] == '^') {
            if (!name_taken(b, in + 1))
                continue;                       /* ordering on a node that runs elsewhere */
            s = strdup(in);
        } else if (n->inputs[data]) {
            const bd_value *v = n->inputs[data++];
            const char *anchor = NULL;
            if (v->data && b->producer_of[v->index] < 0) {
                int rc = frame_anchor(b, (size_t)(fb - b->fb), &anchor, err);
                if (rc)
                    return rc;
            }
            if (anchor) {
                char *copy = NULL;
                int rc = framed_const(b, v, anchor, &copy, err);
                if (rc)
                    return rc;
                s = strdup(copy);
            } else {
                s = tensor_ref(b->gd->op_name[v->index], b->gd->out_index[v->index]);
            }
        } else {
            /* No IR value: the frontend leaves a loop's back edge (NextIteration -> Merge)
             * out of the IR to keep it acyclic. The NodeDef's own reference stands, provided
             * its producer is a fallback node too. */
            data++;
            size_t len = strcspn(in ? in : "", ":");
            char *producer = in ? strndup(in, len) : NULL;
            bool here = producer && name_taken(b, producer);
            free(producer);
            if (!here)
                return bd_error_set(err, BD_EMODEL, "node '%s': input '%s' has no IR value and "
                                    "is not produced in the TensorFlow fallback", n->name,
                                    in ? in : "?");
            s = strdup(in);
        }
        if (!s)
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        fb->inputs[fb->n_inputs++] = s;
    }
    const char *anchor = b->const_anchor[fb - b->fb];
    if (anchor) {
        size_t len = strlen(anchor) + 2;
        if (!(fb->inputs[fb->n_inputs] = malloc(len)))
            return bd_error_set(err, BD_ENOMEM, "out of memory");
        snprintf(fb->inputs[fb->n_inputs++], len, "^%s", anchor);
    }
    return 0;
}

/* ---- encoding ---------------------------------------------------------------------------- */

static bool enc_raw_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const fb_node *fb = *arg;
    for (size_t i = 0; i < fb->n_attrs; i++)
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_string(s, fb->attrs[i].p, fb->attrs[i].n))
            return false;
    return true;
}

/* The attrs of FB's unfused op K: FB's own that the op has (and every "_" one, such as
 * _output_shapes: each op's output has the fused node's shape), plus LeakyRelu's alpha. */
typedef struct unfused_arg { const fb_node *fb; size_t k; } unfused_arg;

static bool unfused_keeps(const char *op, const char *key)
{
    static const char *const conv[] = { "T", "strides", "padding", "explicit_paddings",
                                        "data_format", "dilations", NULL };
    static const char *const bias[] = { "T", "data_format", NULL };
    static const char *const act[] = { "T", NULL };
    const char *const *keys = !strcmp(op, "DepthwiseConv2dNative") ? conv :
                              !strcmp(op, "BiasAdd") ? bias : act;
    if (key[0] == '_')
        return true;
    for (; *keys; keys++)
        if (!strcmp(*keys, key))
            return true;
    return false;
}

static bool enc_float_value(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    tensorflow_AttrValue av = tensorflow_AttrValue_init_zero;
    av.has_f = true;
    av.f = *(const float *)*arg;
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_fields, &av);
}

static bool enc_unfused_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const unfused_arg *ua = *arg;
    const fb_node *fb = ua->fb;
    const char *op = fb->unfused_op[ua->k];
    for (size_t i = 0; i < fb->n_attrs; i++)
        if (unfused_keeps(op, fb->attrs[i].key) &&
            (!pb_encode_tag_for_field(s, f) || !pb_encode_string(s, fb->attrs[i].p, fb->attrs[i].n)))
            return false;
    if (strcmp(op, "LeakyRelu"))
        return true;
    static char k_alpha[] = "alpha";
    tensorflow_NodeDef_AttrEntry e = tensorflow_NodeDef_AttrEntry_init_zero;
    e.key = k_alpha;
    e.value.funcs.encode = enc_float_value;
    e.value.arg = (void *)&fb->unfused_alpha;
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_NodeDef_AttrEntry_fields, &e);
}

typedef struct shape_arg { const bd_shape *shape; bool dims_unknown; } shape_arg;

static bool enc_dims(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const shape_arg *a = *arg;
    for (int i = 0; i < a->shape->rank; i++) {
        tensorflow_TensorShapeProto_Dim d = tensorflow_TensorShapeProto_Dim_init_zero;
        d.has_size = true;
        d.size = a->dims_unknown ? -1 : a->shape->dims[i];
        if (!pb_encode_tag_for_field(s, f) ||
            !pb_encode_submessage(s, tensorflow_TensorShapeProto_Dim_fields, &d))
            return false;
    }
    return true;
}

static bool enc_shape(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const shape_arg *a = *arg;
    tensorflow_TensorShapeProto sp = tensorflow_TensorShapeProto_init_zero;
    if (a->shape->rank < 0) {
        sp.has_unknown_rank = true;
        sp.unknown_rank = true;
    } else {
        sp.dim.funcs.encode = enc_dims;
        sp.dim.arg = (void *)a;
    }
    return pb_encode_tag_for_field(s, f) &&
           pb_encode_submessage(s, tensorflow_TensorShapeProto_fields, &sp);
}

static bool enc_content(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const bd_value *v = *arg;
    return pb_encode_tag_for_field(s, f) && pb_encode_string(s, v->data, v->nbytes);
}

static bool enc_tensor(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const gen_node *gn = *arg;
    shape_arg sa = { &gn->v->shape, false };
    tensorflow_TensorProto t = tensorflow_TensorProto_init_zero;
    t.has_dtype = true;
    t.dtype = (tensorflow_DataType)gn->tfb_dtype;
    t.tensor_shape.funcs.encode = enc_shape;
    t.tensor_shape.arg = &sa;
    t.tensor_content.funcs.encode = enc_content;
    t.tensor_content.arg = (void *)gn->v;
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_TensorProto_fields, &t);
}

typedef struct attr_arg { const gen_node *gn; int which; } attr_arg;   /* 0 dtype, 1 value/shape */

static bool enc_attr_value(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const attr_arg *a = *arg;
    tensorflow_AttrValue av = tensorflow_AttrValue_init_zero;
    shape_arg sa = { &a->gn->v->shape, true };
    if (a->which == 0) {
        av.has_type = true;
        av.type = (tensorflow_DataType)a->gn->tfb_dtype;
    } else if (a->gn->kind == GEN_CONST) {
        av.tensor.funcs.encode = enc_tensor;
        av.tensor.arg = (void *)a->gn;
    } else {
        av.shape.funcs.encode = enc_shape;
        av.shape.arg = &sa;
    }
    return pb_encode_tag_for_field(s, f) && pb_encode_submessage(s, tensorflow_AttrValue_fields, &av);
}

static bool enc_gen_attrs(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const gen_node *gn = *arg;
    static char k_dtype[] = "dtype", k_value[] = "value", k_shape[] = "shape", k_t[] = "T";
    if (gn->kind == GEN_PIVOT) {                 /* Identity: T only */
        attr_arg aa = { gn, 0 };
        tensorflow_NodeDef_AttrEntry e = tensorflow_NodeDef_AttrEntry_init_zero;
        e.key = k_t;
        e.value.funcs.encode = enc_attr_value;
        e.value.arg = &aa;
        return pb_encode_tag_for_field(s, f) &&
               pb_encode_submessage(s, tensorflow_NodeDef_AttrEntry_fields, &e);
    }
    for (int which = 0; which < 2; which++) {
        attr_arg aa = { gn, which };
        tensorflow_NodeDef_AttrEntry e = tensorflow_NodeDef_AttrEntry_init_zero;
        e.key = which == 0 ? k_dtype : gn->kind == GEN_CONST ? k_value : k_shape;
        e.value.funcs.encode = enc_attr_value;
        e.value.arg = &aa;
        if (!pb_encode_tag_for_field(s, f) ||
            !pb_encode_submessage(s, tensorflow_NodeDef_AttrEntry_fields, &e))
            return false;
    }
    return true;
}

static bool enc_nodes(pb_ostream_t *s, const pb_field_t *f, void *const *arg)
{
    const builder *b = *arg;
    static char op_const[] = "Const", op_ph[] = "Placeholder", op_identity[] = "Identity";
    for (size_t i = 0; i < b->n_gen; i++) {
        tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
        nd.name = b->gen[i].name;
        nd.op = b->gen[i].kind == GEN_CONST ? op_const :
                b->gen[i].kind == GEN_PIVOT ? op_identity : op_ph;
        if (b->gen[i].input) {
            nd.input_count = 1;
            nd.input = &b->gen[i].input;
        }
        nd.attr.funcs.encode = enc_gen_attrs;
        nd.attr.arg = (void *)&b->gen[i];
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, tensorflow_NodeDef_fields, &nd))
            return false;
    }
    for (size_t i = 0; i < b->n_fb; i++) {
        const fb_node *fb = &b->fb[i];
        for (size_t k = 0; k < fb->n_unfused; k++) {
            unfused_arg ua = { fb, k };
            tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
            nd.name = fb->unfused_name[k];
            nd.op = (char *)fb->unfused_op[k];
            nd.input_count = (pb_size_t)fb->unfused_n_in[k];
            nd.input = fb->unfused_in[k];
            nd.attr.funcs.encode = enc_unfused_attrs;
            nd.attr.arg = &ua;
            if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, tensorflow_NodeDef_fields, &nd))
                return false;
        }
        if (fb->n_unfused)
            continue;
        tensorflow_NodeDef nd = tensorflow_NodeDef_init_zero;
        nd.name = fb->nd.name;
        nd.op = fb->nd.op;
        nd.input_count = (pb_size_t)fb->n_inputs;
        nd.input = fb->inputs;
        nd.attr.funcs.encode = enc_raw_attrs;
        nd.attr.arg = (void *)fb;
        if (!pb_encode_tag_for_field(s, f) || !pb_encode_submessage(s, tensorflow_NodeDef_fields, &nd))
            return false;
    }
    return true;
}

static int encode(builder *b, bd_error *err)
{
    tensorflow_GraphDef gdef = tensorflow_GraphDef_init_zero;
    gdef.node.funcs.encode = enc_nodes;
    gdef.node.arg = b;
    gdef.has_versions = true;
    gdef.versions.has_producer = true;
    gdef.versions.producer = b->producer;
    size_t size = 0;
    if (!pb_get_encoded_size(&size, tensorflow_GraphDef_fields, &gdef))
        return bd_error_set(err, BD_EINVAL, "cannot size the fallback GraphDef");
    if (size >= (size_t)INT32_MAX)      /* protobuf's 2 GiB message limit */
        return bd_error_set(err, BD_EUNSUPPORTED, "the fallback GraphDef would be %zu bytes; "
                            "TensorFlow reads at most 2 GiB", size);
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return bd_error_set(err, BD_ENOMEM, "out of memory encoding the fallback GraphDef "
                            "(%zu bytes)", size);
    pb_ostream_t os = pb_ostream_from_buffer(buf, size);
    if (!pb_encode(&os, tensorflow_GraphDef_fields, &gdef) || os.bytes_written != size) {
        free(buf);
        return bd_error_set(err, BD_EINVAL, "cannot encode the fallback GraphDef: %s", PB_GET_ERROR(&os));
    }
    b->gd->bytes = buf;
    b->gd->len = size;
    return 0;
}

/* ---- the whole build --------------------------------------------------------------------- */

static int build(builder *b, bd_node *const *nodes, size_t n, bd_error *err)
{
    const bd_graph *g = b->g;
    tfb_graphdef *gd = b->gd;
    /* 1. decode every NodeDef; register the model's own names */
    for (size_t i = 0; i < n; i++) {
        const bd_node *node = nodes[i];
        fb_node *fb = &b->fb[b->n_fb];
        fb->node = node;
        if (!node->origin)
            return bd_error_set(err, BD_EMODEL, "node '%s' (op %s) has no TensorFlow NodeDef to "
                                "run in the fallback", node->name, node->op_type);
        pb_callback_t cb = { .funcs.decode = keep_attr, .arg = fb };
        int rc = decode_nodedef(node->origin, node->origin_len, &fb->nd, cb, err, node->name);
        if (rc)
            return rc;
        b->n_fb++;
        size_t nd_inputs = count_data_inputs(&fb->nd);
        if (nd_inputs != node->n_inputs)
            return bd_error_set(err, BD_EMODEL, "node '%s' (op %s): its NodeDef has %zu data "
                                "inputs, the IR node %zu", node->name, node->op_type, nd_inputs,
                                node->n_inputs);
        if (name_taken(b, fb->nd.name))
            return bd_error_set(err, BD_EMODEL, "two fallback nodes are named '%s'", fb->nd.name);
        if ((rc = name_add(b, fb->nd.name, err)))
            return rc;
    }
    /* 1b. the names of the ops a fused depthwise convolution is written as */
    for (size_t i = 0; i < b->n_fb; i++) {
        int rc = plan_unfused(b, &b->fb[i], err);
        if (rc)
            return rc;
    }
    /* 2. name the outputs of fallback nodes */
    for (size_t i = 0; i < b->n_fb; i++) {
        const bd_node *node = b->fb[i].node;
        for (size_t j = 0; j < node->n_outputs; j++) {
            const bd_value *v = node->outputs[j];
            if (!(gd->op_name[v->index] = strdup(b->fb[i].nd.name)))
                return bd_error_set(err, BD_ENOMEM, "out of memory");
            gd->out_index[v->index] = output_index(node, b->fb[i].nd.name, j, v);
            b->producer_of[v->index] = (ssize_t)i;
        }
    }
    compute_frames(b);
    int rc = find_const_anchors(b, err);
    if (rc)
        return rc;
    /* 3. a Const or Placeholder for every other tensor they read */
    for (size_t i = 0; i < b->n_fb; i++) {
        const bd_node *node = b->fb[i].node;
        for (size_t j = 0; j < node->n_inputs; j++) {
            const bd_value *v = node->inputs[j];
            if (!v || gd->op_name[v->index])      /* NULL: a loop's back edge (below) */
                continue;
            int rc = add_generated(b, v, node, err);
            if (rc)
                return rc;
        }
    }
    /* 4. rewrite the input lists, 5. encode */
    for (size_t i = 0; i < b->n_fb; i++) {
        int rc = rewrite_inputs(b, &b->fb[i], err);
        if (rc == 0)
            rc = unfused_inputs(&b->fb[i], err);
        if (rc)
            return rc;
    }
    gd->n_nodes = b->n_fb;
    (void)g;
    return encode(b, err);
}

int tfb_graphdef_build(const bd_graph *g, bd_node *const *nodes, size_t n, int producer,
                       tfb_graphdef *out, bd_error *err)
{
    memset(out, 0, sizeof *out);
    size_t nv = bd_graph_num_values(g);
    builder b = { .g = g, .gd = out, .producer = producer };
    size_t max_inputs = 0;
    for (size_t i = 0; i < n; i++)
        max_inputs += nodes[i]->n_inputs;
    out->n_values  = nv;
    out->op_name   = calloc(nv ? nv : 1, sizeof *out->op_name);
    out->out_index = calloc(nv ? nv : 1, sizeof *out->out_index);
    b.fb  = calloc(n ? n : 1, sizeof *b.fb);
    /* per input at most: a Const or Placeholder, a framed Const copy and a pivot */
    b.gen = calloc(3 * max_inputs + 1, sizeof *b.gen);
    b.framed = calloc(2 * max_inputs + 1, sizeof *b.framed);
    b.producer_of = malloc((nv ? nv : 1) * sizeof *b.producer_of);
    b.in_depth = calloc(n + 1, sizeof *b.in_depth);
    b.out_depth = calloc(n + 1, sizeof *b.out_depth);
    b.const_anchor = calloc(n + 1, sizeof *b.const_anchor);
    for (size_t i = 0; b.producer_of && i < nv; i++)
        b.producer_of[i] = -1;
    int rc = 0;
    if (!out->op_name || !out->out_index || !b.fb || !b.gen || !b.framed || !b.producer_of ||
        !b.in_depth || !b.out_depth || !b.const_anchor || !hcreate_r(2 * (n + 3 * max_inputs) + 16, &b.names))
        rc = bd_error_set(err, BD_ENOMEM, "out of memory building the fallback GraphDef");
    if (rc == 0)
        rc = build(&b, nodes, n, err);
    if (b.names.table)
        hdestroy_r(&b.names);
    for (size_t i = 0; b.fb && i < n; i++) {    /* past n_fb: a NodeDef that failed to decode */
        fb_node *fb = &b.fb[i];
        if (i < b.n_fb)
            pb_release(tensorflow_NodeDef_fields, &fb->nd);
        for (size_t k = 0; k < fb->n_attrs; k++)
            free(fb->attrs[k].key);
        free(fb->attrs);
        for (size_t k = 0; k < fb->n_inputs; k++)
            free(fb->inputs[k]);
        free(fb->inputs);
        for (size_t k = 0; k + 1 < fb->n_unfused; k++)
            free(fb->unfused_name[k]);
        for (size_t k = 0; k < fb->n_unfused; k++)
            free(fb->unfused_in[k]);
    }
    free(b.fb);
    for (size_t i = 0; i < b.n_gen; i++)
        free(b.gen[i].input);
    free(b.gen);
    for (size_t i = 0; i < b.n_framed; i++)
        free(b.framed[i]);
    free(b.framed);
    free(b.producer_of);
    free(b.in_depth);
    free(b.out_depth);
    free(b.const_anchor);
    if (rc)
        tfb_graphdef_free(out);
    return rc;
}

void tfb_graphdef_free(tfb_graphdef *gd)
{
    if (!gd)
        return;
    for (size_t i = 0; gd->op_name && i < gd->n_values; i++)
        free(gd->op_name[i]);
    free(gd->op_name);
    free(gd->out_index);
    free(gd->bytes);
    memset(gd, 0, sizeof *gd);
}
