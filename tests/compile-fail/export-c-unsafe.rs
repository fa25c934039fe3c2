// SPDX-License-Identifier: GPL-2.0
//! percpu_cache_export_c! takes only types whose tie to their C type was
//! promised with an `unsafe impl ForeignCacheable`: a plain Cacheable does
//! not compile.
// error: the trait bound `Node: ForeignCacheable` is not satisfied

use core::ptr::NonNull;
use kernel::percpu_cache::{Cacheable, PutContext, Uncounted};

pub struct Node(u64);
// SAFETY: Plain memory.
unsafe impl Send for Node {}
// SAFETY: Nothing is ever cached: the test does not run.
unsafe impl Cacheable for Node {
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
pub struct Handle;

kernel::percpu_cache_export_c! {
    item: Node,
    handle: Handle,
    new: node_new,
    free: node_free,
    alloc: node_alloc,
    put: node_put,
    drain_cpu: node_drain_cpu,
}
