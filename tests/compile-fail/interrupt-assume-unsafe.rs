// SPDX-License-Identifier: GPL-2.0
//! Code that relies on interrupts being disabled without disabling them (a
//! hard interrupt handler does) must say so with unsafe: assume_disabled()
//! is unsafe, and its caller answers for the interrupts staying disabled.
// error: assume_disabled` is unsafe and requires unsafe

use kernel::interrupt::LocalInterruptDisabled;

#[no_mangle]
pub fn compile_fail_test() -> &'static LocalInterruptDisabled {
    LocalInterruptDisabled::assume_disabled()
}
