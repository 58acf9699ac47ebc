/* braid's own declarations of the part of TensorFlow's C API that braid uses.
 *
 * libtensorflow.so.2 is loaded with dlopen (tfb_runtime.h), so nothing here is linked and no
 * TensorFlow header is needed to build braid. The facts below come from TensorFlow's public
 * headers tensorflow/c/c_api.h, tf_tensor.h, tf_status.h, tf_buffer.h and tf_datatype.h
 * (tensorflow/tensorflow); the C API is stable across TensorFlow 2.x releases.
 *
 * BD_TF_FUNCTIONS lists every function braid resolves, as (name, return type, parameters):
 * it generates one function type per entry (tf_fn_TF_SessionRun, ...), the table of
 * pointers in tfb_lib (tfb_runtime.h) and the list of names looked up with dlsym. To use
 * another function, add a line here with its exact signature from the header. */
#ifndef BD_BACKENDS_TF_TF_API_H
#define BD_BACKENDS_TF_TF_API_H

#include <stddef.h>
#include <stdint.h>

/* The file name braid dlopen()s when no explicit path is given. */
#define BD_TF_LIBRARY_NAME "libtensorflow.so.2"

/* ------------------------------------------------------------------------- opaque types */

typedef struct TF_Status                TF_Status;         /* TSL_Status in tf_status.h */
typedef struct TF_Graph                 TF_Graph;
typedef struct TF_Operation             TF_Operation;
typedef struct TF_ImportGraphDefOptions TF_ImportGraphDefOptions;
typedef struct TF_SessionOptions        TF_SessionOptions;
typedef struct TF_Session               TF_Session;
typedef struct TF_Tensor                TF_Tensor;

/* ------------------------------------------------------------------------ plain types */

/* TF_Code (tf_status.h: TSL_Code, an enum, numbered as error_codes.proto); 0 is OK. */
typedef int TF_Code;
#define TF_OK 0

/* TF_DataType (tf_datatype.h; "identical to types.proto"). Only the codes braid maps. */
typedef enum TF_DataType {
    TF_FLOAT    = 1,
    TF_DOUBLE   = 2,
    TF_INT32    = 3,
    TF_UINT8    = 4,
    TF_INT16    = 5,
    TF_INT8     = 6,
    TF_STRING   = 7,
    TF_INT64    = 9,
    TF_BOOL     = 10,
    TF_BFLOAT16 = 14,
    TF_UINT16   = 17,
    TF_HALF     = 19,
    TF_UINT32   = 22,
    TF_UINT64   = 23,
} TF_DataType;

/* tf_buffer.h: a block of bytes (usually a serialized protobuf). */
typedef struct TF_Buffer {
    const void *data;
    size_t      length;
    void      (*data_deallocator)(void *data, size_t length);
} TF_Buffer;

/* c_api.h: output INDEX of operation OPER (a tensor in the graph). */
typedef struct TF_Output {
    TF_Operation *oper;
    int           index;
} TF_Output;

/* TF_NewTensor's deallocator: called when TensorFlow drops its last reference to DATA. */
typedef void tf_deallocator(void *data, size_t len, void *arg);

/* ------------------------------------------------------------------------- functions */

#define BD_TF_FUNCTIONS(X)                                                                    \
    X(TF_Version,            const char *,   (void))                                          \
    X(TF_NewStatus,          TF_Status *,    (void))                                          \
    X(TF_DeleteStatus,       void,           (TF_Status *))                                   \
    X(TF_GetCode,            TF_Code,        (const TF_Status *))                             \
    X(TF_Message,            const char *,   (const TF_Status *))                             \
    X(TF_NewBuffer,          TF_Buffer *,    (void))                                          \
    X(TF_NewBufferFromString, TF_Buffer *,   (const void *proto, size_t proto_len))           \
    X(TF_DeleteBuffer,       void,           (TF_Buffer *))                                   \
    X(TF_NewGraph,           TF_Graph *,     (void))                                          \
    X(TF_DeleteGraph,        void,           (TF_Graph *))                                    \
    X(TF_NewImportGraphDefOptions,    TF_ImportGraphDefOptions *, (void))                     \
    X(TF_DeleteImportGraphDefOptions, void,  (TF_ImportGraphDefOptions *))                    \
    X(TF_ImportGraphDefOptionsSetPrefix, void, (TF_ImportGraphDefOptions *, const char *))    \
    X(TF_GraphImportGraphDef, void,          (TF_Graph *, const TF_Buffer *graph_def,         \
                                              const TF_ImportGraphDefOptions *, TF_Status *)) \
    X(TF_GraphOperationByName, TF_Operation *, (TF_Graph *, const char *oper_name))           \
    X(TF_OperationOutputType, TF_DataType,   (TF_Output oper_out))                            \
    X(TF_NewSessionOptions,  TF_SessionOptions *, (void))                                     \
    X(TF_DeleteSessionOptions, void,         (TF_SessionOptions *))                           \
    X(TF_SetConfig,          void,           (TF_SessionOptions *, const void *proto,         \
                                              size_t proto_len, TF_Status *))                 \
    X(TF_NewSession,         TF_Session *,   (TF_Graph *, const TF_SessionOptions *,          \
                                              TF_Status *))                                   \
    X(TF_CloseSession,       void,           (TF_Session *, TF_Status *))                     \
    X(TF_DeleteSession,      void,           (TF_Session *, TF_Status *))                     \
    X(TF_SessionRun,         void,           (TF_Session *, const TF_Buffer *run_options,     \
                                              const TF_Output *inputs,                        \
                                              TF_Tensor *const *input_values, int ninputs,    \
                                              const TF_Output *outputs,                       \
                                              TF_Tensor **output_values, int noutputs,        \
                                              const TF_Operation *const *target_opers,        \
                                              int ntargets, TF_Buffer *run_metadata,          \
                                              TF_Status *))                                   \
    X(TF_NewTensor,          TF_Tensor *,    (TF_DataType, const int64_t *dims, int num_dims, \
                                              void *data, size_t len,                         \
                                              tf_deallocator *deallocator,                 \
                                              void *deallocator_arg))                         \
    X(TF_DeleteTensor,       void,           (TF_Tensor *))                                   \
    X(TF_TensorType,         TF_DataType,    (const TF_Tensor *))                             \
    X(TF_NumDims,            int,            (const TF_Tensor *))                             \
    X(TF_Dim,                int64_t,        (const TF_Tensor *, int dim_index))              \
    X(TF_TensorByteSize,     size_t,         (const TF_Tensor *))                             \
    X(TF_TensorData,         void *,         (const TF_Tensor *))

/* One function type per entry: tf_fn_TF_NewStatus etc. (a test double declares its
 * definitions with these, so the compiler checks them against braid's declarations). */
#define BD_TF_FN_TYPEDEF(name, ret, params) typedef ret tf_fn_##name params;
BD_TF_FUNCTIONS(BD_TF_FN_TYPEDEF)
#undef BD_TF_FN_TYPEDEF

#endif
