//! `drivescope completions SHELL` and `drivescope man [COMMAND] [--dir DIR]`: the scripts and
//! pages [`crate::cli::generate`] makes from the command line's definitions.

use crate::cli::generate::{self, ManError};
use crate::cli::{CompletionsArgs, ManArgs};
use crate::output::{Output, Stream};

/// Prints the completion script.
pub fn completions(args: &CompletionsArgs) -> Result<(), ManError> {
    let script = generate::completions(args.shell);
    Output::default().text(Stream::Out, &String::from_utf8_lossy(&script));
    Ok(())
}

/// Prints one man page, or writes them all into `--dir` and names each file written.
pub fn man(args: &ManArgs) -> Result<(), ManError> {
    let out = Output::default();
    if let Some(dir) = &args.dir {
        for path in generate::write_man_pages(dir)? {
            out.line(
                Stream::Err,
                &format!("wrote {}", crate::ostext::escaped(path.as_os_str())),
            );
        }
        return Ok(());
    }
    let page = generate::man(args.command.as_deref())?;
    out.text(Stream::Out, &String::from_utf8_lossy(&page));
    Ok(())
}
