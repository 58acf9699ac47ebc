/* braid's own declarations of the part of ONNX Runtime's C API that braid uses.
 *
 * libonnxruntime.so.1 (scripts/fetch_ort.sh) ships without a header, and braid loads it with
 * dlopen, so nothing here is linked: the library exports one symbol, OrtGetApiBase, whose
 * GetApi(ORT_API_VERSION) returns a table of function pointers. ORT only ever appends to
 * that table, so its leading entries sit at the same positions in every release: the
 * OrtApi struct below declares ORT's entries in ORT's order, up to the last one braid
 * calls, and the rest of ORT's (much longer) table is simply never touched.
 *
 * Rules for editing this file:
 *   - an entry braid does not call is still declared (with its real signature where it is
 *     short, otherwise as an opaque `ort_unused_fn`), because every slot counts;
 *   - to use a later entry, declare every slot up to it, in ORT's order, from the public
 *     header include/onnxruntime/core/session/onnxruntime_c_api.h (microsoft/onnxruntime);
 *   - the index of every tenth slot is noted in a comment, to make a check against that
 *     header quick.
 *
 * Conventions of the API (from ORT's documentation): every function returning OrtStatus*
 * returns NULL on success, or a status the caller frees with ReleaseStatus; every Release*
 * accepts NULL; strings returned through an OrtAllocator are freed with AllocatorFree. */
#ifndef BD_BACKENDS_ORT_ORT_API_H
#define BD_BACKENDS_ORT_ORT_API_H

#include <stddef.h>
#include <stdint.h>

/* The API version of ONNX Runtime 1.30 (GetApi accepts 1..30 there). Everything declared
 * here exists since API version 12 (ORT 1.12): asking for 12 would accept older libraries. */
#define ORT_API_VERSION 30

/* The file name braid dlopen()s when no explicit path is given. */
#define BD_ORT_LIBRARY_NAME "libonnxruntime.so.1"

/* ------------------------------------------------------------------------------ enums */

typedef enum ONNXTensorElementDataType {    /* same numbering as ONNX TensorProto.DataType */
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED  = 0,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT      = 1,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8      = 2,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8       = 3,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16     = 4,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16      = 5,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32      = 6,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64      = 7,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING     = 8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL       = 9,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16    = 10,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE     = 11,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32     = 12,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64     = 13,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64  = 14,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16   = 16,
} ONNXTensorElementDataType;

typedef enum ONNXType {
    ONNX_TYPE_UNKNOWN      = 0,
    ONNX_TYPE_TENSOR       = 1,
    ONNX_TYPE_SEQUENCE     = 2,
    ONNX_TYPE_MAP          = 3,
    ONNX_TYPE_OPAQUE       = 4,
    ONNX_TYPE_SPARSETENSOR = 5,
    ONNX_TYPE_OPTIONAL     = 6,
} ONNXType;

typedef enum OrtLoggingLevel {
    ORT_LOGGING_LEVEL_VERBOSE = 0,
    ORT_LOGGING_LEVEL_INFO    = 1,
    ORT_LOGGING_LEVEL_WARNING = 2,
    ORT_LOGGING_LEVEL_ERROR   = 3,
    ORT_LOGGING_LEVEL_FATAL   = 4,
} OrtLoggingLevel;

typedef enum OrtErrorCode {
    ORT_OK                = 0,
    ORT_FAIL              = 1,
    ORT_INVALID_ARGUMENT  = 2,
    ORT_NO_SUCHFILE       = 3,
    ORT_NO_MODEL          = 4,
    ORT_ENGINE_ERROR      = 5,
    ORT_RUNTIME_EXCEPTION = 6,
    ORT_INVALID_PROTOBUF  = 7,
    ORT_MODEL_LOADED      = 8,
    ORT_NOT_IMPLEMENTED   = 9,
    ORT_INVALID_GRAPH     = 10,
    ORT_EP_FAIL           = 11,
} OrtErrorCode;

typedef enum GraphOptimizationLevel {
    ORT_DISABLE_ALL     = 0,
    ORT_ENABLE_BASIC    = 1,
    ORT_ENABLE_EXTENDED = 2,
    ORT_ENABLE_ALL      = 99,
} GraphOptimizationLevel;

typedef enum ExecutionMode {
    ORT_SEQUENTIAL = 0,
    ORT_PARALLEL   = 1,
} ExecutionMode;

typedef enum OrtAllocatorType {
    OrtInvalidAllocator = -1,
    OrtDeviceAllocator  = 0,
    OrtArenaAllocator   = 1,
} OrtAllocatorType;

typedef enum OrtMemType {
    OrtMemTypeCPUInput  = -2,   /* CPU memory used by a non-CPU execution provider */
    OrtMemTypeCPUOutput = -1,   /* CPU-accessible memory written by a non-CPU provider */
    OrtMemTypeCPU       = -1,
    OrtMemTypeDefault   = 0,    /* the provider's default allocator (plain CPU memory here) */
} OrtMemType;

/* ----------------------------------------------------------------------- opaque objects */

typedef struct OrtEnv                    OrtEnv;
typedef struct OrtStatus                 OrtStatus;      /* NULL means success */
typedef struct OrtMemoryInfo             OrtMemoryInfo;
typedef struct OrtIoBinding              OrtIoBinding;
typedef struct OrtSession                OrtSession;
typedef struct OrtValue                  OrtValue;
typedef struct OrtRunOptions             OrtRunOptions;
typedef struct OrtTypeInfo               OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtSessionOptions         OrtSessionOptions;
typedef struct OrtCustomOpDomain         OrtCustomOpDomain;
typedef struct OrtMapTypeInfo            OrtMapTypeInfo;
typedef struct OrtSequenceTypeInfo       OrtSequenceTypeInfo;
typedef struct OrtModelMetadata          OrtModelMetadata;
typedef struct OrtThreadingOptions       OrtThreadingOptions;

/* An allocator is a small struct of callbacks (ORT's default one comes from
 * GetAllocatorWithDefaultOptions and is never freed by the caller). */
typedef struct OrtAllocator {
    uint32_t version;
    void *(*Alloc)(struct OrtAllocator *self, size_t size);
    void  (*Free)(struct OrtAllocator *self, void *p);
    const OrtMemoryInfo *(*Info)(const struct OrtAllocator *self);
} OrtAllocator;

/* A table slot braid never calls: only its size matters. */
typedef void (*ort_unused_fn)(void);

/* ------------------------------------------------------------------------ the tables */

typedef struct OrtApi OrtApi;

typedef struct OrtApiBase {
    /* The table for VERSION, or NULL if this library is older than VERSION. */
    const OrtApi *(*GetApi)(uint32_t version);
    /* The library's version, e.g. "1.30.0" (static storage). */
    const char   *(*GetVersionString)(void);
} OrtApiBase;

/* The only symbol the library exports; look it up with dlsym(handle, "OrtGetApiBase"). */
typedef const OrtApiBase *(*OrtGetApiBaseFn)(void);

struct OrtApi {
    /* [0] status */
    OrtStatus   *(*CreateStatus)(OrtErrorCode code, const char *msg);
    OrtErrorCode (*GetErrorCode)(const OrtStatus *status);
    const char  *(*GetErrorMessage)(const OrtStatus *status);   /* owned by STATUS */

    /* [3] environment */
    OrtStatus *(*CreateEnv)(OrtLoggingLevel level, const char *logid, OrtEnv **out);
    ort_unused_fn CreateEnvWithCustomLogger;
    OrtStatus *(*EnableTelemetryEvents)(const OrtEnv *env);
    OrtStatus *(*DisableTelemetryEvents)(const OrtEnv *env);

    /* [7] sessions */
    OrtStatus *(*CreateSession)(const OrtEnv *env, const char *model_path,
                                const OrtSessionOptions *options, OrtSession **out);
    OrtStatus *(*CreateSessionFromArray)(const OrtEnv *env, const void *model_data, size_t model_data_len,
                                         const OrtSessionOptions *options, OrtSession **out);
    /* OUTPUTS[i] may be NULL (ORT allocates the value) or a preallocated tensor value. */
    OrtStatus *(*Run)(OrtSession *session, const OrtRunOptions *run_options,
                      const char *const *input_names, const OrtValue *const *inputs, size_t n_inputs,
                      const char *const *output_names, size_t n_outputs, OrtValue **outputs);

    /* [10] session options */
    OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **out);
    OrtStatus *(*SetOptimizedModelFilePath)(OrtSessionOptions *options, const char *path);
    OrtStatus *(*CloneSessionOptions)(const OrtSessionOptions *in, OrtSessionOptions **out);
    OrtStatus *(*SetSessionExecutionMode)(OrtSessionOptions *options, ExecutionMode mode);
    OrtStatus *(*EnableProfiling)(OrtSessionOptions *options, const char *profile_file_prefix);
    OrtStatus *(*DisableProfiling)(OrtSessionOptions *options);
    OrtStatus *(*EnableMemPattern)(OrtSessionOptions *options);
    OrtStatus *(*DisableMemPattern)(OrtSessionOptions *options);
    OrtStatus *(*EnableCpuMemArena)(OrtSessionOptions *options);
    OrtStatus *(*DisableCpuMemArena)(OrtSessionOptions *options);
    /* [20] */
    OrtStatus *(*SetSessionLogId)(OrtSessionOptions *options, const char *logid);
    OrtStatus *(*SetSessionLogVerbosityLevel)(OrtSessionOptions *options, int level);
    OrtStatus *(*SetSessionLogSeverityLevel)(OrtSessionOptions *options, int level);
    OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *options, GraphOptimizationLevel level);
    OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *options, int n);   /* 0 = default */
    OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *options, int n);

    /* [26] custom operators */
    ort_unused_fn CreateCustomOpDomain;
    ort_unused_fn CustomOpDomain_Add;
    ort_unused_fn AddCustomOpDomain;
    ort_unused_fn RegisterCustomOpsLibrary;

    /* [30] session signature; names are allocated with ALLOCATOR (free with AllocatorFree) */
    OrtStatus *(*SessionGetInputCount)(const OrtSession *session, size_t *out);
    OrtStatus *(*SessionGetOutputCount)(const OrtSession *session, size_t *out);
    OrtStatus *(*SessionGetOverridableInitializerCount)(const OrtSession *session, size_t *out);
    OrtStatus *(*SessionGetInputTypeInfo)(const OrtSession *session, size_t index, OrtTypeInfo **out);
    OrtStatus *(*SessionGetOutputTypeInfo)(const OrtSession *session, size_t index, OrtTypeInfo **out);
    OrtStatus *(*SessionGetOverridableInitializerTypeInfo)(const OrtSession *session, size_t index,
                                                           OrtTypeInfo **out);
    OrtStatus *(*SessionGetInputName)(const OrtSession *session, size_t index, OrtAllocator *allocator,
                                      char **out);
    OrtStatus *(*SessionGetOutputName)(const OrtSession *session, size_t index, OrtAllocator *allocator,
                                       char **out);
    OrtStatus *(*SessionGetOverridableInitializerName)(const OrtSession *session, size_t index,
                                                       OrtAllocator *allocator, char **out);

    /* [39] run options */
    OrtStatus *(*CreateRunOptions)(OrtRunOptions **out);
    /* [40] */
    OrtStatus *(*RunOptionsSetRunLogVerbosityLevel)(OrtRunOptions *options, int level);
    OrtStatus *(*RunOptionsSetRunLogSeverityLevel)(OrtRunOptions *options, int level);
    OrtStatus *(*RunOptionsSetRunTag)(OrtRunOptions *options, const char *tag);
    OrtStatus *(*RunOptionsGetRunLogVerbosityLevel)(const OrtRunOptions *options, int *out);
    OrtStatus *(*RunOptionsGetRunLogSeverityLevel)(const OrtRunOptions *options, int *out);
    OrtStatus *(*RunOptionsGetRunTag)(const OrtRunOptions *options, const char **out);
    OrtStatus *(*RunOptionsSetTerminate)(OrtRunOptions *options);
    OrtStatus *(*RunOptionsUnsetTerminate)(OrtRunOptions *options);

    /* [48] values */
    OrtStatus *(*CreateTensorAsOrtValue)(OrtAllocator *allocator, const int64_t *shape, size_t rank,
                                         ONNXTensorElementDataType type, OrtValue **out);
    /* The value borrows DATA (DATA_LEN bytes); ReleaseValue does not free it. */
    OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *data, size_t data_len,
                                                 const int64_t *shape, size_t rank,
                                                 ONNXTensorElementDataType type, OrtValue **out);
    /* [50] */
    OrtStatus *(*IsTensor)(const OrtValue *value, int *out);
    OrtStatus *(*GetTensorMutableData)(OrtValue *value, void **out);   /* valid while VALUE lives */
    ort_unused_fn FillStringTensor;
    ort_unused_fn GetStringTensorDataLength;
    ort_unused_fn GetStringTensorContent;

    /* [55] type information; the cast result is owned by TYPE_INFO */
    OrtStatus *(*CastTypeInfoToTensorInfo)(const OrtTypeInfo *type_info,
                                           const OrtTensorTypeAndShapeInfo **out);
    OrtStatus *(*GetOnnxTypeFromTypeInfo)(const OrtTypeInfo *type_info, ONNXType *out);
    OrtStatus *(*CreateTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo **out);
    OrtStatus *(*SetTensorElementType)(OrtTensorTypeAndShapeInfo *info, ONNXTensorElementDataType type);
    OrtStatus *(*SetDimensions)(OrtTensorTypeAndShapeInfo *info, const int64_t *dims, size_t rank);
    /* [60] */
    OrtStatus *(*GetTensorElementType)(const OrtTensorTypeAndShapeInfo *info, ONNXTensorElementDataType *out);
    OrtStatus *(*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
    /* Dynamic dimensions come back as -1. */
    OrtStatus *(*GetDimensions)(const OrtTensorTypeAndShapeInfo *info, int64_t *dims, size_t rank);
    OrtStatus *(*GetSymbolicDimensions)(const OrtTensorTypeAndShapeInfo *info, const char *names[],
                                        size_t rank);
    OrtStatus *(*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
    /* OUT is new: free with ReleaseTensorTypeAndShapeInfo. */
    OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *value, OrtTensorTypeAndShapeInfo **out);
    OrtStatus *(*GetTypeInfo)(const OrtValue *value, OrtTypeInfo **out);
    OrtStatus *(*GetValueType)(const OrtValue *value, ONNXType *out);

    /* [68] memory information and allocators */
    OrtStatus *(*CreateMemoryInfo)(const char *name, OrtAllocatorType type, int id, OrtMemType mem_type,
                                   OrtMemoryInfo **out);
    OrtStatus *(*CreateCpuMemoryInfo)(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo **out);
    /* [70] */
    OrtStatus *(*CompareMemoryInfo)(const OrtMemoryInfo *a, const OrtMemoryInfo *b, int *out);
    OrtStatus *(*MemoryInfoGetName)(const OrtMemoryInfo *info, const char **out);
    OrtStatus *(*MemoryInfoGetId)(const OrtMemoryInfo *info, int *out);
    OrtStatus *(*MemoryInfoGetMemType)(const OrtMemoryInfo *info, OrtMemType *out);
    OrtStatus *(*MemoryInfoGetType)(const OrtMemoryInfo *info, OrtAllocatorType *out);
    OrtStatus *(*AllocatorAlloc)(OrtAllocator *allocator, size_t size, void **out);
    OrtStatus *(*AllocatorFree)(OrtAllocator *allocator, void *p);
    OrtStatus *(*AllocatorGetInfo)(const OrtAllocator *allocator, const OrtMemoryInfo **out);
    /* A process-wide CPU allocator; never freed by the caller. */
    OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **out);

    /* [79] */
    OrtStatus *(*AddFreeDimensionOverride)(OrtSessionOptions *options, const char *denotation, int64_t value);

    /* [80] maps, sequences, opaque values, custom-op kernels */
    ort_unused_fn GetValue;
    ort_unused_fn GetValueCount;
    ort_unused_fn CreateValue;
    ort_unused_fn CreateOpaqueValue;
    ort_unused_fn GetOpaqueValue;
    ort_unused_fn KernelInfoGetAttribute_float;
    ort_unused_fn KernelInfoGetAttribute_int64;
    ort_unused_fn KernelInfoGetAttribute_string;
    ort_unused_fn KernelContext_GetInputCount;
    ort_unused_fn KernelContext_GetOutputCount;
    /* [90] */
    ort_unused_fn KernelContext_GetInput;
    ort_unused_fn KernelContext_GetOutput;

    /* [92] release functions (all accept NULL) */
    void (*ReleaseEnv)(OrtEnv *p);
    void (*ReleaseStatus)(OrtStatus *p);
    void (*ReleaseMemoryInfo)(OrtMemoryInfo *p);
    void (*ReleaseSession)(OrtSession *p);
    void (*ReleaseValue)(OrtValue *p);
    void (*ReleaseRunOptions)(OrtRunOptions *p);
    void (*ReleaseTypeInfo)(OrtTypeInfo *p);
    void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo *p);
    /* [100] */
    void (*ReleaseSessionOptions)(OrtSessionOptions *p);
    void (*ReleaseCustomOpDomain)(OrtCustomOpDomain *p);

    /* [102] map/sequence type information */
    ort_unused_fn GetDenotationFromTypeInfo;
    ort_unused_fn CastTypeInfoToMapTypeInfo;
    ort_unused_fn CastTypeInfoToSequenceTypeInfo;
    ort_unused_fn GetMapKeyType;
    ort_unused_fn GetMapValueType;
    ort_unused_fn GetSequenceElementType;
    void (*ReleaseMapTypeInfo)(OrtMapTypeInfo *p);
    void (*ReleaseSequenceTypeInfo)(OrtSequenceTypeInfo *p);

    /* [110] profiling and model metadata */
    OrtStatus *(*SessionEndProfiling)(OrtSession *session, OrtAllocator *allocator, char **out);
    OrtStatus *(*SessionGetModelMetadata)(const OrtSession *session, OrtModelMetadata **out);
    ort_unused_fn ModelMetadataGetProducerName;
    ort_unused_fn ModelMetadataGetGraphName;
    ort_unused_fn ModelMetadataGetDomain;
    ort_unused_fn ModelMetadataGetDescription;
    ort_unused_fn ModelMetadataLookupCustomMetadataMap;
    ort_unused_fn ModelMetadataGetVersion;
    void (*ReleaseModelMetadata)(OrtModelMetadata *p);

    /* [119] global thread pools */
    ort_unused_fn CreateEnvWithGlobalThreadPools;
    /* [120] */
    OrtStatus *(*DisablePerSessionThreads)(OrtSessionOptions *options);
    OrtStatus *(*CreateThreadingOptions)(OrtThreadingOptions **out);
    void (*ReleaseThreadingOptions)(OrtThreadingOptions *p);

    /* [123] */
    ort_unused_fn ModelMetadataGetCustomMetadataMapKeys;
    OrtStatus *(*AddFreeDimensionOverrideByName)(OrtSessionOptions *options, const char *dim_name,
                                                 int64_t value);
    ort_unused_fn GetAvailableProviders;
    ort_unused_fn ReleaseAvailableProviders;
    ort_unused_fn GetStringTensorElementLength;
    ort_unused_fn GetStringTensorElement;
    ort_unused_fn FillStringTensorElement;

    /* [130] session configuration entries ("session.intra_op.allow_spinning" = "0", ...) */
    OrtStatus *(*AddSessionConfigEntry)(OrtSessionOptions *options, const char *key, const char *value);

    /* [131] session allocators */
    ort_unused_fn CreateAllocator;
    ort_unused_fn ReleaseAllocator;

    /* [133] I/O binding: bind preallocated values once, then run many times */
    OrtStatus *(*RunWithBinding)(OrtSession *session, const OrtRunOptions *run_options,
                                 const OrtIoBinding *binding);
    OrtStatus *(*CreateIoBinding)(OrtSession *session, OrtIoBinding **out);
    void (*ReleaseIoBinding)(OrtIoBinding *p);
    OrtStatus *(*BindInput)(OrtIoBinding *binding, const char *name, const OrtValue *value);
    OrtStatus *(*BindOutput)(OrtIoBinding *binding, const char *name, const OrtValue *value);
    OrtStatus *(*BindOutputToDevice)(OrtIoBinding *binding, const char *name, const OrtMemoryInfo *info);
    ort_unused_fn GetBoundOutputNames;
    /* [140] */
    ort_unused_fn GetBoundOutputValues;
    void (*ClearBoundInputs)(OrtIoBinding *binding);
    void (*ClearBoundOutputs)(OrtIoBinding *binding);

    /* [143] assorted entries of API versions 4..11 */
    ort_unused_fn TensorAt;
    ort_unused_fn CreateAndRegisterAllocator;
    ort_unused_fn SetLanguageProjection;
    ort_unused_fn SessionGetProfilingStartTimeNs;
    ort_unused_fn SetGlobalIntraOpNumThreads;
    ort_unused_fn SetGlobalInterOpNumThreads;
    ort_unused_fn SetGlobalSpinControl;
    /* [150] */
    /* The session uses VALUE (which must outlive it) for the model's initializer NAME. */
    OrtStatus *(*AddInitializer)(OrtSessionOptions *options, const char *name, const OrtValue *value);
    ort_unused_fn CreateEnvWithCustomLoggerAndGlobalThreadPools;
    ort_unused_fn SessionOptionsAppendExecutionProvider_CUDA;
    ort_unused_fn SessionOptionsAppendExecutionProvider_ROCM;
    ort_unused_fn SessionOptionsAppendExecutionProvider_OpenVINO;
    ort_unused_fn SetGlobalDenormalAsZero;
    ort_unused_fn CreateArenaCfg;
    ort_unused_fn ReleaseArenaCfg;
    ort_unused_fn ModelMetadataGetGraphDescription;
    ort_unused_fn SessionOptionsAppendExecutionProvider_TensorRT;
    /* [160] */
    ort_unused_fn SetCurrentGpuDeviceId;
    ort_unused_fn GetCurrentGpuDeviceId;
    ort_unused_fn KernelInfoGetAttributeArray_float;
    ort_unused_fn KernelInfoGetAttributeArray_int64;
    ort_unused_fn CreateArenaCfgV2;
    OrtStatus *(*AddRunConfigEntry)(OrtRunOptions *options, const char *key, const char *value);
    ort_unused_fn CreatePrepackedWeightsContainer;
    ort_unused_fn ReleasePrepackedWeightsContainer;
    ort_unused_fn CreateSessionWithPrepackedWeightsContainer;
    ort_unused_fn CreateSessionFromArrayWithPrepackedWeightsContainer;
    /* [170] */
    ort_unused_fn SessionOptionsAppendExecutionProvider_TensorRT_V2;
    ort_unused_fn CreateTensorRTProviderOptions;
    ort_unused_fn UpdateTensorRTProviderOptions;
    ort_unused_fn GetTensorRTProviderOptionsAsString;
    ort_unused_fn ReleaseTensorRTProviderOptions;
    ort_unused_fn EnableOrtCustomOps;
    ort_unused_fn RegisterAllocator;
    ort_unused_fn UnregisterAllocator;
    ort_unused_fn IsSparseTensor;
    ort_unused_fn CreateSparseTensorAsOrtValue;
    /* [180] */
    ort_unused_fn FillSparseTensorCoo;
    ort_unused_fn FillSparseTensorCsr;
    ort_unused_fn FillSparseTensorBlockSparse;
    ort_unused_fn CreateSparseTensorWithValuesAsOrtValue;
    ort_unused_fn UseCooIndices;
    ort_unused_fn UseCsrIndices;
    ort_unused_fn UseBlockSparseIndices;
    ort_unused_fn GetSparseTensorFormat;
    ort_unused_fn GetSparseTensorValuesTypeAndShape;
    ort_unused_fn GetSparseTensorValues;
    /* [190] */
    ort_unused_fn GetSparseTensorIndicesTypeShape;
    ort_unused_fn GetSparseTensorIndices;
    ort_unused_fn HasValue;
    ort_unused_fn KernelContext_GetGPUComputeStream;
    OrtStatus *(*GetTensorMemoryInfo)(const OrtValue *value, const OrtMemoryInfo **out);
    ort_unused_fn GetExecutionProviderApi;
    ort_unused_fn SessionOptionsSetCustomCreateThreadFn;
    ort_unused_fn SessionOptionsSetCustomThreadCreationOptions;
    ort_unused_fn SessionOptionsSetCustomJoinThreadFn;
    ort_unused_fn SetGlobalCustomCreateThreadFn;
    /* [200] */
    ort_unused_fn SetGlobalCustomThreadCreationOptions;
    ort_unused_fn SetGlobalCustomJoinThreadFn;
    ort_unused_fn SynchronizeBoundInputs;
    ort_unused_fn SynchronizeBoundOutputs;
    ort_unused_fn SessionOptionsAppendExecutionProvider_CUDA_V2;
    ort_unused_fn CreateCUDAProviderOptions;
    ort_unused_fn UpdateCUDAProviderOptions;
    ort_unused_fn GetCUDAProviderOptionsAsString;
    ort_unused_fn ReleaseCUDAProviderOptions;
    ort_unused_fn SessionOptionsAppendExecutionProvider_MIGraphX;

    /* [210] (API 12) Initializers whose bytes stay in the caller's memory: the model names
     * them (an initializer TensorProto with external data) and the session reads VALUES in
     * place. VALUES and their buffers must outlive every session created from OPTIONS. */
    OrtStatus *(*AddExternalInitializers)(OrtSessionOptions *options, const char *const *names,
                                          const OrtValue *const *values, size_t n);
    /* ORT's table goes on (API version 30 has several hundred entries); braid stops here. */
};

/* Slots counted from the top: a mistake in the order above breaks this at compile time. */
_Static_assert(offsetof(OrtApi, ReleaseEnv)            == 92  * sizeof(void *), "OrtApi slot 92");
_Static_assert(offsetof(OrtApi, AddSessionConfigEntry) == 130 * sizeof(void *), "OrtApi slot 130");
_Static_assert(offsetof(OrtApi, RunWithBinding)        == 133 * sizeof(void *), "OrtApi slot 133");
_Static_assert(offsetof(OrtApi, AddInitializer)        == 150 * sizeof(void *), "OrtApi slot 150");
_Static_assert(offsetof(OrtApi, GetTensorMemoryInfo)   == 194 * sizeof(void *), "OrtApi slot 194");
_Static_assert(offsetof(OrtApi, AddExternalInitializers) == 210 * sizeof(void *), "OrtApi slot 210");
_Static_assert(sizeof(OrtApi)                          == 211 * sizeof(void *), "OrtApi length");

#endif
