/* JSON text from outside (REST bodies, config.json, braidd's config file, warm-up samples,
 * TF.js model.json) checked before cJSON parses it: cJSON keeps strings as C strings, so a
 * NUL inside one — the escape \u0000 or a raw 0 byte — would cut it silently ("FP32\u0000junk"
 * read as "FP32"). Such a text is refused instead: no NUL reaches a C string.
 *
 * Pure; any thread. */
#ifndef BD_CORE_JSON_TEXT_H
#define BD_CORE_JSON_TEXT_H

#include <stddef.h>

/* The offset of the first NUL inside a JSON string of TEXT[0..LEN) — a "\u0000" escape or a
 * raw 0 byte — or -1 when there is none. A raw 0 byte outside strings counts too (it ends the
 * text for cJSON). */
long bd_json_find_nul(const char *text, size_t len);

#endif
