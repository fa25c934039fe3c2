// SPDX-License-Identifier: GPL-2.0

//! Keeping the current task on its CPU.
//!
//! C header: [`include/linux/preempt.h`](srctree/include/linux/preempt.h).

use crate::bindings;
use core::marker::PhantomData;

/// A RAII guard for `preempt_disable()` and `preempt_enable()`.
///
/// Guarantees that preemption is disabled for as long as this object exists: the task that made
/// it stays on its CPU, and no other task runs there.
///
/// # Examples
///
/// ```
/// use kernel::percpu::cpu_guard::CpuGuard;
///
/// let guard = CpuGuard::new();
/// // Per-CPU data of this CPU is ours until `guard` goes, but for interrupts.
/// drop(guard);
/// ```
///
/// # Invariants
///
/// Preemption is disabled, by [`CpuGuard::new`], until the guard is dropped.
pub struct CpuGuard {
    /// Keeps the guard from being made but with [`CpuGuard::new`].
    _private: (),
    /// [`CpuGuard`] is not [`Send`]: moving it to another task would let that task enable
    /// preemption on a CPU where the first one relies on it being disabled. It is not [`Sync`]
    /// either: another task could not use a shared reference to it for anything sound.
    _not_send_sync: PhantomData<*const ()>,
}

impl CpuGuard {
    /// Disables preemption until the returned guard is dropped.
    #[inline]
    pub fn new() -> Self {
        // SAFETY: `preempt_disable()` may be called in any context; the guard's drop balances
        // it.
        unsafe { bindings::preempt_disable() };
        // INVARIANT: Preemption was disabled above.
        Self {
            _private: (),
            _not_send_sync: PhantomData,
        }
    }
}

impl Default for CpuGuard {
    #[inline]
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for CpuGuard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, this guard disabled preemption, on this CPU since the
        // guard cannot move to another task; this balances it.
        unsafe { bindings::preempt_enable() };
    }
}
