//! Where the lock *methods* of `_thread.lock` and `_thread.RLock` are in an interpreter's file, for
//! `record --exact-locks` on builds whose lock functions cannot be probed by name (`uprobes.rs`).
//!
//! A distribution's CPython (Debian's 3.11, 3.14, 3.15) is stripped of `.symtab` and built with
//! link-time optimisation: the `acquire` method of `threading.Lock` has the lock functions inlined
//! (3.11: `sem_trywait` and `sem_post` directly; 3.14/3.15: private copies of `_PyMutex_LockTimed`),
//! so the exported `PyThread_acquire_lock_timed`/`_PyMutex_LockTimed` are not called for it. The
//! C functions of the methods themselves cannot be inlined away: their addresses are taken in the
//! types' `PyMethodDef` arrays and the interpreter calls them through those pointers
//! (`ml_meth(self, …)`, `self` — the lock object — in the first argument register).
//!
//! Both types are heap types made from a `PyType_Spec` (3.10 onwards): `{name, basicsize,
//! itemsize, flags, slots}`, whose `slots` array (`{int slot; void *pfunc}`, ended by slot 0) has
//! `Py_tp_methods` (64) → the `PyMethodDef` array (`{ml_name, ml_meth, ml_flags, ml_doc}`, ended by
//! a null name). All of it is static data of the file, so the methods are found from the file
//! alone: the string `_thread.lock`, a pointer to it that begins a spec, its slots, its methods.
//! In a position-independent file (a PIE, libpython) the pointers are filled in by `R_X86_64_RELATIVE`
//! relocations, read from `.rela.dyn`.

use crate::uprobes::{file_offset, Role};
use goblin::elf::Elf;
use std::collections::HashMap;

/// The methods probed, per type, and what each does to the lock.
pub const METHODS: &[(&str, &str, Role)] = &[
    ("_thread.lock", "acquire", Role::Acquire),
    ("_thread.lock", "acquire_lock", Role::Acquire),
    ("_thread.lock", "__enter__", Role::Acquire),
    ("_thread.lock", "release", Role::Release),
    ("_thread.lock", "release_lock", Role::Release),
    ("_thread.lock", "__exit__", Role::Release),
    ("_thread.RLock", "acquire", Role::RecursiveAcquire),
    ("_thread.RLock", "__enter__", Role::RecursiveAcquire),
    ("_thread.RLock", "release", Role::RecursiveRelease),
    ("_thread.RLock", "__exit__", Role::RecursiveRelease),
    ("_thread.RLock", "_release_save", Role::ReleaseAll),
    ("_thread.RLock", "_acquire_restore", Role::Restore),
];

/// `Py_tp_methods` in `typeslots.h`.
const PY_TP_METHODS: i32 = 64;

/// One C function of the methods (several method names may share it: `acquire`, `acquire_lock`
/// and `__enter__` of a 3.14 `Lock`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    /// `type.method` names, joined by `/`.
    pub name: String,
    pub role: Role,
    pub vaddr: u64,
    pub offset: u64,
}

/// What a file holds for method probes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub methods: Vec<Method>,
    /// The address of `_Py_TrueStruct` in the file (an acquire method returns `Py_True` when it
    /// took the lock); add the load bias when `relocatable`.
    pub py_true: u64,
    /// The file is loaded at an address of the loader's choice (`ET_DYN`).
    pub relocatable: bool,
}

/// The file's static data, with its relocated pointers.
struct Image<'a> {
    bytes: &'a [u8],
    elf: &'a Elf<'a>,
    /// Relocated pointer slots: address → value.
    relocs: HashMap<u64, u64>,
}

impl Image<'_> {
    fn ptr(&self, vaddr: u64) -> Option<u64> {
        if let Some(&v) = self.relocs.get(&vaddr) {
            return Some(v);
        }
        let off = file_offset(self.elf, vaddr)? as usize;
        Some(u64::from_le_bytes(self.bytes.get(off..off + 8)?.try_into().ok()?))
    }

    fn i32_at(&self, vaddr: u64) -> Option<i32> {
        let off = file_offset(self.elf, vaddr)? as usize;
        Some(i32::from_le_bytes(self.bytes.get(off..off + 4)?.try_into().ok()?))
    }

    fn cstr(&self, vaddr: u64) -> Option<&[u8]> {
        let off = file_offset(self.elf, vaddr)? as usize;
        let rest = self.bytes.get(off..)?;
        Some(&rest[..rest.iter().position(|&b| b == 0)?])
    }

    /// The virtual address of file offset `off`, if a loaded segment holds it.
    fn vaddr_of(&self, off: u64) -> Option<u64> {
        self.elf
            .program_headers
            .iter()
            .filter(|ph| ph.p_type == goblin::elf::program_header::PT_LOAD)
            .find(|ph| off >= ph.p_offset && off < ph.p_offset + ph.p_filesz)
            .map(|ph| off - ph.p_offset + ph.p_vaddr)
    }

    /// The addresses of the pointer slots that hold `target`: relocated ones and, in the loaded
    /// segments that are not code, 8-byte-aligned words equal to it.
    fn refs_to(&self, target: u64) -> Vec<u64> {
        let mut out: Vec<u64> = self.relocs.iter().filter(|(_, &v)| v == target).map(|(&k, _)| k).collect();
        let needle = target.to_le_bytes();
        for ph in self.elf.program_headers.iter().filter(|ph| ph.p_type == goblin::elf::program_header::PT_LOAD && ph.p_flags & goblin::elf::program_header::PF_X == 0) {
            let (start, end) = (ph.p_offset as usize, (ph.p_offset + ph.p_filesz) as usize);
            let Some(seg) = self.bytes.get(start..end) else { continue };
            let first = ((8 - ph.p_vaddr % 8) % 8) as usize;
            let mut i = first;
            while i + 8 <= seg.len() {
                if seg[i..i + 8] == needle {
                    out.push(ph.p_vaddr + i as u64);
                }
                i += 8;
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The `PyMethodDef` array of the type spec named `type_name`: (name, function) pairs.
    fn methods_of(&self, type_name: &str) -> Option<Vec<(String, u64)>> {
        let needle = [type_name.as_bytes(), b"\0"].concat();
        let mut at = 0;
        while let Some(pos) = find(&self.bytes[at..], &needle) {
            let off = (at + pos) as u64;
            at += pos + 1;
            let Some(name_vaddr) = self.vaddr_of(off) else { continue };
            for spec in self.refs_to(name_vaddr) {
                if let Some(m) = self.spec_methods(spec) {
                    return Some(m);
                }
            }
        }
        None
    }

    /// The methods of the `PyType_Spec` at `spec`, if it is one: its slots (within 64 entries)
    /// lead to a method array of named functions.
    fn spec_methods(&self, spec: u64) -> Option<Vec<(String, u64)>> {
        let slots = self.ptr(spec + 24)?;
        for k in 0..64u64 {
            let slot = self.i32_at(slots + 16 * k)?;
            if slot == 0 {
                return None;
            }
            if slot != PY_TP_METHODS {
                continue;
            }
            let defs = self.ptr(slots + 16 * k + 8)?;
            let mut out = Vec::new();
            for j in 0..128u64 {
                let name = self.ptr(defs + 32 * j)?;
                if name == 0 {
                    return (!out.is_empty()).then_some(out);
                }
                let name = std::str::from_utf8(self.cstr(name)?).ok()?.to_string();
                out.push((name, self.ptr(defs + 32 * j + 8)?));
            }
            return None;
        }
        None
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The relocated pointer slots of a position-independent file (`R_X86_64_RELATIVE`: the addend;
/// `R_X86_64_64`: the symbol's value + the addend).
fn relocations(elf: &Elf) -> HashMap<u64, u64> {
    const R_X86_64_64: u32 = 1;
    const R_X86_64_RELATIVE: u32 = 8;
    let mut out = HashMap::new();
    for r in elf.dynrelas.iter() {
        let add = r.r_addend.unwrap_or(0);
        let v = match r.r_type {
            R_X86_64_RELATIVE => add as u64,
            R_X86_64_64 => match elf.dynsyms.get(r.r_sym) {
                Some(s) if s.st_value != 0 => s.st_value.wrapping_add(add as u64),
                _ => continue,
            },
            _ => continue,
        };
        out.insert(r.r_offset, v);
    }
    out
}

/// The lock methods an ELF file defines, or why not (one sentence's end).
pub fn methods_in(bytes: &[u8]) -> Result<Found, String> {
    let elf = Elf::parse(bytes).map_err(|e| format!("not an ELF file the recorder can read ({e})"))?;
    let relocatable = elf.header.e_type == goblin::elf::header::ET_DYN;
    let relocs = if relocatable { relocations(&elf) } else { HashMap::new() };
    let image = Image { bytes, elf: &elf, relocs };
    let mut by_addr: Vec<Method> = Vec::new();
    let mut types: HashMap<&str, Option<Vec<(String, u64)>>> = HashMap::new();
    for &(ty, method, role) in METHODS {
        let defs = types.entry(ty).or_insert_with(|| image.methods_of(ty));
        let Some(defs) = defs else { continue };
        let Some(&(_, vaddr)) = defs.iter().find(|(n, _)| n == method) else { continue };
        let name = format!("{ty}.{method}");
        match by_addr.iter_mut().find(|m| m.vaddr == vaddr) {
            Some(m) if m.role == role => m.name = format!("{}/{method}", m.name),
            Some(m) => return Err(format!("{name} and {} share the function at {vaddr:#x} but do different things to the lock", m.name)),
            None => {
                let offset = file_offset(&elf, vaddr).ok_or_else(|| format!("{name} at {vaddr:#x} lies in no loaded segment"))?;
                by_addr.push(Method { name, role, vaddr, offset });
            }
        }
    }
    if !by_addr.iter().any(|m| m.role == Role::Acquire) {
        return Err("no type spec of _thread.lock with an acquire method was found in its data".into());
    }
    let py_true = [(&elf.dynsyms, &elf.dynstrtab), (&elf.syms, &elf.strtab)]
        .into_iter()
        .find_map(|(syms, strs)| syms.iter().find(|s| s.st_value != 0 && strs.get_at(s.st_name) == Some("_Py_TrueStruct")).map(|s| s.st_value))
        .ok_or("it defines no _Py_TrueStruct (Py_True), which tells a taken lock from one not taken")?;
    Ok(Found { methods: by_addr, py_true, relocatable })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of local symbol `name` in the file's `.symtab`.
    fn symbol(bytes: &[u8], name: &str) -> Option<u64> {
        let elf = Elf::parse(bytes).ok()?;
        elf.syms.iter().find(|s| elf.strtab.get_at(s.st_name) == Some(name)).map(|s| s.st_value)
    }

    /// On the interpreters built with their symbol tables here (pyenv's shared libpython 3.11, a
    /// position-independent file whose pointers are relocations; 3.13 and 3.13t, PIE executables),
    /// the functions found from the type specs are the methods' own C functions by name.
    #[test]
    fn the_methods_found_from_the_data_are_the_named_functions() {
        let home = std::env::var("HOME").unwrap_or_default();
        let files = [
            format!("{home}/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0"),
            format!("{home}/.cache/threadradar/pythons/3.13/bin/python3.13"),
            format!("{home}/.cache/threadradar/pythons/3.13t/bin/python3.13t"),
        ];
        let expected = [
            ("_thread.lock.acquire/acquire_lock/__enter__", "lock_PyThread_acquire_lock"),
            ("_thread.lock.release/release_lock/__exit__", "lock_PyThread_release_lock"),
            ("_thread.RLock.acquire/__enter__", "rlock_acquire"),
            ("_thread.RLock.release/__exit__", "rlock_release"),
            ("_thread.RLock._release_save", "rlock_release_save"),
            ("_thread.RLock._acquire_restore", "rlock_acquire_restore"),
        ];
        let mut checked = 0;
        for f in &files {
            let Ok(bytes) = std::fs::read(f) else { continue };
            let found = methods_in(&bytes).unwrap_or_else(|e| panic!("{f}: {e}"));
            assert_eq!(found.relocatable, true, "{f}");
            assert_eq!(Some(found.py_true), symbol(&bytes, "_Py_TrueStruct"), "{f}");
            for (name, func) in expected {
                let m = found.methods.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("{f}: no {name} in {:?}", found.methods));
                assert_eq!(Some(m.vaddr), symbol(&bytes, func), "{f}: {name} is {func}");
            }
            assert_eq!(found.methods.len(), expected.len(), "{f}: {:?}", found.methods);
            checked += 1;
        }
        assert!(checked > 0 || std::env::var_os("THREADRADAR_NO_SKIPS").is_none(), "none of {files:?} is here");
    }
}
