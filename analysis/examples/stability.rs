//! How stable are the clusters across repeated recordings of one program, with COP-KMeans and
//! with plain k-means? Mean adjusted Rand index over every pair of runs, per level:
//!
//! `cargo run --release -p threadradar-analysis --example stability -- RUN.json RUN.json [RUN.json…]`
//!
//! (An example, not part of the library: it reads files, which `analysis` itself never does.)

use threadradar_analysis::stability::{compare, mean_ari};
use threadradar_analysis::{Analysis, ClusterMethod, Level, Options};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.len() < 2 {
        eprintln!("usage: stability RUN.json RUN.json [RUN.json…] (two or more runs of the same program)");
        std::process::exit(2);
    }
    let runs: Vec<_> = paths
        .iter()
        .map(|p| threadradar_profiler::runfile::read(std::path::Path::new(p)).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    println!("| level | COP-KMeans mean ARI | plain k-means mean ARI | pairs |");
    println!("|---|---:|---:|---:|");
    for level in [Level::Program, Level::Function, Level::Class] {
        let mut cells = Vec::new();
        let mut pairs = 0;
        for method in [ClusterMethod::CopKMeans, ClusterMethod::KMeans] {
            let options = Options { method, ..Options::default() };
            let analyses: Vec<_> = runs.iter().map(|r| Analysis::new(r, &options).expect("analysis")).collect();
            let mut aris = Vec::new();
            for i in 0..runs.len() {
                for j in i + 1..runs.len() {
                    if let Some(m) = mean_ari(&compare(&runs[i], &analyses[i], &runs[j], &analyses[j], level)) {
                        aris.push(m);
                    }
                }
            }
            pairs = aris.len();
            cells.push(if aris.is_empty() { "–".to_string() } else { format!("{:.3}", aris.iter().sum::<f64>() / aris.len() as f64) });
        }
        println!("| {level:?} | {} | {} | {pairs} |", cells[0], cells[1]);
    }
}
