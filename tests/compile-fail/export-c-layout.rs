// SPDX-License-Identifier: GPL-2.0
//! percpu_cache_export_c! hands C pointers out as the Rust type: a type that
//! does not have the size and alignment of the C type it claims to wrap does
//! not compile.
// error: a ForeignCacheable type must have the size and alignment of its C type

use core::ptr::NonNull;
use kernel::percpu_cache::{Cacheable, ForeignCacheable, PutContext, Uncounted};

pub struct Wide([u64; 2]);
// SAFETY: Plain memory.
unsafe impl Send for Wide {}
// SAFETY: Nothing is ever cached: the test does not run.
unsafe impl Cacheable for Wide {
    const MAX: u32 = 1;
    const SPLICE_THRESHOLD: u32 = 1;
    type Counters = Uncounted;
    unsafe fn next(_: NonNull<Self>) -> Option<NonNull<Self>> {
        None
    }
    unsafe fn set_next(_: NonNull<Self>, _: Option<NonNull<Self>>) {}
    unsafe fn retire(_: NonNull<Self>, _: PutContext) {}
    unsafe fn release(_: NonNull<Self>) {}
}
// SAFETY: Wrong on purpose: a `Wide` is not a `u64`.
unsafe impl ForeignCacheable for Wide {
    type C = u64;
}
pub struct Handle;

kernel::percpu_cache_export_c! {
    item: Wide,
    handle: Handle,
    new: wide_new,
    free: wide_free,
    alloc: wide_alloc,
    put: wide_put,
    drain_cpu: wide_drain_cpu,
}
