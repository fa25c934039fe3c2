// SPDX-License-Identifier: GPL-2.0
//! A zero-sized per-CPU object, which __alloc_percpu() would refuse with a
//! warning, does not compile.
// error: a per-CPU object must be 1 byte to 32 KiB large and aligned to at most a page

use kernel::{init::Zeroable, percpu::PerCpuAllocation};

struct Empty;
// SAFETY: `Empty` has no bytes.
unsafe impl Zeroable for Empty {}

#[no_mangle]
pub fn compile_fail_test() -> bool {
    PerCpuAllocation::<Empty>::new_zero().is_some()
}
