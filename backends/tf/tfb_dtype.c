/* The dtype table: one row per type both sides know. */
#include "backends/tf/tfb_dtype.h"

#include <stddef.h>

#include "core/ir/dtype.h"
#include "backends/tf/tf_api.h"

static const struct { int ir, tf; } table[] = {
    { BD_DT_FLOAT,    TF_FLOAT    },
    { BD_DT_DOUBLE,   TF_DOUBLE   },
    { BD_DT_INT32,    TF_INT32    },
    { BD_DT_UINT8,    TF_UINT8    },
    { BD_DT_INT16,    TF_INT16    },
    { BD_DT_INT8,     TF_INT8     },
    { BD_DT_STRING,   TF_STRING   },
    { BD_DT_INT64,    TF_INT64    },
    { BD_DT_BOOL,     TF_BOOL     },
    { BD_DT_BFLOAT16, TF_BFLOAT16 },
    { BD_DT_UINT16,   TF_UINT16   },
    { BD_DT_FLOAT16,  TF_HALF     },
    { BD_DT_UINT32,   TF_UINT32   },
    { BD_DT_UINT64,   TF_UINT64   },
};

int tfb_dtype_from_ir(int dtype)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].ir == dtype)
            return table[i].tf;
    return 0;
}

int tfb_dtype_to_ir(int tf)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].tf == tf)
            return table[i].ir;
    return BD_DT_UNDEFINED;
}
