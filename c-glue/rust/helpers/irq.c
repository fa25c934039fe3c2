// SPDX-License-Identifier: GPL-2.0

#include <linux/irqflags.h>
#include <linux/preempt.h>

bool rust_helper_in_task(void)
{
	return in_task();
}

bool rust_helper_in_hardirq(void)
{
	return in_hardirq();
}

bool rust_helper_irqs_disabled(void)
{
	return irqs_disabled();
}

unsigned long rust_helper_local_irq_save(void)
{
	unsigned long flags;

	local_irq_save(flags);
	return flags;
}

void rust_helper_local_irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}
