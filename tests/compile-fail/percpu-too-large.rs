// SPDX-License-Identifier: GPL-2.0
//! A per-CPU object larger than a per-CPU unit (32 KiB), which
//! __alloc_percpu() would refuse with a warning, does not compile.
// error: a per-CPU object must be 1 byte to 32 KiB large and aligned to at most a page

use kernel::{init::Zeroable, percpu::PerCpuAllocation};

struct Large([u8; 32769]);
// SAFETY: All zeroes is a valid byte array.
unsafe impl Zeroable for Large {}

#[no_mangle]
pub fn compile_fail_test() -> bool {
    PerCpuAllocation::<Large>::new_zero().is_some()
}
