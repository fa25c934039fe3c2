// SPDX-License-Identifier: GPL-2.0

//! Block I/O descriptors (`struct bio`) and their per-CPU cache.
//!
//! C header: [`include/linux/bio.h`](srctree/include/linux/bio.h).
//!
//! With `CONFIG_BIO_ALLOC_CACHE_RUST`, the per-CPU cache of a `struct bio_set`
//! (`BIOSET_PERCPU_CACHE`) is a [`PerCpuCache`] of [`Bio`], which `block/bio.c` calls through
//! the functions declared in
//! [`include/linux/bio_cache_rust.h`](srctree/include/linux/bio_cache_rust.h) and defined by
//! [`bio_cache_export_c!`](crate::bio_cache_export_c).
//!
//! [`PerCpuCache`]: crate::percpu_cache::PerCpuCache

use crate::{
    bindings,
    percpu_cache::{Cacheable, ForeignCacheable, PutContext},
    types::Opaque,
};
use core::ptr::{self, NonNull};

/// A block I/O descriptor, a `struct bio`.
///
/// # Invariants
///
/// The wrapped `struct bio` was allocated from a `struct bio_set` (its `bi_pool`).
#[repr(transparent)]
pub struct Bio(Opaque<bindings::bio>);

impl Bio {
    #[inline]
    fn raw(this: NonNull<Self>) -> *mut bindings::bio {
        this.as_ptr().cast()
    }

    /// Hides the bio from kmemleak while the cache holds it: frees its slab object to kmemleak.
    ///
    /// A bio parked in the cache is free, to kmemleak, and allocated again when it leaves the
    /// cache ([`Bio::kmemleak_unpark`]): otherwise a bio handed out again would keep the age of
    /// its first allocation, and be reported as soon as it is in flight where kmemleak does not
    /// look. The C cache of `block/bio.c` does the same.
    ///
    /// # Safety
    ///
    /// The caller owns `this`, which kmemleak knows as allocated.
    #[inline]
    unsafe fn kmemleak_park(this: NonNull<Self>) {
        #[cfg(CONFIG_DEBUG_KMEMLEAK)]
        {
            let bio = Self::raw(this);
            // SAFETY: The caller owns `this`, a bio of the bio_set `bi_pool` (type invariant).
            let pad = unsafe { (*(*bio).bi_pool).front_pad } as usize;
            // SAFETY: The bio's slab object starts `front_pad` bytes before it, and kmemleak
            // knows it as allocated (the caller's guarantee).
            unsafe { bindings::kmemleak_free(bio.cast::<u8>().sub(pad).cast()) };
        }
        #[cfg(not(CONFIG_DEBUG_KMEMLEAK))]
        let _ = this;
    }

    /// Shows the bio to kmemleak again when it leaves the cache: allocates its slab object to
    /// kmemleak. `GFP_NOWAIT`: only kmemleak's metadata is allocated, in any context the cache
    /// runs in.
    ///
    /// # Safety
    ///
    /// The caller owns `this`, which [`Bio::kmemleak_park`] hid from kmemleak.
    #[inline]
    unsafe fn kmemleak_unpark(this: NonNull<Self>) {
        #[cfg(CONFIG_DEBUG_KMEMLEAK)]
        {
            let bio = Self::raw(this);
            // SAFETY: The caller owns `this`, a bio of the bio_set `bi_pool` (type invariant).
            let (pad, slab) = unsafe {
                let bs = (*bio).bi_pool;
                ((*bs).front_pad as usize, (*bs).bio_slab)
            };
            // SAFETY: `slab` is the bio_set's slab cache, which outlives its bios.
            let size = unsafe { bindings::kmem_cache_size(slab) } as usize;
            // SAFETY: The bio's slab object starts `front_pad` bytes before it and is `size`
            // bytes long; kmemleak_park() hid it from kmemleak (the caller's guarantee).
            unsafe {
                bindings::kmemleak_alloc(
                    bio.cast::<u8>().sub(pad).cast(),
                    size,
                    1,
                    bindings::GFP_NOWAIT,
                )
            };
        }
        #[cfg(not(CONFIG_DEBUG_KMEMLEAK))]
        let _ = this;
    }
}

// SAFETY: A bio has no tie to a thread or CPU: whoever owns it may free it on any CPU.
unsafe impl Send for Bio {}

// SAFETY:
// - The link is `bi_next`, which only a bio's current list uses; a bio put back with its last
//   reference is on no list, and the cache hands it out with `bi_next` to be reset by
//   `bio_init()`.
// - `retire` is `bio_uninit()`, after which the bio can be freed, or set up again with
//   `bio_init()`; it and `revive` only hide the bio's memory from kmemleak and show it again.
// - `release` is `bio_free()` (through `bio_cache_rust_release()`), which returns memory to the
//   bio_set's mempools or slabs and may run in task, soft and hard interrupt context. Not in an
//   NMI (`mempool_free()` takes the pool's lock), where the cache never calls it.
// - None of them calls into a bio cache.
unsafe impl Cacheable for Bio {
    /// `ALLOC_CACHE_MAX` of `block/bio.c`.
    const MAX: u32 = 256;
    /// `ALLOC_CACHE_THRESHOLD` of `block/bio.c`.
    const SPLICE_THRESHOLD: u32 = 16;
    #[cfg(CONFIG_BIO_ALLOC_CACHE_STATS)]
    type Counters = crate::percpu_cache::Counted;
    #[cfg(not(CONFIG_BIO_ALLOC_CACHE_STATS))]
    type Counters = crate::percpu_cache::Uncounted;

    #[inline]
    unsafe fn next(this: NonNull<Self>) -> Option<NonNull<Self>> {
        // SAFETY: The caller owns `this`, a valid bio.
        NonNull::new(unsafe { (*Self::raw(this)).bi_next }.cast())
    }

    #[inline]
    unsafe fn set_next(this: NonNull<Self>, next: Option<NonNull<Self>>) {
        let next = next.map_or(ptr::null_mut(), Self::raw);
        // SAFETY: The caller owns `this`, a valid bio.
        unsafe { (*Self::raw(this)).bi_next = next };
    }

    #[inline]
    unsafe fn retire(this: NonNull<Self>, _ctx: PutContext) {
        // SAFETY: The caller owns `this`, a valid bio with its last reference gone.
        unsafe { bindings::bio_uninit(Self::raw(this)) };
        // Not necessary, but helps not to iopoll bios that were already freed. The C cache
        // clears it for the task list only; clearing it whatever the list keeps the put path
        // free of a branch on the list, which would have the compiler inline `bio_uninit()` into
        // one path and call it from the other.
        // SAFETY: The caller owns `this`.
        unsafe { (*Self::raw(this)).bi_bdev = ptr::null_mut() };
        // SAFETY: The caller owns `this`, which kmemleak knows as allocated until here.
        unsafe { Self::kmemleak_park(this) };
    }

    #[inline]
    unsafe fn revive(this: NonNull<Self>) {
        // SAFETY: The caller owns `this`, which `retire` hid from kmemleak.
        unsafe { Self::kmemleak_unpark(this) };
    }

    #[inline]
    unsafe fn release(this: NonNull<Self>) {
        // SAFETY: The caller gives up `this`, a bio allocated from a bio_set (type invariant).
        unsafe { bindings::bio_cache_rust_release(Self::raw(this)) };
    }
}

// SAFETY: `Bio` is a transparent wrapper of `struct bio`.
unsafe impl ForeignCacheable for Bio {
    type C = bindings::bio;
}

// Without statistics, the cache takes per CPU what the C `struct bio_alloc_cache` of
// `block/bio.c` does: `free_list`, `free_list_irq`, `nr` and `nr_irq`.
#[cfg(not(CONFIG_BIO_ALLOC_CACHE_STATS))]
const _: () = assert!(
    crate::percpu_cache::slot_size::<Bio>()
        == 2 * core::mem::size_of::<*mut bindings::bio>() + 2 * core::mem::size_of::<u32>()
);

/// Exports the per-CPU bio cache to `block/bio.c`: defines the functions declared in
/// [`include/linux/bio_cache_rust.h`](srctree/include/linux/bio_cache_rust.h), a
/// [`PerCpuCache`] of [`Bio`] behind the opaque `struct bio_alloc_cache` pointer of a bio_set.
///
/// Invoked once, by `block/bio_cache.rs`, whose LLVM bitcode is linked into `bio.o` so that the
/// allocation and free paths inline into `bio_alloc_bioset()` and `bio_put()`.
///
/// [`PerCpuCache`]: crate::percpu_cache::PerCpuCache
#[macro_export]
macro_rules! bio_cache_export_c {
    () => {
        $crate::percpu_cache_export_c! {
            item: $crate::block::bio::Bio,
            handle: $crate::bindings::bio_alloc_cache,
            new: bio_cache_rust_new,
            free: bio_cache_rust_free,
            alloc: bio_cache_rust_alloc,
            put: bio_cache_rust_put,
            drain_cpu: bio_cache_rust_drain_cpu,
        }

        #[cfg(CONFIG_BIO_ALLOC_CACHE_STATS)]
        $crate::percpu_cache_export_c_stats! {
            item: $crate::block::bio::Bio,
            handle: $crate::bindings::bio_alloc_cache,
            stats: bio_cache_rust_stats => $crate::bindings::bio_alloc_cache_stats,
        }
    };
}
