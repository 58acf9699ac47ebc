/* The native engine's data-movement family, internal to backends/native/: the ops that live in
 * their own files (native_concat.c, native_tile.c, native_pad.c), which native_movement.c's op
 * table lists, and the helper the family shares. */
#ifndef BD_BACKENDS_NATIVE_NATIVE_MOVEMENT_H
#define BD_BACKENDS_NATIVE_NATIVE_MOVEMENT_H

#include "backends/native/native_internal.h"

/* ---- helpers (native_movement.c) ---------------------------------------------------------- */

/* N has input 0, static, and one output of its dtype (one of NV_DT_ANY), static unless
 * RUNTIME_OUT (then its shape may be known only at run time: nv_output_ok). */
bool    nv_move_io_ok(const bd_node *n, bool runtime_out, char *why, size_t len);

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
