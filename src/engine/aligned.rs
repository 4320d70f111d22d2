//! A page-aligned, zeroed run of bytes ([`AlignedBuf`]): the memory O_DIRECT I/O needs.
//! The in-process engines' I/O buffers are made of one; a run reading its target back past
//! the cache (a power cut's check) reads into one.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// Buffer alignment: a page, enough for O_DIRECT on every device we meet.
pub const BUF_ALIGN: usize = 4096;

/// `len` bytes, page-aligned, zeroed when made.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: `AlignedBuf` owns its allocation outright (nothing else holds `ptr` but the
// kernel, for I/O the owner submitted), has no thread-affine state, and every access goes
// through `&self`/`&mut self`, so moving it to another thread is sound. It is not `Sync`:
// shared references on two threads are never needed.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// At least `len` bytes (a whole number of pages, one at least), zeroed. None if the
    /// allocation fails.
    pub fn zeroed(len: usize) -> Option<Self> {
        let size = len.checked_next_multiple_of(BUF_ALIGN)?.max(BUF_ALIGN);
        let layout = Layout::from_size_align(size, BUF_ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size (at least BUF_ALIGN) and a valid alignment;
        // a null return (allocation failure) becomes None.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        Some(AlignedBuf { ptr, layout })
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Never: it holds a page at least.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Its start: `len()` bytes, page-aligned, valid as long as `self` lives. Only
    /// dereferencing the pointer (or handing it to the kernel) needs `unsafe`, and whoever
    /// does that must keep the buffer alive and unaliased for as long as the access (or the
    /// kernel's I/O) lasts.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is the live allocation of `layout.size()` bytes made in `zeroed`,
        // initialised by alloc_zeroed, owned by `self` for as long as the borrow; Rust code
        // writes to it only through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` makes this slice the only reference into
        // the buffer while it lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: `ptr` was allocated with exactly this `layout` in `zeroed` and is freed
        // only here, once. Any I/O the kernel had on it was reaped before, or the buffer
        // was leaked instead of dropped (see the engine's uring.rs).
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_pages_aligned_and_zeroed() {
        let mut b = AlignedBuf::zeroed(5000).unwrap();
        assert_eq!(b.len(), 2 * BUF_ALIGN);
        assert_eq!(b.as_ptr() as usize % BUF_ALIGN, 0);
        assert!(b.iter().all(|&x| x == 0));
        b[8191] = 7;
        assert_eq!(b[8191], 7);
        assert_eq!(AlignedBuf::zeroed(0).unwrap().len(), BUF_ALIGN);
        assert!(AlignedBuf::zeroed(usize::MAX).is_none());
    }
}
