#!/usr/bin/python3
"""braid's own declarations of TensorFlow's C API (backends/tf/tf_api.h) against TensorFlow's
real headers: a C file that includes the wheel's tensorflow/c/c_api.h asserts, at compile
time, that every function of BD_TF_FUNCTIONS has exactly the type braid declares
(__builtin_types_compatible_p), that TF_Output and TF_Buffer have braid's layout, and that
the TF_DataType codes braid uses are TensorFlow's.

Usage: check_api_headers.py CC SOURCE_ROOT. The headers come from the venv of
scripts/fetch_tf.sh ($BRAID_TF_VENV, else ~/.cache/braid/tf-venv); without them: SKIPPED, 77.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

cc, root = sys.argv[1], sys.argv[2]
venv = os.environ.get("BRAID_TF_VENV") or os.path.join(os.path.expanduser("~"), ".cache", "braid", "tf-venv")
incs = sorted(glob.glob(os.path.join(venv, "lib", "python3.*", "site-packages", "tensorflow", "include")))
if not incs or not os.path.isfile(os.path.join(incs[0], "tensorflow", "c", "c_api.h")):
    print("SKIPPED: tf_api_headers: no TensorFlow headers under %s (scripts/fetch_tf.sh installs them)" % venv)
    sys.exit(77)

api = open(os.path.join(root, "backends", "tf", "tf_api.h")).read()
m = re.search(r"#define BD_TF_FUNCTIONS\(X\).*?\n(?:.*\\\n)*.*\n", api)
if not m:
    sys.exit("tf_api.h: no BD_TF_FUNCTIONS list")
functions = m.group(0)
count = len(re.findall(r"X\(TF_\w+", functions))

source = """
#include <stddef.h>
#include "tensorflow/c/c_api.h"
typedef void tf_deallocator(void *data, size_t len, void *arg);   /* as tf_api.h */
%s
#define CHECK(name, ret, params) \\
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret (*) params), \\
                   "tf_api.h declares " #name " with another type than TensorFlow's header");
BD_TF_FUNCTIONS(CHECK)
_Static_assert(sizeof(TF_Output) == 2 * sizeof(void *) && offsetof(TF_Output, oper) == 0 &&
               offsetof(TF_Output, index) == sizeof(void *), "TF_Output layout");
_Static_assert(offsetof(TF_Buffer, data) == 0 && offsetof(TF_Buffer, length) == sizeof(void *) &&
               offsetof(TF_Buffer, data_deallocator) == 2 * sizeof(void *), "TF_Buffer layout");
_Static_assert(TF_FLOAT == 1 && TF_DOUBLE == 2 && TF_INT32 == 3 && TF_UINT8 == 4 && TF_INT16 == 5 &&
               TF_INT8 == 6 && TF_STRING == 7 && TF_INT64 == 9 && TF_BOOL == 10 &&
               TF_BFLOAT16 == 14 && TF_UINT16 == 17 && TF_HALF == 19 && TF_UINT32 == 22 &&
               TF_UINT64 == 23, "TF_DataType codes");
_Static_assert(TF_OK == 0, "TF_OK");
""" % functions

with tempfile.TemporaryDirectory(prefix="braid-tf-api-") as tmp:
    src = os.path.join(tmp, "check.c")
    with open(src, "w") as f:
        f.write(source)
    r = subprocess.run([cc, "-std=gnu11", "-fsyntax-only", "-I", incs[0], src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout)
        print("tf_api_headers: tf_api.h disagrees with TensorFlow's headers in %s" % incs[0])
        sys.exit(1)
print("tf_api_headers: %d functions, TF_Output, TF_Buffer and the dtype codes match %s" % (count, incs[0]))
