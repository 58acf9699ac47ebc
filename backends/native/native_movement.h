/* The native engine's data-movement family, internal to backends/native/: the ops that live in
 * their own files (native_concat.c, native_tile.c, native_pad.c), which native_movement.c's op
 * table lists, and the helpers the family and native_generate.c share. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_MOVEMENT_H
#define BD_BACKENDS_NATIVE_NATIVE_MOVEMENT_H

#include "backends/native/native_internal.h"

/* ---- helpers (native_movement.c, native_tile.c) ------------------------------------------- */

/* N has input 0 and one output, both static, of one dtype of NV_DT_ANY. */
bool    nv_move_io_ok(const bd_node *n, char *why, size_t len);
/* The integer tensor T (INT32 or INT64, a run-time input) into OUT[max]: the count, or a
 * negative BD_EINVAL naming WHAT when T is not one or holds more than MAX values. */
int64_t nv_run_ints(const nv_tensor *t, int64_t *out, size_t max, const char *what,
                    bd_error *err);
/* 0 when DIMS (T's rank of them, computed from run-time inputs) are T's planned dims, else
 * BD_EINVAL naming OP and both shapes. */
int     nv_dims_match(const nv_tensor *t, const int64_t *dims, const char *op, bd_error *err);
/* DST holds one UNIT-byte pattern: repeat it until DST holds COUNT of them (memcpy doubling). */
void    nv_replicate(void *dst, size_t unit, size_t count);

/* ---- ops in their own files --------------------------------------------------------------- */

bool nv_concat_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_concat_prepare(const bd_node *n, nv_step *s, bd_error *err);
bool nv_split_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_split_prepare(const bd_node *n, nv_step *s, bd_error *err);
bool nv_expand_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
bool nv_tile_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_tile_prepare(const bd_node *n, nv_step *s, bd_error *err);   /* Expand and Tile */
bool nv_pad_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_pad_prepare(const bd_node *n, nv_step *s, bd_error *err);
bool nv_trilu_supports(const bd_graph *g, const bd_node *n, char *why, size_t len);
int  nv_trilu_prepare(const bd_node *n, nv_step *s, bd_error *err);

#endif
