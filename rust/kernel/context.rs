// SPDX-License-Identifier: GPL-2.0

//! Execution context: task, hard interrupt, NMI, interrupts disabled.
//!
//! To disable interrupts, and for a witness that they are, see [`crate::interrupt`].
//!
//! C headers: [`include/linux/preempt.h`](srctree/include/linux/preempt.h) and
//! [`include/linux/irqflags.h`](srctree/include/linux/irqflags.h).

use crate::bindings;

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

/// Returns whether the caller runs in hard interrupt context, an NMI included.
///
/// An NMI counts as hard interrupt context too: it can interrupt code that runs with interrupts
/// disabled, so code that relies on interrupts being disabled to exclude other hard interrupt
/// context code on its CPU must test [`in_nmi`] as well.
#[inline]
pub fn in_hardirq() -> bool {
    // SAFETY: `in_hardirq()` only reads the current CPU's preemption count.
    unsafe { bindings::in_hardirq() }
}

/// Returns whether the caller runs in an NMI.
#[inline]
pub fn in_nmi() -> bool {
    // SAFETY: `in_nmi()` only reads the current CPU's preemption count.
    unsafe { bindings::in_nmi() }
}

/// Returns whether interrupts are disabled on the current CPU.
#[inline]
pub fn irqs_disabled() -> bool {
    // SAFETY: `irqs_disabled()` only reads the CPU's interrupt flag.
    unsafe { bindings::irqs_disabled() }
}
