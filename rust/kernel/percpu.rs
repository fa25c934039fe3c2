// SPDX-License-Identifier: GPL-2.0

//! Per-CPU memory.
//!
//! C headers: [`include/linux/percpu.h`](srctree/include/linux/percpu.h) and
//! [`include/linux/cpumask.h`](srctree/include/linux/cpumask.h).

use crate::{
    bindings,
    cpu::{nr_cpu_ids, CpuId},
    error::code::ENOMEM,
    error::Result,
    init::Zeroable,
};
use core::{marker::PhantomData, mem, ops::Deref, ptr::NonNull};

/// Returns an iterator over the possible CPUs: every CPU that can ever be online.
///
/// # Examples
///
/// ```
/// let n = kernel::percpu::possible_cpus().count();
/// assert!(n >= 1);
/// assert!(kernel::percpu::possible_cpus().all(kernel::percpu::cpu_possible));
/// ```
pub fn possible_cpus() -> impl Iterator<Item = CpuId> {
    (0..nr_cpu_ids())
        // SAFETY: `id` is below `nr_cpu_ids()`.
        .map(|id| unsafe { CpuId::from_u32_unchecked(id) })
        .filter(|&cpu| cpu_possible(cpu))
}

/// Returns whether `cpu` is a possible CPU.
pub fn cpu_possible(cpu: CpuId) -> bool {
    // SAFETY: `cpu_possible()` tests a bit of the possible mask, which has `nr_cpu_ids` bits,
    // and `cpu` is below `nr_cpu_ids` (type invariants of `CpuId`).
    unsafe { bindings::cpu_possible(cpu.as_u32()) }
}

/// One `T` for every possible CPU, in per-CPU memory, zero-initialised.
///
/// The Rust form of `alloc_percpu()` and `free_percpu()`. A task reaches the copy of the CPU it
/// runs on through [`PerCpu::get`], with preemption disabled for as long as it holds it; the copy
/// of any CPU is reachable through [`PerCpu::get_cpu`]. Both hand out shared references: `T`
/// provides its own interior mutability, and is [`Sync`] because the copy of one CPU can be
/// reached from several contexts (task, interrupts) and, through [`PerCpu::get_cpu`], from other
/// CPUs.
///
/// The per-CPU allocator takes objects of 1 byte to `PCPU_MIN_UNIT_SIZE` (32 KiB), aligned to at
/// most a page, and warns on anything else: [`PerCpu::new`] does not compile for a zero-sized,
/// larger or over-aligned `T`.
///
/// # Invariants
///
/// `ptr` was returned by `__alloc_percpu()` for a `T`, and is freed only when this value is
/// dropped. Every possible CPU's copy holds a valid `T`: all zeroes, which is a valid `T` because
/// `T: Zeroable`, or a value written since through shared references.
#[repr(transparent)]
pub struct PerCpu<T: Zeroable + Sync> {
    /// The per-CPU address, which is not dereferenceable as such.
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

// SAFETY: The value only hands out shared references to `T`, which is `Sync`; moving it to
// another thread moves the ownership of the per-CPU memory, which any thread may free.
unsafe impl<T: Zeroable + Sync + Send> Send for PerCpu<T> {}

// SAFETY: Through `&PerCpu<T>` other threads only get `&T`, and `T` is `Sync`.
unsafe impl<T: Zeroable + Sync> Sync for PerCpu<T> {}

/// `PCPU_MIN_UNIT_SIZE` of `include/linux/percpu.h` on 4 KiB pages: the largest per-CPU object.
const PCPU_MIN_UNIT_SIZE: usize = 32 << 10;

impl<T: Zeroable + Sync> PerCpu<T> {
    /// Fails to compile for a `T` that `__alloc_percpu()` would refuse with a warning: zero-sized,
    /// larger than a per-CPU unit, or aligned to more than a page (`pcpu_alloc()`).
    const LAYOUT: () = assert!(
        mem::size_of::<T>() != 0
            && mem::size_of::<T>() <= PCPU_MIN_UNIT_SIZE
            && mem::align_of::<T>() <= crate::page::PAGE_SIZE,
        "a per-CPU object must be 1 byte to 32 KiB large and aligned to at most a page"
    );

    /// Allocates a zeroed `T` for every possible CPU.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::sync::atomic::{AtomicU32, Ordering::Relaxed};
    /// use kernel::{init::Zeroable, percpu::{possible_cpus, PerCpu}};
    ///
    /// struct Counter(AtomicU32);
    /// // SAFETY: All zeroes is a valid `AtomicU32`, of value 0.
    /// unsafe impl Zeroable for Counter {}
    ///
    /// let counters = PerCpu::<Counter>::new()?;
    /// counters.get().0.fetch_add(1, Relaxed);
    /// let total: u32 = possible_cpus()
    ///     .filter_map(|cpu| counters.get_cpu(cpu))
    ///     .map(|c| c.0.load(Relaxed))
    ///     .sum();
    /// assert_eq!(total, 1);
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new() -> Result<Self> {
        #[allow(clippy::let_unit_value)]
        let () = Self::LAYOUT;
        // SAFETY: `LAYOUT` holds: the size and the (power-of-two) alignment are within what
        // `__alloc_percpu()` takes. The memory is zeroed.
        let ptr = unsafe { bindings::__alloc_percpu(mem::size_of::<T>(), mem::align_of::<T>()) };
        let ptr = NonNull::new(ptr.cast::<T>()).ok_or(ENOMEM)?;
        // INVARIANT: `ptr` is a fresh, zeroed per-CPU allocation for a `T`.
        Ok(Self {
            ptr,
            _owns: PhantomData,
        })
    }

    /// Returns the copy of the CPU the caller runs on, with preemption disabled until the
    /// returned guard is dropped: the Rust form of `get_cpu_ptr()` and `put_cpu_ptr()`.
    #[inline]
    pub fn get(&self) -> ThisCpu<'_, T> {
        // SAFETY: `ptr` is a per-CPU allocation (type invariant); `get_cpu_ptr()` disables
        // preemption and returns this CPU's copy, a valid `T` that lives as long as `self`.
        let slot = unsafe { &*bindings::get_cpu_ptr(self.ptr.as_ptr().cast()).cast::<T>() };
        // INVARIANT: Preemption is disabled and `slot` is this CPU's copy.
        ThisCpu {
            slot,
            percpu: self.ptr,
            _not_send: PhantomData,
        }
    }

    /// Returns the copy of `cpu`, or [`None`] if `cpu` is not a possible CPU.
    #[inline]
    pub fn get_cpu(&self, cpu: CpuId) -> Option<&T> {
        if !cpu_possible(cpu) {
            return None;
        }
        // SAFETY: `ptr` is a per-CPU allocation (type invariant) and `cpu` is possible, so
        // `per_cpu_ptr()` returns a valid `T` that lives as long as `self`.
        Some(unsafe { &*bindings::per_cpu_ptr(self.ptr.as_ptr().cast(), cpu.as_u32()).cast::<T>() })
    }

    /// Gives up ownership: returns the per-CPU address, to be turned back into a [`PerCpu`] with
    /// [`PerCpu::from_raw`].
    pub fn into_raw(self) -> NonNull<T> {
        let ptr = self.ptr;
        mem::forget(self);
        ptr
    }

    /// Takes back ownership of a per-CPU allocation from [`PerCpu::into_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` was returned by [`PerCpu::into_raw`] for the same `T`, and no other [`PerCpu`] owns
    /// it.
    pub unsafe fn from_raw(ptr: NonNull<T>) -> Self {
        // INVARIANT: By the safety requirements, `ptr` is a per-CPU allocation of a `T` that
        // nothing else owns.
        Self {
            ptr,
            _owns: PhantomData,
        }
    }
}

impl<T: Zeroable + Sync> Drop for PerCpu<T> {
    fn drop(&mut self) {
        for cpu in possible_cpus() {
            // SAFETY: `ptr` is a per-CPU allocation of a valid `T` on every possible CPU (type
            // invariant), and nothing else references it any more.
            unsafe {
                core::ptr::drop_in_place(
                    bindings::per_cpu_ptr(self.ptr.as_ptr().cast(), cpu.as_u32()).cast::<T>(),
                )
            };
        }
        // SAFETY: `ptr` came from `__alloc_percpu()` and is freed once, here.
        unsafe { bindings::free_percpu(self.ptr.as_ptr().cast()) };
    }
}

/// The copy of a [`PerCpu`] value of the CPU the task runs on, borrowed with preemption
/// disabled.
///
/// # Invariants
///
/// Preemption is disabled, by `get_cpu_ptr(percpu)`, from creation until drop; `slot` is this
/// CPU's copy. The guard cannot move to another thread.
pub struct ThisCpu<'a, T> {
    slot: &'a T,
    percpu: NonNull<T>,
    _not_send: PhantomData<*mut ()>,
}

impl<T> Deref for ThisCpu<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.slot
    }
}

impl<T> Drop for ThisCpu<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, preemption was disabled by `get_cpu_ptr()` on this
        // per-CPU pointer; this re-enables it.
        unsafe { bindings::put_cpu_ptr(self.percpu.as_ptr().cast()) };
    }
}
