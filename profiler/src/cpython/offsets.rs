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
    /// Parses the table from the first [`SIZE_3_13`] bytes of `_PyRuntime`. `Ok(None)`: no
    /// cookie, so not CPython 3.13+.
    pub fn parse(bytes: &[u8]) -> Result<Option<DebugOffsets>, LayoutError> {
        let Some(header) = Header::parse(bytes) else { return Ok(None) };
        if (header.major(), header.minor()) != (3, 13) {
            return Err(LayoutError::UnknownVersion(header));
        }
        if bytes.len() < SIZE_3_13 {
            return Err(LayoutError::Implausible(header, "the table is cut short"));
        }
        let w = |i| word(bytes, i);
        let o = DebugOffsets {
            header,
            tstate_cframe: None,
            gil_at: GilAt::Interpreter,
            unicode_compact_size: w(69) + 16,
            long_is_tag: true,
            runtime_interpreters_head: w(4),
            interp_next: w(7),
            interp_threads_head: w(8),
            interp_imports_modules: w(10),
            interp_gil_runtime_state: w(14),
            gil_enabled: w(15),
            interp_gil_locked: w(16),
            interp_gil_holder: w(17),
            tstate_next: w(20),
            tstate_current_frame: w(22),
            tstate_thread_id: w(23),
            tstate_native_thread_id: w(24),
            frame_previous: w(28),
            frame_executable: w(29),
            frame_instr_ptr: w(30),
            frame_localsplus: w(31),
            frame_owner: w(32),
            code_filename: w(34),
            code_qualname: w(36),
            code_linetable: w(37),
            code_firstlineno: w(38),
            code_argcount: w(39),
            code_localsplusnames: w(40),
            code_adaptive: w(42),
            object_size: w(43),
            object_type: w(44),
            type_size: w(45),
            type_name: w(46),
            type_flags: w(48),
            tuple_items: w(50),
            tuple_size: w(51),
            dict_keys: w(56),
            dict_values: w(57),
            long_tag: w(61),
            long_digits: w(62),
            bytes_size: w(64),
            bytes_data: w(65),
            unicode_size: w(66),
            unicode_state: w(67),
            unicode_length: w(68),
            unicode_ascii_size: w(69),
        };
        // Structure sizes (interpreter, thread state, frame, code) bound every offset into them.
        let (interp_size, tstate_size, frame_size, code_size) = (w(5), w(18), w(27), w(33));
        let within = |offs: &[u64], size: u64| size > 0 && size < (1 << 24) && offs.iter().all(|&x| x < size);
        if !within(&[o.runtime_interpreters_head], w(2))
            || !within(&[o.interp_next, o.interp_threads_head, o.interp_imports_modules, o.interp_gil_locked, o.interp_gil_holder], interp_size)
            || !within(&[o.tstate_next, o.tstate_current_frame, o.tstate_thread_id, o.tstate_native_thread_id], tstate_size)
            || !within(&[o.frame_previous, o.frame_executable, o.frame_instr_ptr, o.frame_owner], frame_size)
            || !within(&[o.code_filename, o.code_qualname, o.code_linetable, o.code_firstlineno, o.code_adaptive], code_size)
            || !within(&[o.object_type], o.object_size)
            || !within(&[o.type_name, o.type_flags], o.type_size)
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

    fn table(version: u64, free_threaded: u64) -> Vec<u8> {
        let mut b = COOKIE.to_vec();
        let mut words = vec![0u64; 72];
        words[0] = version;
        words[1] = free_threaded;
        // Sizes large enough for the offsets below.
        for size_idx in [2, 5, 18, 27, 33, 43, 45] {
            words[size_idx] = 4096;
        }
        words[23] = 152; // thread_id
        words[44] = 24; // ob_type (free-threaded)
        for w in words {
            b.extend_from_slice(&w.to_ne_bytes());
        }
        b
    }

    #[test]
    fn reads_the_3_13_table() {
        let o = DebugOffsets::parse(&table(0x030d05f0, 1)).unwrap().unwrap();
        assert_eq!(o.header.version(), "3.13.5t");
        assert!(o.header.free_threaded);
        assert_eq!((o.tstate_thread_id, o.object_type), (152, 24));
    }

    #[test]
    fn older_pythons_have_no_cookie_and_newer_ones_are_named() {
        assert_eq!(DebugOffsets::parse(&[0u8; SIZE_3_13]), Ok(None));
        match DebugOffsets::parse(&table(0x030e00f0, 1)) {
            Err(LayoutError::UnknownVersion(h)) => assert_eq!(h.version(), "3.14.0t"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn garbage_after_the_cookie_is_refused() {
        let mut t = table(0x030d05f0, 0);
        t[8 + 23 * 8..8 + 24 * 8].copy_from_slice(&(1u64 << 40).to_ne_bytes());
        assert!(matches!(DebugOffsets::parse(&t), Err(LayoutError::Implausible(..))));
    }
}
