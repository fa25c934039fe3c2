// SPDX-License-Identifier: GPL-2.0
//! Draining a CPU's lists is sound only while nothing runs on the CPU and no
//! other drain or teardown of the cache runs: drain_cpu() is unsafe, and its
//! caller must take on that exclusion (the CPU-hotplug core provides it).
// error: drain_cpu` is unsafe and requires unsafe

use core::ptr::NonNull;
use kernel::cpu::CpuId;
use kernel::percpu_cache::{Cacheable, PerCpuCache, PutContext, Uncounted};

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

#[no_mangle]
pub fn compile_fail_test(cache: &PerCpuCache<Node>, cpu: CpuId) -> u32 {
    cache.drain_cpu(cpu)
}
