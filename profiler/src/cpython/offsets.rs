//! The layout of the interpreter's private structs, as offsets of the fields ThreadRadar reads.
//!
//! - CPython ≥ 3.13 publishes them: `_Py_DebugOffsets`, the table at the start of `_PyRuntime`
//!   (`Include/internal/pycore_runtime.h`). The table itself is only stable within a minor
//!   version: its first three fields (cookie `xdebugpy`, `PY_VERSION_HEX`, `free_threaded`) are
//!   what every version shares, the rest is read here in the 3.13 order. Other versions are
//!   named, not guessed at.
//! - CPython 3.11 and 3.12 publish nothing: [`DebugOffsets::built_in`] holds the same offsets for
//!   their default (release, GIL, 64-bit Linux) builds, taken with `offsetof` from each version's
//!   `Include/internal` headers (`profiler/tests/offsets.c` prints them, and
//!   `profiler/tests/readers.rs` checks them against the headers of the interpreters installed
//!   here). Those private structs do not change within a minor version. A build they do not fit
//!   (a debug build's larger object header) fails the plausibility check in
//!   `Interpreter::find`, and py-spy's bindings read it instead.

/// The cookie that starts the table.
pub const COOKIE: &[u8; 8] = b"xdebugpy";

/// Bytes of the 3.13 table: the cookie and 72 `uint64_t` fields.
pub const SIZE_3_13: usize = 8 + 72 * 8;

/// Bytes read from the start of `_PyRuntime` to find the table: enough for every version known
/// here (3.15's is 8 + 111 words), with room for a later micro version's additions at the end.
pub const READ_SIZE: usize = 2048;

/// The fields of `struct _Py_DebugOffsets` in the order each minor version declares them
/// (`Include/internal/pycore_debug_offsets.h`), section by section; `version` and
/// `free_threaded` come first in every version. Offsets are looked up by name, so a field that
/// moves between versions is still read from its own slot, and a version that lacks one says so.
type Layout = &'static [(&'static str, &'static [&'static str])];
type Section = (&'static str, &'static [&'static str]);

// Sections that several versions share, word for word.
const HEADER: Section = ("", &["version", "free_threaded"]);
const RUNTIME: Section = ("runtime_state", &["size", "finalizing", "interpreters_head"]);
const INTERPRETER_3_14: Section = (
    "interpreter_state",
    &["size", "id", "next", "threads_head", "threads_main", "gc", "imports_modules", "sysdict", "builtins", "ceval_gil", "gil_runtime_state", "gil_runtime_state_enabled", "gil_runtime_state_locked", "gil_runtime_state_holder", "code_object_generation", "tlbc_generation"],
);
const FRAME_3_14: Section = ("interpreter_frame", &["size", "previous", "executable", "instr_ptr", "localsplus", "owner", "stackpointer", "tlbc_index"]);
const CODE_3_14: Section = ("code_object", &["size", "filename", "name", "qualname", "linetable", "firstlineno", "argcount", "localsplusnames", "localspluskinds", "co_code_adaptive", "co_tlbc"]);
const PYOBJECT: Section = ("pyobject", &["size", "ob_type"]);
const TUPLE: Section = ("tuple_object", &["size", "ob_item", "ob_size"]);
const LIST: Section = ("list_object", &["size", "ob_item", "ob_size"]);
const SET: Section = ("set_object", &["size", "used", "table", "mask"]);
const DICT: Section = ("dict_object", &["size", "ma_keys", "ma_values"]);
const FLOAT: Section = ("float_object", &["size", "ob_fval"]);
const LONG: Section = ("long_object", &["size", "lv_tag", "ob_digit"]);
const BYTES: Section = ("bytes_object", &["size", "ob_size", "ob_sval"]);
const GEN: Section = ("gen_object", &["size", "gi_name", "gi_iframe", "gi_frame_state"]);
const LLIST: Section = ("llist_node", &["next", "prev"]);
const DEBUGGER: Section = ("debugger_support", &["eval_breaker", "remote_debugger_support", "remote_debugging_enabled", "debugger_pending_call", "debugger_script_path", "debugger_script_path_size"]);

const TABLE_3_13: Layout = &[
    HEADER,
    RUNTIME,
    (
        "interpreter_state",
        &["size", "id", "next", "threads_head", "threads_main", "imports_modules", "sysdict", "builtins", "ceval_gil", "gil_runtime_state", "gil_runtime_state_enabled", "gil_runtime_state_locked", "gil_runtime_state_holder"],
    ),
    ("thread_state", &["size", "prev", "next", "interp", "current_frame", "thread_id", "native_thread_id", "datastack_chunk", "status"]),
    ("interpreter_frame", &["size", "previous", "executable", "instr_ptr", "localsplus", "owner"]),
    ("code_object", &["size", "filename", "name", "qualname", "linetable", "firstlineno", "argcount", "localsplusnames", "localspluskinds", "co_code_adaptive"]),
    PYOBJECT,
    ("type_object", &["size", "tp_name", "tp_repr", "tp_flags"]),
    TUPLE,
    LIST,
    DICT,
    FLOAT,
    LONG,
    BYTES,
    ("unicode_object", &["size", "state", "length", "asciiobject_size"]),
    ("gc", &["size", "collecting"]),
];

/// 3.14: the interpreter gains `gc`, `code_object_generation` and `tlbc_generation`, frames
/// `stackpointer` and `tlbc_index`, code objects `co_tlbc` (free-threaded builds' per-thread
/// bytecode), and sets, generators, list nodes and the remote debugger's fields are added.
const TABLE_3_14: Layout = &[
    HEADER,
    RUNTIME,
    INTERPRETER_3_14,
    ("thread_state", &["size", "prev", "next", "interp", "current_frame", "thread_id", "native_thread_id", "datastack_chunk", "status"]),
    FRAME_3_14,
    CODE_3_14,
    PYOBJECT,
    ("type_object", &["size", "tp_name", "tp_repr", "tp_flags"]),
    TUPLE,
    LIST,
    SET,
    DICT,
    FLOAT,
    LONG,
    BYTES,
    ("unicode_object", &["size", "state", "length", "asciiobject_size"]),
    ("gc", &["size", "collecting"]),
    GEN,
    LLIST,
    DEBUGGER,
];

/// 3.15: thread states gain `base_frame`, the remote profilers' frame cache
/// (`last_profiled_frame`, `last_profiled_frame_seq`), `holds_gil` and exception fields; types
/// `tp_basicsize` and `tp_dictoffset`; heap types publish `ht_cached_keys`; strings the size of
/// `PyCompactUnicodeObject`; the GC its frame and generation statistics.
const TABLE_3_15: Layout = &[
    HEADER,
    RUNTIME,
    INTERPRETER_3_14,
    (
        "thread_state",
        &["size", "prev", "next", "interp", "current_frame", "base_frame", "last_profiled_frame", "last_profiled_frame_seq", "thread_id", "native_thread_id", "datastack_chunk", "status", "holds_gil", "gil_requested", "current_exception", "exc_state"],
    ),
    ("err_stackitem", &["exc_value"]),
    FRAME_3_14,
    CODE_3_14,
    PYOBJECT,
    ("type_object", &["size", "tp_name", "tp_repr", "tp_flags", "tp_basicsize", "tp_dictoffset"]),
    ("heap_type_object", &["size", "ht_cached_keys"]),
    TUPLE,
    LIST,
    SET,
    DICT,
    FLOAT,
    LONG,
    BYTES,
    ("unicode_object", &["size", "state", "length", "asciiobject_size", "compactunicodeobject_size"]),
    ("gc", &["size", "collecting", "frame", "generation_stats_size", "generation_stats"]),
    GEN,
    LLIST,
    DEBUGGER,
];

/// The table layout of a minor version, `None` for one this build does not know.
fn layout_of(minor: u64) -> Option<Layout> {
    match minor {
        13 => Some(TABLE_3_13),
        14 => Some(TABLE_3_14),
        15 => Some(TABLE_3_15),
        _ => None,
    }
}

/// Number of 8-byte words (after the cookie) in a layout.
fn words_in(layout: Layout) -> usize {
    layout.iter().map(|(_, fields)| fields.len()).sum()
}

/// A version's table read from memory: values looked up by `section.field`.
struct Table<'a> {
    bytes: &'a [u8],
    layout: Layout,
}

impl Table<'_> {
    fn index(&self, section: &str, field: &str) -> Option<usize> {
        let mut i = 0;
        for (s, fields) in self.layout {
            if *s == section {
                return fields.iter().position(|f| *f == field).map(|k| i + k);
            }
            i += fields.len();
        }
        None
    }

    /// The value of `section.field`; 0 when this version has no such field.
    fn get(&self, section: &str, field: &str) -> u64 {
        self.index(section, field).map_or(0, |i| word(self.bytes, i))
    }

    fn has(&self, section: &str, field: &str) -> bool {
        self.index(section, field).is_some()
    }
}

/// What every version's table starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// `PY_VERSION_HEX`: 0xMMmmppLS.
    pub version_hex: u64,
    pub free_threaded: bool,
}

impl Header {
    /// `None` when `bytes` does not start with the cookie (a CPython before 3.13, or not
    /// `_PyRuntime` at all).
    pub fn parse(bytes: &[u8]) -> Option<Header> {
        if bytes.len() < 24 || &bytes[..8] != COOKIE {
            return None;
        }
        Some(Header { version_hex: word(bytes, 0), free_threaded: word(bytes, 1) != 0 })
    }

    pub fn major(&self) -> u64 {
        (self.version_hex >> 24) & 0xff
    }

    pub fn minor(&self) -> u64 {
        (self.version_hex >> 16) & 0xff
    }

    pub fn micro(&self) -> u64 {
        (self.version_hex >> 8) & 0xff
    }

    /// `3.13.5`, `3.13.5` + free-threaded as `3.13.5t`.
    pub fn version(&self) -> String {
        format!("{}.{}.{}{}", self.major(), self.minor(), self.micro(), if self.free_threaded { "t" } else { "" })
    }
}

/// Where the GIL's `_gil_runtime_state` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GilAt {
    /// Inside the interpreter state (3.13): `interp_gil_locked`/`interp_gil_holder` are offsets
    /// from the interpreter.
    Interpreter,
    /// Behind the pointer at this offset of the interpreter state (3.12: `interp->ceval.gil`);
    /// the two offsets are into the GIL struct.
    InterpreterPointer(u64),
    /// Inside `_PyRuntime` (3.11: `_PyRuntime.ceval.gil`); the two offsets are from the runtime.
    Runtime,
}

/// Field offsets ThreadRadar uses, as the interpreter reported them (3.13+) or as its headers
/// give them (3.11, 3.12).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugOffsets {
    pub header: Header,
    /// 3.11 and 3.12 reach the current frame through `tstate->cframe->current_frame`: the offset
    /// of `cframe` here, and `tstate_current_frame` is then the offset of `current_frame` in
    /// `_PyCFrame`. `None` (3.13+): `tstate_current_frame` is a field of the thread state.
    pub tstate_cframe: Option<u64>,
    pub gil_at: GilAt,
    /// `sizeof(PyCompactUnicodeObject)`: where a compact non-ASCII string's characters start.
    pub unicode_compact_size: u64,
    /// 3.12+: an int's size is `lv_tag` (digits << 3 | sign); 3.11: `ob_size` (± digits).
    pub long_is_tag: bool,
    pub runtime_interpreters_head: u64,
    pub interp_next: u64,
    pub interp_threads_head: u64,
    pub interp_imports_modules: u64,
    pub interp_gil_runtime_state: u64,
    /// Offset of `enabled` inside `struct _gil_runtime_state` (free-threaded builds only; 0 otherwise).
    pub gil_enabled: u64,
    pub interp_gil_locked: u64,
    pub interp_gil_holder: u64,
    pub tstate_next: u64,
    pub tstate_current_frame: u64,
    pub tstate_thread_id: u64,
    pub tstate_native_thread_id: u64,
    pub frame_previous: u64,
    pub frame_executable: u64,
    pub frame_instr_ptr: u64,
    pub frame_localsplus: u64,
    pub frame_owner: u64,
    /// `sizeof(_PyInterpreterFrame)` without its locals (0 where unknown: 3.11, 3.12).
    pub frame_size: u64,
    /// 3.14+: `_PyInterpreterFrame.stackpointer`, the top of the frame's value stack (a suspended
    /// coroutine's awaited object is its last item); 0 where the table has none.
    pub frame_stackpointer: u64,
    /// 3.14+: `PyGenObject.gi_iframe` (the generator's or coroutine's own frame, inside the
    /// object) and `gi_frame_state`; 0 where the table has none (asyncio tasks are read only
    /// where it has them).
    pub gen_iframe: u64,
    pub gen_frame_state: u64,
    /// 3.14+: `f_executable` is a `_PyStackRef`, a pointer whose low bits are tags (deferred
    /// reference counting); they are cleared before it is followed.
    pub executable_is_stackref: bool,
    /// Free-threaded 3.14+: the frame's index into its code object's per-thread bytecode copies
    /// (`tlbc_index`) and the code object's `co_tlbc` array; 0 where the build has none.
    pub frame_tlbc_index: u64,
    pub code_tlbc: u64,
    /// `tstate->datastack_chunk` (3.13+; 0 for 3.11/3.12): the chunk of the thread's data stack
    /// its newest frames live in.
    pub tstate_datastack_chunk: u64,
    /// 3.15: `tstate->holds_gil`, the thread's own flag that it holds the GIL.
    pub tstate_holds_gil: Option<u64>,
    /// 3.15: `tstate->base_frame`, the sentinel frame every chain of the thread ends in (it lives
    /// in the thread state, not on the data stack; the walk stops there without reading it).
    pub tstate_base_frame: u64,
    /// Which bit of a string's `state` the 3-bit `kind` starts at: 2 where `interned` is a
    /// 2-bit field, 8 on free-threaded 3.14+ builds where it is a whole byte (atomic access).
    pub unicode_kind_shift: u32,
    /// `PyHeapTypeObject.ht_cached_keys` (3.15 publishes it; before, `type_size` + the slot
    /// tables, see `objects.rs`).
    pub heap_type_cached_keys: Option<u64>,
    pub code_filename: u64,
    pub code_qualname: u64,
    pub code_linetable: u64,
    pub code_firstlineno: u64,
    pub code_argcount: u64,
    pub code_localsplusnames: u64,
    pub code_adaptive: u64,
    pub object_size: u64,
    pub object_type: u64,
    pub type_size: u64,
    pub type_name: u64,
    pub type_flags: u64,
    pub tuple_items: u64,
    pub tuple_size: u64,
    pub dict_keys: u64,
    pub dict_values: u64,
    pub long_tag: u64,
    pub long_digits: u64,
    pub bytes_size: u64,
    pub bytes_data: u64,
    pub unicode_size: u64,
    pub unicode_state: u64,
    pub unicode_length: u64,
    pub unicode_ascii_size: u64,
}

/// Why a table could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// A version whose table this build of ThreadRadar does not know.
    UnknownVersion(Header),
    /// The 3.13 table with values no 3.13 build has (memory that is not the table).
    Implausible(Header, &'static str),
}

fn word(bytes: &[u8], i: usize) -> u64 {
    let at = 8 + i * 8;
    u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap())
}

impl DebugOffsets {
    /// Parses the table from the first bytes of `_PyRuntime` (at least the table's size;
    /// [`READ_SIZE`] covers every known version). `Ok(None)`: no cookie, so not CPython 3.13+.
    pub fn parse(bytes: &[u8]) -> Result<Option<DebugOffsets>, LayoutError> {
        let Some(header) = Header::parse(bytes) else { return Ok(None) };
        let layout = match (header.major(), layout_of(header.minor())) {
            (3, Some(layout)) => layout,
            _ => return Err(LayoutError::UnknownVersion(header)),
        };
        if bytes.len() < 8 + words_in(layout) * 8 {
            return Err(LayoutError::Implausible(header, "the table is cut short"));
        }
        let t = Table { bytes, layout };
        let minor = header.minor();
        let ft = header.free_threaded;
        let ascii_size = t.get("unicode_object", "asciiobject_size");
        let o = DebugOffsets {
            header,
            tstate_cframe: None,
            gil_at: GilAt::Interpreter,
            unicode_compact_size: match t.get("unicode_object", "compactunicodeobject_size") {
                // PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8.
                0 => ascii_size + 16,
                n => n,
            },
            long_is_tag: true,
            runtime_interpreters_head: t.get("runtime_state", "interpreters_head"),
            interp_next: t.get("interpreter_state", "next"),
            interp_threads_head: t.get("interpreter_state", "threads_head"),
            interp_imports_modules: t.get("interpreter_state", "imports_modules"),
            interp_gil_runtime_state: t.get("interpreter_state", "gil_runtime_state"),
            gil_enabled: t.get("interpreter_state", "gil_runtime_state_enabled"),
            interp_gil_locked: t.get("interpreter_state", "gil_runtime_state_locked"),
            interp_gil_holder: t.get("interpreter_state", "gil_runtime_state_holder"),
            tstate_next: t.get("thread_state", "next"),
            tstate_current_frame: t.get("thread_state", "current_frame"),
            tstate_thread_id: t.get("thread_state", "thread_id"),
            tstate_native_thread_id: t.get("thread_state", "native_thread_id"),
            tstate_datastack_chunk: t.get("thread_state", "datastack_chunk"),
            tstate_holds_gil: t.has("thread_state", "holds_gil").then(|| t.get("thread_state", "holds_gil")),
            tstate_base_frame: t.get("thread_state", "base_frame"),
            frame_previous: t.get("interpreter_frame", "previous"),
            frame_executable: t.get("interpreter_frame", "executable"),
            frame_instr_ptr: t.get("interpreter_frame", "instr_ptr"),
            frame_localsplus: t.get("interpreter_frame", "localsplus"),
            frame_owner: t.get("interpreter_frame", "owner"),
            frame_size: t.get("interpreter_frame", "size"),
            frame_stackpointer: t.get("interpreter_frame", "stackpointer"),
            gen_iframe: t.get("gen_object", "gi_iframe"),
            gen_frame_state: t.get("gen_object", "gi_frame_state"),
            executable_is_stackref: minor >= 14,
            frame_tlbc_index: t.get("interpreter_frame", "tlbc_index"),
            code_tlbc: t.get("code_object", "co_tlbc"),
            unicode_kind_shift: if ft && minor >= 14 { 8 } else { 2 },
            heap_type_cached_keys: t.has("heap_type_object", "ht_cached_keys").then(|| t.get("heap_type_object", "ht_cached_keys")),
            code_filename: t.get("code_object", "filename"),
            code_qualname: t.get("code_object", "qualname"),
            code_linetable: t.get("code_object", "linetable"),
            code_firstlineno: t.get("code_object", "firstlineno"),
            code_argcount: t.get("code_object", "argcount"),
            code_localsplusnames: t.get("code_object", "localsplusnames"),
            code_adaptive: t.get("code_object", "co_code_adaptive"),
            object_size: t.get("pyobject", "size"),
            object_type: t.get("pyobject", "ob_type"),
            type_size: t.get("type_object", "size"),
            type_name: t.get("type_object", "tp_name"),
            type_flags: t.get("type_object", "tp_flags"),
            tuple_items: t.get("tuple_object", "ob_item"),
            tuple_size: t.get("tuple_object", "ob_size"),
            dict_keys: t.get("dict_object", "ma_keys"),
            dict_values: t.get("dict_object", "ma_values"),
            long_tag: t.get("long_object", "lv_tag"),
            long_digits: t.get("long_object", "ob_digit"),
            bytes_size: t.get("bytes_object", "ob_size"),
            bytes_data: t.get("bytes_object", "ob_sval"),
            unicode_size: t.get("unicode_object", "size"),
            unicode_state: t.get("unicode_object", "state"),
            unicode_length: t.get("unicode_object", "length"),
            unicode_ascii_size: ascii_size,
        };
        // Structure sizes (interpreter, thread state, frame, code) bound every offset into them.
        let size = |section: &str| t.get(section, "size");
        let within = |offs: &[u64], size: u64| size > 0 && size < (1 << 24) && offs.iter().all(|&x| x < size);
        let tstate_offs = [o.tstate_next, o.tstate_current_frame, o.tstate_thread_id, o.tstate_native_thread_id, o.tstate_datastack_chunk, o.tstate_holds_gil.unwrap_or(0), o.tstate_base_frame];
        if !within(&[o.runtime_interpreters_head], size("runtime_state"))
            || !within(&[o.interp_next, o.interp_threads_head, o.interp_imports_modules, o.interp_gil_locked, o.interp_gil_holder], size("interpreter_state"))
            || !within(&tstate_offs, size("thread_state"))
            || !within(&[o.frame_previous, o.frame_executable, o.frame_instr_ptr, o.frame_owner, o.frame_tlbc_index], o.frame_size)
            || !within(&[o.code_filename, o.code_qualname, o.code_linetable, o.code_firstlineno, o.code_adaptive, o.code_tlbc], size("code_object"))
            || !within(&[o.object_type], o.object_size)
            || !within(&[o.type_name, o.type_flags], o.type_size)
            || o.frame_localsplus > o.frame_size
        {
            return Err(LayoutError::Implausible(header, "an offset lies outside its structure"));
        }
        Ok(Some(o))
    }
}

impl DebugOffsets {
    /// The offsets of CPython 3.11 and 3.12 (default builds on 64-bit Linux), which publish no
    /// table; `None` for every other version.
    pub fn built_in(major: u64, minor: u64, micro: u64) -> Option<DebugOffsets> {
        let header = Header { version_hex: (major << 24) | (minor << 16) | (micro << 8) | 0xf0, free_threaded: false };
        // What 3.11 and 3.12 share: the runtime's interpreter list, the thread state's link, the
        // frame's instruction pointer and locals, code objects' names, objects, types, tuples,
        // dicts, bytes and strings.
        let shared = DebugOffsets {
            header,
            tstate_cframe: Some(56),
            gil_at: GilAt::Runtime,
            unicode_compact_size: 0,
            long_is_tag: false,
            runtime_interpreters_head: 40,
            interp_next: 0,
            interp_threads_head: 0,
            interp_imports_modules: 0,
            interp_gil_runtime_state: 0,
            gil_enabled: 0,
            interp_gil_locked: 0,
            interp_gil_holder: 0,
            tstate_next: 8,
            tstate_current_frame: 0,
            tstate_thread_id: 0,
            tstate_native_thread_id: 0,
            frame_previous: 0,
            frame_executable: 0,
            frame_instr_ptr: 56,
            frame_localsplus: 72,
            frame_owner: 0,
            frame_size: 0,
            frame_stackpointer: 0,
            gen_iframe: 0,
            gen_frame_state: 0,
            executable_is_stackref: false,
            frame_tlbc_index: 0,
            code_tlbc: 0,
            tstate_datastack_chunk: 0,
            tstate_holds_gil: None,
            tstate_base_frame: 0,
            unicode_kind_shift: 2,
            heap_type_cached_keys: None,
            code_filename: 112,
            code_qualname: 128,
            code_linetable: 136,
            code_firstlineno: 0,
            code_argcount: 0,
            code_localsplusnames: 96,
            code_adaptive: 0,
            object_size: 16,
            object_type: 8,
            type_size: 0,
            type_name: 24,
            type_flags: 168,
            tuple_items: 24,
            tuple_size: 16,
            dict_keys: 32,
            dict_values: 40,
            long_tag: 16,
            long_digits: 24,
            bytes_size: 16,
            bytes_data: 32,
            unicode_size: 0,
            unicode_state: 32,
            unicode_length: 16,
            unicode_ascii_size: 0,
        };
        match (major, minor) {
            // Include/internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h; cpython/*.h.
            (3, 11) => Some(DebugOffsets {
                // _PyRuntime.ceval.gil (struct _gil_runtime_state: last_holder 8, locked 16).
                gil_at: GilAt::Runtime,
                interp_gil_runtime_state: 360,
                interp_gil_holder: 360 + 8,
                interp_gil_locked: 360 + 16,
                interp_threads_head: 16,
                interp_imports_modules: 888,
                tstate_current_frame: 8,
                tstate_thread_id: 152,
                tstate_native_thread_id: 160,
                frame_previous: 48,
                frame_executable: 32,
                frame_owner: 69,
                code_firstlineno: 72,
                code_argcount: 56,
                code_adaptive: 184,
                type_size: 408,
                unicode_size: 80,
                unicode_ascii_size: 48,
                unicode_compact_size: 72,
                ..shared
            }),
            (3, 12) => Some(DebugOffsets {
                // interp->ceval.gil, a pointer (to the main interpreter's own `_gil`).
                gil_at: GilAt::InterpreterPointer(384),
                interp_gil_holder: 8,
                interp_gil_locked: 16,
                interp_threads_head: 72,
                interp_imports_modules: 944,
                tstate_current_frame: 0,
                tstate_thread_id: 136,
                tstate_native_thread_id: 144,
                frame_previous: 8,
                frame_executable: 0,
                frame_owner: 70,
                code_firstlineno: 68,
                code_argcount: 52,
                code_adaptive: 192,
                type_size: 416,
                long_is_tag: true,
                unicode_size: 64,
                unicode_ascii_size: 40,
                unicode_compact_size: 56,
                ..shared
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table of `layout` for `version` with every structure 4096 bytes large and `set`
    /// fields given.
    fn table(layout: Layout, version: u64, free_threaded: u64, set: &[(&str, &str, u64)]) -> Vec<u8> {
        let mut words = vec![0u64; words_in(layout)];
        let t = Table { bytes: &[], layout };
        words[0] = version;
        words[1] = free_threaded;
        for (section, fields) in layout {
            if fields.contains(&"size") && !section.is_empty() {
                words[t.index(section, "size").unwrap()] = 4096;
            }
        }
        for &(section, field, value) in set {
            words[t.index(section, field).unwrap_or_else(|| panic!("{section}.{field}"))] = value;
        }
        let mut b = COOKIE.to_vec();
        for w in words {
            b.extend_from_slice(&w.to_ne_bytes());
        }
        b
    }

    #[test]
    fn reads_the_3_13_table() {
        let t = table(TABLE_3_13, 0x030d05f0, 1, &[("thread_state", "thread_id", 152), ("pyobject", "ob_type", 24)]);
        assert_eq!(t.len(), SIZE_3_13);
        let o = DebugOffsets::parse(&t).unwrap().unwrap();
        assert_eq!(o.header.version(), "3.13.5t");
        assert!(o.header.free_threaded);
        assert_eq!((o.tstate_thread_id, o.object_type), (152, 24));
        assert!(!o.executable_is_stackref && o.tstate_holds_gil.is_none());
    }

    /// The same fields at the slots 3.14 and 3.15 put them in: a field read from the 3.13 slot
    /// would give another field's value.
    #[test]
    fn reads_the_3_14_and_3_15_tables_by_field() {
        let set = [
            ("thread_state", "thread_id", 152),
            ("thread_state", "native_thread_id", 160),
            ("interpreter_frame", "owner", 70),
            ("interpreter_frame", "localsplus", 80),
            ("code_object", "co_code_adaptive", 200),
            ("unicode_object", "asciiobject_size", 40),
        ];
        let o14 = DebugOffsets::parse(&table(TABLE_3_14, 0x030e0af0, 0, &set)).unwrap().unwrap();
        assert_eq!(o14.header.version(), "3.14.10");
        assert_eq!((o14.tstate_thread_id, o14.tstate_native_thread_id, o14.frame_owner, o14.frame_localsplus, o14.code_adaptive), (152, 160, 70, 80, 200));
        assert!(o14.executable_is_stackref);
        assert_eq!((o14.unicode_compact_size, o14.unicode_kind_shift), (56, 2));
        let mut set15 = set.to_vec();
        set15.extend([("thread_state", "holds_gil", 190), ("unicode_object", "compactunicodeobject_size", 64), ("heap_type_object", "ht_cached_keys", 904)]);
        let o15 = DebugOffsets::parse(&table(TABLE_3_15, 0x030f02f0, 0, &set15)).unwrap().unwrap();
        assert_eq!((o15.tstate_thread_id, o15.frame_owner, o15.code_adaptive), (152, 70, 200));
        assert_eq!((o15.tstate_holds_gil, o15.unicode_compact_size, o15.heap_type_cached_keys), (Some(190), 64, Some(904)));
        // A free-threaded 3.14 keeps a string's `interned` in a whole byte.
        let ft = DebugOffsets::parse(&table(TABLE_3_14, 0x030e0af0, 1, &set)).unwrap().unwrap();
        assert_eq!(ft.unicode_kind_shift, 8);
    }

    #[test]
    fn older_pythons_have_no_cookie_and_newer_ones_are_named() {
        assert_eq!(DebugOffsets::parse(&[0u8; SIZE_3_13]), Ok(None));
        match DebugOffsets::parse(&table(TABLE_3_15, 0x031000f0, 1, &[])) {
            Err(LayoutError::UnknownVersion(h)) => assert_eq!(h.version(), "3.16.0t"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn garbage_after_the_cookie_is_refused() {
        for (layout, version) in [(TABLE_3_13, 0x030d05f0), (TABLE_3_14, 0x030e0af0), (TABLE_3_15, 0x030f02f0)] {
            let t = table(layout, version, 0, &[("thread_state", "thread_id", 1 << 40)]);
            assert!(matches!(DebugOffsets::parse(&t), Err(LayoutError::Implausible(..))), "{version:x}");
            let short = table(layout, version, 0, &[]);
            assert!(matches!(DebugOffsets::parse(&short[..short.len() - 8]), Err(LayoutError::Implausible(..))), "{version:x}");
        }
    }
}
