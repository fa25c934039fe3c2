// SPDX-License-Identifier: GPL-2.0
//! The witness that interrupts are disabled cannot outlive the closure that
//! received it, so that no code can hold it once interrupts are restored.
// error: borrowed data escapes outside of closure

use kernel::context::{with_irqs_disabled, IrqsDisabled};

#[no_mangle]
pub fn compile_fail_test() -> Option<IrqsDisabled<'static>> {
    let mut kept = None;
    with_irqs_disabled(|irqs_off| kept = Some(irqs_off));
    kept
}
