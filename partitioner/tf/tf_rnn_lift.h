/* Keras's recurrent layers lifted out of TensorFlow while loops (tf_rnn_lift.c). */
#ifndef BD_PARTITIONER_TF_TF_RNN_LIFT_H
#define BD_PARTITIONER_TF_TF_RNN_LIFT_H

#include "partitioner/tf/tf_emit.h"
#include "partitioner/tf/tf_internal.h"

/* The node index REF ("x", "x:1") names, -1 if none; *PORT its port. */
typedef long (*tf_lookup_fn)(void *ctx, const char *ref, int *port);

/* A Keras GRU or LSTM loop that one ONNX GRU or LSTM computes. */
typedef struct tf_rnn_lift {
    size_t      stack;        /* the TensorListStack reading the loop's outputs */
    bool        lstm;         /* an LSTM (else a GRU) */
    const char *x;            /* refs: the sequence [T, B, I] the loop reads step by step, */
    const char *kernel;       /*   W [I, G*H], U [H, G*H] (G gates: GRU 3, LSTM 4), the bias */
    const char *recurrent;    /*   (GRU [2, 3H]: input, recurrent; LSTM [4H]), all Consts, */
    const char *bias;
    const char *h0;           /*   the initial state [B, H] */
    const char *c0;           /*   and an LSTM's initial cell state [B, H] */
    int64_t     units;        /* H */
    int64_t     steps;        /* the loop's trip count */
    bool        sequences;    /* the stack holds every step's h [steps, B, H], else the last
                               * one [1, B, H] (Keras's return_sequences=False) */
} tf_rnn_lift;

/* The Keras GRU and LSTM loops among NODES, one per TensorListStack that reads one, into *OUT
 * (malloc'd, *N_OUT entries; NULL when none). BD_ENOMEM is the only error. */
int tf_find_keras_rnns(const tf_nodeview *nodes, size_t n, tf_lookup_fn lookup, void *ctx,
                      tf_rnn_lift **out, size_t *n_out, bd_error *err);

/* The op name the lifted TensorListStack's view gets; its inputs are LIFT's refs x, kernel,
 * recurrent, bias, h0 (and c0 for an LSTM). */
#define TF_KERAS_RNN_OP "_BraidKerasRNN"

/* Emit LIFT's computation into M (m->in: the inputs resolved, m->out the stack's value):
 * Slice to the trip count, the weights transposed into ONNX's layout (an LSTM's gates
 * reordered from Keras's i f c o to ONNX's i o f c), GRU or LSTM, and the stack's shape. 0,
 * or an error (only BD_ENOMEM or a weight that is not what the match saw). */
int tf_emit_keras_rnn(tf_mapctx *m, const tf_rnn_lift *lift, bd_error *err);

#endif
