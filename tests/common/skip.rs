//! The one skip policy of the integration tests.
//!
//! A test that cannot run here calls `skip!(Kind, "why")`, which returns from the test;
//! a helper that gives up (no loop device, no tmux) or a test that leaves out one of its
//! cases and goes on calls [`note`]. Outside CI both print `skipped: why` and the test
//! passes. Under CI (`CI` set, and not empty, `0` or `false`) a skip passes only if its kind
//! is in [`ALLOWED_IN_CI`]; any other fails the test with its reason, because CI
//! (`.ci/run`: root, loop devices, every tool installed) must be able to run it.

use std::fmt;

/// What a test found missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Not root: loop devices, mounts and swap need it.
    NotRoot,
    /// losetup could not make a loop device.
    NoLoopDevice,
    /// A program `.ci/run` installs (tmux, sfdisk, mkfs.ext4, mdadm, pvcreate, dmsetup,
    /// smartctl…) is missing, or one (drivescope too) failed where it should work.
    Tool,
    /// The test's directory is on a file system with no block device under it.
    NoBlockDevice,
    /// The kernel lists no partitions of a partitioned loop device.
    NoPartitions,
    /// QEMU cannot run: not installed, or `DRIVESCOPE_SKIP_QEMU` is set.
    Qemu,
    /// An example the test runs was not built (`cargo test --test it` builds none).
    ExampleNotBuilt,
    /// The kernel lacks a sysctl a test sets (`kernel.io_uring_disabled` came in 6.6).
    NoSysctl,
    /// The kernel has no md driver, built in or loadable.
    NoMdDriver,
    /// The kernel has no device-mapper, built in or loadable.
    NoDmDriver,
}

/// The skips CI allows, each with why this kind of machine cannot do better.
///
/// Not here, on purpose: no /dev/kvm is no skip (run.sh boots the guest under TCG then),
/// and neither is a temp dir on tmpfs (the tests that need a real file system use
/// [`super::disk_tempdir`], under cargo's target dir).
pub const ALLOWED_IN_CI: &[(Skip, &str)] = &[
    (
        Skip::NoMdDriver,
        "the project's machines, and so CI's, run a kernel without md (CONFIG_BLK_DEV_MD off) \
         and without loadable modules (CONFIG_MODULES off), so neither mdadm nor modprobe can \
         bring it in; md signatures and md RAID holders are checked in the QEMU guest \
         (tests/qemu/qemu_safety.rs), whose Debian kernel has md",
    ),
    (
        Skip::NoDmDriver,
        "the same kernel has no device-mapper (CONFIG_BLK_DEV_DM off, no modules), so dmsetup \
         cannot make a table; device-mapper, dm-error, dm-flakey, dm-delay and LVM holders are \
         checked in the QEMU guest",
    ),
];

/// Whether this is a CI run: `CI` set to anything but empty, `0` or `false`.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// Why CI allows a skip of `kind`, if it does.
pub fn allowed_in_ci(kind: Skip) -> Option<&'static str> {
    ALLOWED_IN_CI
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, why)| *why)
}

/// Reports a skip of `kind` for `why`: prints `skipped: why`, or under CI panics unless the
/// kind is allowed there. The caller then returns (or goes on without the skipped case).
#[track_caller]
pub fn note(kind: Skip, why: impl fmt::Display) {
    let why = why.to_string();
    let why = why.trim();
    if !in_ci() {
        eprintln!("skipped: {why}");
        return;
    }
    match allowed_in_ci(kind) {
        Some(_) => eprintln!("skipped: {why} (allowed in CI: {kind:?}, tests/common/skip.rs)"),
        None => panic!(
            "CI must not skip this ({kind:?} is not among the skips tests/common/skip.rs \
             allows in CI): {why}"
        ),
    }
}

/// Skips the calling test: [`note`], then `return`.
///
/// `skip!(NotRoot, "loop devices need root")`: a [`Skip`] kind, then `format!` arguments.
macro_rules! skip {
    ($kind:ident, $($why:tt)+) => {{
        $crate::common::skip::note($crate::common::skip::Skip::$kind, format!($($why)+));
        return;
    }};
}
