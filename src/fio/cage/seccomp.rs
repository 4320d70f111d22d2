//! The seccomp program of fio's cage: the calls fio is refused, each answering `EPERM`.

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

/// The calls fio is refused (`EPERM`): those that change mounts or namespaces, make
/// device nodes, reach into another process, leave fio's process group, swap, load code
/// into the kernel or reboot.
fn refused_calls() -> Vec<libc::c_long> {
    let mut v = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_mount_setattr,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_setns,
        libc::SYS_unshare,
        libc::SYS_mknodat,
        libc::SYS_ptrace,
        libc::SYS_process_vm_writev,
        libc::SYS_process_vm_readv,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_bpf,
        // fio's job processes call setsid(2) (and ignore its answer): refused, they stay
        // in the process group drivescope signals, so a pause, a stop or a kill reaches
        // every one of them, and none outlives the run.
        libc::SYS_setsid,
        libc::SYS_setpgid,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_mknod, libc::SYS_iopl, libc::SYS_ioperm]);
    v
}

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

/// The seccomp program: another architecture's calls (x32 included) are refused whole;
/// each refused call answers `EPERM`; every other call is allowed.
pub(super) fn seccomp_filter() -> Vec<libc::sock_filter> {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JGE, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W};
    let deny = libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32);
    let calls = refused_calls();
    let mut f = vec![
        // seccomp_data.arch
        stmt(BPF_LD | BPF_W | BPF_ABS, 4),
        jump(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET | BPF_K, deny),
        // seccomp_data.nr
        stmt(BPF_LD | BPF_W | BPF_ABS, 0),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // x32 calls (the same numbers with bit 30 set).
        f.push(jump(BPF_JMP | BPF_JGE | BPF_K, 0x4000_0000, 0, 1));
        f.push(stmt(BPF_RET | BPF_K, deny));
    }
    for nr in calls {
        f.push(jump(BPF_JMP | BPF_JEQ | BPF_K, nr as u32, 0, 1));
        f.push(stmt(BPF_RET | BPF_K, deny));
    }
    f.push(stmt(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW));
    f
}
