// SPDX-License-Identifier: GPL-2.0

#include <linux/irqflags.h>
#include <linux/preempt.h>

__rust_helper bool rust_helper_in_task(void)
{
	return in_task();
}

__rust_helper bool rust_helper_in_hardirq(void)
{
	return in_hardirq();
}

__rust_helper bool rust_helper_in_nmi(void)
{
	return in_nmi();
}

__rust_helper bool rust_helper_irqs_disabled(void)
{
	return irqs_disabled();
}
