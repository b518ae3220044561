//! Does the signature comparison take longer when more leading bytes of a forged signature
//! match the expected MAC? Class Left: the candidate equals the expected MAC in its first 31
//! bytes (only the last differs). Class Right: it differs from the first byte. Both compare
//! false. The candidate is copied into the same buffer for both classes, so only the compared
//! bytes differ. dudect's Welch t statistic must stay below 4.5.
use dudect_bencher::rand::RngExt as _;
use dudect_bencher::{ctbench_main, BenchRng, Class, CtRunner};
use royaltykit::webhook::__ct_any_matches as any_matches;

fn compare(runner: &mut CtRunner, rng: &mut BenchRng) {
    let mut expected = [0u8; 32];
    rng.fill(&mut expected);
    let mut left = expected;
    left[31] ^= 0x01;
    let mut right = expected;
    right[0] ^= 0x01;
    let mut candidates = [[0u8; 32]; 2];
    candidates[1] = [0xa5; 32]; // a second, unrelated candidate, as during a rotation
    for _ in 0..100_000 {
        let is_left = rng.random::<bool>();
        candidates[0] = if is_left { left } else { right };
        let class = if is_left { Class::Left } else { Class::Right };
        runner.run_one(class, || {
            assert!(!any_matches(std::hint::black_box(&expected), std::hint::black_box(&candidates)));
        });
    }
}

ctbench_main!(compare);
