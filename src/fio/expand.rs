//! fio's `$` expansions of a job file's option lines, done as fio 3.33 does them
//! (options.c `dup_and_sub_options`), so drivescope reads the values fio reads: first every
//! `${NAME}` becomes the environment variable NAME fio gets (nothing when it is unset or
//! empty: fio's `fio_option_dup_subs`), then every `$pagesize`, `$mb_memory` and `$ncpus`
//! becomes this machine's figure (`fio_keyword_replace`), and a line where one was replaced
//! and that holds `+`, `-`, `*` or `/` has its value worked out by `bc` (`bc_calc`).
//! drivescope works out the whole-number arithmetic bc does; anything else bc would read (a
//! variable, a decimal point) is refused, never guessed.

use std::ffi::OsString;

use super::refusal::Refusal;

/// fio's own variables, as fio works them out (`fio_keywords_init`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vars {
    /// `$pagesize`: `sysconf(_SC_PAGESIZE)`.
    pub pagesize: u64,
    /// `$mb_memory`: physical pages times the page size, in MiB (`os_phys_mem`).
    pub mb_memory: u64,
    /// `$ncpus`: the CPUs configured (`sysconf(_SC_NPROCESSORS_CONF)`).
    pub ncpus: u64,
}

impl Vars {
    /// This machine's, where fio runs.
    pub fn here() -> Vars {
        let conf = |name| {
            // SAFETY: sysconf reads a system figure; it takes no pointer.
            let v = unsafe { libc::sysconf(name) };
            u64::try_from(v).unwrap_or(0)
        };
        let pagesize = conf(libc::_SC_PAGESIZE);
        let pages = conf(libc::_SC_PHYS_PAGES);
        Vars {
            pagesize,
            mb_memory: pages.saturating_mul(pagesize) / (1024 * 1024),
            ncpus: conf(libc::_SC_NPROCESSORS_CONF),
        }
    }
}

/// Where fio's environment comes from, and its variables.
pub struct Expander<'a> {
    /// The environment fio gets: drivescope's own (fio's `TMPDIR` aside, which drivescope
    /// sets to a scratch folder of each fio's own).
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
    pub vars: Vars,
}

/// The environment variable fio's cage sets anew for each fio (`fio::cage`).
const SCRATCH_VAR: &str = "TMPDIR";

/// fio's longest option line (`OPT_LEN_MAX`); fio refuses a longer one itself.
const BC_LINE_MAX: usize = 128;
const BC_VALUE_MAX: usize = 100;

impl Expander<'_> {
    /// One option line (`key=value`, comments and blanks around gone) as fio reads it.
    pub fn line(&self, line: &str) -> Result<String, Refusal> {
        let subbed = self.env_subs(line)?;
        let (mut out, replaced) = self.keywords(&subbed);
        if replaced {
            out = bc_calc(&out)?;
        }
        Ok(out)
    }

    /// `${NAME}` becomes the variable's value, or nothing (fio's `fio_option_dup_subs`: a
    /// `${` with no `}` after it stays as it is).
    fn env_subs(&self, line: &str) -> Result<String, Refusal> {
        let mut out = String::with_capacity(line.len());
        let mut rest = line;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(close) = after.find('}') else {
                out.push_str(&rest[at..]);
                return Ok(out);
            };
            let name = &after[..close];
            if name == SCRATCH_VAR {
                return Err(Refusal::ScratchVar);
            }
            if let Some(v) = (self.env)(name) {
                match v.into_string() {
                    Ok(v) => out.push_str(&v),
                    Err(_) => {
                        return Err(Refusal::EnvNotText {
                            name: name.to_string(),
                        })
                    }
                }
            }
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// fio's variables replaced wherever they are (even inside a longer word), in fio's
    /// order; whether any was.
    fn keywords(&self, line: &str) -> (String, bool) {
        let mut out = line.to_string();
        let mut replaced = false;
        for (word, value) in [
            ("$pagesize", self.vars.pagesize),
            ("$mb_memory", self.vars.mb_memory),
            ("$ncpus", self.vars.ncpus),
        ] {
            if out.contains(word) {
                out = out.replace(word, &value.to_string());
                replaced = true;
            }
        }
        (out, replaced)
    }
}

/// fio's `bc_calc`: a line with `+`, `-`, `*` or `/` (and no `'`) has the value after its
/// first `=` replaced by what bc prints for it, where the line is short enough; else it is
/// left as it is.
fn bc_calc(line: &str) -> Result<String, Refusal> {
    if !line.contains(['+', '-', '*', '/']) || line.contains('\'') {
        return Ok(line.to_string());
    }
    let Some((key, value)) = line.split_once('=') else {
        return Ok(line.to_string());
    };
    if line.len() >= BC_LINE_MAX || value.len() > BC_VALUE_MAX {
        return Ok(line.to_string());
    }
    match bc_value(value) {
        Some(v) => Ok(format!("{key}={v}")),
        None => Err(Refusal::Arithmetic {
            value: value.trim().to_string(),
        }),
    }
}

/// What bc prints for a whole-number expression (its default `scale=0`: division and `%`
/// truncate toward zero; `^` binds right and tighter than `*`, unary minus tighter still),
/// or `None` for anything else bc reads (names, decimals) or a division by zero.
fn bc_value(text: &str) -> Option<i128> {
    let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut p = Bc { t: &tokens, at: 0 };
    let v = p.sum()?;
    (p.at == tokens.len()).then_some(v)
}

/// A recursive-descent reading of bc's whole-number expressions.
struct Bc<'a> {
    t: &'a [char],
    at: usize,
}

impl Bc<'_> {
    fn peek(&self) -> Option<char> {
        self.t.get(self.at).copied()
    }

    fn sum(&mut self) -> Option<i128> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)?
            } else {
                v.checked_sub(r)?
            };
        }
        Some(v)
    }

    fn product(&mut self) -> Option<i128> {
        let mut v = self.power()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            let r = self.power()?;
            v = match op {
                '*' => v.checked_mul(r)?,
                '/' => v.checked_div(r)?,
                _ => v.checked_rem(r)?,
            };
        }
        Some(v)
    }

    fn power(&mut self) -> Option<i128> {
        let base = self.unary()?;
        if self.peek() != Some('^') {
            return Some(base);
        }
        self.at += 1;
        let exp = self.power()?;
        base.checked_pow(u32::try_from(exp).ok()?)
    }

    fn unary(&mut self) -> Option<i128> {
        if self.peek() == Some('-') {
            self.at += 1;
            return self.unary()?.checked_neg();
        }
        self.atom()
    }

    fn atom(&mut self) -> Option<i128> {
        if self.peek() == Some('(') {
            self.at += 1;
            let v = self.sum()?;
            if self.peek() != Some(')') {
                return None;
            }
            self.at += 1;
            return Some(v);
        }
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        if start == self.at {
            return None;
        }
        let digits: String = self.t[start..self.at].iter().collect();
        digits.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with<'a>(env: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| {
            env.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| OsString::from(v))
        }
    }

    const VARS: Vars = Vars {
        pagesize: 4096,
        mb_memory: 24104,
        ncpus: 2,
    };

    #[test]
    fn environment_variables_and_fios_own_are_replaced_as_fio_does() {
        let env = with(&[("TARGET", "/dev/loop3"), ("SZ", "64k"), ("EMPTY", "")]);
        let x = Expander {
            env: &env,
            vars: VARS,
        };
        let line = |l: &str| x.line(l);
        assert_eq!(line("filename=${TARGET}").unwrap(), "filename=/dev/loop3");
        // Unset or empty: nothing, as fio does.
        assert_eq!(line("filename=/t/x${NOPE}y").unwrap(), "filename=/t/xy");
        assert_eq!(line("filename=/t/${EMPTY}z").unwrap(), "filename=/t/z");
        assert_eq!(line("filename=/t/${}z").unwrap(), "filename=/t/z");
        // No closing brace: as it is; a bare `$NAME` is no environment variable.
        assert_eq!(line("filename=/t/${X").unwrap(), "filename=/t/${X");
        assert_eq!(line("filename=/t/$X").unwrap(), "filename=/t/$X");
        // No arithmetic unless one of fio's variables was replaced.
        assert_eq!(line("size=${SZ}").unwrap(), "size=64k");
        assert_eq!(line("filename=/a-b/${SZ}").unwrap(), "filename=/a-b/64k");
        // fio's variables, then bc's whole-number arithmetic.
        assert_eq!(line("numjobs=$ncpus").unwrap(), "numjobs=2");
        assert_eq!(line("size=$mb_memory/4").unwrap(), "size=6026");
        // bc's answer replaces all after the `=`, blanks and all.
        assert_eq!(line("size = $pagesize * 2").unwrap(), "size =8192");
        assert_eq!(line("size=($pagesize*2)+ 3 - 1").unwrap(), "size=8194");
        assert_eq!(line("bs=$pagesizek").unwrap(), "bs=4096k");
        assert_eq!(line("iodepth=-7/$ncpus").unwrap(), "iodepth=-3");
        // bc only where a `+ - * /` is: a lone `^` is left to fio (which refuses it).
        assert_eq!(line("iodepth=2^$ncpus^2").unwrap(), "iodepth=2^2^2");
        assert_eq!(line("iodepth=2^$ncpus^2+0").unwrap(), "iodepth=16");
        assert_eq!(line("iodepth=-$ncpus^2").unwrap(), "iodepth=4");
        assert_eq!(line("iodepth=7%$ncpus+0").unwrap(), "iodepth=1");
        // A quote: bc is not asked.
        assert_eq!(line("name='$ncpus-1'").unwrap(), "name='2-1'");
    }

    #[test]
    fn what_bc_would_read_otherwise_and_fios_scratch_folder_are_refused() {
        let env = with(&[("TMPDIR", "/tmp")]);
        let x = Expander {
            env: &env,
            vars: VARS,
        };
        assert_eq!(x.line("filename=${TMPDIR}/f"), Err(Refusal::ScratchVar));
        for (line, value) in [
            ("filename=/data/f$ncpus", "/data/f2"),
            ("size=$mb_memory/4k", "24104/4k"),
            ("size=1.5*$ncpus", "1.5*2"),
            ("size=$ncpus/0", "2/0"),
        ] {
            assert_eq!(
                x.line(line),
                Err(Refusal::Arithmetic {
                    value: value.into()
                }),
                "{line}"
            );
        }
    }
}
