//! The data of the events the session and the run's hub write themselves: a resume's
//! pause ([`ResumedData`]), a failed I/O's place ([`IoErrorData`]) and a power cut's
//! moment ([`PowerCutData`]). The other kinds'
//! data are their own layers' types (a thermal event, a verify finding), read back with
//! [`Event::data_as`](super::Event::data_as).

use serde::{Deserialize, Serialize};

use crate::stats::IoErrorRecord;

/// A `resumed` event's data: how long the run stood paused.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ResumedData {
    /// Seconds, to the millisecond.
    pub paused_s: f64,
}

/// A `power_cut` event's data: the state of the verified writes when a power-cut run
/// (`run --verify --power-cut`) cut the power.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowerCutData {
    /// The cycle of the power-cut run.
    pub cycle: u32,
    /// The last flush epoch completed before the cut.
    pub epoch: u64,
    /// Blocks with a write in flight at the cut.
    pub blocks_in_flight: u64,
}

/// An `io_error` event's data: the failed (or short) I/O (its message is the event's).
/// Written with the keys in the order sessions always had them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoErrorData {
    /// Bytes.
    pub len: u32,
    /// Bytes from the target's start.
    pub offset: u64,
    /// Negative errno from the kernel, or the byte count of a short transfer.
    pub result: i64,
    pub write: bool,
}

impl From<&IoErrorRecord> for IoErrorData {
    fn from(e: &IoErrorRecord) -> Self {
        IoErrorData {
            len: e.len,
            offset: e.offset,
            result: e.result,
            write: e.write,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the session wrote it from an untyped object before (keys in sorted order).
    fn as_before(v: serde_json::Value) -> String {
        serde_yaml::to_string(&serde_yaml::to_value(v).unwrap()).unwrap()
    }

    #[test]
    fn an_io_errors_data_is_written_as_before_and_reads_back() {
        let e = IoErrorRecord::new(8192, 4096, true, -5);
        let d = IoErrorData::from(&e);
        let text = serde_yaml::to_string(&d).unwrap();
        assert_eq!(
            text,
            as_before(serde_json::json!({
                "offset": e.offset,
                "len": e.len,
                "write": e.write,
                "result": e.result,
            }))
        );
        assert_eq!(text, "len: 4096\noffset: 8192\nresult: -5\nwrite: true\n");
        assert_eq!(serde_yaml::from_str::<IoErrorData>(&text).unwrap(), d);
    }

    #[test]
    fn a_resumes_data_is_written_as_before_and_reads_back() {
        let d = ResumedData { paused_s: 2.345 };
        let text = serde_yaml::to_string(&d).unwrap();
        assert_eq!(text, as_before(serde_json::json!({ "paused_s": 2.345 })));
        assert_eq!(serde_yaml::from_str::<ResumedData>(&text).unwrap(), d);
    }
}
