/* Protocol datatype names <-> DLPack types, and DLTensor -> request input. */
#include <stdio.h>
#include <string.h>

#include "client/client_internal.h"

static const struct {
    const char *name;
    uint8_t     code;   /* DLDataTypeCode */
    uint8_t     bits;
} types[] = {
    /* BOOL first among 8-bit unsigned would shadow UINT8 in from_dl: keep UINT8 first.
     * DLPack 0.6 has no bool type; BOOL travels as uint8 (one byte, 0 or 1). */
    { "UINT8", kDLUInt, 8 },   { "UINT16", kDLUInt, 16 }, { "UINT32", kDLUInt, 32 },
    { "UINT64", kDLUInt, 64 }, { "INT8", kDLInt, 8 },     { "INT16", kDLInt, 16 },
    { "INT32", kDLInt, 32 },   { "INT64", kDLInt, 64 },   { "FP16", kDLFloat, 16 },
    { "FP32", kDLFloat, 32 },  { "FP64", kDLFloat, 64 },  { "BF16", kDLBfloat, 16 },
    { "BOOL", kDLUInt, 8 },
};
#define N_TYPES (sizeof types / sizeof types[0])

const char *braid_datatype_from_dl(DLDataType t)
{
    if (t.lanes != 1)
        return NULL;
    for (size_t i = 0; i < N_TYPES; i++)
        if (types[i].code == t.code && types[i].bits == t.bits)
            return types[i].name;
    return NULL;
}

bool braid_datatype_to_dl(const char *datatype, DLDataType *out)
{
    for (size_t i = 0; datatype && i < N_TYPES; i++)
        if (strcmp(types[i].name, datatype) == 0) {
            *out = (DLDataType){ .code = types[i].code, .bits = types[i].bits, .lanes = 1 };
            return true;
        }
    return false;
}

size_t braid_datatype_size(const char *datatype)
{
    DLDataType t;
    return braid_datatype_to_dl(datatype, &t) ? t.bits / 8u : 0;
}

braid_status braid_tensor_from_dl(const char *name, const DLTensor *t, braid_tensor *out,
                                  char *err, size_t errlen)
{
    if (!name || !*name || !t || !out)
        return bc_fail(err, errlen, BRAID_E_ARG, "braid_tensor_from_dl: NAME, T and OUT are required");
    const char *datatype = braid_datatype_from_dl(t->dtype);
    if (!datatype)
        return bc_fail(err, errlen, BRAID_E_ARG,
                       "input '%s': DLPack type (code %u, %u bits, %u lanes) has no protocol datatype",
                       name, t->dtype.code, t->dtype.bits, t->dtype.lanes);
    if (t->device.device_type != kDLCPU)
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': tensor must be in CPU memory (device type %d)",
                       name, (int)t->device.device_type);
    if (t->ndim < 0 || (t->ndim > 0 && !t->shape))
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': bad rank %d", name, t->ndim);
    size_t count = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] < 0)
            return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': dimension %d is negative (%lld)", name, d,
                           (long long)t->shape[d]);
        /* Compact row-major only: a stride equal to the product of the inner dims. */
        if (t->strides && t->shape[d] != 1 && t->strides[d] != (int64_t)count)
            return bc_fail(err, errlen, BRAID_E_ARG,
                           "input '%s': strided tensors are not supported (dim %d stride %lld, expected %zu)",
                           name, d, (long long)t->strides[d], count);
        count *= (size_t)t->shape[d];
    }
    size_t nbytes = count * (t->dtype.bits / 8u);
    if (nbytes && !t->data)
        return bc_fail(err, errlen, BRAID_E_ARG, "input '%s': data is NULL", name);
    *out = (braid_tensor){
        .name = name, .datatype = datatype, .shape = t->shape, .ndim = t->ndim,
        .data = (const char *)t->data + t->byte_offset, .nbytes = nbytes,
    };
    return bc_ok(err, errlen);
}
