//! A preset with every default written out, as `presets show` prints it: the read share of
//! mixed patterns (fio's 50%), the rate (`max`), the region (the whole target). Resolving
//! changes nothing about the plan it expands to.

use super::model::{Preset, RegionSpec, Work};
use super::values::{Amount, RateValue, ReadShare};
use crate::workload::RwMode;

/// `preset` with its defaults made explicit.
pub fn resolve(preset: &Preset) -> Preset {
    let mut p = preset.clone();
    for phase in &mut p.phases {
        let Work::Io(w) = &mut phase.workload else {
            continue;
        };
        if matches!(w.rw, RwMode::Rw | RwMode::RandRw) && w.rwmixread.is_none() {
            w.rwmixread = Some(ReadShare(50));
        }
        if w.region.is_none() {
            w.region = Some(RegionSpec {
                offset: Amount::Bytes(0),
                size: Some(Amount::Percent(100.0)),
            });
        }
        if phase.sweep.is_none() && phase.rate.is_none() {
            phase.rate = Some(RateValue::Max);
        }
    }
    p
}
