// SPDX-License-Identifier: GPL-2.0
//! A CpuGuard keeps preemption disabled on the CPU that made it: another
//! task could enable preemption there while the first relies on it being
//! disabled, so the guard cannot move to another thread.
// error: `*const ()` cannot be sent between threads safely

use kernel::percpu::cpu_guard::CpuGuard;

fn send<T: Send>(_: T) {}

#[no_mangle]
pub fn compile_fail_test() {
    send(CpuGuard::new());
}
