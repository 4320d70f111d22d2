//! A folder held open for a whole operation: every name is resolved in it (`openat`,
//! `renameat2`, `unlinkat`), one component at a time and never through a link, so a folder
//! swapped for a link meanwhile changes nothing: what was opened is written. Files are
//! made exclusively and replaced or removed only while the name still holds the file
//! of ours ([`Mine`]), checked by the kernel's exchange of the two names.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::error::OwnedError;
use super::identity::Identity;

/// A folder, held open.
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
    path: PathBuf,
}

/// A file of ours in a [`Folder`]: its name and the identity of the file we made (or
/// took as ours) there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mine {
    name: OsString,
    id: Identity,
}

impl Mine {
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    pub fn identity(&self) -> &Identity {
        &self.id
    }
}

/// How many temp names are tried before giving up.
const TEMP_TRIES: u32 = 1000;

/// `name` as one component: not empty, no `/`, not `.` or `..`.
fn component(name: &OsStr) -> std::io::Result<&OsStr> {
    let b = name.as_bytes();
    if b.is_empty() || b.contains(&b'/') || b == b"." || b == b".." {
        return Err(std::io::Error::new(
            ErrorKind::InvalidInput,
            "not a file name in a folder",
        ));
    }
    Ok(name)
}

impl Folder {
    /// The folder at `path`, resolved once (links on the way followed, as the user named
    /// it); from then on what happens to `path` changes nothing for this value.
    pub fn open(path: &Path) -> Result<Folder, OwnedError> {
        let dir = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| OwnedError::io(path, "cannot open the folder", e.into()))?;
        Ok(Folder {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// [`Folder::open`], the missing folders on the way made first (mode 0755).
    pub fn open_or_make(path: &Path) -> Result<Folder, OwnedError> {
        if !path.as_os_str().is_empty() {
            std::fs::create_dir_all(path)
                .map_err(|e| OwnedError::io(path, "cannot create the folder", e))?;
        }
        Folder::open(path)
    }

    /// The folder `path` is in, held open, and `path`'s last component.
    pub fn of_file(path: &Path) -> Result<(Folder, OsString), OwnedError> {
        let name = path
            .file_name()
            .ok_or_else(|| {
                OwnedError::io(
                    path,
                    "not a file name",
                    std::io::Error::from(ErrorKind::InvalidInput),
                )
            })?
            .to_os_string();
        let parent = path.parent().unwrap_or(Path::new(""));
        Ok((Folder::open(parent)?, name))
    }

    /// The folder's path as it was named (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the folder is now (moved or not since it was opened), as the kernel tells it;
    /// the path it was named by when the kernel cannot tell.
    pub fn now_at(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
            .ok()
            .filter(|p| p.is_absolute() && p.is_dir())
            .unwrap_or_else(|| self.path.clone())
    }

    /// The path of `name` in this folder (for messages).
    pub fn join(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    fn err(&self, name: &OsStr, what: &'static str, e: Errno) -> OwnedError {
        OwnedError::io(&self.join(name), what, e.into())
    }

    /// A new folder `name` in this one, made here and now (an existing one is
    /// [`OwnedError::Exists`]), held open.
    pub fn make_new(&self, name: &OsStr) -> Result<Folder, OwnedError> {
        let name = component(name).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) => {}
            Err(Errno::EXIST) => {
                return Err(OwnedError::Exists {
                    path: self.join(name),
                })
            }
            Err(e) => return Err(self.err(name, "cannot create the folder", e)),
        }
        self.sub(name)
    }

    /// The folder `name` in this one, held open (a link there is refused).
    pub fn sub(&self, name: &OsStr) -> Result<Folder, OwnedError> {
        let name = component(name).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP | Errno::NOTDIR => OwnedError::NotOurs {
                path: self.join(name),
            },
            e => self.err(name, "cannot open the folder", e),
        })?;
        Ok(Folder {
            fd,
            path: self.join(name),
        })
    }

    /// The identity of what `name` holds now (not followed if a link), `None` when nothing.
    pub fn identity_at(&self, name: &OsStr) -> Result<Option<Identity>, OwnedError> {
        match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => Identity::of(&fd)
                .map(Some)
                .map_err(|e| OwnedError::io(&self.join(name), "cannot look at it", e)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(self.err(name, "cannot look at it", e)),
        }
    }

    /// Creates `name` exclusively (never through a link, never over anything), open for
    /// reading and writing, with `mode`.
    pub fn create_open(&self, name: &OsStr, mode: u32) -> Result<(File, Mine), OwnedError> {
        let name = component(name).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )
        .map_err(|e| match e {
            Errno::EXIST => OwnedError::Exists {
                path: self.join(name),
            },
            e => self.err(name, "cannot create", e),
        })?;
        let file = File::from(fd);
        let id = Identity::of(&file).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        Ok((
            file,
            Mine {
                name: name.to_os_string(),
                id,
            },
        ))
    }

    /// Opens the existing `name` (never through a link, without blocking on a FIFO) and,
    /// when it is a regular file that `ours` accepts, takes it as ours: from then on it is
    /// replaced or removed only while the name still holds it. Nothing there: `None`.
    pub fn adopt(
        &self,
        name: &OsStr,
        ours: impl FnOnce(&mut File) -> bool,
    ) -> Result<Option<(File, Mine)>, OwnedError> {
        let name = component(name).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => {
                return Err(OwnedError::NotOurs {
                    path: self.join(name),
                })
            }
            Err(e) => return Err(self.err(name, "cannot open", e)),
        };
        let mut file = File::from(fd);
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        if !regular || !ours(&mut file) {
            return Err(OwnedError::NotOurs {
                path: self.join(name),
            });
        }
        let id = Identity::of(&file).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        Ok(Some((
            file,
            Mine {
                name: name.to_os_string(),
                id,
            },
        )))
    }

    /// A new temp file beside `name` (`.NAME.tmp-PID-N`), made exclusively.
    fn temp(&self, name: &OsStr) -> Result<(File, Mine), OwnedError> {
        let pid = std::process::id();
        for n in 0..TEMP_TRIES {
            let mut tmp = OsString::from(".");
            tmp.push(name);
            tmp.push(format!(".tmp-{pid}-{n}"));
            match self.create_open(&tmp, 0o644) {
                Err(OwnedError::Exists { .. }) => continue,
                other => return other,
            }
        }
        Err(OwnedError::io(
            &self.join(name),
            "no free temp name",
            std::io::Error::from(ErrorKind::AlreadyExists),
        ))
    }

    /// A temp file filled by `fill` and synced.
    fn filled_temp(
        &self,
        name: &OsStr,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Mine, OwnedError> {
        let (file, tmp) = self.temp(name)?;
        let written = (|| {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
            fill(&mut w)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()
        })();
        match written {
            Ok(()) => Ok(tmp),
            Err(e) => {
                let _ = self.remove(&tmp);
                Err(OwnedError::io(&self.join(name), "cannot write", e))
            }
        }
    }

    /// Makes `name` with the content `fill` writes, whole or not at all (a temp file
    /// synced, then moved to `name` only if nothing is there: `renameat2` with
    /// `RENAME_NOREPLACE`, or a hard link where the filesystem has no such rename).
    pub fn create(
        &self,
        name: &OsStr,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<Mine, OwnedError> {
        let name = component(name).map_err(|e| OwnedError::io(&self.join(name), "", e))?;
        let tmp = self.filled_temp(name, fill)?;
        let placed = match rustix::fs::renameat_with(
            &self.fd,
            &tmp.name,
            &self.fd,
            name,
            RenameFlags::NOREPLACE,
        ) {
            Err(Errno::INVAL) | Err(Errno::NOSYS) => {
                rustix::fs::linkat(&self.fd, &tmp.name, &self.fd, name, AtFlags::empty()).map(
                    |()| {
                        let _ = self.remove(&tmp);
                    },
                )
            }
            other => other,
        };
        match placed {
            Ok(()) => {
                self.sync();
                Ok(Mine {
                    name: name.to_os_string(),
                    id: tmp.id,
                })
            }
            Err(e) => {
                let _ = self.remove(&tmp);
                Err(match e {
                    Errno::EXIST => OwnedError::Exists {
                        path: self.join(name),
                    },
                    e => self.err(name, "cannot create", e),
                })
            }
        }
    }

    /// Replaces the file `mine` names with the content `fill` writes, whole or not at all,
    /// only while the name still holds that file: the new file and the name are exchanged
    /// (`RENAME_EXCHANGE`), what was there is checked, and put back if it is not ours
    /// ([`OwnedError::NotOurs`], nothing changed). A name that holds nothing now is made
    /// anew. `mine` then names the new file.
    pub fn replace(
        &self,
        mine: &mut Mine,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), OwnedError> {
        let name = mine.name.clone();
        let tmp = self.filled_temp(&name, fill)?;
        let exchanged =
            rustix::fs::renameat_with(&self.fd, &tmp.name, &self.fd, &name, RenameFlags::EXCHANGE);
        match exchanged {
            Ok(()) => {}
            Err(Errno::NOENT) => {
                // Nothing at the name (ours was moved away): nothing to lose.
                let id = tmp.id.clone();
                let new = Mine {
                    name: tmp.name.clone(),
                    id,
                };
                let made = rustix::fs::renameat_with(
                    &self.fd,
                    &tmp.name,
                    &self.fd,
                    &name,
                    RenameFlags::NOREPLACE,
                );
                return match made {
                    Ok(()) => {
                        self.sync();
                        mine.id = new.id;
                        Ok(())
                    }
                    Err(e) => {
                        let _ = self.remove(&new);
                        Err(match e {
                            Errno::EXIST => OwnedError::NotOurs {
                                path: self.join(&name),
                            },
                            e => self.err(&name, "cannot replace", e),
                        })
                    }
                };
            }
            Err(Errno::INVAL) | Err(Errno::NOSYS) => {
                // A filesystem without the exchange: the name is checked, then renamed
                // over (the one window this leaves is a filesystem's, not ours).
                let still = self.identity_at(&name)?.is_some_and(|id| id.same(&mine.id));
                if !still {
                    let _ = self.remove(&tmp);
                    return Err(OwnedError::NotOurs {
                        path: self.join(&name),
                    });
                }
                return match rustix::fs::renameat(&self.fd, &tmp.name, &self.fd, &name) {
                    Ok(()) => {
                        self.sync();
                        mine.id = tmp.id;
                        Ok(())
                    }
                    Err(e) => {
                        let _ = self.remove(&tmp);
                        Err(self.err(&name, "cannot replace", e))
                    }
                };
            }
            Err(e) => {
                let _ = self.remove(&tmp);
                return Err(self.err(&name, "cannot replace", e));
            }
        }
        // The temp name now holds what the name held: ours, or put back.
        let was = self.identity_at(&tmp.name)?;
        if was.as_ref().is_some_and(|id| id.same(&mine.id)) {
            let old = Mine {
                name: tmp.name.clone(),
                id: mine.id.clone(),
            };
            let _ = self.remove(&old);
            self.sync();
            mine.id = tmp.id;
            return Ok(());
        }
        let back =
            rustix::fs::renameat_with(&self.fd, &tmp.name, &self.fd, &name, RenameFlags::EXCHANGE);
        if back.is_ok() {
            let _ = self.remove(&tmp);
        }
        Err(OwnedError::NotOurs {
            path: self.join(&name),
        })
    }

    /// Removes the file `mine` names, only while the name holds it: the name is first
    /// moved aside (`RENAME_NOREPLACE` to a name of ours), what was moved is checked, and
    /// put back if it is not ours. Returns whether it removed it (`false`: the name held
    /// nothing, or another file, which is left as it was).
    pub fn remove(&self, mine: &Mine) -> Result<bool, OwnedError> {
        let pid = std::process::id();
        let mut aside = None;
        for n in 0..TEMP_TRIES {
            let mut a = OsString::from(".");
            a.push(&mine.name);
            a.push(format!(".rm-{pid}-{n}"));
            match rustix::fs::renameat_with(
                &self.fd,
                &mine.name,
                &self.fd,
                &a,
                RenameFlags::NOREPLACE,
            ) {
                Ok(()) => {
                    aside = Some(a);
                    break;
                }
                Err(Errno::EXIST) => continue,
                Err(Errno::NOENT) => return Ok(false),
                Err(Errno::INVAL) | Err(Errno::NOSYS) => {
                    // No such rename here: checked, then unlinked.
                    let still = self
                        .identity_at(&mine.name)?
                        .is_some_and(|id| id.same(&mine.id));
                    if !still {
                        return Ok(false);
                    }
                    rustix::fs::unlinkat(&self.fd, &mine.name, AtFlags::empty())
                        .map_err(|e| self.err(&mine.name, "cannot remove", e))?;
                    return Ok(true);
                }
                Err(e) => return Err(self.err(&mine.name, "cannot remove", e)),
            }
        }
        let Some(aside) = aside else {
            return Ok(false);
        };
        let moved = self.identity_at(&aside)?;
        if moved.is_some_and(|id| id.same(&mine.id)) {
            rustix::fs::unlinkat(&self.fd, &aside, AtFlags::empty())
                .map_err(|e| self.err(&mine.name, "cannot remove", e))?;
            return Ok(true);
        }
        // Not ours: back where it was (should the name be taken again meanwhile, it stays
        // under the name it was moved to, whole).
        let _ = rustix::fs::renameat_with(
            &self.fd,
            &aside,
            &self.fd,
            &mine.name,
            RenameFlags::NOREPLACE,
        );
        Ok(false)
    }

    /// The file `name` holds as ours, when it is the file `id` says (proven ours by the
    /// caller: made by this process, or recorded when it was made); `None` otherwise.
    pub fn mine_at(&self, name: &OsStr, id: &Identity) -> Result<Option<Mine>, OwnedError> {
        let now = self.identity_at(name)?;
        Ok(now.filter(|now| now.same(id)).map(|_| Mine {
            name: name.to_os_string(),
            id: id.clone(),
        }))
    }

    /// Whether `name` still holds the file `mine` names.
    pub fn holds(&self, mine: &Mine) -> bool {
        self.identity_at(&mine.name)
            .ok()
            .flatten()
            .is_some_and(|id| id.same(&mine.id))
    }

    /// Opens the file `mine` names for appending, only while the name holds it.
    pub fn open_append(&self, mine: &Mine) -> Result<File, OwnedError> {
        self.open_mine(mine, OFlags::WRONLY | OFlags::APPEND)
    }

    /// Opens the file `mine` names for reading and writing, only while the name holds it.
    pub fn open_rw(&self, mine: &Mine) -> Result<File, OwnedError> {
        self.open_mine(mine, OFlags::RDWR)
    }

    fn open_mine(&self, mine: &Mine, flags: OFlags) -> Result<File, OwnedError> {
        let fd = rustix::fs::openat(
            &self.fd,
            &mine.name,
            flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            Errno::LOOP | Errno::NOENT | Errno::NXIO => OwnedError::NotOurs {
                path: self.join(&mine.name),
            },
            e => self.err(&mine.name, "cannot open", e),
        })?;
        let file = File::from(fd);
        let same = Identity::of(&file).is_ok_and(|id| id.same(&mine.id));
        if !same {
            return Err(OwnedError::NotOurs {
                path: self.join(&mine.name),
            });
        }
        Ok(file)
    }

    /// Syncs the folder (its names), best effort.
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(self.fd.as_fd());
    }
}

#[cfg(test)]
mod tests;
