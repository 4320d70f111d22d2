//! The device under test: a regular file (created and filled by drivescope when needed) or a
//! block device. Finds its size and O_DIRECT alignment, creates test files with fallocate,
//! tells whether a file was ever written, and refuses writes that could destroy data
//! (see [`guard`]).

pub mod extents;
pub mod file_id;
pub mod fill;
pub mod guard;
pub mod made;
mod marker;

pub use file_id::{file_id, FileId};
pub use made::{remove_made, MadeFile};
pub use marker::is_created as created_by_drivescope;

use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::units::format_size;

/// Default size of a test file drivescope creates.
pub const DEFAULT_FILE_SIZE: u64 = 1 << 30;

#[derive(Debug, Error)]
pub enum TargetError {
    #[error("{path}: does not exist (give --size to create a test file there)")]
    Missing { path: String },
    #[error(
        "{path}: the folder {folder} does not exist (drivescope makes no folders for a test file)"
    )]
    NoFolder { path: String, folder: String },
    #[error("{path}: {what}: {source}")]
    Io {
        path: String,
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error(transparent)]
    Refused(#[from] guard::Refusal),
}

fn io_err(path: &Path, what: &str, source: std::io::Error) -> TargetError {
    TargetError::Io {
        path: path.display().to_string(),
        what: what.to_string(),
        source,
    }
}

pub use crate::session::TargetKind;

/// The space the nop engine's offsets are drawn from (no I/O reaches it): 1 TiB.
pub const NO_TARGET_SIZE: u64 = 1 << 40;

impl PreparedTarget {
    /// The target as an engine is given it; writes and reads checked against `verify`.
    pub fn step_target(
        &self,
        verify: Option<std::sync::Arc<crate::verify::VerifyState>>,
    ) -> crate::engine::StepTarget {
        crate::engine::StepTarget {
            path: self.path.clone(),
            size: self.size,
            align: self.align,
            verify,
        }
    }

    /// No target: what the nop engine runs on.
    pub fn none() -> Self {
        PreparedTarget {
            path: PathBuf::new(),
            kind: TargetKind::None,
            size: NO_TARGET_SIZE,
            align: 512,
            created: false,
            unwritten: false,
        }
    }
}

/// A target ready for I/O.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PreparedTarget {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub size: u64,
    /// O_DIRECT offset/length alignment, bytes.
    pub align: u64,
    /// drivescope created the file in this run.
    pub created: bool,
    /// The file has blocks never written (holes or unwritten extents): reads of them would
    /// not reach the drive.
    pub unwritten: bool,
}

/// What the workload will do to the target.
#[derive(Debug, Clone, Default)]
pub struct TargetRequest {
    /// Size for a new file, or the least size an existing drivescope file is grown to.
    pub size: Option<u64>,
    /// The workload writes.
    pub writes: bool,
    /// The workload writes at random offsets (a zoned device takes only sequential writes).
    pub random_writes: bool,
    /// The path the user named with `--destroy-data`.
    pub destroy_data: Option<PathBuf>,
    /// Create the file when missing even without `size` (the built-in default target).
    pub create_default: bool,
}

/// The built-in default target: `$XDG_DATA_HOME/drivescope/scratch.bin`
/// (`~/.local/share/drivescope/scratch.bin`).
pub fn default_target_path() -> PathBuf {
    crate::drive::default_target()
}

/// Size and logical block size of a block device.
pub fn block_device_geometry(file: &File) -> std::io::Result<(u64, u64)> {
    const BLKSSZGET: libc::c_ulong = 0x1268;
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    let mut lbs: libc::c_int = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer, which is `size`, a live,
    // exclusively borrowed u64; the fd is `file`'s, borrowed and so open for the call.
    if unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64, &mut size) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: BLKSSZGET writes one C int through the pointer, which is `lbs`, a live,
    // exclusively borrowed c_int; the fd is open as above.
    if unsafe { libc::ioctl(file.as_raw_fd(), BLKSSZGET, &mut lbs) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((size, lbs.max(512) as u64))
}

/// O_DIRECT offset alignment of a file (statx STATX_DIOALIGN), or 4096 when the kernel or
/// filesystem does not say.
pub fn file_dio_align(path: &Path) -> u64 {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return 4096;
    };
    // SAFETY: libc::statx holds only integers, structs of integers and padding: all
    // zeroes is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated string that lives past the call; statx writes one
    // `struct statx` into `stx`, live and exclusively borrowed; AT_FDCWD needs no open fd.
    let rc = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0 {
        return u64::from(stx.stx_dio_offset_align).max(512);
    }
    4096
}

/// The size a test file at the missing `path` is created with: `size`, or the default
/// size for the built-in test file (`create_default`); a missing path under `/dev` (a device
/// that is not there) and a missing path without a size are
/// refused ([`TargetError::Missing`]), as is a size of 0. `run` and the dashboard both ask.
pub fn new_file_size(
    path: &Path,
    size: Option<u64>,
    create_default: bool,
) -> Result<u64, TargetError> {
    // A missing path under /dev is a device that is not there, never a file to make
    // (except in /dev/shm, a tmpfs for files).
    if path.starts_with("/dev") && !path.starts_with("/dev/shm") {
        return Err(TargetError::Invalid {
            path: path.display().to_string(),
            message: "no such device".into(),
        });
    }
    let size = match (size, create_default) {
        (Some(s), _) => s,
        (None, true) => DEFAULT_FILE_SIZE,
        (None, false) => {
            return Err(TargetError::Missing {
                path: path.display().to_string(),
            })
        }
    };
    if size == 0 {
        return Err(TargetError::Invalid {
            path: path.display().to_string(),
            message: "a test file needs a size above 0".into(),
        });
    }
    Ok(size)
}

/// Creates the test file; its folder is made only for the built-in test file
/// (`make_folder`): a folder that does not exist is never made for a path the user typed.
fn create_file(path: &Path, size: u64, make_folder: bool) -> Result<(), TargetError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if make_folder {
            fs::create_dir_all(dir).map_err(|e| io_err(dir, "cannot create directory", e))?;
        } else if !dir.is_dir() {
            return Err(TargetError::NoFolder {
                path: path.display().to_string(),
                folder: dir.display().to_string(),
            });
        }
    }
    let (folder, name) = crate::owned::Folder::of_file(path).map_err(|e| TargetError::Io {
        path: path.display().to_string(),
        what: "cannot create test file".into(),
        source: std::io::Error::other(e),
    })?;
    let (f, mine) = folder
        .create_open(&name, 0o644)
        .map_err(|e| TargetError::Io {
            path: path.display().to_string(),
            what: "cannot create test file".into(),
            source: match e {
                crate::owned::OwnedError::Exists { .. } => std::io::ErrorKind::AlreadyExists.into(),
                crate::owned::OwnedError::Io { source, .. } => source,
                e => std::io::Error::other(e),
            },
        })?;
    if let Err(e) = allocate(&f, path, size) {
        // Nothing half-made is left behind: the file was created just now, for this run.
        drop(f);
        return Err(match folder.remove(&mine) {
            Ok(_) => e,
            Err(rm) => TargetError::Invalid {
                path: path.display().to_string(),
                message: format!("{e}; the empty test file could not be removed ({rm})"),
            },
        });
    }
    marker::mark_created(&f, path);
    Ok(())
}

fn allocate(f: &File, path: &Path, size: u64) -> Result<(), TargetError> {
    // SAFETY: fallocate passes no memory, only integers; the fd is `f`'s, borrowed and so
    // open for the call.
    let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size as libc::off_t) };
    if rc != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::ENOSPC) {
            return Err(io_err(
                path,
                &format!("no room for a {} test file", format_size(size)),
                e,
            ));
        }
        // Filesystems without fallocate: a sparse file; it is filled before reads.
        f.set_len(size)
            .map_err(|e| io_err(path, "cannot size test file", e))?;
    }
    Ok(())
}

/// Opens (creating if asked) and checks the target for the request.
pub fn prepare(path: &Path, req: &TargetRequest) -> Result<PreparedTarget, TargetError> {
    let meta = match fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_err(path, "cannot inspect", e)),
    };
    let Some(meta) = meta else {
        let size = new_file_size(path, req.size, req.create_default)?;
        create_file(path, size, req.create_default)?;
        return Ok(PreparedTarget {
            path: path.to_path_buf(),
            kind: TargetKind::File,
            size,
            align: file_dio_align(path),
            created: true,
            unwritten: true,
        });
    };

    let ft = meta.file_type();
    if ft.is_char_device() {
        if let Some(ns) = crate::engine::native::nvme::block_namespace(path) {
            // Passthrough goes around the block layer, not around the guard: the namespace
            // behind the generic device is checked (and sized) as the block device it is,
            // and naming either device confirms a write.
            let confirmed = match &req.destroy_data {
                Some(d) if d == path => Some(ns.clone()),
                other => other.clone(),
            };
            let req = TargetRequest {
                destroy_data: confirmed,
                ..req.clone()
            };
            let t = prepare(&ns, &req)?;
            return Ok(PreparedTarget {
                path: path.to_path_buf(),
                kind: TargetKind::NvmeGeneric,
                ..t
            });
        }
    }
    if ft.is_block_device() {
        let f = File::open(path).map_err(|e| io_err(path, "cannot open", e))?;
        let (size, lbs) = block_device_geometry(&f).map_err(|e| io_err(path, "cannot size", e))?;
        if req.writes {
            guard::check_block_device_write(
                path,
                meta.rdev(),
                req.random_writes,
                req.destroy_data.as_deref(),
            )?;
        }
        return Ok(PreparedTarget {
            path: path.to_path_buf(),
            kind: TargetKind::BlockDevice,
            size,
            align: lbs,
            created: false,
            unwritten: false,
        });
    }
    if !ft.is_file() {
        return Err(TargetError::Invalid {
            path: path.display().to_string(),
            message: "is neither a regular file nor a block device".into(),
        });
    }
    let f = File::open(path).map_err(|e| io_err(path, "cannot open", e))?;
    let ours = marker::is_created(&f, path);
    match (req.writes, ours) {
        (true, false) => guard::check_file_write(path, req.destroy_data.as_deref())?,
        (true, true) => guard::check_file_in_use(path)?,
        (false, _) => {}
    }
    let mut size = meta.len();
    if let Some(want) = req.size {
        if want > size {
            if !ours {
                return Err(TargetError::Invalid {
                    path: path.display().to_string(),
                    message: format!(
                        "the region asked for runs past the end of the file ({} of {}); \
                         drivescope grows only files it created",
                        format_size(want),
                        format_size(size)
                    ),
                });
            }
            // Opened again through the descriptor that was checked (the same file, whatever
            // the path names now), for writing.
            let w = OpenOptions::new()
                .write(true)
                .open(format!("/proc/self/fd/{}", f.as_raw_fd()))
                .map_err(|e| io_err(path, "cannot open for growing", e))?;
            allocate(&w, path, want)?;
            size = want;
        }
    }
    let unwritten = extents::has_unwritten(&f, size).unwrap_or(ours);
    Ok(PreparedTarget {
        path: path.to_path_buf(),
        kind: TargetKind::File,
        size,
        align: file_dio_align(path),
        created: false,
        unwritten,
    })
}
