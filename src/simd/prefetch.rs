//! A hint to the CPU to start loading memory ahead of its use.

/// Asks for the cache line at `p` ahead of its use. Only a hint: it never faults, whatever
/// the address, and changes nothing a program can observe.
#[inline]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: prefetching is a hint with no effect on memory or faults.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
