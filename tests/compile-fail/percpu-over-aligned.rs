// SPDX-License-Identifier: GPL-2.0
//! A per-CPU object aligned to more than a page, which __alloc_percpu()
//! would refuse with a warning, does not compile.
// error: a per-CPU object must be 1 byte to 32 KiB large and aligned to at most a page

use kernel::{init::Zeroable, percpu::PerCpuAllocation};

#[repr(align(8192))]
struct OverAligned(u8);
// SAFETY: All zeroes is a valid `u8`.
unsafe impl Zeroable for OverAligned {}

#[no_mangle]
pub fn compile_fail_test() -> bool {
    PerCpuAllocation::<OverAligned>::new_zero().is_some()
}
