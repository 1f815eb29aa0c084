//! The fuzz crate's cross-check of the transition function (`fuzz/src/machine.rs`: a
//! sequence of commands and human edits, every invariant checked after each step), run in
//! `cargo test` on the fuzz seeds and on a short, fixed budget of generated inputs, so a
//! change that breaks an invariant fails here without a nightly toolchain.

#[allow(dead_code)]
#[path = "../../fuzz/src/machine.rs"]
mod machine;

use std::collections::BTreeMap;

use arbitrary::{Arbitrary, Unstructured};
use bmad_mcp::workflow::{Stage, State, Track};
use machine::MachineInput;

/// As libFuzzer's `fuzz_target!` turns bytes into a typed input.
fn run_bytes(data: &[u8]) -> Option<(Stage, State)> {
    run_bytes_on(Track::Full, data)
}

fn run_bytes_on(track: Track, data: &[u8]) -> Option<(Stage, State)> {
    let input = MachineInput::arbitrary_take_rest(Unstructured::new(data)).ok()?;
    Some(machine::run_on(track, &input))
}

fn seeds() -> Vec<(String, Vec<u8>)> {
    let dir = harness::repo_path("fuzz/corpus/machine");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_seed_ends_where_its_name_says() {
    let seeds = seeds();
    for (name, data) in &seeds {
        let (stage, state) = run_bytes(data).unwrap_or_else(|| panic!("{name} does not decode"));
        // `ends-<stage>-<state without underscores>`, and `.N` to tell two apart.
        let want = format!("ends-{stage}-{}", state.id().replace('_', ""));
        let base = name.split('.').next().unwrap_or(name);
        assert_eq!(base, want, "seed {name}");
    }
    assert!(seeds.len() >= 8, "{} seeds", seeds.len());
}

/// As a fuzzer does on a short budget: each run mutates a seed (bytes flipped, inserted,
/// removed, a random tail appended) or is random bytes, and must keep every invariant.
#[test]
fn two_thousand_mutated_runs_keep_every_invariant() {
    // xorshift64*: the same inputs on every run, so a failure can be replayed.
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let seeds = seeds();
    let mut ends: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..2000 {
        let mut data = if i % 10 == 0 {
            Vec::new()
        } else {
            seeds[(next() % seeds.len() as u64) as usize].1.clone()
        };
        for _ in 0..1 + next() % 6 {
            let at = (next() % (data.len() as u64 + 1)) as usize;
            match next() % 4 {
                0 if at < data.len() => data[at] ^= 1 << (next() % 8),
                1 => data.insert(at, next() as u8),
                2 if at < data.len() => {
                    data.remove(at);
                }
                _ => data.extend((0..next() % 64).map(|_| next() as u8)),
            }
        }
        let end = std::panic::catch_unwind(|| run_bytes(&data))
            .unwrap_or_else(|_| panic!("input {i} broke an invariant: {data:?}"));
        if let Some((stage, st)) = end {
            *ends.entry(format!("{stage}/{st}")).or_default() += 1;
        }
    }
    eprintln!("where the runs ended: {ends:?}");
    let decoded: usize = ends.values().sum();
    assert!(decoded > 1800, "{decoded} of 2000 inputs decoded");
    for must in [
        "sm/awaiting_approval",
        "qa/completed",
        "po/clarifying",
        "review/awaiting_confirmation",
        "qa/awaiting_confirmation",
        "dev/awaiting_confirmation",
    ] {
        assert!(ends.contains_key(must), "no run ended at {must}: {ends:?}");
    }
}

/// The same cross-check on the short tracks and on a story: every seed, and mutated runs,
/// keep every invariant; the quick and fix tracks complete at review, a story at QA, and
/// the fix track's development stops at the human when its report has no failing test.
#[test]
fn every_track_keeps_every_invariant_and_completes_at_its_last_stage() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let seeds = seeds();
    for track in [Track::Quick, Track::Fix, Track::Story] {
        let mut ends: BTreeMap<String, usize> = BTreeMap::new();
        for i in 0..600 {
            let mut data = seeds[i % seeds.len()].1.clone();
            if i >= seeds.len() {
                for _ in 0..1 + next() % 4 {
                    let at = (next() % (data.len() as u64 + 1)) as usize;
                    match next() % 3 {
                        0 if at < data.len() => data[at] ^= 1 << (next() % 8),
                        1 => data.insert(at, next() as u8),
                        _ => data.extend((0..next() % 32).map(|_| next() as u8)),
                    }
                }
            }
            let end = std::panic::catch_unwind(|| run_bytes_on(track, &data))
                .unwrap_or_else(|_| panic!("{track}: input {i} broke an invariant: {data:?}"));
            if let Some((stage, st)) = end {
                assert!(track.contains(stage), "{track} ended at {stage}");
                *ends.entry(format!("{stage}/{st}")).or_default() += 1;
            }
        }
        eprintln!("{track}: {ends:?}");
        let last = format!("{}/completed", track.last());
        assert!(
            ends.contains_key(&last),
            "{track}: no run reached {last}: {ends:?}"
        );
        if track == Track::Fix {
            assert!(
                ends.contains_key("dev/awaiting_confirmation"),
                "{track}: {ends:?}"
            );
        }
    }
}
