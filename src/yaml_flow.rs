//! A small YAML flow-style emitter of any serializable value, for lists of one item a line
//! (`- {"t": 1.0, "read_iops": 25031.5, "lat_us": {"p50": 81.2}}`): a session of
//! 86,400 intervals stays short, greps well, and a torn write costs one line, not a block.
//!
//! The items are written in the common subset of YAML and JSON (quoted keys, `null`):
//! the reader parses them with serde_json, many times faster than a YAML parser, and
//! falls back to YAML for what JSON cannot say (`.nan`, `.inf`, non-string keys, tags) or
//! a hand edit wrote in YAML's own style.

use std::fmt::Write;

use serde::Serialize;
use serde_yaml::Value;

/// Appends `item` in flow style.
pub fn write(out: &mut String, item: &impl Serialize) -> Result<(), serde_yaml::Error> {
    write_value(out, &serde_yaml::to_value(item)?);
    Ok(())
}

/// Appends `v` in flow style.
pub fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_quoted(out, s),
        Value::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Mapping(m) => {
            out.push('{');
            for (i, (k, val)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match k {
                    Value::String(s) => write_quoted(out, s),
                    other => write_value(out, other),
                }
                out.push_str(": ");
                write_value(out, val);
            }
            out.push('}');
        }
        Value::Tagged(t) => {
            let _ = write!(out, "{} ", t.tag);
            write_value(out, &t.value);
        }
    }
}

fn write_number(out: &mut String, n: &serde_yaml::Number) {
    if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
        if f.is_nan() {
            out.push_str(".nan");
        } else if f.is_infinite() {
            out.push_str(if f > 0.0 { ".inf" } else { "-.inf" });
        } else {
            // Shortest representation that reads back to the same f64, with a `.0` so an
            // integral float stays a float.
            let start = out.len();
            let _ = write!(out, "{f}");
            if !out[start..].contains('.') {
                out.push_str(".0");
            }
        }
    } else {
        let _ = write!(out, "{n}");
    }
}

/// A double-quoted scalar, valid in YAML and JSON alike.
pub fn write_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{85}' || c == '\u{feff}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if ('\u{2028}'..='\u{2029}').contains(&c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `key:` and `items` as a block list of flow items (`key: []` when empty).
pub fn write_list<T: Serialize>(
    out: &mut String,
    key: &str,
    items: &[T],
) -> Result<(), serde_yaml::Error> {
    if items.is_empty() {
        let _ = writeln!(out, "{key}: []");
        return Ok(());
    }
    let _ = writeln!(out, "{key}:");
    for item in items {
        out.push_str("- ");
        write(out, item)?;
        out.push('\n');
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &Value) -> Value {
        let mut s = String::new();
        write_value(&mut s, v);
        let yaml: Value = serde_yaml::from_str(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        let json: Value = serde_json::from_str(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(yaml, json, "{s}");
        yaml
    }

    #[test]
    fn values_read_back_unchanged() {
        let v: Value = serde_yaml::from_str(
            r#"
            t: 1.5
            n: 18446744073709551615
            neg: -3
            tiny: 1.0e-300
            big: 1.0e300
            s: "quote \" backslash \\ newline \n tab \t bell \u0007 ünïcode"
            yes: "yes"
            "no": no
            "1x": [1, 2.25, ~, true, {a: [], b: {}}, 1.0e20]
            "p99.9": 81.25
            "with space": x
            "": empty
            "#,
        )
        .unwrap();
        assert_eq!(round_trip(&v), v);
    }

    #[test]
    fn non_finite_floats_use_yaml_words() {
        let v = serde_yaml::to_value(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY]).unwrap();
        let mut s = String::new();
        write_value(&mut s, &v);
        assert_eq!(s, "[.nan, .inf, -.inf]");
        assert!(
            serde_json::from_str::<Value>(&s).is_err(),
            "not JSON: the reader falls back"
        );
        let back: Vec<f64> = serde_yaml::from_str(&s).unwrap();
        assert!(back[0].is_nan() && back[1] == f64::INFINITY && back[2] == f64::NEG_INFINITY);
    }

    #[test]
    fn lists_are_one_item_per_line() {
        let mut s = String::new();
        write_list(&mut s, "xs", &[1.5f64, 2.0]).unwrap();
        write_list::<f64>(&mut s, "empty", &[]).unwrap();
        assert_eq!(s, "xs:\n- 1.5\n- 2.0\nempty: []\n");
    }
}
