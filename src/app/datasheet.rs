//! Vendor-quoted drive figures (`assets/datasheets.yaml`, from the published datasheets)
//! and matching them to the model string a drive reports. They are reference marks for
//! the curve panel, always labelled "quoted", never shown as measurements.

use serde::Deserialize;

use super::view::DriveView;

/// The embedded datasheet table.
pub const DATASHEETS_YAML: &str = include_str!("../../assets/datasheets.yaml");

/// One datasheet row.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Datasheet {
    /// The drive as the vendor names it.
    pub model: String,
    /// Strings that must all appear in the reported model string.
    #[serde(rename = "match")]
    pub patterns: Vec<String>,
    /// Capacity the figures are quoted for, GB (10^9 bytes).
    pub capacity_gb: Option<f64>,
    pub seq_read_mbs: Option<f64>,
    pub seq_write_mbs: Option<f64>,
    pub rand_read_iops: Option<f64>,
    pub rand_write_iops: Option<f64>,
    pub mixed_70_30_iops: Option<f64>,
    pub read_latency_us: Option<f64>,
    pub write_latency_us: Option<f64>,
}

/// Parses the embedded table; an error here is a bug in the asset and is reported, not
/// fatal: the curve then has no reference mark.
pub fn builtin() -> Result<Vec<Datasheet>, serde_yaml::Error> {
    serde_yaml::from_str(DATASHEETS_YAML)
}

fn normalise(s: &str) -> String {
    s.to_ascii_uppercase().replace(['_', '-'], " ")
}

/// The entry for this drive, if its model string and capacity match exactly one row's.
pub fn find<'a>(sheets: &'a [Datasheet], drive: &DriveView) -> Option<&'a Datasheet> {
    let model = normalise(drive.model.as_deref()?);
    sheets.iter().find(|d| {
        let named = d.patterns.iter().all(|p| model.contains(&normalise(p)));
        let sized = match (d.capacity_gb, drive.capacity_bytes) {
            (Some(gb), Some(bytes)) => ((bytes as f64 / 1e9) - gb).abs() <= gb * 0.03,
            (Some(_), None) => false,
            (None, _) => true,
        };
        named && sized
    })
}

/// Which quoted random figure fits a workload with this read share (0..=1).
pub fn quoted_iops(d: &Datasheet, read_share: f64) -> Option<(&'static str, f64)> {
    if read_share >= 0.9 {
        d.rand_read_iops.map(|v| ("quoted 4K random read", v))
    } else if read_share <= 0.1 {
        d.rand_write_iops.map(|v| ("quoted 4K random write", v))
    } else {
        d.mixed_70_30_iops.map(|v| ("quoted 4K 70/30", v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(model: &str, bytes: u64) -> DriveView {
        DriveView {
            model: Some(model.into()),
            capacity_bytes: Some(bytes),
            ..DriveView::default()
        }
    }

    #[test]
    fn embedded_table_parses_with_every_figure_positive() {
        let t = builtin().unwrap();
        assert!(t.len() >= 20);
        for d in &t {
            assert!(!d.patterns.is_empty(), "{}", d.model);
            for v in [d.rand_read_iops, d.rand_write_iops, d.seq_read_mbs]
                .into_iter()
                .flatten()
            {
                assert!(v > 0.0, "{}", d.model);
            }
        }
    }

    #[test]
    fn matches_model_and_capacity() {
        let t = builtin().unwrap();
        let d = find(&t, &drive("Micron_7400_MTFDKCB7T6TDZ", 7_681_501_126_656)).unwrap();
        assert_eq!(d.model, "Micron 7400 PRO U.3 7.68TB");
        assert_eq!(d.rand_read_iops, Some(1_000_000.0));
        let d = find(&t, &drive("Micron_7400_MTFDKCB1T9TDZ", 1_920_383_410_176)).unwrap();
        assert_eq!(d.rand_write_iops, Some(95_000.0));
        assert!(find(&t, &drive("Samsung SSD 990 PRO 2TB", 2_000_398_934_016)).is_none());
        assert!(find(&t, &DriveView::default()).is_none());
        let d = find(&t, &drive("MTFDHBE1T9TDF-1AW1ZABYY", 1_920_383_410_176)).unwrap();
        assert_eq!(d.rand_read_iops, Some(396_000.0));
    }

    #[test]
    fn quoted_figure_follows_the_read_share() {
        let t = builtin().unwrap();
        let d = &t[3];
        assert_eq!(quoted_iops(d, 1.0).unwrap().1, 1_000_000.0);
        assert_eq!(quoted_iops(d, 0.0).unwrap().1, 190_000.0);
        assert_eq!(quoted_iops(d, 0.7).unwrap().1, 400_000.0);
    }
}
