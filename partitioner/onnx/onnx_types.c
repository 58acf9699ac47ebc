/* ONNX element types and TypeProto -> the IR's dtype and shape (symbolic dims kept). */
#include "partitioner/onnx/onnx_internal.h"

#include <inttypes.h>

int ox_check_dtype(const char *name, int64_t dtype, bool allow_undefined, bd_error *err)
{
    switch (dtype) {
    case BD_DT_UNDEFINED:
        if (allow_undefined)
            return 0;
        return bd_error_set(err, BD_EMODEL, "tensor '%s' has no data type", name);
    case 14: case 15:   /* COMPLEX64, COMPLEX128 */
        return bd_error_set(err, BD_EUNSUPPORTED, "'%s': complex tensors are not supported", name);
    default:
        if (dtype == BD_DT_STRING || bd_dtype_size((int)dtype) > 0)
            return 0;
        return bd_error_set(err, BD_EMODEL, "'%s' has unknown element type %" PRId64, name, dtype);
    }
}

int ox_type_load(ox_ctx *c, const char *name, const onnx_TypeProto *type, int *dtype,
                 bd_shape *shape, bd_error *err)
{
    if (type->which_value != onnx_TypeProto_tensor_type_tag)
        return bd_error_set(err, BD_EUNSUPPORTED, "value '%s' is not a tensor (sequence, map, "
                            "optional and sparse types are not supported)", name);
    const onnx_TypeProto_Tensor *t = &type->value.tensor_type;
    int64_t dt = t->has_elem_type ? t->elem_type : BD_DT_UNDEFINED;
    int rc = ox_check_dtype(name, dt, true, err);
    if (rc)
        return rc;
    *dtype = (int)dt;
    bd_shape s = { .rank = -1 };
    if (t->has_shape) {
        if (t->shape.dim_count > BD_MAX_RANK)
            return bd_error_set(err, BD_EMODEL, "value '%s': rank %u exceeds braid's maximum of %d",
                                name, (unsigned)t->shape.dim_count, BD_MAX_RANK);
        s.rank = (int)t->shape.dim_count;
        for (int i = 0; i < s.rank; i++) {
            const onnx_TensorShapeProto_Dimension *d = &t->shape.dim[i];
            s.dims[i] = -1;   /* a dim with neither value nor name is unknown */
            if (d->which_value == onnx_TensorShapeProto_Dimension_dim_value_tag) {
                /* Some exporters write -1 for "unknown"; anything lower is nonsense. */
                if (d->value.dim_value < -1)
                    return bd_error_set(err, BD_EMODEL, "value '%s': dim %d is negative (%" PRId64 ")",
                                        name, i, d->value.dim_value);
                s.dims[i] = d->value.dim_value;
            } else if (d->which_value == onnx_TensorShapeProto_Dimension_dim_param_tag &&
                       d->value.dim_param && *d->value.dim_param) {
                s.sym[i] = bd_graph_strdup(c->g, d->value.dim_param, (size_t)-1);
                if (!s.sym[i])
                    return bd_error_set(err, BD_ENOMEM, "out of memory");
            }
        }
    }
    *shape = s;
    return 0;
}
