/* Prints the offsets ThreadRadar's CPython 3.11/3.12 reader has built in
 * (profiler/src/cpython/offsets.rs, DebugOffsets::built_in), computed by the compiler from the
 * interpreter's own headers. profiler/tests/readers.rs compiles it against every 3.11 and 3.12
 * installed here and compares:
 *   cc -I<prefix>/include/python3.X -o offsets offsets.c && ./offsets
 * Names are the DebugOffsets fields; GIL offsets are printed as their parts. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include "internal/pycore_runtime.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_dict.h"

#define P(name, expr) printf("%s %zu\n", name, (size_t)(expr))

int main(void) {
    P("runtime_interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_MINOR_VERSION == 11
    P("gil_struct_in_runtime", offsetof(_PyRuntimeState, ceval.gil));
    P("interp_imports_modules", offsetof(PyInterpreterState, modules));
    P("long_tag", offsetof(PyVarObject, ob_size));
    P("long_digits", offsetof(PyLongObject, ob_digit));
#else
    P("gil_pointer_in_interp", offsetof(PyInterpreterState, ceval.gil));
    P("interp_imports_modules", offsetof(PyInterpreterState, imports.modules));
    P("long_tag", offsetof(PyLongObject, long_value.lv_tag));
    P("long_digits", offsetof(PyLongObject, long_value.ob_digit));
#endif
    P("gil_last_holder", offsetof(struct _gil_runtime_state, last_holder));
    P("gil_locked", offsetof(struct _gil_runtime_state, locked));
    P("interp_next", offsetof(PyInterpreterState, next));
    P("interp_threads_head", offsetof(PyInterpreterState, threads.head));
    P("tstate_next", offsetof(PyThreadState, next));
    P("tstate_cframe", offsetof(PyThreadState, cframe));
    P("tstate_current_frame", offsetof(_PyCFrame, current_frame));
    P("tstate_thread_id", offsetof(PyThreadState, thread_id));
    P("tstate_native_thread_id", offsetof(PyThreadState, native_thread_id));
    P("frame_previous", offsetof(_PyInterpreterFrame, previous));
    P("frame_executable", offsetof(_PyInterpreterFrame, f_code));
    P("frame_instr_ptr", offsetof(_PyInterpreterFrame, prev_instr));
    P("frame_localsplus", offsetof(_PyInterpreterFrame, localsplus));
    P("frame_owner", offsetof(_PyInterpreterFrame, owner));
    P("code_filename", offsetof(PyCodeObject, co_filename));
    P("code_qualname", offsetof(PyCodeObject, co_qualname));
    P("code_linetable", offsetof(PyCodeObject, co_linetable));
    P("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
    P("code_argcount", offsetof(PyCodeObject, co_argcount));
    P("code_localsplusnames", offsetof(PyCodeObject, co_localsplusnames));
    P("code_adaptive", offsetof(PyCodeObject, co_code_adaptive));
    P("object_size", sizeof(PyObject));
    P("object_type", offsetof(PyObject, ob_type));
    P("type_size", sizeof(PyTypeObject));
    P("type_name", offsetof(PyTypeObject, tp_name));
    P("type_flags", offsetof(PyTypeObject, tp_flags));
    P("heap_type_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
    P("tuple_items", offsetof(PyTupleObject, ob_item));
    P("tuple_size", offsetof(PyVarObject, ob_size));
    P("dict_keys", offsetof(PyDictObject, ma_keys));
    P("dict_values", offsetof(PyDictObject, ma_values));
    P("dict_keys_indices", offsetof(PyDictKeysObject, dk_indices));
    P("bytes_size", offsetof(PyVarObject, ob_size));
    P("bytes_data", offsetof(PyBytesObject, ob_sval));
    P("unicode_size", sizeof(PyUnicodeObject));
    P("unicode_state", offsetof(PyASCIIObject, state));
    P("unicode_length", offsetof(PyASCIIObject, length));
    P("unicode_ascii_size", sizeof(PyASCIIObject));
    P("unicode_compact_size", sizeof(PyCompactUnicodeObject));
    return 0;
}
