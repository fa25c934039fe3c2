// SPDX-License-Identifier: GPL-2.0
//! The lists of a CPU hold up to Cacheable::MAX + 2 objects, counted in u32s:
//! a cache of a type whose MAX leaves no room for the two does not compile.
// error: Cacheable::MAX + 2 must fit in a u32

use core::ptr::NonNull;
use kernel::percpu_cache::{Cacheable, PerCpuCache, PutContext, Uncounted};

pub struct Node(Option<NonNull<Node>>);
// SAFETY: Plain memory.
unsafe impl Send for Node {}
// SAFETY: Nothing is ever cached: the test does not run.
unsafe impl Cacheable for Node {
    const MAX: u32 = u32::MAX - 1;
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
