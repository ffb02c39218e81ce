//! What the JSON importers (speedscope, Firefox Profiler / gecko) share: a file is deserialized
//! from a reader into typed values, never into a `serde_json::Value` tree (which costs 32 bytes
//! per number and more per object: about ten times the file), and whatever it claims is capped
//! while it is read:
//!
//! - [`Guard`] watches the bytes as serde_json takes them: a string longer than a name may be
//!   (`Limits::name_bytes`, as written, escapes included) or arrays and objects nested deeper than
//!   [`MAX_NESTING`] stop the read before serde_json buffers them;
//! - [`Col`] is a table column or a list, capped at its kind's limit ([`Cap`]) as its elements
//!   arrive, and lenient like the importers always were: a column that is not an array reads as
//!   empty (fxprof leaves out columns whose every value is the same);
//! - the scalar types ([`Ix`], [`Num`], [`Str`], [`Id`], [`Flag`], [`Count`], [`Line`]) take a value
//!   of the JSON type they expect and read any other as absent, without holding it;
//! - [`fail`] lets a deserializer stop with an [`ImportError`] (a cap, a profile limit): the
//!   sentence is kept aside and returned instead of serde_json's.

use super::{bounded, Ctx, ImportError, Limits};
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;
use std::io::{BufRead, Read};
use std::marker::PhantomData;

/// Arrays and objects nested deeper than this are not a profile (speedscope nests 4 deep,
/// the Firefox Profiler's format 6).
pub const MAX_NESTING: usize = 1_000;

/// What an import is reading: its limits, and the sentence that stopped it, if one did.
struct Reading {
    limits: Limits,
    ctx_path: std::path::PathBuf,
    stopped: Option<ImportError>,
}

thread_local! {
    static READING: RefCell<Option<Reading>> = const { RefCell::new(None) };
}

/// Stops the deserializer with `e`: the sentence is kept and returned by [`read`] in place of
/// serde_json's error.
pub fn fail<E: de::Error>(e: ImportError) -> E {
    READING.with(|r| {
        if let Some(r) = r.borrow_mut().as_mut() {
            r.stopped.get_or_insert(e);
        }
    });
    E::custom("stopped by a limit")
}

/// The limits of the import being read (the defaults outside one).
pub fn limits() -> Limits {
    READING.with(|r| r.borrow().as_ref().map_or_else(Limits::default, |r| r.limits))
}

/// Clears the thread's reading state when a read ends, also by a panic.
struct Scope;

impl Drop for Scope {
    fn drop(&mut self) {
        READING.with(|r| r.borrow_mut().take());
    }
}

/// Deserializes one JSON document from `reader` with `f` (which drives the deserializer), the
/// file's strings, nesting and columns capped; any error becomes one sentence.
pub fn read<R: BufRead, T>(reader: R, ctx: &Ctx, f: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::IoRead<&mut Guard<R>>>) -> Result<T, serde_json::Error>) -> Result<T, ImportError> {
    READING.with(|r| *r.borrow_mut() = Some(Reading { limits: ctx.limits, ctx_path: ctx.path.to_path_buf(), stopped: None }));
    let _scope = Scope;
    let mut guard = Guard::new(reader, ctx.limits.name_bytes);
    let result = {
        let mut de = serde_json::Deserializer::from_reader(&mut guard);
        f(&mut de).and_then(|v| de.end().map(|()| v))
    };
    let stopped = READING.with(|r| r.borrow_mut().as_mut().and_then(|r| r.stopped.take()));
    match result {
        Ok(v) => Ok(v),
        Err(_) if guard.hit.is_some() => {
            let (what, limit, next) = guard.hit.take().expect("checked");
            Err(ImportError::TooLarge { path: ctx.path.to_path_buf(), what, limit, next })
        }
        Err(_) if stopped.is_some() => Err(stopped.expect("checked")),
        Err(e) => Err(json_error(e, ctx)),
    }
}

/// serde_json's error as the importers' sentence: where it stopped, cut short when the file ends.
fn json_error(e: serde_json::Error, ctx: &Ctx) -> ImportError {
    let at = format!("line {} column {}", e.line(), e.column());
    if e.is_io() {
        return ImportError::Io { path: ctx.path.to_path_buf(), source: e.into() };
    }
    if e.is_eof() {
        ImportError::Truncated { path: ctx.path.to_path_buf(), format: ctx.format, at }
    } else {
        ImportError::Parse { path: ctx.path.to_path_buf(), format: ctx.format, at, detail: bounded(e.to_string()) }
    }
}

/// A parse error at `at` (e.g. `profile 2`), raised from inside a deserializer.
pub fn parse_error<E: de::Error>(format: &'static str, at: String, detail: String) -> E {
    let path = READING.with(|r| r.borrow().as_ref().map(|r| r.ctx_path.clone())).unwrap_or_default();
    fail(ImportError::Parse { path, format, at, detail: bounded(detail) })
}

/// The reader serde_json reads through: it follows the JSON text's strings and nesting byte by
/// byte and stops the read (an I/O error, which [`read`] turns into the limit's sentence) at a
/// string longer than `max_string` bytes or nesting deeper than [`MAX_NESTING`].
pub struct Guard<R> {
    inner: R,
    max_string: usize,
    in_string: bool,
    escaped: bool,
    string_len: usize,
    depth: usize,
    /// Bytes passed on.
    offset: u64,
    hit: Option<(String, String, &'static str)>,
}

impl<R> Guard<R> {
    fn new(inner: R, max_string: usize) -> Self {
        Guard { inner, max_string, in_string: false, escaped: false, string_len: 0, depth: 0, offset: 0, hit: None }
    }

    /// Follows `bytes`; the index of the first byte beyond a limit, if one is.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    continue;
                }
                self.string_len += 1;
                if self.string_len > self.max_string {
                    let at = self.offset + i as u64;
                    self.hit = Some((format!("the string ending at byte {at} is more than {} bytes long", self.max_string), format!("{} bytes", self.max_string), super::profile::NOT_A_PROFILE));
                    return Some(i);
                }
            } else {
                match b {
                    b'"' => {
                        self.in_string = true;
                        self.string_len = 0;
                    }
                    b'[' | b'{' => {
                        self.depth += 1;
                        if self.depth > MAX_NESTING {
                            let at = self.offset + i as u64;
                            self.hit = Some((format!("its arrays and objects are nested more than {MAX_NESTING} deep at byte {at}"), format!("{MAX_NESTING} levels"), super::profile::NOT_A_PROFILE));
                            return Some(i);
                        }
                    }
                    b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        None
    }
}

impl<R: BufRead> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.hit.is_some() {
            return Err(std::io::Error::other("a limit was hit"));
        }
        let avail = self.inner.fill_buf()?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        self.inner.consume(n);
        if let Some(i) = self.scan(&buf[..n]) {
            // The bytes before the one beyond the limit are passed on; the next read fails.
            self.offset += i as u64;
            return Ok(i);
        }
        self.offset += n as u64;
        Ok(n)
    }
}

/// What a [`Col`] holds, for its limit and its sentence.
pub trait Cap {
    /// The most elements, and the words for them (`rows in a samples table`).
    fn cap(limits: &Limits) -> (usize, &'static str, &'static str);
}

macro_rules! caps {
    ($($name:ident: |$l:ident| $cap:expr, $what:expr, $next:expr;)*) => {$(
        pub struct $name;
        impl Cap for $name {
            fn cap($l: &Limits) -> (usize, &'static str, &'static str) {
                ($cap, $what, $next)
            }
        }
    )*};
}

caps! {
    // A samples table's rows, and a speedscope profile's weights: each is at least one sample.
    Samples: |l| usize::try_from(l.samples).unwrap_or(usize::MAX), "rows in a samples table", super::profile::SHORTER;
    Stacks: |l| l.stacks, "rows in a stack table", super::profile::SPLIT;
    Frames: |l| l.frames, "rows in a frame or function table", super::profile::SPLIT;
    // Every frame has a name and a file.
    Strings: |l| l.frames.saturating_mul(2), "strings in a string table", super::profile::SPLIT;
    // CPython writes a few state markers per sample at most.
    Markers: |l| usize::try_from(l.samples.saturating_mul(4)).unwrap_or(usize::MAX), "markers in a thread", super::profile::SHORTER;
    Threads: |l| l.threads, "threads", super::profile::SPLIT;
    Categories: |l| l.frames, "categories", super::profile::NOT_A_PROFILE;
}

/// A column: the array's elements (at most `C`'s limit), or nothing for any other value.
pub struct Col<T, C>(pub Vec<T>, PhantomData<C>);

impl<T, C> Default for Col<T, C> {
    fn default() -> Self {
        Col(Vec::new(), PhantomData)
    }
}

impl<T, C> std::ops::Deref for Col<T, C> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<'de, T: Deserialize<'de>, C: Cap> Deserialize<'de> for Col<T, C> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T, C>(PhantomData<(T, C)>);
        impl<'de, T: Deserialize<'de>, C: Cap> Visitor<'de> for V<T, C> {
            type Value = Col<T, C>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let limits = limits();
                let (cap, what, next) = C::cap(&limits);
                let mut out = Vec::new();
                while let Some(x) = seq.next_element()? {
                    if out.len() >= cap {
                        let path = READING.with(|r| r.borrow().as_ref().map(|r| r.ctx_path.clone())).unwrap_or_default();
                        return Err(fail(ImportError::TooLarge { path, what: format!("it has more than {cap} {what}"), limit: format!("{cap} {what}"), next }));
                    }
                    out.push(x);
                }
                Ok(Col(out, PhantomData))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Col::default())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Col::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Col::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Col::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Col::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Col::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Col::default())
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A value read leniently: the JSON types it takes give it a value, any other (held nowhere) is
/// its `NONE`.
pub trait Lenient: Sized {
    const NONE: Self;
    fn from_u64(_: u64) -> Self {
        Self::NONE
    }
    fn from_i64(v: i64) -> Self {
        u64::try_from(v).map_or(Self::NONE, Self::from_u64)
    }
    fn from_f64(_: f64) -> Self {
        Self::NONE
    }
    fn from_str(_: &str) -> Self {
        Self::NONE
    }
    fn from_bool(_: bool) -> Self {
        Self::NONE
    }
}

struct LenientVisitor<T>(PhantomData<T>);

impl<'de, T: Lenient> Visitor<'de> for LenientVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok(T::from_u64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok(T::from_i64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<T, E> {
        Ok(T::from_f64(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<T, E> {
        Ok(T::from_str(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok(T::from_bool(v))
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok(T::NONE)
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok(T::NONE)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::NONE)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(T::NONE)
    }
}

macro_rules! lenient {
    ($($t:ty),*) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(LenientVisitor(PhantomData))
            }
        }
    )*};
}

/// An index into a table (a non-negative integer), in 4 bytes; anything else is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ix(u32);

impl Ix {
    pub fn get(self) -> Option<usize> {
        (self.0 != u32::MAX).then_some(self.0 as usize)
    }
}

impl Lenient for Ix {
    const NONE: Self = Ix(u32::MAX);
    fn from_u64(v: u64) -> Self {
        // An index this large is beyond every (capped) table: it reads as one that does not exist.
        Ix(v.min(u32::MAX as u64 - 1) as u32)
    }
}

/// A number (NaN, which JSON cannot write, when the value is not one), in 8 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Num(f64);

impl Num {
    pub fn get(self) -> Option<f64> {
        (!self.0.is_nan()).then_some(self.0)
    }
}

impl Lenient for Num {
    const NONE: Self = Num(f64::NAN);
    fn from_u64(v: u64) -> Self {
        Num(v as f64)
    }
    fn from_i64(v: i64) -> Self {
        Num(v as f64)
    }
    fn from_f64(v: f64) -> Self {
        Num(v)
    }
}

/// A string.
#[derive(Clone, Debug, Default)]
pub struct Str(pub Option<String>);

impl Str {
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl Lenient for Str {
    const NONE: Self = Str(None);
    fn from_str(v: &str) -> Self {
        Str(Some(v.to_string()))
    }
}

/// A number or a numeric string (pids and tids are either, depending on the writer).
#[derive(Clone, Copy, Debug, Default)]
pub struct Id(pub Option<u64>);

impl Lenient for Id {
    const NONE: Self = Id(None);
    fn from_u64(v: u64) -> Self {
        Id(Some(v))
    }
    fn from_str(v: &str) -> Self {
        Id(v.parse().ok())
    }
}

/// A boolean.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flag(pub Option<bool>);

impl Lenient for Flag {
    const NONE: Self = Flag(None);
    fn from_bool(v: bool) -> Self {
        Flag(Some(v))
    }
}

/// A positive integer (a sample's weight); 0 when absent or not one.
#[derive(Clone, Copy, Debug, Default)]
pub struct Count(pub u64);

impl Lenient for Count {
    const NONE: Self = Count(0);
    fn from_u64(v: u64) -> Self {
        Count(v)
    }
}

/// A line number (a non-negative integer).
#[derive(Clone, Copy, Debug, Default)]
pub struct Line(pub Option<u32>);

impl Lenient for Line {
    const NONE: Self = Line(None);
    fn from_u64(v: u64) -> Self {
        Line(Some(v as u32))
    }
}

lenient!(Ix, Num, Str, Id, Flag, Count, Line);
