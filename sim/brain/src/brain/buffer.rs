//! The engine's working buffers of rates. A batch's rates are gathered from everywhere at every
//! step (each connection reads its sender's rates of the whole batch), so with 4 KiB pages most
//! gathers also miss the address-translation cache: a FlyWire batch of 32 spans 4,300 pages, twice
//! what the translation cache of a common core holds. A buffer of 2 MiB or more is therefore placed
//! on a 2 MiB boundary and, on Linux, offered to the kernel for huge pages
//! (`madvise(MADV_HUGEPAGE)`, which the usual `transparent_hugepage=madvise` setting honours): the
//! same batch then spans nine pages. It is a hint only: where the kernel declines, the buffer is
//! an ordinary zeroed allocation and every rate is the same.

use std::alloc::{Layout, alloc_zeroed, dealloc, handle_alloc_error};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// 2 MiB, the huge page size of x86-64 and most ARM64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// A zeroed run of `f32`s, on a huge-page boundary when it is at least one huge page long.
pub struct RateBuffer {
    ptr: NonNull<f32>,
    len: usize,
    layout: Layout,
}

// SAFETY: the buffer owns its allocation outright, as a Vec<f32> would.
unsafe impl Send for RateBuffer {}
// SAFETY: shared access only reads through `&[f32]`.
unsafe impl Sync for RateBuffer {}

impl RateBuffer {
    /// `len` zeros; with `huge_pages`, a buffer of 2 MiB or more is offered huge pages.
    pub fn zeroed(len: usize, huge_pages: bool) -> RateBuffer {
        let bytes = len.checked_mul(size_of::<f32>()).expect("a rate buffer's size fits in memory");
        if bytes == 0 {
            return RateBuffer { ptr: NonNull::dangling(), len: 0, layout: Layout::new::<f32>() };
        }
        let align = if huge_pages && bytes >= HUGE_PAGE { HUGE_PAGE } else { align_of::<f32>() };
        let layout = Layout::from_size_align(bytes, align).expect("a valid layout");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<f32>()) else { handle_alloc_error(layout) };
        if align == HUGE_PAGE {
            advise_huge_pages(raw, bytes);
        }
        RateBuffer { ptr, len, layout }
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    // SAFETY: the range is this buffer's own allocation; the advice changes no contents.
    // A refusal (an old kernel, THP off) leaves ordinary pages: nothing to report.
    let _ = unsafe { libc::madvise(ptr.cast(), bytes, libc::MADV_HUGEPAGE) };
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_ptr: *mut u8, _bytes: usize) {}

impl Drop for RateBuffer {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated by `alloc_zeroed` with this layout.
            unsafe { dealloc(self.ptr.as_ptr().cast(), self.layout) }
        }
    }
}

impl Deref for RateBuffer {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        // SAFETY: `len` initialised (zeroed) f32s owned by this buffer.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for RateBuffer {
    fn deref_mut(&mut self) -> &mut [f32] {
        // SAFETY: as above, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::RateBuffer;

    #[test]
    fn a_buffer_is_zeroed_writable_and_large_ones_sit_on_a_huge_page_boundary() {
        for len in [0usize, 1, 1000, 600_000, 3 << 20] {
            let mut b = RateBuffer::zeroed(len, true);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0.0));
            if let Some(last) = b.last_mut() {
                *last = 1.5;
            }
            assert_eq!(b.iter().sum::<f32>(), if len > 0 { 1.5 } else { 0.0 });
            if len * 4 >= 2 << 20 {
                assert_eq!(b.as_ptr() as usize % (2 << 20), 0, "{len}");
            }
            assert_eq!(RateBuffer::zeroed(len, false).len(), len);
        }
    }
}
