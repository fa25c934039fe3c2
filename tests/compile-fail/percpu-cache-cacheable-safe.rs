// SPDX-License-Identifier: GPL-2.0
//! The cache calls a Cacheable type's functions while a list is half
//! updated, so they must not re-enter a cache of their type, and must free
//! in any context but an NMI: promises only an unsafe impl can make.
// error: requires an `unsafe impl` declaration

use core::ptr::NonNull;
use kernel::percpu_cache::{Cacheable, PerCpuCache, PutContext, Uncounted};

pub struct Node(Option<NonNull<Node>>);
// SAFETY: Plain memory.
unsafe impl Send for Node {}
impl Cacheable for Node {
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

#[no_mangle]
pub fn compile_fail_test() -> bool {
    PerCpuCache::<Node>::new().is_ok()
}
