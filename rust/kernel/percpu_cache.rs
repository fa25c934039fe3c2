// SPDX-License-Identifier: GPL-2.0

//! A per-CPU cache of free objects, for allocations in task context.
//!
//! The Rust form of the per-CPU bio cache of [`block/bio.c`](srctree/block/bio.c) ("Enable bio
//! recycling for polled IO", Linux 5.15, with its later IRQ list), generic over the object:
//!
//! - Every CPU has a LIFO list of free objects for task context, threaded through a link field of
//!   the objects themselves: the most recently freed object, the one most likely still in the
//!   CPU's caches, is handed out first, and the cache allocates nothing per object.
//! - Objects freed in hard interrupt context go on a second list of that CPU. An allocation that
//!   finds the task list empty takes the whole hard-IRQ list, once it holds
//!   [`Cacheable::SPLICE_THRESHOLD`] objects, with interrupts disabled for the moment it takes.
//! - An object put back when the lists hold more than [`Cacheable::MAX`] objects between them, or
//!   from soft interrupt context, is freed instead. One put back from an NMI is leaked, with a
//!   warning the first time: nothing that frees memory may run in an NMI.
//! - The lists of a CPU that went offline are drained by the CPU-hotplug dead callback
//!   ([`PerCpuCache::drain_cpu`]); dropping the cache drains every possible CPU's lists.
//!
//! Only the owning CPU touches its task list, in task context with preemption disabled, and its
//! hard-IRQ list, with interrupts disabled: the fast paths take no lock and use no atomic
//! read-modify-write instruction.

use crate::{
    alloc::AllocError,
    bindings, context,
    cpu::CpuId,
    ffi::c_void,
    init::Zeroable,
    interrupt::{local_interrupt_disable, LocalInterruptDisabled},
    percpu::{cpu_guard::CpuGuard, cpu_possible, possible_cpus, PerCpuAllocation},
    types::ForeignOwnable,
};
use core::{
    cell::UnsafeCell,
    marker::PhantomData,
    mem::{self, ManuallyDrop},
    ops::Deref,
    ptr::NonNull,
    sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed},
};

/// The context an object is put back from, for [`Cacheable::retire`], and so the list it goes
/// on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutContext {
    /// Task context; the object goes on the task list.
    Task = 0,
    /// Hard interrupt context; the object goes on the hard-IRQ list.
    HardIrq = 1,
}

/// The task list, an index into [`Slot`]'s lists.
const TASK: usize = PutContext::Task as usize;
/// The hard-IRQ list, an index into [`Slot`]'s lists.
const IRQ: usize = PutContext::HardIrq as usize;

/// Objects a [`PerCpuCache`] can hold.
///
/// # Safety
///
/// Implementers must ensure that:
///
/// - [`Cacheable::next`] and [`Cacheable::set_next`] read and write a link field of the object
///   that nothing but the cache uses while the cache owns the object;
/// - [`Cacheable::retire`] leaves the object valid for [`Cacheable::revive`], and
///   [`Cacheable::revive`] leaves it valid for [`Cacheable::release`] and for being handed out
///   again by [`PerCpuCache::alloc`];
/// - [`Cacheable::release`] frees the object, in any context the cache calls it from: task, hard
///   or soft interrupt context, with preemption disabled or not. Never from an NMI: a
///   [`CacheBox`] dropped there, as by a put from an NMI, leaks its object rather than free it;
/// - none of them allocates from or puts into, drains or destroys a [`PerCpuCache`] of `Self`:
///   the cache calls [`Cacheable::next`], [`Cacheable::set_next`], [`Cacheable::retire`] and
///   [`Cacheable::revive`] while it works on a list, and a cache re-entered there would find the
///   list half updated, or grow it past its bound.
pub unsafe trait Cacheable: Sized + Send {
    /// A put frees the object when the lists of the CPU hold more than this many objects. They
    /// can hold up to `MAX + 2` (see [`PerCpuCache::put`]), which must fit in a `u32`:
    /// [`PerCpuCache::new`] does not compile for a larger `MAX`.
    const MAX: u32;

    /// An allocation that finds the task list empty takes the hard-IRQ list once it holds this
    /// many objects.
    const SPLICE_THRESHOLD: u32;

    /// Whether and where to count what the cache does: [`Counted`] (see [`Stats`]) or
    /// [`Uncounted`], which takes no per-CPU memory.
    type Counters: Counters;

    /// Returns the object linked after `this`.
    ///
    /// # Safety
    ///
    /// The caller owns `this`, and has set its link with [`Cacheable::set_next`].
    unsafe fn next(this: NonNull<Self>) -> Option<NonNull<Self>>;

    /// Links `next` after `this`.
    ///
    /// # Safety
    ///
    /// The caller owns `this`.
    unsafe fn set_next(this: NonNull<Self>, next: Option<NonNull<Self>>);

    /// Prepares `this` for a stay in the cache, before it goes on the list of `ctx`.
    ///
    /// # Safety
    ///
    /// The caller owns `this`, and runs in the context `ctx` with preemption disabled.
    unsafe fn retire(this: NonNull<Self>, ctx: PutContext);

    /// Undoes what [`Cacheable::retire`] did that must not outlast the object's stay in the
    /// cache, when the object leaves it: before it is handed out by [`PerCpuCache::alloc`], or
    /// freed by a prune. The default does nothing.
    ///
    /// An object whose memory the cache hides from a leak detector while it holds it (as the
    /// bio cache does from kmemleak) shows it again here.
    ///
    /// # Safety
    ///
    /// The caller owns `this`, which [`Cacheable::retire`] prepared and the cache held since.
    #[inline]
    unsafe fn revive(_this: NonNull<Self>) {}

    /// Frees `this`.
    ///
    /// # Safety
    ///
    /// The caller owns `this` and gives it up.
    unsafe fn release(this: NonNull<Self>);
}

/// Unique ownership of an object that can go into a [`PerCpuCache`]; dropping it frees the
/// object with [`Cacheable::release`].
///
/// Except in an NMI, where nothing that frees memory may run ([`Cacheable::release`] need not
/// be NMI-safe): dropped there, it leaks the object, with a warning the first time.
///
/// Its foreign form ([`ForeignOwnable`]) is the address of the object, so that C code that hands
/// objects in and out as pointers to their C type can use it as such.
///
/// # Invariants
///
/// `ptr` points to a valid `T` that this value owns.
pub struct CacheBox<T: Cacheable> {
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

// SAFETY: `T: Send`, so its ownership may move to another thread.
unsafe impl<T: Cacheable> Send for CacheBox<T> {}

impl<T: Cacheable> CacheBox<T> {
    /// Takes ownership of the object at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` points to a valid `T` that the caller owns and gives up.
    #[inline]
    pub unsafe fn from_raw(ptr: NonNull<T>) -> Self {
        // INVARIANT: By the safety requirements, the object is valid and now ours.
        Self {
            ptr,
            _owns: PhantomData,
        }
    }

    /// Gives up ownership of the object, without freeing it.
    #[inline]
    pub fn into_raw(self) -> NonNull<T> {
        let ptr = self.ptr;
        mem::forget(self);
        ptr
    }
}

impl<T: Cacheable> Drop for CacheBox<T> {
    #[inline]
    fn drop(&mut self) {
        if context::in_nmi() {
            leak_from_nmi();
            return;
        }
        // SAFETY: By the type invariants, we own the object, and give it up here, not in an
        // NMI.
        unsafe { T::release(self.ptr) };
    }
}

impl<T: Cacheable + 'static> ForeignOwnable for CacheBox<T> {
    type Borrowed<'a> = &'a T;

    #[inline]
    fn into_foreign(self) -> *const c_void {
        self.into_raw().as_ptr().cast_const().cast()
    }

    #[inline]
    unsafe fn borrow<'a>(ptr: *const c_void) -> &'a T {
        // SAFETY: By the safety requirements, `ptr` came from `into_foreign`: it is the address
        // of a valid `T` that stays owned by the foreign code, and so valid, for `'a`.
        unsafe { &*ptr.cast::<T>() }
    }

    #[inline]
    unsafe fn from_foreign(ptr: *const c_void) -> Self {
        // SAFETY: By the safety requirements, `ptr` came from `into_foreign`, so it is not null.
        let ptr = unsafe { NonNull::new_unchecked(ptr.cast::<T>().cast_mut()) };
        // SAFETY: By the safety requirements, `ptr` is the address of a valid `T`, whose
        // ownership comes back.
        unsafe { Self::from_raw(ptr) }
    }
}

/// Counters, indices into [`Counted`].
#[derive(Clone, Copy)]
enum Stat {
    AllocHit,
    AllocMiss,
    PutTask,
    PutIrq,
    FreeFull,
    FreeOther,
    Splices,
    DrainHotplug,
}

const NR_STATS: usize = Stat::DrainHotplug as usize + 1;

mod private {
    pub trait Sealed {}
}

/// How a [`PerCpuCache`] counts what it does on each CPU: [`Counted`] or [`Uncounted`].
///
/// This trait is sealed: only those two implement it.
pub trait Counters: Zeroable + Sync + private::Sealed {
    /// Returns the counter of index `index`, if this counts anything.
    #[doc(hidden)]
    fn counter(&self, index: usize) -> Option<&AtomicU64>;
}

/// One `u64` per counter of [`Stats`], per CPU.
pub struct Counted([AtomicU64; NR_STATS]);

/// No counters, and no per-CPU memory for them: [`PerCpuCache::stats`] reads only the lengths of
/// the lists. A cache of such a type takes per CPU what the C `struct bio_alloc_cache` does:
/// two list heads and two counts.
///
/// ```
/// use core::ptr::NonNull;
/// use kernel::percpu_cache::{slot_size, Cacheable, PutContext, Uncounted};
///
/// struct Node(Option<NonNull<Node>>);
/// // SAFETY: A node is plain memory that any thread may own.
/// unsafe impl Send for Node {}
/// // SAFETY: `next` and `set_next` use the link field only; nothing is freed: the example puts
/// // nothing in a cache.
/// unsafe impl Cacheable for Node {
///     const MAX: u32 = 4;
///     const SPLICE_THRESHOLD: u32 = 2;
///     type Counters = Uncounted;
///     unsafe fn next(this: NonNull<Self>) -> Option<NonNull<Self>> {
///         // SAFETY: The caller owns `this`.
///         unsafe { this.as_ref().0 }
///     }
///     unsafe fn set_next(mut this: NonNull<Self>, next: Option<NonNull<Self>>) {
///         // SAFETY: The caller owns `this`.
///         unsafe { this.as_mut().0 = next };
///     }
///     unsafe fn retire(_: NonNull<Self>, _: PutContext) {}
///     unsafe fn release(_: NonNull<Self>) {}
/// }
///
/// assert_eq!(slot_size::<Node>(), 2 * core::mem::size_of::<usize>() + 2 * 4);
/// ```
pub struct Uncounted;

// SAFETY: All zeroes is zero counters.
unsafe impl Zeroable for Counted {}
// SAFETY: `Uncounted` has no bytes.
unsafe impl Zeroable for Uncounted {}

impl private::Sealed for Counted {}
impl private::Sealed for Uncounted {}

impl Counters for Counted {
    #[inline]
    fn counter(&self, index: usize) -> Option<&AtomicU64> {
        self.0.get(index)
    }
}

impl Counters for Uncounted {
    #[inline]
    fn counter(&self, _index: usize) -> Option<&AtomicU64> {
        None
    }
}

/// What one CPU's part of a [`PerCpuCache`] did, when its [`Cacheable::Counters`] are
/// [`Counted`]; otherwise only `nr` and `nr_irq` are set.
///
/// Every object that entered a list (`put_task + put_irq`) left it through an allocation
/// (`alloc_hit`), a drain (`drain_hotplug`, or the count [`PerCpuCache::destroy`] returns), or is
/// still there (`nr + nr_irq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Allocations served from the cache.
    pub alloc_hit: u64,
    /// Allocations the cache could not serve.
    pub alloc_miss: u64,
    /// Objects put on the task list.
    pub put_task: u64,
    /// Objects put on the hard-IRQ list.
    pub put_irq: u64,
    /// Objects freed because the lists were full (leaked, if put from an NMI).
    pub free_full: u64,
    /// Objects put from another context: freed from soft interrupt context, leaked from an NMI.
    pub free_other: u64,
    /// Hard-IRQ lists spliced into the task list.
    pub splices: u64,
    /// Objects freed when the CPU went offline.
    pub drain_hotplug: u64,
    /// Objects on the task list.
    pub nr: u32,
    /// Objects on the hard-IRQ list.
    pub nr_irq: u32,
}

/// One CPU's part of a [`PerCpuCache`]: the C `struct bio_alloc_cache`.
///
/// # Invariants
///
/// - `heads[TASK]` heads a list, linked with [`Cacheable::next`], of `lens[TASK]` objects that
///   the cache owns: the task list. Only this CPU accesses it, in task context with preemption
///   disabled; or any CPU once this one is dead; or the owner of the cache when it destroys it.
/// - `heads[IRQ]` heads a list of `lens[IRQ]` objects that the cache owns: the hard-IRQ list.
///   Only this CPU accesses it, with interrupts disabled; or any CPU once this one is dead; or
///   the owner of the cache when it destroys it.
/// - `lens`, and the counters of allocations, puts, splices and drains, are written under the
///   same rules as the lists: by one context at a time, so with a load and a store. The counters
///   of objects freed or leaked by a put (`FreeFull`, `FreeOther`) are written from any context,
///   an interrupt or NMI that interrupts another writer on the CPU included, so with an atomic
///   add. Anyone may read any of them at any time.
/// - `lens[TASK] + lens[IRQ] <= T::MAX + 2`: a put adds an object only if the lists held at most
///   [`Cacheable::MAX`] when it checked, and nothing else adds any; a put from task context can
///   be interrupted between its check and its push by one put from hard interrupt context (which
///   does not nest: interrupts are disabled there), so both can push after seeing `MAX`. The
///   counts are plain counters, not what memory safety rests on (the lists are), but this bound
///   is why their arithmetic never wraps.
///
/// The lists are indexed by [`PutContext`] (`TASK`, `IRQ`), so that a put computes which list
/// its object goes on and pushes it with one piece of code. The layout is that of the C struct:
/// the two list heads, then their lengths.
#[repr(C)]
struct Slot<T: Cacheable> {
    heads: [UnsafeCell<Option<NonNull<T>>>; 2],
    lens: [AtomicU32; 2],
    stats: T::Counters,
}

// SAFETY: All zeroes is two empty lists (`None` is the null pointer), zero counts, and zero
// counters (`T::Counters: Zeroable`).
unsafe impl<T: Cacheable> Zeroable for Slot<T> {}

// SAFETY: The type invariants serialise every access to the lists, from whatever context or CPU;
// the objects on them may move to another CPU because `T: Send`. The counts are atomics, and so
// are the counters (`T::Counters: Sync`).
unsafe impl<T: Cacheable> Sync for Slot<T> {}

// SAFETY: A slot owns the objects on its lists, and `T: Send`: they, and with them the slot, may
// move to another thread. The counters are atomics.
unsafe impl<T: Cacheable> Send for Slot<T> {}

/// Returns how many bytes of per-CPU memory a [`PerCpuCache`] of `T` takes per CPU.
pub const fn slot_size<T: Cacheable>() -> usize {
    mem::size_of::<Slot<T>>()
}

impl<T: Cacheable> Slot<T> {
    /// Adds `n` to a counter written under the lists' rules (type invariants).
    #[inline]
    fn count(&self, stat: Stat, n: u64) {
        // Written by one context at a time, read racily: no read-modify-write needed.
        if let Some(c) = self.stats.counter(stat as usize) {
            c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
        }
    }

    /// Adds one to a counter that any context may write (type invariants): only on the paths
    /// that free or leak an object, which are not the fast ones.
    #[inline]
    fn count_any(&self, stat: Stat) {
        if let Some(c) = self.stats.counter(stat as usize) {
            c.fetch_add(1, Relaxed);
        }
    }

    /// Removes the first object of the task list.
    ///
    /// # Safety
    ///
    /// The caller may access the task list (type invariants).
    #[inline]
    unsafe fn pop_task(&self) -> Option<NonNull<T>> {
        // SAFETY: The caller may access the task list.
        let head = unsafe { &mut *self.heads[TASK].get() };
        let obj = (*head)?;
        // SAFETY: The cache owns `obj`, which is on the list, so its link is set.
        let next = unsafe { T::next(obj) };
        // INVARIANT: `obj` leaves the list, whose length goes down by one with it. The list held
        // `obj`, so its length is at least 1 (type invariants): no underflow to check for.
        *head = next;
        let len = &self.lens[TASK];
        len.store(len.load(Relaxed).wrapping_sub(1), Relaxed);
        Some(obj)
    }

    /// Adds `obj` at the front of the list of `ctx`.
    ///
    /// # Safety
    ///
    /// The caller may access that list and gives up its ownership of `obj`.
    #[inline]
    unsafe fn push(&self, ctx: PutContext, obj: NonNull<T>) {
        // SAFETY: The caller may access the list.
        let head = unsafe { &mut *self.heads[ctx as usize].get() };
        // SAFETY: The caller owns `obj` until it is on the list.
        unsafe { T::set_next(obj, *head) };
        // INVARIANT: `obj` heads the list, which the cache now owns it through, and the length
        // goes up by one with it. At most `T::MAX + 2` objects are on the lists (type
        // invariants): no overflow.
        *head = Some(obj);
        let len = &self.lens[ctx as usize];
        len.store(len.load(Relaxed).wrapping_add(1), Relaxed);
    }

    /// Returns how many objects the lists hold between them.
    #[inline]
    fn held(&self) -> u32 {
        // At most `T::MAX + 2` objects are on the lists (type invariants): no overflow.
        self.lens[IRQ]
            .load(Relaxed)
            .wrapping_add(self.lens[TASK].load(Relaxed))
    }

    /// Moves the hard-IRQ list onto the task list.
    ///
    /// # Safety
    ///
    /// The caller may access the task list, which is empty, and may access the hard-IRQ list
    /// while it holds `_irqs_off`: it runs on this slot's CPU (where interrupts are disabled),
    /// or the CPU is dead, or nothing else uses the cache.
    unsafe fn splice_irq(&self, _irqs_off: &LocalInterruptDisabled) {
        // SAFETY: The task list is the caller's.
        let task = unsafe { &mut *self.heads[TASK].get() };
        // SAFETY: The hard-IRQ list is ours too (see above).
        let irq = unsafe { &mut *self.heads[IRQ].get() };
        debug_assert!(task.is_none());
        if irq.is_some() {
            self.count(Stat::Splices, 1);
        }
        // INVARIANT: The objects of the hard-IRQ list move to the task list, which was empty,
        // and the lengths with them: the task list holds what both held, the other nothing.
        *task = irq.take();
        self.lens[TASK].store(self.held(), Relaxed);
        self.lens[IRQ].store(0, Relaxed);
    }

    /// Frees up to `nr` objects from the task list, all of them if `nr` is 0, and returns how
    /// many it freed. (Zero meaning "no limit" comes with the C `__bio_alloc_cache_prune()`.)
    ///
    /// # Safety
    ///
    /// The caller may access the task list.
    unsafe fn prune_task(&self, nr: u32) -> u32 {
        let mut freed: u32 = 0;
        // SAFETY: The caller may access the task list.
        while let Some(obj) = unsafe { self.pop_task() } {
            // SAFETY: `obj` left the list: the cache owned it since `retire`.
            unsafe { T::revive(obj) };
            // SAFETY: The cache owned `obj`, and now gives it up.
            drop(unsafe { CacheBox::from_raw(obj) });
            // At most `T::MAX + 2` objects were on the list (type invariants): no overflow.
            freed = freed.wrapping_add(1);
            if freed == nr {
                break;
            }
        }
        freed
    }

    /// Frees up to `nr` objects, from the task list first and then, if that ended up empty,
    /// from the hard-IRQ list, and returns how many it freed. The C `bio_alloc_cache_prune()`.
    ///
    /// # Safety
    ///
    /// The caller may access both lists: the CPU is dead, or the cache is being destroyed.
    unsafe fn prune(&self, nr: u32) -> u32 {
        // SAFETY: The caller may access the task list.
        let mut freed = unsafe { self.prune_task(nr) };
        // SAFETY: As above.
        if unsafe { (*self.heads[TASK].get()).is_none() } {
            let irqs_off = local_interrupt_disable();
            // SAFETY: The caller may access both lists, and the task list is empty.
            unsafe { self.splice_irq(&irqs_off) };
            drop(irqs_off);
            // SAFETY: The caller may access the task list.
            let more = unsafe { self.prune_task(nr.wrapping_sub(freed)) };
            // At most `T::MAX + 2` objects were on the lists (type invariants): no overflow.
            freed = freed.wrapping_add(more);
        }
        freed
    }

    fn stats(&self) -> Stats {
        let c = |stat: Stat| {
            self.stats
                .counter(stat as usize)
                .map_or(0, |c| c.load(Relaxed))
        };
        Stats {
            alloc_hit: c(Stat::AllocHit),
            alloc_miss: c(Stat::AllocMiss),
            put_task: c(Stat::PutTask),
            put_irq: c(Stat::PutIrq),
            free_full: c(Stat::FreeFull),
            free_other: c(Stat::FreeOther),
            splices: c(Stat::Splices),
            drain_hotplug: c(Stat::DrainHotplug),
            nr: self.lens[TASK].load(Relaxed),
            nr_irq: self.lens[IRQ].load(Relaxed),
        }
    }
}

/// Warns, the first time, that an object dropped in an NMI is leaked.
///
/// Out of line: `#[cold]` alone lets LLVM inline the `printk` call into
/// [`PerCpuCache::put`], which makes the put path of every caller larger.
#[cold]
#[inline(never)]
fn leak_from_nmi() {
    static WARNED: AtomicBool = AtomicBool::new(false);

    if !WARNED.swap(true, Relaxed) {
        crate::pr_warn!("percpu_cache: leaking an object dropped in an NMI\n");
    }
}

/// Reports, once, a call of [`PerCpuCache::alloc_in_task`] outside task context.
#[cold]
#[inline(never)]
fn alloc_outside_task() {
    static WARNED: AtomicBool = AtomicBool::new(false);

    if !WARNED.swap(true, Relaxed) {
        crate::pr_err!("BUG: percpu_cache: alloc_in_task() called outside task context\n");
        // SAFETY: `dump_stack()` may be called in any context.
        unsafe { bindings::dump_stack() };
    }
}

/// A per-CPU cache of free objects of type `T`.
///
/// # Examples
///
/// A cache of boxed nodes that link themselves:
///
/// ```
/// use core::ptr::NonNull;
/// use kernel::percpu_cache::{CacheBox, Cacheable, Counted, PerCpuCache, PutContext};
///
/// struct Node {
///     next: Option<NonNull<Node>>,
///     data: u64,
/// }
///
/// // SAFETY: A node is plain memory that any thread may own and free.
/// unsafe impl Send for Node {}
///
/// // SAFETY: `next` is only used by the cache; `release` frees the box in any context.
/// unsafe impl Cacheable for Node {
///     const MAX: u32 = 4;
///     const SPLICE_THRESHOLD: u32 = 2;
///     type Counters = Counted;
///
///     unsafe fn next(this: NonNull<Self>) -> Option<NonNull<Self>> {
///         // SAFETY: The caller owns `this`.
///         unsafe { this.as_ref().next }
///     }
///     unsafe fn set_next(mut this: NonNull<Self>, next: Option<NonNull<Self>>) {
///         // SAFETY: The caller owns `this`.
///         unsafe { this.as_mut().next = next };
///     }
///     unsafe fn retire(_this: NonNull<Self>, _ctx: PutContext) {}
///     unsafe fn release(this: NonNull<Self>) {
///         // SAFETY: The caller gives up `this`, which `node()` got from `KBox::into_raw`.
///         drop(unsafe { KBox::from_raw(this.as_ptr()) });
///     }
/// }
///
/// fn node(data: u64) -> Result<CacheBox<Node>> {
///     let b = KBox::new(Node { next: None, data }, GFP_KERNEL)?;
///     // SAFETY: The box is valid and ours; `release` frees it as a box.
///     Ok(unsafe { CacheBox::from_raw(NonNull::from(KBox::leak(b))) })
/// }
///
/// let cache = PerCpuCache::<Node>::new()?;
/// let (a, b) = (node(1)?, node(2)?);
/// let a_ptr = a.into_raw();
///
/// // Stay on this CPU for the rest of the example (preemption off), so that its lists are the ones
/// // `put` fills and `alloc` takes from.
/// let pinned = kernel::percpu::cpu_guard::CpuGuard::new();
///
/// // SAFETY: Ownership goes back to a `CacheBox`.
/// cache.put(unsafe { CacheBox::from_raw(a_ptr) });
/// cache.put(b);
///
/// // LIFO: the node put last comes out first.
/// let b = cache.alloc().expect("cached").into_raw();
/// // SAFETY: `b` is a node we own.
/// assert_eq!(unsafe { b.as_ref().data }, 2);
/// // SAFETY: Ownership goes back to a `CacheBox`, which frees the node.
/// drop(unsafe { CacheBox::from_raw(b) });
/// // SAFETY: Examples run in task context.
/// assert_eq!(unsafe { cache.alloc_in_task() }.map(CacheBox::into_raw), Some(a_ptr));
/// assert!(cache.alloc().is_none());
/// drop(pinned);
///
/// // SAFETY: `a_ptr` is ours again; the cache keeps it.
/// cache.put(unsafe { CacheBox::from_raw(a_ptr) });
/// assert_eq!(cache.destroy(), 1);
///
/// // A cache can be shared between threads, and move to another: in a module's data, or an
/// // `Arc`.
/// fn share<T: Send + Sync>(_: &T) {}
/// share(&PerCpuCache::<Node>::new()?);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// Every possible CPU's location of `slots` holds a valid `Slot`, whose lists are of objects
/// this cache owns.
pub struct PerCpuCache<T: Cacheable> {
    slots: PerCpuAllocation<Slot<T>>,
}

impl<T: Cacheable> PerCpuCache<T> {
    /// Allocates an empty cache.
    ///
    /// Does not compile for a `T` whose [`Cacheable::MAX`] is above `u32::MAX - 2`.
    pub fn new() -> Result<Self, AllocError> {
        // The lists of a CPU hold up to `T::MAX + 2` objects, counted in `u32`s (see `Slot`).
        const {
            assert!(
                T::MAX <= u32::MAX - 2,
                "Cacheable::MAX + 2 must fit in a u32"
            )
        };
        let slots = PerCpuAllocation::new_zero().ok_or(AllocError)?;
        // INVARIANT: All zeroes is a valid, empty slot on every CPU (`Slot<T>: Zeroable`).
        Ok(Self { slots })
    }

    /// Returns the slot of the CPU that `_guard` keeps the caller on.
    #[inline]
    fn this_slot<'a>(&'a self, _guard: &'a CpuGuard) -> &'a Slot<T> {
        // SAFETY: The allocation is live for `'a`; nothing writes a slot but through its
        // `UnsafeCell`s and atomics (no `&mut Slot` is ever made); the guard keeps preemption
        // disabled for `'a`, so the location stays this CPU's.
        let slot = unsafe { self.slots.ptr().get_ref() };
        // SAFETY: Every possible CPU's location holds a valid slot (type invariants).
        unsafe { slot.assume_init_ref() }
    }

    /// Returns the slot of `cpu`, or [`None`] if it is not a possible CPU.
    #[inline]
    fn slot(&self, cpu: CpuId) -> Option<&Slot<T>> {
        if !cpu_possible(cpu) {
            return None;
        }
        // SAFETY: `cpu` is possible, so the pointer is valid for as long as the allocation
        // lives; nothing writes a slot but through its `UnsafeCell`s and atomics (no
        // `&mut Slot` is ever made).
        let slot = unsafe { &*self.slots.ptr().get_remote_ptr(cpu) };
        // SAFETY: Every possible CPU's location holds a valid slot (type invariants).
        Some(unsafe { slot.assume_init_ref() })
    }

    /// Takes an object from the current CPU's task list, first moving the hard-IRQ list there if
    /// the task list is empty and the hard-IRQ list holds [`Cacheable::SPLICE_THRESHOLD`]
    /// objects.
    ///
    /// Returns [`None`] if there is no object, or if the caller is not in task context: only task
    /// context may take objects, since an interrupt could otherwise find the task list half
    /// updated.
    #[inline]
    pub fn alloc(&self) -> Option<CacheBox<T>> {
        if !context::in_task() {
            return None;
        }
        // SAFETY: We run in task context.
        unsafe { self.alloc_in_task() }
    }

    /// Takes an object as [`PerCpuCache::alloc`] does, for a caller that knows it runs in task
    /// context, as the callers of the C cache do: the check, which costs a load and a branch
    /// per allocation, is left out.
    ///
    /// With `CONFIG_DEBUG_PREEMPT`, which checks the context of per-CPU accesses in C too, it
    /// is made all the same: outside task context this reports a bug once, as a `BUG:` line
    /// with a stack dump, and returns [`None`].
    ///
    /// # Safety
    ///
    /// The caller runs in task context ([`context::in_task`]).
    #[inline]
    pub unsafe fn alloc_in_task(&self) -> Option<CacheBox<T>> {
        if cfg!(CONFIG_DEBUG_PREEMPT) && !context::in_task() {
            alloc_outside_task();
            return None;
        }
        let guard = CpuGuard::new();
        let slot = self.this_slot(&guard);
        // SAFETY: We run in task context, on the slot's CPU, with preemption disabled until
        // `guard` is dropped: we may access the task list.
        let obj = match unsafe { slot.pop_task() } {
            Some(obj) => obj,
            None => {
                if slot.lens[IRQ].load(Relaxed) >= T::SPLICE_THRESHOLD {
                    let irqs_off = local_interrupt_disable();
                    // SAFETY: As above, and the task list is empty; with interrupts disabled on
                    // the slot's CPU, the hard-IRQ list is ours too (type invariants).
                    unsafe { slot.splice_irq(&irqs_off) };
                    drop(irqs_off);
                }
                // SAFETY: As above.
                match unsafe { slot.pop_task() } {
                    Some(obj) => obj,
                    None => {
                        slot.count(Stat::AllocMiss, 1);
                        return None;
                    }
                }
            }
        };
        slot.count(Stat::AllocHit, 1);
        drop(guard);
        // SAFETY: `obj` left the list: the cache owned it since `retire`.
        unsafe { T::revive(obj) };
        // SAFETY: The cache owned `obj`, and hands it over.
        Some(unsafe { CacheBox::from_raw(obj) })
    }

    /// Takes `obj` back: onto the current CPU's task list from task context, onto its hard-IRQ
    /// list from hard interrupt context. Frees it instead if the lists hold more than
    /// [`Cacheable::MAX`] objects, or from soft interrupt context.
    ///
    /// From an NMI, which can interrupt an allocation that is moving the hard-IRQ list with
    /// interrupts disabled, the object goes on no list; and it is leaked rather than freed, with
    /// a warning the first time: freeing memory takes locks that the interrupted code may hold.
    ///
    /// Hard interrupt context that is not an NMI excludes any other code on the CPU because the
    /// kernel runs hard interrupt handlers with interrupts disabled and no code may enable them
    /// there (genirq warns and disables them again, lockdep reports it, and no safe Rust code
    /// can: the guards of [`crate::interrupt`] are counted, and only the outermost restores the
    /// state it found). The C cache relies on the same rule, which
    /// [`LocalInterruptDisabled::assume_disabled`] checks here with lockdep.
    ///
    /// A put from task context can be interrupted between its check of the bound and its push
    /// by a put from hard interrupt context that sees the same count: the lists can then hold
    /// `MAX + 2` objects (only one can: puts from hard interrupt context do not nest).
    #[inline]
    pub fn put(&self, obj: CacheBox<T>) {
        let guard = CpuGuard::new();
        let slot = self.this_slot(&guard);
        if slot.held() > T::MAX {
            slot.count_any(Stat::FreeFull);
        } else if context::in_task() {
            let obj = obj.into_raw();
            // SAFETY: We own `obj`, and run in task context with preemption disabled.
            unsafe { T::retire(obj, PutContext::Task) };
            // SAFETY: We run in task context on the slot's CPU with preemption disabled, so we
            // may access the task list (type invariants); we own `obj`, which goes on it.
            unsafe { slot.push(PutContext::Task, obj) };
            slot.count(Stat::PutTask, 1);
            return;
        } else if context::in_hardirq() && !context::in_nmi() {
            // SAFETY: The kernel runs hard interrupt handlers with interrupts disabled, and
            // nothing may enable them there (above): they stay disabled until we return. As the
            // C cache does, rely on it; lockdep checks it.
            let _irqs_off = unsafe { LocalInterruptDisabled::assume_disabled() };
            let obj = obj.into_raw();
            // SAFETY: We own `obj`, and run in hard interrupt context, where preemption is
            // disabled.
            unsafe { T::retire(obj, PutContext::HardIrq) };
            // SAFETY: We run on the slot's CPU in hard interrupt context that is not an NMI, so
            // with interrupts disabled (`_irqs_off`): nothing else on this CPU can run until we
            // return, and we may access the hard-IRQ list (type invariants). We own `obj`, which
            // goes on it.
            unsafe { slot.push(PutContext::HardIrq, obj) };
            slot.count(Stat::PutIrq, 1);
            return;
        } else {
            slot.count_any(Stat::FreeOther);
        }
        // Preemption back on before the object is freed, as in C; in an NMI it is leaked
        // instead (`CacheBox`).
        drop(guard);
        drop(obj);
    }

    /// Frees every object on the lists of `cpu`, and returns how many: the CPU-hotplug dead
    /// callback.
    ///
    /// # Safety
    ///
    /// - `cpu` is dead: nothing runs on it;
    /// - no other call of this function for `cpu` runs at the same time, nor
    ///   [`PerCpuCache::destroy`] (or the drop of the cache) on any CPU.
    ///
    /// The CPU-hotplug core meets both for a dead callback: it runs the callbacks of one CPU
    /// at a time under the hotplug lock, and an owner that removes its hotplug instance
    /// (`cpuhp_state_remove_instance_nocalls()`, which takes the same lock) before it destroys
    /// the cache knows that no callback runs or will run.
    pub unsafe fn drain_cpu(&self, cpu: CpuId) -> u32 {
        let Some(slot) = self.slot(cpu) else {
            return 0;
        };
        // SAFETY: The CPU is dead, and no other drain or teardown runs: we may access its lists.
        let freed = unsafe { slot.prune(u32::MAX) };
        slot.count(Stat::DrainHotplug, freed.into());
        freed
    }

    /// Returns the counters of `cpu`, or [`None`] if it is not a possible CPU. Those of a CPU
    /// that is running are read racily.
    pub fn stats(&self, cpu: CpuId) -> Option<Stats> {
        self.slot(cpu).map(Slot::stats)
    }

    /// Frees every object on every possible CPU's lists, then the cache: the teardown. Returns
    /// how many objects it freed.
    pub fn destroy(mut self) -> u64 {
        self.drain_all()
    }

    fn drain_all(&mut self) -> u64 {
        let mut freed: u64 = 0;
        for cpu in possible_cpus() {
            if let Some(slot) = self.slot(cpu) {
                // SAFETY: `&mut self`: nothing else uses the cache, so we may access every list.
                let n = u64::from(unsafe { slot.prune(u32::MAX) });
                // At most `T::MAX + 2` objects per CPU (type invariants), `u32` values: their
                // sum over CPUs fits in `u64`.
                freed = freed.wrapping_add(n);
            }
        }
        freed
    }
}

impl<T: Cacheable> Drop for PerCpuCache<T> {
    fn drop(&mut self) {
        self.drain_all();
    }
}

/// The foreign form of a cache is its per-CPU address, which C code keeps as an opaque pointer:
/// the C `bio_set::cache`. C code that owns the cache borrows it for every call into it
/// ([`ForeignOwnable::borrow`]); every CPU may borrow it at the same time.
impl<T: Cacheable + 'static> ForeignOwnable for PerCpuCache<T> {
    type Borrowed<'a> = CacheRef<'a, T>;

    fn into_foreign(self) -> *const c_void {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is not dropped: ownership of the allocation moves to the caller.
        let slots = unsafe { core::ptr::read(&this.slots) };
        slots.into_raw().cast_const().cast()
    }

    #[inline]
    unsafe fn borrow<'a>(ptr: *const c_void) -> CacheRef<'a, T> {
        // SAFETY: By the safety requirements, `ptr` came from `into_foreign` and is not taken
        // back until the borrow ends: it is the allocation of a live cache. The value made here
        // is a copy of that cache that is never dropped (`ManuallyDrop`) nor handed out by
        // value: it frees nothing, and the foreign owner stays the only one.
        let slots = unsafe { PerCpuAllocation::from_raw(ptr.cast_mut().cast()) };
        // INVARIANT: A copy of the foreign-owned cache, which lives for `'a`.
        CacheRef {
            cache: ManuallyDrop::new(PerCpuCache { slots }),
            _borrow: PhantomData,
        }
    }

    #[inline]
    unsafe fn from_foreign(ptr: *const c_void) -> Self {
        // SAFETY: By the safety requirements, `ptr` came from `into_foreign`: the allocation of
        // a `PerCpuCache<T>`, whose ownership comes back.
        let slots = unsafe { PerCpuAllocation::from_raw(ptr.cast_mut().cast()) };
        // INVARIANT: The slots are those of that cache, with lists of objects it owns.
        Self { slots }
    }
}

/// A cache that C code owns, borrowed for a call into it: what [`ForeignOwnable::borrow`] gives
/// for a [`PerCpuCache`].
///
/// # Invariants
///
/// `cache` is a copy of a foreign-owned cache that lives for `'a`; it is never dropped.
pub struct CacheRef<'a, T: Cacheable> {
    cache: ManuallyDrop<PerCpuCache<T>>,
    _borrow: PhantomData<&'a PerCpuCache<T>>,
}

impl<T: Cacheable> Deref for CacheRef<'_, T> {
    type Target = PerCpuCache<T>;

    #[inline]
    fn deref(&self) -> &PerCpuCache<T> {
        &self.cache
    }
}

/// A [`Cacheable`] type that C code hands in and out as a pointer to its C type, for
/// [`percpu_cache_export_c`](crate::percpu_cache_export_c).
///
/// # Safety
///
/// `Self` is a transparent wrapper of [`ForeignCacheable::C`] (`#[repr(transparent)]`): a
/// pointer to a valid `Self::C` that C code owns is a pointer to a valid `Self`, and the other
/// way around. The export macro also checks at compile time that the two have the same size and
/// alignment: it does not compile for a type that does not.
pub unsafe trait ForeignCacheable: Cacheable {
    /// The C type of the objects.
    type C;
}

/// Returns whether `T` and its C type have the same size and alignment, for
/// [`percpu_cache_export_c`](crate::percpu_cache_export_c)'s compile-time check.
#[doc(hidden)]
pub const fn same_layout<T: ForeignCacheable>() -> bool {
    mem::size_of::<T>() == mem::size_of::<T::C>() && mem::align_of::<T>() == mem::align_of::<T::C>()
}

/// Exports a [`PerCpuCache`] to C as `extern "C"` functions, for C code that owns the cache as an
/// opaque pointer and hands objects in and out as raw pointers.
///
/// `item` names the [`ForeignCacheable`] type, whose C type the functions take and return;
/// `handle` is the opaque C type of the cache, which C keeps as a `handle *`: the cache's foreign
/// form ([`ForeignOwnable`]). The functions that use the cache without freeing it borrow it for
/// the call ([`ForeignOwnable::borrow`]); objects cross as their address, which is their
/// [`CacheBox`]'s foreign form. The functions, for the names given:
///
/// - `new() -> *mut handle`: an empty cache, or NULL if out of memory;
/// - `free(cache) -> c_ulong`: [`PerCpuCache::destroy`]; nothing, and 0, for NULL;
/// - `alloc(cache) -> *mut C`: [`PerCpuCache::alloc_in_task`], or NULL;
/// - `put(cache, *mut C)`: [`PerCpuCache::put`];
/// - `drain_cpu(cache, cpu) -> c_uint`: [`PerCpuCache::drain_cpu`]; 0 for a `cpu` past
///   `nr_cpu_ids` or not possible.
///
/// Their safety requirements, which the C header must state, are those of the functions they
/// call, and: the cache a function borrows is a non-NULL pointer from `new`, not freed while the
/// function runs; objects are valid and owned by the caller of `put`. The pointer `free` takes is
/// NULL, or from `new` and no longer used.
///
/// `alloc` and `put` are `#[inline(always)]`: compiled as one LLVM module with their C caller
/// (see `BITCODE_LINK_` in `scripts/Makefile.build`), they inline into it as static C functions
/// would, whatever the differences between the attributes of C and Rust functions that keep
/// LLVM from inlining across languages otherwise (see `__rust_helper`).
///
/// The names are defined unmangled (`#[no_mangle]`), as C needs them: each must be new. The
/// name of an existing function would replace it for the code it is linked with, as
/// `#[no_mangle]` does anywhere; Rust 2024 makes that attribute `unsafe` for this reason.
#[macro_export]
macro_rules! percpu_cache_export_c {
    (
        item: $item:ty,
        handle: $handle:ty,
        new: $new:ident,
        free: $free:ident,
        alloc: $alloc:ident,
        put: $put:ident,
        drain_cpu: $drain:ident $(,)?
    ) => {
        const _: () = assert!(
            $crate::percpu_cache::same_layout::<$item>(),
            "a ForeignCacheable type must have the size and alignment of its C type"
        );

        /// Allocates an empty cache; returns NULL if out of memory.
        #[no_mangle]
        pub extern "C" fn $new() -> *mut $handle {
            use $crate::types::ForeignOwnable;
            match $crate::percpu_cache::PerCpuCache::<$item>::new() {
                Ok(cache) => cache.into_foreign().cast_mut().cast(),
                Err(_) => ::core::ptr::null_mut(),
            }
        }

        /// Frees every cached object and the cache; returns how many objects it freed. Does
        /// nothing for NULL, which `new` returns when out of memory.
        ///
        /// # Safety
        ///
        /// `cache` is NULL, or came from the `new` function and nothing uses it any more.
        #[no_mangle]
        pub unsafe extern "C" fn $free(cache: *mut $handle) -> $crate::ffi::c_ulong {
            use $crate::{percpu_cache::PerCpuCache, types::ForeignOwnable};
            // SAFETY: By the safety requirements, `cache` is NULL or came from `new`, and is
            // ours.
            match unsafe { PerCpuCache::<$item>::try_from_foreign(cache.cast_const().cast()) } {
                Some(cache) => cache.destroy() as $crate::ffi::c_ulong,
                None => 0,
            }
        }

        /// Takes an object from the current CPU's cache; returns NULL if there is none.
        ///
        /// # Safety
        ///
        /// The caller runs in task context; `cache` is a non-NULL pointer from the `new`
        /// function, which is not freed until this returns.
        #[no_mangle]
        #[inline(always)]
        pub unsafe extern "C" fn $alloc(
            cache: *mut $handle,
        ) -> *mut <$item as $crate::percpu_cache::ForeignCacheable>::C {
            use $crate::{percpu_cache::PerCpuCache, types::ForeignOwnable};
            // SAFETY: By the safety requirements, `cache` is a live cache, borrowed for this
            // call only.
            let cache = unsafe { PerCpuCache::<$item>::borrow(cache.cast_const().cast()) };
            // SAFETY: By the safety requirements, we run in task context.
            unsafe { cache.alloc_in_task() }.map_or(::core::ptr::null_mut(), |obj| {
                obj.into_foreign().cast_mut().cast()
            })
        }

        /// Takes `obj` back into the current CPU's cache, or frees it.
        ///
        /// # Safety
        ///
        /// `cache` is a non-NULL pointer from the `new` function, which is not freed until this
        /// returns; `obj` is a valid object that the caller owns and gives up.
        #[no_mangle]
        #[inline(always)]
        pub unsafe extern "C" fn $put(
            cache: *mut $handle,
            obj: *mut <$item as $crate::percpu_cache::ForeignCacheable>::C,
        ) {
            use $crate::{
                percpu_cache::{CacheBox, PerCpuCache},
                types::ForeignOwnable,
            };
            // SAFETY: As in `alloc`.
            let cache = unsafe { PerCpuCache::<$item>::borrow(cache.cast_const().cast()) };
            // SAFETY: By the safety requirements, `obj` is a valid object, so not null.
            let obj = unsafe { ::core::ptr::NonNull::new_unchecked(obj.cast::<$item>()) };
            // SAFETY: By the safety requirements, `obj` is ours to give, and an `$item` too
            // (`ForeignCacheable`). It may not come from `into_foreign` (C allocates objects of
            // its own), so it is taken with `from_raw`.
            cache.put(unsafe { CacheBox::from_raw(obj) });
        }

        /// Frees every object cached on `cpu`; returns how many.
        ///
        /// # Safety
        ///
        /// `cache` is a non-NULL pointer from the `new` function, which is not freed until this
        /// returns; `cpu` is dead, and neither this function for `cpu` nor `free` runs at the
        /// same time.
        #[no_mangle]
        pub unsafe extern "C" fn $drain(
            cache: *mut $handle,
            cpu: $crate::ffi::c_uint,
        ) -> $crate::ffi::c_uint {
            use $crate::{percpu_cache::PerCpuCache, types::ForeignOwnable};
            // SAFETY: As in `alloc`.
            let cache = unsafe { PerCpuCache::<$item>::borrow(cache.cast_const().cast()) };
            let Some(cpu) = $crate::cpu::CpuId::from_u32(cpu) else {
                return 0;
            };
            // SAFETY: By the safety requirements, `cpu` is dead, and no other drain of it nor
            // teardown runs.
            unsafe { cache.drain_cpu(cpu) }
        }
    };
}

/// Exports [`PerCpuCache::stats`] to C, next to
/// [`percpu_cache_export_c`](crate::percpu_cache_export_c): `stats(cache, cpu, *mut S)` fills a
/// C struct `S` that has the fields of [`Stats`], with their names and types. A CPU that is not
/// possible reads as all zeroes.
#[macro_export]
macro_rules! percpu_cache_export_c_stats {
    (item: $item:ty, handle: $handle:ty, stats: $stats:ident => $cstats:ty $(,)?) => {
        /// Fills `out` with the counters of `cpu`.
        ///
        /// # Safety
        ///
        /// `cache` is a non-NULL pointer from the `new` function, which is not freed until this
        /// returns; `out` is valid for writes.
        #[no_mangle]
        pub unsafe extern "C" fn $stats(
            cache: *mut $handle,
            cpu: $crate::ffi::c_uint,
            out: *mut $cstats,
        ) {
            use $crate::{percpu_cache::PerCpuCache, types::ForeignOwnable};
            // SAFETY: By the safety requirements, `cache` is a live cache, borrowed for this
            // call only.
            let cache = unsafe { PerCpuCache::<$item>::borrow(cache.cast_const().cast()) };
            let s = $crate::cpu::CpuId::from_u32(cpu)
                .and_then(|cpu| cache.stats(cpu))
                .unwrap_or_default();
            // SAFETY: By the safety requirements, `out` is valid for writes; the fields are
            // plain integers.
            unsafe {
                (*out).alloc_hit = s.alloc_hit;
                (*out).alloc_miss = s.alloc_miss;
                (*out).put_task = s.put_task;
                (*out).put_irq = s.put_irq;
                (*out).free_full = s.free_full;
                (*out).free_other = s.free_other;
                (*out).splices = s.splices;
                (*out).drain_hotplug = s.drain_hotplug;
                (*out).nr = s.nr;
                (*out).nr_irq = s.nr_irq;
            }
        }
    };
}
