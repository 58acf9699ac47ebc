/* Element types between braid's IR (ONNX numbering, ir/dtype.h) and TensorFlow's
 * TF_DataType / DataType enum (tf_datatype.h, types.proto: the same numbers). */
#ifndef BD_BACKENDS_TF_TFB_DTYPE_H
#define BD_BACKENDS_TF_TFB_DTYPE_H

/* TF_DataType for IR dtype DTYPE, or 0 (DT_INVALID) when TensorFlow has no equivalent. */
int tfb_dtype_from_ir(int dtype);
/* IR dtype for TF_DataType TF, or BD_DT_UNDEFINED when braid has no equivalent. */
int tfb_dtype_to_ir(int tf);

#endif
