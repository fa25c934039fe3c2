// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of [`PerCpuCache`] from Rust, on a type of their own: boxed nodes that count
//! their frees (`CONFIG_RUST_PERCPU_CACHE_KUNIT_TEST`).
//!
//! Operations run on a chosen CPU: in task context through `smp_call_on_cpu()`, in hard
//! interrupt context through an IPI (`smp_call_function_single()` from the other CPU). They
//! record what they saw, and the test case, in its own thread, asserts on it: an assertion
//! outside the test's thread is not reported to KUnit.

use super::{CacheBox, Cacheable, Counted, PerCpuCache, PutContext, Stats};
use crate::{
    bindings, c_str,
    cpu::CpuId,
    ffi::{c_int, c_ulong, c_void},
    kunit::{kunit_case, kunit_case_null},
    prelude::*,
};
use core::{
    ptr::{self, NonNull},
    sync::atomic::{AtomicU64, Ordering::Relaxed},
};

/// The lists of a CPU hold up to this many nodes, plus two.
const MAX: u32 = 8;
/// An allocation that finds the task list empty takes the hard-IRQ list from this many nodes.
const THRESHOLD: u32 = 4;
/// Nodes a case prepares at most.
const NODES: usize = 16;

/// Nodes freed by [`Cacheable::release`], in every case.
static RELEASED: AtomicU64 = AtomicU64::new(0);

/// A cacheable node: a box, linked through `next` while the cache holds it.
pub(crate) struct Node {
    next: Option<NonNull<Node>>,
    /// The context of the node's last put, set by [`Cacheable::retire`].
    retired: Option<PutContext>,
    /// How many times the cache handed the node out.
    revived: u32,
}

// SAFETY: A node is plain memory that any thread may own and free.
unsafe impl Send for Node {}

// SAFETY: `next` is used by the cache only; `retire` and `revive` write fields of a node the
// caller owns; `release` frees the box in any context; none of them uses a cache.
unsafe impl Cacheable for Node {
    const MAX: u32 = MAX;
    const SPLICE_THRESHOLD: u32 = THRESHOLD;
    type Counters = Counted;

    unsafe fn next(this: NonNull<Self>) -> Option<NonNull<Self>> {
        // SAFETY: The caller owns `this`.
        unsafe { this.as_ref().next }
    }

    unsafe fn set_next(mut this: NonNull<Self>, next: Option<NonNull<Self>>) {
        // SAFETY: The caller owns `this`.
        unsafe { this.as_mut().next = next };
    }

    unsafe fn retire(mut this: NonNull<Self>, ctx: PutContext) {
        // SAFETY: The caller owns `this`.
        unsafe { this.as_mut().retired = Some(ctx) };
    }

    unsafe fn revive(mut this: NonNull<Self>) {
        // SAFETY: The caller owns `this`.
        unsafe { this.as_mut().revived += 1 };
    }

    unsafe fn release(this: NonNull<Self>) {
        RELEASED.fetch_add(1, Relaxed);
        // SAFETY: The caller gives up `this`, which `node()` got from `KBox::into_raw`.
        drop(unsafe { KBox::from_raw(this.as_ptr()) });
    }
}

// SAFETY: `Node` is its own C type: a pointer to one is a pointer to the other.
unsafe impl super::ForeignCacheable for Node {
    type C = Node;
}

/// The cache exported as C functions, as `block/bio_cache.rs` exports the bio cache: what C
/// code can do with NULL and with a cache is tested through them.
#[expect(
    unused_attributes,
    unreachable_pub,
    reason = "the macro makes the functions `pub`, and `#[inline(always)]` for C callers"
)]
mod c {
    use super::Node;
    use crate::ffi::c_void;

    crate::percpu_cache_export_c! {
        item: Node,
        handle: c_void,
        new: rust_percpu_cache_kunit_new,
        free: rust_percpu_cache_kunit_free,
        alloc: rust_percpu_cache_kunit_alloc,
        put: rust_percpu_cache_kunit_put,
        drain_cpu: rust_percpu_cache_kunit_drain_cpu,
    }
}
use c::*;

fn node() -> Option<CacheBox<Node>> {
    let b = KBox::new(
        Node {
            next: None,
            retired: None,
            revived: 0,
        },
        GFP_KERNEL,
    )
    .ok()?;
    // SAFETY: The box is valid and ours; `release` frees it as a box.
    Some(unsafe { CacheBox::from_raw(NonNull::from(KBox::leak(b))) })
}

/// What a case's operations share with the CPUs they run on.
struct Run {
    cache: PerCpuCache<Node>,
    /// Nodes to put, taken from the front.
    nodes: [Option<CacheBox<Node>>; NODES],
    /// The nodes put, in order, and how many.
    put: [Option<NonNull<Node>>; NODES],
    nr_put: usize,
    /// What the allocations returned, in order, and how many.
    got: [Option<NonNull<Node>>; NODES],
    nr_got: usize,
    /// The next operation, and how many nodes it puts or allocates.
    op: Op,
    count: usize,
    /// The context the last operation ran in.
    in_task: bool,
    in_hardirq: bool,
}

impl Run {
    fn new(nr_nodes: usize) -> Option<Self> {
        let mut r = Self {
            cache: PerCpuCache::new().ok()?,
            nodes: [const { None }; NODES],
            put: [None; NODES],
            nr_put: 0,
            got: [None; NODES],
            nr_got: 0,
            op: Op::Put,
            count: 0,
            in_task: false,
            in_hardirq: false,
        };
        for slot in r.nodes.iter_mut().take(nr_nodes) {
            *slot = Some(node()?);
        }
        Some(r)
    }

    fn run(&mut self) {
        match self.op {
            Op::Put => self.put_nodes(),
            Op::Alloc => self.alloc_nodes(),
            Op::PutGot => self.put_got(),
        }
    }

    fn note_context(&mut self) {
        self.in_task = crate::context::in_task();
        self.in_hardirq = crate::context::in_hardirq();
    }

    /// Puts `count` of the prepared nodes into the cache, on the current CPU.
    fn put_nodes(&mut self) {
        self.note_context();
        for _ in 0..self.count {
            let Some(obj) = self.nodes.iter_mut().find_map(Option::take) else {
                return;
            };
            let obj = obj.into_raw();
            if let Some(slot) = self.put.get_mut(self.nr_put) {
                *slot = Some(obj);
                self.nr_put += 1;
            }
            // SAFETY: `obj` came from a `CacheBox` just now.
            self.cache.put(unsafe { CacheBox::from_raw(obj) });
        }
    }

    /// Allocates `count` nodes from the cache, on the current CPU, noting what came out.
    fn alloc_nodes(&mut self) {
        self.note_context();
        for _ in 0..self.count {
            let obj = self.cache.alloc().map(CacheBox::into_raw);
            match self.got.get_mut(self.nr_got) {
                Some(slot) => {
                    *slot = obj;
                    self.nr_got += 1;
                }
                // SAFETY: `obj` came from a `CacheBox` just now.
                None => drop(obj.map(|obj| unsafe { CacheBox::from_raw(obj) })),
            }
        }
    }

    /// What the allocations returned since the last `put_got()` or `forget_got()`.
    fn got(&self) -> &[Option<NonNull<Node>>] {
        &self.got[..self.nr_got]
    }

    /// Forgets what the allocations returned, which must be nothing.
    fn forget_got(&mut self) {
        self.nr_got = 0;
    }

    /// Gives the nodes allocated so far back to the cache, on the current CPU.
    fn put_got(&mut self) {
        for i in 0..self.nr_got {
            if let Some(obj) = self.got[i].take() {
                // SAFETY: `alloc_nodes()` took `obj` from the cache, and nothing else owns it.
                self.cache.put(unsafe { CacheBox::from_raw(obj) });
            }
        }
        self.nr_got = 0;
    }

    fn stats(&self, cpu: u32) -> Stats {
        CpuId::from_u32(cpu)
            .and_then(|cpu| self.cache.stats(cpu))
            .unwrap_or_default()
    }
}

/// What an operation on a CPU does.
#[derive(Clone, Copy)]
enum Op {
    Put,
    Alloc,
    PutGot,
}

/// The `smp_call_on_cpu()` callback of [`on_cpu`].
///
/// # Safety
///
/// `arg` is a [`Run`] that nothing else uses until this returns.
unsafe extern "C" fn run_in_task(arg: *mut c_void) -> c_int {
    // SAFETY: By the safety requirements.
    unsafe { &mut *arg.cast::<Run>() }.run();
    0
}

/// The `smp_call_function_single()` callback of [`send_ipi`].
///
/// # Safety
///
/// As for [`run_in_task`].
unsafe extern "C" fn run_in_irq(arg: *mut c_void) {
    // SAFETY: By the safety requirements.
    unsafe { &mut *arg.cast::<Run>() }.run();
}

/// Runs `op` on `cpu` in task context, and waits for it.
fn on_cpu(cpu: u32, op: Op, run: &mut Run) -> bool {
    run.op = op;
    // SAFETY: `run` outlives the call, which waits for `run_in_task`, and nothing else uses it
    // meanwhile.
    unsafe {
        bindings::smp_call_on_cpu(cpu, Some(run_in_task), ptr::from_mut(run).cast(), false) == 0
    }
}

/// A [`Run`] to run in hard interrupt context on `cpu`.
struct Ipi {
    cpu: u32,
    run: *mut c_void,
}

/// The `smp_call_on_cpu()` callback of [`in_hardirq_on_1`]: an IPI to `ipi.cpu`.
///
/// # Safety
///
/// `arg` is an [`Ipi`] whose `run` is a [`Run`] that nothing else uses until this returns.
unsafe extern "C" fn send_ipi(arg: *mut c_void) -> c_int {
    // SAFETY: By the safety requirements.
    let ipi = unsafe { &*arg.cast::<Ipi>() };
    // SAFETY: By the safety requirements; the call waits for `run_in_irq`.
    unsafe { bindings::smp_call_function_single(ipi.cpu as c_int, Some(run_in_irq), ipi.run, 1) }
}

/// Runs `op` on CPU 1 in hard interrupt context (an IPI from CPU 0), and waits for it.
fn in_hardirq_on_1(op: Op, run: &mut Run) -> bool {
    run.op = op;
    let ipi = Ipi {
        cpu: 1,
        run: ptr::from_mut(run).cast(),
    };
    // SAFETY: `ipi` and `run` outlive the call, which waits for `ipi()`, and nothing else uses
    // `run` meanwhile.
    unsafe {
        bindings::smp_call_on_cpu(
            0,
            Some(send_ipi),
            ptr::from_ref(&ipi).cast_mut().cast(),
            false,
        ) == 0
    }
}

fn released() -> u64 {
    RELEASED.load(Relaxed)
}

macro_rules! check {
    ($cond:expr) => {
        $crate::kunit_assert!("rust_percpu_cache", "percpu_cache/kunit.rs", 0, $cond)
    };
}

macro_rules! setup {
    ($nodes:expr) => {{
        match Run::new($nodes) {
            Some(run) => run,
            None => {
                check!(false);
                return;
            }
        }
    }};
}

/// LIFO reuse in task context, counted; a node is revived when it leaves the cache.
extern "C" fn alloc_put(_test: *mut bindings::kunit) {
    let mut r = setup!(2);
    r.count = 2;
    check!(on_cpu(1, Op::Put, &mut r));
    check!(r.in_task && r.nr_put == 2);
    r.count = 3;
    check!(on_cpu(1, Op::Alloc, &mut r));
    check!(r.got() == [r.put[1], r.put[0], None]);
    for obj in r.got().iter().flatten() {
        // SAFETY: The node came out of the cache, and is ours.
        let n = unsafe { obj.as_ref() };
        check!(n.retired == Some(PutContext::Task) && n.revived == 1);
    }
    let s = r.stats(1);
    check!(s.put_task == 2 && s.alloc_hit == 2 && s.alloc_miss == 1);
    check!(s.nr == 0 && s.nr_irq == 0);
    check!(on_cpu(1, Op::PutGot, &mut r));
    check!(r.stats(1).nr == 2);
    let before = released();
    check!(r.cache.destroy() == 2);
    check!(released() - before == 2);
}

/// The bound: the lists keep `MAX + 1` nodes from task context, and free the rest, counted.
extern "C" fn bound(_test: *mut bindings::kunit) {
    let n = MAX as usize + 3;
    let mut r = setup!(n);
    let before = released();
    r.count = n;
    check!(on_cpu(1, Op::Put, &mut r));
    let s = r.stats(1);
    check!(s.nr == MAX + 1 && s.put_task == u64::from(MAX) + 1);
    check!(s.free_full == 2 && released() - before == 2);
    check!(r.cache.destroy() == u64::from(MAX) + 1);
}

/// Hard-IRQ puts go on the IRQ list; task context takes it at the threshold, not below; hard-IRQ
/// context takes nothing, whatever the lists hold.
extern "C" fn irq_splice(_test: *mut bindings::kunit) {
    let mut r = setup!(THRESHOLD as usize);
    r.count = THRESHOLD as usize - 1;
    check!(in_hardirq_on_1(Op::Put, &mut r));
    check!(r.in_hardirq);
    let s = r.stats(1);
    check!(s.put_irq == u64::from(THRESHOLD) - 1 && s.nr_irq == THRESHOLD - 1 && s.nr == 0);

    // Below the threshold: no splice.
    r.count = 1;
    check!(on_cpu(1, Op::Alloc, &mut r));
    check!(r.got() == [None] && r.stats(1).splices == 0);
    r.forget_got();

    // Hard-IRQ context takes nothing.
    r.count = 1;
    check!(in_hardirq_on_1(Op::Put, &mut r));
    check!(in_hardirq_on_1(Op::Alloc, &mut r));
    check!(r.in_hardirq && r.got() == [None]);
    r.forget_got();
    let s = r.stats(1);
    check!(s.nr_irq == THRESHOLD && s.alloc_hit == 0);

    // At the threshold: the whole IRQ list moves to the task list.
    check!(on_cpu(1, Op::Alloc, &mut r));
    let s = r.stats(1);
    check!(r.nr_got == 1 && r.got[0].is_some());
    check!(s.splices == 1 && s.nr == THRESHOLD - 1 && s.nr_irq == 0 && s.alloc_hit == 1);
    if let Some(obj) = r.got[0] {
        // SAFETY: The node came out of the cache, and is ours.
        check!(unsafe { obj.as_ref() }.retired == Some(PutContext::HardIrq));
    }
    check!(on_cpu(1, Op::PutGot, &mut r));
    check!(r.cache.destroy() == u64::from(THRESHOLD));
}

/// A dead CPU's lists, both, are freed by `drain_cpu()`, and only that CPU's.
extern "C" fn drain(_test: *mut bindings::kunit) {
    let mut r = setup!(6);
    r.count = 2;
    check!(on_cpu(0, Op::Put, &mut r));
    r.count = 3;
    check!(on_cpu(1, Op::Put, &mut r));
    r.count = 1;
    check!(in_hardirq_on_1(Op::Put, &mut r));
    let Some(cpu1) = CpuId::from_u32(1) else {
        check!(false);
        return;
    };
    let before = released();
    // SAFETY: FFI call; CPU 1 is online and not the only one.
    check!(unsafe { bindings::remove_cpu(1) } == 0);
    // SAFETY: CPU 1 is dead, and nothing else drains or destroys this cache: the case owns it.
    let drained = unsafe { r.cache.drain_cpu(cpu1) };
    // SAFETY: FFI call.
    check!(unsafe { bindings::add_cpu(1) } == 0);
    check!(drained == 4 && released() - before == 4);
    let s = r.stats(1);
    check!(s.nr == 0 && s.nr_irq == 0 && s.drain_hotplug == 4);
    check!(r.stats(0).nr == 2);
    check!(r.cache.destroy() == 2 && released() - before == 6);
}

/// Teardown frees every CPU's lists, both, and dropping a cache does too.
extern "C" fn teardown(_test: *mut bindings::kunit) {
    let mut r = setup!(5);
    r.count = 2;
    check!(on_cpu(0, Op::Put, &mut r));
    r.count = 3;
    check!(in_hardirq_on_1(Op::Put, &mut r));
    let before = released();
    check!(r.cache.destroy() == 5 && released() - before == 5);

    let mut r = setup!(3);
    r.count = 3;
    check!(on_cpu(1, Op::Put, &mut r));
    let before = released();
    drop(r);
    check!(released() - before == 3);
}

/// What C code can do through the exported functions: NULL to `free` (which `new` returns when
/// out of memory) does nothing; a cache round-trips a node.
extern "C" fn export_c(_test: *mut bindings::kunit) {
    // SAFETY: NULL is allowed.
    check!(unsafe { rust_percpu_cache_kunit_free(ptr::null_mut()) } == 0);

    let cache = rust_percpu_cache_kunit_new();
    check!(!cache.is_null());
    let Some(obj) = node() else {
        check!(false);
        return;
    };
    let obj = obj.into_raw().as_ptr();
    // SAFETY: `cache` is from `new`; we run in task context; `obj` is ours to give.
    unsafe { rust_percpu_cache_kunit_put(cache, obj) };
    // SAFETY: As above.
    let again = unsafe { rust_percpu_cache_kunit_alloc(cache) };
    // Preemption was on between the two: the node is there only if both ran on one CPU.
    if !again.is_null() {
        check!(again == obj);
        // SAFETY: As above.
        unsafe { rust_percpu_cache_kunit_put(cache, again) };
    }
    // SAFETY: `cache` is from `new`, and no longer used.
    let freed: c_ulong = unsafe { rust_percpu_cache_kunit_free(cache) };
    check!(freed == 1);
}

static mut CASES: [bindings::kunit_case; 7] = [
    kunit_case(c_str!("alloc_put"), alloc_put),
    kunit_case(c_str!("bound"), bound),
    kunit_case(c_str!("irq_splice"), irq_splice),
    kunit_case(c_str!("drain"), drain),
    kunit_case(c_str!("teardown"), teardown),
    kunit_case(c_str!("export_c"), export_c),
    kunit_case_null(),
];

crate::kunit_unsafe_test_suite!(rust_percpu_cache, CASES);
