// SPDX-License-Identifier: GPL-2.0

//! Dynamically allocated per-CPU variables: `alloc_percpu()` and `free_percpu()`.

use super::{
    cpu_guard::CpuGuard, possible_cpus, CheckedPerCpu, CheckedPerCpuToken, InteriorMutable, PerCpu,
    PerCpuPtr, PerCpuToken,
};
use crate::{alloc::Flags, bindings, cpu::CpuId, init::Zeroable, sync::Arc};
use core::{marker::PhantomData, mem, mem::MaybeUninit};

/// `PCPU_MIN_UNIT_SIZE` of `include/linux/percpu.h`, `PFN_ALIGN(32 << 10)`: the largest per-CPU
/// object.
const PCPU_MIN_UNIT_SIZE: usize = (32usize << 10).next_multiple_of(crate::page::PAGE_SIZE);

/// A dynamic allocation of per-CPU memory for a `T`, from `alloc_percpu()`; dropping it calls
/// `free_percpu()`.
///
/// This type does not track whether the memory of any CPU holds an initialised `T`, and does not
/// drop what it holds: that is up to its user (with [`core::ptr::drop_in_place`], for example).
///
/// The per-CPU allocator takes objects of 1 byte to `PCPU_MIN_UNIT_SIZE` (32 KiB), aligned to at
/// most a page, and warns on anything else: [`PerCpuAllocation::new_uninit`] and
/// [`PerCpuAllocation::new_zero`] do not compile for a zero-sized, larger or over-aligned `T`.
///
/// # Invariants
///
/// `ptr` was returned by `__alloc_percpu()` for the size and alignment of a `T`, and is freed
/// only when this value is dropped.
pub struct PerCpuAllocation<T> {
    ptr: PerCpuPtr<T>,
    /// The allocation holds `T`s: it may move to or be shared with another thread as far as
    /// they may.
    _holds: PhantomData<T>,
}

impl<T> PerCpuAllocation<T> {
    /// Allocates per-CPU memory for a `T`, uninitialised as far as the type system knows.
    ///
    /// Returns [`None`] when the C `alloc_percpu()` returns `NULL`.
    pub fn new_uninit() -> Option<Self> {
        // `__alloc_percpu()` warns and fails on anything else (`pcpu_alloc()`).
        const {
            assert!(
                mem::size_of::<T>() != 0
                    && mem::size_of::<T>() <= PCPU_MIN_UNIT_SIZE
                    && mem::align_of::<T>() <= crate::page::PAGE_SIZE,
                "a per-CPU object must be 1 byte to 32 KiB large and aligned to at most a page"
            )
        };
        // SAFETY: The assertion holds: the size and the (power-of-two) alignment are within what
        // `__alloc_percpu()` takes.
        let ptr = unsafe { bindings::__alloc_percpu(mem::size_of::<T>(), mem::align_of::<T>()) };
        if ptr.is_null() {
            return None;
        }
        // INVARIANT: `ptr` is a fresh per-CPU allocation for a `T`.
        Some(Self {
            ptr: PerCpuPtr::new(ptr.cast()),
            _holds: PhantomData,
        })
    }

    /// Returns the per-CPU pointer of the allocation.
    #[inline]
    pub fn ptr(&self) -> &PerCpuPtr<T> {
        &self.ptr
    }

    /// Gives up ownership of the allocation, without freeing it; returns its per-CPU address,
    /// for [`PerCpuAllocation::from_raw`].
    #[inline]
    pub fn into_raw(self) -> *mut MaybeUninit<T> {
        let ptr = self.ptr.as_ptr();
        mem::forget(self);
        ptr
    }

    /// Takes back ownership of an allocation from [`PerCpuAllocation::into_raw`].
    ///
    /// # Safety
    ///
    /// `ptr` was returned by [`PerCpuAllocation::into_raw`] for the same `T`, and either nothing
    /// else owns it, or the value made is never dropped (it is kept in a
    /// [`core::mem::ManuallyDrop`], say, to borrow an allocation that something else owns) and
    /// not used once the allocation is freed.
    #[inline]
    pub unsafe fn from_raw(ptr: *mut MaybeUninit<T>) -> Self {
        // INVARIANT: By the safety requirements, `ptr` is a per-CPU allocation for a `T` that
        // nothing else owns.
        Self {
            ptr: PerCpuPtr::new(ptr),
            _holds: PhantomData,
        }
    }
}

impl<T: Zeroable> PerCpuAllocation<T> {
    /// Allocates per-CPU memory for a `T`, zeroed: a valid `T` on every possible CPU, since
    /// `T: Zeroable`.
    ///
    /// Returns [`None`] when the C `alloc_percpu()` returns `NULL`.
    pub fn new_zero() -> Option<Self> {
        // `__alloc_percpu()` zeroes what it allocates.
        Self::new_uninit()
    }
}

impl<T> Drop for PerCpuAllocation<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariants, `ptr` came from `__alloc_percpu()` and is freed once,
        // here.
        unsafe { bindings::free_percpu(self.ptr.as_ptr().cast()) };
    }
}

/// A dynamically allocated per-CPU variable: an initialised `T` on every possible CPU.
///
/// Clones share the variable; the last one to go drops every CPU's value and frees the memory.
///
/// Through its [`Arc`], a `DynamicPerCpu<T>` is [`Send`] and [`Sync`] only where `T` is both:
/// the interior mutable types of [`InteriorMutable`] are not [`Sync`], so a variable of one of
/// them stays with the thread that made it.
///
/// # Examples
///
/// ```
/// use core::cell::Cell;
/// use kernel::percpu::{cpu_guard::CpuGuard, CheckedPerCpu, DynamicPerCpu, PerCpu};
///
/// let mut pcpu: DynamicPerCpu<u64> = DynamicPerCpu::new_zero(GFP_KERNEL).ok_or(ENOMEM)?;
/// // Stay on this CPU (after allocating: that may sleep), so that the value read back is the
/// // one written.
/// let pin = CpuGuard::new();
/// // SAFETY: No other token of `pcpu` exists: nothing else has it.
/// unsafe { pcpu.get_mut(CpuGuard::new()) }.with(|val| *val = 42);
/// // SAFETY: As above.
/// assert_eq!(unsafe { pcpu.get_mut(CpuGuard::new()) }.with(|val| *val), 42);
/// drop(pin);
///
/// let hits: DynamicPerCpu<Cell<u32>> =
///     DynamicPerCpu::new_from(|cpu| Cell::new(cpu.as_u32()), GFP_KERNEL).ok_or(ENOMEM)?;
/// hits.get(CpuGuard::new()).with(|h| h.set(h.get() + 100));
/// let sum: u32 = kernel::percpu::possible_cpus()
///     .map(|cpu| {
///         // SAFETY: `cpu` is possible, and `hits` lives: the pointer is valid.
///         let value = unsafe { &*hits.get_remote_ptr(cpu) };
///         // SAFETY: Every CPU's value is initialised; no token of `hits` exists any more.
///         unsafe { value.assume_init_ref() }.get()
///     })
///     .sum();
/// assert_eq!(sum, kernel::percpu::possible_cpus().map(|c| c.as_u32()).sum::<u32>() + 100);
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// - `alloc` is [`Some`] but while the value is dropped; it holds an allocation sized and
///   aligned for a `T`, whose location on every possible CPU holds an initialised `T`;
/// - `ptr` is the per-CPU pointer of that allocation.
pub struct DynamicPerCpu<T> {
    alloc: Option<Arc<PerCpuAllocation<T>>>,
    ptr: PerCpuPtr<T>,
}

impl<T: Clone> Clone for DynamicPerCpu<T> {
    fn clone(&self) -> Self {
        Self {
            alloc: self.alloc.clone(),
            ptr: self.ptr,
        }
    }
}

impl<T: Zeroable> DynamicPerCpu<T> {
    /// Allocates a per-CPU variable, all zeroes on every CPU.
    ///
    /// `flags` are those of the allocation of the [`Arc`] that tracks the per-CPU memory.
    pub fn new_zero(flags: Flags) -> Option<Self> {
        let alloc = PerCpuAllocation::<T>::new_zero()?;
        let ptr = *alloc.ptr();
        let alloc = Arc::new(alloc, flags).ok()?;
        // INVARIANT: The memory is zeroed, a valid `T` on every CPU (`T: Zeroable`).
        Some(Self {
            alloc: Some(alloc),
            ptr,
        })
    }
}

impl<T: Clone> DynamicPerCpu<T> {
    /// Allocates a per-CPU variable, with a clone of `val` on every possible CPU.
    ///
    /// `flags` are those of the allocation of the [`Arc`] that tracks the per-CPU memory.
    pub fn new_with(val: &T, flags: Flags) -> Option<Self> {
        Self::new_from(|_| val.clone(), flags)
    }
}

impl<T> DynamicPerCpu<T> {
    /// Allocates a per-CPU variable whose value on each possible CPU is what `initer` returns for
    /// that CPU; it is called once per possible CPU.
    ///
    /// `flags` are those of the allocation of the [`Arc`] that tracks the per-CPU memory.
    pub fn new_from(mut initer: impl FnMut(CpuId) -> T, flags: Flags) -> Option<Self> {
        let alloc = PerCpuAllocation::<T>::new_uninit()?;
        let ptr = *alloc.ptr();
        let alloc = Arc::new(alloc, flags).ok()?;
        for cpu in possible_cpus() {
            let value = initer(cpu);
            // SAFETY: The allocation is live and sized and aligned for a `T`, `cpu` is possible,
            // and nothing else has the allocation yet: the location is ours to write.
            unsafe { (*ptr.get_remote_ptr(cpu)).write(value) };
        }
        // INVARIANT: Every possible CPU's location was written above.
        Some(Self {
            alloc: Some(alloc),
            ptr,
        })
    }

    /// Returns a raw pointer to the value of `cpu`, valid while `self` lives if `cpu` is
    /// possible ([`super::cpu_possible`]): to read every CPU's value, for example. Using it
    /// races with the code that `cpu` runs, tokens of the variable included, unless the caller
    /// excludes that code.
    #[inline]
    pub fn get_remote_ptr(&self, cpu: CpuId) -> *mut MaybeUninit<T> {
        self.ptr.get_remote_ptr(cpu)
    }
}

impl<T> PerCpu<T> for DynamicPerCpu<T> {
    #[inline]
    unsafe fn get_mut(&mut self, guard: CpuGuard) -> PerCpuToken<'_, T> {
        // SAFETY: By the type invariants, `ptr` points into a live allocation of initialised
        // `T`s; by the safety requirements, no other token of this variable exists on this CPU.
        unsafe { PerCpuToken::new(guard, &self.ptr) }
    }
}

impl<T: InteriorMutable> CheckedPerCpu<T> for DynamicPerCpu<T> {
    #[inline]
    fn get(&self, guard: CpuGuard) -> CheckedPerCpuToken<'_, T> {
        // SAFETY: By the type invariants, `ptr` points into a live allocation of initialised
        // `T`s. A mutable reference exists only through a `PerCpuToken`, whose maker promised
        // that no other token exists on the CPU meanwhile.
        unsafe { CheckedPerCpuToken::new(guard, &self.ptr) }
    }
}

impl<T> Drop for DynamicPerCpu<T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariants, `alloc` is `Some` until here.
        let alloc = unsafe { self.alloc.take().unwrap_unchecked() };
        if let Some(unique) = alloc.into_unique_or_drop() {
            for cpu in possible_cpus() {
                // SAFETY: `cpu` is possible and the allocation lives until `unique` goes; this
                // was the last clone, so nothing else accesses the values.
                let value = unsafe { &mut *unique.ptr().get_remote_ptr(cpu) };
                // SAFETY: Every possible CPU's location holds an initialised `T` (type
                // invariants), dropped once, here, before the allocation is freed.
                unsafe { value.assume_init_drop() };
            }
        }
    }
}
