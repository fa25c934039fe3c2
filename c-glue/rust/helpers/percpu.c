// SPDX-License-Identifier: GPL-2.0

#include <linux/cpumask.h>
#include <linux/percpu.h>

__rust_helper void __percpu *rust_helper___alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu(size, align);
}

__rust_helper void *rust_helper_raw_cpu_ptr(void __percpu *ptr)
{
	return raw_cpu_ptr(ptr);
}

__rust_helper void *rust_helper_per_cpu_ptr(void __percpu *ptr, unsigned int cpu)
{
	return per_cpu_ptr(ptr, cpu);
}

__rust_helper bool rust_helper_cpu_possible(unsigned int cpu)
{
	return cpu_possible(cpu);
}
