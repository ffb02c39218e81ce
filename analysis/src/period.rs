//! The sampling period: the one definition of how long a sample stands for, which is also the
//! "± one period" every view and export states its sampled boundaries with.
//!
//! **Definition.** The mean distance between the run's consecutive ticks, from its samples:
//! `(last tick − first tick) / (ticks − 1)`. When the run has fewer than two ticks at distinct
//! times, the recorded (requested) interval; when that is unknown too, 1 ms. Rounded to whole
//! nanoseconds (at least 1), so that every view shows the same number.
//!
//! **Why this one.**
//! - It is what the samples say, whoever wrote the run. The run's `achieved_rate_hz` is not one
//!   figure: the recorder computes it over each thread's lifetime, an import and a partial read
//!   over the run's duration, the synthetic runs set a constant; two runs with the same samples
//!   could then show different periods.
//! - Samples × period must give the time sampled. When the sampler fell behind (a tick more than
//!   one interval late is skipped), each sample stands for more than the requested interval;
//!   samples × interval — or × the median gap, which is the interval whenever fewer than half the
//!   ticks were skipped — would undercount every duration the metrics report.
//! - A boundary seen between two ticks is known to within their distance; the mean distance is the
//!   typical such uncertainty. A single long stall inflates it, which errs on the side of a wider
//!   stated uncertainty rather than a narrower one.

use threadradar_profiler::Run;

/// Used when the run has fewer than two ticks and no recorded interval.
const UNKNOWN_PERIOD_NS: u64 = 1_000_000;

/// The run's sampling period in nanoseconds (see the module documentation for the definition).
pub fn sampling_period_ns(run: &Run) -> u64 {
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for s in &run.samples {
        lo = lo.min(s.t);
        hi = hi.max(s.t);
    }
    let p = if run.samples.len() >= 2 && hi > lo {
        (hi - lo) as f64 / (run.samples.len() - 1) as f64
    } else if run.meta.interval_ms.is_finite() && run.meta.interval_ms > 0.0 {
        run.meta.interval_ms * 1e6
    } else {
        UNKNOWN_PERIOD_NS as f64
    };
    (p.round() as u64).max(1)
}

/// [`sampling_period_ns`] in seconds.
pub fn sampling_period_s(run: &Run) -> f64 {
    sampling_period_ns(run) as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;
    use threadradar_profiler::run::{Meta, Sample};

    fn run(interval_ms: f64, ticks: &[u64]) -> Run {
        let mut r = Run::new(Meta { interval_ms, ..Meta::default() });
        r.samples = ticks.iter().map(|&t| Sample { t, threads: Vec::new() }).collect();
        r
    }

    #[test]
    fn the_mean_tick_distance_counts_skipped_ticks() {
        // 1 ms requested, the tick at 2 ms skipped: 3 samples over 4 ms stand for 2 ms each.
        assert_eq!(sampling_period_ns(&run(1.0, &[0, 1_000_000, 4_000_000])), 2_000_000);
    }

    #[test]
    fn without_two_ticks_the_recorded_interval_then_one_millisecond() {
        assert_eq!(sampling_period_ns(&run(2.5, &[7])), 2_500_000);
        assert_eq!(sampling_period_ns(&run(0.0, &[])), 1_000_000);
        assert_eq!(sampling_period_ns(&run(f64::NAN, &[5, 5])), 1_000_000);
    }

    #[test]
    fn ticks_out_of_order_give_the_same_period() {
        assert_eq!(sampling_period_ns(&run(1.0, &[6_000_000, 0, 3_000_000])), 3_000_000);
    }
}
