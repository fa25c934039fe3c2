// SPDX-License-Identifier: GPL-2.0
//! The guard of kernel::interrupt stands for the interrupts of the CPU that
//! disabled them, and re-enables them when dropped: it cannot move to
//! another thread, which could drop it on another CPU.
// error: `*mut ()` cannot be sent between threads safely

use kernel::interrupt::local_interrupt_disable;

fn send<T: Send>(_: T) {}

#[no_mangle]
pub fn compile_fail_test() {
    send(local_interrupt_disable());
}
