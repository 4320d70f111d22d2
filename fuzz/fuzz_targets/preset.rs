//! libFuzzer target: any bytes as a preset; what validates must expand (or be refused with
//! a message) on a few targets, into a bounded plan.
#![no_main]

use drivescope::plan::{self, PlanOptions, TargetFacts};
use drivescope::preset;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(p) = preset::parse_str(&text, "fuzz.yaml") else {
        return;
    };
    for (capacity_bytes, logical_block_size) in
        [(1u64 << 40, 512u32), (4096, 4096), (u64::MAX, 512)]
    {
        let t = TargetFacts {
            capacity_bytes,
            logical_block_size,
        };
        if let Ok(plan) = plan::expand(&p, &t, &PlanOptions::default()) {
            assert!(plan.steps.len() <= 100_000 * p.phases.len().max(1));
            for s in &plan.steps {
                let _ = drivescope::engine::validate_shape(&s.workload);
            }
            let _ = plan.estimate(0.0);
            let _ = plan::fio::job_file(&p, &plan, &t);
        }
    }
});
