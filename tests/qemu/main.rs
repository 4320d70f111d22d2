//! The QEMU guests (scripts/qemu-nvme/run.sh): a real emulated NVMe controller, and faults
//! and holders on emulated drives. Each boots a guest for minutes (under TCG where there is
//! no usable /dev/kvm), so they are a binary of their own, run after tests/it, and boot one
//! at a time (see `common::qemu::boot`).

#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod qemu_engine;
mod qemu_nvme;
mod qemu_power_cut;
mod qemu_safety;
mod qemu_wear;
mod qemu_zoned;
