//! speedscope files (<https://www.speedscope.app/file-format-schema.json>): `sampled` profiles,
//! one per thread as py-spy and ThreadRadar write them. Profile names give the thread:
//! py-spy's `Thread <tid> "<name>"` and ThreadRadar's `<name> (<tid>)`; any other name is the
//! thread's name. A sample's time is the profile's `startValue` plus the weights before it.

use super::json::{self, Col, Frames, Samples, Str};
use super::{quote, Ctx, ImportError, Profile, RawFrame, RawSample};
use rustc_hash::FxHashMap;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::io::BufRead;

#[derive(Deserialize)]
struct SFrame {
    name: String,
    file: Option<String>,
    line: Option<u32>,
}

#[derive(Deserialize)]
struct Shared {
    frames: Col<SFrame, Frames>,
}

/// No stack (a sample without frames), no parent.
const NONE: u32 = u32::MAX;

/// The samples' stacks as the file writes them, by its frame indices: `shared.frames` may come
/// after the profiles (py-spy writes it there), so a sample's frames are resolved at the file's
/// end; until then each distinct stack is one node here, and a sample is its node.
struct Tree {
    /// (parent node or NONE, the file's frame index), parents before children.
    nodes: Vec<(u32, u32)>,
    depths: Vec<u32>,
    ids: FxHashMap<(u32, u32), u32>,
    /// Where each node was first used (profile, sample), for a frame that does not exist.
    first_use: Vec<(u32, u32)>,
}

/// What the reading of profiles builds: the profile (threads, samples whose stack is a node of
/// the tree) and the tree.
struct State<'p> {
    p: &'p mut Profile,
    tree: Tree,
    any_time: bool,
}

impl State<'_> {
    /// The node of the file's frame `frame` called from `parent`.
    fn node<E: de::Error>(&mut self, parent: u32, frame: u64, at: (u32, u32)) -> Result<u32, E> {
        let frame = frame.min(NONE as u64 - 1) as u32;
        if let Some(&id) = self.tree.ids.get(&(parent, frame)) {
            return Ok(id);
        }
        let limits = *self.p.limits();
        let depth = if parent == NONE { 1 } else { self.tree.depths[parent as usize] + 1 };
        if depth as usize > limits.depth {
            return Err(json::fail(self.p.too_large(format!("a stack is more than {} frames deep", limits.depth), format!("{} frames", limits.depth), super::profile::DEEP)));
        }
        if self.tree.nodes.len() >= limits.stacks {
            return Err(json::fail(self.p.too_large(format!("it has more than {} distinct stacks", limits.stacks), format!("{} stacks", limits.stacks), super::profile::SPLIT)));
        }
        let id = self.tree.nodes.len() as u32;
        self.tree.nodes.push((parent, frame));
        self.tree.depths.push(depth);
        self.tree.first_use.push(at);
        self.tree.ids.insert((parent, frame), id);
        Ok(id)
    }
}

/// The top-level object: `profiles` read profile by profile, sample by sample, into the state.
struct FileVisitor<'s, 'p> {
    st: &'s mut State<'p>,
    format: &'static str,
}

#[derive(Default)]
struct Top {
    schema: Option<String>,
    shared: Option<Shared>,
    profiles: bool,
    name: Option<String>,
    exporter: Option<String>,
}

impl<'de> Visitor<'de> for FileVisitor<'_, '_> {
    type Value = Top;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a speedscope file (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut top = Top::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "$schema" => top.schema = map.next_value::<Str>()?.0,
                "name" => top.name = map.next_value::<Str>()?.0,
                "exporter" => top.exporter = map.next_value::<Str>()?.0,
                "shared" => top.shared = Some(map.next_value()?),
                "profiles" => {
                    map.next_value_seed(ProfilesSeed { st: &mut *self.st, format: self.format })?;
                    top.profiles = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(top)
    }
}

struct ProfilesSeed<'s, 'p> {
    st: &'s mut State<'p>,
    format: &'static str,
}

impl<'de> DeserializeSeed<'de> for ProfilesSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ProfilesSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of profiles")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut pi = 0u32;
        while seq.next_element_seed(ProfileSeed { st: &mut *self.st, format: self.format, pi })?.is_some() {
            pi = pi.saturating_add(1);
        }
        Ok(())
    }
}

/// One profile: its samples become nodes of the tree as they are read (a sample's frame list is
/// never held), with their weights until the profile's end, when its unit and start (which may
/// come after them) give the samples their times.
struct ProfileSeed<'s, 'p> {
    st: &'s mut State<'p>,
    format: &'static str,
    pi: u32,
}

impl<'de> DeserializeSeed<'de> for ProfileSeed<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ProfileSeed<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a profile (a JSON object)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut kind, mut name, mut unit, mut start) = (None::<String>, None::<String>, None::<String>, None::<f64>);
        let mut nodes: Vec<u32> = Vec::new();
        let mut weights: Col<f64, Samples> = Col::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "type" => kind = Some(map.next_value()?),
                "name" => name = Some(map.next_value()?),
                "unit" => unit = Some(map.next_value()?),
                "startValue" => start = Some(map.next_value()?),
                "samples" => map.next_value_seed(SamplesSeed { st: &mut *self.st, pi: self.pi, nodes: &mut nodes })?,
                "weights" => weights = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let kind = kind.ok_or_else(|| de::Error::missing_field("type"))?;
        let name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        let unit = unit.ok_or_else(|| de::Error::missing_field("unit"))?;
        let start = start.ok_or_else(|| de::Error::missing_field("startValue"))?;
        let pi = self.pi as usize;
        if kind != "sampled" {
            return Err(json::parse_error(
                self.format,
                format!("profile {pi} ({})", quote(&name)),
                format!("it is an {} profile; only sampled profiles (py-spy's, ThreadRadar's) can be imported", quote(&kind)),
            ));
        }
        let scale = match unit.as_str() {
            "nanoseconds" => Some(1.0),
            "microseconds" => Some(1e3),
            "milliseconds" => Some(1e6),
            "seconds" => Some(1e9),
            _ => None,
        };
        let st = &mut *self.st;
        st.any_time |= scale.is_some();
        let (tid, tname) = thread_of(&name, pi);
        let thread = st.p.thread(0, tid, tname.as_deref()).map_err(json::fail)?;
        let mut t = start;
        for (si, &node) in nodes.iter().enumerate() {
            let w = weights.get(si).copied().unwrap_or(1.0);
            let (t_ns, d_ns) = match scale {
                Some(k) => (Some((t * k).max(0.0) as u64), Some((w * k).max(0.0) as u64)),
                None => (None, None),
            };
            // The stack is the tree's node for now (see `parse`).
            let stack = (node != NONE).then_some(node);
            st.p.push_sample(RawSample { thread, t_ns, duration_ns: d_ns, stack, count: 1, state: None, gil: false }).map_err(json::fail)?;
            t += w;
        }
        Ok(())
    }
}

/// A profile's `samples`: each sample's frame indices (outermost first) walked into the tree.
struct SamplesSeed<'s, 'p, 'n> {
    st: &'s mut State<'p>,
    pi: u32,
    nodes: &'n mut Vec<u32>,
}

impl<'de> DeserializeSeed<'de> for SamplesSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SamplesSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of samples")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            let limit = self.st.p.limits().samples;
            if self.st.p.thread_samples.saturating_add(self.nodes.len() as u64) >= limit {
                // One more sample would be beyond the limit: refused if there is one.
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    let what = format!("its samples add up to more than {limit} (counts and weights included)");
                    return Err(json::fail(self.st.p.too_large(what, format!("{limit} samples"), super::profile::SHORTER)));
                }
                return Ok(());
            }
            let si = self.nodes.len() as u32;
            match seq.next_element_seed(StackSeed { st: &mut *self.st, at: (self.pi, si) })? {
                Some(node) => self.nodes.push(node),
                None => return Ok(()),
            }
        }
    }
}

/// One sample's frame indices, outermost first: its node (NONE without frames).
struct StackSeed<'s, 'p> {
    st: &'s mut State<'p>,
    at: (u32, u32),
}

impl<'de> DeserializeSeed<'de> for StackSeed<'_, '_> {
    type Value = u32;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for StackSeed<'_, '_> {
    type Value = u32;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of frame indices")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u32, A::Error> {
        let mut node = NONE;
        while let Some(f) = seq.next_element::<u64>()? {
            node = self.st.node(node, f, self.at)?;
        }
        Ok(node)
    }
}

/// Reads a speedscope file from `reader`: the samples are walked into a tree of the file's
/// frame indices as they arrive, and the tree's nodes become the profile's stacks at the end.
pub fn parse(reader: impl BufRead, ctx: &Ctx) -> Result<Profile, ImportError> {
    let mut p = Profile::new(ctx, "speedscope");
    let mut st = State { p: &mut p, tree: Tree { nodes: Vec::new(), depths: Vec::new(), ids: FxHashMap::default(), first_use: Vec::new() }, any_time: false };
    let format = ctx.format;
    let top = json::read(reader, ctx, |de| de.deserialize_map(FileVisitor { st: &mut st, format }))?;
    let (tree, any_time) = (st.tree, st.any_time);
    let top_error = |detail: &str| ImportError::Parse { path: ctx.path.to_path_buf(), format: ctx.format, at: "the top-level object".into(), detail: detail.into() };
    if !top.schema.as_deref().unwrap_or("").contains("speedscope") {
        return Err(top_error("its \"$schema\" is not speedscope's file-format schema"));
    }
    let shared = top.shared.ok_or_else(|| top_error("it has no \"shared\" object"))?;
    if !top.profiles {
        return Err(top_error("it has no \"profiles\" array"));
    }
    let exporter: String = top.exporter.unwrap_or_default().chars().take(40).collect();
    if !exporter.is_empty() {
        p.format = format!("speedscope from {exporter}");
    }
    if let Some(n) = top.name.filter(|n| !n.is_empty()) {
        p.check_name(&n)?;
        p.command = n.split(' ').map(str::to_string).collect();
    }
    // The tree's nodes as the profile's stacks (parents come first), each shared frame made a
    // profile frame when first used.
    let frames = &shared.frames;
    let mut frame_ids: Vec<Option<u32>> = vec![None; frames.len()];
    let mut stacks: Vec<u32> = Vec::with_capacity(tree.nodes.len());
    for (i, &(parent, f)) in tree.nodes.iter().enumerate() {
        let frame = match frame_ids.get(f as usize).copied().flatten() {
            Some(id) => id,
            None => {
                let (pi, si) = tree.first_use[i];
                let fr = frames.get(f as usize).ok_or_else(|| ImportError::Parse {
                    path: ctx.path.to_path_buf(),
                    format: ctx.format,
                    at: format!("profile {pi} sample {si}"),
                    detail: format!("frame {f} does not exist (there are {})", frames.len()),
                })?;
                let id = p.frame(RawFrame { file: fr.file.clone().unwrap_or_default(), name: strip_location(&fr.name), line: fr.line.unwrap_or(0) })?;
                frame_ids[f as usize] = Some(id);
                id
            }
        };
        let parent = (parent != NONE).then(|| stacks[parent as usize]);
        stacks.push(p.stack_node(parent, frame)?);
    }
    for s in &mut p.samples {
        s.stack = s.stack.map(|n| stacks[n as usize]);
    }
    if !any_time {
        p.missing.push(("sample_times", "sample times (the profiles have no time unit)"));
    }
    if p.threads.iter().all(|t| t.name.is_none()) {
        p.missing.push(("thread_names", "thread names"));
    }
    p.missing.push(("pid", "the process id"));
    if exporter.starts_with("py-spy") {
        p.missing.push(("thread_starts", "when each thread started (py-spy starts every thread at 0)"));
    }
    Ok(p)
}

/// `(tid, name)` from a profile's name.
fn thread_of(name: &str, index: usize) -> (u32, Option<String>) {
    // py-spy: `Thread 460 "napper"` (an empty name when Python has none).
    if let Some(rest) = name.strip_prefix("Thread ") {
        let (id, after) = rest.split_once(' ').unwrap_or((rest, ""));
        let id = id.strip_prefix("0x").map_or_else(|| id.parse().ok(), |h| u64::from_str_radix(h, 16).ok().map(|v| v as u32 as u64));
        if let Some(id) = id {
            let n = after.trim().trim_matches('"');
            return (id as u32, (!n.is_empty()).then(|| n.to_string()));
        }
    }
    // ThreadRadar: `name (tid)`.
    if let Some((n, id)) = name.strip_suffix(')').and_then(|s| s.rsplit_once(" (")) {
        if let Ok(id) = id.parse() {
            return (id, Some(n.to_string()));
        }
    }
    (index as u32 + 1, Some(name.to_string()))
}

/// ThreadRadar's frame names carry `(file:line)`; the file and line are in their own fields.
fn strip_location(name: &str) -> String {
    match name.strip_suffix(')').and_then(|s| s.rsplit_once(" (")) {
        Some((n, loc)) if loc.rsplit_once(':').is_some_and(|(_, l)| l.parse::<u32>().is_ok()) => n.to_string(),
        _ => name.to_string(),
    }
}
