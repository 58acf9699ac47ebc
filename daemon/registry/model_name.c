/* What a model may be called (model_name.h). */
#include <string.h>

#include "daemon/registry/model_name.h"

int model_name_check(const char *name, bd_error *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 128)
        return bd_error_set(err, BD_EINVAL, "model name '%s': expected 1 to 128 characters", name ? name : "");
    if (name[0] == '.')
        return bd_error_set(err, BD_EINVAL, "model name '%s': must not start with '.'", name);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return bd_error_set(err, BD_EINVAL,
                                "model name '%s': only letters, digits, '_', '.' and '-' are allowed", name);
    }
    return 0;
}
