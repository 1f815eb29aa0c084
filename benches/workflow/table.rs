//! Statistics (median, p10, p90, max) and the summary table, each figure beside its
//! target and its result.

use std::time::Duration;

/// What the result column says, printed under the table.
pub const LEGEND: &str = "MISS: a figure over its target on this run (pass: within it). \
    The bench reports and never fails; BENCHMARKS.md has the targets and current figures.";

pub const MIB: f64 = 1024.0 * 1024.0;

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub fn kib_to_mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

pub struct Stats {
    n: usize,
    pub median: f64,
    p10: f64,
    p90: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(values: &[f64]) -> Stats {
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let at = |q: f64| {
            if v.is_empty() {
                f64::NAN
            } else {
                v[((v.len() - 1) as f64 * q).round() as usize]
            }
        };
        let median = if v.len().is_multiple_of(2) && !v.is_empty() {
            (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
        } else {
            at(0.5)
        };
        Stats {
            n: v.len(),
            median,
            p10: at(0.1),
            p90: at(0.9),
            max: at(1.0),
        }
    }
}

/// What a figure is held against: the median, or the worst value (memory, sizes).
pub enum Target {
    None,
    AtMost(f64),
    MaxAtMost(f64),
}

#[derive(Default)]
pub struct Table {
    rows: Vec<[String; 8]>,
}

impl Table {
    pub fn stats(&mut self, name: &str, values: &[f64], unit: &str, target: Target) {
        let s = Stats::of(values);
        let (target, ok) = match target {
            Target::None => (String::new(), None),
            Target::AtMost(t) => (format!("median ≤ {t} {unit}"), Some(s.median <= t)),
            Target::MaxAtMost(t) => (format!("max ≤ {t} {unit}"), Some(s.max <= t)),
        };
        let f = |x: f64| format!("{x:.2} {unit}");
        self.rows.push([
            name.to_string(),
            s.n.to_string(),
            f(s.median),
            f(s.p10),
            f(s.p90),
            f(s.max),
            target,
            verdict(ok),
        ]);
    }

    pub fn single(&mut self, name: &str, value: String, target: &str, ok: Option<bool>) {
        self.rows.push([
            name.to_string(),
            "1".into(),
            value,
            String::new(),
            String::new(),
            String::new(),
            target.to_string(),
            verdict(ok),
        ]);
    }

    pub fn print(&self) {
        let header = [
            "measure", "n", "median", "p10", "p90", "max", "target", "result",
        ]
        .map(String::from);
        let width = |i: usize| {
            std::iter::once(&header)
                .chain(&self.rows)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..header.len()).map(width).collect();
        let right = |i: usize| (1..6).contains(&i);
        let line = |r: &[String; 8]| {
            let cells: Vec<String> = r
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (c, w))| {
                    let pad = " ".repeat(w - c.chars().count());
                    if right(i) {
                        format!(" {pad}{c} ")
                    } else {
                        format!(" {c}{pad} ")
                    }
                })
                .collect();
            format!("|{}|", cells.join("|"))
        };
        println!("{}", line(&header));
        let rule: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| {
                if right(i) {
                    format!("{}:", "-".repeat(w + 1))
                } else {
                    "-".repeat(w + 2)
                }
            })
            .collect();
        println!("|{}|", rule.join("|"));
        for r in &self.rows {
            println!("{}", line(r));
        }
    }
}

fn verdict(ok: Option<bool>) -> String {
    match ok {
        None => String::new(),
        Some(true) => "pass".into(),
        Some(false) => "MISS".into(),
    }
}
