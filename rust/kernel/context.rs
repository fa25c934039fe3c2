// SPDX-License-Identifier: GPL-2.0

//! Execution context: task, hard interrupt, NMI, interrupts disabled.
//!
//! C headers: [`include/linux/preempt.h`](srctree/include/linux/preempt.h) and
//! [`include/linux/irqflags.h`](srctree/include/linux/irqflags.h).

use crate::bindings;
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

/// Warns once if interrupts are enabled on the current CPU, with `CONFIG_PROVE_LOCKING`; does
/// nothing otherwise. The Rust form of `lockdep_assert_irqs_disabled()`: for code that relies on
/// a rule of the kernel rather than on a check of its own, such as the rule that hard interrupt
/// handlers run with interrupts disabled.
#[inline]
pub fn lockdep_assert_irqs_disabled() {
    // SAFETY: `lockdep_assert_irqs_disabled()` only reads lockdep's per-CPU state.
    unsafe { bindings::lockdep_assert_irqs_disabled() }
}

/// A witness that interrupts are disabled on the current CPU for the lifetime `'a`.
///
/// Only [`with_irqs_disabled`] creates one, for the closure it calls; the closure cannot return
/// it or store it anywhere that outlives the call (that does not compile).
///
/// # Invariants
///
/// Interrupts are disabled on the CPU the value was created on, for `'a`; the value cannot move
/// to another thread.
#[derive(Clone, Copy)]
pub struct IrqsDisabled<'a> {
    _invariant: PhantomData<fn(&'a ()) -> &'a ()>,
    _not_send: PhantomData<*mut ()>,
}

/// Calls `f` with interrupts disabled on the current CPU, then restores them to their previous
/// state: the Rust form of `local_irq_save()` and `local_irq_restore()`.
///
/// Calls nest: the state each one restores is the one it found, and since a nested call ends
/// before the call around it, interrupts are never re-enabled while an enclosing call still
/// expects them to be disabled, as guards dropped out of order could.
///
/// # Examples
///
/// ```
/// use kernel::context::{irqs_disabled, with_irqs_disabled};
///
/// let was_disabled = irqs_disabled();
/// with_irqs_disabled(|_| {
///     assert!(irqs_disabled());
///     with_irqs_disabled(|_| assert!(irqs_disabled()));
///     // The inner call restored what it found: disabled.
///     assert!(irqs_disabled());
/// });
/// assert_eq!(irqs_disabled(), was_disabled);
/// ```
#[inline]
pub fn with_irqs_disabled<T>(f: impl for<'a> FnOnce(IrqsDisabled<'a>) -> T) -> T {
    // SAFETY: Disabling interrupts is always allowed; `flags` is restored below, on this CPU,
    // since the task cannot migrate with interrupts disabled.
    let flags = unsafe { bindings::local_irq_save() };
    // INVARIANT: Interrupts are disabled until `local_irq_restore()` below, after `f` returned
    // and with it every use of the witness.
    let ret = f(IrqsDisabled {
        _invariant: PhantomData,
        _not_send: PhantomData,
    });
    // SAFETY: `flags` came from `local_irq_save()` above, on this CPU, and every nested call
    // of this function has restored its own state already.
    unsafe { bindings::local_irq_restore(flags) };
    ret
}
