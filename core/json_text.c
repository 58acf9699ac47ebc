/* NULs in JSON strings (json_text.h). */
#include "core/json_text.h"

#include <stdbool.h>

long bd_json_find_nul(const char *text, size_t len)
{
    bool in_str = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '\0')
            return (long)i;
        if (!in_str) {
            in_str = ch == '"';
            continue;
        }
        if (ch == '"') {
            in_str = false;
        } else if (ch == '\\' && i + 1 < len) {
            /* \u0000 in any case of hex digits; any other escape is skipped whole */
            if (text[i + 1] == 'u' && i + 5 < len && text[i + 2] == '0' && text[i + 3] == '0' &&
                text[i + 4] == '0' && text[i + 5] == '0')
                return (long)i;
            i++;
        }
    }
    return -1;
}
