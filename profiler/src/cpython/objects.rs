//! Python objects in another process's memory: strings, bytes, ints, tuples, dicts, module
//! globals and instance attributes, laid out as the interpreter's debug offsets say (or the
//! built-in 3.11/3.12 ones), plus the few facts the offsets leave out (noted where used).

use super::offsets::DebugOffsets;
use anyhow::{bail, Result};
use remoteprocess::ProcessMemory;

/// Regions per `process_vm_readv` (the kernel's `UIO_MAXIOV`).
const IOV_MAX: usize = 1024;
/// Regions of [`Memory::bytes_many`] at most this far apart are read as one span: copying the
/// bytes between them costs less than another region's page lookup.
const MERGE_GAP: usize = 2048;
/// The longest such span.
const MAX_SPAN: usize = 1 << 20;

/// Longest string read (names and paths).
const MAX_STRING: usize = 4096;
/// Most entries read from one dict, items from one tuple.
const MAX_ENTRIES: usize = 1 << 16;

/// `Py_TPFLAGS_INLINE_VALUES`, `Py_TPFLAGS_MANAGED_DICT` (Include/object.h, 3.13).
const TPFLAGS_INLINE_VALUES: u64 = 1 << 2;
const TPFLAGS_MANAGED_DICT: u64 = 1 << 4;

/// Bytes between the end of `PyTypeObject` and `PyHeapTypeObject.ht_cached_keys`: the slot
/// tables of the stable ABI (`as_async` 4, `as_number` 36, `as_mapping` 3, `as_sequence` 10,
/// `as_buffer` 2 pointers) and `ht_name`, `ht_slots`, `ht_qualname`.
const HEAP_TYPE_CACHED_KEYS_AFTER_TYPE: usize = (4 + 36 + 3 + 10 + 2 + 3) * 8;

/// A string's `state` bits (`PyASCIIObject`): `interned` (2 bits, or a whole byte on
/// free-threaded 3.14+ builds, where it is accessed atomically), then `kind` (3 bits),
/// `compact`, `ascii`. `kind_shift` is where `kind` starts.
fn string_kind(state: u32, kind_shift: u32) -> (u32, bool, bool) {
    ((state >> kind_shift) & 7, state & (1 << (kind_shift + 3)) != 0, state & (1 << (kind_shift + 4)) != 0)
}

pub struct Memory {
    process: remoteprocess::Process,
    layout: Option<DebugOffsets>,
}

impl Memory {
    pub fn new(process: remoteprocess::Process) -> Memory {
        Memory { process, layout: None }
    }

    pub fn with_layout(self, layout: DebugOffsets) -> Memory {
        Memory { layout: Some(layout), ..self }
    }

    pub fn layout(&self) -> &DebugOffsets {
        self.layout.as_ref().expect("Memory::with_layout is called before any object is read")
    }

    pub fn process(&self) -> &remoteprocess::Process {
        &self.process
    }

    pub fn bytes(&self, addr: usize, len: usize) -> Result<Vec<u8>> {
        if addr == 0 {
            bail!("NULL pointer");
        }
        let mut buf = vec![0u8; len];
        self.process.read(addr, &mut buf)?;
        Ok(buf)
    }

    /// Several regions in as few system calls as possible, each region's bytes in order (`None`
    /// where it could not be read) and the system calls made (see [`Memory::bytes_many_into`]).
    pub fn bytes_many(&self, regions: &[(usize, usize)]) -> (Vec<Option<Vec<u8>>>, usize) {
        let mut buf = Vec::new();
        let (at, calls) = self.bytes_many_into(regions, &mut buf);
        (at.iter().zip(regions).map(|(o, &(_, len))| o.map(|o| buf[o..o + len].to_vec())).collect(), calls)
    }

    /// Several regions in as few system calls as possible, into `buf` (its old contents are
    /// dropped, its allocation kept): each region's offset in `buf` (`None` where it could not be
    /// read) and the system calls made.
    ///
    /// Regions at most [`MERGE_GAP`] bytes apart are read as one span (the kernel pins every
    /// region's pages anew: a thousand thread states, allocated one after another, cost a
    /// thousand lookups as regions and a few dozen pages as spans). A span that cannot be read
    /// whole (it crosses an unmapped page) is read region by region.
    pub fn bytes_many_into(&self, regions: &[(usize, usize)], buf: &mut Vec<u8>) -> (Vec<Option<usize>>, usize) {
        let mut order: Vec<usize> = (0..regions.len()).filter(|&i| regions[i].0 != 0).collect();
        order.sort_unstable_by_key(|&i| regions[i].0);
        // Spans: (start, end, first and last index into `order`).
        let mut spans: Vec<(usize, usize, usize, usize)> = Vec::new();
        for (k, &i) in order.iter().enumerate() {
            let (addr, len) = regions[i];
            match spans.last_mut() {
                Some(s) if addr <= s.1 + MERGE_GAP && addr + len - s.0 <= MAX_SPAN => {
                    s.1 = s.1.max(addr + len);
                    s.3 = k;
                }
                _ => spans.push((addr, addr + len, k, k)),
            }
        }
        let span_regions: Vec<(usize, usize)> = spans.iter().map(|s| (s.0, s.1 - s.0)).collect();
        let (got, mut calls) = self.bytes_batched_into(&span_regions, buf);
        let mut out: Vec<Option<usize>> = vec![None; regions.len()];
        let mut retry: Vec<usize> = Vec::new();
        for (s, g) in spans.iter().zip(got) {
            let members = &order[s.2..=s.3];
            match g {
                Some(o) => members.iter().for_each(|&i| out[i] = Some(o + regions[i].0 - s.0)),
                None if members.len() > 1 => retry.extend_from_slice(members),
                None => {}
            }
        }
        if !retry.is_empty() {
            let mut more = Vec::new();
            let (each, n) = self.bytes_batched_into(&retry.iter().map(|&i| regions[i]).collect::<Vec<_>>(), &mut more);
            calls += n;
            let base = buf.len();
            buf.extend_from_slice(&more);
            for (&i, g) in retry.iter().zip(each) {
                out[i] = g.map(|o| base + o);
            }
        }
        (out, calls)
    }

    /// Regions as given, each region's bytes (`None` where it could not be read) and the system
    /// calls made (see [`Memory::bytes_batched_into`]).
    #[cfg(test)]
    fn bytes_batched(&self, regions: &[(usize, usize)]) -> (Vec<Option<Vec<u8>>>, usize) {
        let mut buf = Vec::new();
        let (at, calls) = self.bytes_batched_into(regions, &mut buf);
        (at.iter().zip(regions).map(|(o, &(_, len))| o.map(|o| buf[o..o + len].to_vec())).collect(), calls)
    }

    /// Regions as given, into `buf` one after another, in as few system calls as possible: one
    /// `process_vm_readv` takes up to [`IOV_MAX`] regions. The kernel stops at the first region
    /// it cannot read, so a short answer leaves that region and the ones after it unread in this
    /// call; they are tried again from the next one on. Returns each region's offset in `buf`
    /// (`None` where it could not be read) and the system calls made.
    fn bytes_batched_into(&self, regions: &[(usize, usize)], buf: &mut Vec<u8>) -> (Vec<Option<usize>>, usize) {
        let mut offsets = Vec::with_capacity(regions.len());
        let mut total = 0;
        for &(_, len) in regions {
            offsets.push(total);
            total += len;
        }
        // Only grown: a region that could not be read is `None`, so what the buffer held before
        // is never taken for it (zeroing 700 kB a tick cost 7 % of a 1 000-thread recording).
        if buf.len() < total {
            buf.resize(total, 0);
        } else {
            buf.truncate(total);
        }
        let mut out: Vec<Option<usize>> = Vec::with_capacity(regions.len());
        let mut calls = 0;
        let pid = self.process.pid as libc::pid_t;
        while out.len() < regions.len() {
            let first = out.len();
            let batch = &regions[first..(first + IOV_MAX).min(regions.len())];
            if batch[0].0 == 0 {
                out.push(None);
                continue;
            }
            let base = buf.as_mut_ptr();
            // SAFETY: every offset + len is within `buf` (`total` bytes, sized above).
            let local: Vec<libc::iovec> =
                batch.iter().enumerate().map(|(k, &(_, len))| libc::iovec { iov_base: unsafe { base.add(offsets[first + k]) }.cast(), iov_len: len }).collect();
            let remote: Vec<libc::iovec> = batch.iter().map(|&(addr, len)| libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len }).collect();
            calls += 1;
            // SAFETY: `local` describes disjoint parts of `buf`, writable for their iov_len bytes
            // and alive (not reallocated: `buf` is not touched) until after the call; `remote`
            // only names addresses in the target, which the kernel checks (a bad one ends the
            // transfer, it is never dereferenced here). Both arrays have `batch.len()` ≤ IOV_MAX
            // entries.
            let got = unsafe { libc::process_vm_readv(pid, local.as_ptr(), local.len() as libc::c_ulong, remote.as_ptr(), remote.len() as libc::c_ulong, 0) };
            let mut left = if got < 0 { 0 } else { got as usize };
            for (k, &(_, len)) in batch.iter().enumerate() {
                if left >= len {
                    left -= len;
                    out.push(Some(offsets[first + k]));
                } else {
                    break;
                }
            }
            if out.len() == first {
                tracing::debug!(pid, got, errno = std::io::Error::last_os_error().raw_os_error(), regions = batch.len(), first = batch[0].0, len = batch[0].1, "a batched read stopped at its first region");
                // The first region itself could not be read: give it up and go on after it.
                out.push(None);
            }
        }
        (out, calls)
    }

    pub fn u64(&self, addr: usize) -> Result<u64> {
        Ok(u64::from_ne_bytes(self.bytes(addr, 8)?.try_into().unwrap()))
    }

    pub fn ptr(&self, addr: usize) -> Result<usize> {
        Ok(self.u64(addr)? as usize)
    }

    pub fn i32(&self, addr: usize) -> Result<i32> {
        Ok(i32::from_ne_bytes(self.bytes(addr, 4)?.try_into().unwrap()))
    }

    /// A `str` object's text.
    pub fn string(&self, obj: usize) -> Result<String> {
        let o = self.layout();
        let state = self.i32(obj + o.unicode_state as usize)? as u32;
        let length = self.u64(obj + o.unicode_length as usize)? as usize;
        if length > MAX_STRING {
            bail!("string of {length} characters");
        }
        let (kind, compact, ascii) = string_kind(state, o.unicode_kind_shift);
        let kind = kind as usize;
        if !matches!(kind, 1 | 2 | 4) {
            bail!("not a string (kind {kind})");
        }
        let ascii_size = o.unicode_ascii_size as usize;
        let data = match (compact, ascii) {
            (true, true) => obj + ascii_size,
            // PyCompactUnicodeObject: PyASCIIObject, utf8_length, utf8 (3.11: and wstr_length).
            (true, false) => obj + o.unicode_compact_size as usize,
            // PyUnicodeObject: its last field points at the data.
            (false, _) => self.ptr(obj + o.unicode_size as usize - 8)?,
        };
        let raw = self.bytes(data, length * kind)?;
        let text = match kind {
            1 => raw.iter().map(|&b| b as char).collect(),
            2 => {
                let units: Vec<u16> = raw.chunks_exact(2).map(|c| u16::from_ne_bytes([c[0], c[1]])).collect();
                String::from_utf16_lossy(&units)
            }
            _ => raw.chunks_exact(4).map(|c| char::from_u32(u32::from_ne_bytes(c.try_into().unwrap())).unwrap_or(char::REPLACEMENT_CHARACTER)).collect(),
        };
        Ok(text)
    }

    /// A `bytes` object's contents.
    pub fn bytes_object(&self, obj: usize) -> Result<Vec<u8>> {
        let o = self.layout();
        let size = self.u64(obj + o.bytes_size as usize)? as usize;
        if size > 1 << 24 {
            bail!("bytes of {size} bytes");
        }
        self.bytes(obj + o.bytes_data as usize, size)
    }

    /// [`Memory::long`] of many objects: each one's tag and three digits in one batched read,
    /// those it cannot tell one by one.
    pub fn longs_many(&self, objs: &[usize]) -> Vec<Option<u64>> {
        let o = self.layout();
        let len = o.long_digits as usize + 12;
        let mut buf = Vec::new();
        let (at, _) = self.bytes_many_into(&objs.iter().map(|&a| (a, len)).collect::<Vec<_>>(), &mut buf);
        objs.iter()
            .zip(at)
            .map(|(&obj, at)| {
                let Some(h) = at else { return self.long(obj).ok() };
                let tag = |t: usize| Ok(u64::from_ne_bytes(buf[h + t..h + t + 8].try_into().unwrap()));
                let digits = |n: usize| Ok(buf[h + o.long_digits as usize..h + o.long_digits as usize + n].to_vec());
                self.long_from(tag, digits).ok()
            })
            .collect()
    }

    /// A non-negative `int` that fits 64 bits (thread ids).
    pub fn long(&self, obj: usize) -> Result<u64> {
        let o = self.layout();
        self.long_from(|t| self.u64(obj + t), |n| self.bytes(obj + o.long_digits as usize, n))
    }

    /// [`Memory::long`] from its tag (`tag(offset)`) and digits (`digits(bytes)`).
    fn long_from(&self, tag: impl Fn(usize) -> Result<u64>, read_digits: impl Fn(usize) -> Result<Vec<u8>>) -> Result<u64> {
        let o = self.layout();
        let tag = tag(o.long_tag as usize)?;
        let n = if o.long_is_tag {
            // lv_tag: number of digits << 3 | sign (0 positive, 1 zero, 2 negative).
            let (digits, sign) = ((tag >> 3) as usize, tag & 3);
            if sign == 1 {
                return Ok(0);
            }
            if sign != 0 {
                bail!("not a thread id");
            }
            digits
        } else {
            // 3.11: ob_size, the number of digits with the int's sign (0 for zero).
            let size = tag as i64;
            if size < 0 {
                bail!("not a thread id");
            }
            size as usize
        };
        if n > 3 {
            bail!("not a thread id");
        }
        let raw = read_digits(n * 4)?;
        let mut value: u64 = 0;
        for (i, c) in raw.chunks_exact(4).enumerate() {
            value |= u64::from(u32::from_ne_bytes(c.try_into().unwrap()) & 0x3fff_ffff) << (30 * i);
        }
        Ok(value)
    }

    pub fn tuple_items(&self, obj: usize) -> Result<Vec<usize>> {
        let o = self.layout();
        let n = self.u64(obj + o.tuple_size as usize)? as usize;
        if n > MAX_ENTRIES {
            bail!("tuple of {n} items");
        }
        let raw = self.bytes(obj + o.tuple_items as usize, n * 8)?;
        Ok(raw.chunks_exact(8).map(|c| usize::from_ne_bytes(c.try_into().unwrap())).collect())
    }

    /// The `tp_name` of an object's type (for a class defined in Python, its `__name__`).
    pub fn type_name(&self, obj: usize) -> Result<String> {
        let ty = self.ptr(obj + self.layout().object_type as usize)?;
        self.type_object_name(ty)
    }

    /// The `tp_name` of the type object at `ty`.
    pub fn type_object_name(&self, ty: usize) -> Result<String> {
        let name = self.ptr(ty + self.layout().type_name as usize)?;
        let raw = self.bytes(name, 256)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
        Ok(String::from_utf8_lossy(&raw[..end]).into_owned())
    }

    /// `(key, value)` pointers of a dict keys object's live entries, in insertion order;
    /// `values` (a split dict's values array) supplies the values when given.
    fn keys_entries(&self, keys: usize, values: Option<usize>) -> Result<Vec<(usize, usize)>> {
        // PyDictKeysObject (3.13): dk_refcnt; dk_log2_size, dk_log2_index_bytes, dk_kind
        // (+ dk_mutex on free-threaded builds), dk_version; dk_usable; dk_nentries; indices.
        let head = self.bytes(keys, 32)?;
        let log2_index_bytes = head[9] as u32;
        let kind = head[10];
        let nentries = i64::from_ne_bytes(head[24..32].try_into().unwrap());
        if log2_index_bytes > 24 || !(0..=MAX_ENTRIES as i64).contains(&nentries) || kind > 2 {
            bail!("not a dict keys object");
        }
        let n = nentries as usize;
        let entries = keys + 32 + (1usize << log2_index_bytes);
        // DICT_KEYS_GENERAL: (hash, key, value); unicode and split keys: (key, value).
        let (size, key_at) = if kind == 0 { (24, 8) } else { (16, 0) };
        let raw = self.bytes(entries, n * size)?;
        let vals = match values {
            // PyDictValues (3.13): capacity, size, embedded, valid (4 bytes, padded to 8), values[].
            Some(v) if self.layout().header.minor() >= 13 => {
                let capacity = self.bytes(v, 1)?[0] as usize;
                Some(self.bytes(v + 8, n.min(capacity) * 8)?)
            }
            // 3.11, 3.12: the values themselves, one per entry of the shared keys.
            Some(v) => Some(self.bytes(v, n * 8)?),
            None => None,
        };
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let e = &raw[i * size..(i + 1) * size];
            let key = usize::from_ne_bytes(e[key_at..key_at + 8].try_into().unwrap());
            let value = match &vals {
                Some(v) => v.get(i * 8..i * 8 + 8).map_or(0, |b| usize::from_ne_bytes(b.try_into().unwrap())),
                None => usize::from_ne_bytes(e[key_at + 8..key_at + 16].try_into().unwrap()),
            };
            if key != 0 && value != 0 {
                out.push((key, value));
            }
        }
        Ok(out)
    }

    pub fn dict_items(&self, dict: usize) -> Result<Vec<(usize, usize)>> {
        let o = self.layout();
        let keys = self.ptr(dict + o.dict_keys as usize)?;
        let values = self.ptr(dict + o.dict_values as usize)?;
        self.keys_entries(keys, (values != 0).then_some(values))
    }

    fn find_str(&self, entries: &[(usize, usize)], name: &str) -> Option<usize> {
        entries.iter().find(|(k, _)| self.str_is(*k, name).unwrap_or_else(|| self.string(*k).is_ok_and(|s| s == name))).map(|&(_, v)| v)
    }

    /// Whether the `str` at `obj` is `name`, from one read of its header and inline text when it
    /// is a compact ASCII string (dict keys and identifiers nearly always are); `None` when that
    /// read cannot tell (another kind of string, or the read failed), and [`Memory::string`] must.
    /// A lookup in `sys.modules` compares a hundred keys or more: one read each instead of three.
    fn str_is(&self, obj: usize, name: &str) -> Option<bool> {
        let o = self.layout();
        let (state_at, length_at, ascii_size) = (o.unicode_state as usize, o.unicode_length as usize, o.unicode_ascii_size as usize);
        if ascii_size == 0 || state_at + 4 > ascii_size || length_at + 8 > ascii_size {
            return None;
        }
        let raw = self.bytes(obj, ascii_size + name.len()).ok()?;
        let state = u32::from_ne_bytes(raw[state_at..state_at + 4].try_into().unwrap());
        let length = u64::from_ne_bytes(raw[length_at..length_at + 8].try_into().unwrap()) as usize;
        let (kind, compact, ascii) = string_kind(state, o.unicode_kind_shift);
        if kind != 1 || !compact || !ascii {
            return None;
        }
        Some(length == name.len() && &raw[ascii_size..] == name.as_bytes())
    }

    /// `dict[name]` for a string key.
    pub fn dict_get(&self, dict: usize, name: &str) -> Result<Option<usize>> {
        Ok(self.find_str(&self.dict_items(dict)?, name))
    }

    /// A module's `__dict__` (`PyModuleObject.md_dict`, right after the object header).
    pub fn module_dict(&self, module: usize) -> Result<usize> {
        self.ptr(module + self.layout().object_size as usize)
    }

    /// The shared keys of a heap type's instances (`PyHeapTypeObject.ht_cached_keys`).
    fn cached_keys(&self, ty: usize) -> Result<usize> {
        let o = self.layout();
        let at = o.heap_type_cached_keys.map_or(o.type_size as usize + HEAP_TYPE_CACHED_KEYS_AFTER_TYPE, |a| a as usize);
        self.ptr(ty + at)
    }

    /// [`Memory::attribute`] of many objects in a few batched reads (a thousand `Thread` objects'
    /// `_name`: about 8 000 reads one by one, 31 ms of a first tick): the objects' headers and
    /// value slots in one call each, the key's slot found once per class in its shared keys. An
    /// object this cannot answer for (a dict instead of values, a slot not filled) is read by
    /// [`Memory::attribute`].
    pub fn attributes_many(&self, objs: &[usize], name: &str) -> Vec<Option<usize>> {
        let o = self.layout();
        let minor = o.header.minor();
        let object_size = o.object_size as usize;
        // From 4 words before the object (3.11/3.12 keep values and dict there) to the first
        // word after its header (3.13+: the inline values' capacity and `valid` flag).
        let (before, len) = (32usize, 32 + object_size + 8);
        let mut buf = Vec::new();
        let regions: Vec<(usize, usize)> = objs.iter().map(|&a| if a < before { (0, len) } else { (a - before, len) }).collect();
        let (at, _) = self.bytes_many_into(&regions, &mut buf);
        let word = |o: usize, off: usize| usize::from_ne_bytes(buf[o + off..o + off + 8].try_into().unwrap());
        let mut classes: rustc_hash::FxHashMap<usize, Option<(u64, usize)>> = Default::default();
        // Each object's value slot, or None to read it alone.
        let slots: Vec<Option<usize>> = objs
            .iter()
            .zip(&at)
            .map(|(&obj, at)| {
                let h = (*at)?;
                let ty = word(h, before + o.object_type as usize);
                let class = *classes.entry(ty).or_insert_with(|| {
                    let flags = self.u64(ty + o.type_flags as usize).ok()?;
                    let index = self.shared_key_index(self.cached_keys(ty).ok()?, name).ok()??;
                    Some((flags, index))
                });
                let (flags, index) = class?;
                if minor >= 13 {
                    let head = &buf[h + before + object_size..h + before + object_size + 8];
                    let (capacity, valid) = (head[0] as usize, head[3] != 0);
                    (flags & TPFLAGS_INLINE_VALUES != 0 && valid && index < capacity).then(|| obj + object_size + 8 + index * 8)
                } else if flags & TPFLAGS_MANAGED_DICT == 0 {
                    None
                } else {
                    let values = if minor == 12 { Some(word(h, 8)).filter(|w| w & 1 != 0).map(|w| w + 1) } else { Some(word(h, 0)).filter(|&v| v != 0) };
                    values.map(|v| v + index * 8)
                }
            })
            .collect();
        let regions: Vec<(usize, usize)> = slots.iter().map(|s| (s.unwrap_or(0), 8)).collect();
        let mut values = Vec::new();
        let (got, _) = self.bytes_many_into(&regions, &mut values);
        objs.iter()
            .zip(got)
            .map(|(&obj, g)| match g.map(|o| usize::from_ne_bytes(values[o..o + 8].try_into().unwrap())) {
                Some(v) if v != 0 => Some(v),
                _ => self.attribute(obj, name).ok().flatten(),
            })
            .collect()
    }

    /// The index of string key `name` among a shared keys object's entries (its slot in each
    /// instance's values), `None` when it is not one of them.
    fn shared_key_index(&self, keys: usize, name: &str) -> Result<Option<usize>> {
        let head = self.bytes(keys, 32)?;
        let log2_index_bytes = head[9] as u32;
        let kind = head[10];
        let nentries = i64::from_ne_bytes(head[24..32].try_into().unwrap());
        // Shared keys are unicode keys: (key, value) entries.
        if log2_index_bytes > 24 || !(0..=MAX_ENTRIES as i64).contains(&nentries) || kind == 0 || kind > 2 {
            bail!("not a shared keys object");
        }
        let n = nentries as usize;
        let raw = self.bytes(keys + 32 + (1usize << log2_index_bytes), n * 16)?;
        Ok((0..n).find(|&i| {
            let key = usize::from_ne_bytes(raw[i * 16..i * 16 + 8].try_into().unwrap());
            key != 0 && self.str_is(key, name).unwrap_or_else(|| self.string(key).is_ok_and(|s| s == name))
        }))
    }

    /// [`Memory::string`] of many objects: compact ASCII strings of up to 120 characters from one
    /// batched read, others one by one.
    pub fn strings_many(&self, objs: &[Option<usize>]) -> Vec<Option<String>> {
        const INLINE: usize = 120;
        let o = self.layout();
        let (state_at, length_at, ascii_size) = (o.unicode_state as usize, o.unicode_length as usize, o.unicode_ascii_size as usize);
        let mut buf = Vec::new();
        let batched = ascii_size != 0 && state_at + 4 <= ascii_size && length_at + 8 <= ascii_size;
        let regions: Vec<(usize, usize)> = objs.iter().map(|s| (if batched { s.unwrap_or(0) } else { 0 }, ascii_size + INLINE)).collect();
        let (at, _) = self.bytes_many_into(&regions, &mut buf);
        objs.iter()
            .zip(at)
            .map(|(&obj, at)| {
                let obj = obj?;
                if let Some(h) = at {
                    let raw = &buf[h..h + ascii_size + INLINE];
                    let state = u32::from_ne_bytes(raw[state_at..state_at + 4].try_into().unwrap());
                    let length = u64::from_ne_bytes(raw[length_at..length_at + 8].try_into().unwrap()) as usize;
                    let (kind, compact, ascii) = string_kind(state, o.unicode_kind_shift);
                    if kind == 1 && compact && ascii && length <= INLINE {
                        return Some(raw[ascii_size..ascii_size + length].iter().map(|&b| b as char).collect());
                    }
                }
                self.string(obj).ok()
            })
            .collect()
    }

    /// An instance attribute of an object of a Python class: from its inline or split values
    /// (keys shared through the class's `ht_cached_keys`) while there are any, else from its
    /// managed dict. Where they are differs by version (Include/internal/pycore_object.h):
    /// 3.13 keeps the values after the object and the dict pointer before it (-3 words, -1 on
    /// free-threaded builds); 3.12 one tagged word at -3 (the values pointer minus one, so odd,
    /// or the dict); 3.11 the values pointer at -4 words and the dict at -3.
    pub fn attribute(&self, obj: usize, name: &str) -> Result<Option<usize>> {
        let o = self.layout();
        let ty = self.ptr(obj + o.object_type as usize)?;
        let flags = self.u64(ty + o.type_flags as usize)?;
        let minor = o.header.minor();
        if minor < 13 {
            if flags & TPFLAGS_MANAGED_DICT == 0 {
                return Ok(None);
            }
            let (values, dict) = if minor == 12 {
                let word = self.ptr(obj - 24)?;
                // `_PyDictOrValues_SetValues` stores the values pointer minus one.
                if word & 1 != 0 {
                    (word + 1, 0)
                } else {
                    (0, word)
                }
            } else {
                (self.ptr(obj - 32)?, self.ptr(obj - 24)?)
            };
            if values != 0 {
                let entries = self.keys_entries(self.cached_keys(ty)?, Some(values))?;
                return Ok(self.find_str(&entries, name));
            }
            if dict != 0 {
                return self.dict_get(dict, name);
            }
            return Ok(None);
        }
        if flags & TPFLAGS_INLINE_VALUES != 0 {
            let values = obj + o.object_size as usize;
            let valid = self.bytes(values, 4)?[3] != 0;
            if valid {
                let entries = self.keys_entries(self.cached_keys(ty)?, Some(values))?;
                if let Some(v) = self.find_str(&entries, name) {
                    return Ok(Some(v));
                }
            }
        }
        if flags & TPFLAGS_MANAGED_DICT != 0 {
            // MANAGED_DICT_OFFSET (Include/internal/pycore_object.h): the pre-header word before
            // the object, -1 pointer on free-threaded builds and -3 otherwise.
            let back = if o.header.free_threaded { 8 } else { 24 };
            let dict = self.ptr(obj - back)?;
            if dict != 0 {
                return self.dict_get(dict, name);
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regions of this process read in one call each thousand; an unreadable one costs only
    /// itself.
    #[test]
    fn bytes_many_reads_regions_in_batches() {
        let data: Vec<[u8; 16]> = (0..2500u32).map(|i| { let mut b = [0u8; 16]; b[..4].copy_from_slice(&i.to_ne_bytes()); b }).collect();
        let mem = Memory::new(remoteprocess::Process::new(std::process::id() as remoteprocess::Pid).unwrap());
        let mut regions: Vec<(usize, usize)> = data.iter().map(|b| (b.as_ptr() as usize, 16)).collect();
        let (got, calls) = mem.bytes_batched(&regions);
        assert_eq!(calls, 3);
        for (i, g) in got.iter().enumerate() {
            assert_eq!(&g.as_ref().unwrap()[..4], &(i as u32).to_ne_bytes());
        }
        // Page 1 of the address space is never mapped.
        regions[10] = (4096, 16);
        let (got, calls) = mem.bytes_batched(&regions);
        assert!(got[10].is_none() && got[9].is_some() && got[11].is_some() && got[2499].is_some());
        assert_eq!(calls, 5, "10 in the first call, the bad one alone, then the rest in three");
    }

    /// Regions close together are read as one span, in any order and overlapping; a span that
    /// crosses an unmapped page falls back to its regions, and only the unreadable one is lost.
    #[test]
    fn bytes_many_reads_neighbouring_regions_as_one_span() {
        let data: Vec<u8> = (0..64 * 1024u32).map(|i| (i % 251) as u8).collect();
        let mem = Memory::new(remoteprocess::Process::new(std::process::id() as remoteprocess::Pid).unwrap());
        let base = data.as_ptr() as usize;
        let regions: Vec<(usize, usize)> = (0..500).rev().map(|k| (base + k * 120, 200)).collect();
        let (got, calls) = mem.bytes_many(&regions);
        assert_eq!(calls, 1, "one span for regions 120 bytes apart");
        for (&(addr, len), g) in regions.iter().zip(&got) {
            assert_eq!(g.as_deref(), Some(&data[addr - base..addr - base + len]));
        }
        // An unmapped page between two readable regions.
        let page = 4096;
        // SAFETY: a fresh anonymous mapping of three pages, the middle one then unmapped; it is
        // only read through process_vm_readv (which checks it) and unmapped at the end.
        let m = unsafe { libc::mmap(std::ptr::null_mut(), 3 * page, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) } as usize;
        assert_ne!(m as *mut libc::c_void, libc::MAP_FAILED);
        unsafe { libc::munmap((m + page) as *mut libc::c_void, page) };
        let regions = [(m + page - 64, 32), (m + page - 16, 32), (m + 2 * page + 8, 32)];
        let (got, calls) = mem.bytes_many(&regions);
        assert!(got[0].is_some() && got[1].is_none() && got[2].is_some(), "{got:?}");
        assert!(calls >= 2, "the span failed and was read region by region");
        unsafe {
            libc::munmap(m as *mut libc::c_void, page);
            libc::munmap((m + 2 * page) as *mut libc::c_void, page);
        }
    }
}
