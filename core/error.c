#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int bd_error_set(bd_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

int bd_error_prefix(bd_error *err, const char *fmt, ...)
{
    if (!err || err->code == 0)
        return 0;
    char prefix[BD_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (n < 0)
        return err->code;
    size_t plen = (size_t)n < sizeof err->msg - 1 ? (size_t)n : sizeof err->msg - 1;
    size_t olen = strlen(err->msg);
    if (olen > sizeof err->msg - 1 - plen)
        olen = sizeof err->msg - 1 - plen;
    memmove(err->msg + plen, err->msg, olen);
    memcpy(err->msg, prefix, plen);
    err->msg[plen + olen] = '\0';
    return err->code;
}

void bd_error_clear(bd_error *err)
{
    if (!err)
        return;
    err->code = 0;
    err->msg[0] = '\0';
}

const char *bd_status_name(int code)
{
    switch (code) {
    case BD_OK:           return "OK";
    case BD_EINVAL:       return "EINVAL";
    case BD_EMODEL:       return "EMODEL";
    case BD_EUNSUPPORTED: return "EUNSUPPORTED";
    case BD_ENOMEM:       return "ENOMEM";
    case BD_EIO:          return "EIO";
    case BD_EBACKEND:     return "EBACKEND";
    case BD_ENOTFOUND:    return "ENOTFOUND";
    case BD_EBUSY:        return "EBUSY";
    case BD_ETIMEDOUT:    return "ETIMEDOUT";
    case BD_ECANCELLED:   return "ECANCELLED";
    case BD_EUNAVAIL:     return "EUNAVAIL";
    case BD_EEXIST:       return "EEXIST";
    default:              return "EUNKNOWN";
    }
}
