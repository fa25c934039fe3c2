// SPDX-License-Identifier: GPL-2.0

//! Per-CPU variables.
//!
//! The API of Mitchell Levy's series "rust: Add Per-CPU Variable API" (v4, posted 2025-11-05,
//! as revised since in the mm tree; not merged), for dynamically allocated per-CPU variables:
//!
//! - [`PerCpuPtr`]: a per-CPU pointer, an offset into every CPU's per-CPU area;
//! - [`PerCpuAllocation`]: memory from `alloc_percpu()`, freed with `free_percpu()`;
//! - [`DynamicPerCpu`]: an initialised `T` for every possible CPU, shared and dropped by its
//!   last clone;
//! - [`cpu_guard::CpuGuard`]: preemption disabled, the task kept on its CPU;
//! - [`PerCpu`] and [`CheckedPerCpu`]: access to the current CPU's value through a token that
//!   holds such a guard.
//!
//! C header: [`include/linux/percpu.h`](srctree/include/linux/percpu.h).

pub mod cpu_guard;
mod dynamic;

#[doc(inline)]
pub use dynamic::*;

use crate::{
    bindings,
    cpu::{nr_cpu_ids, CpuId},
    types::Opaque,
};
use core::{
    cell::{Cell, RefCell, UnsafeCell},
    mem::MaybeUninit,
};
use cpu_guard::CpuGuard;

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

/// A per-CPU pointer: an offset into the per-CPU area of every CPU, which is not dereferenceable
/// as such.
///
/// Every dereference of what it yields is `unsafe`: that is why it may be `Send` and `Sync`
/// whatever `T`.
///
/// This type is not a smart pointer: it does not manage the allocation it points into.
#[repr(transparent)]
pub struct PerCpuPtr<T>(*mut MaybeUninit<T>);

impl<T> Clone for PerCpuPtr<T> {
    #[inline]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for PerCpuPtr<T> {}

// SAFETY: A per-CPU pointer is an offset; what may be done through it, from any thread, is up to
// the unsafe code that dereferences the pointers it yields.
unsafe impl<T> Send for PerCpuPtr<T> {}

// SAFETY: As for `Send`.
unsafe impl<T> Sync for PerCpuPtr<T> {}

impl<T> PerCpuPtr<T> {
    /// Makes a per-CPU pointer of `ptr`, an address as `alloc_percpu()` returns it.
    #[inline]
    pub fn new(ptr: *mut MaybeUninit<T>) -> Self {
        Self(ptr)
    }

    /// Returns the per-CPU address, as `free_percpu()` and `per_cpu_ptr()` take it.
    #[inline]
    pub fn as_ptr(&self) -> *mut MaybeUninit<T> {
        self.0
    }

    /// Returns a mutable reference to the current CPU's memory location.
    ///
    /// # Safety
    ///
    /// For as long as the returned reference is used:
    ///
    /// - nothing else accesses the current CPU's location (no other reference, C code, nor a
    ///   pointer from [`PerCpuPtr::get_remote_ptr`] on another CPU);
    /// - `self` points into a live per-CPU allocation, sized and aligned for a `T`;
    /// - preemption is disabled.
    #[inline]
    #[expect(clippy::mut_from_ref)]
    pub unsafe fn get_mut_ref(&self) -> &mut MaybeUninit<T> {
        // SAFETY: By the safety requirements, the location is this CPU's for as long as the
        // reference lives, valid for a `T` (which `MaybeUninit` allows uninitialised), and not
        // aliased.
        unsafe { &mut *self.get_ptr() }
    }

    /// Returns a shared reference to the current CPU's memory location.
    ///
    /// # Safety
    ///
    /// For as long as the returned reference is used:
    ///
    /// - nothing writes the current CPU's location but through interior mutability of `T`
    ///   (no mutable reference, C code, nor a pointer from [`PerCpuPtr::get_remote_ptr`]);
    /// - `self` points into a live per-CPU allocation, sized and aligned for a `T`;
    /// - preemption is disabled.
    #[inline]
    pub unsafe fn get_ref(&self) -> &MaybeUninit<T> {
        // SAFETY: As for `get_mut_ref`, without the mutable alias.
        unsafe { &*self.get_ptr() }
    }

    /// Returns a raw pointer to the current CPU's memory location.
    ///
    /// The pointer is that of the CPU the caller runs on when it reads it: unless preemption is
    /// disabled, the caller may run on another CPU by the time it uses it.
    #[inline]
    pub fn get_ptr(&self) -> *mut MaybeUninit<T> {
        // SAFETY: `raw_cpu_ptr()` only adds this CPU's per-CPU offset to the address.
        unsafe { bindings::raw_cpu_ptr(self.0.cast()) }.cast()
    }

    /// Returns a raw pointer to the memory location of `cpu`.
    ///
    /// The pointer is valid if `self` points into a live per-CPU allocation and `cpu` is a
    /// possible CPU ([`cpu_possible`]). Using it races with the code that `cpu` runs, tokens
    /// of the same variable included, unless the caller excludes that code.
    #[inline]
    pub fn get_remote_ptr(&self, cpu: CpuId) -> *mut MaybeUninit<T> {
        // SAFETY: `per_cpu_ptr()` only adds the per-CPU offset of `cpu`, which is below
        // `nr_cpu_ids` (type invariants of `CpuId`), to the address.
        unsafe { bindings::per_cpu_ptr(self.0.cast(), cpu.as_u32()) }.cast()
    }
}

/// Exclusive access to the current CPU's value of a [`PerCpu`], with preemption disabled.
///
/// # Invariants
///
/// For `'a`, `ptr` points into a live allocation whose location on the current CPU holds an
/// initialised `T`, that nothing else accesses while this token exists; `_guard` keeps the task
/// on that CPU.
pub struct PerCpuToken<'a, T> {
    _guard: CpuGuard,
    ptr: &'a PerCpuPtr<T>,
}

impl<'a, T> PerCpuToken<'a, T> {
    /// Makes a token for the current CPU's value of `ptr`.
    ///
    /// # Safety
    ///
    /// For `'a`, `ptr` points into a live allocation, sized and aligned for a `T`, whose location
    /// on the current CPU holds an initialised `T` that nothing else accesses while the token
    /// exists.
    #[inline]
    pub unsafe fn new(guard: CpuGuard, ptr: &'a PerCpuPtr<T>) -> PerCpuToken<'a, T> {
        // INVARIANT: By the safety requirements; `guard` keeps the task on this CPU.
        Self { _guard: guard, ptr }
    }

    /// Calls `func` with a mutable reference to the current CPU's value, and returns what it
    /// returns.
    #[inline]
    pub fn with<U, V>(&mut self, func: U) -> V
    where
        U: FnOnce(&mut T) -> V,
    {
        // SAFETY: By the type invariants, the location is live, this CPU's while the guard
        // lives, and accessed by nothing else; `&mut self` keeps this the only reference made
        // through the token.
        let slot = unsafe { self.ptr.get_mut_ref() };
        // SAFETY: By the type invariants, the location holds an initialised `T`.
        func(unsafe { slot.assume_init_mut() })
    }
}

/// Shared access to the current CPU's value of a [`CheckedPerCpu`], with preemption disabled.
///
/// # Invariants
///
/// For `'a`, `ptr` points into a live allocation whose location on the current CPU holds an
/// initialised `T`, which nothing writes but through interior mutability of `T`; `_guard`
/// keeps the task on that CPU.
pub struct CheckedPerCpuToken<'a, T> {
    _guard: CpuGuard,
    ptr: &'a PerCpuPtr<T>,
}

impl<'a, T> CheckedPerCpuToken<'a, T> {
    /// Makes a token for the current CPU's value of `ptr`.
    ///
    /// # Safety
    ///
    /// For `'a`, `ptr` points into a live allocation, sized and aligned for a `T`, whose location
    /// on the current CPU holds an initialised `T` that nothing writes while the token exists
    /// but through interior mutability of `T`.
    #[inline]
    pub unsafe fn new(guard: CpuGuard, ptr: &'a PerCpuPtr<T>) -> CheckedPerCpuToken<'a, T> {
        // INVARIANT: By the safety requirements; `guard` keeps the task on this CPU.
        Self { _guard: guard, ptr }
    }

    /// Calls `func` with a shared reference to the current CPU's value, and returns what it
    /// returns.
    #[inline]
    pub fn with<U, V>(&self, func: U) -> V
    where
        U: FnOnce(&T) -> V,
    {
        // SAFETY: By the type invariants, the location is live, this CPU's while the guard
        // lives, and written only through interior mutability of `T`.
        let slot = unsafe { self.ptr.get_ref() };
        // SAFETY: By the type invariants, the location holds an initialised `T`.
        func(unsafe { slot.assume_init_ref() })
    }
}

/// A per-CPU variable: a `T` in every CPU's per-CPU area.
pub trait PerCpu<T> {
    /// Returns a token through which the holder can access the current CPU's value mutably.
    ///
    /// # Safety
    ///
    /// No other [`PerCpuToken`] or [`CheckedPerCpuToken`] of the same variable (`self` or a
    /// clone of it) exists on the current CPU while the returned one does: in particular none
    /// in an interrupt handler that may run meanwhile.
    unsafe fn get_mut(&mut self, guard: CpuGuard) -> PerCpuToken<'_, T>;
}

/// A marker trait for types that are interior mutable: that provide mutation through a shared
/// reference safely, such as [`Cell`] or [`RefCell`].
pub trait InteriorMutable {}

impl<T> InteriorMutable for Cell<T> {}
impl<T> InteriorMutable for RefCell<T> {}
impl<T> InteriorMutable for UnsafeCell<T> {}
impl<T> InteriorMutable for Opaque<T> {}

/// A per-CPU variable of an interior mutable type, which safe code may use through a shared
/// reference.
pub trait CheckedPerCpu<T>: PerCpu<T> {
    /// Returns a token through which the holder can access the current CPU's value.
    fn get(&self, guard: CpuGuard) -> CheckedPerCpuToken<'_, T>;
}
