//! The merged time axis (Trümper et al. §4.2–4.3).
//!
//! `logscale(Δt, θ) = ln(1 + θΔt) / θ` shrinks long spans much more than short ones; θ → 0 gives
//! Δt (linear). Δt is in **milliseconds** and θ **per millisecond**: at θ = 1 a 3 ms sampling
//! interval keeps 1.4 units while a 1 s wait keeps 6.9.
//!
//! Scaling each thread's spans on its own would move concurrent events apart. So, as in §4.3, the
//! events of all visible lanes are merged into one queue: the boundaries `b₀ < b₁ < …` are every
//! tick at which a bar of any visible lane starts or ends, plus the run's first tick and the end
//! of its last. Each span between successive boundaries gets the scaled length
//! `L_i = logscale(t(b_{i+1}) − t(b_i), θ)`; a boundary's position is the sum of the scaled
//! lengths before it, `P_i = Σ_{j<i} L_j`; and a time inside a span is placed linearly within it.
//! Every lane uses these positions, so events that are simultaneous in the run are at the same x in
//! every lane and the order of all events is kept. The viewport is then a linear window on
//! positions: `x = (P(t) − P(from)) / (P(to) − P(from)) × width`.

use super::index::{Lane, TimelineIndex};

/// `ln(1 + θΔt) / θ`, and `Δt` for θ = 0 (the limit).
pub fn logscale(dt: f64, theta: f64) -> f64 {
    if theta <= 0.0 {
        dt
    } else {
        (theta * dt).ln_1p() / theta
    }
}

/// Positions of every tick on the merged axis, for one θ and one set of visible lanes.
#[derive(Clone, Debug)]
pub struct Axis<'i> {
    /// `pos[k]`: position of tick `k` (and `pos[ticks]` of the end of the last tick), in scaled
    /// milliseconds from the first tick.
    pub pos: Vec<f64>,
    times: &'i [u64],
}

impl<'i> Axis<'i> {
    /// The axis of the given lanes. θ must be ≥ 0 (checked by the layout).
    pub fn new(index: &'i TimelineIndex, lanes: &[&Lane], theta: f64) -> Axis<'i> {
        let times = &index.times[..];
        let n = times.len();
        let t0 = times[0];
        let ms = |k: usize| (times[k] - t0) as f64 / 1e6;
        let mut pos = vec![0.0; n];
        if theta <= 0.0 || n <= 1 {
            for (k, p) in pos.iter_mut().enumerate() {
                *p = ms(k);
            }
            return Axis { pos, times };
        }
        // The merged event queue: a bitset over ticks.
        let mut bits = vec![0u64; n.div_ceil(64)];
        let mut set = |k: usize| bits[k / 64] |= 1 << (k % 64);
        set(0);
        set(n - 1);
        for lane in lanes {
            for &b in &lane.boundaries {
                set(b as usize);
            }
        }
        let mut prev = 0usize;
        let mut p_prev = 0.0;
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let k = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                if k == 0 {
                    continue;
                }
                let (a, b) = (ms(prev), ms(k));
                let len = logscale(b - a, theta);
                for (j, p) in pos.iter_mut().enumerate().take(k + 1).skip(prev + 1) {
                    *p = if b > a { p_prev + len * (ms(j) - a) / (b - a) } else { p_prev };
                }
                p_prev += len;
                pos[k] = p_prev;
                prev = k;
            }
        }
        Axis { pos, times }
    }

    /// Position of a time (ns from the run's start), clamped to the run.
    pub fn position(&self, ns: u64) -> f64 {
        let n = self.times.len();
        if ns <= self.times[0] {
            return self.pos[0];
        }
        if ns >= self.times[n - 1] {
            return self.pos[n - 1];
        }
        let k = self.times.partition_point(|&t| t <= ns) - 1;
        let (a, b) = (self.times[k], self.times[k + 1]);
        if b == a {
            return self.pos[k];
        }
        self.pos[k] + (self.pos[k + 1] - self.pos[k]) * (ns - a) as f64 / (b - a) as f64
    }

    /// The time (ns from the run's start) at a position: the inverse of [`Axis::position`].
    pub fn time_at(&self, p: f64) -> f64 {
        let n = self.pos.len();
        if p <= self.pos[0] {
            return self.times[0] as f64;
        }
        if p >= self.pos[n - 1] {
            return self.times[n - 1] as f64;
        }
        let k = self.pos.partition_point(|&q| q <= p) - 1;
        let (a, b) = (self.pos[k], self.pos[k + 1]);
        let (ta, tb) = (self.times[k] as f64, self.times[k + 1] as f64);
        if b <= a {
            ta
        } else {
            ta + (tb - ta) * (p - a) / (b - a)
        }
    }

    /// The largest ratio of a tick interval's length on the axis to its time in milliseconds: 1
    /// on a linear axis, less with θ > 0 (`logscale(Δt, θ) ≤ Δt`, and the axis places times
    /// linearly within a span). Every span of ticks is at most this many times its time long.
    pub fn max_stretch(&self) -> f64 {
        let mut r: f64 = 0.0;
        for k in 1..self.pos.len() {
            let dt = self.times[k] - self.times[k - 1];
            if dt > 0 {
                r = r.max((self.pos[k] - self.pos[k - 1]) / (dt as f64 / 1e6));
            }
        }
        r
    }

    /// The first tick whose position is ≥ `p`.
    pub fn tick_at_position(&self, p: f64) -> u32 {
        self.pos.partition_point(|&q| q < p) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logscale_is_linear_at_zero_and_shrinks_long_spans_more() {
        assert_eq!(logscale(5.0, 0.0), 5.0);
        assert!((logscale(5.0, 1e-9) - 5.0).abs() < 1e-6);
        let short = logscale(3.0, 1.0) / 3.0;
        let long = logscale(1000.0, 1.0) / 1000.0;
        assert!(short > long * 50.0, "{short} {long}");
        assert!((logscale(1000.0, 1.0) - 1001f64.ln()).abs() < 1e-9);
    }
}
