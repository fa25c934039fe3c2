// SPDX-License-Identifier: GPL-2.0

//! Execution context: task, hard interrupt, interrupts disabled.
//!
//! C headers: [`include/linux/preempt.h`](srctree/include/linux/preempt.h) and
//! [`include/linux/irqflags.h`](srctree/include/linux/irqflags.h).

use crate::{bindings, ffi::c_ulong};
use core::marker::PhantomData;

/// Returns whether the caller runs in task context: not in hard or soft interrupt context, nor
/// in an NMI.
///
/// Code in task context on a CPU with preemption disabled cannot be interrupted by other task
/// context code on that CPU, only by interrupts.
#[inline]
pub fn in_task() -> bool {
    // SAFETY: `in_task()` only reads the current CPU's preemption count.
    unsafe { bindings::in_task() }
}

/// Returns whether the caller runs in hard interrupt context.
#[inline]
pub fn in_hardirq() -> bool {
    // SAFETY: `in_hardirq()` only reads the current CPU's preemption count.
    unsafe { bindings::in_hardirq() }
}

/// Returns whether interrupts are disabled on the current CPU.
#[inline]
pub fn irqs_disabled() -> bool {
    // SAFETY: `irqs_disabled()` only reads the CPU's interrupt flag.
    unsafe { bindings::irqs_disabled() }
}

/// Interrupts disabled on the current CPU, restored to their previous state when dropped.
///
/// The Rust form of `local_irq_save()` and `local_irq_restore()`.
///
/// # Invariants
///
/// `flags` is the value `local_irq_save()` returned when this guard was created, on the CPU it
/// is dropped on: the guard cannot move to another thread.
pub struct IrqSaveGuard {
    flags: c_ulong,
    _not_send: PhantomData<*mut ()>,
}

impl IrqSaveGuard {
    /// Disables interrupts on the current CPU until the guard is dropped.
    #[inline]
    pub fn new() -> Self {
        // SAFETY: Disabling interrupts is always allowed; the guard restores them.
        let flags = unsafe { bindings::local_irq_save() };
        // INVARIANT: `flags` was just returned by `local_irq_save()`.
        Self {
            flags,
            _not_send: PhantomData,
        }
    }
}

impl Default for IrqSaveGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for IrqSaveGuard {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: By the type invariants, `flags` came from `local_irq_save()` on this CPU.
        unsafe { bindings::local_irq_restore(self.flags) };
    }
}
