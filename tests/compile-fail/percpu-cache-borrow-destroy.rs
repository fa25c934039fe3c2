// SPDX-License-Identifier: GPL-2.0
//! A cache that C code owns and Rust borrows for a call cannot be destroyed
//! (nor dropped) through the borrow: only the owner's free function, which
//! takes the cache back with from_foreign(), frees it.
// error: cannot move out of dereference of `CacheRef<'_, Node>`

use core::ptr::NonNull;
use kernel::ffi::c_void;
use kernel::percpu_cache::{Cacheable, PerCpuCache, PutContext, Uncounted};
use kernel::types::ForeignOwnable;

pub struct Node(Option<NonNull<Node>>);
// SAFETY: Plain memory.
unsafe impl Send for Node {}
// SAFETY: Nothing is ever cached: the test does not run.
unsafe impl Cacheable for Node {
    const MAX: u32 = 8;
    const SPLICE_THRESHOLD: u32 = 1;
    type Counters = Uncounted;
    unsafe fn next(_: NonNull<Self>) -> Option<NonNull<Self>> {
        None
    }
    unsafe fn set_next(_: NonNull<Self>, _: Option<NonNull<Self>>) {}
    unsafe fn retire(_: NonNull<Self>, _: PutContext) {}
    unsafe fn release(_: NonNull<Self>) {}
}

/// # Safety
///
/// `cache` came from `PerCpuCache::<Node>::into_foreign()` and is live.
#[no_mangle]
pub unsafe fn compile_fail_test(cache: *const c_void) -> u64 {
    // SAFETY: By the safety requirements.
    let borrowed = unsafe { PerCpuCache::<Node>::borrow(cache) };
    borrowed.destroy()
}
