//! Headless Chromium, as a reader of the pages drivescope writes: the DOM it built from a
//! page (`--dump-dom`), after parsing and layout, and a screenshot to look at.

use std::path::Path;
use std::process::Command;

/// Chromium's binary (`chromium`, Debian's package; `.ci/run` installs it).
fn binary() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The flags of a headless start on a closed network, as root, with a profile of its own.
fn headless(profile: &Path) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect()
}

/// The DOM headless Chromium made of the page at `page` (`None`, after a skip note, when
/// Chromium is not installed).
pub fn dom(page: &Path) -> Option<String> {
    let Some(bin) = binary() else {
        super::skip::note(super::skip::Skip::Tool, "chromium is not installed");
        return None;
    };
    let profile = tempfile::tempdir().expect("profile dir");
    let out = Command::new(bin)
        .args(headless(profile.path()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The text of the element with `id` in `dom` (tags removed), if there is one.
pub fn text_of_id(dom: &str, id: &str) -> Option<String> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let open_end = at + dom[at..].find('>')? + 1;
    let tag_start = dom[..at].rfind('<')?;
    let tag: String = dom[tag_start + 1..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let close = open_end + dom[open_end..].find(&format!("</{tag}>"))?;
    Some(strip_tags(&dom[open_end..close]))
}

/// `html` without its tags.
pub fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// The rows (cells' text) of the table of class `class` in `dom`, header row first.
pub fn table_rows(dom: &str, class: &str) -> Vec<Vec<String>> {
    let Some(at) = dom.find(&format!("<table class=\"{class}\"")) else {
        return Vec::new();
    };
    let end = at + dom[at..].find("</table>").unwrap_or(dom.len() - at);
    dom[at..end]
        .split("<tr>")
        .skip(1)
        .map(|row| {
            let row = &row[..row.find("</tr>").unwrap_or(row.len())];
            row.split("</td>")
                .flat_map(|c| c.split("</th>"))
                .filter(|c| c.contains("<td") || c.contains("<th"))
                .map(|c| strip_tags(c).trim().to_string())
                .collect()
        })
        .collect()
}
