//! `_Py_DebugOffsets`: the layout table CPython ≥ 3.13 publishes at the start of `_PyRuntime`
//! (`Include/internal/pycore_runtime.h`), so that tools outside the process need not carry a copy
//! of every private struct.
//!
//! The table itself is only stable within a minor version: its first three fields (cookie
//! `xdebugpy`, `PY_VERSION_HEX`, `free_threaded`) are what every version shares, the rest is
//! read here in the 3.13 order. Other versions are named, not guessed at.

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

/// Field offsets ThreadRadar uses, as the interpreter reported them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugOffsets {
    pub header: Header,
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
