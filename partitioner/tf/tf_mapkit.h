/* What the op-family mappers (tf_ops_math.c, tf_ops_array.c, tf_ops_deconv.c) share: reading
 * a TensorFlow node's attributes and constant operands, writing IR attributes, and emitting
 * small constants and nodes named after the node (tf_mapkit.c). Internal to the TensorFlow
 * frontends. Every reader tolerates a missing or mistyped attribute (it returns the default),
 * so a malformed file makes a mapper decline, never crash. */
#ifndef BD_PARTITIONER_TF_TF_MAPKIT_H
#define BD_PARTITIONER_TF_TF_MAPKIT_H

#include "partitioner/tf/tf_emit.h"

#define TF_DECLINE 1           /* a mapper's "send this node to TensorFlow" */
#define TF_MAX_CONST_INTS 64   /* longest constant operand a mapper reads (begin/end, ...) */

/* ---- reading ---------------------------------------------------------------------------- */

bool           tf_a_b(const tf_nodeview *v, const char *key, bool dflt);
int64_t        tf_a_i(const tf_nodeview *v, const char *key, int64_t dflt);
float          tf_a_f(const tf_nodeview *v, const char *key, float dflt);
bool           tf_a_s_is(const tf_nodeview *v, const char *key, const char *want);
/* list(int) attr KEY, or NULL (*N = 0) when absent. */
const int64_t *tf_a_ints(const tf_nodeview *v, const char *key, size_t *n);
/* bd_dtype of type attr KEY; DFLT when absent, BD_DT_UNDEFINED when the IR has none. */
int            tf_a_dtype(const tf_nodeview *v, const char *key, int dflt);

/* The integers of constant operand V (INT32 or INT64, at most MAX); false when V is computed
 * at run time, of another type or longer. */
bool tf_const_ints(const bd_value *v, int64_t *out, size_t max, size_t *n);
/* The same over bytes: NBYTES of DTYPE (BD_DT_INT32/INT64) at DATA, any alignment. */
bool tf_ints_of(int dtype, const void *data, size_t nbytes, int64_t *out, size_t max, size_t *n);
/* Constant operand V as one float (FLOAT, INT32 or INT64 scalar or 1-element); false else. */
bool tf_const_scalar(const bd_value *v, double *out);

/* ---- writing ---------------------------------------------------------------------------- */

int tf_set_int(tf_mapctx *m, bd_node *n, const char *name, int64_t i, bd_error *err);
int tf_set_float(tf_mapctx *m, bd_node *n, const char *name, float f, bd_error *err);
int tf_set_str(tf_mapctx *m, bd_node *n, const char *name, const char *s, bd_error *err);
int tf_set_ints(tf_mapctx *m, bd_node *n, const char *name, const int64_t *v, size_t k,
                bd_error *err);

/* A constant INT64 [K] / a scalar of DTYPE (FLOAT, INT32, INT64, BOOL, UINT8) holding VAL. */
bd_value *tf_k_i64(tf_mapctx *m, const char *suffix, const int64_t *v, size_t k, bd_error *err);
bd_value *tf_k_scalar(tf_mapctx *m, const char *suffix, int dtype, double val, bd_error *err);

/* Emit OP over IN[N_IN] into OUT (a new temp "<node>:<suffix>" when NULL); returns the output
 * value, NULL on error (ERR set). *NODE (may be NULL) receives the node for attributes. */
bd_value *tf_op(tf_mapctx *m, const char *suffix, const char *op, bd_value *const *in,
                size_t n_in, bd_value *out, bd_node **node, bd_error *err);
/* The same for one input, optionally with one INT attribute (ATTR NULL: none). */
bd_value *tf_op1(tf_mapctx *m, const char *suffix, const char *op, bd_value *a, bd_value *out,
                 const char *attr, int64_t ival, bd_error *err);
bd_value *tf_op2(tf_mapctx *m, const char *suffix, const char *op, bd_value *a, bd_value *b,
                 bd_value *out, bd_error *err);
/* Cast A to DTYPE (a bd_dtype). */
bd_value *tf_cast(tf_mapctx *m, const char *suffix, bd_value *a, int dtype, bd_value *out,
                  bd_error *err);

/* The error code to return after a NULL from the emitters above. */
static inline int tf_rc(const bd_error *err) { return err && err->code ? err->code : BD_ENOMEM; }

#endif
